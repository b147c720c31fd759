// libFuzzer target: a GitHub REST response, as the REST client reads it. The
// first byte picks the status and content type; the rest is the body. It
// reaches json_object (json::parse's limits), the runner and workflow-job
// readers, and the error path whose text may reach an Event: that text must
// stay GitHub's own message, bounded and printable, whatever the body.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "adapters/github/caller.hpp"
#include "adapters/github/rest_client.hpp"
#include "common/json.hpp"

namespace {

constexpr long statuses[] = {200, 201, 401, 403, 404, 409, 422, 429, 500, 502};

// An error's text is at most the message bound plus our own words around it,
// with no control character.
void check_printable(const std::string& text) {
  if (text.size() > octorun::github::max_error_message_bytes + 200) __builtin_trap();
  for (unsigned char c : text)
    if (c < 0x20 || c == 0x7F) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace octorun::github;
  if (size == 0) return 0;
  octorun::http::response r;
  r.status = statuses[data[0] % std::size(statuses)];
  if (data[0] & 0x80) r.headers.emplace_back("content-type", "text/html; charset=\x01utf-8");
  r.body.assign(reinterpret_cast<const char*>(data) + 1, size - 1);

  if (auto d = json_object(r)) {
    std::size_t n = parse_runner(*d).labels.size();
    for (const char* list : {"runners", "jobs", "workflow_runs", "runner_groups"})
      if (const auto* items = octorun::json::member(*d, list); items != nullptr && items->IsArray())
        for (const auto& item : items->GetArray()) {
          n += parse_runner(item).name.size();
          n += parse_workflow_job_item(item, "o/r").labels.size();
        }
    (void)octorun::json::canonical(*d);  // a recursive walk: bounded by json::max_depth
    (void)n;
  }
  check_printable(error_message(r));
  (void)error_type_name(r);
  check_printable(error_from_response(r, 1'700'000'000, {}).describe());
  return 0;
}
