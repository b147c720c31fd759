#include "adapters/kube/config.hpp"

#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "adapters/kube/api.hpp"
#include "adapters/kube/yaml.hpp"
#include "common/base64.hpp"
#include "common/json.hpp"

namespace octorun::kube {
namespace {

bool read_file(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::stringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return !in.bad();
}

std::string trim_token(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ' || s.back() == '\t'))
    s.pop_back();
  size_t start = s.find_first_not_of(" \t\r\n");
  return start == std::string::npos ? std::string{} : s.substr(start);
}

std::string resolve(const std::string& base_dir, const std::string& path) {
  if (path.empty() || path.front() == '/' || base_dir.empty()) return path;
  return base_dir + "/" + path;
}

// A string field; YAML may have typed it (a bool, a number): read it as text.
std::string field(const rapidjson::Value& obj, const char* name) {
  const auto* found = json::member(obj, name);
  if (found == nullptr) return {};
  const auto& v = *found;
  if (v.IsString()) return {v.GetString(), v.GetStringLength()};
  if (v.IsBool()) return v.GetBool() ? "true" : "false";
  if (v.IsInt64()) return std::to_string(v.GetInt64());
  return {};
}

bool has(const rapidjson::Value& obj, const char* name) { return json::find_value(obj, name) != nullptr; }

// `<name>-data` (base64 PEM) wins over `<name>` (a file, relative to the
// kubeconfig): fills `pem` or `file`. Returns what is wrong, or nothing.
std::string pem_or_file(const rapidjson::Value& section, const std::string& name, const std::string& base_dir,
                        std::string& pem, std::string& file) {
  auto data_key = name + "-data";
  if (has(section, data_key.c_str())) {
    auto decoded = base64_decode(field(section, data_key.c_str()));
    if (!decoded || decoded->empty()) return data_key + " is not valid base64";
    pem = std::move(*decoded);
    return {};
  }
  if (!has(section, name.c_str())) return {};
  file = resolve(base_dir, field(section, name.c_str()));
  std::string probe;
  if (!read_file(file, probe)) return "cannot read " + name + " " + file;
  return {};
}

// The `inner` map of the named entry of a kubeconfig list (clusters, users, contexts).
const rapidjson::Value* named(const rapidjson::Value& root, const char* list, const char* inner,
                              const std::string& name, std::string& error) {
  auto it = root.FindMember(list);
  if (it == root.MemberEnd() || !it->value.IsArray()) {
    error = std::string("no '") + list + "' list";
    return nullptr;
  }
  for (const auto& entry : it->value.GetArray()) {
    if (field(entry, "name") != name) continue;
    auto body = entry.FindMember(inner);
    if (body == entry.MemberEnd() || !body->value.IsObject()) {
      error = std::string(list) + " entry '" + name + "' has no '" + inner + "' map";
      return nullptr;
    }
    return &body->value;
  }
  error = std::string(inner) + " '" + name + "' not found in '" + list + "'";
  return nullptr;
}

}  // namespace

std::shared_ptr<token_source> token_source::fixed(std::string token) {
  std::shared_ptr<token_source> s(new token_source());
  s->token_ = std::move(token);
  s->loaded_ = true;
  return s;
}

std::shared_ptr<token_source> token_source::file(std::string path) {
  std::shared_ptr<token_source> s(new token_source());
  s->path_ = std::move(path);
  return s;
}

expected<std::string, std::string> token_source::token() {
  std::lock_guard lock(mu_);
  if (path_.empty()) return token_;
  struct stat st {};
  if (::stat(path_.c_str(), &st) != 0) {
    if (loaded_) return token_;  // mid-rotation: keep the last good token
    return unexpected{"token file " + path_ + ": cannot stat"};
  }
  int64_t mtime = static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  if (loaded_ && st.st_ino == inode_ && st.st_size == size_ && mtime == mtime_ns_) return token_;
  std::string text;
  if (!read_file(path_, text)) {
    if (loaded_) return token_;
    return unexpected{"token file " + path_ + ": cannot read"};
  }
  text = trim_token(std::move(text));
  if (text.empty()) {
    if (loaded_) return token_;  // a truncate-then-write rotation caught halfway
    return unexpected{"token file " + path_ + " is empty"};
  }
  token_ = std::move(text);
  loaded_ = true;
  inode_ = st.st_ino;
  size_ = st.st_size;
  mtime_ns_ = mtime;
  return token_;
}

void token_source::invalidate() {
  std::lock_guard lock(mu_);
  if (!path_.empty()) mtime_ns_ = -1;
}

expected<config, std::string> parse_kubeconfig(std::string_view text, const std::string& base_dir,
                                               const std::string& context) {
  rapidjson::Document doc;
  auto parsed = parse_yaml(text, doc);
  if (!parsed) return unexpected{"not valid YAML/JSON: " + parsed.error()};
  if (!doc.IsObject()) return unexpected{std::string("not a kubeconfig (top level is not a map)")};

  config cfg;
  cfg.context = context.empty() ? field(doc, "current-context") : context;
  if (cfg.context.empty()) return unexpected{std::string("no context given and no current-context set")};
  std::string error;
  const auto* ctx = named(doc, "contexts", "context", cfg.context, error);
  if (ctx == nullptr) return unexpected{error};
  std::string cluster_name = field(*ctx, "cluster");
  std::string user_name = field(*ctx, "user");
  if (cluster_name.empty()) return unexpected{"context '" + cfg.context + "' names no cluster"};
  if (auto ns = field(*ctx, "namespace"); !ns.empty()) cfg.namespace_ = ns;

  const auto* cluster = named(doc, "clusters", "cluster", cluster_name, error);
  if (cluster == nullptr) return unexpected{error};
  cfg.server = field(*cluster, "server");
  if (cfg.server.empty()) return unexpected{"cluster '" + cluster_name + "' has no server"};
  if (!cfg.server.starts_with("https://") && !cfg.server.starts_with("http://"))
    return unexpected{"cluster '" + cluster_name + "': server '" + cfg.server + "' is not an http(s) URL"};
  while (cfg.server.size() > 8 && cfg.server.back() == '/') cfg.server.pop_back();
  if (auto e = pem_or_file(*cluster, "certificate-authority", base_dir, cfg.tls.ca_pem, cfg.tls.ca_file);
      !e.empty())
    return unexpected{"cluster '" + cluster_name + "': " + e};
  cfg.tls.insecure_skip_verify = field(*cluster, "insecure-skip-tls-verify") == "true";
  if (has(*cluster, "proxy-url"))
    return unexpected{"cluster '" + cluster_name + "': proxy-url is not supported"};

  if (user_name.empty()) return cfg;  // anonymous
  const auto* user = named(doc, "users", "user", user_name, error);
  if (user == nullptr) return unexpected{error};
  auto where = "user '" + user_name + "': ";
  for (const char* unsupported : {"exec", "auth-provider", "username", "password", "as", "as-groups"})
    if (has(*user, unsupported)) return unexpected{where + unsupported + " is not supported"};

  if (auto e = pem_or_file(*user, "client-certificate", base_dir, cfg.tls.client_cert_pem,
                           cfg.tls.client_cert_file);
      !e.empty())
    return unexpected{where + e};
  if (auto e = pem_or_file(*user, "client-key", base_dir, cfg.tls.client_key_pem, cfg.tls.client_key_file);
      !e.empty())
    return unexpected{where + e};
  bool has_cert = !cfg.tls.client_cert_file.empty() || !cfg.tls.client_cert_pem.empty();
  bool has_key = !cfg.tls.client_key_file.empty() || !cfg.tls.client_key_pem.empty();
  if (has_cert != has_key) return unexpected{where + "client certificate and key must be given together"};

  if (has(*user, "tokenFile")) {  // wins over `token`, and is re-read when it changes
    cfg.token = token_source::file(resolve(base_dir, field(*user, "tokenFile")));
    auto t = cfg.token->token();
    if (!t) return unexpected{where + t.error()};
  } else if (has(*user, "token")) {
    auto t = field(*user, "token");
    if (t.empty()) return unexpected{where + "token is empty"};
    cfg.token = token_source::fixed(t);
  }
  return cfg;
}

expected<config, std::string> load_kubeconfig(const std::string& path, const std::string& context) {
  std::string text;
  if (!read_file(path, text)) return unexpected{"kubeconfig " + path + ": cannot read"};
  auto slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash);
  auto cfg = parse_kubeconfig(text, dir, context);
  if (!cfg) return unexpected{"kubeconfig " + path + ": " + cfg.error()};
  return cfg;
}

