// The Kubernetes adapter against the real control plane: writes and their
// failure values, patches, subresources, pagination, RBAC, configuration
// sources, events and leases.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <filesystem>
#include <fstream>

#include "adapters/kube/events.hpp"
#include "adapters/kube/lease.hpp"
#include "common/json.hpp"
#include "test/kube/support.hpp"

namespace octorun::kube::testing {
namespace {

namespace fs = std::filesystem;
using test::cluster;
using test::kubectl;
using test::make_namespace;

const resource widgets{"tests.octorun.io", "v1", "widgets", true};

class Kube : public ::testing::Test {
 protected:
  Kube() : c(cluster()), cfg(admin_config(c)), api(cfg) {}

  static rapidjson::Document json(const std::string& s) {
    rapidjson::Document d;
    d.Parse(s.c_str());
    return d;
  }
  void install_widget_crd() {
    kubectl(c, std::string("apply -f ") + OCTORUN_TEST_WIDGET_CRD + " >/dev/null");
    kubectl(c, "wait --for condition=established --timeout=60s crd/widgets.tests.octorun.io >/dev/null");
  }
  std::string widget_json(const std::string& ns, const std::string& name, int replicas) {
    return R"({"apiVersion":"tests.octorun.io/v1","kind":"Widget","metadata":{"name":")" + name +
           R"(","namespace":")" + ns + R"("},"spec":{"replicas":)" + std::to_string(replicas) +
           R"(,"color":"red","tags":["a","b"]}})";
  }

  const test::cluster_info& c;
  config cfg;
  client api;
};

TEST_F(Kube, KubeconfigFromTheClusterWorks) {
  EXPECT_EQ(cfg.server, c.server);
  auto version = api.call("GET", "/version");
  ASSERT_TRUE(version) << to_string(version.error());
  EXPECT_NE(version->find("gitVersion"), std::string::npos);
}

TEST_F(Kube, ClientCertificateFromAKubeconfig) {
  auto path = c.dir + "/kube-test-cert.kubeconfig";
  std::ofstream(path)
      << "apiVersion: v1\nkind: Config\nclusters:\n- name: t\n  cluster:\n    server: " << c.server
      << "\n    certificate-authority: pki/ca.crt\nusers:\n- name: admin\n  user:\n"
         "    client-certificate: pki/admin.crt\n    client-key: pki/admin.key\n"
         "contexts:\n- name: cert\n  context: {cluster: t, user: admin, namespace: kube-system}\n"
         "current-context: cert\n";
  auto cert_cfg = load_kubeconfig(path);
  ASSERT_TRUE(cert_cfg) << cert_cfg.error();
  EXPECT_FALSE(cert_cfg->token);
  client mtls(*cert_cfg);
  auto ns = mtls.get(namespaces(), "", cert_cfg->namespace_);
  ASSERT_TRUE(ns) << to_string(ns.error());  // authenticated as O=system:masters
  EXPECT_EQ(ns->name, "kube-system");
  fs::remove(path);
}

TEST_F(Kube, CreateGetAndAlreadyExists) {
  auto ns = make_namespace(c, "kube-create");
  auto created = api.create(configmaps(), ns, configmap_json(ns, "a", "1"));
  ASSERT_TRUE(created) << to_string(created.error());
  EXPECT_EQ(created->name, "a");
  EXPECT_FALSE(created->uid.empty());
  auto again = api.create(configmaps(), ns, configmap_json(ns, "a", "2"));
  ASSERT_FALSE(again);
  EXPECT_TRUE(again.error().already_exists());
  EXPECT_EQ(again.error().code, 409);
  auto got = api.get(configmaps(), ns, "a");
  ASSERT_TRUE(got) << to_string(got.error());
  EXPECT_EQ(got->resource_version, created->resource_version);
  auto missing = api.get(configmaps(), ns, "nope");
  ASSERT_FALSE(missing);
  EXPECT_TRUE(missing.error().not_found());
  EXPECT_EQ(missing.error().reason, "NotFound");
  EXPECT_NE(missing.error().message.find("\"nope\" not found"), std::string::npos);
}

