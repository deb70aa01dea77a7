# Comet: the two commands a newcomer needs are `make run` and `make test`.
BUILD_DIR ?= build/release
# Topology of `make run` (scripts/run-local.sh): dev (one process: a name server and a 3-peer
# DLedger group, mqbrokercontainer --dev; DEV_PORT=<base> moves its ports), single (one broker),
# 1m2s (SYNC_MASTER + two slaves, quorum write), dledger (3 Raft peers, one process each),
# controller or controller-in-namesrv.
CLUSTER ?= dev
DEV_PORT ?= 9876
SAN_DIR   ?= build/sanitize
TSAN_DIR  ?= build/tsan
# The unit tests whose modules run threads; `make test-tsan` runs them under ThreadSanitizer.
TSAN_UNITS ?= unit_store unit_ha unit_broker unit_net unit_dledger unit_container
FUZZ_DIR  ?= build/fuzz
JOBS      ?= $(shell nproc)
WERROR    ?= $(if $(CI),ON,OFF)
FUZZ_SECONDS ?= 60

.PHONY: all deps build build-sanitize build-tsan build-fuzz run test test-tsan test-unit test-sanitize fuzz bench clean format

all: build

deps:
	@scripts/install-deps.sh

build: deps
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Release -DCOMET_WERROR=$(WERROR)
	cmake --build $(BUILD_DIR) -j $(JOBS)

# Only the unit-test binaries: the sanitizer stage runs the tests labelled "unit". clang at -O0
# compiles them about 2.5 times faster than g++ at -O1 (docs/testing.md); g++ builds the rest.
SAN_CXX ?= clang++
build-sanitize: deps
	cmake -S . -B $(SAN_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Sanitize -DCMAKE_CXX_COMPILER=$(SAN_CXX) \
	  -DCOMET_WERROR=$(WERROR) -DCOMET_BUILD_BENCH=OFF
	cmake --build $(SAN_DIR) -j $(JOBS) --target unit_tests

build-tsan: deps
	cmake -S . -B $(TSAN_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Tsan -DCOMET_WERROR=$(WERROR) -DCOMET_BUILD_BENCH=OFF
	cmake --build $(TSAN_DIR) -j $(JOBS) --target $(TSAN_UNITS)

build-fuzz: deps
	CXX=clang++ cmake -S . -B $(FUZZ_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCOMET_BUILD_FUZZ=ON \
	  -DCOMET_BUILD_TESTS=OFF -DCOMET_BUILD_BENCH=OFF
	cmake --build $(FUZZ_DIR) -j $(JOBS) --target fuzz_targets

# The main job: a local cluster on 127.0.0.1 (see README).
run: build
	CLUSTER=$(CLUSTER) DEV_PORT=$(DEV_PORT) scripts/run-local.sh $(BUILD_DIR)

# The whole test suite: release build + every test, sanitizer unit tests, bounded fuzzing.
test: build build-sanitize
	scripts/run-tests.sh $(BUILD_DIR) $(SAN_DIR) $(FUZZ_SECONDS)

# ThreadSanitizer over the threaded modules' unit tests (not part of `make test`: it would push
# .ci/run past its time budget on 2 cores; run it before every stop, see README).
test-tsan: build-tsan
	scripts/run-tsan.sh $(TSAN_DIR) $(TSAN_UNITS)

bench: build
	@ls $(BUILD_DIR)/bench/bench_* 2>/dev/null | while read b; do echo "== $$b"; $$b; done

format:
	find src apps tests bench -name '*.h' -o -name '*.cc' | xargs clang-format -i

clean:
	rm -rf build
