#include "namesrv_test_helper.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace comet::namesrv::testing {

std::string read_data_file(const std::string& name) {
    std::ifstream in(std::string(COMET_SOURCE_DIR) + "/tests/unit/namesrv/frames/" + name,
                     std::ios::binary);
    std::ostringstream buf;
    buf << in.rdbuf();
    return buf.str();
}

protocol::RemotingCommand read_frame(const std::string& name) {
    std::string bytes = read_data_file(name);
    if (bytes.size() < 8) {
        ADD_FAILURE() << "missing frame " << name;
        return {};
    }
    auto cmd = protocol::decode_frame_payload(std::string_view(bytes).substr(4));
    if (!cmd.is_ok()) {
        ADD_FAILURE() << name << ": " << cmd.status().to_string();
        return {};
    }
    return std::move(cmd).value();
}

std::string make_temp_dir(const std::string& tag) {
    static std::atomic<int> seq{0};
    auto dir = std::filesystem::temp_directory_path() /
               ("comet_namesrv_" + tag + "_" + std::to_string(::getpid()) + "_" +
                std::to_string(seq++));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    return dir.string();
}

}  // namespace comet::namesrv::testing