TEST_F(Kube, StaleUpdateIsAConflict) {
  auto ns = make_namespace(c, "kube-conflict");
  auto v1 = api.create(configmaps(), ns, configmap_json(ns, "a", "1"));
  ASSERT_TRUE(v1) << to_string(v1.error());
  auto body_at = [&](const object& o, const std::string& value) {
    auto d = json(o.json());
    d["data"]["value"].SetString(value.c_str(), d.GetAllocator());
    return json::write(d);
  };
  auto v2 = api.update(configmaps(), ns, "a", body_at(*v1, "2"));
  ASSERT_TRUE(v2) << to_string(v2.error());
  auto stale = api.update(configmaps(), ns, "a", body_at(*v1, "3"));  // still carries v1's RV
  ASSERT_FALSE(stale);
  EXPECT_TRUE(stale.error().conflict());
  EXPECT_EQ(stale.error().reason, "Conflict");
  EXPECT_NE(stale.error().message.find("the object has been modified"), std::string::npos);
  EXPECT_EQ(api.get(configmaps(), ns, "a")->resource_version, v2->resource_version);
}

TEST_F(Kube, MergePatchSemantics) {
  install_widget_crd();
  auto ns = make_namespace(c, "kube-merge");
  auto w = api.create(widgets, ns, widget_json(ns, "w", 1));
  ASSERT_TRUE(w) << to_string(w.error());
  // Nested merge, null deletes a key, arrays are replaced whole.
  auto p = api.patch(widgets, ns, "w", patch_type::merge,
                     R"({"metadata":{"labels":{"x":"1"}},"spec":{"color":null,"tags":["c"],"replicas":2}})");
  ASSERT_TRUE(p) << to_string(p.error());
  auto d = json(p->json());
  EXPECT_FALSE(d["spec"].HasMember("color"));
  ASSERT_EQ(d["spec"]["tags"].Size(), 1u);
  EXPECT_STREQ(d["spec"]["tags"][0].GetString(), "c");
  EXPECT_EQ(d["spec"]["replicas"].GetInt(), 2);
  EXPECT_EQ(p->label("x"), "1");
  // A resourceVersion in the patch is a precondition.
  auto stale = api.patch(widgets, ns, "w", patch_type::merge,
                         R"({"metadata":{"resourceVersion":")" + std::string(w->resource_version) +
                             R"("},"spec":{"replicas":3}})");
  ASSERT_FALSE(stale);
  EXPECT_TRUE(stale.error().conflict());
}

TEST_F(Kube, JsonPatchWithAResourceVersionTest) {
  auto ns = make_namespace(c, "kube-jsonpatch");
  auto v1 = api.create(configmaps(), ns, configmap_json(ns, "a", "1"));
  ASSERT_TRUE(v1) << to_string(v1.error());
  auto guarded = [&](const std::string& rv, const std::string& ops) {
    return api.patch(
        configmaps(), ns, "a", patch_type::json,
        R"([{"op":"test","path":"/metadata/resourceVersion","value":")" + rv + R"("},)" + ops + "]");
  };
  auto ok = guarded(
      std::string(v1->resource_version),
      R"({"op":"add","path":"/data/extra","value":"x"},{"op":"replace","path":"/data/value","value":"2"})");
  ASSERT_TRUE(ok) << to_string(ok.error());
  auto d = json(ok->json());
  EXPECT_STREQ(d["data"]["extra"].GetString(), "x");
  EXPECT_STREQ(d["data"]["value"].GetString(), "2");
  auto stale = guarded(std::string(v1->resource_version), R"({"op":"remove","path":"/data/extra"})");
  ASSERT_FALSE(stale);
  EXPECT_TRUE(stale.error().invalid()) << to_string(stale.error());  // a failed test is 422, not 409
  EXPECT_STREQ(json(api.get(configmaps(), ns, "a")->json())["data"]["extra"].GetString(), "x");
  auto bad_path = api.patch(configmaps(), ns, "a", patch_type::json, R"([{"op":"remove","path":"/nope/x"}])");
  ASSERT_FALSE(bad_path);
  EXPECT_EQ(bad_path.error().code, 422);
}

