// Event spam limiting and bodies; Lease decisions.
#include "adapters/kube/events.hpp"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "adapters/kube/lease.hpp"

namespace octorun::kube {
namespace {

using namespace std::chrono_literals;
using action = event_spam_filter::action;

event_spec spec(const std::string& reason, const std::string& name = "ci") {
  event_spec e;
  e.regarding = {"tests.octorun.io/v1", "RunnerSet", "ns", name, "uid-" + name};
  e.reason = reason;
  e.action = "Scale";
  e.note = "desired 3 -> 5";
  return e;
}

TEST(EventSpam, RepeatsFormASeriesWrittenAtMostEveryInterval) {
  event_spam_filter f(25, 300s, 30s, 360s);
  auto t = std::chrono::steady_clock::time_point{} + 1h;
  auto e = spec("ScaledUp");
  auto d = f.observe(e, t);
  EXPECT_EQ(d.what, action::create);
  f.created(e, "ci.abc", t);
  d = f.observe(e, t + 1s);
  EXPECT_EQ(d.what, action::drop);  // counted, not written yet
  EXPECT_EQ(d.count, 2);
  d = f.observe(e, t + 31s);
  EXPECT_EQ(d.what, action::update_series);
  EXPECT_EQ(d.count, 3);
  EXPECT_EQ(d.event_name, "ci.abc");
  // A different reason is another series.
  EXPECT_EQ(f.observe(spec("ScaledDown"), t + 32s).what, action::create);
  // A series quiet for longer than its expiry starts over.
  EXPECT_EQ(f.observe(e, t + 31s + 361s).what, action::create);
}

// Two bursts: the second scale-up is a decision of its own, with its own
// note, not a repeat counted under the first one's.
TEST(EventSpam, DistinctDecisionsAreDistinctEvents) {
  event_spam_filter f(25, 300s, 30s, 360s);
  auto t = std::chrono::steady_clock::time_point{} + 1h;
  auto first = spec("ScaledUp");
  first.note = "Scaled up from 0 to 5 runners";
  EXPECT_EQ(f.observe(first, t).what, action::create);
  f.created(first, "ci.first", t);
  auto down = spec("ScaledDown");
  down.note = "Scaled down from 5 to 0 runners";
  EXPECT_EQ(f.observe(down, t + 60s).what, action::create);
  f.created(down, "ci.down", t + 60s);
  auto second = spec("ScaledUp");
  second.note = "Scaled up from 0 to 7 runners";
  EXPECT_EQ(f.observe(second, t + 120s).what, action::create);
  f.created(second, "ci.second", t + 120s);
  // The same decision again is a repeat of its own series.
  auto again = f.observe(second, t + 200s);
  EXPECT_EQ(again.what, action::update_series);
  EXPECT_EQ(again.event_name, "ci.second");
  EXPECT_EQ(again.count, 2);
}

TEST(EventSpam, BurstPerObjectThenOnePerRefill) {
  event_spam_filter f(3, 300s, 30s, 360s);
  auto t = std::chrono::steady_clock::time_point{} + 1h;
  for (int i = 0; i < 3; ++i) {
    auto e = spec("Reason" + std::to_string(i));
    EXPECT_EQ(f.observe(e, t).what, action::create);
    f.created(e, "n" + std::to_string(i), t);
  }
  EXPECT_EQ(f.observe(spec("Reason9"), t).what, action::drop);             // same object: bucket empty
  EXPECT_EQ(f.observe(spec("Reason9", "other"), t).what, action::create);  // other object: own bucket
  EXPECT_EQ(f.observe(spec("Reason9"), t + 300s).what, action::create);    // one token refilled
}

TEST(EventBody, FieldsAndLimits) {
  auto e = spec("ScaledUp");
  e.note = std::string(2000, 'n');
  auto now = std::chrono::system_clock::time_point(std::chrono::microseconds(1772359200000001LL));
  auto name = event_name(e.regarding, now);
  EXPECT_EQ(name.substr(0, 3), "ci.");
  rapidjson::Document d;
  d.Parse(event_body(e, name, "tests.octorun.io/manager", "pod-1", now).c_str());
  ASSERT_TRUE(d.IsObject());
  EXPECT_STREQ(d["apiVersion"].GetString(), "events.k8s.io/v1");
  EXPECT_STREQ(d["metadata"]["namespace"].GetString(), "ns");
  EXPECT_STREQ(d["eventTime"].GetString(), "2026-03-01T10:00:00.000001Z");
  EXPECT_STREQ(d["regarding"]["kind"].GetString(), "RunnerSet");
  EXPECT_EQ(d["note"].GetStringLength(), 1024u);
  EXPECT_STREQ(d["reportingController"].GetString(), "tests.octorun.io/manager");
  EXPECT_EQ(event_series_patch(3, now),
            R"({"series":{"count":3,"lastObservedTime":"2026-03-01T10:00:00.000001Z"}})");
}

TEST(Lease, AvailabilityUsesTheLocalObservationTime) {
  auto t = std::chrono::steady_clock::time_point{} + 1h;
  lease_record held{"other", 15, "a", "r", 2, "7"};
  EXPECT_FALSE(lease_available(held, "me", t, t + 10s));
  EXPECT_TRUE(lease_available(held, "me", t, t + 16s));
  EXPECT_TRUE(lease_available(held, "other", t, t));
  lease_record free{"", 1, "", "", 2, "8"};
  EXPECT_TRUE(lease_available(free, "me", t, t));
}

TEST(Lease, NextRecordKeepsOrStartsATerm) {
  auto now = std::chrono::system_clock::time_point(std::chrono::microseconds(1772359200000000LL));
  auto fresh = next_lease(std::nullopt, "me", 15s, now);
  EXPECT_EQ(fresh.holder, "me");
  EXPECT_EQ(fresh.transitions, 0);
  EXPECT_EQ(fresh.acquire_time, "2026-03-01T10:00:00.000000Z");
  lease_record mine{"me", 15, "2026-01-01T00:00:00.000000Z", "x", 4, "9"};
  auto renewed = next_lease(mine, "me", 15s, now);
  EXPECT_EQ(renewed.acquire_time, "2026-01-01T00:00:00.000000Z");
  EXPECT_EQ(renewed.transitions, 4);
  EXPECT_EQ(renewed.resource_version, "9");
  lease_record theirs{"other", 15, "t", "x", 4, "9"};
  auto taken = next_lease(theirs, "me", 15s, now);
  EXPECT_EQ(taken.transitions, 5);
  EXPECT_EQ(taken.renew_time, taken.acquire_time);
  auto body = lease_body("ns", "lock", taken);
  EXPECT_NE(body.find(R"("resourceVersion":"9")"), std::string::npos);
  EXPECT_NE(body.find(R"("holderIdentity":"me")"), std::string::npos);
  auto parsed = parse_lease(*parse_object(body));
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->transitions, 5);
  EXPECT_EQ(parsed->holder, "me");
}

}  // namespace
}  // namespace octorun::kube