expected<config, std::string> in_cluster_config(const std::string& sa_dir, const env_lookup& env) {
  env_lookup get = env ? env : [](const char* name) {
    const char* v = std::getenv(name);
    return std::string(v ? v : "");
  };
  std::string host = get("KUBERNETES_SERVICE_HOST");
  std::string port = get("KUBERNETES_SERVICE_PORT");
  if (host.empty() || port.empty())
    return unexpected{
        std::string("in-cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set")};
  if (port.find_first_not_of("0123456789") != std::string::npos)
    return unexpected{"in-cluster: KUBERNETES_SERVICE_PORT '" + port + "' is not a port number"};
  config cfg;
  bool ipv6 = host.find(':') != std::string::npos && host.front() != '[';
  cfg.server = "https://" + (ipv6 ? "[" + host + "]" : host) + ":" + port;
  cfg.token = token_source::file(sa_dir + "/token");
  if (auto t = cfg.token->token(); !t) return unexpected{"in-cluster: " + t.error()};
  cfg.tls.ca_file = sa_dir + "/ca.crt";
  std::string probe;
  if (!read_file(cfg.tls.ca_file, probe) || probe.empty())
    return unexpected{"in-cluster: cannot read CA " + cfg.tls.ca_file};
  std::string ns;
  if (read_file(sa_dir + "/namespace", ns) && !trim_token(ns).empty()) cfg.namespace_ = trim_token(ns);
  return cfg;
}

expected<config, std::string> default_config(const std::string& context) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  if (host != nullptr && *host != '\0' && context.empty()) return in_cluster_config();
  const char* kc = std::getenv("KUBECONFIG");
  std::string path;
  if (kc != nullptr && *kc != '\0') {
    std::string list(kc);
    path = list.substr(0, list.find(':'));
  } else {
    const char* home = std::getenv("HOME");
    path = std::string(home ? home : "") + "/.kube/config";
  }
  return load_kubeconfig(path, context);
}

}  // namespace octorun::kube
