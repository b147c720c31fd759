// Two manager replicas against the real apiserver: one leads, the other
// waits; a clean stop hands over at once; a crashed leader is replaced once
// its lease expires.
#include "actors/leader/leader_election.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <optional>

#include "adapters/kube/config.hpp"
#include "test/support/test_cluster.hpp"

namespace octorun::leader {
namespace {

using namespace std::chrono_literals;

TEST(StillLeading, OnlyWhileTheLastRenewalIsRecent) {
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_TRUE(still_leading(true, t0, t0 + 9s, 10s));
  EXPECT_FALSE(still_leading(true, t0, t0 + 10s, 10s));
  EXPECT_FALSE(still_leading(false, t0, t0, 10s));
}

class LeaderElection : public ::testing::Test {
 protected:
  LeaderElection() : c_(test::cluster()), ns_(test::make_namespace(c_, "leader")) {
    auto cfg = kube::load_kubeconfig(c_.kubeconfig);
    if (!cfg) ADD_FAILURE() << cfg.error();
    cfg_ = *cfg;
  }
  ~LeaderElection() override { test::kubectl(c_, "delete namespace " + ns_ + " --wait=false >/dev/null"); }

  caf::actor candidate(const std::string& identity, caf::scoped_actor& subscriber) {
    election_options o;
    o.lease = {ns_, "octorun-manager", identity, 2s};
    o.retry_period = 100ms;
    o.renew_deadline = 1s;
    return spawn_leader_election(sys_, cfg_, {}, o, caf::actor_cast<caf::actor>(subscriber));
  }

  // The next leadership change this subscriber hears within `within`.
  static std::optional<bool> next_change(caf::scoped_actor& s, std::chrono::milliseconds within) {
    std::optional<bool> out;
    s->receive([&](leadership_atom, bool leading) { out = leading; }, caf::after(within) >> [] {});
    return out;
  }

  std::string holder() {
    return test::kubectl(c_, "-n " + ns_ + " get lease octorun-manager -o jsonpath='{.spec.holderIdentity}'");
  }

  const test::cluster_info& c_;
  std::string ns_;
  kube::config cfg_;
  caf::actor_system_config sys_cfg_;
  caf::actor_system sys_{sys_cfg_};
};

TEST_F(LeaderElection, OneLeaderAndAnImmediateHandoverOnCleanStop) {
  caf::scoped_actor sa{sys_}, sb{sys_};
  auto a = candidate("replica-a", sa);
  ASSERT_EQ(next_change(sa, 10s), true);
  auto b = candidate("replica-b", sb);
  // B keeps trying every 100 ms; for a whole second it must not win.
  EXPECT_EQ(next_change(sb, 1s), std::nullopt);
  EXPECT_EQ(holder(), "replica-a");

  auto stopped_at = std::chrono::steady_clock::now();
  caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  EXPECT_EQ(next_change(sa, 5s), false);
  ASSERT_EQ(next_change(sb, 5s), true);
  // Released, not expired: well under the 2 s lease duration.
  EXPECT_LT(std::chrono::steady_clock::now() - stopped_at, 1500ms);
  EXPECT_EQ(holder(), "replica-b");
  caf::anon_send_exit(b, caf::exit_reason::user_shutdown);
  EXPECT_EQ(next_change(sb, 5s), false);
}

TEST_F(LeaderElection, ACrashedLeaderIsReplacedAfterItsLeaseExpires) {
  caf::scoped_actor sa{sys_}, sb{sys_};
  auto a = candidate("replica-a", sa);
  ASSERT_EQ(next_change(sa, 10s), true);
  auto b = candidate("replica-b", sb);
  // A dies without releasing (kill skips the exit handler), as on SIGKILL.
  caf::anon_send_exit(a, caf::exit_reason::kill);
  auto killed_at = std::chrono::steady_clock::now();
  ASSERT_EQ(next_change(sb, 10s), true);
  EXPECT_GE(std::chrono::steady_clock::now() - killed_at, 1500ms) << "took over before the lease expired";
  EXPECT_EQ(holder(), "replica-b");
  caf::anon_send_exit(b, caf::exit_reason::user_shutdown);
  next_change(sb, 5s);
}

}  // namespace
}  // namespace octorun::leader
