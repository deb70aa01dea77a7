#include "ha/ha_store_port.h"

#include <algorithm>

#include "store/commit_log.h"

namespace comet::ha {

int64_t CommitLogHaStore::min_offset() const { return log_.min_offset().value(); }

int64_t CommitLogHaStore::max_offset() const { return log_.max_offset().value(); }

int64_t CommitLogHaStore::last_file_start() const {
    int64_t max = max_offset();
    int64_t size = log_.config().mapped_file_size_commit_log;
    int64_t start = size > 0 ? max - max % size : 0;
    return std::max(start, min_offset());
}

std::optional<HaChunk> CommitLogHaStore::read(int64_t offset, int64_t max_bytes) const {
    auto view = log_.get_data(store::PhysicalOffset(offset), max_bytes);
    if (!view || view->empty()) {
        return std::nullopt;
    }
    HaChunk c;
    c.keep = view->file;
    c.bytes = view->bytes();
    return c;
}

Status CommitLogHaStore::append(int64_t start, std::string_view bytes) {
    return log_.append_data(store::PhysicalOffset(start), bytes);
}

}  // namespace comet::ha
