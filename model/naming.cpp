#include "model/naming.hpp"

#include <cstdio>

#include "common/hash.hpp"
#include "common/strings.hpp"

namespace octorun::model {
namespace {

bool alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

}  // namespace

bool is_dns_label(std::string_view s) {
  if (s.empty() || s.size() > max_dns_label) return false;
  if (!alnum(s.front()) || !alnum(s.back())) return false;
  for (char c : s)
    if (!alnum(c) && c != '-') return false;
  return true;
}

bool is_dns_subdomain(std::string_view s) {
  if (s.empty() || s.size() > max_dns_subdomain) return false;
  std::size_t start = 0;
  for (;;) {
    auto dot = s.find('.', start);
    auto part = s.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    // Subdomain labels follow the label rule without its 63-character cap.
    if (part.empty() || !alnum(part.front()) || !alnum(part.back())) return false;
    for (char c : part)
      if (!alnum(c) && c != '-') return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

std::string runner_name_prefix(std::string_view set, std::string_view variant) {
  std::string out(set);
  out += '-';
  if (!variant.empty()) {
    out += variant;
    out += '-';
  }
  return out;
}

std::string runner_name(std::string_view set, std::string_view variant, std::string_view suffix) {
  return runner_name_prefix(set, variant) + std::string(suffix);
}

std::string pod_name(std::string_view runner) { return std::string(runner); }

std::string jit_secret_name(std::string_view runner) { return std::string(runner) + "-jit"; }

std::string credentials_finalizer(std::string_view set) { return "runnerset.octorun.io/" + std::string(set); }

std::string runner_service_account_name(std::string_view set) { return "octorun-runner-" + std::string(set); }

std::string hooks_role_binding_name(std::string_view set) { return "octorun-hooks-" + std::string(set); }

std::string busy_runners_pdb_name(std::string_view set) { return "octorun-busy-" + std::string(set); }

std::string manager_reads_role_binding_name(std::string_view set) {
  return "octorun-reads-" + std::string(set);
}

std::string registering_set_label(std::string_view set_uid) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(fnv1a(set_uid)));
  return std::string(registering_set_label_prefix) + hex;
}

bool is_registering_set_label(std::string_view label) {
  return ascii_iequals(label.substr(0, registering_set_label_prefix.size()), registering_set_label_prefix);
}

std::string selector(std::string_view set) { return std::string(label_runnerset) + "=" + std::string(set); }

std::optional<name_overflow> generated_name_overflow(std::string_view set, std::string_view variant) {
  // The Runner name is the binding constraint: it is also the Pod name and the
  // value of the octorun.io/runner label (63). The Secret name adds 4 but is a
  // DNS subdomain (253), which the 63 limit already keeps it under.
  auto longest = runner_name(set, variant, std::string(runner_suffix_length, 'x'));
  if (longest.size() <= max_label_value) return std::nullopt;
  return name_overflow{longest, longest.size(), max_label_value};
}

}  // namespace octorun::model
