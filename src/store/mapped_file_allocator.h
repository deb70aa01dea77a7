#pragma once
// AllocateMappedFileService: creates the next log segment ahead of time on its own thread
// ("AllocateMappedFile"), so a roll-over on the put path usually finds the file already
// allocated and mapped. Mirrors Java AllocateMappedFileService (without its transient pool).
//
// Owner: the store (one per store; CommitLog's and ConsumeQueues' MappedFileQueues may share
// it). Threads: get() from the put path of any queue; the worker thread creates files.
// Lock: mu_ guards the request table; never held while creating a file.

#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "base/mutex.h"
#include "base/status.h"
#include "store/mapped_file.h"

namespace comet::store {

class AllocateMappedFileService {
public:
    explicit AllocateMappedFileService(bool warm_mapped_file = false);
    ~AllocateMappedFileService();  // calls shutdown()

    void start();
    // Joins the worker; files pre-allocated but never requested stay on disk (empty; loading
    // and recovery treat them as unwritten segments).
    void shutdown();

    // Returns the file at `path` (waiting for it if the worker is creating it now, creating it
    // inline if nobody asked for it), then asks the worker to pre-create `next_path`.
    // next_path empty: no pre-allocation. The worker faults in the first prefault_bytes of
    // the next file writable (MappedFile::prefault) before publishing it. zero_fill: files the worker
    // creates are zero-filled (MappedFile::open_path); one created inline never is (it would
    // stall the caller for the whole file).
    Result<std::shared_ptr<MappedFile>> get(const std::string& path, const std::string& next_path,
                                            int64_t file_size, int64_t prefault_bytes = 0,
                                            bool zero_fill = false);

    int64_t created_in_background() const;

private:
    struct Request {
        std::string path;
        int64_t file_size = 0;
        int64_t prefault_bytes = 0;
        bool zero_fill = false;
        bool done = false;
        std::optional<Result<std::shared_ptr<MappedFile>>> result;
    };

    void run();
    Result<std::shared_ptr<MappedFile>> create(const std::string& path, int64_t size,
                                               bool zero_fill);

    const bool warm_;
    mutable Mutex mu_;
    std::condition_variable_any cv_;
    std::map<std::string, std::shared_ptr<Request>> requests_ GUARDED_BY(mu_);
    std::deque<std::shared_ptr<Request>> pending_ GUARDED_BY(mu_);
    bool stopping_ GUARDED_BY(mu_) = false;
    int64_t created_in_background_ GUARDED_BY(mu_) = 0;
    std::thread thread_;
};

}  // namespace comet::store
