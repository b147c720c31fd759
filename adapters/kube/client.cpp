#include "adapters/kube/client.hpp"

#include <rapidjson/document.h>

#include <algorithm>
#include <ctime>
#include <thread>
#include <utility>

#include "adapters/http/retry.hpp"
#include "adapters/kube/request_trace.hpp"
#include "common/json.hpp"
#include "common/json_parse.hpp"
#include "common/url.hpp"

namespace octorun::kube {
namespace {

api_error transport(const http::transport_error& e) {
  api_error out;
  out.transport = true;
  out.message = e.message;
  out.reason = e.aborted ? "Cancelled" : (e.timed_out ? "Timeout" : "Transport");
  return out;
}

api_error malformed(std::string what) {
  api_error e;
  e.code = 0;
  e.transport = true;  // the reply was unusable; as good as no reply
  e.reason = "MalformedResponse";
  e.message = std::move(what);
  return e;
}

}  // namespace

client::client(config cfg, client_options opts)
    : cfg_(std::move(cfg)), opts_(std::move(opts)), http_(cfg_.tls) {
  // Plain HTTP only to an API server the kubeconfig names as http:// (a
  // test's loopback apiserver); https otherwise, whatever URL comes later.
  http_.set_plain_http(url_scheme(cfg_.server) == "http");
}

void client::set_cancel_flag(const std::atomic<bool>* flag) {
  cancel_ = flag;
  http_.set_cancel_flag(flag);
}

expected<http::response, api_error> client::send(std::string_view method, std::string path_and_query,
                                                 std::string_view body, std::string_view content_type,
                                                 std::size_t max_body, const http::chunk_sink* sink,
                                                 std::chrono::milliseconds stream_limit,
                                                 std::chrono::milliseconds stream_idle) {
  bool reauthenticated = false;
  // Benchmarks' request timings (request_trace.hpp); watches are not traced.
  const bool traced = sink == nullptr && request_trace::enabled();
  request_trace::timing timing;
  timing.queue = std::exchange(queue_wait_, std::chrono::microseconds(-1));
  timing.sent = std::chrono::system_clock::now();
  auto since = std::chrono::steady_clock::now();
  auto elapsed = [&since] {
    auto now = std::chrono::steady_clock::now();
    return std::chrono::duration_cast<std::chrono::microseconds>(now - std::exchange(since, now));
  };
  auto traced_reply = [&](expected<http::response, api_error> r) {
    if (!traced) return r;
    timing.wire += elapsed();
    timing.method = method;
    timing.path = path_and_query;
    timing.status = r ? r->status : r.error().code;
    request_trace::record(timing);
    return r;
  };
  for (int attempt = 0;; ++attempt) {
    if (cancelled()) return unexpected{transport({"cancelled", false, true})};
    if (opts_.limiter) {
      if (traced) timing.wire += elapsed();
      auto wait = opts_.limiter->reserve();
      if (wait.count() > 0) sleep_unless(cancel_, std::chrono::ceil<std::chrono::milliseconds>(wait));
      if (traced) timing.limiter += elapsed();
    }
    http::request req;
    req.method = std::string(method);
    req.url = cfg_.server + path_and_query;
    req.body = std::string(body);
    req.timeout = sink != nullptr ? stream_limit : opts_.timeout;
    req.max_body_bytes = max_body;
    if (sink != nullptr) req.idle_timeout = stream_idle;
    req.headers.push_back({"Accept", "application/json"});
    req.headers.push_back({"User-Agent", opts_.user_agent});
    if (!body.empty() || method == "POST" || method == "PUT" || method == "PATCH")
      req.headers.push_back({"Content-Type", std::string(content_type)});
    if (cfg_.token) {
      auto token = cfg_.token->token();
      if (!token) {
        api_error e;
        e.code = 0;
        e.reason = "Unauthorized";
        e.message = token.error();
        return unexpected{e};
      }
      req.headers.push_back({"Authorization", "Bearer " + *token});
    }
    const auto started = std::chrono::steady_clock::now();
    auto resp = sink != nullptr ? http_.stream(req, *sink) : http_.perform(req);
    if (opts_.observer)
      opts_.observer->observe(classify_request(method, path_and_query), resp ? resp->status : 0,
                              std::chrono::steady_clock::now() - started);
    if (!resp) return traced_reply(unexpected{transport(resp.error())});
    long status = resp->status;
    if (status == 401 && cfg_.token && !cfg_.token->path().empty() && !reauthenticated) {
      cfg_.token->invalidate();  // a rotated token file: read it again, once
      reauthenticated = true;
      continue;
    }
    // Throttled (429, or a 5xx that says when to come back): the server's
    // advice, within [1 s, max_retry_after]; nothing else is retried here
    // (the callers own their retries: informers relist, actors back off).
    auto retry_after = resp->header_value("retry-after");
    http::attempt_outcome outcome;
    outcome.status = status;
    if (status == 429 || (status >= 500 && !retry_after.empty()))
      outcome.advised_wait = parse_status(status, resp->body, retry_after, std::time(nullptr)).retry_after;
    http::retry_policy throttled_only;
    throttled_only.max_attempts = opts_.max_retries + 1;
    throttled_only.min_advised_wait = std::chrono::seconds(1);
    throttled_only.max_advised_wait = opts_.max_retry_after;
    throttled_only.retry_transport_errors = throttled_only.retry_server_errors = false;
    if (auto d = http::decide_retry(throttled_only, attempt, outcome, 0.0); d.retry) {
      sleep_unless(cancel_, d.wait);
      continue;
    }
    return traced_reply(std::move(*resp));
  }
}

expected<std::string, api_error> client::call(std::string_view method, std::string_view path_and_query,
                                              std::string_view body, std::string_view content_type,
                                              std::size_t max_body) {
  auto resp = send(method, std::string(path_and_query), body, content_type, max_body, nullptr);
  if (!resp) return unexpected{resp.error()};
  if (resp->status >= 300)
    return unexpected{
        parse_status(resp->status, resp->body, resp->header_value("retry-after"), std::time(nullptr))};
  return std::move(resp->body);
}

expected<object, api_error> client::object_call(std::string_view method, std::string path,
                                                std::string_view body, std::string_view content_type) {
  auto text = call(method, path, body, content_type);
  if (!text) return unexpected{text.error()};
  auto obj = parse_object(*text);
  if (!obj) return unexpected{malformed(obj.error())};
  return std::move(*obj);
}

expected<object, api_error> client::get(const resource& r, std::string_view ns, std::string_view name,
                                        std::string_view subresource) {
  return object_call("GET", r.object_path(ns, name, subresource), {}, "application/json");
}

expected<object, api_error> client::create(const resource& r, std::string_view ns, std::string_view body) {
  return object_call("POST", r.collection_path(ns), body, "application/json");
}

expected<object, api_error> client::update(const resource& r, std::string_view ns, std::string_view name,
                                           std::string_view body, std::string_view subresource) {
  return object_call("PUT", r.object_path(ns, name, subresource), body, "application/json");
}

expected<object, api_error> client::patch(const resource& r, std::string_view ns, std::string_view name,
                                          patch_type type, std::string_view body,
                                          std::string_view subresource) {
  auto path = r.object_path(ns, name, subresource);
  if (type == patch_type::apply) path += "?fieldManager=octorun&force=true";
  return object_call("PATCH", path, body, content_type(type));
}

expected<object, api_error> client::remove(const resource& r, std::string_view ns, std::string_view name,
                                           const delete_options& options) {
  auto reply = object_call("DELETE", r.object_path(ns, name), to_json(options), "application/json");
  if (reply && json::str(*reply->doc, "kind") == "Status") return object{};
  return reply;
}

expected<object_list, api_error> client::list_page(const resource& r, std::string_view ns,
                                                   const list_options& options) {
  list_options o = options;
  o.watch = false;
  auto text = call("GET", r.collection_path(ns) + query_string(o), {}, "application/json",
                   json::sources::kube_list.max_bytes);
  if (!text) return unexpected{text.error()};
  auto parsed = json::parse(*text, json::sources::kube_list);
  if (!parsed) return unexpected{malformed("list reply: " + parsed.error())};
  auto& d = *parsed;
  if (!d.IsObject()) return unexpected{malformed("list reply is not a JSON object")};
  object_list out;
  if (const auto* meta = json::member(d, "metadata")) {
    out.resource_version = json::str(*meta, "resourceVersion");
    out.continue_token = json::str(*meta, "continue");
  }
  const auto* items = json::find_value(d, "items");
  if (items != nullptr && !items->IsArray())
    return unexpected{malformed("list reply: items is not an array")};
  if (items != nullptr) {
    out.items.reserve(items->Size());
    for (const auto& item : items->GetArray())
      if (item.IsObject()) out.items.push_back(make_object(item, opts_.drop_managed_fields));
  }
  return out;
}

expected<object_list, api_error> client::list(const resource& r, std::string_view ns, list_options options) {
  if (options.limit <= 0) options.limit = opts_.page_size;
  options.continue_token.clear();
  for (int restart = 0;; ++restart) {
    object_list all;
    list_options page = options;
    for (;;) {
      auto got = list_page(r, ns, page);
      if (!got) {
        // An expired continue token: the snapshot is gone; start over once.
        if (got.error().gone() && !page.continue_token.empty() && restart == 0) break;
        return unexpected{got.error()};
      }
      if (all.items.empty())
        all.items = std::move(got->items);
      else
        std::move(got->items.begin(), got->items.end(), std::back_inserter(all.items));
      if (page.continue_token.empty()) all.resource_version = got->resource_version;
      if (got->continue_token.empty()) return all;
      page.continue_token = got->continue_token;
      page.resource_version.clear();  // continue carries the snapshot
      page.resource_version_match.clear();
    }
  }
}

expected<client::watch_end, api_error> client::watch(const resource& r, std::string_view ns,
                                                     list_options options,
                                                     const std::function<bool(watch_event&)>& on_event,
                                                     std::chrono::milliseconds silence_limit) {
  options.watch = true;
  options.limit = 0;
  options.continue_token.clear();
  watch_decoder decoder(opts_.drop_managed_fields);
  std::vector<watch_event> batch;
  std::optional<api_error> server_error;
  std::string decode_error;
  http::chunk_sink sink = [&](std::string_view chunk) {
    batch.clear();
    bool ok = decoder.feed(chunk, batch);
    for (auto& ev : batch) {
      if (ev.type == event_type::error) {
        server_error = ev.error;
        return false;
      }
      if (!on_event(ev)) return false;
    }
    if (!ok) decode_error = decoder.error();
    return ok;
  };
  // The server ends the stream after timeoutSeconds; one still open well
  // beyond that is a dead connection: end it here (a clean end).
  std::chrono::milliseconds limit{0};
  if (options.timeout_seconds > 0) limit = std::chrono::seconds(options.timeout_seconds + 30);
  auto resp = send("GET", r.collection_path(ns) + query_string(options), {}, "application/json",
                   json::sources::kube_object.max_bytes, &sink, limit, silence_limit);
  if (server_error) return unexpected{*server_error};
  if (!decode_error.empty()) return unexpected{malformed(decode_error)};
  if (!resp) {
    if (resp.error().reason == "Cancelled") return watch_end::closed;  // stopped on purpose
    return unexpected{resp.error()};
  }
  if (resp->status >= 300)
    return unexpected{
        parse_status(resp->status, resp->body, resp->header_value("retry-after"), std::time(nullptr))};
  return resp->went_silent ? watch_end::silent : watch_end::closed;
}

}  // namespace octorun::kube
