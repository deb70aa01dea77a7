#include "base/log_tag.h"

#include <memory>
#include <mutex>
#include <set>

namespace comet {
namespace {

thread_local const std::string* t_tag = nullptr;

}  // namespace

const std::string* intern_log_tag(const std::string& tag) {
    if (tag.empty()) {
        return nullptr;
    }
    // Never destroyed: threads may log until the very end of the process.
    static std::mutex* mu = new std::mutex;
    static std::set<std::string>* tags = new std::set<std::string>;
    std::lock_guard<std::mutex> lock(*mu);
    return &*tags->insert(tag).first;  // set nodes never move
}

const std::string* current_log_tag() { return t_tag; }

ScopedLogTag::ScopedLogTag(const std::string* tag) : previous_(t_tag) { t_tag = tag; }

ScopedLogTag::~ScopedLogTag() { t_tag = previous_; }

}  // namespace comet
