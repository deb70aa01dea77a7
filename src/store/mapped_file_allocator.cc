#include "store/mapped_file_allocator.h"

#include "base/log_tag.h"

#include <pthread.h>
#include <spdlog/spdlog.h>

namespace comet::store {

AllocateMappedFileService::AllocateMappedFileService(bool warm_mapped_file)
    : warm_(warm_mapped_file) {}

AllocateMappedFileService::~AllocateMappedFileService() { shutdown(); }

void AllocateMappedFileService::start() {
    MutexLock l(mu_);
    if (thread_.joinable()) {
        return;
    }
    stopping_ = false;
    thread_ = tagged_thread([this] {
        pthread_setname_np(pthread_self(), "AllocateMapped");
        run();
    });
}

void AllocateMappedFileService::shutdown() {
    {
        MutexLock l(mu_);
        stopping_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) {
        thread_.join();
    }
    MutexLock l(mu_);
    // Wake anyone waiting on a request the worker will never serve.
    for (auto& r : pending_) {
        r->done = true;
    }
    pending_.clear();
    requests_.clear();
    cv_.notify_all();
}

int64_t AllocateMappedFileService::created_in_background() const {
    MutexLock l(mu_);
    return created_in_background_;
}

Result<std::shared_ptr<MappedFile>> AllocateMappedFileService::create(const std::string& path,
                                                                     int64_t size,
                                                                     bool zero_fill) {
    auto r = MappedFile::open_path(path, size, zero_fill);
    if (r.is_ok() && warm_) {
        r.value()->warm();
    }
    return r;
}

Result<std::shared_ptr<MappedFile>> AllocateMappedFileService::get(const std::string& path,
                                                                  const std::string& next_path,
                                                                  int64_t file_size,
                                                                  int64_t prefault_bytes,
                                                                  bool zero_fill) {
    std::shared_ptr<Request> mine;
    {
        MutexLock l(mu_);
        auto it = requests_.find(path);
        if (it != requests_.end()) {
            mine = it->second;
            while (!mine->done) {
                cv_.wait(mu_);  // the annotated Mutex is the BasicLockable released while waiting
            }
            requests_.erase(path);
        }
    }
    Result<std::shared_ptr<MappedFile>> file =
        (mine && mine->result && mine->result->is_ok())
            ? *mine->result
            // Inline (nobody pre-created it: the first segment, or the worker fell behind):
            // never zero-filled, which would stall the put path for the whole file.
            : create(path, file_size, /*zero_fill=*/false);
    if (mine && mine->result && !mine->result->is_ok()) {
        spdlog::warn("pre-allocation of {} failed ({}); created inline", path,
                     mine->result->status().to_string());
    }
    if (!file.is_ok()) {
        return file;
    }
    // Ask for the next segment only once this one exists on disk: a crash can then never leave
    // a gap (segment N+1 present, N missing) that would stop the queue from loading.
    {
        MutexLock l(mu_);
        bool running = thread_.joinable() && !stopping_;
        if (running && !next_path.empty() && requests_.count(next_path) == 0) {
            auto req = std::make_shared<Request>();
            req->path = next_path;
            req->file_size = file_size;
            req->prefault_bytes = prefault_bytes;
            req->zero_fill = zero_fill;
            requests_[next_path] = req;
            pending_.push_back(req);
        }
    }
    cv_.notify_all();
    return file;
}

void AllocateMappedFileService::run() {
    for (;;) {
        std::shared_ptr<Request> req;
        {
            MutexLock l(mu_);
            while (!stopping_ && pending_.empty()) {
                cv_.wait(mu_);
            }
            if (stopping_) {
                return;
            }
            req = pending_.front();
            pending_.pop_front();
        }
        auto result = create(req->path, req->file_size, req->zero_fill);
        if (result.is_ok() && !warm_ && req->prefault_bytes > 0) {
            (void)result.value()->prefault(0, req->prefault_bytes);
        }
        if (!result.is_ok()) {
            spdlog::error("AllocateMappedFileService: creating {} failed: {}", req->path,
                          result.status().to_string());
        }
        {
            MutexLock l(mu_);
            req->result = std::move(result);
            req->done = true;
            if (req->result->is_ok()) {
                ++created_in_background_;
            }
        }
        cv_.notify_all();
    }
}

}  // namespace comet::store
