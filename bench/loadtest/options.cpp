#include "bench/loadtest/options.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <map>
#include <utility>
#include <vector>

namespace octorun::loadtest {
namespace {

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  for (;;) {
    auto at = s.find(sep);
    out.push_back(s.substr(0, at));
    if (at == std::string_view::npos) return out;
    s.remove_prefix(at + 1);
  }
}

std::optional<double> number(std::string_view s) {
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

}  // namespace

bool is_quantity(std::string_view s) {
  static const std::string_view suffixes[] = {"Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "m",
                                              "k",  "M",  "G",  "T",  "P",  "E"};
  for (auto suffix : suffixes)
    if (s.ends_with(suffix)) {
      s.remove_suffix(suffix.size());
      break;
    }
  auto dot = s.find('.');
  auto digits = [](std::string_view d) {
    return !d.empty() && std::all_of(d.begin(), d.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  return dot == std::string_view::npos ? digits(s) : digits(s.substr(0, dot)) && digits(s.substr(dot + 1));
}

expected<std::chrono::milliseconds, std::string> parse_duration(std::string_view s) {
  struct unit {
    std::string_view suffix;
    double ms;
  };
  static const unit units[] = {{"ms", 1}, {"s", 1000}, {"m", 60'000}, {"h", 3'600'000}};
  double scale = 1000;  // a bare number: seconds
  for (const auto& u : units)
    if (s.ends_with(u.suffix) && number(s.substr(0, s.size() - u.suffix.size()))) {
      scale = u.ms;
      s.remove_suffix(u.suffix.size());
      break;
    }
  auto v = number(s);
  if (!v || *v < 0) return unexpected{std::string("want a duration such as 500ms, 2s, 10m")};
  return std::chrono::milliseconds(static_cast<std::int64_t>(std::llround(*v * scale)));
}

expected<distribution, std::string> parse_distribution(std::string_view s) {
  auto parts = split(s, ':');
  distribution d;
  d.text = std::string(s);
  auto ms = [&](size_t i) -> std::optional<double> {
    if (i >= parts.size()) return std::nullopt;
    auto v = parse_duration(parts[i]);
    return v ? std::optional<double>(static_cast<double>(v->count())) : std::nullopt;
  };
  const auto& name = parts[0];
  if (name == "fixed" && parts.size() == 2 && ms(1)) {
    d.shape = distribution::kind::fixed;
    d.a = *ms(1);
  } else if (name == "uniform" && parts.size() == 3 && ms(1) && ms(2) && *ms(1) <= *ms(2)) {
    d.shape = distribution::kind::uniform;
    d.a = *ms(1);
    d.b = *ms(2);
  } else if (name == "exponential" && parts.size() == 2 && ms(1)) {
    d.shape = distribution::kind::exponential;
    d.a = *ms(1);
  } else if (name == "lognormal" && parts.size() == 3 && ms(1) && number(parts[2]) &&
             *number(parts[2]) >= 0) {
    d.shape = distribution::kind::lognormal;
    d.a = *ms(1);
    d.b = *number(parts[2]);
  } else {
    return unexpected{std::string(
        "want fixed:D, uniform:MIN:MAX, exponential:MEAN or lognormal:MEDIAN:SIGMA (durations such as 2s)")};
  }
  return d;
}

std::string usage() {
  return R"(octorun-loadtest: load an Octorun installation with jobs from the GitHub simulator and report.

Where:
  --kubeconfig FILE, --context NAME   the cluster (default: $KUBECONFIG, ~/.kube/config)
  --namespace NS                      where the RunnerSet goes (a namespace the manager watches; default:
                                      a new one, octorun-loadtest-<id>, deleted afterwards)
  --intake Webhook|Listener           how the manager learns of jobs (default Listener)
  --min-runners N, --max-runners N    the RunnerSet's bounds (default 0, 20); the first job is queued
                                      once minRunners runners are online
  --start-time-target S               the RunnerSet's startTimeTarget.p95Seconds (default none): warm
                                      runners sized from the jobs arriving, within the bounds
  --runner-image IMAGE                the runner pods' image (default registry.k8s.io/pause:3.10: nothing
                                      runs in them; this tool plays the runner)
  --runner-cpu Q, --runner-memory Q   the runner pods' requests (default 10m, 16Mi; e.g. 2 and 4Gi so
                                      nodes fill up on a cluster with a node autoscaler)
  --node-selector K=V, --toleration K[=V]:EFFECT   where runner pods go (repeatable)
  --image-cache per-node|off          per-node: a pod on a node that pulled its image before pulls it
                                      cached (the real-shaped cluster's kwok stages); default per-node
                                      with --node-selector, else off
GitHub (the simulator):
  --simulator-url URL                 use a running github-simulator (default: start one here)
  --simulator-bind ADDR, --simulator-port N   the one started here listens there (default 127.0.0.1,
                                      any free port)
  --simulator-advertise URL           the simulator's URL as the manager reaches it (default: its own)
  --webhook-url URL, --webhook-secret S   Webhook intake: the manager's POST /webhook as the simulator
                                      reaches it, and the secret the manager checks
Load:
  --profile burst|steady|ramp|workday|workday-poisson|poisson|bursts   default burst
  --jobs N                            burst: N jobs at once; bursts: N at each burst; workday: the day's
                                      jobs; workday-poisson: the day's jobs on average (default 100)
  --rate R                            steady: one job every 1/R s; poisson: R jobs/s on average, each
                                      gap drawn from the seed; both for --duration
  --rate-from A --rate-to B           ramp: from A to B jobs/s over --duration
  --every D                           bursts: one burst at 0, D, 2D, ... within --duration (default 5m)
  --duration D                        steady, poisson, ramp, workday and bursts (default 60s; workday
                                      at most 30m: a working day's arrivals, peak hour 10x the
                                      quietest, compressed; workday-poisson the same day's rate,
                                      arrivals a Poisson process)
  --job-duration DIST                 fixed:D, uniform:MIN:MAX, exponential:MEAN, lognormal:MEDIAN:SIGMA
                                      (default fixed:0s)
  --runner-start DIST                 the runner process's start-up, container running -> runner online,
                                      as --job-duration (default fixed:0s; on a real-shaped cluster
                                      e.g. uniform:2s:5s, see README.md)
  --seed N                            arrivals and durations are drawn from it (default 1)
  --timeout D                         after the last job is queued (default 10m)
  --manager-timeout D                 for the manager to take up the RunnerSet (default 30s)
  --warm-up-timeout D                 with --min-runners: for that many runners to come online before
                                      the first job is queued (default 10m)
Observe:
  --manager-pid PID                   a manager on this machine: its RSS over time
  --manager-user USER                 count the manager's Kubernetes writes by the apiserver (FlowSchemas
                                      for USER, e.g. system:serviceaccount:octorun-system:octorun-manager)
  --count-priority-level NAME         their priority level (default: the one USER's requests use already)
  --manager-metrics URL               the leader's /metrics (e.g. http://127.0.0.1:8081/metrics): the run's
                                      cost, runner-seconds busy and idle and requested core-seconds
  --report DIR                        default loadtest-report-<id>
  --no-plots                          no gnuplot
Targets (the exit status is 1 when one is missed):
  --max-queue-p50 D, --max-queue-p99 D   queued -> running
  --max-gone-p99 D                    completed -> Runner gone
  --min-jobs-per-s X, --max-writes-per-job X, --max-github-calls-per-job X, --max-rss-mib X

Exit status: 0 every target met; 1 a target missed; 2 bad input, or the cluster, the simulator or the
manager unusable (nothing is left behind); 3 the jobs did not complete within --timeout; 130 interrupted.
)";
}

expected<options, std::string> parse_options(int argc, const char* const* argv) {
  options o;
  using setter = std::function<std::optional<std::string>(std::string_view)>;  // error or nullopt
  auto text = [](std::string& field) {
    return setter([&field](std::string_view v) -> std::optional<std::string> {
      if (v.empty()) return "must not be empty";
      field = std::string(v);
      return std::nullopt;
    });
  };
  auto list = [](std::vector<std::string>& field) {
    return setter([&field](std::string_view v) -> std::optional<std::string> {
      field.emplace_back(v);
      return std::nullopt;
    });
  };
  auto integer = [](auto& field, long long min) {
    return setter([&field, min](std::string_view v) -> std::optional<std::string> {
      long long n = 0;
      auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
      if (ec != std::errc() || end != v.data() + v.size() || n < min)
        return "want an integer of at least " + std::to_string(min);
      field = static_cast<std::remove_reference_t<decltype(field)>>(n);
      return std::nullopt;
    });
  };
  auto positive = [](double& field) {
    return setter([&field](std::string_view v) -> std::optional<std::string> {
      auto n = number(v);
      if (!n || *n <= 0) return "want a positive number";
      field = *n;
      return std::nullopt;
    });
  };
  auto limit = [](std::optional<double>& field, bool is_duration) {
    return setter([&field, is_duration](std::string_view v) -> std::optional<std::string> {
      if (is_duration) {
        auto d = parse_duration(v);
        if (!d) return d.error();
        field = static_cast<double>(d->count()) / 1000;
      } else {
        auto n = number(v);
        if (!n || *n < 0) return "want a number";
        field = *n;
      }
      return std::nullopt;
    });
  };
  auto duration = [](std::chrono::milliseconds& field) {
    return setter([&field](std::string_view v) -> std::optional<std::string> {
      auto d = parse_duration(v);
      if (!d) return d.error();
      field = *d;
      return std::nullopt;
    });
  };
  auto choice = [](std::string& field, std::vector<std::string> allowed) {
    return setter([&field, allowed](std::string_view v) -> std::optional<std::string> {
      for (const auto& a : allowed)
        if (v == a) {
          field = a;
          return std::nullopt;
        }
      std::string all;
      for (const auto& a : allowed) all += (all.empty() ? "" : ", ") + a;
      return "want one of " + all;
    });
  };
  // --profile's names, each for its shape (the flag's choices and the shape chosen).
  const std::vector<std::pair<std::string, profile::kind>> profiles = {
      {"burst", profile::kind::burst},
      {"steady", profile::kind::steady},
      {"ramp", profile::kind::ramp},
      {"workday", profile::kind::workday},
      {"workday-poisson", profile::kind::workday_poisson},
      {"poisson", profile::kind::poisson},
      {"bursts", profile::kind::bursts}};
  std::vector<std::string> profile_names;
  for (const auto& [name, shape] : profiles) profile_names.push_back(name);
  std::string profile_name = "burst", distribution_text = "fixed:0s", runner_start_text = "fixed:0s",
              image_cache_text;
  std::map<std::string, setter, std::less<>> value_flags = {
      {"kubeconfig", text(o.kubeconfig)},
      {"context", text(o.context)},
      {"namespace", text(o.ns)},
      {"intake", choice(o.intake, {"Webhook", "Listener"})},
      {"min-runners", integer(o.min_runners, 0)},
      {"start-time-target", integer(o.start_time_target_s, 1)},
      {"max-runners", integer(o.max_runners, 1)},
      {"runner-image", text(o.runner_image)},
      {"runner-cpu", text(o.runner_cpu)},
      {"runner-memory", text(o.runner_memory)},
      {"node-selector", list(o.node_selector)},
      {"toleration", list(o.tolerations)},
      {"image-cache", choice(image_cache_text, {"per-node", "off"})},
      {"simulator-url", text(o.simulator_url)},
      {"simulator-bind", text(o.simulator_bind)},
      {"simulator-port", integer(o.simulator_port, 0)},
      {"simulator-advertise", text(o.simulator_advertise)},
      {"webhook-url", text(o.webhook_url)},
      {"webhook-secret", text(o.webhook_secret)},
      {"profile", choice(profile_name, profile_names)},
      {"jobs", integer(o.load.jobs, 1)},
      {"rate", positive(o.load.rate)},
      {"rate-from", positive(o.load.rate_from)},
      {"rate-to", positive(o.load.rate_to)},
      {"duration", duration(o.load.duration)},
      {"every", duration(o.load.every)},
      {"job-duration", text(distribution_text)},
      {"runner-start", text(runner_start_text)},
      {"seed", integer(o.seed, 0)},
      {"timeout", duration(o.timeout)},
      {"manager-timeout", duration(o.manager_timeout)},
      {"warm-up-timeout", duration(o.warm_up_timeout)},
      {"cleanup-timeout", duration(o.cleanup_timeout)},
      {"manager-pid", integer(o.manager_pid, 1)},
      {"manager-user", text(o.manager_user)},
      {"manager-metrics", text(o.manager_metrics)},
      {"count-priority-level", text(o.count_priority_level)},
      {"report", text(o.report_dir)},
      {"max-queue-p50", limit(o.want.max_queue_p50_s, true)},
      {"max-queue-p99", limit(o.want.max_queue_p99_s, true)},
      {"max-gone-p99", limit(o.want.max_gone_p99_s, true)},
      {"min-jobs-per-s", limit(o.want.min_jobs_per_s, false)},
      {"max-writes-per-job", limit(o.want.max_writes_per_job, false)},
      {"max-github-calls-per-job", limit(o.want.max_github_calls_per_job, false)},
      {"max-rss-mib", limit(o.want.max_rss_mib, false)},
  };
  std::map<std::string, bool*, std::less<>> switches = {{"help", &o.help},
                                                        {"allow-test-suite", &o.allow_test_suite}};
  bool no_plots = false;
  switches["no-plots"] = &no_plots;

  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (!arg.starts_with("--"))
      return unexpected{"unexpected argument " + std::string(arg) + " (see --help)"};
    arg.remove_prefix(2);
    std::string_view name = arg.substr(0, arg.find('='));
    std::optional<std::string_view> value;
    if (arg.find('=') != std::string_view::npos) value = arg.substr(arg.find('=') + 1);
    if (auto sw = switches.find(name); sw != switches.end()) {
      if (value) return unexpected{"--" + std::string(name) + " takes no value"};
      *sw->second = true;
      continue;
    }
    auto flag = value_flags.find(name);
    if (flag == value_flags.end()) return unexpected{"unknown flag --" + std::string(name) + " (see --help)"};
    if (!value) {
      if (i + 1 >= argc) return unexpected{"--" + std::string(name) + " needs a value"};
      value = argv[++i];
    }
    if (auto error = flag->second(*value))
      return unexpected{"--" + std::string(name) + " " + std::string(*value) + ": " + *error};
  }
  o.plots = !no_plots;
  o.per_node_image_cache =
      image_cache_text.empty() ? !o.node_selector.empty() : image_cache_text == "per-node";
  for (const auto& [name, shape] : profiles)
    if (name == profile_name) o.load.shape = shape;
  auto d = parse_distribution(distribution_text);
  if (!d) return unexpected{"--job-duration " + distribution_text + ": " + d.error()};
  o.durations = *d;
  auto start_delay = parse_distribution(runner_start_text);
  if (!start_delay) return unexpected{"--runner-start " + runner_start_text + ": " + start_delay.error()};
  o.runner_start = *start_delay;
  if (o.simulator_port > 65535) return unexpected{std::string("--simulator-port: want a port number")};
  if (o.min_runners > o.max_runners)
    return unexpected{std::string("--min-runners must not exceed --max-runners")};
  if (o.intake == "Webhook" && !o.help && (o.webhook_url.empty() || o.webhook_secret.empty()))
    return unexpected{std::string(
        "--intake Webhook needs --webhook-url (the manager's POST /webhook as the simulator reaches it) and "
        "--webhook-secret (the secret the manager checks); or use --intake Listener")};
  if (o.load.shape != profile::kind::burst && o.load.duration.count() == 0)
    return unexpected{std::string("--duration must be more than 0 for --profile ") + profile_name};
  if (o.load.shape == profile::kind::bursts && o.load.every.count() == 0)
    return unexpected{std::string("--every must be more than 0 for --profile bursts")};
  if ((o.load.shape == profile::kind::workday || o.load.shape == profile::kind::workday_poisson) &&
      o.load.duration > max_workday_duration)
    return unexpected{"--duration: --profile " + profile_name + " compresses a working day into at most 30m"};
  if (!is_quantity(o.runner_cpu))
    return unexpected{"--runner-cpu " + o.runner_cpu + ": want a quantity such as 500m or 2"};
  if (!is_quantity(o.runner_memory))
    return unexpected{"--runner-memory " + o.runner_memory + ": want a quantity such as 512Mi or 4Gi"};
  for (const auto& s : o.node_selector)
    if (s.find('=') == std::string::npos || s.front() == '=')
      return unexpected{"--node-selector " + s + ": want KEY=VALUE"};
  for (const auto& t : o.tolerations)
    if (t.find(':') == std::string::npos || t.front() == ':' || t.front() == '=')
      return unexpected{"--toleration " + t + ": want KEY[=VALUE]:EFFECT or KEY:Exists"};
  return o;
}

}  // namespace octorun::loadtest
