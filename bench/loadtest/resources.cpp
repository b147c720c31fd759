#include "bench/loadtest/resources.hpp"

#include "actors/kinds.hpp"
#include "bench/common/apiserver_metrics.hpp"
#include "common/json.hpp"
#include "test/support/poll.hpp"

namespace octorun::loadtest {
namespace {

using namespace std::chrono_literals;

std::string labels_json(const std::string& id) {
  return std::string("{\"") + managed_by_label + "\":\"" + managed_by_value +
         "\",\"octorun.io/loadtest-run\":\"" + id + "\"}";
}

std::string toleration_json(const std::string& t) {
  auto colon = t.rfind(':');
  auto key_value = t.substr(0, colon), effect = t.substr(colon + 1);
  auto eq = key_value.find('=');
  std::string out = "{\"key\":" + json::quote(key_value.substr(0, eq));
  if (eq != std::string::npos)
    out += ",\"operator\":\"Equal\",\"value\":" + json::quote(key_value.substr(eq + 1));
  else
    out += ",\"operator\":\"Exists\"";
  if (effect != "Exists") out += ",\"effect\":" + json::quote(effect);
  return out + "}";
}

// Polls `done` until it holds, `within` passes or `abandon` is set (the
// apiserver offers no event for "all of these are gone").
bool eventually(const std::function<bool()>& done, std::chrono::milliseconds within,
                const std::atomic<bool>* abandon) {
  auto seen = test::poll([&] { return done()                                  ? 1
                                      : abandon != nullptr && abandon->load() ? 2
                                                                              : 0; },
                         [](int state) { return state != 0; }, within);
  return seen.last == 1;
}

}  // namespace

std::optional<std::string> busy_with_tests(kube::client& api) {
  kube::list_options l;
  l.label_selector = "octorun.io/test-suite";
  auto suites = api.list(kube::namespaces(), "", l);
  if (suites && !suites->items.empty()) {
    std::string names;
    for (size_t i = 0; i < suites->items.size() && i < 3; ++i)
      names += (i ? ", " : "") + std::string(suites->items[i].name);
    return "Octorun's test suite is running on this cluster (" + std::to_string(suites->items.size()) +
           " namespace(s) labelled octorun.io/test-suite: " + names +
           (suites->items.size() > 3 ? ", ..." : "") +
           "); a load test would disturb it and be disturbed by it";
  }
  auto schemas =
      api.list(bench::flow_schemas_resource, "");  // may be forbidden to this user: then not checked
  if (schemas)
    for (const auto& fs : schemas->items)
      if (fs.name.starts_with("octorun-bench-"))
        return "a benchmark (bench/manager or bench/floor) is using this cluster (FlowSchema " +
               std::string(fs.name) + ")";
  return std::nullopt;
}

run_resources::run_resources(kube::client& api, simulator_client& sim, const options& o, std::string run_id)
    : api_(api), sim_(sim), o_(o), id_(std::move(run_id)) {
  ns_ = o.ns.empty() ? "octorun-loadtest-" + id_ : o.ns;
  set_ = "loadtest-" + id_;
  secret_ = set_ + "-github";
  label_ = "loadtest-" + id_;
  org_ = "loadtest-" + id_;
  token_ = "ghp_loadtest" + id_;
}

run_resources::~run_resources() {
  if (!cleaned_) cleanup(o_.cleanup_timeout, {});
}

expected<ok_t, std::string> run_resources::prepare_simulator(const std::string& advertise_url) {
  if (auto r = sim_.add_organization(org_); !r) return r;
  if (auto r = sim_.add_pat(token_); !r) return r;
  if (o_.intake == "Webhook") {
    if (auto r = sim_.set_webhook(o_.webhook_url, o_.webhook_secret); !r) return r;
    webhook_set_ = true;
  }
  auto base = advertise_url;
  while (base.ends_with('/')) base.pop_back();
  scope_url_ = base + "/" + org_;
  return ok;
}

expected<ok_t, std::string> run_resources::prepare_namespace() {
  if (!o_.ns.empty()) {
    auto got = api_.get(kube::namespaces(), "", ns_);
    if (!got)
      return unexpected{"--namespace " + ns_ + ": " + kube::to_string(got.error()) +
                        " (give a namespace the manager watches, or none: the tool then creates one)"};
    return ok;
  }
  // Admitted as the chart's default tenantNamespaces.selector admits a
  // namespace: the manager writes nowhere else (docs/runner-classes.md).
  auto labels = labels_json(id_);
  labels.insert(labels.size() - 1, R"(,"octorun.io/tenant":"true")");
  auto created = api_.create(kube::namespaces(), "",
                             R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":)" +
                                 json::quote(ns_) + ",\"labels\":" + labels + "}}");
  if (!created) return unexpected{"creating namespace " + ns_ + ": " + kube::to_string(created.error())};
  created_ns_ = true;
  return ok;
}

expected<ok_t, std::string> run_resources::create_credentials() {
  auto created = api_.create(kinds::secrets(), ns_,
                             R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":)" +
                                 json::quote(secret_) + ",\"labels\":" + labels_json(id_) +
                                 R"(},"stringData":{"github_token":)" + json::quote(token_) + "}}");
  if (!created)
    return unexpected{"creating Secret " + ns_ + "/" + secret_ + ": " + kube::to_string(created.error())};
  created_secret_ = true;
  return ok;
}

expected<ok_t, std::string> run_resources::create_runnerset() {
  std::string pod_spec = R"({"containers":[{"name":"runner","image":)" + json::quote(o_.runner_image) +
                         R"(,"resources":{"requests":{"cpu":)" + json::quote(o_.runner_cpu) +
                         R"(,"memory":)" + json::quote(o_.runner_memory) + "}}}]";
  if (!o_.node_selector.empty()) {
    pod_spec += ",\"nodeSelector\":{";
    for (size_t i = 0; i < o_.node_selector.size(); ++i) {
      const auto& kv = o_.node_selector[i];
      auto eq = kv.find('=');
      pod_spec += (i ? "," : "") + json::quote(kv.substr(0, eq)) + ":" + json::quote(kv.substr(eq + 1));
    }
    pod_spec += "}";
  }
  if (!o_.tolerations.empty()) {
    pod_spec += ",\"tolerations\":[";
    for (size_t i = 0; i < o_.tolerations.size(); ++i)
      pod_spec += (i ? "," : "") + toleration_json(o_.tolerations[i]);
    pod_spec += "]";
  }
  pod_spec += "}";
  auto body = R"({"apiVersion":"octorun.io/v1alpha1","kind":"RunnerSet","metadata":{"name":)" +
              json::quote(set_) + ",\"labels\":" + labels_json(id_) + R"(},"spec":{"scopeURL":)" +
              json::quote(scope_url_) + R"(,"credentialsSecretName":)" + json::quote(secret_) +
              R"(,"intake":)" + json::quote(o_.intake) + R"(,"runnerLabels":[)" + json::quote(label_) +
              R"(],"minRunners":)" + std::to_string(o_.min_runners) + R"(,"maxRunners":)" +
              std::to_string(o_.max_runners) +
              (o_.start_time_target_s > 0
                   ? R"(,"startTimeTarget":{"p95Seconds":)" + std::to_string(o_.start_time_target_s) + "}"
                   : std::string()) +
              R"(,"template":{"spec":)" + pod_spec + "}}}";
  auto created = api_.create(kinds::runnersets(), ns_, body);
  if (!created)
    return unexpected{"creating RunnerSet " + ns_ + "/" + set_ + ": " + kube::to_string(created.error())};
  created_set_ = true;
  return ok;
}

expected<ok_t, std::string> run_resources::count_manager_requests() {
  if (o_.manager_user.empty()) return ok;
  auto level = o_.count_priority_level;
  if (level.empty())
    level = o_.manager_user.starts_with("system:serviceaccount:") ? "workload-low" : "global-default";
  counting_ = true;  // whatever part was created is removed
  auto installed = bench::install_flow_counters(api_, {counter_prefix(), o_.manager_user, level});
  if (!installed) return unexpected{"counting the manager's requests: " + installed.error()};
  return ok;
}

std::string run_resources::created() const {
  std::string out;
  auto add = [&](bool made, const std::string& what) {
    if (made) out += (out.empty() ? "" : ", ") + what;
  };
  add(created_set_, "RunnerSet " + ns_ + "/" + set_ + " and its runners");
  add(created_secret_, "Secret " + ns_ + "/" + secret_);
  add(created_ns_, "namespace " + ns_);
  add(counting_, "FlowSchemas " + counter_prefix() + "*");
  return out;
}

std::vector<std::string> run_resources::cleanup(std::chrono::milliseconds within,
                                                const std::function<void()>& complete_jobs,
                                                const std::atomic<bool>* abandon) {
  cleaned_ = true;
  std::vector<std::string> left;
  const auto deadline = std::chrono::steady_clock::now() + within;
  auto remaining = [&] {
    return std::max(0ms, std::chrono::duration_cast<std::chrono::milliseconds>(
                             deadline - std::chrono::steady_clock::now()));
  };
  if (counting_) bench::remove_flow_counters(api_, counter_prefix());
  if (created_set_) {
    auto removed = api_.remove(kinds::runnersets(), ns_, set_);
    if (!removed && !removed.error().not_found())
      left.push_back("RunnerSet " + ns_ + "/" + set_ + " (delete: " + kube::to_string(removed.error()) + ")");
    // The manager drains the set; a runner with a job waits for it, so the jobs end now.
    if (complete_jobs) complete_jobs();
    kube::list_options mine;
    mine.label_selector = "octorun.io/runnerset=" + set_;
    auto gone = [&] {
      auto set = api_.get(kinds::runnersets(), ns_, set_);
      auto r = api_.list(kinds::runners(), ns_, mine);
      auto p = api_.list(kinds::pods(), ns_, mine);
      return !set && set.error().not_found() && r && r->items.empty() && p && p->items.empty();
    };
    if (!eventually(gone, remaining(), abandon)) {
      auto r = api_.list(kinds::runners(), ns_, mine);
      auto p = api_.list(kinds::pods(), ns_, mine);
      left.push_back("RunnerSet " + ns_ + "/" + set_ + " with " + std::to_string(r ? r->items.size() : 0) +
                     " Runner(s) and " + std::to_string(p ? p->items.size() : 0) +
                     " pod(s): the manager did not finish draining it (is it running?)");
    }
  }
  if (created_secret_) {
    auto removed = api_.remove(kinds::secrets(), ns_, secret_);
    if (!removed && !removed.error().not_found()) left.push_back("Secret " + ns_ + "/" + secret_);
  }
  if (created_ns_) {
    auto removed = api_.remove(kube::namespaces(), "", ns_);
    if (!removed && !removed.error().not_found()) left.push_back("namespace " + ns_);
  }
  if (webhook_set_ && !o_.simulator_url.empty())
    (void)sim_.set_webhook("", "");  // no more deliveries from it
  return left;
}

}  // namespace octorun::loadtest
