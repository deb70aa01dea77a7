#pragma once
// Golden CommitLog bytes captured from RocketMQ 4.9.8, embedded so tests need no external file.

namespace comet::protocol::testing {
extern const char* const kGoldenCommitLogHex;
}  // namespace comet::protocol::testing
