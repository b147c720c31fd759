// Paths, queries, Status parsing and objects: the pure vocabulary.
#include "adapters/kube/api.hpp"

#include <gtest/gtest.h>

#include "adapters/kube/object.hpp"

namespace octorun::kube {
namespace {

TEST(Paths, CoreAndNamedGroupsNamespacedOrNot) {
  resource widgets{"tests.octorun.io", "v1", "widgets", true};
  EXPECT_EQ(configmaps().collection_path("ns"), "/api/v1/namespaces/ns/configmaps");
  EXPECT_EQ(configmaps().collection_path(""), "/api/v1/configmaps");
  EXPECT_EQ(configmaps().object_path("ns", "a"), "/api/v1/namespaces/ns/configmaps/a");
  EXPECT_EQ(namespaces().object_path("ignored", "kube-system"), "/api/v1/namespaces/kube-system");
  EXPECT_EQ(widgets.object_path("ns", "w", "status"),
            "/apis/tests.octorun.io/v1/namespaces/ns/widgets/w/status");
  EXPECT_EQ(widgets.object_path("ns", "w", "scale"),
            "/apis/tests.octorun.io/v1/namespaces/ns/widgets/w/scale");
  EXPECT_EQ(leases().collection_path("x"), "/apis/coordination.k8s.io/v1/namespaces/x/leases");
  EXPECT_EQ(widgets.id(), "widgets.tests.octorun.io");
  EXPECT_EQ(configmaps().object_path("ns", "a b/c"), "/api/v1/namespaces/ns/configmaps/a%20b%2Fc");
}

TEST(Paths, QueryParametersAreEncoded) {
  list_options o;
  EXPECT_EQ(query_string(o), "");
  o.label_selector = "app=web,tier in (a,b)";
  o.field_selector = "metadata.name=x";
  o.limit = 500;
  o.continue_token = "abc+/=";
  EXPECT_EQ(query_string(o),
            "?labelSelector=app%3Dweb%2Ctier%20in%20%28a%2Cb%29&fieldSelector=metadata.name%3Dx"
            "&continue=abc%2B%2F%3D&limit=500");
  list_options w;
  w.watch = true;
  w.resource_version = "1051";
  w.allow_watch_bookmarks = true;
  w.timeout_seconds = 300;
  EXPECT_EQ(query_string(w), "?resourceVersion=1051&watch=1&allowWatchBookmarks=true&timeoutSeconds=300");
}

TEST(Status, ParsesReasonCodeMessageAndRetryAfter) {
  auto e = parse_status(409, R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
    "message":"Operation cannot be fulfilled on configmaps \"a\": the object has been modified",
    "reason":"Conflict","details":{"name":"a","kind":"configmaps"},"code":409})");
  EXPECT_EQ(e.code, 409);
  EXPECT_EQ(e.reason, "Conflict");
  EXPECT_TRUE(e.conflict());
  EXPECT_FALSE(e.already_exists());
  EXPECT_FALSE(e.retryable());
  EXPECT_EQ(e.message, "Operation cannot be fulfilled on configmaps \"a\": the object has been modified");

  auto exists =
      parse_status(409, R"({"kind":"Status","reason":"AlreadyExists","message":"exists","code":409})");
  EXPECT_TRUE(exists.already_exists());
  EXPECT_FALSE(exists.conflict());

  auto slow = parse_status(504, R"({"kind":"Status","reason":"Timeout","details":{"retryAfterSeconds":1}})");
  EXPECT_EQ(slow.retry_after, std::chrono::seconds(1));
  EXPECT_TRUE(slow.retryable());
}

TEST(Status, ACreateInANamespaceBeingDeletedSaysSo) {
  // As kube-apiserver's NamespaceLifecycle admission answers it.
  auto e = parse_status(403, R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
    "message":"pods \"r-1\" is forbidden: unable to create new content in namespace ci because it is being terminated",
    "reason":"Forbidden","details":{"name":"r-1","kind":"pods","causes":[{"reason":"NamespaceTerminating",
    "message":"namespace ci is being terminated","field":"metadata.namespace"}]},"code":403})");
  EXPECT_TRUE(e.forbidden());
  EXPECT_TRUE(e.namespace_terminating);
  EXPECT_FALSE(
      parse_status(403, R"({"kind":"Status","reason":"Forbidden","message":"no"})").namespace_terminating);
}

