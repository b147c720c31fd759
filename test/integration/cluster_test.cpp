// Proves the test control plane is the real thing: the pinned kube-apiserver
// answers /version, and kube-controller-manager's garbage collector removes a
// dependent once its owner is gone.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <chrono>

#include "adapters/http/http_client.hpp"
#include "test/support/test_cluster.hpp"

namespace octorun::test {
namespace {

class Cluster : public ::testing::Test {
 protected:
  Cluster()
      : c(cluster()), api([&] {
          http::tls_options t;
          t.ca_file = c.ca_file;
          return t;
        }()) {}

  http::response call(const std::string& method, const std::string& path, const std::string& body = "") {
    http::request r{method,
                    c.server + path,
                    {{"Authorization", "Bearer " + c.admin_token},
                     {"Content-Type", "application/json"},
                     {"Accept", "application/json"}},
                    body};
    auto resp = api.perform(r);
    if (!resp) ADD_FAILURE() << method << " " << path << ": " << resp.error().message;
    return resp ? *resp : http::response{};
  }

  // Watches one object from `rv` until `done(type, object)` says so or the
  // server ends the watch (60 s); returns whether `done` was satisfied.
  template <class Pred>
  bool watch_until(const std::string& collection, const std::string& name, const std::string& rv, Pred done) {
    bool satisfied = false;
    std::string pending;
    http::request watch{"GET",
                        c.server + collection + "?watch=1&timeoutSeconds=60&fieldSelector=metadata.name%3D" +
                            name + "&resourceVersion=" + rv,
                        {{"Authorization", "Bearer " + c.admin_token}},
                        ""};
    watch.timeout = std::chrono::seconds(70);
    auto streamed = api.stream(watch, [&](std::string_view chunk) {
      pending.append(chunk);
      for (auto nl = pending.find('\n'); nl != std::string::npos; nl = pending.find('\n')) {
        auto event = parse(pending.substr(0, nl));
        pending.erase(0, nl + 1);
        if (event.IsObject() && event.HasMember("type") && event.HasMember("object") &&
            done(std::string(event["type"].GetString()), event["object"]))
          satisfied = true;
      }
      return !satisfied;
    });
    EXPECT_TRUE(streamed) << streamed.error().message;
    return satisfied;
  }

  static rapidjson::Document parse(const std::string& s) {
    rapidjson::Document d;
    d.Parse(s.c_str());
    return d;
  }

  const cluster_info& c;
  http::client api;
};

TEST_F(Cluster, ServesThePinnedKubernetesVersion) {
  auto resp = call("GET", "/version");
  ASSERT_EQ(resp.status, 200) << resp.body;
  auto doc = parse(resp.body);
  ASSERT_TRUE(doc.IsObject() && doc.HasMember("gitVersion"));
  EXPECT_STREQ(doc["gitVersion"].GetString(), OCTORUN_EXPECTED_K8S_VERSION);
  EXPECT_STREQ(doc["major"].GetString(), "1");
}

TEST_F(Cluster, RejectsAnUnknownToken) {
  http::request r{"GET", c.server + "/api/v1/namespaces", {{"Authorization", "Bearer nope"}}, ""};
  auto resp = api.perform(r);
  ASSERT_TRUE(resp);
  EXPECT_EQ(resp->status, 401);
}

TEST_F(Cluster, GarbageCollectorRemovesDependentsOfADeletedOwner) {
  auto ns = make_namespace(c, "gc");
  auto base = "/api/v1/namespaces/" + ns + "/configmaps";
  auto owner = call("POST", base, R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"owner"}})");
  ASSERT_EQ(owner.status, 201) << owner.body;
  auto owner_doc = parse(owner.body);
  std::string uid = owner_doc["metadata"]["uid"].GetString();

  auto dependent = call("POST", base,
                        R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dependent",)"
                        R"("ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"owner","uid":")" +
                            uid + R"("}]}})");
  ASSERT_EQ(dependent.status, 201) << dependent.body;

  auto del = call("DELETE", base + "/owner");
  ASSERT_EQ(del.status, 200) << del.body;

  // The garbage collector acts asynchronously: watch the dependent from the
  // version we created until the server reports it DELETED.
  std::string rv = parse(dependent.body)["metadata"]["resourceVersion"].GetString();
  bool deleted = watch_until(base, "dependent", rv, [](const std::string& type, const rapidjson::Value&) {
    return type == "DELETED";
  });
  EXPECT_TRUE(deleted) << "the garbage collector did not remove the dependent within the watch";
  EXPECT_EQ(call("GET", base + "/dependent").status, 404);
  kubectl(c, "delete namespace " + ns + " --wait=false >/dev/null");
}

// kube-scheduler places pods on kwok's fake node and kwok runs them: a pod
// reaches Running with no kubelet, and deleting it completes.
TEST_F(Cluster, SchedulesPodsOntoTheFakeNodeAndRunsThem) {
  auto ns = make_namespace(c, "pods");
  auto base = "/api/v1/namespaces/" + ns + "/pods";
  auto created =
      call("POST", base,
           R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},)"
           R"("spec":{"containers":[{"name":"runner","image":"ghcr.io/actions/actions-runner:latest"}]}})");
  ASSERT_EQ(created.status, 201) << created.body;
  std::string rv = parse(created.body)["metadata"]["resourceVersion"].GetString();
  std::string node;
  bool running = watch_until(base, "p", rv, [&](const std::string&, const rapidjson::Value& pod) {
    auto spec = pod.FindMember("spec");
    auto status = pod.FindMember("status");
    if (spec == pod.MemberEnd() || status == pod.MemberEnd()) return false;
    auto n = spec->value.FindMember("nodeName");
    auto phase = status->value.FindMember("phase");
    if (n != spec->value.MemberEnd() && n->value.IsString()) node = n->value.GetString();
    return phase != status->value.MemberEnd() && phase->value.IsString() &&
           std::string(phase->value.GetString()) == "Running";
  });
  EXPECT_TRUE(running);
  EXPECT_EQ(node, "kwok-node-0");
  EXPECT_EQ(call("DELETE", base + "/p").status, 200);
  kubectl(c, "delete namespace " + ns + " --wait=false >/dev/null");
}

}  // namespace
}  // namespace octorun::test
