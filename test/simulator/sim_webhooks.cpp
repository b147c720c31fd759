// The simulator's webhook deliveries: the workflow_job payload of each job
// transition, the outbox (where delivery faults duplicate, reorder, delay or
// drop deliveries) and the sender thread, which posts each one signed, once,
// as GitHub does.
#include "adapters/github/crypto.hpp"
#include "test/simulator/simulator_impl.hpp"

namespace octorun::sim {

namespace json = octorun::json;

void simulator::impl::webhook_job(const char* action, const sim_job& j) {
  if (options.webhook_url.empty()) return;
  auto slash = j.spec.repository.find('/');
  std::string owner = j.spec.repository.substr(0, slash);
  std::string action_s = action;
  std::string status = action_s == "queued"        ? "queued"
                       : action_s == "in_progress" ? "in_progress"
                                                   : "completed";
  std::string body =
      "{\"action\":\"" + action_s + "\",\"workflow_job\":" + job_json(j, status) +
      ",\"repository\":{\"id\":1,\"name\":" +
      json::quote(slash == std::string::npos ? j.spec.repository : j.spec.repository.substr(slash + 1)) +
      ",\"full_name\":" + json::quote(j.spec.repository) +
      ",\"html_url\":" + json::quote(base + "/" + j.spec.repository) +
      ",\"owner\":{\"login\":" + json::quote(owner) + "}},\"organization\":{\"login\":" + json::quote(owner) +
      "},\"sender\":{\"login\":\"octocat\"}}";
  enqueue_delivery({"workflow_job", new_uuid(), std::move(body)});
}

void simulator::impl::enqueue_delivery(delivery d) {
  {
    std::lock_guard lock(delivery_mu);
    auto push = [&](delivery x) {
      if (delivery_faults.drop > 0) {
        --delivery_faults.drop;
        dropped.push_back(std::move(x));
        return;
      }
      if (delivery_faults.duplicate > 0) {
        --delivery_faults.duplicate;
        outbox.push_back(x);
      }
      outbox.push_back(std::move(x));
    };
    if (held) {
      push(std::move(d));
      push(std::move(*held));
      held.reset();
    } else if (delivery_faults.reorder > 0) {
      --delivery_faults.reorder;
      held = std::move(d);
    } else {
      push(std::move(d));
    }
  }
  delivery_cv.notify_all();
}

void simulator::impl::run_sender() {
  http::client client;
  client.set_plain_http(true);
  for (;;) {
    delivery d;
    std::string url, secret;
    std::chrono::milliseconds delay{0};
    {
      std::unique_lock lock(delivery_mu);
      // Never takes mu here: handlers hold mu while they enqueue (lock order mu -> delivery_mu).
      delivery_cv.wait(lock, [&] { return sender_stop || !outbox.empty(); });
      if (sender_stop) return;
      d = std::move(outbox.front());
      outbox.pop_front();
      delay = delivery_faults.delay;
    }
    {
      std::lock_guard g(mu);
      if (stopping) return;
      url = options.webhook_url;
      secret = options.webhook_secret;
    }
    if (delay.count() > 0) std::this_thread::sleep_for(delay);  // simulated slow delivery
    http::request req;
    req.method = "POST";
    req.url = url;
    req.body = d.body;
    req.timeout = std::chrono::seconds(10);  // GitHub's delivery deadline
    req.headers = {{"Content-Type", "application/json"},
                   {"User-Agent", "GitHub-Hookshot/simulator"},
                   {"X-GitHub-Event", d.event},
                   {"X-GitHub-Delivery", d.id},
                   {"X-GitHub-Hook-ID", "1"},
                   {"X-GitHub-Hook-Installation-Target-Type", "repository"},
                   {"X-GitHub-Hook-Installation-Target-ID", "1"}};
    if (!secret.empty())
      req.headers.emplace_back("X-Hub-Signature-256", github::webhook_signature(secret, d.body));
    // GitHub does not retry a failed delivery (no answer within its deadline,
    // or not 2xx); it records it (calls: webhook.failed).
    auto answer = client.perform(req);
    const bool failed = !answer || answer->status < 200 || answer->status > 299;
    ++sent;
    std::lock_guard g(mu);
    count("webhook." + d.event);
    if (failed) count("webhook.failed");
  }
}

}  // namespace octorun::sim
