#include "model/runner_version.hpp"

#include <algorithm>

#include "common/rfc3339.hpp"
#include "common/strings.hpp"

namespace octorun::model {
namespace {

constexpr std::size_t max_component_digits = 6;
// How much of a termination message is searched (the kubelet keeps 4 KiB).
constexpr std::size_t max_message_scan = 4096;

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Reads one component at `s`, advancing it; nullopt if it is not 1 to 6 digits.
std::optional<std::uint32_t> component(std::string_view& s) {
  std::size_t n = 0;
  while (n < s.size() && is_digit(s[n])) ++n;
  if (n == 0 || n > max_component_digits) return std::nullopt;
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < n; ++i) v = v * 10 + static_cast<std::uint32_t>(s[i] - '0');
  s.remove_prefix(n);
  return v;
}

// A version at the start of `s` ("v" optional), advancing `s` past it.
std::optional<runner_version> leading_version(std::string_view& s) {
  if (!s.empty() && s.front() == 'v') s.remove_prefix(1);
  runner_version v;
  std::uint32_t* parts[] = {&v.major, &v.minor, &v.patch};
  for (std::size_t i = 0; i < 3; ++i) {
    if (i > 0) {
      if (s.empty() || s.front() != '.') return std::nullopt;
      s.remove_prefix(1);
    }
    auto c = component(s);
    if (!c) return std::nullopt;
    *parts[i] = *c;
  }
  return v;
}

std::string date_of(std::int64_t epoch) { return format_rfc3339(epoch).substr(0, 10); }

std::string of_variant(const version_facts& f) {
  return f.variant.empty() ? std::string("The runners") : "The runners of variant " + f.variant;
}

// The image as a tenant wrote it, fit for a message.
std::string image_of(const version_facts& f) { return printable_excerpt(f.image, 256); }

// How bad each health is, for the set's condition: the worst one speaks.
int severity(version_health h) {
  switch (h) {
    case version_health::current:
      return 0;
    case version_health::update_available:
      return 1;
    case version_health::unknown:
      return 2;
    case version_health::window_ending:
      return 3;
    case version_health::behind_minimum:
      return 4;
    case version_health::deprecated:
      return 5;
  }
  return 2;
}

version_verdict verdict(version_health h, std::string reason, std::string message) {
  version_verdict v;
  v.health = h;
  v.reason = std::move(reason);
  v.message = std::move(message);
  return v;
}

}  // namespace

