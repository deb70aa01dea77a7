#pragma once
// Mutex with Clang thread-safety annotations (no-ops under g++). Fields are GUARDED_BY(mu_),
// helpers REQUIRES(mu_). No recursive mutexes; never hold one across I/O or a call into
// another module.

#include <mutex>

#if defined(__clang__)
#define COMET_TSA(x) __attribute__((x))
#else
#define COMET_TSA(x)
#endif

#define CAPABILITY(x) COMET_TSA(capability(x))
#define SCOPED_CAPABILITY COMET_TSA(scoped_lockable)
#define GUARDED_BY(x) COMET_TSA(guarded_by(x))
#define PT_GUARDED_BY(x) COMET_TSA(pt_guarded_by(x))
#define REQUIRES(...) COMET_TSA(requires_capability(__VA_ARGS__))
#define EXCLUDES(...) COMET_TSA(locks_excluded(__VA_ARGS__))
#define ACQUIRE(...) COMET_TSA(acquire_capability(__VA_ARGS__))
#define RELEASE(...) COMET_TSA(release_capability(__VA_ARGS__))
#define NO_THREAD_SAFETY_ANALYSIS COMET_TSA(no_thread_safety_analysis)

namespace comet {

class CAPABILITY("mutex") Mutex {
public:
    void lock() ACQUIRE() { mu_.lock(); }
    void unlock() RELEASE() { mu_.unlock(); }
    bool try_lock() { return mu_.try_lock(); }
    std::mutex& native() { return mu_; }

private:
    std::mutex mu_;
};

class SCOPED_CAPABILITY MutexLock {
public:
    explicit MutexLock(Mutex& mu) ACQUIRE(mu) : mu_(mu) { mu_.lock(); }
    ~MutexLock() RELEASE() { mu_.unlock(); }
    MutexLock(const MutexLock&) = delete;
    MutexLock& operator=(const MutexLock&) = delete;

private:
    Mutex& mu_;
};

}  // namespace comet
