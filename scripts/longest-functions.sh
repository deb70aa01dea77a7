#!/usr/bin/env bash
# Lists the longest functions of src/ and apps/ (lines from the signature to the closing brace,
# as universal-ctags reports them), longest first. A function reads as its algorithm: most are
# under 40 lines and none should pass ~100 (../shared/STYLE.md); CI prints the top ten.
# Usage: scripts/longest-functions.sh [--top N] [--max LINES] [PATH...]
#   --top N      print the N longest (default 10)
#   --max LINES  exit 1 when any function is longer than LINES (default: no limit)
#   PATH...      folders or files to scan (default: src apps)
# Lambdas count as part of the function that holds them.
set -euo pipefail
cd "$(dirname "$0")/.."

TOP=10
MAX=0
PATHS=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --top) TOP="${2:?}"; shift 2 ;;
        --max) MAX="${2:?}"; shift 2 ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) PATHS+=("$1"); shift ;;
    esac
done
((${#PATHS[@]})) || PATHS=(src apps)

# Debian installs universal-ctags as ctags-universal; `ctags` may name another ctags.
CTAGS=ctags-universal
command -v "$CTAGS" >/dev/null 2>&1 || CTAGS=ctags
if ! "$CTAGS" --version 2>/dev/null | grep -q "Universal Ctags"; then
    echo "longest-functions: universal-ctags is needed (scripts/install-deps.sh installs it)" >&2
    exit 2
fi

"$CTAGS" --output-format=json --fields=+ne --kinds-C++=f --languages=C++ --langmap=C++:+.h \
    -R -f - "${PATHS[@]}" 2>/dev/null |
    python3 -c '
import json, sys
top, limit = int(sys.argv[1]), int(sys.argv[2])
rows = []
for line in sys.stdin:
    tag = json.loads(line)
    if "end" not in tag:
        continue
    scope = tag.get("scope", "")
    name = (scope + "::" if scope else "") + tag["name"]
    rows.append((tag["end"] - tag["line"] + 1, tag["path"], tag["line"], name))
rows.sort(key=lambda r: (-r[0], r[1], r[2]))
for n, path, line, name in rows[:top]:
    print(f"{n:5d}  {path}:{line}  {name}")
over = [r for r in rows if limit and r[0] > limit]
if over:
    print(f"longest-functions: {len(over)} function(s) longer than {limit} lines", file=sys.stderr)
    sys.exit(1)
' "$TOP" "$MAX"
