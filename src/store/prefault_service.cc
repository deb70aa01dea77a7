#include "store/prefault_service.h"

#include "base/log_tag.h"

#include <pthread.h>
#include <spdlog/spdlog.h>

#include <algorithm>

namespace comet::store {

namespace {
constexpr int64_t kStep = 1 << 20;  // fault in at most this much per madvise call
}

PrefaultService::PrefaultService(int64_t ahead) : ahead_(ahead) {}

PrefaultService::~PrefaultService() { shutdown(); }

void PrefaultService::start() {
    if (ahead_ <= 0) {
        return;
    }
    MutexLock l(mu_);
    if (thread_.joinable()) {
        return;
    }
    stopping_ = false;
    thread_ = tagged_thread([this] {
        ::pthread_setname_np(::pthread_self(), "PrefaultMapped");
        run();
    });
}

void PrefaultService::shutdown() {
    {
        MutexLock l(mu_);
        stopping_ = true;
        file_.reset();
    }
    cv_.notify_all();
    if (thread_.joinable()) {
        thread_.join();
    }
}

void PrefaultService::request(const std::shared_ptr<MappedFile>& file, int32_t wrote) {
    const int64_t target = std::min<int64_t>(file->file_size(), wrote + ahead_);
    {
        MutexLock l(mu_);
        if (file_ != file) {
            file_ = file;
            done_ = wrote;
        } else {
            done_ = std::max<int64_t>(done_, wrote);  // the writer overtook the worker
        }
        target_ = std::max(target_, target);
        if (target_ < done_) {
            target_ = done_;
        }
        // Signal again once a quarter of the window has been consumed, or at the next segment.
        next_signal_.store(file->file_from_offset() +
                               std::min<int64_t>(file->file_size(), wrote + ahead_ / 4),
                           std::memory_order_relaxed);
    }
    cv_.notify_one();
}

void PrefaultService::run() {
    for (;;) {
        std::shared_ptr<MappedFile> file;
        int64_t from = 0;
        int64_t to = 0;
        {
            MutexLock l(mu_);
            while (!stopping_ && (file_ == nullptr || done_ >= target_)) {
                cv_.wait(mu_);
            }
            if (stopping_) {
                return;
            }
            file = file_;
            from = done_;
            to = std::min(target_, from + kStep);
        }
        if (!file->prefault(from, to - from)) {
            spdlog::warn("PrefaultService: MADV_POPULATE_WRITE unsupported on {}; puts take "
                         "their own page faults",
                         file->file_name());
            supported_.store(false, std::memory_order_relaxed);
            next_signal_.store(INT64_MAX, std::memory_order_relaxed);
            return;
        }
        prefaulted_.fetch_add(to - from, std::memory_order_relaxed);
        MutexLock l(mu_);
        if (file_ == file && done_ < to) {
            done_ = to;
        }
    }
}

}  // namespace comet::store
