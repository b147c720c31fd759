#include "adapters/files/whole_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <utility>

namespace octorun::files {

expected<ok_t, std::string> write_whole(const std::string& path, const std::string& content, mode_t mode) {
  const auto partial = path + ".partial";
  auto why = [] { return std::string(std::strerror(errno)); };
  const int fd = ::open(partial.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) return unexpected{"cannot write " + partial + ": " + why()};
  std::optional<std::string> problem;
  // A partial file left by an earlier run keeps its own mode: set ours.
  if (::fchmod(fd, mode) != 0) problem = why();
  for (std::size_t done = 0; !problem && done < content.size();) {
    const auto n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      problem = n < 0 ? why() : "nothing written";
    else
      done += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0 && !problem) problem = why();
  std::string error;
  if (problem)
    error = "cannot write " + partial + ": " + *problem;
  else if (std::rename(partial.c_str(), path.c_str()) != 0)
    error = "cannot replace " + path + ": " + why();
  else
    return ok;
  ::unlink(partial.c_str());
  return unexpected{std::move(error)};
}

}  // namespace octorun::files
