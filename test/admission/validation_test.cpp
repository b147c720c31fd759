// Each admission rule on its own: the field it names and why.
#include "adapters/admission/validation.hpp"

#include <gtest/gtest.h>

#include "test/admission/fixtures.hpp"
#include "test/support/runner_spec.hpp"

namespace octorun::admission {
namespace {

using model::field_error;
using test::doc;

field_errors validate_set(const rapidjson::Document& d, const admission_policy& policy = {}) {
  auto set = model::parse_runnerset(d);
  EXPECT_TRUE(set);
  return set ? validate_runnerset(*set, policy) : field_errors{};
}

// The single error expected, as "field: message".
std::string only_error(const field_errors& errors) {
  EXPECT_EQ(errors.size(), 1u);
  std::string out;
  for (const auto& e : errors) out += (out.empty() ? "" : " | ") + e.field + ": " + e.message;
  return out;
}

TEST(ValidateRunnerSet, AcceptsTheSample) {
  auto d = doc(test::valid_runnerset_json());
  EXPECT_TRUE(validate_set(d).empty());
}

TEST(ValidateRunnerSet, RejectsBadScopeUrls) {
  auto d = doc(test::valid_runnerset_json());
  test::set(d, "/spec/scopeURL", std::string("https://github.com/acme/app/issues"));
  auto msg = only_error(validate_set(d));
  EXPECT_NE(msg.find("spec.scopeURL: \"https://github.com/acme/app/issues\" has too many path segments"),
            std::string::npos)
      << msg;
  test::erase(d, "/spec/scopeURL");
  EXPECT_NE(only_error(validate_set(d)).find("spec.scopeURL: is required"), std::string::npos);
}

// The attack (issue 32): a tenant points its set at a server of its own,
// over plain http or at an address, and receives the credentials. Only the
// hosts the platform lists (--github-http-hosts) may be reached so.
TEST(ValidateRunnerSet, PlainHttpAndIpAddressesOnlyWhereThePlatformAllows) {
  auto d = doc(test::valid_runnerset_json());
  test::set(d, "/spec/scopeURL", std::string("http://sink.tenant.svc:8080/acme"));
  EXPECT_EQ(
      only_error(validate_set(d)),
      "spec.scopeURL: \"http://sink.tenant.svc:8080/acme\" must start with https:// (plain http only to a "
      "host the platform lists in the manager's --github-http-hosts)");
  test::set(d, "/spec/scopeURL", std::string("https://10.0.0.7/acme"));
  EXPECT_EQ(
      only_error(validate_set(d)),
      "spec.scopeURL: \"https://10.0.0.7/acme\" names the IP address 10.0.0.7: use GitHub's host name (an "
      "IP address only where the platform lists it in the manager's --github-http-hosts)");
  for (const char* ip :
       {"https://2130706433/acme", "https://0x7f000001/acme", "http://127.0.0.1:4000/acme"}) {
    test::set(d, "/spec/scopeURL", std::string(ip));
    EXPECT_EQ(validate_set(d).size(), 1u) << ip;
  }
  admission_policy simulator;
  simulator.scopes.http_hosts = {"127.0.0.1"};
  EXPECT_TRUE(validate_set(d, simulator).empty());  // the tests' GitHub simulator
  test::set(d, "/spec/scopeURL", std::string("http://127.0.0.2:4000/acme"));
  EXPECT_EQ(validate_set(d, simulator).size(), 1u) << "only the hosts listed";
}

// The attack (issue 32): minRunners 100000 was admitted and the manager
// made 8,275 Runners in 70 s for one tenant. Each count has a bound the
// platform may raise.
TEST(ValidateRunnerSet, CountsAreBounded) {
  auto d = doc(test::valid_runnerset_json());
  test::erase(d, "/spec/variants");
  test::set(d, "/spec/minRunners", 0);
  test::set(d, "/spec/maxRunners", 100000);
  EXPECT_EQ(only_error(validate_set(d)),
            "spec.maxRunners: 100000 is over the limit of 1000 runners per RunnerSet (the manager's "
            "--max-runners, which the platform admin may raise)");
  test::set(d, "/spec/maxRunners", 1000);
  EXPECT_TRUE(validate_set(d).empty());
  test::set(d, "/spec/replicas", 1001);
  EXPECT_EQ(validate_set(d).at(0).field, "spec.replicas");
  test::erase(d, "/spec/replicas");
  admission_policy raised;
  raised.max_runners = 10000;
  test::set(d, "/spec/maxRunners", 10000);
  EXPECT_TRUE(validate_set(d, raised).empty());
  auto v = doc(test::valid_runnerset_json());
  test::set(v, "/spec/variants/1/maxRunners", 5000);
  auto errors = validate_set(v);
  ASSERT_FALSE(errors.empty());
  EXPECT_EQ(errors[0].field, "spec.variants[1].maxRunners");
  EXPECT_NE(errors[0].message.find("over the limit of 1000"), std::string::npos) << errors[0].message;
}

// A start-up deadline (spec.startupTimeoutSeconds, a variant's own) within
// its bounds: too short would replace runners as they start, too long would
// leave a stuck one holding its slot for hours. Parsed into the effective
// variants: a variant's own, else the set's.
TEST(ValidateRunnerSet, StartupTimeoutsAreBoundedAndInherited) {
  auto d = doc(test::valid_runnerset_json());
  test::set(d, "/spec/startupTimeoutSeconds", 5);
  EXPECT_EQ(only_error(validate_set(d)),
            "spec.startupTimeoutSeconds: 5 is outside 10..3600 seconds: a runner not online this long after "
            "its creation is replaced; leave it unset to derive it from the variant's observed start-up "
            "times");
  test::set(d, "/spec/startupTimeoutSeconds", 10);
  EXPECT_TRUE(validate_set(d).empty());
  test::set(d, "/spec/variants/1/startupTimeoutSeconds", 3601);
  EXPECT_EQ(validate_set(d).at(0).field, "spec.variants[1].startupTimeoutSeconds");
  test::set(d, "/spec/variants/1/startupTimeoutSeconds", 3600);
  auto set = model::parse_runnerset(d);
  ASSERT_TRUE(set);
  EXPECT_TRUE(validate_runnerset(*set, {}).empty());
  auto variants = model::effective_variants(set->spec);
  ASSERT_EQ(variants.size(), 2u);
  EXPECT_EQ(variants[0].startup_timeout_seconds, 10);
  EXPECT_EQ(variants[1].startup_timeout_seconds, 3600);
  test::set(d, "/spec/startupTimeoutSeconds", std::string("ten"));
  EXPECT_FALSE(model::parse_runnerset(d)) << "not a number: refused where it is read";
}

// A start-time target (spec.startTimeTarget, a variant's own) names its
// percentile's seconds within 1..3600, refused naming the field; parsed into
// the effective variants: a variant's own, else the set's.
TEST(ValidateRunnerSet, StartTimeTargetsAreBoundedAndInherited) {
  auto d = doc(test::valid_runnerset_json());
  test::set(d, "/spec/startTimeTarget", rapidjson::Value(rapidjson::kObjectType));
  EXPECT_EQ(only_error(validate_set(d)),
            "spec.startTimeTarget.p95Seconds: is required: the seconds within which 95 % of the jobs should "
            "start after being queued");
  test::set(d, "/spec/startTimeTarget/p95Seconds", 0);
  EXPECT_EQ(
      only_error(validate_set(d)),
      "spec.startTimeTarget.p95Seconds: 0 is outside 1..3600 seconds: the manager keeps warm runners so "
      "that 95 % of the jobs start within this long after being queued; remove startTimeTarget to keep "
      "none beyond minRunners");
  test::set(d, "/spec/startTimeTarget/p95Seconds", 5);
  EXPECT_TRUE(validate_set(d).empty());
  test::set(d, "/spec/variants/1/startTimeTarget/p95Seconds", 3601);
  EXPECT_EQ(validate_set(d).at(0).field, "spec.variants[1].startTimeTarget.p95Seconds");
  test::set(d, "/spec/variants/1/startTimeTarget/p95Seconds", 3600);
  auto set = model::parse_runnerset(d);
  ASSERT_TRUE(set);
  EXPECT_TRUE(validate_runnerset(*set, {}).empty());
  auto variants = model::effective_variants(set->spec);
  ASSERT_EQ(variants.size(), 2u);
  EXPECT_EQ(variants[0].start_time_target_seconds, 5);
  EXPECT_EQ(variants[1].start_time_target_seconds, 3600);
  test::set(d, "/spec/startTimeTarget", std::string("5s"));
  EXPECT_FALSE(model::parse_runnerset(d)) << "not an object: refused where it is read";
}

// Whether a set needs a Secret of its own is its RunnerClass's to say
// (runner_class_unit JudgeSet.*); a name it gives must be a Secret's.
TEST(ValidateRunnerSet, ACredentialsSecretNameIsASecretsName) {
  auto d = doc(test::valid_runnerset_json());
  test::erase(d, "/spec/credentialsSecretName");
  EXPECT_TRUE(validate_set(d).empty());
  test::set(d, "/spec/credentialsSecretName", std::string("GitHub_App"));
  EXPECT_NE(only_error(validate_set(d)).find("is not a valid Secret name"), std::string::npos);
}

TEST(ValidateRunnerSet, RejectsMinAboveMax) {
  auto d = doc(test::valid_runnerset_json());
  test::erase(d, "/spec/variants");
  test::set(d, "/spec/minRunners", 6);
  EXPECT_EQ(only_error(validate_set(d)), "spec.minRunners: must not exceed maxRunners (6 > 5)");
}

TEST(ValidateRunnerSet, RejectsNegativeCounts) {
  auto d = doc(test::valid_runnerset_json());
  test::set(d, "/spec/replicas", -1);
  EXPECT_EQ(only_error(validate_set(d)), "spec.replicas: must not be negative");
  test::set(d, "/spec/replicas", 0);
  test::set(d, "/spec/maxRunners", -2);
  auto errors = validate_set(d);
  ASSERT_FALSE(errors.empty());
  EXPECT_EQ(errors[0].field, "spec.maxRunners");
}

TEST(ValidateRunnerSet, RejectsBadRunnerLabels) {
  auto d = doc(test::valid_runnerset_json());
  test::set(d, "/spec/runnerLabels/1", std::string("gpu,arm64"));
  EXPECT_EQ(only_error(validate_set(d)),
            "spec.runnerLabels[1]: \"gpu,arm64\" must not contain ',': give each label as its own list item");
  test::set(d, "/spec/runnerLabels/1", std::string("linux"));
  EXPECT_EQ(only_error(validate_set(d)), "spec.runnerLabels[1]: duplicate label \"linux\"");
}

// Issue 32: the manager marks every REST runner a set registers with the
// set's own "octorun-set-<id>" label, and a lookup by name removes only a
// runner carrying it; a set declaring one (another set's, in any case) is
// refused, so only the set's own JIT requests carry its label.
TEST(ValidateRunnerSet, RefusesTheLabelsTheManagerReservesToMarkASetsRunners) {
  auto d = doc(test::valid_runnerset_json());
  for (const char* reserved : {"octorun-set-0123456789abcdef", "Octorun-Set-x", "octorun-set-"}) {
    test::set(d, "/spec/runnerLabels/1", std::string(reserved));
    EXPECT_EQ(only_error(validate_set(d)),
              "spec.runnerLabels[1]: \"" + std::string(reserved) +
                  "\" is reserved: the manager adds \"octorun-set-<id>\" to every runner a set registers, to "
                  "tell its runners from other sets'");
  }
  test::set(d, "/spec/runnerLabels/1", std::string("octorun-setx"));
  EXPECT_TRUE(validate_set(d).empty()) << "only the prefix is reserved";
}

TEST(ValidateRunnerSet, RequiresARunnerContainer) {
  auto d = doc(test::valid_runnerset_json());
  test::set(d, "/spec/template/spec/containers/0/name", std::string("main"));
  EXPECT_EQ(
      only_error(validate_set(d)),
      "spec.template.spec.containers: must include a container named \"runner\": the manager starts the "
      "GitHub runner in it");
  test::erase(d, "/spec/template");
  EXPECT_NE(only_error(validate_set(d)).find("spec.template.spec.containers: is required"),
            std::string::npos);
}

TEST(ValidateRunnerSet, ChecksContainersAndRestartPolicy) {
  auto d = doc(test::valid_runnerset_json());
  test::set(d, "/spec/template/spec/containers/1/name", std::string("runner"));
  auto errors = validate_set(d);
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0],
            (field_error{"spec.template.spec.containers[1].name", "duplicate container name \"runner\""}));
  EXPECT_EQ(errors[1], (field_error{"spec.template.spec.containers[1].image",
                                    "is required: every container needs an image"}));
  d = doc(test::valid_runnerset_json());
  test::set(d, "/spec/template/spec/restartPolicy", std::string("Always"));
  EXPECT_NE(only_error(validate_set(d)).find("spec.template.spec.restartPolicy: \"Always\" is not allowed"),
            std::string::npos);
}