TEST_F(Kube, StatusAndScaleSubresources) {
  install_widget_crd();
  auto ns = make_namespace(c, "kube-subres");
  auto w = api.create(widgets, ns, widget_json(ns, "w", 2));
  ASSERT_TRUE(w) << to_string(w.error());
  EXPECT_EQ(w->generation, 1);

  // Status through the main resource is ignored; through /status it lands
  // without bumping the generation.
  auto ignored = api.patch(widgets, ns, "w", patch_type::merge, R"({"status":{"phase":"Ignored"}})");
  ASSERT_TRUE(ignored) << to_string(ignored.error());
  EXPECT_EQ(ignored->member("status"), nullptr);
  auto st = api.patch(widgets, ns, "w", patch_type::merge,
                      R"({"status":{"phase":"Ready","replicas":1,"selector":"app=w"}})", "status");
  ASSERT_TRUE(st) << to_string(st.error());
  auto d = json(st->json());
  EXPECT_STREQ(d["status"]["phase"].GetString(), "Ready");
  EXPECT_EQ(st->generation, 1);
  // Status update (PUT) with a stale version conflicts like any update.
  auto stale_status = api.update(widgets, ns, "w", w->json(), "status");
  ASSERT_FALSE(stale_status);
  EXPECT_TRUE(stale_status.error().conflict());

  auto scale = api.get(widgets, ns, "w", "scale");
  ASSERT_TRUE(scale) << to_string(scale.error());
  auto s = json(scale->json());
  EXPECT_STREQ(s["kind"].GetString(), "Scale");
  EXPECT_EQ(s["spec"]["replicas"].GetInt(), 2);
  EXPECT_EQ(s["status"]["replicas"].GetInt(), 1);
  EXPECT_STREQ(s["status"]["selector"].GetString(), "app=w");
  auto scaled = api.patch(widgets, ns, "w", patch_type::merge, R"({"spec":{"replicas":5}})", "scale");
  ASSERT_TRUE(scaled) << to_string(scaled.error());
  auto after = api.get(widgets, ns, "w");
  ASSERT_TRUE(after);
  EXPECT_EQ(json(after->json())["spec"]["replicas"].GetInt(), 5);
  EXPECT_EQ(after->generation, 2);
}

TEST_F(Kube, DeleteWithPreconditionsAndPropagation) {
  auto ns = make_namespace(c, "kube-delete");
  auto a = api.create(configmaps(), ns, configmap_json(ns, "a", "1"));
  ASSERT_TRUE(a) << to_string(a.error());
  delete_options wrong;
  wrong.precondition_uid = "00000000-0000-0000-0000-000000000000";
  auto refused = api.remove(configmaps(), ns, "a", wrong);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, 409);
  EXPECT_NE(refused.error().message.find("the UID in the precondition"), std::string::npos)
      << refused.error().message;
  delete_options stale_rv;
  stale_rv.precondition_resource_version = "1";
  auto stale = api.remove(configmaps(), ns, "a", stale_rv);
  ASSERT_FALSE(stale);
  EXPECT_TRUE(stale.error().conflict());
  EXPECT_NE(stale.error().message.find("the ResourceVersion in the precondition"), std::string::npos);

  delete_options right;
  right.precondition_uid = std::string(a->uid);
  right.precondition_resource_version = std::string(a->resource_version);
  right.propagation_policy = "Foreground";
  auto gone = api.remove(configmaps(), ns, "a", right);
  ASSERT_TRUE(gone) << to_string(gone.error());
  // Foreground: the garbage collector (kube-controller-manager) finishes it.
  EXPECT_TRUE(eventually(
      [&] {
        auto got = api.get(configmaps(), ns, "a");
        return !got && got.error().not_found();
      },
      std::chrono::seconds(60)));
  auto again = api.remove(configmaps(), ns, "a");
  ASSERT_FALSE(again);
  EXPECT_TRUE(again.error().not_found());

  // Deleted at once (nothing holds it): the reply is no object, not the Status.
  ASSERT_TRUE(api.create(configmaps(), ns, configmap_json(ns, "b", "1")));
  auto at_once = api.remove(configmaps(), ns, "b");
  ASSERT_TRUE(at_once) << to_string(at_once.error());
  EXPECT_FALSE(*at_once);
}

