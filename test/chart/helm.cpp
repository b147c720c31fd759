#include "test/chart/helm.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

#ifndef OCTORUN_HELM_BUILD_SCRIPT
#error "OCTORUN_HELM_BUILD_SCRIPT must name test/tools/helm/build.sh"
#endif
#ifndef OCTORUN_CHART_DIR
#error "OCTORUN_CHART_DIR must name deploy/chart/octorun"
#endif

namespace octorun::test {

command_result run_shell(const std::string& cmd) {
  command_result r;
  char errors_file[] = "/tmp/octorun-chart-stderr-XXXXXX";
  const int fd = mkstemp(errors_file);
  if (fd < 0) throw std::runtime_error("mkstemp failed");
  close(fd);
  FILE* p = popen(("(" + cmd + ") 2>" + errors_file).c_str(), "r");
  if (p == nullptr) throw std::runtime_error("popen failed: " + cmd);
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.output.append(buf.data(), n);
  int rc = pclose(p);
  r.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : 128;
  std::ifstream in(errors_file);
  std::stringstream ss;
  ss << in.rdbuf();
  r.errors = ss.str();
  std::remove(errors_file);
  return r;
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

const std::string& helm_binary() {
  static const std::string path = [] {
    // The script prints progress first and the binary's path on the last line.
    auto built = run_shell(shell_quote(OCTORUN_HELM_BUILD_SCRIPT));
    if (built.status != 0) throw std::runtime_error(OCTORUN_HELM_BUILD_SCRIPT " failed:\n" + built.all());
    auto out = built.output;
    while (!out.empty() && out.back() == '\n') out.pop_back();
    auto line = out.rfind('\n');
    return line == std::string::npos ? out : out.substr(line + 1);
  }();
  return path;
}

std::string chart_dir() { return OCTORUN_CHART_DIR; }

command_result helm(const std::string& args) { return run_shell(shell_quote(helm_binary()) + " " + args); }

rendered render(const std::string& flags, const std::string& release, const std::string& ns) {
  rendered r;
  r.result = helm("template " + shell_quote(release) + " " + shell_quote(chart_dir()) + " --namespace " +
                  shell_quote(ns) + " " + flags);
  if (r.result.status != 0) return r;
  for (const auto& doc : YAML::LoadAll(r.result.output))
    if (doc.IsMap()) r.objects.push_back(doc);
  return r;
}

std::optional<YAML::Node> rendered::find(const std::string& kind, const std::string& name) const {
  for (const auto& o : objects)
    if (o["kind"].as<std::string>("") == kind && o["metadata"]["name"].as<std::string>("") == name) return o;
  return std::nullopt;
}

std::vector<YAML::Node> rendered::all(const std::string& kind) const {
  std::vector<YAML::Node> out;
  for (const auto& o : objects)
    if (o["kind"].as<std::string>("") == kind) out.push_back(o);
  return out;
}

YAML::Node manager_container(const YAML::Node& deployment) {
  for (const auto& c : deployment["spec"]["template"]["spec"]["containers"])
    if (c["name"].as<std::string>("") == "manager") return c;
  return YAML::Node();
}

std::vector<std::string> args_of(const YAML::Node& container) {
  std::vector<std::string> out;
  for (const auto& a : container["args"]) out.push_back(a.as<std::string>());
  return out;
}

}  // namespace octorun::test
