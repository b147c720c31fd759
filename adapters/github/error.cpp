#include "adapters/github/error.hpp"

namespace octorun::github {

const char* to_string(error_kind k) {
  switch (k) {
    case error_kind::busy:
      return "busy";
    case error_kind::conflict:
      return "conflict";
    case error_kind::unauthorized:
      return "unauthorized";
    case error_kind::rate_limited:
      return "rate_limited";
    case error_kind::not_found:
      return "not_found";
    case error_kind::rejected:
      return "rejected";
    case error_kind::server_error:
      return "server_error";
    case error_kind::transport:
      return "transport";
    case error_kind::bad_response:
      return "bad_response";
    case error_kind::not_ready:
      return "not_ready";
  }
  return "unknown";
}

std::string error::describe() const {
  std::string out = to_string(kind);
  if (status != 0) out += " (HTTP " + std::to_string(status) + ")";
  if (!message.empty()) out += ": " + message;
  if (kind == error_kind::rate_limited) out += " retry after " + std::to_string(retry_after.count()) + "s";
  return out;
}

}  // namespace octorun::github
