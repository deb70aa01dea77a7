// Name lookups for request_code.h and response_code.h.
#include "protocol/request_code.h"
#include "protocol/response_code.h"

namespace comet::protocol {

std::string_view request_code_name(int32_t code) {
    switch (code) {
#define COMET_CODE_CASE(name, value, text) \
    case value:                            \
        return text;
        COMET_REQUEST_CODES(COMET_CODE_CASE)
#undef COMET_CODE_CASE
        default:
            return "UNKNOWN";
    }
}

std::string_view response_code_name(int32_t code) {
    switch (code) {
#define COMET_CODE_CASE(name, value, text) \
    case value:                            \
        return text;
        COMET_RESPONSE_CODES(COMET_CODE_CASE)
#undef COMET_CODE_CASE
        default:
            return "UNKNOWN";
    }
}

}  // namespace comet::protocol
