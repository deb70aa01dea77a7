#include "store/clean_service.h"

#include <spdlog/spdlog.h>
#include <sys/statvfs.h>

#include <charconv>
#include <ctime>

#include "store/consume_queue_store.h"
#include "store/index_file_service.h"

namespace comet::store {

double StatvfsDiskUsageProbe::used_ratio(const std::string& path) const {
    struct statvfs st {};
    if (::statvfs(path.c_str(), &st) != 0 || st.f_blocks == 0) {
        return -1;
    }
    const double total = static_cast<double>(st.f_blocks);
    return (total - static_cast<double>(st.f_bfree)) / total;
}

StatvfsDiskUsageProbe& StatvfsDiskUsageProbe::instance() {
    static StatvfsDiskUsageProbe probe;
    return probe;
}

bool is_it_time_to_do(std::string_view when, int hour) {
    size_t s = 0;
    while (s <= when.size()) {
        size_t e = when.find(';', s);
        if (e == std::string_view::npos) {
            e = when.size();
        }
        const std::string_view item = when.substr(s, e - s);
        int h = -1;
        const auto r = std::from_chars(item.data(), item.data() + item.size(), h);
        if (r.ec == std::errc() && r.ptr == item.data() + item.size() && h == hour) {
            return true;
        }
        s = e + 1;
    }
    return false;
}

CleanService::CleanService(const MessageStoreConfig& config, const Clock& clock,
                           RunningFlags& flags, const DiskUsageProbe& probe, Hooks hooks,
                           ConsumeQueueStore& cqs, IndexService& index)
    : config_(config),
      clock_(clock),
      flags_(flags),
      probe_(probe),
      hooks_(std::move(hooks)),
      cqs_(cqs),
      index_(index) {}

void CleanService::run_once() {
    delete_expired_commit_log();
    delete_expired_consume_queues();
}

bool CleanService::is_space_to_delete() {
    const double ratio = config_.disk_max_used_space_ratio / 100.0;
    clean_immediately_ = false;
    const double physic = probe_.used_ratio(config_.commit_log_dir());
    last_ratio_.store(physic);
    const bool was_full = is_disk_full();
    if (physic > kDiskSpaceWarningLevelRatio) {
        flags_.set(RunningFlags::kDiskFull);
        if (!was_full) {
            spdlog::error("physic disk maybe full soon: {:.3f} of {} used, so mark disk full; "
                          "puts are refused until space is reclaimed",
                          physic, config_.commit_log_dir());
        }
        clean_immediately_ = true;
    } else {
        if (physic > kDiskSpaceCleanForciblyRatio) {
            clean_immediately_ = true;
        }
        if (was_full && physic >= 0) {
            flags_.clear(RunningFlags::kDiskFull);
            spdlog::info("physic disk space OK: {:.3f} used, so mark disk ok", physic);
        }
    }
    if (physic < 0 || physic > ratio) {
        if (physic < 0) {
            spdlog::info("disk usage of {} cannot be read, so reclaim space (as RocketMQ)",
                         config_.commit_log_dir());
        } else {
            spdlog::info("physic disk maybe full soon ({:.3f} > {:.2f}), so reclaim space",
                         physic, ratio);
        }
        return true;
    }
    return false;
}

void CleanService::delete_expired_commit_log() {
    const std::time_t secs = static_cast<std::time_t>(clock_.wall_millis() / 1000);
    std::tm tm{};
    ::localtime_r(&secs, &tm);
    const bool timeup = is_it_time_to_do(config_.delete_when, tm.tm_hour);
    const bool space_full = is_space_to_delete();
    int manual = manual_delete_rounds_.load();
    const bool manual_delete = manual > 0;
    if (!(timeup || space_full || manual_delete)) {
        return;
    }
    if (manual_delete) {
        manual_delete_rounds_.compare_exchange_strong(manual, manual - 1);
    }
    const int64_t expired_ms = int64_t{config_.file_reserved_time_hours} * 60 * 60 * 1000;
    const int n = hooks_.delete_commit_log_files(expired_ms, clean_immediately_,
                                                 kMaxBatchDeleteFiles);
    if (n > 0) {
        cl_deleted_.fetch_add(n);
        spdlog::info("retention: deleted {} CommitLog segment(s) (timeup={}, spacefull={}, "
                     "manual={}, cleanImmediately={})",
                     n, timeup, space_full, manual_delete, clean_immediately_);
    } else if (space_full) {
        const double used = last_ratio_.load();
        if (used < 0) {
            // RocketMQ reclaims too when the usage cannot be read (a removed or unmounted
            // store directory): say that, not "above".
            spdlog::warn("retention: disk usage of {} cannot be read; no CommitLog segment "
                         "could be deleted",
                         config_.commit_log_dir());
        } else {
            spdlog::warn("retention: disk above {}% ({:.1f}% used) but no CommitLog segment "
                         "could be deleted",
                         config_.disk_max_used_space_ratio, used * 100);
        }
    }
}

void CleanService::delete_expired_consume_queues() {
    const int64_t min = hooks_.commit_log_min_offset().value();
    if (min <= last_physical_min_offset_) {
        return;
    }
    last_physical_min_offset_ = min;
    const int cq = cqs_.delete_expired_files(PhysicalOffset(min));
    const int idx = index_.delete_expired_file(PhysicalOffset(min));
    spdlog::info("retention: CommitLog min offset now {}; removed {} ConsumeQueue segment(s), "
                 "{} index file(s)",
                 min, cq, idx);
}

}  // namespace comet::store
