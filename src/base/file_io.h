#pragma once
// File I/O primitives every durable file of Comet shares: whole reads and writes at an offset
// that retry EINTR and short transfers, a directory fsync, and the durable replace (temporary
// file, fdatasync, rename, directory fsync) that the hard-state, epoch, JSON config and KV files
// use so that a crash leaves either the old or the new content, never a mix.
//
// Errors are Status kIoError naming the operation, the path and errno's text; an early end of
// file is kIoError too ("end of file at N of M bytes").

#include <sys/types.h>

#include <cstddef>
#include <string>
#include <string_view>

#include "base/status.h"

namespace comet {

// kIoError "<op> <path>: <strerror(errno)>" (reads errno: call right after the failure).
Status io_error(std::string_view op, const std::string& path);

Status pwrite_all(int fd, const void* data, size_t n, off_t at, const std::string& path);
Status pread_all(int fd, void* data, size_t n, off_t at, const std::string& path);
// Writes `len` zero bytes at `at` (1 MiB per pwritev from one static zero run), volatile until
// a sync.
Status pwrite_zeros(int fd, off_t at, int64_t len, const std::string& path);

// Makes a directory entry change (create, rename, unlink) in `dir` durable.
Status fsync_dir(const std::string& dir);

struct ReplaceOptions {
    // Before the rename, copy the current file to path + backup_suffix ("" = no copy). A failed
    // copy is not an error: the rename alone makes the replace atomic.
    std::string backup_suffix;
    // Create the parent directories first.
    bool create_dirs = false;
};

// Replaces `path` with `content` durably: path.tmp written and fdatasynced, renamed over path,
// the directory fsynced. On error the temporary file is removed and path is untouched.
Status replace_file_durably(const std::string& path, std::string_view content,
                            const ReplaceOptions& options = {});

}  // namespace comet
