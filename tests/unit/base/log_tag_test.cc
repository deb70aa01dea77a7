// Log tags (base/log_tag.h): interning, scoped setting and inheritance by tagged threads.

#include "base/log_tag.h"

#include <gtest/gtest.h>

#include <string>

namespace comet {
namespace {

TEST(LogTag, InternedTagsAreStableAndEmptyIsNone) {
    const std::string* a = intern_log_tag("C:broker-a:0");
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(*a, "C:broker-a:0");
    EXPECT_EQ(intern_log_tag(std::string("C:broker-a:") + "0"), a);  // same node every time
    EXPECT_NE(intern_log_tag("C:broker-b:0"), a);
    EXPECT_EQ(intern_log_tag(""), nullptr);
}

TEST(LogTag, ScopesNestAndRestore) {
    EXPECT_EQ(current_log_tag(), nullptr);
    const std::string* a = intern_log_tag("a");
    const std::string* b = intern_log_tag("b");
    {
        ScopedLogTag outer(a);
        EXPECT_EQ(current_log_tag(), a);
        {
            ScopedLogTag inner(b);
            EXPECT_EQ(current_log_tag(), b);
            ScopedLogTag none(nullptr);
            EXPECT_EQ(current_log_tag(), nullptr);
        }
        EXPECT_EQ(current_log_tag(), a);
    }
    EXPECT_EQ(current_log_tag(), nullptr);
}

TEST(LogTag, TaggedThreadsInheritTheCreatorsTag) {
    const std::string* a = intern_log_tag("creator");
    const std::string* seen = nullptr;
    const std::string* seen_untagged = a;
    {
        ScopedLogTag scope(a);
        std::thread t = tagged_thread([&] { seen = current_log_tag(); });
        t.join();
    }
    std::thread u = tagged_thread([&] { seen_untagged = current_log_tag(); });
    u.join();
    EXPECT_EQ(seen, a);
    EXPECT_EQ(seen_untagged, nullptr);
}

}  // namespace
}  // namespace comet
