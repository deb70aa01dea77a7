#include "vectors_helper.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace comet::protocol::testing {

std::string vectors_dir() {
    if (const char* env = std::getenv("COMET_VECTORS_DIR")) {
        return env;
    }
    return COMET_SOURCE_DIR "/../shared/reference/vectors/frames";
}

std::vector<std::string> all_frame_names() {
    std::vector<std::string> names;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(vectors_dir(), ec)) {
        if (e.path().extension() == ".bin") {
            names.push_back(e.path().filename().string());
        }
    }
    std::sort(names.begin(), names.end());
    return names;
}

std::string read_frame(const std::string& name) {
    std::ifstream in(vectors_dir() + "/" + name, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

RemotingCommand load_command(const std::string& name) {
    const std::string frame = read_frame(name);
    EXPECT_FALSE(frame.empty()) << name;
    auto cmd = decode_frame_payload(std::string_view(frame).substr(std::min<size_t>(4, frame.size())));
    EXPECT_TRUE(cmd.is_ok()) << name << ": " << cmd.status().to_string();
    return cmd.is_ok() ? *cmd : RemotingCommand{};
}

}  // namespace comet::protocol::testing
