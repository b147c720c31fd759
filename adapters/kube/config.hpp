// Where the API server is and how to authenticate: kubeconfig (current or a
// named context) and in-cluster service-account configuration. Every broken
// input comes back as an error string that names the file and the field.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "adapters/http/http_client.hpp"
#include "common/expected.hpp"

namespace octorun::kube {

// A bearer token, static or read from a file that is re-read whenever it
// changes (projected service-account tokens rotate; kubeconfig tokenFile).
// Thread-safe; shared by every client of a process.
class token_source {
 public:
  static std::shared_ptr<token_source> fixed(std::string token);
  static std::shared_ptr<token_source> file(std::string path);

  // The current token. For a file: re-read when its identity (inode, size,
  // mtime) changed since the last read, or after invalidate().
  expected<std::string, std::string> token();
  // Forces a re-read on next use (after a 401).
  void invalidate();
  const std::string& path() const { return path_; }

 private:
  token_source() = default;
  std::mutex mu_;
  std::string path_;
  std::string token_;
  bool loaded_ = false;
  ino_t inode_ = 0;
  off_t size_ = 0;
  int64_t mtime_ns_ = 0;
};

struct config {
  std::string server;                   // https://host:port (no trailing slash)
  http::tls_options tls;                // CA, client certificate
  std::shared_ptr<token_source> token;  // null: no bearer token (client certificate or anonymous)
  std::string namespace_ = "default";   // the context's namespace, or the pod's
  std::string context;                  // the kubeconfig context used (empty in-cluster)
};

// Parses kubeconfig text (YAML or JSON). Relative paths resolve against
// `base_dir`. `context` empty = current-context.
expected<config, std::string> parse_kubeconfig(std::string_view text, const std::string& base_dir,
                                               const std::string& context = {});
// Reads and parses a kubeconfig file.
expected<config, std::string> load_kubeconfig(const std::string& path, const std::string& context = {});

using env_lookup = std::function<std::string(const char*)>;  // empty = unset

// In-cluster configuration: KUBERNETES_SERVICE_HOST/PORT, and token, ca.crt
// and namespace from the service-account folder.
expected<config, std::string> in_cluster_config(
    const std::string& sa_dir = "/var/run/secrets/kubernetes.io/serviceaccount", const env_lookup& env = {});

// In-cluster when KUBERNETES_SERVICE_HOST is set, else $KUBECONFIG (first
// file) or ~/.kube/config.
expected<config, std::string> default_config(const std::string& context = {});

}  // namespace octorun::kube
