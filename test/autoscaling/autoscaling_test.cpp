// Autoscaling a RunnerSet through custom metrics, end to end, every part
// real (autoscaling_environment.hpp): the octorun binary against a control
// plane of its own, the GitHub simulator, Prometheus, prometheus-adapter with
// the chart's rules, and the chart's HPA template.
//
// One process runs every test, in order, on one environment (a private
// cluster: an APIService is cluster-wide, and a stopped adapter makes
// discovery fail for everyone).
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <set>
#include <sstream>

#include "common/json.hpp"
#include "test/autoscaling/autoscaling_environment.hpp"
#include "test/chart/helm.hpp"
#include "test/support/test_cluster.hpp"
#include "test/support/wait.hpp"
#include "test/support/wiring.hpp"

namespace octorun {
namespace {

using namespace std::chrono_literals;
using namespace test::autoscaling;

// ---- small helpers ------------------------------------------------------------

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

double seconds_since(clock_type::time_point t0, clock_type::time_point t) {
  return std::chrono::duration<double>(t - t0).count();
}

// Set up once for the whole process; a failure here fails every test with it.
environment* env = nullptr;
std::string setup_error;

class Autoscaling : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    env = new environment();
    try {
      set_up(*env);
    } catch (const std::exception& ex) {
      setup_error = ex.what();
    }
  }
  static void TearDownTestSuite() {
    if (env == nullptr) return;
    // The APIService first: without its server, discovery fails cluster-wide.
    if (env->c != nullptr) env->try_kubectl("delete apiservice v1beta1.custom.metrics.k8s.io --wait=false");
    env->adapter.reset();
    env->prometheus.reset();
    env->manager.reset();
    env->watch.reset();
    if (!env->dir.empty() && !::testing::UnitTest::GetInstance()->Failed())
      std::filesystem::remove_all(env->dir);
    else if (!env->dir.empty())
      std::cerr << "autoscaling test: logs and configuration kept in " << env->dir << "\n";
    delete env;
    env = nullptr;
  }
  void SetUp() override { ASSERT_TRUE(setup_error.empty()) << "setting up: " << setup_error; }

  environment& e() { return *env; }

  // The HPA the chart renders for `name` (the template users deploy), applied in `ns`.
  void apply_chart_hpa(const std::string& name, const std::string& ns, double target_busy_ratio,
                       int scale_down_seconds, int max_replicas = 10) {
    std::ostringstream values;
    values << "--set-json "
           << test::shell_quote("autoscaling.runnerSets=[{\"name\":\"" + name + "\",\"namespace\":\"" + ns +
                                "\",\"minReplicas\":1,\"maxReplicas\":" + std::to_string(max_replicas) +
                                ",\"targetBusyRatio\":" + std::to_string(target_busy_ratio) +
                                ",\"scaleDownStabilizationSeconds\":" + std::to_string(scale_down_seconds) +
                                "}]");
    auto rendered = test::render(values.str());
    ASSERT_EQ(rendered.result.status, 0) << rendered.result.all();
    auto hpa = rendered.find("HorizontalPodAutoscaler", name);
    ASSERT_TRUE(hpa);
    YAML::Emitter out;
    out << *hpa;
    e().kubectl("apply -f - >/dev/null <<'EOF'\n" + std::string(out.c_str()) + "\nEOF");
  }

  // A RunnerSet as test::create_runnerset makes it, started at spec.replicas 1.
  void create_set(const std::string& ns, int max_runners) {
    test::create_runnerset(*e().c, ns, e().sim->ghes_url() + "/acme", 0, max_runners);
    e().kubectl("-n " + ns + " patch runnerset " + set_name +
                " --type=merge -p '{\"spec\":{\"replicas\":1}}' >/dev/null");
  }

