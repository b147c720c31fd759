// model/namespace_cap: a RunnerClass's spec.maxRunnersPerNamespace, as
// admission judges a write and as the manager judges the sets at use.
#include "model/namespace_cap.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "model/parse.hpp"

namespace octorun::model {
namespace {

runner_class capped_class(const std::string& name, int cap, bool is_default = false) {
  auto c = parse_runner_class(R"({"metadata":{"name":")" + name +
                              R"("},"spec":{"namespaceSelector":{},"github":{"credentialsSecretName":"app"},)"
                              R"("maxRunnersPerNamespace":)" +
                              std::to_string(cap) + "}}");
  EXPECT_TRUE(c);
  auto out = c ? *c : runner_class{};
  out.is_default = is_default;
  return out;
}

runnerset_spec spec_of(const std::string& class_name, int max_runners) {
  runnerset_spec s;
  s.runner_class_name = class_name;
  s.max_runners = max_runners;
  return s;
}

namespace_set listed(const std::string& name, std::int64_t created, const std::string& class_name,
                     int max_runners) {
  object_meta m;
  m.name = name;
  m.creation_timestamp = "2026-12-05T10:00:0" + std::to_string(created) + "Z";
  return namespace_set_of(m, spec_of(class_name, max_runners));
}

platform_classes platform_of(std::vector<namespace_set> sets) {
  platform_classes p;
  p.classes["team"] = capped_class("team", 20);
  p.classes["other"] = capped_class("other", 5);
  p.namespace_labels["team-a"] = {{"kubernetes.io/metadata.name", "team-a"}};
  p.namespace_sets["team-a"] = std::move(sets);
  return p;
}

class_verdict under(const std::string& class_name) {
  class_verdict v;
  v.class_name = class_name;
  return v;
}

TEST(NamespaceCap, ParsedFromTheClass) {
  EXPECT_EQ(capped_class("team", 20).spec.max_runners_per_namespace, 20);
  EXPECT_FALSE(parse_runner_class(R"({"metadata":{"name":"x"},"spec":{"namespaceSelector":{},
    "maxRunnersPerNamespace":"many"}})"));
}

TEST(NamespaceCap, AdmissionRefusesAWriteThatTakesTheNamespaceOverTheCap) {
  auto p = platform_of({listed("a", 1, "team", 10), listed("b", 2, "team", 6), listed("c", 3, "other", 5)});
  // A new set of 4 fits (10 + 6 + 4 = 20); one of 5 does not.
  EXPECT_FALSE(breaks_namespace_cap("team-a", "new", spec_of("team", 4), under("team"), p));
  auto over = breaks_namespace_cap("team-a", "new", spec_of("team", 5), under("team"), p);
  ASSERT_TRUE(over);
  EXPECT_EQ(over->field, "spec.maxRunners");
  EXPECT_EQ(over->message,
            "takes the sets of namespace \"team-a\" under RunnerClass \"team\" to 21 runners (16 of them the "
            "other sets'), more than the 20 the class allows per namespace (spec.maxRunnersPerNamespace)");
  // A set's own update counts it once; another class's sets are not summed.
  EXPECT_FALSE(breaks_namespace_cap("team-a", "b", spec_of("team", 10), under("team"), p));
  EXPECT_TRUE(breaks_namespace_cap("team-a", "b", spec_of("team", 11), under("team"), p));
  // No cap, or no class: nothing to judge.
  EXPECT_FALSE(breaks_namespace_cap("team-a", "new", spec_of("", 500), under(""), p));
  p.classes["team"].spec.max_runners_per_namespace.reset();
  EXPECT_FALSE(breaks_namespace_cap("team-a", "new", spec_of("team", 500), under("team"), p));
}