TEST(ValidateRunnerSet, RejectsNamesWhoseRunnerNamesWouldBeTooLong) {
  auto d = doc(R"({"metadata":{"name":"x"},"spec":{"scopeURL":"https://github.com/acme",
    "credentialsSecretName":"gh","template":{"spec":{"containers":[{"name":"runner","image":"i"}]}}}})");
  test::set(d, "/metadata/name", std::string(60, 'a'));
  EXPECT_EQ(only_error(validate_set(d)),
            "metadata.name: is 3 characters too long: generated Runner names like \"" + std::string(60, 'a') +
                "-xxxxx\" would be 66 characters, over the limit of 63 (they are also Pod names and label "
                "values); shorten the RunnerSet name by 3");
  test::set(d, "/metadata/name", std::string(57, 'a'));
  EXPECT_TRUE(validate_set(d).empty());
}

TEST(ValidateRunnerSet, ChecksGenerateNameToo) {
  auto d = doc(test::valid_runnerset_json());
  test::erase(d, "/metadata/name");
  test::erase(d, "/spec/variants");
  test::set(d, "/metadata/generateName", std::string(55, 'g'));
  EXPECT_NE(only_error(validate_set(d)).find("metadata.generateName: is 3 characters too long"),
            std::string::npos);
}

TEST(ValidateVariants, RejectsDuplicateAndNonDnsNames) {
  auto d = doc(test::valid_runnerset_json());
  test::set(d, "/spec/variants/1/name", std::string("small"));
  auto errors = validate_set(d);
  ASSERT_GE(errors.size(), 1u);
  EXPECT_EQ(errors[0].field, "spec.variants[1].name");
  EXPECT_EQ(errors[0].message, "duplicate variant name \"small\"");
  test::set(d, "/spec/variants/1/name", std::string("Big_One"));
  EXPECT_NE(only_error(validate_set(d)).find("spec.variants[1].name: \"Big_One\" is not a DNS label"),
            std::string::npos);
  test::set(d, "/spec/variants/1/name", std::string(""));
  EXPECT_EQ(only_error(validate_set(d)), "spec.variants[1].name: is required");
}