  // The adapter's answer for `metric` of a RunnerSet, through the API server.
  test::command_result raw_metric(const std::string& ns, const std::string& set, const std::string& metric) {
    return e().try_kubectl("get --raw /apis/custom.metrics.k8s.io/v1beta1/namespaces/" + ns +
                           "/runnersets.octorun.io/" + set + "/" + metric);
  }
  // Its value ("" when it cannot be read).
  std::string metric_value(const std::string& ns, const std::string& set, const std::string& metric) {
    auto r = raw_metric(ns, set, metric);
    if (r.status != 0) return {};
    rapidjson::Document d;
    d.Parse(r.output.c_str());
    if (d.HasParseError() || !d.IsObject()) return {};
    const auto* items = json::find_value(d, "items");
    if (items == nullptr || !items->IsArray() || items->Empty()) return {};
    return json::str((*items)[0], "value");
  }

  std::string hpa_condition(const std::string& name, const std::string& type, const std::string& ns = "") {
    return e().get("hpa " + name + " -o jsonpath='{.status.conditions[?(@.type==\"" + type +
                       "\")].status}/{.status.conditions[?(@.type==\"" + type + "\")].reason}'",
                   ns);
  }
  std::string replicas(const std::string& ns = "") {
    return e().get("runnerset " + set_name + " -o jsonpath='{.spec.replicas}'", ns);
  }
  std::string context() { return e().get("hpa -o yaml") + e().logs(); }
};

// ---- the HPA scales a RunnerSet on its busy runners -------------------------------

TEST_F(Autoscaling, TheHpaRaisesReplicasFromTheMetricAndLowersThemAfterTheLoad) {
  auto& x = e();
  create_set(x.ns, 10);
  EXPECT_EQ(x.get("runnerset " + set_name + " --subresource=scale -o jsonpath='{.spec.replicas}'"), "1");
  // busy_runners per runner 0.5: replicas = 2 × busy runners. Scale-down
  // after 5 s of lower recommendations (the chart's default is 300 s).
  apply_chart_hpa(set_name, x.ns, 0.5, 5);
  // The adapter has listed the set's series and the HPA reads them.
  test::wait_for_value([&] { return metric_value(x.ns, set_name, "busy_runners"); }, std::string("0"), 60s,
                       "the adapter's busy_runners of the idle set", [&] { return context(); });
  test::wait_for_value([&] { return hpa_condition(set_name, "ScalingActive"); },
                       std::string("True/ValidMetricFound"), 60s, "the HPA to read the metric",
                       [&] { return context(); });
  EXPECT_EQ(replicas(), "1");

  // Load: four jobs of 30 s. Demand brings four runners; once they run the
  // jobs, busy_runners is 4 and the HPA wants 8 (a floor: 4 idle on top).
  const auto load_start = clock_type::now();
  auto jobs = test::queue_jobs(*x.sim, 4, 30s);
  auto up =
      test::wait_for([&] { return replicas(); }, [](const std::string& r) { return r != "1" && !r.empty(); },
                     60s, "the HPA to raise spec.replicas", [&] { return context(); });
  const auto replicas_up = clock_type::now();
  ASSERT_TRUE(up.met);
  // What the HPA read, through the aggregation layer.
  auto busy = metric_value(x.ns, set_name, "busy_runners");
  EXPECT_TRUE(busy == "4" || busy == "3" || busy == "2" || busy == "1") << busy;
  auto raw = raw_metric(x.ns, set_name, "busy_runners");
  EXPECT_NE(raw.output.find("\"kind\":\"MetricValueList\""), std::string::npos) << raw.all();
  EXPECT_NE(raw.output.find("\"describedObject\":{\"kind\":\"RunnerSet\",\"namespace\":\"" + x.ns +
                            "\",\"name\":\"" + set_name + "\",\"apiVersion\":\"octorun.io/v1alpha1\"}"),
            std::string::npos)
      << raw.all();
  test::wait_for_value([&] { return replicas(); }, std::string("8"), 60s,
                       "spec.replicas at 2 × 4 busy runners", [&] { return context(); });
  const auto replicas_full = clock_type::now();
  // A floor under demand: eight runners, four with the jobs, four idle.
  test::wait_for_value(
      [&] {
        return x.get("runnerset " + set_name + " -o jsonpath='{.status.desiredReplicas} {.status.replicas}'");
      },
      std::string("8 8"), 60s, "eight runners", [&] { return context(); });
  EXPECT_EQ(metric_value(x.ns, set_name, "assigned_jobs"), "4");

  ASSERT_TRUE(test::all_completed(*x.sim, jobs, 90s)) << context();
  const auto load_end = clock_type::now();
  test::wait_for_value([&] { return replicas(); }, std::string("1"), 90s,
                       "the HPA to lower spec.replicas to 1", [&] { return context(); });
  const auto replicas_down = clock_type::now();
  EXPECT_EQ(metric_value(x.ns, set_name, "busy_runners"), "0");
  EXPECT_EQ(metric_value(x.ns, set_name, "busy_ratio"), "0");
  test::wait_for_value(
      [&] { return x.get("runnerset " + set_name + " -o jsonpath='{.status.desiredReplicas}'"); },
      std::string("1"), 60s, "one runner wanted", [&] { return context(); });

  std::ostringstream timeline;
  timeline << "load start 0 s; spec.replicas raised " << seconds_since(load_start, replicas_up)
           << " s (at 8: " << seconds_since(load_start, replicas_full) << " s); load end "
           << seconds_since(load_start, load_end) << " s; spec.replicas back to 1 "
           << seconds_since(load_start, replicas_down) << " s (" << seconds_since(load_end, replicas_down)
           << " s after the load)";
  std::cout << "autoscaling timeline: " << timeline.str() << "\n";
  RecordProperty("timeline", timeline.str());
}