TEST(Status, PlainTextAndHtmlBodiesBranchOnTheCode) {
  auto apf = parse_status(429, "Too many requests, please try again later.\n", "3");
  EXPECT_EQ(apf.reason, "TooManyRequests");
  EXPECT_EQ(apf.message, "Too many requests, please try again later.");
  EXPECT_EQ(apf.retry_after, std::chrono::seconds(3));
  EXPECT_TRUE(apf.too_many_requests());
  EXPECT_EQ(parse_status(503, "", "Thu, 01 Jan 1970 00:20:00 GMT", 1000).retry_after,
            std::chrono::seconds(200));
  auto html = parse_status(502, std::string(2000, 'x'));
  EXPECT_EQ(html.reason, "InternalError");
  EXPECT_EQ(html.message.size(), 512u);
  auto gone = parse_status(410, "{}");
  EXPECT_TRUE(gone.gone());
  EXPECT_EQ(gone.reason, "Expired");
  EXPECT_EQ(parse_status(403, "", "soon").retry_after, std::chrono::seconds(0));
  EXPECT_EQ(to_string(parse_status(403, R"({"kind":"Status","reason":"Forbidden","message":"no"})")),
            "403 Forbidden: no");
}

TEST(Delete, OptionsBody) {
  delete_options o;
  EXPECT_EQ(to_json(o), R"({"kind":"DeleteOptions","apiVersion":"v1"})");
  o.propagation_policy = "Foreground";
  o.precondition_uid = "u-1";
  o.precondition_resource_version = "42";
  o.grace_period_seconds = 0;
  EXPECT_EQ(to_json(o), R"({"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Foreground",)"
                        R"("gracePeriodSeconds":0,"preconditions":{"uid":"u-1","resourceVersion":"42"}})");
}

TEST(Object, MetadataViewsAndLabels) {
  auto o = parse_object(R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"ns",
    "uid":"u1","resourceVersion":"17","generation":3,"labels":{"app":"web"},
    "deletionTimestamp":"2026-03-01T10:00:00Z"},"data":{"k":"v"}})");
  ASSERT_TRUE(o) << o.error();
  EXPECT_EQ(o->name, "a");
  EXPECT_EQ(o->namespace_, "ns");
  EXPECT_EQ(o->uid, "u1");
  EXPECT_EQ(o->resource_version, "17");
  EXPECT_EQ(o->generation, 3);
  EXPECT_EQ(o->deletion_timestamp, "2026-03-01T10:00:00Z");
  EXPECT_EQ(o->label("app"), "web");
  EXPECT_EQ(o->label("none"), "");
  EXPECT_EQ(o->key(), "ns/a");
  auto copy = *o;  // views stay valid: they point into the shared document
  o = parse_object("{}");
  EXPECT_EQ(copy.name, "a");
  ASSERT_NE(copy.member("data"), nullptr);
  EXPECT_TRUE(copy.json().starts_with(R"({"apiVersion":"v1","kind":"ConfigMap",)"));
}

TEST(Object, UntrustedShapesDoNotCrash) {
  EXPECT_FALSE(parse_object("[1]"));
  EXPECT_FALSE(parse_object("{bad"));
  auto o = parse_object(R"({"metadata":{"name":7,"labels":"x","generation":"2"}})");
  ASSERT_TRUE(o);
  EXPECT_EQ(o->name, "");
  EXPECT_EQ(o->generation, 0);
  EXPECT_EQ(o->labels(), nullptr);
  auto m = parse_object(R"({"metadata":[]})");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->key(), "");
}

TEST(Object, ManagedFieldsCanBeLeftOut) {
  rapidjson::Document d;
  d.Parse(R"({"kind":"ConfigMap","metadata":{"name":"a","managedFields":[{"manager":"kubectl",
    "fieldsV1":{"f:data":{}}}],"resourceVersion":"5"},"data":{"k":"v"}})");
  auto kept = make_object(d);
  auto dropped = make_object(d, true);
  EXPECT_NE(kept.json().find("managedFields"), std::string::npos);
  EXPECT_EQ(dropped.json(),
            R"({"kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"5"},"data":{"k":"v"}})");
  EXPECT_EQ(dropped.resource_version, "5");
  rapidjson::Document list;
  list.Parse("[1,2]");
  EXPECT_EQ(make_object(list, true).json(), "[1,2]");
}

}  // namespace
}  // namespace octorun::kube