TEST(ValidateVariants, RejectsVariantNamesWhoseRunnerNamesWouldBeTooLong) {
  auto d = doc(test::valid_runnerset_json());
  test::set(d, "/metadata/name", std::string(40, 'a'));
  test::set(d, "/spec/variants/1/name", std::string(20, 'v'));
  EXPECT_NE(only_error(validate_set(d))
                .find("spec.variants[1].name: is 4 characters too long: generated Runner names like \"" +
                      std::string(40, 'a') + "-" + std::string(20, 'v') +
                      "-xxxxx\" would be 67 characters, over the limit of 63"),
            std::string::npos);
}

TEST(ValidateVariants, ChecksCountsAgainstInheritedBounds) {
  auto d = doc(test::valid_runnerset_json());
  test::set(d, "/spec/variants/0/minRunners", 7);
  EXPECT_EQ(only_error(validate_set(d)),
            "spec.variants[0].minRunners: must not exceed maxRunners inherited from spec.maxRunners (7 > 5)");
  d = doc(test::valid_runnerset_json());
  test::set(d, "/spec/variants/1/minRunners", 3);
  EXPECT_EQ(only_error(validate_set(d)), "spec.variants[1].minRunners: must not exceed maxRunners (3 > 2)");
  d = doc(test::valid_runnerset_json());
  test::set(d, "/spec/variants/0/maxRunners", 0);
  EXPECT_EQ(
      only_error(validate_set(d)),
      "spec.variants[0].maxRunners: must not be below minRunners inherited from spec.minRunners (0 < 1)");
}

