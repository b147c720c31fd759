// What the chart render tests share: renders that fail the test when helm
// does, and lookups into the rendered objects.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "test/chart/helm.hpp"

namespace octorun::test {

inline bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

inline bool has_prefix(const std::vector<std::string>& v, const std::string& prefix) {
  return std::any_of(v.begin(), v.end(), [&](const std::string& s) { return s.rfind(prefix, 0) == 0; });
}

inline std::string str(const YAML::Node& n) { return n.IsScalar() ? n.as<std::string>() : ""; }

// Renders and fails the test (with helm's output) when helm fails.
inline rendered ok(const std::string& flags, const std::string& release = "octorun") {
  auto r = render(flags, release);
  EXPECT_EQ(r.result.status, 0) << flags << "\n" << r.result.all();
  return r;
}

inline YAML::Node deployment(const rendered& r, const std::string& name = "octorun-manager") {
  auto d = r.find("Deployment", name);
  EXPECT_TRUE(d.has_value()) << name;
  return d ? *d : YAML::Node();
}

inline YAML::Node pod_spec(const rendered& r) { return deployment(r)["spec"]["template"]["spec"]; }

// The volume of this name in the pod spec.
inline YAML::Node volume(const YAML::Node& spec, const std::string& name) {
  for (const auto& v : spec["volumes"])
    if (str(v["name"]) == name) return v;
  return YAML::Node();
}

inline std::string mount_path(const YAML::Node& container, const std::string& volume_name) {
  for (const auto& m : container["volumeMounts"])
    if (str(m["name"]) == volume_name) return str(m["mountPath"]);
  return "";
}

// A selector (map) matches the labels (map).
inline bool selects(const YAML::Node& selector, const YAML::Node& labels) {
  if (!selector.IsMap() || selector.size() == 0) return false;
  for (const auto& kv : selector)
    if (!labels[kv.first.as<std::string>()] || str(labels[kv.first.as<std::string>()]) != str(kv.second))
      return false;
  return true;
}

}  // namespace octorun::test
