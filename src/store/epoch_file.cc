#include "store/epoch_file.h"

#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/crc32.h"
#include "base/file_io.h"

namespace comet::store {
namespace {

bool read_file(const std::string& path, std::string* out) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        return false;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    *out = ss.str();
    return true;
}

bool parse_i64(std::string_view s, int64_t* v) {
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
    return ec == std::errc() && p == s.data() + s.size();
}

}  // namespace

std::string EpochFile::encode(const std::vector<EpochEntry>& entries) {
    std::string body;
    for (const EpochEntry& e : entries) {
        body += std::to_string(e.epoch) + "-" + std::to_string(e.start_offset) + "\n";
    }
    const uint32_t crc = crc32(body) & 0x7FFFFFFFu;
    return std::to_string(entries.size()) + "\n" + std::to_string(crc) + "\n" + body;
}

Result<std::vector<EpochEntry>> EpochFile::decode(const std::string& text, const std::string& name) {
    std::vector<std::string_view> lines;
    std::string_view rest(text);
    while (!rest.empty()) {
        const size_t nl = rest.find('\n');
        std::string_view line = rest.substr(0, nl);
        if (!line.empty() && line.back() == '\r') {
            line.remove_suffix(1);
        }
        lines.push_back(line);
        rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    }
    int64_t count = 0;
    int64_t crc = 0;
    if (lines.size() < 2 || !parse_i64(lines[0], &count) || !parse_i64(lines[1], &crc) ||
        count < 0 || static_cast<size_t>(count) + 2 > lines.size()) {
        return Status::error(Errc::kCorruption, "{}: bad header (count / crc lines)", name);
    }
    std::vector<EpochEntry> out;
    std::string body;
    for (int64_t i = 0; i < count; ++i) {
        const std::string_view line = lines[static_cast<size_t>(i) + 2];
        const size_t dash = line.find('-');
        EpochEntry e;
        if (dash == std::string_view::npos || !parse_i64(line.substr(0, dash), &e.epoch) ||
            !parse_i64(line.substr(dash + 1), &e.start_offset)) {
            return Status::error(Errc::kCorruption, "{}: line {} '{}' is not <epoch>-<offset>",
                                 name, i + 3, line);
        }
        body += std::string(line) + "\n";
        out.push_back(e);
    }
    if (crc != 0 && static_cast<uint32_t>(crc) != (crc32(body) & 0x7FFFFFFFu)) {
        return Status::error(Errc::kCorruption, "{}: CRC mismatch", name);
    }
    return out;
}

Status EpochFile::load() {
    std::string text;
    Status first = Status::ok();
    for (const std::string& p : {path_, path_ + ".bak"}) {
        if (!read_file(p, &text)) {
            continue;
        }
        auto d = decode(text, p);
        if (d.is_ok()) {
            entries_ = std::move(d).value();
            return Status::ok();
        }
        if (first.is_ok()) {
            first = d.status();
        }
    }
    entries_.clear();
    return first;  // ok when neither file exists
}

Status EpochFile::save() const {
    return replace_file_durably(path_, encode(entries_), ReplaceOptions{.backup_suffix = ".bak", .create_dirs = false});
}

Status EpochFile::append(int64_t epoch, int64_t start_offset) {
    if (!entries_.empty()) {
        const EpochEntry& last = entries_.back();
        if (epoch == last.epoch) {
            return Status::ok();
        }
        if (epoch < last.epoch || start_offset < last.start_offset) {
            return Status::error(Errc::kInvalidArgument,
                                 "epoch {} at {} after epoch {} at {}: epochs and offsets only grow",
                                 epoch, start_offset, last.epoch, last.start_offset);
        }
        if (start_offset == last.start_offset) {
            entries_.back().epoch = epoch;  // the previous epoch wrote nothing
            return Status::ok();
        }
    }
    entries_.push_back(EpochEntry{epoch, start_offset});
    return Status::ok();
}

void EpochFile::truncate_from(int64_t offset) {
    while (!entries_.empty() && entries_.back().start_offset >= offset) {
        entries_.pop_back();
    }
}

}  // namespace comet::store
