// The wire form of raft::Message: every field round-trips; truncated or padded input is refused.
#include "raft/message_codec.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace comet::raft {
namespace {

Message sample() {
    Message m;
    m.type = MessageType::kAppend;
    m.from = NodeId(1);
    m.to = NodeId(3);
    m.term = Term(7);
    m.index = LogIndex(41);
    m.log_term = Term(6);
    m.commit = LogIndex(40);
    m.reject = true;
    m.transfer = true;
    m.regressed = true;
    m.reject_hint = LogIndex(12);
    m.conflict_term = Term(4);
    m.entries.push_back(Entry{Term(7), LogIndex(42), EntryType::kNormal, SharedBytes::copy_of("abc")});
    m.entries.push_back(Entry{Term(7), LogIndex(43), EntryType::kNoOp, {}});
    return m;
}

TEST(MessageCodec, EveryFieldRoundTrips) {
    std::string wire;
    encode_message(sample(), 123456789, &wire);
    int64_t tag = 0;
    auto m = decode_message(std::make_shared<const std::string>(wire), &tag);
    ASSERT_TRUE(m.is_ok()) << m.status().to_string();
    EXPECT_EQ(tag, 123456789);
    const Message want = sample();
    EXPECT_EQ(m->type, want.type);
    EXPECT_EQ(m->from, want.from);
    EXPECT_EQ(m->to, want.to);
    EXPECT_EQ(m->term, want.term);
    EXPECT_EQ(m->index, want.index);
    EXPECT_EQ(m->log_term, want.log_term);
    EXPECT_EQ(m->commit, want.commit);
    EXPECT_TRUE(m->reject);
    EXPECT_TRUE(m->transfer);
    EXPECT_TRUE(m->regressed);
    EXPECT_EQ(m->reject_hint, want.reject_hint);
    EXPECT_EQ(m->conflict_term, want.conflict_term);
    ASSERT_EQ(m->entries.size(), 2u);
    EXPECT_EQ(m->entries[0].payload.view(), "abc");
    EXPECT_EQ(m->entries[0].index, LogIndex(42));
    EXPECT_EQ(m->entries[1].type, EntryType::kNoOp);
    EXPECT_TRUE(m->entries[1].payload.empty());
}

TEST(MessageCodec, TruncatedPaddedOrUnknownInputIsRefused) {
    std::string wire;
    encode_message(sample(), 0, &wire);
    for (size_t cut = 0; cut < wire.size(); ++cut) {
        auto m = decode_message(std::make_shared<const std::string>(wire.substr(0, cut)), nullptr);
        EXPECT_FALSE(m.is_ok()) << "prefix of " << cut << " bytes accepted";
    }
    EXPECT_FALSE(decode_message(std::make_shared<const std::string>(wire + "x"), nullptr).is_ok());
    std::string bad_type = wire;
    bad_type[1] = 99;
    EXPECT_FALSE(decode_message(std::make_shared<const std::string>(bad_type), nullptr).is_ok());
    std::string bad_version = wire;
    bad_version[0] = 2;
    EXPECT_FALSE(decode_message(std::make_shared<const std::string>(bad_version), nullptr).is_ok());
}

// The scatter form (DLedger's append frames reference CommitLog slices) puts the same bytes on
// the wire as the contiguous one, and copies no payload.
TEST(MessageCodec, PartsConcatenateToTheContiguousEncoding) {
    std::vector<Message> cases;
    cases.push_back(sample());  // a payload, then an empty no-op entry
    Message none = sample();
    none.entries.clear();
    cases.push_back(none);
    Message many = sample();
    many.entries.clear();
    many.entries.push_back(Entry{Term(7), LogIndex(42), EntryType::kNoOp, {}});
    for (int i = 0; i < 5; ++i) {
        many.entries.push_back(Entry{Term(7), LogIndex(43 + i), EntryType::kNormal,
                                     SharedBytes::copy_of(std::string(100 + i, 'a' + i))});
    }
    cases.push_back(many);
    Message snap;
    snap.type = MessageType::kInstallSnapshot;
    snap.from = NodeId(1);
    snap.to = NodeId(2);
    snap.snapshot_offset = 4096;
    snap.snapshot_size = 9000;
    snap.snapshot_done = true;
    snap.data = SharedBytes::copy_of("snapshot-bytes");
    cases.push_back(snap);
    Message snap_after_entry = snap;
    snap_after_entry.entries.push_back(
        Entry{Term(2), LogIndex(9), EntryType::kNormal, SharedBytes::copy_of("x")});
    cases.push_back(snap_after_entry);
    for (size_t c = 0; c < cases.size(); ++c) {
        std::string want;
        encode_message(cases[c], 77, &want);
        std::string head;
        std::vector<SharedBytes> tail;
        encode_message_parts(cases[c], 77, &head, &tail);
        std::string got = head;
        for (const SharedBytes& b : tail) {
            got.append(b.view());
        }
        EXPECT_EQ(got, want) << "case " << c;
        for (const Entry& e : cases[c].entries) {
            if (e.payload.empty()) {
                continue;
            }
            const bool referenced = std::any_of(tail.begin(), tail.end(), [&](const SharedBytes& b) {
                return b.data() == e.payload.data();
            });
            EXPECT_TRUE(referenced) << "case " << c << ": entry " << e.index.value() << " was copied";
        }
    }
}

}  // namespace
}  // namespace comet::raft