TEST(ValidateVariants, ChecksTheOverrideTemplate) {
  auto d = doc(test::valid_runnerset_json());
  test::set(d, "/spec/variants/1/template/spec/containers/0/name", std::string("big"));
  EXPECT_NE(only_error(validate_set(d))
                .find("spec.variants[1].template.spec.containers: must include a container "
                      "named \"runner\""),
            std::string::npos);
}

TEST(ValidateVariants, RejectsVariantsJobsCannotTellApart) {
  auto d = doc(test::valid_runnerset_json());
  test::set(d, "/spec/variants/1/runnerLabels/0", std::string("small"));
  EXPECT_EQ(
      only_error(validate_set(d)),
      "spec.variants[1].runnerLabels: variant \"large\" carries the same runner labels as variant \"small\": "
      "give each variant a label that tells its jobs apart");
}

// A variant's runners carry the set's labels and its own, and those the
// manager adds (the set's label, and under the Listener intake the scale
// set's name): within GitHub's 100 a runner may register.
TEST(ValidateVariants, RejectsMoreLabelsThanGitHubRegisters) {
  auto d = doc(test::valid_runnerset_json());
  auto append = [&](const char* pointer, const std::string& label) {
    rapidjson::Pointer(pointer).Get(d)->PushBack(rapidjson::Value(label.c_str(), d.GetAllocator()).Move(),
                                                 d.GetAllocator());
  };
  rapidjson::Pointer("/spec/intake").Set(d, "Listener");  // as the CRD's default makes it
  for (int i = 0; i < 60; ++i) {
    append("/spec/runnerLabels", "set-" + std::to_string(i));
    append("/spec/variants/1/runnerLabels", "large-" + std::to_string(i));
  }
  EXPECT_EQ(
      only_error(validate_set(d)),
      "spec.variants[1].runnerLabels: with spec.runnerLabels the variant's runners carry 122 labels, and "
      "the manager adds 2: GitHub registers at most 100 on a runner");

  // 99 of their own: one over under the Listener intake, at the limit under the Webhook intake.
  auto edge = doc(test::valid_runnerset_json());
  rapidjson::Pointer("/spec/intake").Set(edge, "Listener");
  for (int i = 0; i < 49; ++i) {
    rapidjson::Pointer("/spec/runnerLabels")
        .Get(edge)
        ->PushBack(rapidjson::Value(("set-" + std::to_string(i)).c_str(), edge.GetAllocator()).Move(),
                   edge.GetAllocator());
    if (i < 48)
      rapidjson::Pointer("/spec/variants/1/runnerLabels")
          .Get(edge)
          ->PushBack(rapidjson::Value(("large-" + std::to_string(i)).c_str(), edge.GetAllocator()).Move(),
                     edge.GetAllocator());
  }
  EXPECT_NE(only_error(validate_set(edge)).find("carry 99 labels, and the manager adds 2"),
            std::string::npos);
  rapidjson::Pointer("/spec/intake").Set(edge, "Webhook");
  EXPECT_TRUE(validate_set(edge).empty()) << only_error(validate_set(edge));
}

