#include "ha/ha_codec.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "base/bytes.h"

namespace comet::ha {
namespace {

std::string ha_vectors_dir() {
    if (const char* env = std::getenv("COMET_HA_VECTORS_DIR")) {
        return env;
    }
    return COMET_SOURCE_DIR "/../shared/reference/vectors/ha";
}

// Captured chunks of one direction ("s2m" or "m2s"), in arrival order, concatenated.
std::string captured_stream(const std::string& dir_tag, std::vector<std::string>* chunks) {
    std::vector<std::string> names;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(ha_vectors_dir(), ec)) {
        std::string n = e.path().filename().string();
        if (n.find("-" + dir_tag + "-") != std::string::npos) names.push_back(n);
    }
    std::sort(names.begin(), names.end());
    std::string all;
    for (const auto& n : names) {
        std::ifstream in(ha_vectors_dir() + "/" + n, std::ios::binary);
        std::ostringstream ss;
        ss << in.rdbuf();
        all += ss.str();
        if (chunks != nullptr) chunks->push_back(ss.str());
    }
    return all;
}

TEST(HaCodec, DecodesCapturedSlaveReportsByteByByte) {
    std::string s2m = captured_stream("s2m", nullptr);
    ASSERT_EQ(s2m.size(), 8u * 8) << "vectors missing under " << ha_vectors_dir();
    SlaveStreamDecoder dec;
    std::vector<int64_t> reports;
    for (char c : s2m) {
        dec.feed(std::string_view(&c, 1));
        for (;;) {
            auto r = dec.next();
            ASSERT_TRUE(r.is_ok()) << r.status().to_string();
            if (!r.value()) break;
            ASSERT_EQ(r.value()->kind, SlaveStreamDecoder::Event::Kind::kReport);
            reports.push_back(r.value()->offset);
        }
    }
    std::vector<int64_t> want{0, 0, 241, 470, 964, 964, 964, 964};
    EXPECT_EQ(reports, want);
    // Our encoder produces the same bytes.
    std::string re;
    for (int64_t o : want) re += encode_report(o);
    EXPECT_EQ(re, s2m);
}

TEST(HaCodec, DecodesCapturedTransferFrames) {
    std::vector<std::string> chunks;
    std::string m2s = captured_stream("m2s", &chunks);
    ASSERT_EQ(chunks.size(), 11u) << "vectors missing under " << ha_vectors_dir();
    // Feed in odd-sized pieces to exercise partial headers and bodies.
    TransferDecoder dec;
    std::vector<TransferDecoder::Frame> frames;
    for (size_t i = 0; i < m2s.size(); i += 7) {
        dec.feed(std::string_view(m2s).substr(i, 7));
        for (;;) {
            auto r = dec.next();
            ASSERT_TRUE(r.is_ok()) << r.status().to_string();
            if (!r.value()) break;
            frames.push_back(std::move(*r.value()));
        }
    }
    EXPECT_EQ(dec.buffered(), 0u);
    ASSERT_EQ(frames.size(), 8u);
    std::vector<std::pair<int64_t, size_t>> got;
    for (const auto& f : frames) got.emplace_back(f.offset, f.data.size());
    std::vector<std::pair<int64_t, size_t>> want{{0, 0},     {0, 0},   {0, 241}, {241, 229},
                                                 {470, 494}, {964, 0}, {964, 0}, {964, 0}};
    EXPECT_EQ(got, want);
    // Bodies are the captured CommitLog bytes; each starts with its first record's TOTALSIZE.
    EXPECT_EQ(frames[2].data, chunks[3]);
    EXPECT_EQ(frames[3].data, chunks[5]);
    EXPECT_EQ(frames[4].data, chunks[7]);
    EXPECT_EQ(get_be32(reinterpret_cast<const uint8_t*>(frames[2].data.data())), 241u);
    EXPECT_NE(frames[4].data.find("vec-ha-b2 batch"), std::string::npos);
    // Re-encoding reproduces the stream.
    std::string re;
    for (const auto& f : frames) {
        re += encode_transfer_header(f.offset, static_cast<int32_t>(f.data.size())) + f.data;
    }
    EXPECT_EQ(re, m2s);
}

TEST(HaCodec, HandshakeRoundTripThenReports) {
    std::string s = encode_handshake({"broker-a", 2}) + encode_report(0) + encode_report(77);
    SlaveStreamDecoder dec;
    // Split inside the handshake.
    dec.feed(std::string_view(s).substr(0, 13));
    auto r = dec.next();
    ASSERT_TRUE(r.is_ok());
    EXPECT_FALSE(r.value().has_value());
    dec.feed(std::string_view(s).substr(13));
    r = dec.next();
    ASSERT_TRUE(r.is_ok() && r.value());
    EXPECT_EQ(r.value()->kind, SlaveStreamDecoder::Event::Kind::kHandshake);
    EXPECT_EQ(r.value()->handshake.broker_name, "broker-a");
    EXPECT_EQ(r.value()->handshake.broker_id, 2);
    r = dec.next();
    ASSERT_TRUE(r.is_ok() && r.value());
    EXPECT_EQ(r.value()->offset, 0);
    r = dec.next();
    ASSERT_TRUE(r.is_ok() && r.value());
    EXPECT_EQ(r.value()->offset, 77);
    r = dec.next();
    ASSERT_TRUE(r.is_ok());
    EXPECT_FALSE(r.value().has_value());
}

TEST(HaCodec, RejectsBadSlaveInput) {
    {
        SlaveStreamDecoder dec;
        dec.feed(encode_report(-5));
        EXPECT_EQ(dec.next().status().code(), Errc::kCorruption);
    }
    {
        SlaveStreamDecoder dec;
        dec.feed(encode_report(1) + encode_handshake({"b", 1}));
        ASSERT_TRUE(dec.next().is_ok());
        auto r = dec.next();
        EXPECT_EQ(r.status().code(), Errc::kCorruption);
        EXPECT_NE(r.status().message().find("handshake"), std::string::npos);
    }
    {
        std::string hs = encode_handshake({"broker-a", 1});
        hs[8 + 4 + 1] = 50;  // name length no longer matches the body length
        SlaveStreamDecoder dec;
        dec.feed(hs);
        EXPECT_EQ(dec.next().status().code(), Errc::kCorruption);
    }
    {
        std::string hs = encode_handshake({"x", 1});
        put_be32(reinterpret_cast<uint8_t*>(hs.data() + 8), 0x7fffffff);
        SlaveStreamDecoder dec;
        dec.feed(hs);
        EXPECT_EQ(dec.next().status().code(), Errc::kCorruption);
    }
}

TEST(HaCodec, RejectsBadTransferFrames) {
    {
        TransferDecoder dec(1024);
        dec.feed(encode_transfer_header(0, 1025));
        EXPECT_EQ(dec.next().status().code(), Errc::kCorruption);
    }
    {
        TransferDecoder dec;
        dec.feed(encode_transfer_header(-1, 0));
        EXPECT_EQ(dec.next().status().code(), Errc::kCorruption);
    }
    {
        TransferDecoder dec;
        dec.feed(encode_transfer_header(5, -3));
        EXPECT_EQ(dec.next().status().code(), Errc::kCorruption);
    }
}

}  // namespace
}  // namespace comet::ha