std::string runner_version::to_string() const {
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

std::optional<runner_version> parse_runner_version(std::string_view text) {
  auto v = leading_version(text);
  if (!v || !text.empty()) return std::nullopt;
  return v;
}

std::optional<runner_version> version_of_image(std::string_view image) {
  if (auto at = image.find('@'); at != std::string_view::npos) image = image.substr(0, at);
  const auto slash = image.rfind('/');
  const auto colon = image.rfind(':');
  if (colon == std::string_view::npos || (slash != std::string_view::npos && colon < slash))
    return std::nullopt;  // no tag (a registry's port is before the last '/')
  auto tag = image.substr(colon + 1);
  auto v = leading_version(tag);
  if (!v || (!tag.empty() && tag.front() != '-')) return std::nullopt;
  return v;
}

std::optional<runner_version> deprecated_version_in(std::string_view text) {
  text = text.substr(0, std::min(text.size(), max_message_scan));
  constexpr std::string_view lead = "Runner version ";
  constexpr std::string_view tail = " is deprecated";
  for (auto at = text.find(lead); at != std::string_view::npos; at = text.find(lead, at + 1)) {
    auto rest = text.substr(at + lead.size());
    auto v = leading_version(rest);
    if (v && rest.starts_with(tail)) return v;
  }
  return std::nullopt;
}

std::string_view to_string(version_health h) {
  switch (h) {
    case version_health::current:
      return "current";
    case version_health::update_available:
      return "update_available";
    case version_health::unknown:
      return "unknown";
    case version_health::window_ending:
      return "window_ending";
    case version_health::behind_minimum:
      return "behind_minimum";
    case version_health::deprecated:
      return "deprecated";
  }
  return "unknown";
}

version_verdict judge_runner_version(const version_facts& f) {
  const auto running = f.reported ? f.reported : f.running;
  const bool newer_latest = f.latest && (!running || f.latest->version > *running);
  version_verdict v;
  if (f.deprecated_exit) {
    std::optional<runner_version> to;
    if (newer_latest)
      to = f.latest->version;
    else if (!running || *running < registration_minimum)
      to = registration_minimum;
    const auto was = running ? "runner v" + running->to_string() : std::string("its runner version");
    v = verdict(
        version_health::deprecated, "RunnerDeprecated",
        std::string(f.variant.empty() ? "A runner" : "A runner of variant " + f.variant) + " (image " +
            image_of(f) + ") exited as deprecated: GitHub refuses " + was +
            ". No new runners are made for it until its template names a newer runner image" +
            (to ? ", v" + to->to_string() + (newer_latest ? " (the latest release)" : "") + " or later"
                : std::string()) +
            ".");
    v.move_to = to;
  } else if (!running) {
    v = verdict(version_health::unknown, "VersionUnknown",
                of_variant(f) + " run image " + image_of(f) +
                    ", whose tag names no runner version (name one, e.g. ghcr.io/actions/actions-runner:" +
                    (f.latest ? f.latest->version.to_string() : registration_minimum.to_string()) + ").");
  } else if (*running < registration_minimum) {
    const auto to = newer_latest ? f.latest->version : registration_minimum;
    v = verdict(version_health::behind_minimum, "BelowMinimum",
                of_variant(f) + " run v" + running->to_string() + ", older than v" +
                    registration_minimum.to_string() +
                    ", the oldest GitHub lets register: update the image to v" + to.to_string() + ".");
    v.move_to = to;
  } else if (!f.latest) {
    v = verdict(
        version_health::unknown, "LatestReleaseUnknown",
        of_variant(f) + " run v" + running->to_string() +
            "; GitHub's latest runner release is not known (yet), so its update window is not either.");
  } else if (!newer_latest) {
    v = verdict(version_health::current, "Current",
                of_variant(f) + " run v" + running->to_string() + ", the latest runner release.");
  } else {
    // Untrusted publication times: none, or one in the future, start the window now.
    const auto published = f.latest->published_at;
    const bool believable = published > 0 && published <= f.now + release_time_skew_seconds;
    const auto deadline = (believable ? std::min(published, f.now) : f.now) + update_window_seconds;
    const auto latest = "v" + f.latest->version.to_string();
    const auto base = of_variant(f) + " run v" + running->to_string() + "; " + latest + " was released" +
                      (believable ? " on " + date_of(published) : std::string()) + ". ";
    if (believable && f.now >= deadline)
      v = verdict(version_health::behind_minimum, "UpdateWindowPassed",
                  base + "GitHub expects each release within 30 days: since " + date_of(deadline) +
                      " it may refuse these runners. Update the image to " + latest + ".");
    else if (believable && deadline - f.now <= update_warning_seconds)
      v = verdict(version_health::window_ending, "UpdateWindowEnding",
                  base + "Update the image to " + latest + " before " + date_of(deadline) +
                      ", when GitHub may stop taking older runners.");
    else
      v = verdict(
          version_health::update_available, "UpdateAvailable",
          base + "Update the image to " + latest + (believable ? " before " + date_of(deadline) : "") + ".");
    v.move_to = f.latest->version;
    if (believable) v.update_deadline = deadline;
  }
  v.running = running;
  return v;
}

version_condition runner_version_condition(const std::vector<version_verdict>& verdicts) {
  if (verdicts.empty()) return {"Unknown", "VersionUnknown", "No variant to judge."};
  const auto worst = std::max_element(verdicts.begin(), verdicts.end(), [](const auto& a, const auto& b) {
    return severity(a.health) < severity(b.health);
  });
  version_condition c;
  c.reason = worst->reason;
  c.message = worst->message;
  const auto s = severity(worst->health);
  c.status = s <= severity(version_health::update_available) ? "True"
             : worst->health == version_health::unknown      ? "Unknown"
                                                             : "False";
  const auto others = std::count_if(verdicts.begin(), verdicts.end(), [&](const auto& v) {
    return &v != &*worst && severity(v.health) > severity(version_health::update_available);
  });
  if (others > 0)
    c.message += " " + std::to_string(others) +
                 (others == 1 ? " more variant needs" : " more variants need") +
                 " attention (octorun_runner_version_health).";
  return c;
}

}  // namespace octorun::model
