#pragma once
// COMET_CHECK(cond, fmt, args...): a broken invariant is a bug. Logs file:line and the message,
// flushes logs, and aborts in every build type.

#include <fmt/format.h>

#include <string>

namespace comet::detail {
[[noreturn]] void check_failed(const char* file, int line, const char* cond, const std::string& msg);
}  // namespace comet::detail

#define COMET_CHECK(cond, ...)                                                             \
    do {                                                                                   \
        if (!(cond)) [[unlikely]] {                                                        \
            ::comet::detail::check_failed(__FILE__, __LINE__, #cond, ::fmt::format(__VA_ARGS__)); \
        }                                                                                  \
    } while (0)
