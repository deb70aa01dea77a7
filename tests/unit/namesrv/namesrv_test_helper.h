#pragma once
// Helpers for the name server tests: captured frames shipped in tests/unit/namesrv/frames.

#include <string>

#include "protocol/remoting_command.h"

namespace comet::namesrv::testing {

// Whole bytes of tests/unit/namesrv/frames/<name> (empty when missing).
std::string read_data_file(const std::string& name);
// The decoded frame; aborts the test (ADD_FAILURE + default command) when it does not decode.
protocol::RemotingCommand read_frame(const std::string& name);
// A fresh temporary directory for one test; removed by the caller.
std::string make_temp_dir(const std::string& tag);

}  // namespace comet::namesrv::testing
