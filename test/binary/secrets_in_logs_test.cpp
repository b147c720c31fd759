// Secrets stay secret: the octorun binary runs a full lifecycle at debug log
// level with both intakes (Webhook and Listener sets) and both kinds of
// credentials (a PAT and a GitHub App), through the error paths that tend to
// print what they hold (expired installation and message-queue tokens, a 5xx
// on JIT generation, a session conflict, a wrongly signed delivery, a
// malformed credentials Secret, a cancelled job), and then every line it
// logged, every Kubernetes Event and every RunnerSet/Runner status is searched
// for the PAT, any line of the App's private key, installation tokens,
// registration and message-queue tokens, JWTs, the JIT configurations the
// runners got and the webhook secret. None may appear.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "adapters/github/crypto.hpp"
#include "adapters/http/http_client.hpp"
#include "adapters/kube/client.hpp"
#include "adapters/kube/config.hpp"
#include "adapters/kube/informer.hpp"
#include "common/base64.hpp"
#include "test/binary/binary_harness.hpp"
#include "test/binary/binary_test_base.hpp"
#include "test/simulator/simulator.hpp"
#include "test/support/jwt_testing.hpp"
#include "test/support/test_cluster.hpp"

namespace octorun {
namespace {

using namespace std::chrono_literals;

std::string random_text(const char* prefix, int n) {
  static const char* chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  std::random_device rd;
  std::mt19937_64 rng(rd());
  std::string out = prefix;
  for (int i = 0; i < n; ++i) out.push_back(chars[rng() % 62]);
  return out;
}

const github::testing::rsa_key_pem& app_key() { return github::testing::shared_app_key(); }

sim::simulator_options secrets_simulator() {
  sim::simulator_options o;
  o.long_poll = 3s;
  o.session_idle_timeout = 4s;
  o.installation_token_ttl = 3600s;
  return o;
}

class SecretsInLogs : public test::binary_test_base {
 protected:
  SecretsInLogs() : binary_test_base("sec", secrets_simulator()) {
    sim_->add_pat(pat_);
    sim_->add_app({4242, "Iv1.secrets", app_key().public_key});
    sim_->add_app_installation(4242, 77, "acme");
    auto cfg = kube::load_kubeconfig(c_.kubeconfig);
    if (!cfg) ADD_FAILURE() << cfg.error();
    // The JIT configurations as the runners get them: the data of every
    // runner Secret the manager writes.
    jit_watch_ = std::thread([this, cfg = *cfg] {
      kube::informer_options o;
      o.res = {"", "v1", "secrets", true};
      o.ns = ns_;
      o.label_selector = "octorun.io/runner";
      o.watch_timeout_min = o.watch_timeout_max = 2;
      kube::reflector_callbacks cb;
      auto record = [this](const kube::object& s) {
        const auto* data = s.member("data");
        if (data == nullptr || !data->IsObject()) return;
        auto it = data->FindMember("jitConfig");
        if (it == data->MemberEnd() || !it->value.IsString()) return;
        std::lock_guard l(mu_);
        jit_configs_.insert(it->value.GetString());  // base64 of the config, as stored
      };
      cb.replaced = [record](kube::object_list l) {
        for (auto& s : l.items) record(s);
      };
      cb.event = [record](kube::watch_event ev) {
        if (ev.type == kube::event_type::added || ev.type == kube::event_type::modified) record(ev.obj);
      };
      kube::client client(cfg);
      kube::run_reflector(client, o, stop_, cb);
    });
  }

  ~SecretsInLogs() override {
    stop_ = true;
    jit_watch_.join();
    if (manager_ && !HasFailure()) std::remove(manager_->log_path().c_str());
  }

  void apply(const std::string& json) {
    test::kubectl(c_, "-n " + ns_ + " apply -f - >/dev/null <<'EOF'\n" + json + "\nEOF");
  }

  void create_set(const std::string& name, const std::string& intake, const std::string& secret,
                  const std::string& label) {
    apply(
        R"({"apiVersion":"octorun.io/v1alpha1","kind":"RunnerSet","metadata":{"name":")" + name +
        R"("},"spec":{"scopeURL":")" + sim_->ghes_url() + "/acme" + R"(","credentialsSecretName":")" +
        secret + R"(","intake":")" + intake + R"(","runnerLabels":[")" + label +
        R"("],"minRunners":0,"maxRunners":2,"template":{"spec":{"containers":[{"name":"runner","image":"r"}]}}}})");
  }

  std::int64_t job(const std::string& label, std::chrono::milliseconds duration) {
    sim::job_spec j;
    j.repository = "acme/app";
    j.labels = {"self-hosted", label};
    j.duration = duration;
    return sim_->add_job(j);
  }

  bool completed(const std::vector<std::int64_t>& ids, std::chrono::seconds within) {
    return sim_->wait_until(
        [&](const sim::simulator& s) {
          return std::all_of(ids.begin(), ids.end(), [&](auto id) { return s.job_state(id) == "completed"; });
        },
        within);
  }

  bool scale_sets_with_sessions(std::size_t n) {
    return sim_->wait_until(
        [&](const sim::simulator& s) {
          std::size_t open = 0;
          for (const auto& set : s.scale_sets()) open += set.session_id.empty() ? 0 : 1;
          return open >= n;
        },
        60s);
  }

  std::string pat_ = random_text("ghp_", 36);
  std::string webhook_secret_ = random_text("whsec-", 40);
  std::unique_ptr<test::octorun_process> manager_;
  std::mutex mu_;
  std::set<std::string> jit_configs_;
  std::atomic<bool> stop_{false};
  std::thread jit_watch_;
};

