// The manager's command line: a pure parse from the arguments to options or
// one sentence naming the bad flag (main exits 2 with it).
#include "cmd/octorun/options.hpp"

#include <gtest/gtest.h>

#include <chrono>

#include "adapters/kube/politeness.hpp"
#include "cmd/octorun/stop_manager.hpp"

namespace octorun::manager {
namespace {

using args = std::vector<std::string>;

options parsed(const args& a) {
  auto o = parse_options(a);
  EXPECT_TRUE(o) << o.error();
  return o ? *o : options{};
}

std::string error_of(const args& a) {
  auto o = parse_options(a);
  EXPECT_FALSE(o) << "parsed: " << a.front();
  return o ? std::string() : o.error();
}

TEST(Options, DefaultsAreSafe) {
  auto o = parsed({});
  EXPECT_TRUE(o.namespaces.empty());
  EXPECT_TRUE(o.webhook_intake);
  EXPECT_TRUE(o.leader_elect);
  EXPECT_EQ(o.kube_qps, 0);  // no client-side limit: the apiserver's APF
  EXPECT_EQ(o.kube_burst, 100);
  EXPECT_EQ(o.github_workers, 2);
  EXPECT_EQ(o.webhook_port, 8080);
  EXPECT_TRUE(o.github_ca_file.empty());
}

TEST(Options, TakesFlagEqualsValueAndFlagSpaceValue) {
  auto joined = parsed({"--kubeconfig=/k", "--health-port=0", "--context=c"});
  auto spaced = parsed({"--kubeconfig", "/k", "--health-port", "0", "--context", "c"});
  EXPECT_EQ(joined.kubeconfig, "/k");
  EXPECT_EQ(spaced.kubeconfig, "/k");
  EXPECT_EQ(joined.health_port, 0);
  EXPECT_EQ(spaced.health_port, 0);
  EXPECT_EQ(spaced.context, "c");
}

TEST(Options, NamespacesIsAListAndNamespaceItsOneItemAlias) {
  EXPECT_EQ(parsed({"--namespaces=a,b,c"}).namespaces, (args{"a", "b", "c"}));
  EXPECT_EQ(parsed({"--namespaces", "a,,b"}).namespaces, (args{"a", "b"}));
  EXPECT_EQ(parsed({"--namespace=team-a"}).namespaces, (args{"team-a"}));
  EXPECT_TRUE(parsed({"--namespaces="}).namespaces.empty());  // every namespace
  EXPECT_EQ(error_of({"--namespaces=a,Team_B"}), "--namespaces: 'Team_B' is not a namespace name");
}

TEST(Options, BoolsAloneAreTrueAndTakeAnExplicitValue) {
  EXPECT_TRUE(parsed({"--admission"}).admission);
  EXPECT_FALSE(parsed({"--webhook-intake=false"}).webhook_intake);
  EXPECT_FALSE(parsed({"--webhook-intake", "false"}).webhook_intake);
  EXPECT_FALSE(parsed({"--leader-elect=0"}).leader_elect);
  // A bool alone does not swallow the next flag.
  auto o = parsed({"--admission", "--kube-qps", "5"});
  EXPECT_TRUE(o.admission);
  EXPECT_EQ(o.kube_qps, 5);
}

TEST(Options, PoliteAndTrustFlags) {
  auto o = parsed({"--kube-qps=12.5", "--kube-burst=30", "--github-ca-file=/etc/ghes/ca.pem"});
  EXPECT_EQ(o.kube_qps, 12.5);
  EXPECT_EQ(o.kube_burst, 30);
  EXPECT_EQ(o.github_ca_file, "/etc/ghes/ca.pem");
  EXPECT_EQ(parsed({"--kube-qps=0"}).kube_qps, 0);  // no limit
  EXPECT_EQ(parsed({"--github-workers", "6"}).github_workers, 6);
}

TEST(Options, EveryBadFlagGetsOneSentenceNamingIt) {
  EXPECT_EQ(error_of({"--bogus=1"}), "unknown flag --bogus (octorun --help lists the flags)");
  EXPECT_EQ(error_of({"--kubeconfig"}),
            "--kubeconfig needs a value (--kubeconfig=VALUE or --kubeconfig VALUE)");
  EXPECT_EQ(error_of({"--kubeconfig", "--namespace=a"}),
            "--kubeconfig needs a value (--kubeconfig=VALUE or --kubeconfig VALUE)");
  EXPECT_EQ(error_of({"--kube-qps=fast"}), "--kube-qps: 'fast' is not a number");
  EXPECT_EQ(error_of({"--health-port=8081x"}), "--health-port: '8081x' is not a number");
  EXPECT_EQ(error_of({"--webhook-port=70000"}), "--webhook-port: 70000 is out of range");
  EXPECT_EQ(error_of({"--kube-burst=0"}), "--kube-burst: 0 is too small (at least 1)");
  EXPECT_EQ(error_of({"--github-workers=0"}), "--github-workers: 0 is too small (at least 1)");
  EXPECT_EQ(error_of({"--kube-qps=-1"}), "--kube-qps: -1 is too small (at least 0)");
  EXPECT_EQ(error_of({"--webhook-intake=maybe"}), "--webhook-intake: 'maybe' is not true or false");
  EXPECT_EQ(error_of({"--log-format=xml"}), "--log-format: 'xml' is not json or text");
  EXPECT_EQ(error_of({"stray"}),
            "unexpected argument 'stray' (flags start with --; octorun --help lists them)");
}

// An item of --github-http-hosts that could never match a scope's host is
// refused at startup, naming the flag, rather than doing nothing.
TEST(Options, GithubHttpHostsAreTrimmedHostsWithoutSchemeOrPort) {
  auto o = parsed({"--github-http-hosts=127.0.0.1, ghes.local ,[::1]"});
  EXPECT_EQ(comma_list(o.github_http_hosts), (std::vector<std::string>{"127.0.0.1", "ghes.local", "[::1]"}));
  for (const char* bad : {"--github-http-hosts=a,,b", "--github-http-hosts=a, ,b", "--github-http-hosts=a,"})
    EXPECT_EQ(error_of({bad}).find("--github-http-hosts: an empty item"), 0u) << bad;
  EXPECT_EQ(
      error_of({"--github-http-hosts=ghes.local:8080"}),
      "--github-http-hosts: 'ghes.local:8080' has a port; give the host alone (any port of it is allowed)");
  EXPECT_EQ(error_of({"--github-http-hosts=http://ghes.local"}),
            "--github-http-hosts: 'http://ghes.local' is a URL; give the host alone (e.g. ghes.example.com)");
  EXPECT_TRUE(parse_options({"--github-http-hosts="}));
}

TEST(Options, CafSettingsPassThroughNormalised) {
  auto o = parsed({"--scheduler.max-threads", "2", "--caf.logger.verbosity=quiet", "--config-file=x.ini"});
  EXPECT_EQ(o.caf_args,
            (args{"--scheduler.max-threads=2", "--caf.logger.verbosity=quiet", "--config-file=x.ini"}));
}

TEST(Options, HelpAndVersion) {
  EXPECT_TRUE(parsed({"--help"}).help);
  EXPECT_TRUE(parsed({"-h"}).help);
  EXPECT_TRUE(parsed({"--version"}).version);
  const auto help = help_text();
  for (const char* flag :
       {"--namespaces", "--namespace", "--webhook-intake (default: true)", "--kube-qps (default: 0)",
        "--kube-burst (default: 100)", "--github-ca-file", "--version"})
    EXPECT_NE(help.find(flag), std::string::npos) << flag;
}

// The token bucket the manager builds from --kube-qps/--kube-burst
// (manager::kube_limiter): the burst goes at once, then one request per 1/qps.
TEST(Options, KubeQpsAndBurstBoundTheRequestRate) {
  auto o = parsed({"--kube-qps=50", "--kube-burst=100"});
  auto now = std::chrono::steady_clock::time_point{};
  kube::token_bucket bucket(o.kube_qps, o.kube_burst, [&] { return now; });
  for (int i = 0; i < 100; ++i) ASSERT_EQ(bucket.reserve().count(), 0) << i;
  const auto ms = [](std::chrono::nanoseconds d) {
    return std::chrono::duration<double, std::milli>(d).count();
  };
  EXPECT_NEAR(ms(bucket.reserve()), 20.0, 0.001);  // the 101st waits 1/50 s
  EXPECT_NEAR(ms(bucket.reserve()), 40.0, 0.001);  // and the next queues behind it
  now += std::chrono::seconds(10);                 // refills, up to the burst
  for (int i = 0; i < 100; ++i) ASSERT_EQ(bucket.reserve().count(), 0) << i;
  EXPECT_GT(bucket.reserve().count(), 0);
}

// `octorun stop-manager`, the chart's pre-delete hook: what the chart passes
// is read; anything else is a clear error (exit 2 before any call).
TEST(StopManager, TakesWhatTheChartPassesAndRefusesTheRest) {
  auto o = parse_stop_manager({"--namespace=octorun-system", "--deployment=octorun-manager",
                               "--selector=app.kubernetes.io/instance=octorun", "--timeout-seconds=60"});
  ASSERT_TRUE(o) << o.error();
  EXPECT_EQ(o->ns, "octorun-system");
  EXPECT_EQ(o->deployment, "octorun-manager");
  EXPECT_EQ(o->selector, "app.kubernetes.io/instance=octorun");
  EXPECT_EQ(o->timeout_seconds, 60);
  EXPECT_EQ(parse_stop_manager({"--namespace=x"}).error(),
            "stop-manager: --namespace, --deployment and --selector are required");
  EXPECT_EQ(
      parse_stop_manager({"--namespace=x", "--deployment=y", "--selector=z", "--timeout-seconds=0"}).error(),
      "stop-manager: --timeout-seconds takes a positive whole number, got '0'");
  EXPECT_EQ(
      parse_stop_manager({"--namespace=x", "--deployment=y", "--selector=z", "--timeout-seconds=5s"}).error(),
      "stop-manager: --timeout-seconds takes a positive whole number, got '5s'");
  EXPECT_EQ(parse_stop_manager({"--replicas=0"}).error(), "stop-manager: unknown flag --replicas");
  EXPECT_EQ(parse_stop_manager({"namespace"}).error(),
            "stop-manager: expected --name=value, got 'namespace'");
}

}  // namespace
}  // namespace octorun::manager