TEST(NamespaceCap, ASetOverATightenedCapMayStillBeLowered) {
  auto p = platform_of({listed("a", 1, "team", 30)});
  EXPECT_FALSE(breaks_namespace_cap("team-a", "a", spec_of("team", 25), under("team"), p));
  EXPECT_FALSE(breaks_namespace_cap("team-a", "a", spec_of("team", 30), under("team"), p))
      << "a change of anything else";
  EXPECT_TRUE(breaks_namespace_cap("team-a", "a", spec_of("team", 31), under("team"), p));
}

TEST(NamespaceCap, ASetNamingNoClassCountsUnderTheNamespacesDefault) {
  auto p = platform_of({listed("a", 1, "", 15)});
  p.classes["team"].is_default = true;
  EXPECT_TRUE(breaks_namespace_cap("team-a", "new", spec_of("team", 6), under("team"), p));
  p.classes["other"].is_default = true;  // two defaults: it has no class, and counts under none
  EXPECT_FALSE(breaks_namespace_cap("team-a", "new", spec_of("team", 6), under("team"), p));
}

TEST(NamespaceCap, AtUseTheYoungestSetsBeyondTheCapAreOver) {
  // Listed in any order; by age: a (10), c (8: 18), b (5: 23 > 20), d (1: 24).
  auto p = platform_of({listed("d", 4, "team", 1), listed("b", 3, "team", 5), listed("a", 1, "team", 10),
                        listed("c", 2, "team", 8), listed("x", 0, "other", 50)});
  EXPECT_FALSE(beyond_namespace_cap("team-a", "a", under("team"), p));
  EXPECT_FALSE(beyond_namespace_cap("team-a", "c", under("team"), p));
  auto b = beyond_namespace_cap("team-a", "b", under("team"), p);
  ASSERT_TRUE(b);
  EXPECT_EQ(
      b->message,
      "takes the sets of namespace \"team-a\" under RunnerClass \"team\" to 23 runners with the sets older "
      "than it, more than the 20 the class allows per namespace (spec.maxRunnersPerNamespace)");
  EXPECT_TRUE(beyond_namespace_cap("team-a", "d", under("team"), p))
      << "every set younger than the first over";
  EXPECT_TRUE(beyond_namespace_cap("team-a", "x", under("other"), p));
  EXPECT_FALSE(beyond_namespace_cap("team-a", "unlisted", under("team"), p));
}

TEST(NamespaceCap, EqualAgesGoByNameAndASetNotCreatedYetIsTheYoungest) {
  auto p = platform_of({listed("b", 1, "team", 10), listed("a", 1, "team", 10), listed("c", 1, "team", 1)});
  EXPECT_FALSE(beyond_namespace_cap("team-a", "a", under("team"), p));
  EXPECT_FALSE(beyond_namespace_cap("team-a", "b", under("team"), p));
  EXPECT_TRUE(beyond_namespace_cap("team-a", "c", under("team"), p));
  p.namespace_sets["team-a"] = {namespace_set{"z", std::nullopt, "team", 15, "", ""},
                                listed("y", 9, "team", 10)};
  EXPECT_FALSE(beyond_namespace_cap("team-a", "y", under("team"), p));
  EXPECT_TRUE(beyond_namespace_cap("team-a", "z", under("team"), p));
}

TEST(NamespaceCap, TheVerdictIsTheSameWhateverOrderTheSetsWereSeenIn) {
  std::vector<namespace_set> sets{listed("a", 1, "team", 9), listed("b", 2, "team", 9),
                                  listed("c", 3, "team", 9)};
  for (int turn = 0; turn < 3; ++turn) {
    std::rotate(sets.begin(), sets.begin() + 1, sets.end());
    auto p = platform_of(sets);
    std::vector<std::string> over;
    for (const auto& name : {"a", "b", "c"})
      if (beyond_namespace_cap("team-a", name, under("team"), p)) over.push_back(name);
    EXPECT_EQ(over, std::vector<std::string>{"c"});
  }
}

}  // namespace
}  // namespace octorun::model
