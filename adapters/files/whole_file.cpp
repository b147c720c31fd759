#include "adapters/files/whole_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace octorun::files {

expected<ok_t, std::string> write_whole(const std::string& path, const std::string& content, mode_t mode) {
  const auto partial = path + ".partial";
  auto failed = [](const std::string& step, const std::string& what) {
    return unexpected<std::string>{"cannot " + step + " " + what + ": " + std::strerror(errno)};
  };
  const int fd = ::open(partial.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) return failed("write", partial);
  // A partial file left by an earlier run keeps its own mode: set ours.
  bool written = ::fchmod(fd, mode) == 0;
  for (std::size_t done = 0; written && done < content.size();) {
    const auto n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    written = n > 0;
    if (written) done += static_cast<std::size_t>(n);
  }
  const int write_errno = errno;
  if (::close(fd) != 0 || !written) {
    if (!written) errno = write_errno;
    const auto error = failed("write", partial);
    ::unlink(partial.c_str());
    return error;
  }
  if (std::rename(partial.c_str(), path.c_str()) != 0) {
    const auto error = failed("replace", path);
    ::unlink(partial.c_str());
    return error;
  }
  return ok;
}

}  // namespace octorun::files
