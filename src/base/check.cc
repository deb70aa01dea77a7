#include "base/check.h"

#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstdlib>

namespace comet::detail {

void check_failed(const char* file, int line, const char* cond, const std::string& msg) {
    std::fprintf(stderr, "COMET_CHECK failed at %s:%d: %s: %s\n", file, line, cond, msg.c_str());
    if (auto logger = spdlog::default_logger_raw()) {
        logger->critical("COMET_CHECK failed at {}:{}: {}: {}", file, line, cond, msg);
        logger->flush();
    }
    std::fflush(stderr);
    std::abort();
}

}  // namespace comet::detail
