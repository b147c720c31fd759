// A runner pod under a RunnerClass that asks for restricted pods: the
// restricted level's securityContext fields the template leaves out are
// filled in (actors/runner/pod_features.hpp); what the template sets stays.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "actors/runner/children.hpp"
#include "model/parse.hpp"
#include "model/pod_config.hpp"
#include "test/support/json.hpp"
#include "test/support/runner_spec.hpp"

namespace octorun {
namespace {

using test::own_spec;
using test::parse_json;

model::runner runner_with(const std::string& template_json, std::optional<model::pod_security_level> level,
                          std::optional<model::container_mode> mode = std::nullopt) {
  auto r = test::runner_with_template(template_json);
  auto& spec = own_spec(r);
  spec.pod.pod_security = level;
  if (mode) spec.pod.container_mode = model::container_mode_spec{*mode, ""};
  return r;
}

rapidjson::Document pod_of(const model::runner& r) {
  auto pod = runner::pod_json(r, "ua");
  EXPECT_TRUE(pod) << pod.error();
  return parse_json(pod ? *pod : "{}");
}

const rapidjson::Value* named(const rapidjson::Value& list, const char* name) {
  for (const auto& item : list.GetArray())
    if (std::string(item["name"].GetString()) == name) return &item;
  return nullptr;
}

const std::string actions_runner =
    R"({"spec":{"initContainers":[{"name":"setup","image":"busybox"}],)"
    R"("containers":[{"name":"runner","image":"ghcr.io/actions/actions-runner:2.330.0"},)"
    R"({"name":"sidecar","image":"busybox"}]}})";

TEST(RestrictedPods, EveryContainerAndThePodGetTheLevelsFields) {
  auto d = pod_of(runner_with(actions_runner, model::pod_security_level::restricted));
  const auto& spec = d["spec"];
  EXPECT_TRUE(spec["securityContext"]["runAsNonRoot"].GetBool());
  EXPECT_STREQ(spec["securityContext"]["seccompProfile"]["type"].GetString(), "RuntimeDefault");
  for (const auto* list : {&spec["containers"], &spec["initContainers"]})
    for (const auto& c : list->GetArray()) {
      const auto& sc = c["securityContext"];
      EXPECT_FALSE(sc["allowPrivilegeEscalation"].GetBool()) << c["name"].GetString();
      ASSERT_EQ(sc["capabilities"]["drop"].Size(), 1u) << c["name"].GetString();
      EXPECT_STREQ(sc["capabilities"]["drop"][0].GetString(), "ALL");
    }
  EXPECT_EQ(named(spec["containers"], "runner")->operator[]("securityContext")["runAsUser"].GetInt(), 1001)
      << "the image names its user; a kubelet cannot check a name against runAsNonRoot";
  EXPECT_FALSE(named(spec["containers"], "sidecar")->operator[]("securityContext").HasMember("runAsUser"));
}

TEST(RestrictedPods, WhatTheTemplateSetsStays) {
  const std::string own =
      R"({"spec":{"securityContext":{"runAsUser":2000,"seccompProfile":{"type":"Localhost","localhostProfile":"p.json"}},)"
      R"("containers":[{"name":"runner","image":"ghcr.io/actions/actions-runner:2.330.0",)"
      R"("securityContext":{"capabilities":{"drop":["ALL"],"add":["NET_BIND_SERVICE"]}}}]}})";
  auto d = pod_of(runner_with(own, model::pod_security_level::restricted));
  const auto& spec = d["spec"];
  EXPECT_STREQ(spec["securityContext"]["seccompProfile"]["type"].GetString(), "Localhost");
  EXPECT_EQ(spec["securityContext"]["runAsUser"].GetInt(), 2000);
  const auto& sc = spec["containers"][0]["securityContext"];
  EXPECT_FALSE(sc.HasMember("runAsUser")) << "the pod's user is the template's";
  EXPECT_STREQ(sc["capabilities"]["add"][0].GetString(), "NET_BIND_SERVICE");
  EXPECT_FALSE(sc["allowPrivilegeEscalation"].GetBool());
}

TEST(RestrictedPods, PrivilegedAndUnclassedRunnersRenderAsBefore) {
  const auto before = runner::pod_json(runner_with(actions_runner, std::nullopt), "ua");
  ASSERT_TRUE(before);
  EXPECT_EQ(*runner::pod_json(runner_with(actions_runner, model::pod_security_level::privileged), "ua"),
            *before);
  EXPECT_EQ(before->find("allowPrivilegeEscalation"), std::string::npos);
  EXPECT_EQ(before->find("seccompProfile"), std::string::npos);
}

// Under baseline (the default class's level) the pod gets the runtime's
// default seccomp profile, the restricted field that costs a job nothing;
// privilege escalation and capabilities stay, so sudo in a job works.
TEST(BaselinePods, GetTheRuntimeDefaultSeccompProfileAndKeepSudo) {
  for (auto mode :
       {std::optional<model::container_mode>{}, std::optional{model::container_mode::kubernetes}}) {
    auto d = pod_of(runner_with(actions_runner, model::pod_security_level::baseline, mode));
    const auto& spec = d["spec"];
    EXPECT_STREQ(spec["securityContext"]["seccompProfile"]["type"].GetString(), "RuntimeDefault");
    EXPECT_FALSE(spec["securityContext"].HasMember("runAsNonRoot"));
    for (const auto* list : {&spec["containers"], &spec["initContainers"]})
      for (const auto& c : list->GetArray()) {
        EXPECT_FALSE(c.HasMember("securityContext") &&
                     c["securityContext"].HasMember("allowPrivilegeEscalation"))
            << c["name"].GetString();
        EXPECT_FALSE(c.HasMember("securityContext") && c["securityContext"].HasMember("capabilities"))
            << c["name"].GetString();
      }
  }
  // A profile the template names stays.
  const std::string own =
      R"({"spec":{"securityContext":{"seccompProfile":{"type":"Localhost","localhostProfile":"p.json"}},)"
      R"("containers":[{"name":"runner","image":"ghcr.io/actions/actions-runner:2.330.0"}]}})";
  auto d = pod_of(runner_with(own, model::pod_security_level::baseline));
  EXPECT_STREQ(d["spec"]["securityContext"]["seccompProfile"]["type"].GetString(), "Localhost");
}

TEST(RestrictedPods, KubernetesModeIsCoveredAndDindsPrivilegedDaemonIsLeftAlone) {
  auto k8s = pod_of(
      runner_with(actions_runner, model::pod_security_level::restricted, model::container_mode::kubernetes));
  EXPECT_EQ(k8s["spec"]["securityContext"]["fsGroup"].GetInt(), 123) << "the mode's own field stays";
  EXPECT_TRUE(k8s["spec"]["securityContext"]["runAsNonRoot"].GetBool());
  // dind's daemon runs privileged as root: restricted cannot admit it, and
  // allowPrivilegeEscalation false beside privileged is invalid.
  const auto dind = runner::pod_json(
      runner_with(actions_runner, model::pod_security_level::restricted, model::container_mode::dind), "ua");
  ASSERT_TRUE(dind);
  EXPECT_EQ(dind->find("allowPrivilegeEscalation"), std::string::npos);
}

TEST(RestrictedPods, TheLevelTravelsOnTheRunnerAndChangesItsFingerprint) {
  model::pod_config restricted;
  restricted.pod_security = model::pod_security_level::restricted;
  model::pod_template t;
  t.json = actions_runner;
  EXPECT_NE(model::pod_fingerprint(t, restricted), model::pod_fingerprint(t, {}))
      << "a class turned restricted rolls its idle runners out";
  auto parsed = model::parse_runner(
      R"({"metadata":{"name":"r","namespace":"ci"},"spec":{"runnerSetName":"linux","podSecurity":"restricted",)"
      R"("template":)" +
      actions_runner + "}}");
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->spec->pod.pod_security, model::pod_security_level::restricted);
  auto bad = model::parse_runner(
      R"({"metadata":{"name":"r","namespace":"ci"},"spec":{"podSecurity":"strict","template":)" +
      actions_runner + "}}");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error()[0].field, "spec.podSecurity");
}

}  // namespace
}  // namespace octorun