TEST_F(Kube, PaginationOverMoreThan500Objects) {
  auto ns = make_namespace(c, "kube-pages");
  create_configmaps(cfg, ns, "cm", 520, 4, R"({"set":"pages"})");
  list_options first;
  first.limit = 500;
  auto page = api.list_page(configmaps(), ns, first);
  ASSERT_TRUE(page) << to_string(page.error());
  EXPECT_EQ(page->items.size(), 500u);
  EXPECT_FALSE(page->continue_token.empty());

  for (int64_t size : {0, 100, 499}) {  // 0 = the client's page size (500)
    list_options o;
    o.limit = size;
    o.label_selector = "set=pages";
    auto all = api.list(configmaps(), ns, o);
    ASSERT_TRUE(all) << to_string(all.error());
    std::set<std::string> names;
    for (const auto& item : all->items) names.insert(std::string(item.name));
    EXPECT_EQ(all->items.size(), 520u) << "page size " << size;
    EXPECT_EQ(names.size(), 520u);
    EXPECT_FALSE(all->resource_version.empty());
  }
  list_options fields;
  fields.field_selector = "metadata.name=cm-7";
  auto one = api.list(configmaps(), ns, fields);
  ASSERT_TRUE(one);
  ASSERT_EQ(one->items.size(), 1u);
  EXPECT_EQ(one->items[0].name, "cm-7");
}

TEST_F(Kube, RbacForbiddenIsAClearError) {
  auto ns = make_namespace(c, "kube-rbac");
  std::ifstream in(c.dir + "/pki/user.token");
  std::string token((std::istreambuf_iterator<char>(in)), {});
  client user(config_with_token(c, token_source::fixed(token)));
  auto listed = user.list(configmaps(), ns);
  ASSERT_FALSE(listed);
  EXPECT_TRUE(listed.error().forbidden());
  EXPECT_EQ(listed.error().reason, "Forbidden");
  EXPECT_NE(listed.error().message.find("\"octorun-test-user\" cannot list resource \"configmaps\""),
            std::string::npos)
      << listed.error().message;
  // A Role granting reads only: reads work, writes are still Forbidden.
  kubectl(c, "-n " + ns + " create role reader --verb=get,list --resource=configmaps >/dev/null");
  kubectl(c, "-n " + ns + " create rolebinding reader --role=reader --user=octorun-test-user >/dev/null");
  EXPECT_TRUE(eventually([&] { return bool(user.list(configmaps(), ns)); }, std::chrono::seconds(30)));
  auto write = user.create(configmaps(), ns, configmap_json(ns, "x", "1"));
  ASSERT_FALSE(write);
  EXPECT_EQ(write.error().code, 403);
  client nobody(config_with_token(c, token_source::fixed("not-a-token")));
  auto anon = nobody.list(configmaps(), ns);
  ASSERT_FALSE(anon);
  EXPECT_TRUE(anon.error().unauthorized());
}

TEST_F(Kube, InClusterConfigFromAFakeServiceAccountFolder) {
  auto ns = make_namespace(c, "kube-incluster");
  char tmpl[] = "/tmp/octorun-sa-XXXXXX";
  std::string dir = mkdtemp(tmpl);
  fs::copy_file(c.ca_file, dir + "/ca.crt");
  std::ofstream(dir + "/token") << c.admin_token << "\n";
  std::ofstream(dir + "/namespace") << ns;
  auto port = std::to_string(port_of(c.server));
  auto env = [&](const char* name) -> std::string {
    if (std::string(name) == "KUBERNETES_SERVICE_HOST") return "127.0.0.1";
    if (std::string(name) == "KUBERNETES_SERVICE_PORT") return port;
    return {};
  };
  auto in_cluster = in_cluster_config(dir, env);
  ASSERT_TRUE(in_cluster) << in_cluster.error();
  EXPECT_EQ(in_cluster->namespace_, ns);
  client pod(*in_cluster);
  auto created = pod.create(configmaps(), in_cluster->namespace_, configmap_json(ns, "from-pod", "1"));
  ASSERT_TRUE(created) << to_string(created.error());
  EXPECT_EQ(created->namespace_, ns);
  fs::remove_all(dir);
}

