#pragma once
// Test helper: loads captured RocketMQ frames from ../shared/reference/vectors/frames (beside the checkout) (or the
// directory named by COMET_VECTORS_DIR).

#include <string>
#include <vector>

#include "protocol/remoting_command.h"

namespace comet::protocol::testing {

std::string vectors_dir();
// File names (not paths) of every captured frame, sorted.
std::vector<std::string> all_frame_names();
// Whole frame bytes of `name` (e.g. "0005-c2s-GET_ROUTEINFO_BY_TOPIC.bin"); empty if missing.
std::string read_frame(const std::string& name);
// The command in frame `name`, decoded; a failed read or decode fails the calling test (and
// returns an empty command).
RemotingCommand load_command(const std::string& name);

}  // namespace comet::protocol::testing
