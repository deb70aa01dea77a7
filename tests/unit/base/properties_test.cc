#include "base/properties.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <unistd.h>

namespace comet {
namespace {

std::vector<PropertyEntry> parse_ok(std::string_view text) {
    Result<std::vector<PropertyEntry>> r = parse_properties(text, "t.conf");
    EXPECT_TRUE(r.is_ok()) << r.status().to_string();
    return r.is_ok() ? r.value() : std::vector<PropertyEntry>{};
}

TEST(PropertiesTest, SeparatorsCommentsBlankLinesAndLineNumbers) {
    auto e = parse_ok(
        "# comment\n"
        "! also a comment\n"
        "\n"
        "   \t\n"
        "brokerName=broker-a\n"
        "  listenPort : 10911\n"
        "flushDiskType ASYNC_FLUSH\n"
        "empty=\n"
        "bare\n");
    ASSERT_EQ(e.size(), 5u);
    EXPECT_EQ(e[0].key, "brokerName");
    EXPECT_EQ(e[0].value, "broker-a");
    EXPECT_EQ(e[0].line, 5);
    EXPECT_EQ(e[0].location(), "t.conf:5");
    EXPECT_EQ(e[1].key, "listenPort");
    EXPECT_EQ(e[1].value, "10911");
    EXPECT_EQ(e[1].line, 6);
    EXPECT_EQ(e[2].key, "flushDiskType");
    EXPECT_EQ(e[2].value, "ASYNC_FLUSH");
    EXPECT_EQ(e[3].key, "empty");
    EXPECT_EQ(e[3].value, "");
    EXPECT_EQ(e[4].key, "bare");
    EXPECT_EQ(e[4].value, "");
}

TEST(PropertiesTest, OnlyFirstSeparatorSplits) {
    auto e = parse_ok("namesrvAddr=127.0.0.1:9876;127.0.0.2:9876\nurl = a=b\n");
    ASSERT_EQ(e.size(), 2u);
    EXPECT_EQ(e[0].value, "127.0.0.1:9876;127.0.0.2:9876");
    EXPECT_EQ(e[1].key, "url");
    EXPECT_EQ(e[1].value, "a=b");
}

TEST(PropertiesTest, CrLfAndCrLineEndings) {
    auto e = parse_ok("a=1\r\nb=2\rc=3");
    ASSERT_EQ(e.size(), 3u);
    EXPECT_EQ(e[0].value, "1");
    EXPECT_EQ(e[1].value, "2");
    EXPECT_EQ(e[2].value, "3");
    EXPECT_EQ(e[2].line, 3);
}

TEST(PropertiesTest, ContinuationLinesAndEscapes) {
    auto e = parse_ok(
        "list=a,\\\n"
        "     b,\\\n"
        "  c\n"
        "two\\\\=x\n"
        "key\\ with\\ space=v\\tw\n"
        "uni=\\u0041\\u00e9\n"
        "next=1\n");
    ASSERT_EQ(e.size(), 5u);
    EXPECT_EQ(e[0].value, "a,b,c");
    EXPECT_EQ(e[0].line, 1);
    EXPECT_EQ(e[1].key, "two\\");  // even backslashes: no continuation, escaped backslash
    EXPECT_EQ(e[1].value, "x");
    EXPECT_EQ(e[2].key, "key with space");
    EXPECT_EQ(e[2].value, "v\tw");
    EXPECT_EQ(e[3].value, "A\xC3\xA9");
    EXPECT_EQ(e[4].line, 7);
}

TEST(PropertiesTest, CommentLinesDoNotContinue) {
    auto e = parse_ok("# comment \\\nreal=1\n");
    ASSERT_EQ(e.size(), 1u);
    EXPECT_EQ(e[0].key, "real");
}

TEST(PropertiesTest, TrailingWhitespaceKeptInValue) {
    auto e = parse_ok("k = v  \n");
    ASSERT_EQ(e.size(), 1u);
    EXPECT_EQ(e[0].value, "v  ");
}

TEST(PropertiesTest, MalformedUnicodeEscapeNamesLine) {
    auto r = parse_properties("a=1\nb=\\u12G4\n", "x.conf");
    ASSERT_FALSE(r.is_ok());
    EXPECT_EQ(r.status().code(), Errc::kInvalidArgument);
    EXPECT_NE(r.status().message().find("x.conf:2"), std::string::npos);
}

TEST(PropertiesTest, LoadFileAndMissingFile) {
    auto dir = std::filesystem::temp_directory_path() /
               ("comet_props_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    auto path = (dir / "a.conf").string();
    {
        std::ofstream out(path);
        out << "brokerClusterName = DefaultCluster\n";
    }
    auto r = load_properties_file(path);
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    ASSERT_EQ(r.value().size(), 1u);
    EXPECT_EQ(r.value()[0].source, path);
    EXPECT_EQ(r.value()[0].location(), path + ":1");

    auto missing = load_properties_file((dir / "nope.conf").string());
    ASSERT_FALSE(missing.is_ok());
    EXPECT_EQ(missing.status().code(), Errc::kNotFound);
    EXPECT_NE(missing.status().message().find("nope.conf"), std::string::npos);

    auto is_dir = load_properties_file(dir.string());
    EXPECT_FALSE(is_dir.is_ok());
    std::filesystem::remove_all(dir);
}

TEST(PropertiesTest, ToText) {
    std::vector<PropertyEntry> e{{"a", "1", "", 0}, {"b", "x y", "", 0}};
    EXPECT_EQ(properties_to_text(e), "a=1\nb=x y\n");
}

}  // namespace
}  // namespace comet