// ---- the dashboard and the alerts read what the manager exports --------------------

// The metric names a PromQL expression reads: identifiers that are not
// functions, keywords, label names (inside {} or by/on/... lists) or durations.
std::set<std::string> metric_names(std::string expr) {
  // Grafana's variables first: $__rate_interval sits where a duration does.
  expr = std::regex_replace(expr, std::regex(R"(\$\{?[A-Za-z_][A-Za-z0-9_]*(:[a-z]+)?\}?)"), "x");
  expr = std::regex_replace(expr, std::regex(R"("([^"\\]|\\.)*")"), "\"\"");
  expr = std::regex_replace(expr, std::regex(R"(\{[^}]*\})"), " ");
  expr = std::regex_replace(expr, std::regex(R"(\[[^\]]*\])"), " ");
  expr = std::regex_replace(
      expr, std::regex(R"(\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\))"), " ");
  static const std::set<std::string> keywords = {"and",         "or",      "unless", "bool",     "offset",
                                                 "by",          "without", "on",     "ignoring", "group_left",
                                                 "group_right", "inf",     "nan"};
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':'; };
  std::set<std::string> out;
  for (std::size_t i = 0; i < expr.size();) {
    const bool starts =
        (std::isalpha(static_cast<unsigned char>(expr[i])) || expr[i] == '_' || expr[i] == ':') &&
        (i == 0 || (!word(expr[i - 1]) && expr[i - 1] != '.'));
    if (!starts) {
      ++i;
      continue;
    }
    auto end = i;
    while (end < expr.size() && word(expr[end])) ++end;
    const auto name = expr.substr(i, end - i);
    auto next = end;
    while (next < expr.size() && std::isspace(static_cast<unsigned char>(expr[next]))) ++next;
    const bool function = next < expr.size() && expr[next] == '(';
    if (!function && keywords.count(name) == 0) out.insert(name);
    i = end;
  }
  return out;
}

// The families of a scrape, with a histogram's _bucket, _sum and _count.
std::set<std::string> exported_names(const std::string& scrape) {
  std::set<std::string> out;
  std::istringstream in(scrape);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (!std::regex_match(line, m, std::regex(R"(# TYPE (\S+) (\S+))"))) continue;
    out.insert(m[1]);
    if (m[2] == "histogram" || m[2] == "summary")
      for (const char* suffix : {"_bucket", "_sum", "_count"}) out.insert(m[1].str() + suffix);
  }
  return out;
}

void collect_exprs(const rapidjson::Value& panels, std::vector<std::string>& out) {
  if (!panels.IsArray()) return;
  for (const auto& p : panels.GetArray()) {
    if (const auto* targets = json::find_value(p, "targets"); targets != nullptr && targets->IsArray())
      for (const auto& t : targets->GetArray()) out.push_back(json::str(t, "expr"));
    if (const auto* nested = json::find_value(p, "panels")) collect_exprs(*nested, out);
  }
}

