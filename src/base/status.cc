#include "base/status.h"

namespace comet {

std::string_view errc_name(Errc e) {
    switch (e) {
        case Errc::kOk: return "OK";
        case Errc::kInvalidArgument: return "INVALID_ARGUMENT";
        case Errc::kNotFound: return "NOT_FOUND";
        case Errc::kAlreadyExists: return "ALREADY_EXISTS";
        case Errc::kCorruption: return "CORRUPTION";
        case Errc::kIoError: return "IO_ERROR";
        case Errc::kTimeout: return "TIMEOUT";
        case Errc::kUnavailable: return "UNAVAILABLE";
        case Errc::kResourceExhausted: return "RESOURCE_EXHAUSTED";
        case Errc::kFailedPrecondition: return "FAILED_PRECONDITION";
        case Errc::kUnsupported: return "UNSUPPORTED";
        case Errc::kInternal: return "INTERNAL";
    }
    return "UNKNOWN";
}

std::string Status::to_string() const {
    if (is_ok()) {
        return "OK";
    }
    return fmt::format("{}: {}", errc_name(code_), message_);
}

}  // namespace comet
