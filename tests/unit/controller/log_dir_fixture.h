// A fixture for the ControllerLogStorage tests: a fresh directory per test (removed after it)
// and open() on it, plus reading a whole file.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>

#include "controller/controller_log_storage.h"

namespace comet::controller {

inline std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class ControllerLogDirTest : public ::testing::Test {
protected:
    void SetUp() override {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        root_ = "/tmp/comet_" + std::string(info->test_suite_name()) + "_" +
                std::to_string(::getpid()) + "_" + info->name();
        std::filesystem::remove_all(root_);
        dir_ = root_ + "/raft";
    }
    void TearDown() override { std::filesystem::remove_all(root_); }

    std::unique_ptr<ControllerLogStorage> open() {
        auto s = ControllerLogStorage::open(dir_);
        EXPECT_TRUE(s.is_ok()) << s.status().to_string();
        return s.is_ok() ? std::move(s).value() : nullptr;
    }

    std::string root_;  // removed after the test
    std::string dir_;   // root_/raft: the storage's directory
};

}  // namespace comet::controller
