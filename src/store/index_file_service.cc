#include "store/index_file_service.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <climits>
#include <ctime>
#include <filesystem>

#include "protocol/message_ext.h"

namespace comet::store {

namespace fs = std::filesystem;

namespace {
constexpr size_t kMaxMsgsNumBatch = 64;  // Java IndexService.maxMsgsNumBatch

bool is_index_file_name(const std::string& name) {
    return name.size() == 17 &&
           std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; });
}
}  // namespace

std::string time_millis_to_human_string(int64_t millis) {
    const std::time_t secs = static_cast<std::time_t>(millis / 1000);
    std::tm tm{};
    ::localtime_r(&secs, &tm);
    return fmt::format("{:04}{:02}{:02}{:02}{:02}{:02}{:03}", tm.tm_year + 1900, tm.tm_mon + 1,
                       tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, millis % 1000);
}

std::string IndexService::build_key(std::string_view topic, std::string_view key) {
    std::string k;
    build_key(topic, key, &k);
    return k;
}

void IndexService::build_key(std::string_view topic, std::string_view key, std::string* out) {
    out->clear();
    out->reserve(topic.size() + 1 + key.size());
    out->append(topic).append("#").append(key);
}

IndexService::IndexService(std::string dir, int32_t hash_slot_num, int32_t index_num,
                           const Clock& clock)
    : dir_(std::move(dir)), hash_slot_num_(hash_slot_num), index_num_(index_num), clock_(clock) {}

IndexService::~IndexService() = default;

Result<int64_t> IndexService::load(bool last_exit_ok, int64_t index_checkpoint_timestamp) {
    std::error_code ec;
    fs::create_directories(dir_, ec);
    if (ec) {
        return Status::error(Errc::kIoError, "create index dir {}: {}", dir_, ec.message());
    }
    std::vector<std::string> names;
    std::vector<std::string> leftovers;
    for (const auto& e : fs::directory_iterator(dir_, ec)) {
        const std::string name = e.path().filename().string();
        if (!e.is_regular_file()) {
            continue;
        }
        if (is_index_file_name(name)) {
            names.push_back(name);
        } else if (name.ends_with(kIndexCreatingSuffix) &&
                   is_index_file_name(name.substr(0, name.size() - kIndexCreatingSuffix.size()))) {
            leftovers.push_back(name);
        }
    }
    if (ec) {
        return Status::error(Errc::kIoError, "list index dir {}: {}", dir_, ec.message());
    }
    for (const auto& name : leftovers) {
        spdlog::warn("index file {} was being created when the broker stopped; removing it", name);
        fs::remove(dir_ + "/" + name, ec);
        if (ec) {
            return Status::error(Errc::kIoError, "remove {}/{}: {}", dir_, name, ec.message());
        }
    }
    std::sort(names.begin(), names.end());
    MutexLock l(mu_);
    files_.clear();
    dirty_.clear();
    int64_t rebuild_from = INT64_MAX;
    for (size_t i = 0; i < names.size(); ++i) {
        const std::string& name = names[i];
        auto f = IndexFile::load(dir_ + "/" + name, hash_slot_num_, index_num_);
        if (!f.is_ok() && f.status().code() == Errc::kCorruption) {
            // The index is derived data: a torn or unreadable file and every later one are
            // dropped and rebuilt from the CommitLog, from where the previous file ends.
            const int64_t from = files_.empty() ? 0 : files_.back()->header().end_phy_offset.value();
            for (size_t j = i; j < names.size(); ++j) {
                spdlog::warn("index file {} dropped ({}); its entries are rebuilt from CommitLog "
                             "offset {}",
                             names[j], j == i ? f.status().message() : "after a bad file", from);
                fs::remove(dir_ + "/" + names[j], ec);
                if (ec) {
                    return Status::error(Errc::kIoError, "remove {}/{}: {}", dir_, names[j],
                                         ec.message());
                }
            }
            rebuild_from = std::min(rebuild_from, from);
            break;
        }
        if (!f.is_ok()) {
            return f.status();
        }
        const IndexHeader& h = (*f)->header();
        if (!last_exit_ok && h.end_timestamp > index_checkpoint_timestamp) {
            spdlog::warn("index file {} may hold unflushed entries (endTimestamp {} > checkpoint "
                         "{}); destroying it, its entries are rebuilt from CommitLog offset {}",
                         name, h.end_timestamp, index_checkpoint_timestamp,
                         h.begin_phy_offset.value());
            rebuild_from = std::min(rebuild_from, h.begin_phy_offset.value());
            COMET_RETURN_IF_ERROR((*f)->destroy());
            continue;
        }
        files_.push_back(std::move(f).value());
        dirty_.push_back(false);
    }
    last_indexed_phy_ = -1;
    if (!files_.empty()) {
        const IndexHeader& h = files_.back()->header();
        // A file without entries carries the previous file's end, which was indexed; only the
        // very first file starts from nothing.
        if (h.index_count > 1 || files_.size() > 1) {
            last_indexed_phy_ = h.end_phy_offset.value();
        }
    }
    spdlog::info("index service {}: loaded {} file(s)", dir_, files_.size());
    return rebuild_from;
}

std::string IndexService::new_file_path() {
    std::string name = time_millis_to_human_string(clock_.wall_millis());
    // Two files in the same millisecond (tiny test files): keep names unique and ordered.
    if (!files_.empty() && name <= files_.back()->file_name()) {
        name = fmt::format("{:017}", std::stoll(files_.back()->file_name()) + 1);
    }
    return dir_ + "/" + name;
}

