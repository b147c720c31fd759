// The version of the GitHub Actions runner a variant runs, and whether
// GitHub still takes it (docs/monitoring.md, "Runner version"). Pure: the
// caller passes what it observed (the runner container's image, GitHub's
// latest release, a runner that exited as deprecated) and the time.
//
// GitHub's rules (docs.github.com and its changelog; the facts and sources
// are in docs/monitoring.md): a runner older than a minimum cannot register,
// and each new release must be installed within 30 days of its publication,
// after which GitHub refuses the older runners ("Runner version vX is
// deprecated and cannot receive messages"). Runners the manager starts are
// JIT runners with updates disabled: they never update themselves, so a
// variant keeps the version of its image until its template changes.
//
// Everything here may come from a hostile source (a tag in a tenant's
// template, an answer of a "GitHub" the set points at, a pod's termination
// message): versions are three bounded numbers, anything else is no version.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace octorun::model {

struct runner_version {
  std::uint32_t major = 0;
  std::uint32_t minor = 0;
  std::uint32_t patch = 0;
  auto operator<=>(const runner_version&) const = default;
  std::string to_string() const;  // "2.330.0"
};

// "2.330.0" or "v2.330.0": three numbers of at most 6 digits each, and
// nothing else. nullopt for anything that is not exactly that.
std::optional<runner_version> parse_runner_version(std::string_view text);

// The version an image's tag names: "ghcr.io/actions/actions-runner:2.330.0",
// also with a suffix after '-' ("2.330.0-ubuntu-22.04") or a digest after it.
// nullopt: no tag (a digest only), or a tag that names no version ("latest", "2").
std::optional<runner_version> version_of_image(std::string_view image);

// The version a runner names in the line it prints when GitHub refuses it as
// too old ("Runner version v2.296.2 is deprecated and cannot receive
// messages."), found in a pod's termination message; nullopt when the text
// has no such line. Only the first few KiB are read.
std::optional<runner_version> deprecated_version_in(std::string_view text);

// GitHub's newest runner release (GET /repos/actions/runner/releases/latest).
struct runner_release {
  runner_version version;
  std::int64_t published_at = 0;  // seconds since the epoch; 0: not said
  bool operator==(const runner_release&) const = default;
};

// The oldest runner GitHub lets register (configure or re-register), as
// GitHub announced when it resumed enforcing versions.
inline constexpr runner_version registration_minimum{2, 329, 0};
// Each release must be installed within this long of its publication.
inline constexpr std::int64_t update_window_seconds = 30 * 24 * 3600;
// The condition warns this long before the window ends.
inline constexpr std::int64_t update_warning_seconds = 7 * 24 * 3600;
// A publication time further in the future than this is not believed (a
// clock a little ahead is; a hostile answer is not): the window is then
// taken to start now.
inline constexpr std::int64_t release_time_skew_seconds = 24 * 3600;

enum class version_health {
  current,           // the latest release, or newer
  update_available,  // older than the latest, well inside its update window
  unknown,           // the variant's version, or the latest release, is not known
  window_ending,     // older than the latest, whose update window ends within update_warning_seconds
  behind_minimum,    // older than the registration minimum, or the latest's window has passed
  deprecated,        // a runner made from the variant's current template exited as deprecated
};
std::string_view to_string(version_health h);  // "current", "update_available", ...

// What one variant's version is judged from.
struct version_facts {
  std::string variant;                     // "" for a set without variants (messages only)
  std::string image;                       // the runner container's image (messages only)
  std::optional<runner_version> running;   // what the variant runs
  std::optional<runner_release> latest;    // GitHub's latest release, if known
  bool deprecated_exit = false;            // a runner of the current template exited as deprecated
  std::optional<runner_version> reported;  // the version that runner named, if it did
  std::int64_t now = 0;                    // seconds since the epoch
};

struct version_verdict {
  version_health health = version_health::unknown;
  std::string reason;   // the condition's reason: Current, UpdateAvailable, ...
  std::string message;  // for people: the variant, its version, the version to move to, the deadline
  std::optional<runner_version> running;  // facts.reported, else facts.running
  std::optional<runner_version> move_to;  // the version to update to (none: nothing to do, or not known)
  std::int64_t update_deadline = 0;       // when the latest's window ends (0: none that applies)
  bool blocks_new_runners() const { return health == version_health::deprecated; }
  bool operator==(const version_verdict&) const = default;
};

version_verdict judge_runner_version(const version_facts& f);

// The RunnerSet's RunnerVersionCurrent condition from its variants'
// verdicts (status, reason, message; no time: set_condition adds it): the
// worst variant's reason and message, and how many more share a problem.
// True: every variant current or with an update available; Unknown: the
// worst is unknown; False: a variant is deprecated, behind the minimum or
// near the end of its window. No verdict at all: Unknown.
struct version_condition {
  std::string status;
  std::string reason;
  std::string message;
};
version_condition runner_version_condition(const std::vector<version_verdict>& verdicts);

}  // namespace octorun::model