TEST_F(Autoscaling, TheDashboardQueriesOnlyFamiliesTheManagerExportsAndPrometheusAcceptsThem) {
  auto& x = e();
  const auto families = exported_names(http_get(x.metrics_url));
  ASSERT_GT(families.size(), 20u);
  rapidjson::Document d;
  const auto text = read_file(deploy + "/monitoring/grafana-dashboard.json");
  d.Parse(text.c_str());
  ASSERT_FALSE(d.HasParseError());
  std::vector<std::string> exprs;
  collect_exprs(d["panels"], exprs);
  // Template variables: label_values(METRIC, LABEL) is Grafana's, not PromQL.
  for (const auto& v : d["templating"]["list"].GetArray())
    if (const auto* q = json::find_value(v, "query"); q != nullptr && q->IsObject()) {
      std::smatch m;
      const std::string query = json::str(*q, "query");
      ASSERT_TRUE(std::regex_match(query, m, std::regex(R"(label_values\((\w+), *(\w+)\))"))) << query;
      EXPECT_TRUE(families.count(m[1]) > 0) << "variable query " << query << " reads " << m[1];
    }
  ASSERT_GT(exprs.size(), 20u);
  for (const auto& expr : exprs) {
    const auto names = metric_names(expr);
    EXPECT_FALSE(names.empty()) << expr;
    for (const auto& name : names) EXPECT_TRUE(families.count(name) > 0) << name << " in " << expr;
    // Prometheus parses and runs it (variables as Grafana substitutes them).
    auto promql = std::regex_replace(expr, std::regex(R"(\$__rate_interval)"), "1m");
    promql = std::regex_replace(promql, std::regex(R"(\$runnerset)"), ".*");
    EXPECT_NE(x.query(promql).find("\"status\":\"success\""), std::string::npos) << promql;
  }
}

TEST_F(Autoscaling, PrometheusLoadedEveryAlertAndTheyReadExportedFamilies) {
  auto& x = e();
  const auto families = exported_names(http_get(x.metrics_url));
  const auto rules = http_get(x.prometheus_url() + "/api/v1/rules");
  rapidjson::Document d;
  d.Parse(rules.c_str());
  ASSERT_FALSE(d.HasParseError()) << rules;
  std::set<std::string> alerts;
  for (const auto& g : d["data"]["groups"].GetArray())
    for (const auto& r : g["rules"].GetArray()) {
      alerts.insert(json::str(r, "name"));
      EXPECT_EQ(json::str(r, "health"), "ok") << json::str(r, "name") << ": " << json::str(r, "lastError");
      for (const auto& name : metric_names(json::str(r, "query"))) {
        // The admission alert reads the API server's own metrics.
        if (name.starts_with("apiserver_admission_webhook_")) continue;
        EXPECT_TRUE(families.count(name) > 0) << name << " in " << json::str(r, "name");
      }
    }
  EXPECT_EQ(alerts, (std::set<std::string>{"OctorunRunnerStuckStarting", "OctorunJobsQueuedWithoutCapacity",
                                           "OctorunListenerSessionDown",
                                           "OctorunGitHubRateLimitNearlyExhausted", "OctorunNoLeader",
                                           "OctorunAdmissionWebhookFailing", "OctorunJobStartTargetBreached",
                                           "OctorunRunnerVersionStale", "OctorunRunnerVersionDeprecated"}));
}

// ---- bad input: the HPA says what is wrong, nothing scales to zero -----------------

TEST_F(Autoscaling, AMetricOfARunnerSetThatDoesNotExistIsNotFoundAndItsHpaSaysSo) {
  auto& x = e();
  auto r = raw_metric(x.ns, "no-such-set", "busy_runners");
  EXPECT_NE(r.status, 0) << r.all();
  EXPECT_NE(r.errors.find("NotFound"), std::string::npos) << r.all();
  apply_chart_hpa("no-such-set", x.ns, 0.5, 5);
  test::wait_for_value([&] { return hpa_condition("no-such-set", "AbleToScale"); },
                       std::string("False/FailedGetScale"), 60s, "the HPA of a missing set to say so",
                       [&] { return context(); });
  x.kubectl("-n " + x.ns + " delete hpa no-such-set >/dev/null");
}