TEST_F(Kube, TokenFileRotationIsPickedUp) {
  auto ns = make_namespace(c, "kube-rotate");
  char tmpl[] = "/tmp/octorun-token-XXXXXX";
  std::string dir = mkdtemp(tmpl);
  std::ofstream(dir + "/token") << "not-a-valid-token";
  client rotating(config_with_token(c, token_source::file(dir + "/token")));
  auto before = rotating.list(configmaps(), ns);
  ASSERT_FALSE(before);
  EXPECT_TRUE(before.error().unauthorized());
  // The kubelet's rotation: write aside, rename over.
  std::ofstream(dir + "/token.new") << c.admin_token;
  fs::rename(dir + "/token.new", dir + "/token");
  auto after = rotating.list(configmaps(), ns);
  EXPECT_TRUE(after) << to_string(after.error());
  fs::remove_all(dir);
}

TEST_F(Kube, ThrottledByTheClientSideTokenBucket) {
  auto ns = make_namespace(c, "kube-qps");
  client_options opts;
  opts.limiter = std::make_shared<token_bucket>(20, 5);
  client slow(cfg, opts);
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 15; ++i) ASSERT_TRUE(slow.get(namespaces(), "", ns));
  // 5 at once, then 10 more at 20/s: at least ~0.5 s.
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(450));
}

TEST_F(Kube, EventsWithSeriesAndSpamLimit) {
  auto ns = make_namespace(c, "kube-events");
  auto cm = api.create(configmaps(), ns, configmap_json(ns, "subject", "1"));
  ASSERT_TRUE(cm) << to_string(cm.error());
  event_spec e;
  e.regarding = reference_to(*cm);
  e.reason = "Tested";
  e.action = "Test";
  e.note = "an event from the kube adapter test";
  // Series written on every repeat; a burst of 3 writes per object.
  event_recorder rec(api, "tests.octorun.io/kube-test", "test-1",
                     event_spam_filter(3, std::chrono::seconds(300), std::chrono::seconds(0)));
  std::vector<event_spam_filter::action> actions;
  for (int i = 0; i < 5; ++i) {
    auto r = rec.record(e);
    ASSERT_TRUE(r) << to_string(r.error());
    actions.push_back(*r);
  }
  using A = event_spam_filter::action;
  EXPECT_EQ(actions, (std::vector<A>{A::create, A::update_series, A::update_series, A::drop, A::drop}));
  auto events = api.list(events_v1(), ns);
  ASSERT_TRUE(events) << to_string(events.error());
  ASSERT_EQ(events->items.size(), 1u);
  auto d = json(events->items[0].json());
  EXPECT_STREQ(d["reason"].GetString(), "Tested");
  EXPECT_STREQ(d["regarding"]["name"].GetString(), "subject");
  EXPECT_EQ(d["series"]["count"].GetInt(), 3);
}

TEST_F(Kube, LeaseLeaderElection) {
  auto ns = make_namespace(c, "kube-lease");
  client other_api(cfg);
  leader_elector a(api, {ns, "lock", "candidate-a", std::chrono::seconds(15)});
  leader_elector b(other_api, {ns, "lock", "candidate-b", std::chrono::seconds(15)});
  auto first = a.try_acquire_or_renew();
  ASSERT_TRUE(first) << to_string(first.error());
  EXPECT_TRUE(*first);
  EXPECT_FALSE(*b.try_acquire_or_renew());  // held and not expired
  EXPECT_TRUE(*a.try_acquire_or_renew());   // renew
  ASSERT_TRUE(a.release());
  EXPECT_TRUE(*b.try_acquire_or_renew());  // released: taken at once
  EXPECT_FALSE(*a.try_acquire_or_renew());
  auto lease = parse_lease(*api.get(leases(), ns, "lock"));
  ASSERT_TRUE(lease);
  EXPECT_EQ(lease->holder, "candidate-b");
  EXPECT_EQ(lease->transitions, 1);  // a's term, then b's
}

}  // namespace
}  // namespace octorun::kube::testing