// What must never be printed, and where it was found.
struct needle {
  std::string what;
  std::regex pattern;
};

std::regex literal(const std::string& s) {
  static const std::regex special(R"([.^$|()\[\]{}*+?\\])");
  return std::regex(std::regex_replace(s, special, R"(\$&)"));
}

TEST_F(SecretsInLogs, NoCredentialTokenJitConfigOrWebhookSecretInAnyLogLineEventOrStatus) {
  // Credentials: a PAT, a GitHub App, and a Secret whose private key is
  // broken (its error path must name the key, not print it).
  std::string key_b64 = base64_encode(app_key().private_key);
  apply(R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"pat"},"data":{"github_token":")" +
        base64_encode(pat_) + R"("}})");
  apply(R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"app"},"data":{"github_app_id":")" +
        base64_encode("4242") + R"(","github_app_installation_id":")" + base64_encode("77") +
        R"(","github_app_private_key":")" + key_b64 + R"("}})");
  // Two broken ones: a key that is not PEM (refused when the Secret is
  // read), and one in PEM framing whose body is half a key (refused when a
  // JWT is signed with it).
  const auto& pem = app_key().private_key;
  std::string half_body = pem.substr(pem.find('\n') + 1, pem.size() / 2);
  half_body = half_body.substr(0, half_body.rfind('\n') + 1);
  std::string broken_key = "-----BEGIN PRIVATE KEY-----\n" + half_body + "-----END PRIVATE KEY-----\n";
  for (auto [name, key] : {std::pair{"app-notpem", std::string("not a key: ") + half_body.substr(0, 64)},
                           std::pair{"app-badkey", broken_key}})
    apply(R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":")" + std::string(name) +
          R"("},"data":{"github_app_id":")" + base64_encode("4242") + R"(","github_app_installation_id":")" +
          base64_encode("77") + R"(","github_app_private_key":")" + base64_encode(key) + R"("}})");

  auto args = test::octorun_args(c_.kubeconfig, ns_, "m");
  args.erase(std::remove(args.begin(), args.end(), std::string("--log-format=text")), args.end());
  args.push_back("--log-level=debug");  // JSON lines, the production format
  manager_ = std::make_unique<test::octorun_process>(OCTORUN_BINARY, args, webhook_secret_,
                                                     "/tmp/octorun-manager-" + ns_ + ".log");
  auto intake = manager_->wait_leading(60s);
  ASSERT_FALSE(intake.empty()) << manager_->log_tail();
  sim_->set_webhook(intake, webhook_secret_);

  create_set("web-pat", "Webhook", "pat", "wpat");
  create_set("web-app", "Webhook", "app", "wapp");
  create_set("lis-pat", "Listener", "pat", "lpat");
  create_set("lis-app", "Listener", "app", "lapp");
  create_set("notpem", "Webhook", "app-notpem", "notpem");
  create_set("badkey", "Webhook", "app-badkey", "badkey");
  ASSERT_TRUE(scale_sets_with_sessions(2)) << sim_->state_json() << manager_->log_tail();

  // Error paths first: a 5xx on JIT generation (both APIs), a conflict on
  // the next session, then expired tokens; a delivery signed with another
  // secret; and a job cancelled while it runs.
  for (auto [endpoint, status] :
       {std::pair{"rest.generate_jitconfig", 500}, {"scaleset.generate_jitconfig", 503}}) {
    sim::fault f;
    f.endpoint = endpoint;
    f.status = status;
    sim_->add_fault(f);
  }
  job("badkey", 300ms);  // never runs: its set cannot sign a JWT
  std::vector<std::int64_t> jobs;
  for (const char* label : {"wpat", "wapp", "lpat", "lapp"}) jobs.push_back(job(label, 300ms));
  ASSERT_TRUE(completed(jobs, 120s)) << sim_->state_json() << manager_->log_tail();

  for (const auto& s : sim_->scale_sets()) sim_->drop_session(s.id);
  sim::fault conflict;
  conflict.endpoint = "scaleset.create_session";
  conflict.status = 409;
  conflict.count = 2;
  sim_->add_fault(conflict);
  sim_->expire_tokens();
  http::client client;
  client.set_plain_http(true);
  std::string forged = R"({"action":"queued","workflow_job":{"id":1,"labels":["wpat"]}})";
  auto answer =
      client.perform({"POST",
                      intake,
                      {{"Content-Type", "application/json"},
                       {"X-GitHub-Event", "workflow_job"},
                       {"X-GitHub-Delivery", "forged-1"},
                       {"X-Hub-Signature-256", github::webhook_signature("not-the-secret", forged)}},
                      forged});
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->status, 401);
  auto long_job = job("wapp", -1ms);
  std::vector<std::int64_t> more = {long_job};
  for (const char* label : {"wpat", "lpat", "lapp"}) more.push_back(job(label, 300ms));
  ASSERT_TRUE(
      sim_->wait_until([&](const sim::simulator& s) { return s.job_state(long_job) == "running"; }, 120s))
      << sim_->state_json() << manager_->log_tail();
  ASSERT_TRUE(sim_->complete_job(long_job, "canceled"));
  ASSERT_TRUE(completed(more, 120s)) << sim_->state_json() << manager_->log_tail();
  ASSERT_TRUE(scale_sets_with_sessions(2)) << sim_->state_json() << manager_->log_tail();

  // Statuses and Events while the sets exist, then the whole teardown.
  std::string statuses = test::kubectl(c_, "-n " + ns_ + " get runnersets,runners -o json");
  test::kubectl(c_, "-n " + ns_ + " delete runnersets --all --timeout=120s >/dev/null");
  EXPECT_TRUE(sim_->wait_until([](const sim::simulator& s) { return s.scale_sets().empty(); }, 60s))
      << sim_->state_json();
  EXPECT_EQ(manager_->stop(SIGTERM), 0);
  std::string events = test::kubectl(c_, "-n " + ns_ + " get events.events.k8s.io,events -o json");
  std::string log = manager_->log();

  // The run did what it must for the search to mean something.
  std::set<std::string> jits;
  {
    std::lock_guard l(mu_);
    jits = jit_configs_;
  }
  EXPECT_GE(jits.size(), 8u) << "one JIT configuration per job";
  EXPECT_GE(sim_->calls("rest.app_token"), 2) << "installation tokens fetched, and again after expiry";
  EXPECT_GE(sim_->calls("scaleset.refresh_session") + sim_->calls("scaleset.create_session"), 4);
  EXPECT_NE(log.find("\"level\":\"debug\""), std::string::npos) << "no debug line: wrong level?";
  EXPECT_NE(events.find("\"reason\": \"Running\""), std::string::npos) << "no Runner Event recorded";
  EXPECT_NE((log + statuses + events).find("cannot read the GitHub App private key"), std::string::npos)
      << "the badkey set never tried to sign a JWT";
  EXPECT_NE(statuses.find("github_app_private_key"), std::string::npos)
      << "the broken Secret's condition names the field" << statuses;

  std::vector<needle> needles = {
      {"the PAT", literal(pat_)},
      {"the PAT (base64, as in its Secret)", literal(base64_encode(pat_))},
      {"the webhook secret", literal(webhook_secret_)},
      {"the App private key (base64, as in its Secret)", literal(key_b64.substr(0, 40))},
      {"an installation token", std::regex("ghs_[A-Za-z0-9]{36}")},
      {"a registration token", std::regex("AAREG[A-Za-z0-9]{36}")},
      {"a message-queue token", std::regex("mq_[A-Za-z0-9]{36}")},
      {"a JWT (App JWT or Actions admin token)", std::regex("eyJhbGciOi[A-Za-z0-9_-]{10,}")},
      {"a JIT configuration", std::regex("eyJuYW1lIjoi[A-Za-z0-9_-]{10,}")},
  };
  std::istringstream key_lines(app_key().private_key + broken_key);
  for (std::string line; std::getline(key_lines, line);)
    if (line.size() >= 16) needles.push_back({"a line of the App private key", literal(line)});
  for (const auto& jit : jits) {
    needles.push_back({"a JIT configuration (as stored)", literal(jit.substr(0, 48))});
    auto decoded = base64_decode(jit);
    if (decoded && decoded->size() >= 16)
      needles.push_back({"a JIT configuration", literal(decoded->substr(0, 48))});
  }

  std::size_t lines = 0;
  auto search = [&](const std::string& where, const std::string& text) {
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
      ++lines;
      for (const auto& n : needles)
        EXPECT_FALSE(std::regex_search(line, n.pattern)) << n.what << " in " << where << ": " << line;
    }
  };
  search("the manager's log", log);
  search("the Events", events);
  search("the RunnerSet and Runner statuses", statuses);
  RecordProperty("lines_searched", std::to_string(lines));
  RecordProperty("needles", std::to_string(needles.size()));
  EXPECT_GT(lines, 200u);
}

}  // namespace
}  // namespace octorun
