// A file written whole: its content goes to PATH.partial, created with the
// file's mode from the start (a private key is never readable by others,
// not even half written), then renamed over PATH, so a reader sees the old
// file, no file or all of the new one. The one way the manager, its
// admission certificates and the test simulator write files others read.
#pragma once

#include <sys/types.h>

#include <string>

#include "common/expected.hpp"

namespace octorun::files {

// The error says what failed and why: "cannot write PATH.partial: Permission
// denied", "cannot replace PATH: ...".
expected<ok_t, std::string> write_whole(const std::string& path, const std::string& content,
                                        mode_t mode = 0644);

}  // namespace octorun::files