Result<IndexFile*> IndexService::last_writable_file() {
    if (!files_.empty() && !files_.back()->is_write_full()) {
        return files_.back().get();
    }
    PhysicalOffset prev_end{0};
    int64_t prev_ts = 0;
    if (!files_.empty()) {
        prev_end = files_.back()->header().end_phy_offset;
        prev_ts = files_.back()->header().end_timestamp;
    }
    const std::string path = new_file_path();
    auto f = IndexFile::create(path, hash_slot_num_, index_num_, prev_end, prev_ts);
    if (!f.is_ok()) {
        spdlog::error("index service: creating index file {} failed: {}", path,
                      f.status().to_string());
        return f.status();
    }
    if (!files_.empty()) {
        dirty_.back() = true;  // the full file gets its final flush with the next flush()
    }
    files_.push_back(std::move(f).value());
    dirty_.push_back(true);
    return files_.back().get();
}

Status IndexService::put_key(std::string_view key, const IndexDispatchRecord& rec) {
    for (int attempt = 0; attempt < 3; ++attempt) {
        COMET_ASSIGN_OR_RETURN(IndexFile * f, last_writable_file());
        if (f->put_key(key, rec.commit_log_offset, rec.store_timestamp)) {
            dirty_.back() = true;
            return Status::ok();
        }
    }
    return Status::error(Errc::kInternal, "index key {} at {} could not be written", key,
                         rec.commit_log_offset.value());
}

Status IndexService::build_index(const IndexDispatchRecord& rec) {
    if (protocol::sysflag::transaction_value(rec.sys_flag) ==
        protocol::sysflag::kTransactionRollbackType) {
        return Status::ok();
    }
    if (rec.uniq_key.empty() && rec.keys.empty()) {
        return Status::ok();
    }
    MutexLock l(mu_);
    if (rec.commit_log_offset.value() <= last_indexed_phy_) {
        return Status::ok();  // already indexed
    }
    if (!rec.uniq_key.empty()) {
        build_key(rec.topic, rec.uniq_key, &key_buf_);
        COMET_RETURN_IF_ERROR(put_key(key_buf_, rec));
    }
    size_t s = 0;
    const std::string_view keys = rec.keys;
    while (s < keys.size()) {
        size_t e = keys.find(' ', s);
        if (e == std::string_view::npos) {
            e = keys.size();
        }
        if (e > s) {
            build_key(rec.topic, keys.substr(s, e - s), &key_buf_);
            COMET_RETURN_IF_ERROR(put_key(key_buf_, rec));
        }
        s = e + 1;
    }
    last_indexed_phy_ = rec.commit_log_offset.value();
    return Status::ok();
}

QueryOffsetResult IndexService::query_offset(std::string_view topic, std::string_view key,
                                             size_t max_num, int64_t begin_ms,
                                             int64_t end_ms) const {
    QueryOffsetResult result;
    max_num = std::min(max_num, kMaxMsgsNumBatch);
    const std::string full_key = build_key(topic, key);
    MutexLock l(mu_);
    for (size_t i = files_.size(); i-- > 0;) {
        const IndexFile& f = *files_[i];
        if (i == files_.size() - 1) {
            result.index_last_update_timestamp = f.header().end_timestamp;
            result.index_last_update_phy_offset = f.header().end_phy_offset;
        }
        if (f.is_time_matched(begin_ms, end_ms)) {
            f.select_phy_offsets(full_key, max_num, begin_ms, end_ms, &result.phy_offsets);
        }
        if (f.header().begin_timestamp < begin_ms || result.phy_offsets.size() >= max_num) {
            break;
        }
    }
    return result;
}

Status IndexService::flush() {
    MutexLock l(mu_);
    for (size_t i = 0; i < files_.size(); ++i) {
        if (dirty_[i]) {
            COMET_RETURN_IF_ERROR(files_[i]->flush());
            dirty_[i] = false;
        }
    }
    return Status::ok();
}

int IndexService::delete_expired_file(PhysicalOffset min_phy_offset) {
    std::vector<std::unique_ptr<IndexFile>> doomed;
    {
        MutexLock l(mu_);
        size_t n = 0;
        while (n + 1 < files_.size() && files_[n]->header().end_phy_offset < min_phy_offset) {
            ++n;
        }
        for (size_t i = 0; i < n; ++i) {
            doomed.push_back(std::move(files_[i]));
        }
        files_.erase(files_.begin(), files_.begin() + static_cast<ptrdiff_t>(n));
        dirty_.erase(dirty_.begin(), dirty_.begin() + static_cast<ptrdiff_t>(n));
    }
    for (auto& f : doomed) {
        spdlog::info("index file {} expired (endPhyOffset {} < CommitLog min {}); deleting",
                     f->file_name(), f->header().end_phy_offset.value(), min_phy_offset.value());
        const Status st = f->destroy();
        if (!st.is_ok()) {
            spdlog::warn("deleting index file {}: {}", f->file_name(), st.to_string());
        }
    }
    return static_cast<int>(doomed.size());
}

void IndexService::destroy() {
    MutexLock l(mu_);
    for (auto& f : files_) {
        const Status st = f->destroy();
        if (!st.is_ok()) {
            spdlog::warn("deleting index file {}: {}", f->file_name(), st.to_string());
        }
    }
    files_.clear();
    dirty_.clear();
    last_indexed_phy_ = -1;
}

size_t IndexService::file_count() const {
    MutexLock l(mu_);
    return files_.size();
}

PhysicalOffset IndexService::end_phy_offset() const {
    MutexLock l(mu_);
    return files_.empty() ? PhysicalOffset(0) : files_.back()->header().end_phy_offset;
}

}  // namespace comet::store
