#include "adapters/github/caller.hpp"

#include <random>
#include <thread>

#include "common/json.hpp"
#include "common/json_parse.hpp"
#include "common/strings.hpp"

namespace octorun::github {

namespace {

// A proxy's refusal of a plain-HTTP request comes as a response: never GitHub's.
constexpr long proxy_authentication_required = 407;

std::string describe(const http::transport_error& e) {
  switch (e.cause) {
    case http::transport_cause::tls:
      return "TLS: " + e.message +
             " (trust the server's CA with the RunnerClass's spec.github.caBundle (a set served without a "
             "class: its spec.caBundle), or for every set with the chart value extraCABundle (flag "
             "--github-ca-file))";
    case http::transport_cause::proxy:
      return "proxy: " + e.message;
    case http::transport_cause::network:
    case http::transport_cause::refused:
      break;
  }
  return e.message;
}

}  // namespace

api_caller::api_caller(call_options options) : options_(std::move(options)), client_(options_.tls) {
  client_.set_plain_http(options_.plain_http);
  if (options_.proxy) client_.set_proxy(*options_.proxy);
  if (!options_.sleep) options_.sleep = [](std::chrono::milliseconds d) { std::this_thread::sleep_for(d); };
  if (!options_.now)
    options_.now = [] {
      return std::chrono::duration_cast<std::chrono::seconds>(
                 std::chrono::system_clock::now().time_since_epoch())
          .count();
    };
  if (!options_.jitter) {
    auto rng = std::make_shared<std::mt19937_64>(std::random_device{}());
    options_.jitter = [rng] { return std::uniform_real_distribution<double>(0.0, 1.0)(*rng); };
  }
}

result<http::response> api_caller::perform(http::request req, const authorizer& auth) {
  if (req.timeout.count() == 0) req.timeout = options_.timeout;
  bool has_ua = false;
  for (auto& [k, v] : req.headers) has_ua = has_ua || k == "User-Agent";
  if (!has_ua) req.headers.emplace_back("User-Agent", options_.user_agent);
  const auto base_headers = req.headers;
  bool refreshed = false;
  for (int attempt = 0;; ++attempt) {
    req.headers = base_headers;
    if (auth) {
      auto value = auth(false);
      if (!value) return unexpected{value.error()};
      req.headers.emplace_back("Authorization", *value);
    }
    ++attempts_;
    auto resp = client_.perform(req);
    auto observe = [&](long status, const rate_limit_info& rate) {
      if (options_.observer) options_.observer->observe(endpoint_of(req.method, req.url), status, rate);
    };
    if (!resp) {
      observe(0, {});
      if (resp.error().aborted)  // the owner asked to stop: never retried
        return unexpected{error{error_kind::transport, 0, "cancelled: " + resp.error().message}};
      const auto why = describe(resp.error());
      // A certificate or a proxy's refusal stays until the configuration changes: not retried.
      if (resp.error().cause != http::transport_cause::network) {
        if (options_.health) options_.health->record_problem(why);
        return unexpected{error{error_kind::transport, 0, why}};
      }
      auto d = decide_retry(options_.retry, attempt, nullptr, now(), options_.jitter());
      if (d.retry && d.wait <= options_.retry.max_blocking_wait) {
        options_.sleep(d.wait);
        continue;
      }
      return unexpected{error{error_kind::transport, 0, why}};
    }
    if (resp->status == proxy_authentication_required) {
      observe(resp->status, {});
      const std::string why =
          "proxy: the proxy answered HTTP 407 Proxy Authentication Required: its credentials are missing or "
          "wrong";
      if (options_.health) options_.health->record_problem(why);
      return unexpected{error{error_kind::transport, 407, why}};
    }
    if (options_.health) options_.health->record_response();
    last_ = parse_rate_limit(*resp);
    observe(resp->status, last_);
    if (options_.budget) {
      options_.budget->record(last_);
      if (is_rate_limit_response(*resp)) options_.budget->rate_limited_responses++;
    }
    if (resp->status == 401 && auth && !refreshed) {
      refreshed = true;
      auto value = auth(true);
      if (!value) return unexpected{value.error()};
      --attempt;  // a refresh is not a failed attempt
      continue;
    }
    auto d = decide_retry(options_.retry, attempt, &*resp, now(), options_.jitter());
    if (d.retry && d.wait <= options_.retry.max_blocking_wait) {
      options_.sleep(d.wait);
      continue;
    }
    return std::move(*resp);
  }
}

result<rapidjson::Document> json_object(const http::response& r) {
  auto d = json::parse(r.body, json::sources::github_response);
  if (!d) return unexpected{error{error_kind::bad_response, r.status, "response: " + d.error()}};
  if (!d->IsObject())
    return unexpected{error{error_kind::bad_response, r.status, "response is not a JSON object"}};
  return std::move(*d);
}

std::string error_message(const http::response& r) {
  // Only GitHub's own words, bounded and printable: the body of a response
  // from whatever answered (a proxy's page, a file a URL pointed at) never
  // reaches an Event or a condition.
  auto d = json::parse(r.body, json::sources::github_response);
  std::string said;
  if (d && d->IsObject()) {
    auto msg = json::str(*d, "message");
    auto type = json::str(*d, "typeName");
    said = type.empty() ? msg : msg.empty() ? type : type + ": " + msg;
  } else if (d && d->IsString()) {
    said.assign(d->GetString(), d->GetStringLength());
  }
  if (!said.empty()) return printable_excerpt(said, max_error_message_bytes);
  auto type = printable_excerpt(r.header_value("content-type"), 64);
  return "HTTP " + std::to_string(r.status) + " without a GitHub error message (" +
         (type.empty() ? std::string() : type + " ") + "body of " + std::to_string(r.body.size()) + " bytes)";
}

std::string error_type_name(const http::response& r) {
  auto d = json::parse(r.body, json::sources::github_response);
  if (!d || !d->IsObject()) return {};
  return json::str(*d, "typeName");
}

error error_from_response(const http::response& r, std::int64_t now_epoch, const retry_policy& p) {
  error e;
  e.status = r.status;
  e.message = error_message(r);
  if (is_rate_limit_response(r)) {
    e.kind = error_kind::rate_limited;
    auto info = parse_rate_limit(r);
    e.reset_epoch = info.reset_epoch;
    if (auto after = http::retry_after_seconds(r.header_value("retry-after"), now_epoch))
      e.retry_after = std::chrono::seconds(*after);
    else if (info.remaining == 0 && info.reset_epoch > now_epoch)
      e.retry_after = std::chrono::seconds(info.reset_epoch - now_epoch);
    else
      e.retry_after = std::chrono::duration_cast<std::chrono::seconds>(p.secondary_min);
    return e;
  }
  switch (r.status) {
    case 401:
      e.kind = error_kind::unauthorized;
      break;
    case 404:
      e.kind = error_kind::not_found;
      break;
    case 409:
      e.kind = error_kind::conflict;
      break;
    default:
      if (r.status >= 500)
        e.kind = error_kind::server_error;
      else if (r.status >= 400)
        e.kind = error_kind::rejected;
      else
        e.kind = error_kind::bad_response;
  }
  return e;
}

}  // namespace octorun::github
