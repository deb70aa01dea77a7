#pragma once
// Log tags: which broker a log line comes from when several brokers share one process and one
// log (BrokerContainer). A thread carries the tag of the broker it works for; the log pattern
// (init_logging) prints it as " [<tag>]" after the thread id, nothing when it is empty.
// - Threads a broker starts inherit the tag of the thread that starts them (tagged_thread),
//   so the container sets it once around a broker's initialize / start / shutdown.
// - Threads shared by several brokers (the container's I/O loops) set it per request
//   (ScopedLogTag around the dispatch).
// Tags are interned for the life of the process (intern_log_tag): a few per process, never
// freed, so a thread can hold a plain pointer and setting one costs no allocation.
// Threads: every function is safe from any thread; the tag itself is thread-local.

#include <string>
#include <thread>
#include <utility>

namespace comet {

// A stable pointer to `tag`'s interned copy; nullptr for an empty tag.
const std::string* intern_log_tag(const std::string& tag);

// The calling thread's tag (nullptr: none).
const std::string* current_log_tag();

// Sets the calling thread's tag until the scope ends, then restores the previous one.
class ScopedLogTag {
public:
    explicit ScopedLogTag(const std::string* tag);
    ~ScopedLogTag();
    ScopedLogTag(const ScopedLogTag&) = delete;
    ScopedLogTag& operator=(const ScopedLogTag&) = delete;

private:
    const std::string* previous_;
};

// std::thread running `fn` with the tag of the thread that creates it.
template <class Fn>
std::thread tagged_thread(Fn&& fn) {
    return std::thread([tag = current_log_tag(), fn = std::forward<Fn>(fn)]() mutable {
        ScopedLogTag scope(tag);
        fn();
    });
}

}  // namespace comet
