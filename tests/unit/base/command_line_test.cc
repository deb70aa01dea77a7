#include "base/command_line.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace comet {
namespace {

struct MiniConfig {
    int32_t listen_port = 0;
    std::string namesrv_addr;
    std::string broker_name;
    bool auto_create = false;
    int32_t total_replicas = 0;
};

class CommandLineTest : public ::testing::Test {
protected:
    void SetUp() override {
        registry_.add_int("listenPort", &cfg_.listen_port, 10911, "port").important().range(1,
                                                                                            65535);
        registry_.add_string("namesrvAddr", &cfg_.namesrv_addr, "", "name servers").important();
        registry_.add_string("brokerName", &cfg_.broker_name, "broker-a", "name");
        registry_.add_bool("autoCreateTopicEnable", &cfg_.auto_create, true, "auto create");
        registry_.add_int("totalReplicas", &cfg_.total_replicas, 1, "replicas").at_least(1);
        dir_ = std::filesystem::temp_directory_path() /
               ("comet_cli_" + std::to_string(::getpid()) + "_" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        std::filesystem::create_directories(dir_);
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }

    std::string write_file(const std::string& name, const std::string& text) {
        std::string path = (dir_ / name).string();
        std::ofstream(path) << text;
        return path;
    }

    CommandLineOutcome run(std::vector<std::string> args) {
        args.insert(args.begin(), "/usr/bin/mqtest");
        std::vector<const char*> argv;
        for (const std::string& a : args) {
            argv.push_back(a.c_str());
        }
        return evaluate_command_line(static_cast<int>(argv.size()), argv.data(), registry_);
    }

    MiniConfig cfg_;
    ConfigRegistry registry_;
    std::filesystem::path dir_;
};

TEST_F(CommandLineTest, NoArgumentsRunsWithDefaults) {
    auto o = run({});
    EXPECT_FALSE(o.exit_code.has_value());
    EXPECT_EQ(o.parsed.action, ParsedCommandLine::Action::kRun);
    EXPECT_EQ(cfg_.listen_port, 10911);
    EXPECT_TRUE(o.err_text.empty());
}

TEST_F(CommandLineTest, FileThenOverridesThenNamesrvFlag) {
    std::string path = write_file("b.conf",
                                  "# broker\n"
                                  "listenPort = 10920\n"
                                  "brokerName=from-file\n"
                                  "namesrvAddr=1.1.1.1:9876\n");
    auto o = run({"-c", path, "--brokerName=from-cli", "-n", "127.0.0.1:9876"});
    ASSERT_FALSE(o.exit_code.has_value()) << o.err_text;
    EXPECT_EQ(o.parsed.config_file, path);
    EXPECT_EQ(cfg_.listen_port, 10920);
    EXPECT_EQ(cfg_.broker_name, "from-cli");
    EXPECT_EQ(cfg_.namesrv_addr, "127.0.0.1:9876");
}

TEST_F(CommandLineTest, AttachedOptionArguments) {
    std::string path = write_file("a.conf", "listenPort=2000\n");
    auto o = run({"-c" + path, "-n10.0.0.1:9876"});
    ASSERT_FALSE(o.exit_code.has_value()) << o.err_text;
    EXPECT_EQ(cfg_.listen_port, 2000);
    EXPECT_EQ(cfg_.namesrv_addr, "10.0.0.1:9876");
    auto o2 = run({"--configFile=" + path, "--listenPort=3000"});
    ASSERT_FALSE(o2.exit_code.has_value()) << o2.err_text;
    EXPECT_EQ(cfg_.listen_port, 3000);
}

TEST_F(CommandLineTest, PrintAllIsSortedAndExitsZero) {
    auto o = run({"--listenPort=10930", "-p"});
    ASSERT_TRUE(o.exit_code.has_value());
    EXPECT_EQ(*o.exit_code, 0);
    EXPECT_EQ(o.out_text,
              "autoCreateTopicEnable=true\n"
              "brokerName=broker-a\n"
              "listenPort=10930\n"
              "namesrvAddr=\n"
              "totalReplicas=1\n");
}

TEST_F(CommandLineTest, PrintImportantOnly) {
    auto o = run({"-m"});
    ASSERT_TRUE(o.exit_code.has_value());
    EXPECT_EQ(*o.exit_code, 0);
    EXPECT_EQ(o.out_text, "listenPort=10911\nnamesrvAddr=\n");
    EXPECT_EQ(o.parsed.action, ParsedCommandLine::Action::kPrintImportant);
}

TEST_F(CommandLineTest, HelpListsKeys) {
    auto o = run({"--help"});
    ASSERT_TRUE(o.exit_code.has_value());
    EXPECT_EQ(*o.exit_code, 0);
    EXPECT_NE(o.out_text.find("usage: mqtest"), std::string::npos);
    EXPECT_NE(o.out_text.find("listenPort (int32, default 10911) [important]: port"),
              std::string::npos)
        << o.out_text;
}

TEST_F(CommandLineTest, UnknownKeyInFileIsAWarningNamingFileAndLine) {
    std::string path = write_file("w.conf", "listenPort=10940\n\nbogusKey=1\n");
    auto o = run({"-c", path});
    ASSERT_FALSE(o.exit_code.has_value()) << o.err_text;
    ASSERT_EQ(o.parsed.warnings.size(), 1u);
    EXPECT_NE(o.parsed.warnings[0].find("'bogusKey' at " + path + ":3"), std::string::npos)
        << o.parsed.warnings[0];
    EXPECT_NE(o.err_text.find("WARNING: unknown config key 'bogusKey'"), std::string::npos);
    EXPECT_EQ(cfg_.listen_port, 10940);
}

TEST_F(CommandLineTest, BadValueInFileExitsTwoNamingKeyValueAndLocation) {
    std::string path = write_file("bad.conf", "brokerName=x\nlistenPort=abc\n");
    auto o = run({"-c", path, "-p"});
    ASSERT_TRUE(o.exit_code.has_value());
    EXPECT_EQ(*o.exit_code, 2);
    EXPECT_TRUE(o.out_text.empty());
    EXPECT_NE(o.err_text.find("listenPort"), std::string::npos) << o.err_text;
    EXPECT_NE(o.err_text.find("\"abc\""), std::string::npos) << o.err_text;
    EXPECT_NE(o.err_text.find(path + ":2"), std::string::npos) << o.err_text;
}

TEST_F(CommandLineTest, NegativeReplicasOnCommandLineExitsTwo) {
    auto o = run({"--totalReplicas=-1"});
    ASSERT_TRUE(o.exit_code.has_value());
    EXPECT_EQ(*o.exit_code, 2);
    EXPECT_NE(o.err_text.find("'totalReplicas' at command line"), std::string::npos)
        << o.err_text;
    EXPECT_NE(o.err_text.find("\"-1\""), std::string::npos);
}

TEST_F(CommandLineTest, MissingConfigFileExitsTwoNamingPath) {
    std::string path = (dir_ / "absent.conf").string();
    auto o = run({"-c", path});
    ASSERT_TRUE(o.exit_code.has_value());
    EXPECT_EQ(*o.exit_code, 2);
    EXPECT_NE(o.err_text.find(path), std::string::npos) << o.err_text;
}

TEST_F(CommandLineTest, UsageErrors) {
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"-c"}, {"-n"}, {"--noSuchKey=1"}, {"--listenPort"}, {"-x"}, {"positional"}}) {
        auto o = run(args);
        ASSERT_TRUE(o.exit_code.has_value()) << args[0];
        EXPECT_EQ(*o.exit_code, 2) << args[0];
        EXPECT_NE(o.err_text.find("ERROR: mqtest:"), std::string::npos) << o.err_text;
    }
}

TEST(CommandLineNoNamesrvTest, DashNIgnoredWithWarningWhenRegistryLacksIt) {
    ConfigRegistry r;
    int32_t port = 0;
    r.add_int("listenPort", &port, 9876, "port");
    const char* argv[] = {"mqnamesrv", "-n", "127.0.0.1:9876"};
    auto o = evaluate_command_line(3, argv, r);
    EXPECT_FALSE(o.exit_code.has_value());
    ASSERT_EQ(o.parsed.warnings.size(), 1u);
    EXPECT_NE(o.parsed.warnings[0].find("-n ignored"), std::string::npos);
}

}  // namespace
}  // namespace comet
