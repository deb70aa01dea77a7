#include "ha/autoswitch_codec.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace comet::ha {
namespace {

using store::EpochEntry;

// Bytes written out by hand from rocketmq-wire.md §7.5.
std::string hex(std::initializer_list<int> bytes) {
    std::string s;
    for (int b : bytes)
        s.push_back(static_cast<char>(b));
    return s;
}

TEST(AutoSwitchCodec, SlaveHandshakeGoldenBytes) {
    std::string got = encode_autoswitch_slave_handshake({true, false, 0x0102030405060708});
    std::string want = hex({0, 0, 0, 1,                // state HANDSHAKE
                            0, 1,                      // isSyncFromLastFile
                            0, 0,                      // isAsyncLearner
                            1, 2, 3, 4, 5, 6, 7, 8});  // brokerControllerId
    ASSERT_EQ(got.size(), kAutoSwitchSlaveHandshakeSize);
    EXPECT_EQ(got, want);
}

TEST(AutoSwitchCodec, ReportGoldenBytes) {
    std::string got = encode_autoswitch_report(0x1122334455);
    std::string want = hex({0, 0, 0, 2, 0, 0, 0, 0x11, 0x22, 0x33, 0x44, 0x55});
    ASSERT_EQ(got.size(), kAutoSwitchReportSize);
    EXPECT_EQ(got, want);
}

TEST(AutoSwitchCodec, MasterHandshakeGoldenBytes) {
    AutoSwitchMasterHandshake hs;
    hs.max_offset = 0x2000;
    hs.last_epoch = 3;
    hs.epochs = {{1, 0}, {3, 0x1000}};
    std::string want = hex({0, 0, 0, 1,                                   // state
                            0, 0, 0, 24,                                  // bodySize = 12 x 2
                            0, 0, 0, 0,  0, 0, 0x20, 0,                   // master max offset
                            0, 0, 0, 3,                                   // last epoch
                            0, 0, 0, 1,  0, 0, 0,    0, 0, 0, 0,    0,    // 1@0
                            0, 0, 0, 3,  0, 0, 0,    0, 0, 0, 0x10, 0});  // 3@0x1000
    EXPECT_EQ(encode_autoswitch_master_handshake(hs), want);
}

TEST(AutoSwitchCodec, TransferHeaderGoldenBytes) {
    AutoSwitchTransferHeader h{0x0A0B, 7, 0x0900, 0x0A00};
    std::string want = hex({0, 0, 0, 2,                    // state
                            0, 0, 1, 0,                    // bodySize 256
                            0, 0, 0, 0, 0, 0, 0x0A, 0x0B,  // offset
                            0, 0, 0, 7,                    // epoch
                            0, 0, 0, 0, 0, 0, 0x09, 0,     // epochStartOffset
                            0, 0, 0, 0, 0, 0, 0x0A, 0});   // confirmOffset
    std::string got = encode_autoswitch_transfer_header(h, 256);
    ASSERT_EQ(got.size(), kAutoSwitchTransferHeaderSize);
    EXPECT_EQ(got, want);
}

TEST(AutoSwitchCodec, SlaveStreamRoundTripByteByByte) {
    std::string in = encode_autoswitch_slave_handshake({false, true, 42}) +
                     encode_autoswitch_report(0) + encode_autoswitch_report(123456789);
    AutoSwitchSlaveStreamDecoder dec;
    std::vector<AutoSwitchSlaveStreamDecoder::Event> evs;
    for (char c : in) {
        dec.feed(std::string_view(&c, 1));
        for (;;) {
            auto r = dec.next();
            ASSERT_TRUE(r.is_ok()) << r.status().to_string();
            if (!r.value())
                break;
            evs.push_back(*r.value());
        }
    }
    ASSERT_EQ(evs.size(), 3u);
    EXPECT_EQ(evs[0].kind, AutoSwitchSlaveStreamDecoder::Event::Kind::kHandshake);
    EXPECT_FALSE(evs[0].handshake.sync_from_last_file);
    EXPECT_TRUE(evs[0].handshake.async_learner);
    EXPECT_EQ(evs[0].handshake.broker_id, 42);
    EXPECT_EQ(evs[1].kind, AutoSwitchSlaveStreamDecoder::Event::Kind::kReport);
    EXPECT_EQ(evs[1].offset, 0);
    EXPECT_EQ(evs[2].offset, 123456789);
}

TEST(AutoSwitchCodec, MasterStreamRoundTripInOddPieces) {
    AutoSwitchMasterHandshake hs{5000, 2, {{1, 0}, {2, 4000}}};
    std::string data(300, 'x');
    std::string in = encode_autoswitch_master_handshake(hs) +
                     encode_autoswitch_transfer_header({4000, 2, 4000, 3900}, 300) + data +
                     encode_autoswitch_transfer_header({4300, 2, 4000, 4300}, 0);
    AutoSwitchMasterStreamDecoder dec;
    std::vector<AutoSwitchMasterStreamDecoder::Message> msgs;
    for (size_t i = 0; i < in.size(); i += 7) {
        dec.feed(std::string_view(in).substr(i, 7));
        for (;;) {
            auto r = dec.next();
            ASSERT_TRUE(r.is_ok()) << r.status().to_string();
            if (!r.value())
                break;
            msgs.push_back(std::move(*r.value()));
        }
    }
    EXPECT_EQ(dec.buffered(), 0u);
    ASSERT_EQ(msgs.size(), 3u);
    using Kind = AutoSwitchMasterStreamDecoder::Message::Kind;
    ASSERT_EQ(msgs[0].kind, Kind::kHandshake);
    EXPECT_EQ(msgs[0].handshake.max_offset, 5000);
    EXPECT_EQ(msgs[0].handshake.last_epoch, 2);
    EXPECT_EQ(msgs[0].handshake.epochs, hs.epochs);
    ASSERT_EQ(msgs[1].kind, Kind::kTransfer);
    EXPECT_EQ(msgs[1].header.offset, 4000);
    EXPECT_EQ(msgs[1].header.epoch, 2);
    EXPECT_EQ(msgs[1].header.epoch_start_offset, 4000);
    EXPECT_EQ(msgs[1].header.confirm_offset, 3900);
    EXPECT_EQ(msgs[1].data, data);
    ASSERT_EQ(msgs[2].kind, Kind::kTransfer);
    EXPECT_TRUE(msgs[2].data.empty());
    EXPECT_EQ(msgs[2].header.offset, 4300);
}

TEST(AutoSwitchCodec, EmptyMasterHandshake) {
    AutoSwitchMasterStreamDecoder dec;
    dec.feed(encode_autoswitch_master_handshake({0, 0, {}}));
    auto r = dec.next();
    ASSERT_TRUE(r.is_ok());
    ASSERT_TRUE(r.value());
    EXPECT_TRUE(r.value()->handshake.epochs.empty());
}

template <typename Dec>
Status first_error(const std::string& bytes, Dec dec) {
    dec.feed(bytes);
    for (;;) {
        auto r = dec.next();
        if (!r.is_ok())
            return r.status();
        if (!r.value())
            return Status::ok();
    }
}

TEST(AutoSwitchCodec, SlaveStreamCorruption) {
    // Unknown states (READY, SUSPEND, garbage).
    for (int s : {0, 3, 4, -1, 99}) {
        std::string b = encode_autoswitch_report(1);
        b[0] = static_cast<char>(static_cast<uint32_t>(s) >> 24);
        b[3] = static_cast<char>(s & 0xFF);
        EXPECT_EQ(first_error(b, AutoSwitchSlaveStreamDecoder()).code(), Errc::kCorruption) << s;
    }
    EXPECT_EQ(first_error(encode_autoswitch_report(-5), AutoSwitchSlaveStreamDecoder()).code(),
              Errc::kCorruption);
    std::string bad_flag = encode_autoswitch_slave_handshake({false, false, 1});
    bad_flag[5] = 2;
    EXPECT_EQ(first_error(bad_flag, AutoSwitchSlaveStreamDecoder()).code(), Errc::kCorruption);
    // A partial message is not an error.
    EXPECT_TRUE(
        first_error(encode_autoswitch_report(7).substr(0, 11), AutoSwitchSlaveStreamDecoder())
            .is_ok());
}

TEST(AutoSwitchCodec, MasterStreamCorruption) {
    auto err = [](const std::string& b) {
        return first_error(b, AutoSwitchMasterStreamDecoder(1024)).code();
    };
    std::string bad_state = encode_autoswitch_transfer_header({0, 1, 0, 0}, 0);
    bad_state[3] = 3;
    EXPECT_EQ(err(bad_state), Errc::kCorruption);
    EXPECT_EQ(err(encode_autoswitch_transfer_header({0, 1, 0, 0}, -1)), Errc::kCorruption);
    EXPECT_EQ(err(encode_autoswitch_transfer_header({0, 1, 0, 0}, 1025)), Errc::kCorruption);
    EXPECT_EQ(err(encode_autoswitch_transfer_header({-1, 1, 0, 0}, 0)), Errc::kCorruption);
    EXPECT_EQ(err(encode_autoswitch_transfer_header({0, 1, -8, 0}, 0)), Errc::kCorruption);
    EXPECT_EQ(err(encode_autoswitch_transfer_header({0, 1, 0, -2}, 0)), Errc::kCorruption);
    // confirmOffset -1 ("not known yet") is accepted.
    EXPECT_EQ(err(encode_autoswitch_transfer_header({0, 1, 0, -1}, 0)), Errc::kOk);
    // Handshake: body not a multiple of 12, negative max offset, negative entry start.
    std::string odd = encode_autoswitch_master_handshake({10, 1, {{1, 0}}});
    odd[7] = 13;
    EXPECT_EQ(err(odd), Errc::kCorruption);
    EXPECT_EQ(err(encode_autoswitch_master_handshake({-1, 1, {{1, 0}}})), Errc::kCorruption);
    EXPECT_EQ(err(encode_autoswitch_master_handshake({10, 1, {{1, -3}}})), Errc::kCorruption);
    EXPECT_EQ(err(encode_autoswitch_master_handshake({10, 1, std::vector<EpochEntry>(86)})),
              Errc::kCorruption);  // 86 x 12 > 1024
}

struct PointCase {
    const char* name;
    std::vector<EpochEntry> local;
    int64_t local_max;
    std::vector<EpochEntry> master;
    int64_t master_max;
    std::optional<int64_t> want;
};

TEST(AutoSwitchCodec, ConsistentPointTable) {
    const std::vector<PointCase> cases = {
        {"empty local list starts at 0", {}, 0, {{1, 0}}, 500, 0},
        {"empty local list with bytes still 0", {}, 300, {{1, 0}}, 500, 0},
        {"equal logs", {{1, 0}, {2, 100}}, 200, {{1, 0}, {2, 100}}, 200, 200},
        {"slave behind in the same epoch", {{1, 0}, {2, 100}}, 150, {{1, 0}, {2, 100}}, 400, 150},
        {"slave ahead in the same epoch", {{1, 0}, {2, 100}}, 400, {{1, 0}, {2, 100}}, 150, 150},
        {"slave behind, master has later epochs",
         {{1, 0}},
         80,
         {{1, 0}, {2, 100}, {3, 200}},
         300,
         80},
        {"divergent tail: local epoch 2 the master never had",
         {{1, 0}, {2, 100}},
         180,
         {{1, 0}, {3, 100}},
         250,
         100},
        {"divergent tail, master's epoch 1 ended earlier",
         {{1, 0}, {2, 120}},
         180,
         {{1, 0}, {3, 90}},
         250,
         90},
        {"same epoch number, different start: older epoch decides",
         {{1, 0}, {2, 100}},
         180,
         {{1, 0}, {2, 110}},
         250,
         100},
        {"no common epoch", {{4, 0}}, 100, {{1, 0}, {2, 50}}, 100, std::nullopt},
        {"same epoch, other start everywhere", {{1, 10}}, 100, {{1, 0}}, 100, std::nullopt},
        {"empty master list", {{1, 0}}, 100, {}, 0, std::nullopt},
        // A master killed before anything was written in its epoch: the slave noted epoch 1
        // from a heartbeat, the new master never had it; neither holds a byte.
        {"only empty local epochs, empty logs", {{1, 0}}, 0, {{2, 0}}, 0, 0},
        {"empty local epoch after old files went", {{3, 500}}, 500, {{2, 100}, {4, 500}}, 600,
         500},
        {"empty local epochs, slave end beyond the master's", {{3, 500}}, 500, {{4, 0}}, 100,
         std::nullopt},
        {"empty local tail epoch after data",
         {{1, 0}, {3, 100}},
         100,
         {{1, 0}, {2, 100}},
         150,
         100},
        {"common epoch in the middle",
         {{1, 0}, {2, 100}, {5, 200}},
         260,
         {{1, 0}, {2, 100}, {4, 150}},
         300,
         150},
        {"master list starts later (old files deleted)",
         {{2, 100}, {3, 300}},
         400,
         {{2, 100}, {3, 300}, {4, 350}},
         500,
         350},
    };
    for (const auto& c : cases) {
        EXPECT_EQ(compute_consistent_point(c.local, c.local_max, c.master, c.master_max), c.want)
            << c.name;
    }
}

TEST(AutoSwitchCodec, FormatsEpochs) {
    EXPECT_EQ(format_epochs({}), "[]");
    EXPECT_EQ(format_epochs({{1, 0}, {3, 4096}}), "[1@0, 3@4096]");
}

}  // namespace
}  // namespace comet::ha