TEST(ValidateRunner, AcceptsTheSampleAndChecksItsSpec) {
  auto r = model::parse_runner(doc(test::valid_runner_json()));
  ASSERT_TRUE(r);
  EXPECT_TRUE(validate_runner(*r).empty());
  auto& spec = test::own_spec(*r);
  spec.scope_url = "https://github.com";
  spec.template_.containers[0].name = "x";
  auto errors = validate_runner(*r);
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0].field, "spec.scopeURL");
  EXPECT_EQ(errors[1].field, "spec.template.spec.containers");
}

TEST(ValidateRunner, RejectsNamesOverTheLabelLimit) {
  auto r = model::parse_runner(doc(test::valid_runner_json()));
  ASSERT_TRUE(r);
  r->metadata.name = std::string(64, 'r');
  EXPECT_EQ(
      only_error(validate_runner(*r)),
      "metadata.name: is 1 character too long: a Runner name is also its Pod name and a label value, at "
      "most 63");
}

TEST(ValidateRunnerUpdate, AllowsMetadataAndStatusChanges) {
  auto before = doc(test::valid_runner_json());
  auto after = doc(test::valid_runner_json());
  test::set(after, "/metadata/labels/extra", std::string("x"));
  test::set(after, "/metadata/annotations/note", std::string("y"));
  test::set(after, "/status/phase", std::string("Running"));
  EXPECT_TRUE(validate_runner_update(before, after).empty());
}

TEST(ValidateRunnerUpdate, RejectsAnySpecChangeNamingTheField) {
  auto before = doc(test::valid_runner_json());
  auto after = doc(test::valid_runner_json());
  test::set(after, "/spec/template/spec/containers/0/image", std::string("other"));
  test::set(after, "/spec/runnerGroup", std::string("gpu"));
  auto errors = validate_runner_update(before, after);
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0].field, "spec.runnerGroup");
  EXPECT_EQ(errors[1].field, "spec.template");
  EXPECT_NE(errors[0].message.find("is immutable"), std::string::npos);
  test::erase(after, "/spec");
  errors = validate_runner_update(before, after);
  EXPECT_FALSE(errors.empty());
}

TEST(Summarize, JoinsErrorsForTheUser) {
  EXPECT_EQ(summarize("RunnerSet", "ci", {{"spec.a", "x"}, {"spec.b", "y"}}),
            "RunnerSet \"ci\" is invalid: spec.a: x; spec.b: y");
}

}  // namespace
}  // namespace octorun::admission
