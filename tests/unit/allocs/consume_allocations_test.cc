// Heap allocations per consumed message in the client (issue 16: the C++ client and mqbench
// follow the broker's principles). A push consumer decodes each pulled body over the messages
// it decoded the previous one into (protocol::decode_messages into a vector, decode_pulled);
// once that vector and its strings have grown, decoding allocates nothing per message. Counted
// with this binary's counting operator new (send_allocations_test.cc), on a thread of its own
// name: a window of N decodes and one of 2N, the per-message figure being their difference
// over the extra N pulls (fixed costs do not count).

#include <gtest/gtest.h>
#include <sys/prctl.h>

#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "client/consumer_api.h"
#include "protocol/message_decoder.h"
#include "protocol/message_ext.h"
#include "protocol/heartbeat_body.h"

int64_t comet_test_thread_allocations();

namespace comet::client {
namespace {

using protocol::MessageExt;

// A pull body of `count` records as a broker returns them: 1 KiB bodies (or `body_size`),
// Java-shaped properties, store host 127.0.0.1:10911, queue offsets from `first_offset`.
std::string pull_body(int count, const std::string& topic, size_t body_size, int64_t first_offset,
                      const std::string& tags) {
    std::string out;
    for (int i = 0; i < count; ++i) {
        MessageExt m;
        m.topic = topic;
        m.body.assign(body_size, static_cast<char>('a' + i % 26));
        m.queue_id = 1;
        m.queue_offset = first_offset + i;
        m.commit_log_offset = 4096 + static_cast<int64_t>(out.size());
        m.born_timestamp = 1700000000000 + i;
        m.store_timestamp = 1700000000001 + i;
        m.born_host = protocol::HostAddress::ipv4(127, 0, 0, 1, 50000);
        m.store_host = protocol::HostAddress::ipv4(127, 0, 0, 1, 10911);
        m.set_property("UNIQ_KEY", "7F0000010000ABCDEF012345678" + std::to_string(100 + i % 900));
        m.set_property("TAGS", tags);
        m.set_property("KEYS", "key-" + std::to_string(i));
        m.set_property("WAIT", "true");
        EXPECT_TRUE(protocol::encode_message(m, &out).is_ok());
    }
    return out;
}

protocol::SubscriptionData all_tags(const std::string& topic) {
    protocol::SubscriptionData sub;
    sub.topic = topic;
    sub.sub_string = "*";
    return sub;
}

// Runs `fn` on a thread named `name` (the counter keys on it) and returns what it returns.
template <typename Fn>
int64_t on_named_thread(const char* name, Fn fn) {
    int64_t result = 0;
    std::thread t([&] {
        ::prctl(PR_SET_NAME, name, 0, 0, 0);
        result = fn();
    });
    t.join();
    return result;
}

TEST(ConsumeAllocations, DecodeOverAReusedVectorAllocatesNothingPerMessage) {
    constexpr int kPerPull = 256;
    constexpr int kPulls = 40;
    const std::string a = pull_body(kPerPull, "AllocTopic", 1024, 0, "TagA");
    const std::string b = pull_body(kPerPull, "AllocTopic", 1024, kPerPull, "TagB");
    const protocol::SubscriptionData sub = all_tags("AllocTopic");
    const int64_t extra = on_named_thread("decode-alloc", [&] {
        std::vector<MessageExt> msgs;
        auto pulls = [&](int n) {
            const int64_t before = comet_test_thread_allocations();
            for (int i = 0; i < n; ++i) {
                EXPECT_TRUE(decode_pulled(i % 2 == 0 ? a : b, sub, &msgs).is_ok());
                EXPECT_EQ(msgs.size(), static_cast<size_t>(kPerPull));
            }
            return comet_test_thread_allocations() - before;
        };
        pulls(4);  // warm-up: the vector, its strings and properties grow once
        const int64_t small = pulls(kPulls);
        const int64_t large = pulls(2 * kPulls);
        std::printf("decode_pulled of %d x %d messages: %lld allocations, of %d x %d: %lld\n",
                    kPulls, kPerPull, static_cast<long long>(small), 2 * kPulls, kPerPull,
                    static_cast<long long>(large));
        return large - small;
    });
    // A fresh vector per pull (as before): 5 allocations per message (the body, the stored
    // properties, the msgId, the properties' entries and their strings), 51,240 over the
    // extra pulls.
    EXPECT_LE(extra, 0) << "allocations grow with the number of messages decoded";
}

TEST(ConsumeAllocations, DecodingOverOldMessagesGivesWhatAFreshDecodeGives) {
    // Bodies of other sizes, other topics and properties, fewer records: nothing of the
    // messages decoded before may show through.
    const std::string first = pull_body(8, "LongerTopicName_0123456789", 3000, 100, "TagLong");
    const std::string second = pull_body(5, "T", 10, 7, "x");
    std::vector<MessageExt> reused;
    ASSERT_TRUE(protocol::decode_messages(first, {}, &reused).is_ok());
    ASSERT_EQ(reused.size(), 8u);
    ASSERT_TRUE(protocol::decode_messages(second, {}, &reused).is_ok());
    auto fresh = protocol::decode_messages(second);
    ASSERT_TRUE(fresh.is_ok());
    ASSERT_EQ(reused.size(), fresh->size());
    for (size_t i = 0; i < reused.size(); ++i) {
        const MessageExt& r = reused[i];
        const MessageExt& f = (*fresh)[i];
        EXPECT_EQ(r.topic, f.topic);
        EXPECT_EQ(r.body, f.body);
        EXPECT_EQ(r.properties, f.properties);
        EXPECT_EQ(r.stored_properties, f.stored_properties);
        EXPECT_EQ(r.msg_id, f.msg_id);
        EXPECT_EQ(r.queue_offset, f.queue_offset);
        EXPECT_EQ(r.commit_log_offset, f.commit_log_offset);
        EXPECT_EQ(r.store_size, f.store_size);
        EXPECT_EQ(r.born_timestamp, f.born_timestamp);
        EXPECT_EQ(r.tags(), "x");
    }
    // Without bodies (DecodeOptions::read_body false) the old bodies are gone too.
    ASSERT_TRUE(protocol::decode_messages(first, {}, &reused).is_ok());
    protocol::DecodeOptions no_body;
    no_body.read_body = false;
    ASSERT_TRUE(protocol::decode_messages(second, no_body, &reused).is_ok());
    for (const MessageExt& m : reused) {
        EXPECT_TRUE(m.body.empty());
    }
    // A truncated body: an error, and exactly the messages before the cut record.
    std::string cut = second.substr(0, second.size() - 3);
    EXPECT_FALSE(protocol::decode_messages(cut, {}, &reused).is_ok());
    ASSERT_EQ(reused.size(), 4u);
    for (size_t i = 0; i < reused.size(); ++i) {
        EXPECT_EQ(reused[i].queue_offset, (*fresh)[i].queue_offset);
        EXPECT_EQ(reused[i].body, (*fresh)[i].body);
    }
}

TEST(ConsumeAllocations, AKeptVectorReleasesAPullOfLargeMessages) {
    // A push consumer keeps each queue's decoded messages for the next pull; a pull of large
    // messages must not stay held by them, an ordinary one must stay for reuse.
    constexpr size_t kKeep = 4 << 20;
    std::vector<MessageExt> kept;
    ASSERT_TRUE(decode_pulled(pull_body(256, "T", 1024, 0, "a"), all_tags("T"), &kept).is_ok());
    EXPECT_FALSE(release_if_larger(&kept, kKeep));
    EXPECT_EQ(kept.size(), 256u);
    ASSERT_TRUE(
        decode_pulled(pull_body(6, "T", 1 << 20, 256, "a"), all_tags("T"), &kept).is_ok());
    ASSERT_EQ(kept.size(), 6u);
    EXPECT_TRUE(release_if_larger(&kept, kKeep));
    EXPECT_TRUE(kept.empty());
    EXPECT_EQ(kept.capacity(), 0u);
    // Small bodies after large ones, decoded over them, still hold the large buffers: freed too.
    ASSERT_TRUE(
        decode_pulled(pull_body(6, "T", 1 << 20, 262, "a"), all_tags("T"), &kept).is_ok());
    ASSERT_TRUE(decode_pulled(pull_body(6, "T", 10, 268, "a"), all_tags("T"), &kept).is_ok());
    EXPECT_TRUE(release_if_larger(&kept, kKeep));
    EXPECT_EQ(kept.capacity(), 0u);
}

}  // namespace
}  // namespace comet::client
