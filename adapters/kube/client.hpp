// A blocking Kubernetes client: one per thread (it owns one libcurl handle
// and keeps its connection). Run it on detached actors or worker threads;
// event-based actors use the request pool in actors.hpp instead.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "adapters/http/http_client.hpp"
#include "adapters/kube/api.hpp"
#include "adapters/kube/config.hpp"
#include "adapters/kube/object.hpp"
#include "adapters/kube/politeness.hpp"
#include "adapters/kube/request_metrics.hpp"
#include "adapters/kube/watch.hpp"
#include "common/expected.hpp"
#include "common/json_parse.hpp"

namespace octorun::kube {

struct client_options {
  // Shared by every client of the process; null = no client-side limit.
  std::shared_ptr<token_bucket> limiter;
  int max_retries = 5;                        // on 429 (and 5xx with Retry-After)
  std::chrono::seconds max_retry_after{30};   // longest wait honoured per retry
  std::chrono::milliseconds timeout{30'000};  // per non-watch request
  int64_t page_size = 500;                    // list pagination
  std::string user_agent = "octorun";
  // Objects from list and watch leave out metadata.managedFields (caches).
  bool drop_managed_fields = false;
  // Told of every HTTP request (the manager's metrics); shared by every
  // client of the process, called on each client's thread. None: nobody.
  std::shared_ptr<request_observer> observer;
};

struct object_list {
  std::vector<object> items;
  std::string resource_version;  // the list's RV: watch from here
  std::string continue_token;    // non-empty when list_page left more
};

class client {
 public:
  explicit client(config cfg, client_options opts = {});

  expected<object, api_error> get(const resource& r, std::string_view ns, std::string_view name,
                                  std::string_view subresource = {});
  // Every page (limit = options.limit or page_size, following `continue`);
  // restarts once from the beginning if a continue token expires (410).
  expected<object_list, api_error> list(const resource& r, std::string_view ns, list_options options = {});
  // One page, as asked.
  expected<object_list, api_error> list_page(const resource& r, std::string_view ns,
                                             const list_options& options);
  expected<object, api_error> create(const resource& r, std::string_view ns, std::string_view body);
  // PUT; the body carries metadata.resourceVersion (409 Conflict when stale).
  expected<object, api_error> update(const resource& r, std::string_view ns, std::string_view name,
                                     std::string_view body, std::string_view subresource = {});
  expected<object, api_error> patch(const resource& r, std::string_view ns, std::string_view name,
                                    patch_type type, std::string_view body,
                                    std::string_view subresource = {});
  // The object while something still holds it (finalizers, a pod's grace
  // period), or an empty object once it is gone (the apiserver answered
  // with a Status instead of the object).
  expected<object, api_error> remove(const resource& r, std::string_view ns, std::string_view name,
                                     const delete_options& options = {});

  // How a watch ended without an error.
  enum class watch_end {
    closed,  // the server ended it (timeoutSeconds, EOF), or on_event stopped it
    silent,  // no byte (no event, no bookmark) within the silence limit
  };
  // Streams a watch (options.watch is forced on). `on_event` returns false to
  // stop early. A positive `silence_limit` ends a watch that brings nothing
  // for that long (kube-apiserver sends a bookmark about once a minute to a
  // watch that allows them). An ERROR event, an HTTP error or a transport
  // failure comes back as the error.
  expected<watch_end, api_error> watch(const resource& r, std::string_view ns, list_options options,
                                       const std::function<bool(watch_event&)>& on_event,
                                       std::chrono::milliseconds silence_limit = {});

  // Any path (e.g. "/version"): the raw body of a 2xx answer, of at most
  // `max_body` bytes (json_parse.hpp's limit of one object by default).
  expected<std::string, api_error> call(std::string_view method, std::string_view path_and_query,
                                        std::string_view body = {},
                                        std::string_view content_type = "application/json",
                                        std::size_t max_body = json::sources::kube_object.max_bytes);

  // Another thread may set this to abort a request or watch within ~100 ms.
  void set_cancel_flag(const std::atomic<bool>* flag);
  // How long the next request waited before this client got it (the request
  // pool's mailbox), for request_trace.hpp; reset by each request.
  void note_queue_wait(std::chrono::microseconds d) { queue_wait_ = d; }
  const config& cfg() const { return cfg_; }

 private:
  // `max_body`: the longest body read (for a stream, its error body).
  // For a streamed body: `stream_limit`, when to end it whatever it brings;
  // `stream_idle`, how long it may bring nothing (0 = never, both).
  expected<http::response, api_error> send(std::string_view method, std::string path_and_query,
                                           std::string_view body, std::string_view content_type,
                                           std::size_t max_body, const http::chunk_sink* sink,
                                           std::chrono::milliseconds stream_limit = {},
                                           std::chrono::milliseconds stream_idle = {});
  expected<object, api_error> object_call(std::string_view method, std::string path, std::string_view body,
                                          std::string_view content_type);
  bool cancelled() const { return cancel_ != nullptr && cancel_->load(); }

  config cfg_;
  client_options opts_;
  http::client http_;
  const std::atomic<bool>* cancel_ = nullptr;
  std::chrono::microseconds queue_wait_{-1};
};

}  // namespace octorun::kube
