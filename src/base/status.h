#pragma once
// Status and Result<T>: the error types every module returns for expected failures.
// Exceptions never cross module boundaries; a broken invariant is COMET_CHECK, not a Status.

#include <fmt/format.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "base/check.h"

namespace comet {

// Generic error categories. Modules that need finer outcomes (store::PutStatus, raft::Errc)
// carry their own enum and map it at their boundary.
enum class Errc : int32_t {
    kOk = 0,
    kInvalidArgument,  // bad input from a caller or a peer (config value, frame, header field)
    kNotFound,
    kAlreadyExists,
    kCorruption,    // bytes on disk or wire failed a check (magic, CRC, length)
    kIoError,       // a system call failed; message carries errno text
    kTimeout,
    kUnavailable,   // peer gone, connection closed, service stopped
    kResourceExhausted,  // disk full, queue full, frame too large
    kFailedPrecondition,
    kUnsupported,
    kInternal,
};

std::string_view errc_name(Errc e);

class [[nodiscard]] Status {
public:
    Status() = default;
    Status(Errc code, std::string message) : code_(code), message_(std::move(message)) {}

    static Status ok() { return {}; }
    template <typename... Args>
    static Status error(Errc code, fmt::format_string<Args...> f, Args&&... args) {
        return {code, fmt::format(f, std::forward<Args>(args)...)};
    }

    bool is_ok() const { return code_ == Errc::kOk; }
    explicit operator bool() const { return is_ok(); }
    Errc code() const { return code_; }
    const std::string& message() const { return message_; }
    std::string to_string() const;

private:
    Errc code_ = Errc::kOk;
    std::string message_;
};

// Result<T>: a T or a non-OK Status.
template <typename T>
class [[nodiscard]] Result {
public:
    Result(T value) : v_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
    Result(Status status) : v_(std::move(status)) {  // NOLINT(google-explicit-constructor)
        COMET_CHECK(!std::get<Status>(v_).is_ok(), "Result constructed from an OK status");
    }

    bool is_ok() const { return std::holds_alternative<T>(v_); }
    explicit operator bool() const { return is_ok(); }

    // Requires: is_ok().
    T& value() & {
        COMET_CHECK(is_ok(), "Result::value() on error: {}", std::get<Status>(v_).to_string());
        return std::get<T>(v_);
    }
    const T& value() const& {
        COMET_CHECK(is_ok(), "Result::value() on error: {}", std::get<Status>(v_).to_string());
        return std::get<T>(v_);
    }
    T&& value() && {
        COMET_CHECK(is_ok(), "Result::value() on error: {}", std::get<Status>(v_).to_string());
        return std::get<T>(std::move(v_));
    }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }

    // OK status when is_ok().
    Status status() const { return is_ok() ? Status::ok() : std::get<Status>(v_); }

private:
    std::variant<T, Status> v_;
};

}  // namespace comet

// Propagate a non-OK Status from an expression returning Status.
#define COMET_RETURN_IF_ERROR(expr)           \
    do {                                      \
        ::comet::Status _comet_st = (expr);   \
        if (!_comet_st.is_ok()) {             \
            return _comet_st;                 \
        }                                     \
    } while (0)

#define COMET_CONCAT_INNER(a, b) a##b
#define COMET_CONCAT(a, b) COMET_CONCAT_INNER(a, b)
// COMET_ASSIGN_OR_RETURN(auto x, expr): x = expr.value(), or return its Status.
#define COMET_ASSIGN_OR_RETURN(lhs, expr) \
    COMET_ASSIGN_OR_RETURN_IMPL(COMET_CONCAT(_comet_res_, __LINE__), lhs, expr)
#define COMET_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
    auto tmp = (expr);                              \
    if (!tmp.is_ok()) {                             \
        return tmp.status();                        \
    }                                               \
    lhs = std::move(tmp).value()
