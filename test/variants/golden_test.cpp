// Back-compat: the child objects a RunnerSet WITHOUT variants generates (its
// Runner, the Runner's JIT Secret and Pod) are pinned byte for byte by files
// captured before variants got their own scale sets (issue 7). A change that
// alters any of them breaks every running installation's idempotence (the
// manager would see its own objects as foreign), so these files are only ever
// regenerated deliberately:
//   OCTORUN_UPDATE_GOLDEN=1 build/test/variants/variants_unit --gtest_filter='Golden*'
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "actors/runner/children.hpp"
#include "actors/runnerset/pod_resources.hpp"
#include "actors/runnerset/runner_object.hpp"
#include "model/parse.hpp"

namespace octorun {
namespace {

const std::string golden_dir = OCTORUN_GOLDEN_DIR;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// Compares `actual` with golden/<name> (which holds it plus a final newline),
// or rewrites the file when OCTORUN_UPDATE_GOLDEN is set.
void expect_golden(const std::string& name, const std::string& actual) {
  const auto path = golden_dir + "/" + name;
  if (std::getenv("OCTORUN_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(path, std::ios::binary) << actual << '\n';
    return;
  }
  const auto expected = read_file(path);
  ASSERT_FALSE(expected.empty()) << "missing golden file " << path;
  EXPECT_EQ(actual + '\n', expected) << "generated " << name << " differs from " << path;
}

// `dir`: "" for the variant-less set, else the folder of a container mode's set.
model::runnerset golden_set(const std::string& dir = "") {
  auto set = model::parse_runnerset(read_file(golden_dir + "/" + dir + "runnerset.json"));
  EXPECT_TRUE(set) << (set ? "" : set.error()[0].field + ": " + set.error()[0].message);
  return set ? *set : model::runnerset{};
}

// The Runner as the apiserver stores it: the generated object plus a uid.
model::runner golden_runner(const std::string& dir = "") {
  auto set = golden_set(dir);
  auto variants = model::effective_variants(set.spec);
  auto r = model::parse_runner(runnerset::runner_json(set, variants.at(0), "x7k2p"));
  EXPECT_TRUE(r);
  if (!r) return {};
  r->metadata.uid = "6f1c2d3e-0000-4000-8000-000000000002";
  return *r;
}

TEST(GoldenNoVariants, TheSetHasExactlyOneUnnamedVariant) {
  auto set = golden_set();
  auto variants = model::effective_variants(set.spec);
  ASSERT_EQ(variants.size(), 1u);
  EXPECT_EQ(variants[0].name, "");
}

TEST(GoldenNoVariants, RunnerIsByteForByteUnchanged) {
  auto set = golden_set();
  expect_golden("runner.json",
                runnerset::runner_json(set, model::effective_variants(set.spec).at(0), "x7k2p"));
}

TEST(GoldenNoVariants, JitSecretIsByteForByteUnchanged) {
  runner::jit_config jit{"eyJydW5uZXIiOiJqaXQifQ==", 4242, "linux-x7k2p"};
  expect_golden("jit-secret.json", runner::jit_secret_json(golden_runner(), jit));
}

TEST(GoldenNoVariants, PodIsByteForByteUnchanged) {
  auto pod = runner::pod_json(golden_runner(), "octorun/0.1.0");
  ASSERT_TRUE(pod) << pod.error();
  expect_golden("pod.json", *pod);
}

// New behaviour is opt-in: the files above never change. Each container
// mode (with a proxy and a CA bundle) pins its own Runner and Pod, and the
// set's per-set objects, in a folder of its own; these files were written
// by this test (OCTORUN_UPDATE_GOLDEN) and reviewed, and the apiserver
// accepts them (test/manager/children_apiserver_test.cpp).
class GoldenContainerMode : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenContainerMode, RunnerAndPodAreByteForByteUnchanged) {
  const auto dir = GetParam() + "/";
  auto set = golden_set(dir);
  expect_golden(dir + "runner.json",
                runnerset::runner_json(set, model::effective_variants(set.spec).at(0), "x7k2p"));
  auto pod = runner::pod_json(golden_runner(dir), "octorun/0.1.0");
  ASSERT_TRUE(pod) << pod.error();
  expect_golden(dir + "pod.json", *pod);
  expect_golden(dir + "busy-pod-patch.json", runner::busy_pod_patch(golden_runner(dir)));
}

TEST_P(GoldenContainerMode, PerSetObjectsAreByteForByteUnchanged) {
  const auto dir = GetParam() + "/";
  for (const auto& obj : runnerset::desired_pod_resources(golden_set(dir), "octorun-runner-kubernetes-mode"))
    expect_golden(dir + std::string(runnerset::key_kind(obj.key)) + ".json", obj.body);
}

INSTANTIATE_TEST_SUITE_P(Modes, GoldenContainerMode, ::testing::Values("dind", "kubernetes"));

TEST(GoldenNoVariants, PerSetObjectsAreOnlyAServiceAccountAndABudget) {
  std::vector<std::string> keys;
  for (const auto& obj : runnerset::desired_pod_resources(golden_set())) keys.push_back(obj.key);
  EXPECT_EQ(keys, (std::vector<std::string>{"ServiceAccount/octorun-runner-linux",
                                            "PodDisruptionBudget/octorun-busy-linux"}));
}

}  // namespace
}  // namespace octorun
