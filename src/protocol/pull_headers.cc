#include "protocol/pull_headers.h"

namespace comet::protocol {

Result<PullMessageRequestHeader> decode_pull_message_header(const RemotingCommand& cmd) {
    if (cmd.typed_pull) {
        return *cmd.typed_pull;
    }
    return PullMessageRequestHeader::from_ext(cmd);
}

bool SearchOffsetRequestHeader::is_upper() const {
    if (!boundary_type || boundary_type->size() != 5) {
        return false;
    }
    const char* upper = "upper";
    for (size_t i = 0; i < 5; ++i) {
        char c = (*boundary_type)[i];
        if (c >= 'A' && c <= 'Z') {
            c = static_cast<char>(c - 'A' + 'a');
        }
        if (c != upper[i]) {
            return false;
        }
    }
    return true;
}

}  // namespace comet::protocol
