// The helm CLI (built from test/tools/helm's pinned Go module) and the
// chart deploy/chart/octorun, for the chart tests: run helm, render the chart
// with a value set and look objects up in the parsed output.
#pragma once

#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>
#include <vector>

namespace octorun::test {

struct command_result {
  int status = 0;      // the shell's exit status (0: success)
  std::string output;  // stdout
  std::string errors;  // stderr (helm's messages and logs)
  std::string all() const { return errors + output; }
};

// Runs a shell command.
command_result run_shell(const std::string& cmd);

// The helm binary; built (or found in the cache) on first use.
const std::string& helm_binary();

// The chart's folder.
std::string chart_dir();

// Runs `helm ARGS` (ARGS is shell text: quote what needs it).
command_result helm(const std::string& args);

// Quotes s for a POSIX shell.
std::string shell_quote(const std::string& s);

// `helm template` of the chart with `--set`-style flags (e.g. "--set replicas=3"),
// release `release` in namespace `ns`.
struct rendered {
  command_result result;
  std::vector<YAML::Node> objects;  // every non-empty document, parsed

  // The object of this kind and name, if rendered.
  std::optional<YAML::Node> find(const std::string& kind, const std::string& name) const;
  // Every object of this kind.
  std::vector<YAML::Node> all(const std::string& kind) const;
};
rendered render(const std::string& flags, const std::string& release = "octorun",
                const std::string& ns = "octorun-system");

// The manager container of a rendered Deployment, and its args.
YAML::Node manager_container(const YAML::Node& deployment);
std::vector<std::string> args_of(const YAML::Node& container);

}  // namespace octorun::test
