#include "protocol/ext_fields.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <stdexcept>
#include <string>

namespace comet::protocol {
namespace {

// ExtFields behaves as the std::map it replaced: the same iteration order (bytewise, so
// upper-case keys before lower-case ones, as fastjson's sorted output), last write wins through
// operator[], emplace never overwrites, and a random sequence of edits ends equal to a map's.
TEST(ExtFieldsTest, BehavesAsTheSortedMapItReplaced) {
    ExtFields e;
    EXPECT_TRUE(e.empty());
    e["queueOffset"] = "7";
    e["MSG_REGION"] = "DefaultRegion";
    e["msgId"] = "AB";
    e["TRACE_ON"] = "true";
    e["queueId"] = "1";
    std::string keys;
    for (const auto& [k, v] : e) {
        keys += k + ",";
    }
    EXPECT_EQ(keys, "MSG_REGION,TRACE_ON,msgId,queueId,queueOffset,");
    EXPECT_EQ(e.size(), 5u);
    EXPECT_EQ(e.at("msgId"), "AB");
    EXPECT_THROW((void)e.at("absent"), std::out_of_range);
    EXPECT_TRUE(e.contains("queueId"));
    EXPECT_EQ(e.count("nope"), 0u);
    EXPECT_FALSE(e.emplace("msgId", "other").second);
    EXPECT_EQ(e.at("msgId"), "AB");
    EXPECT_FALSE(e.insert_or_assign("msgId", "CD").second);
    EXPECT_EQ(e.at("msgId"), "CD");
    EXPECT_EQ(e.erase("msgId"), 1u);
    EXPECT_EQ(e.erase("msgId"), 0u);
    EXPECT_EQ(e.find("msgId"), e.end());

    ExtFields dup{{"b", "1"}, {"a", "2"}, {"b", "3"}};  // std::map keeps the first
    EXPECT_EQ(dup.size(), 2u);
    EXPECT_EQ(dup.at("b"), "1");
    std::map<std::string, std::string> m{{"z", "1"}, {"y", "2"}};
    ExtFields from_map = m;
    EXPECT_EQ(from_map, (ExtFields{{"y", "2"}, {"z", "1"}}));

    std::mt19937 rng(42);
    ExtFields f;
    std::map<std::string, std::string> ref;
    for (int i = 0; i < 5000; ++i) {
        const std::string key(1 + rng() % 3, static_cast<char>('A' + rng() % 40));
        const std::string value = std::to_string(rng() % 100);
        switch (rng() % 4) {
            case 0: f[key] = value; ref[key] = value; break;
            case 1: f.emplace(key, value); ref.emplace(key, value); break;
            case 2: EXPECT_EQ(f.erase(key), ref.erase(key)); break;
            default: EXPECT_EQ(f.contains(key), ref.contains(key)); break;
        }
    }
    EXPECT_EQ(f, ExtFields(ref));
    ASSERT_EQ(f.size(), ref.size());
    auto it = ref.begin();
    for (const auto& [k, v] : f) {
        EXPECT_EQ(k, it->first);
        EXPECT_EQ(v, it->second);
        ++it;
    }
}

// assign_sorted: the same fields as operator[] would leave, whatever was there before (more,
// fewer or other entries), and a rebuilt header keeps its strings' buffers.
TEST(ExtFieldsTest, AssignSortedReplacesTheContentAndKeepsTheStrings) {
    ExtFields e{{"zzz", "old"}, {"a", "x"}, {"b", "y"}, {"c", "z"}};
    const std::string long_id(32, 'F');
    e.assign_sorted({{"MSG_REGION", "DefaultRegion"}, {"msgId", long_id}, {"queueId", "3"}});
    ExtFields want;
    want["queueId"] = "3";
    want["msgId"] = long_id;
    want["MSG_REGION"] = "DefaultRegion";
    EXPECT_EQ(e, want);

    const char* buffer = e.at("msgId").data();
    const std::string other_id(32, 'A');
    e.assign_sorted({{"MSG_REGION", "r"}, {"msgId", other_id}, {"queueId", "4"}});
    EXPECT_EQ(e.at("msgId"), other_id);
    EXPECT_EQ(e.at("msgId").data(), buffer);  // assigned in place, no new buffer
    EXPECT_EQ(e.at("MSG_REGION"), "r");

    // A value that views the string it replaces (its own tail), and longer values than before.
    const std::string_view own_tail = std::string_view(e.at("msgId")).substr(20);
    e.assign_sorted({{"MSG_REGION", "DefaultRegion"}, {"msgId", own_tail}, {"queueId", "12345"}});
    EXPECT_EQ(e.at("MSG_REGION"), "DefaultRegion");
    EXPECT_EQ(e.at("msgId"), std::string(12, 'A'));
    EXPECT_EQ(e.at("queueId"), "12345");

    e.assign_sorted({{"TRACE_ON", "true"}});
    EXPECT_EQ(e, (ExtFields{{"TRACE_ON", "true"}}));
    e.assign_sorted({});
    EXPECT_TRUE(e.empty());
}

TEST(ExtFieldsDeathTest, AssignSortedChecksTheKeyOrder) {
    ExtFields e;
    EXPECT_DEATH(e.assign_sorted({{"b", "1"}, {"a", "2"}}), "out of order");
    EXPECT_DEATH(e.assign_sorted({{"a", "1"}, {"a", "2"}}), "out of order");
}

}  // namespace
}  // namespace comet::protocol