TEST_F(Autoscaling, AnHpaOnASetWithoutAValidSelectorSaysSoAndScalesNothing) {
  auto& x = e();
  // Sets the manager does not watch, so it never writes their status: one
  // without a selector, one whose selector someone set to garbage. (An HPA
  // backs off exponentially while its target fails, so each gets its own.)
  auto condition = [&](const std::string& ns, const std::string& type) {
    const auto c = "{.status.conditions[?(@.type==\"" + type + "\")]";
    return x.get("hpa " + set_name + " -o jsonpath='" + c + ".status}/" + c + ".reason}: " + c + ".message}'",
                 ns);
  };
  const auto missing = test::make_namespace(*x.c, "no-selector");
  create_set(missing, 10);
  const auto garbage = test::make_namespace(*x.c, "bad-selector");
  create_set(garbage, 10);
  x.kubectl(
      "-n " + garbage + " patch runnerset " + set_name +
      " --subresource=status --type=merge -p '{\"status\":{\"selector\":\"octorun.io/runnerset in (\"}}' "
      ">/dev/null");
  apply_chart_hpa(set_name, missing, 0.5, 5);
  apply_chart_hpa(set_name, garbage, 0.5, 5);
  test::wait_for_value([&] { return condition(missing, "ScalingActive"); },
                       std::string("False/InvalidSelector: the HPA target's scale is missing a selector"),
                       60s, "the HPA to report the missing selector",
                       [&] { return x.get("hpa -o yaml", missing); });
  // The HPA's scale client refuses to read a scale whose selector does not parse.
  test::wait_for([&] { return condition(garbage, "AbleToScale"); },
                 [](const std::string& s) {
                   return s.starts_with("False/FailedGetScale: ") &&
                          s.find("failed to parse target selector") != std::string::npos;
                 },
                 60s, "the HPA to report the invalid selector",
                 [&] { return x.get("hpa -o yaml", garbage); });
  EXPECT_EQ(replicas(missing), "1") << "scaled although it cannot read its target";
  EXPECT_EQ(replicas(garbage), "1") << "scaled although it cannot read its target";
}

TEST_F(Autoscaling, WithTheAdapterDownTheHpaHoldsAndJobDemandIsStillServed) {
  auto& x = e();
  const auto before = replicas();
  ASSERT_NE(before, "0");
  x.adapter->stop(SIGTERM);
  test::wait_for_value([&] { return hpa_condition(set_name, "ScalingActive"); },
                       std::string("False/FailedGetObjectMetric"), 90s,
                       "the HPA to report the missing metric", [&] { return context(); });
  EXPECT_EQ(replicas(), before) << "scaled although it cannot read its metric";
  auto r = raw_metric(x.ns, set_name, "busy_runners");
  EXPECT_NE(r.status, 0) << r.all();
  // Demand alone sizes the set: five jobs get five runners and complete.
  auto jobs = test::queue_jobs(*x.sim, 5, 5s);
  test::wait_for_value(
      [&] { return x.get("runnerset " + set_name + " -o jsonpath='{.status.desiredReplicas}'"); },
      std::string("5"), 60s, "five runners wanted for five jobs", [&] { return context(); });
  EXPECT_TRUE(test::all_completed(*x.sim, jobs, 60s)) << context();
  EXPECT_EQ(replicas(), before);
  // Back up: the metric is served and read again.
  x.start_adapter();
  test::wait_for_value([&] { return metric_value(x.ns, set_name, "busy_runners"); }, std::string("0"), 90s,
                       "the adapter to serve the metric again", [&] { return context(); });
  test::wait_for_value([&] { return hpa_condition(set_name, "ScalingActive"); },
                       std::string("True/ValidMetricFound"), 60s, "the HPA to read its metric again",
                       [&] { return context(); });
}

}  // namespace
}  // namespace octorun
