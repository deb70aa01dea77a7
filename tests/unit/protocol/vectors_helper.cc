#include "vectors_helper.h"

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

}  // namespace comet::protocol::testing
