// model/runner_version.hpp: versions from tags, releases and termination
// messages (hostile ones too), and the verdict on a variant's version:
// current, an update available, the 30-day window ending or passed, below
// GitHub's registration minimum, a deprecated exit seen; and the set's
// RunnerVersionCurrent condition over its variants.
#include "model/runner_version.hpp"

#include <gtest/gtest.h>

#include <string>

namespace octorun::model {
namespace {

constexpr std::int64_t day = 24 * 3600;
constexpr std::int64_t t0 = 1'780'000'000;  // a moment in 2026

runner_version v(std::uint32_t a, std::uint32_t b, std::uint32_t c) { return {a, b, c}; }

TEST(RunnerVersion, ParsesThreeBoundedNumbersWithAnOptionalV) {
  EXPECT_EQ(parse_runner_version("2.330.0"), v(2, 330, 0));
  EXPECT_EQ(parse_runner_version("v2.331.12"), v(2, 331, 12));
  EXPECT_EQ(parse_runner_version("999999.999999.999999"), v(999999, 999999, 999999));
  EXPECT_EQ(v(2, 330, 0).to_string(), "2.330.0");
  EXPECT_LT(v(2, 9, 0), v(2, 10, 0));
  EXPECT_LT(v(2, 330, 0), v(2, 330, 1));
}

TEST(RunnerVersion, RefusesAnythingElse) {
  for (const char* bad : {"",
                          "v",
                          "2",
                          "2.330",
                          "2.330.0.1",
                          "2.330.0 ",
                          " 2.330.0",
                          "V2.330.0",
                          "vv2.330.0",
                          "2..0",
                          "2.330.x",
                          "-2.330.0",
                          "+2.330.0",
                          "2.330.0-beta",
                          "1234567.0.0",
                          "4294967296.0.0",
                          "0x2.1.1",
                          "2.330.0\n",
                          "２.330.0",
                          "latest",
                          "../../etc/passwd"})
    EXPECT_EQ(parse_runner_version(bad), std::nullopt) << bad;
  EXPECT_EQ(parse_runner_version(std::string("2.330.0\0", 8)), std::nullopt);
  EXPECT_EQ(parse_runner_version(std::string(100000, '9')), std::nullopt);
}

TEST(RunnerVersion, ReadsTheTagOfAnImage) {
  EXPECT_EQ(version_of_image("ghcr.io/actions/actions-runner:2.330.0"), v(2, 330, 0));
  EXPECT_EQ(version_of_image("ghcr.io/actions/actions-runner:v2.331.0"), v(2, 331, 0));
  EXPECT_EQ(version_of_image("registry.local:5000/ci/runner:2.330.0-ubuntu-22.04"), v(2, 330, 0));
  EXPECT_EQ(version_of_image("ghcr.io/actions/actions-runner:2.330.0@sha256:abcd"), v(2, 330, 0));
  for (const char* none :
       {"ghcr.io/actions/actions-runner", "ghcr.io/actions/actions-runner:latest",
        "ghcr.io/actions/actions-runner:2", "ghcr.io/actions/actions-runner@sha256:abcd",
        "registry.local:5000/runner", "runner:2.330.0rc1", "runner:2.330.0.7", ":", "", "runner:", "a:b:c"})
    EXPECT_EQ(version_of_image(none), std::nullopt) << none;
}

TEST(RunnerVersion, FindsTheVersionARunnerNamesWhenItIsRefused) {
  const std::string log =
      "Current runner version: '2.296.2'\n2022-11-04 09:48:25Z: Listening for Jobs\n"
      "An error occurred: Runner version v2.296.2 is deprecated and cannot receive messages.\n"
      "Runner listener exit with terminated error, stop the service, no retry needed.\n";
  EXPECT_EQ(deprecated_version_in(log), v(2, 296, 2));
  EXPECT_EQ(deprecated_version_in("Runner version 2.300.0 is deprecated"), v(2, 300, 0));
  for (const char* none : {"", "Runner version v2.296.2 is fine", "Runner version vX is deprecated",
                           "Runner version v2.296 is deprecated", "Runner version v1234567.0.0 is deprecated",
                           "runner version v2.296.2 is deprecated", "Runner version "})
    EXPECT_EQ(deprecated_version_in(none), std::nullopt) << none;
  // Past the bytes the kubelet keeps: not read.
  EXPECT_EQ(deprecated_version_in(std::string(8192, 'x') + "Runner version v2.296.2 is deprecated"),
            std::nullopt);
  // Repeated near-misses before the real line.
  std::string many;
  for (int i = 0; i < 100; ++i) many += "Runner version v2.";
  EXPECT_EQ(deprecated_version_in(many + "Runner version v2.1.1 is deprecated"), v(2, 1, 1));
}

version_facts facts(std::optional<runner_version> running, std::optional<runner_release> latest,
                    std::int64_t now = t0) {
  version_facts f;
  f.variant = "large";
  f.image = "ghcr.io/actions/actions-runner:x";
  f.running = running;
  f.latest = latest;
  f.now = now;
  return f;
}

TEST(RunnerVersionVerdict, TheLatestReleaseOrNewerIsCurrent) {
  for (auto running : {v(2, 331, 0), v(2, 332, 0)}) {
    auto verdict = judge_runner_version(facts(running, runner_release{v(2, 331, 0), t0 - 40 * day}));
    EXPECT_EQ(verdict.health, version_health::current);
    EXPECT_EQ(verdict.reason, "Current");
    EXPECT_EQ(verdict.move_to, std::nullopt);
    EXPECT_EQ(verdict.update_deadline, 0);
    EXPECT_FALSE(verdict.blocks_new_runners());
  }
}

TEST(RunnerVersionVerdict, AnOlderVersionHasThirtyDaysWarnedInTheLastSeven) {
  const runner_release latest{v(2, 331, 0), t0};
  auto at = [&](std::int64_t now) { return judge_runner_version(facts(v(2, 330, 0), latest, now)); };
  auto early = at(t0 + 1 * day);
  EXPECT_EQ(early.health, version_health::update_available);
  EXPECT_EQ(early.reason, "UpdateAvailable");
  EXPECT_EQ(early.move_to, v(2, 331, 0));
  EXPECT_EQ(early.update_deadline, t0 + 30 * day);
  EXPECT_NE(early.message.find("v2.331.0"), std::string::npos) << early.message;
  EXPECT_NE(early.message.find("variant large"), std::string::npos) << early.message;

  EXPECT_EQ(at(t0 + 22 * day).health, version_health::update_available);
  auto late = at(t0 + 23 * day);
  EXPECT_EQ(late.health, version_health::window_ending);
  EXPECT_EQ(late.reason, "UpdateWindowEnding");
  auto passed = at(t0 + 30 * day);
  EXPECT_EQ(passed.health, version_health::behind_minimum);
  EXPECT_EQ(passed.reason, "UpdateWindowPassed");
  EXPECT_EQ(passed.move_to, v(2, 331, 0));
  // The message names a date, not a countdown: the same facts a day apart
  // say the same (one status write, one Event).
  EXPECT_EQ(at(t0 + 2 * day).message, early.message);
  EXPECT_FALSE(passed.blocks_new_runners()) << "only a runner that exited deprecated stops new runners";
}

TEST(RunnerVersionVerdict, BelowTheRegistrationMinimumIsBehindWhateverTheLatest) {
  auto verdict = judge_runner_version(facts(v(2, 320, 0), std::nullopt));
  EXPECT_EQ(verdict.health, version_health::behind_minimum);
  EXPECT_EQ(verdict.reason, "BelowMinimum");
  EXPECT_EQ(verdict.move_to, registration_minimum);
  verdict = judge_runner_version(facts(v(2, 320, 0), runner_release{v(2, 331, 0), t0}));
  EXPECT_EQ(verdict.move_to, v(2, 331, 0));
}

TEST(RunnerVersionVerdict, UnknownVersionsAreUnknownNotAProblem) {
  auto no_tag = judge_runner_version(facts(std::nullopt, runner_release{v(2, 331, 0), t0}));
  EXPECT_EQ(no_tag.health, version_health::unknown);
  EXPECT_EQ(no_tag.reason, "VersionUnknown");
  EXPECT_NE(no_tag.message.find("actions-runner:2.331.0"), std::string::npos) << no_tag.message;
  auto no_latest = judge_runner_version(facts(v(2, 330, 0), std::nullopt));
  EXPECT_EQ(no_latest.health, version_health::unknown);
  EXPECT_EQ(no_latest.reason, "LatestReleaseUnknown");
}

TEST(RunnerVersionVerdict, ADeprecatedExitBlocksNewRunnersAndNamesTheVersionToMoveTo) {
  auto f = facts(v(2, 330, 0), runner_release{v(2, 331, 0), t0 - day});
  f.deprecated_exit = true;
  f.reported = v(2, 329, 5);  // what the runner said wins over the tag
  auto verdict = judge_runner_version(f);
  EXPECT_EQ(verdict.health, version_health::deprecated);
  EXPECT_EQ(verdict.reason, "RunnerDeprecated");
  EXPECT_TRUE(verdict.blocks_new_runners());
  EXPECT_EQ(verdict.running, v(2, 329, 5));
  EXPECT_EQ(verdict.move_to, v(2, 331, 0));
  EXPECT_NE(verdict.message.find("v2.331.0 (the latest release) or later"), std::string::npos)
      << verdict.message;
  EXPECT_NE(verdict.message.find("template"), std::string::npos) << verdict.message;
  // Nothing known but the exit: still deprecated, the minimum named.
  auto bare = facts(std::nullopt, std::nullopt);
  bare.deprecated_exit = true;
  auto b = judge_runner_version(bare);
  EXPECT_EQ(b.health, version_health::deprecated);
  EXPECT_EQ(b.move_to, registration_minimum);
}

TEST(RunnerVersionVerdict, AHostileReleaseCannotStopRunnersOrBreakTheWindow) {
  // A release "published" far in the future: the window starts now, no date is believed.
  auto future = judge_runner_version(facts(v(2, 330, 0), runner_release{v(2, 331, 0), t0 + 400 * day}));
  EXPECT_EQ(future.health, version_health::update_available);
  EXPECT_EQ(future.update_deadline, 0);
  // No publication time: the same.
  auto undated = judge_runner_version(facts(v(2, 330, 0), runner_release{v(2, 331, 0), 0}));
  EXPECT_EQ(undated.health, version_health::update_available);
  // An absurd version, published long ago: a problem said, never a block.
  auto absurd = judge_runner_version(facts(v(2, 330, 0), runner_release{v(999999, 0, 0), 1}));
  EXPECT_EQ(absurd.health, version_health::behind_minimum);
  EXPECT_FALSE(absurd.blocks_new_runners());
  // An image tag of control characters and a megabyte: the message stays bounded and printable.
  auto f = facts(std::nullopt, std::nullopt);
  f.image = std::string("evil\n\x1b[31m", 11) + std::string(1 << 20, 'a');
  auto m = judge_runner_version(f).message;
  EXPECT_LT(m.size(), 1024u);
  EXPECT_EQ(m.find('\n'), std::string::npos);
  EXPECT_EQ(m.find('\x1b'), std::string::npos);
}

TEST(RunnerVersionCondition, TheWorstVariantSpeaksAndTheOthersAreCounted) {
  EXPECT_EQ(runner_version_condition({}).status, "Unknown");
  const runner_release latest{v(2, 331, 0), t0};
  auto current = judge_runner_version(facts(v(2, 331, 0), latest));
  auto available = judge_runner_version(facts(v(2, 330, 0), latest, t0 + day));
  auto ending = judge_runner_version(facts(v(2, 330, 0), latest, t0 + 25 * day));
  auto unknown = judge_runner_version(facts(std::nullopt, latest));
  auto c = runner_version_condition({current, available});
  EXPECT_EQ(c.status, "True");
  EXPECT_EQ(c.reason, "UpdateAvailable");
  c = runner_version_condition({current, unknown});
  EXPECT_EQ(c.status, "Unknown");
  c = runner_version_condition({ending, current, ending, unknown});
  EXPECT_EQ(c.status, "False");
  EXPECT_EQ(c.reason, "UpdateWindowEnding");
  EXPECT_NE(c.message.find("2 more variants need attention"), std::string::npos) << c.message;
  c = runner_version_condition({current});
  EXPECT_EQ(c.status, "True");
  EXPECT_EQ(c.reason, "Current");
}

TEST(RunnerVersionHealth, LabelValuesAreFixedWords) {
  for (auto h : {version_health::current, version_health::update_available, version_health::unknown,
                 version_health::window_ending, version_health::behind_minimum, version_health::deprecated})
    EXPECT_NE(to_string(h), "");
  EXPECT_EQ(to_string(version_health::window_ending), "window_ending");
}

}  // namespace
}  // namespace octorun::model
