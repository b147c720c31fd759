// Pure parsers and builders of the scale-set protocol: documented shapes are
// read, anything else is an error value (never a crash).
#include <gtest/gtest.h>

#include <random>

#include "adapters/github/caller.hpp"
#include "adapters/github/scaleset_client.hpp"
#include "common/json.hpp"

namespace octorun::github {
namespace {

TEST(ScaleSetProtocol, ParsesTheDoubleEncodedMessageBody) {
  std::string jobs =
      R"([{"messageType":"JobAvailable","runnerRequestId":1001,"repositoryName":"app","ownerName":"octo",)"
      R"("jobId":"j-1","jobWorkflowRef":"octo/app/.github/workflows/ci.yml@refs/heads/main","jobDisplayName":"build",)"
      R"("workflowRunId":9000000000,"requestLabels":["linux"],"acquireJobUrl":"x"},)"
      R"({"messageType":"JobStarted","runnerRequestId":1001,"runnerId":7,"runnerName":"r-7"},)"
      R"({"messageType":"JobCompleted","runnerRequestId":1001,"runnerId":7,"runnerName":"r-7","result":"canceled"},)"
      R"({"messageType":"SomethingNew"},{"messageType":"JobAssigned","runnerRequestId":1002}, 42])";
  std::string envelope = R"({"messageId":123456789012,"messageType":"RunnerScaleSetJobMessages",)"
                         R"("statistics":{"totalAssignedJobs":3,"totalRunningJobs":1},"body":)" +
                         json::quote(jobs) + "}";
  auto m = parse_queue_message(envelope, 5);
  ASSERT_TRUE(m) << m.error();
  EXPECT_EQ(m->message_id, 123456789012);
  ASSERT_TRUE(m->statistics);
  EXPECT_EQ(m->statistics->total_assigned_jobs, 3);
  EXPECT_EQ(m->statistics->scale_set_id, 5);
  ASSERT_EQ(m->jobs.size(), 4u);  // the unknown type and the non-object are skipped, and said so
  ASSERT_EQ(m->skipped.size(), 2u);
  EXPECT_EQ(m->skipped[0].reason, "unknown_message_type");
  EXPECT_NE(m->skipped[0].detail.find("SomethingNew"), std::string::npos);
  EXPECT_EQ(m->skipped[1].reason, "malformed_message");
  auto& a = std::get<messages::job_available>(m->jobs[0]);
  EXPECT_EQ(a.job.job_id, 1001);
  EXPECT_EQ(a.job.repository, "octo/app");
  EXPECT_EQ(a.job.run_id, 9000000000);
  EXPECT_EQ(a.job.source, messages::job_source::listener);
  EXPECT_EQ(std::get<messages::job_started>(m->jobs[1]).runner_name, "r-7");
  EXPECT_EQ(std::get<messages::job_completed>(m->jobs[2]).result, "canceled");
  EXPECT_TRUE(std::holds_alternative<messages::job_assigned>(m->jobs[3]));

  auto empty =
      parse_queue_message(R"({"messageId":1,"messageType":"RunnerScaleSetJobMessages","body":""})", 1);
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->jobs.empty());
  EXPECT_FALSE(parse_queue_message(R"({"messageType":"RunnerScaleSetJobMessages","body":"[1"})", 1))
      << "no messageId: it cannot even be acknowledged";
  EXPECT_FALSE(parse_queue_message("", 1));
}

// What the client cannot take is skipped and said so, and the message is
// kept (so it is acknowledged, not redelivered to every session for ever);
// its statistics count only when it is a job message with statistics.
TEST(ScaleSetProtocol, AnUnknownOrMalformedMessageIsSkippedNotFatal) {
  auto other =
      parse_queue_message(R"({"messageId":7,"messageType":"Other","statistics":{"totalAssignedJobs":0}})", 1);
  ASSERT_TRUE(other) << other.error();
  EXPECT_EQ(other->message_id, 7);
  EXPECT_FALSE(other->statistics) << "the statistics of a message we do not know do not move demand";
  ASSERT_EQ(other->skipped.size(), 1u);
  EXPECT_EQ(other->skipped[0].reason, "unknown_message_type");
  EXPECT_NE(other->skipped[0].detail.find("'Other'"), std::string::npos);
  auto broken =
      parse_queue_message(R"({"messageId":8,"messageType":"RunnerScaleSetJobMessages","body":"[1"})", 1);
  ASSERT_TRUE(broken) << broken.error();
  EXPECT_FALSE(broken->statistics);
  ASSERT_EQ(broken->skipped.size(), 1u);
  EXPECT_EQ(broken->skipped[0].reason, "malformed_message");
  auto nameless = parse_queue_message(
      R"({"messageId":9,"messageType":"RunnerScaleSetJobMessages","statistics":{},"body":"[{\"messageType\":\"JobStarted\"}]"})",
      1);
  ASSERT_TRUE(nameless) << nameless.error();
  EXPECT_TRUE(nameless->jobs.empty());
  ASSERT_EQ(nameless->skipped.size(), 1u);
  EXPECT_EQ(nameless->skipped[0].reason, "malformed_message");
}

// The service's timestamps (seven fractional digits, as .NET writes them)
// are the job's queue, start and end times.
TEST(ScaleSetProtocol, JobTimesComeFromQueueRunnerAssignAndFinishTime) {
  std::string jobs =
      R"([{"messageType":"JobCompleted","runnerRequestId":1,"runnerName":"r","result":"succeeded",)"
      R"("queueTime":"2026-01-01T00:00:00.1234567Z","runnerAssignTime":"2026-01-01T00:00:12.5Z",)"
      R"("finishTime":"2026-01-01T00:05:00Z"},{"messageType":"JobStarted","runnerRequestId":2}])";
  auto m = parse_queue_message(
      R"({"messageId":1,"messageType":"RunnerScaleSetJobMessages","body":)" + json::quote(jobs) + "}", 5);
  ASSERT_TRUE(m) << m.error();
  const auto& done = std::get<messages::job_completed>(m->jobs[0]).job;
  EXPECT_EQ(done.queued_at, 1767225600);
  EXPECT_EQ(done.started_at, 1767225612);
  EXPECT_EQ(done.completed_at, 1767225900);
  const auto& unknown = std::get<messages::job_started>(m->jobs[1]).job;
  EXPECT_EQ(unknown.queued_at, 0);
  EXPECT_EQ(unknown.started_at, 0);
}

// Regression (scaleset_message_fuzz): a runnerRequestId of 1.2e21 was
// converted to int64 (undefined behaviour); it now reads as no id, so the job
// message is skipped as malformed, and a messageId beyond int64 is no id.
TEST(ScaleSetProtocol, NumbersBeyondInt64ReadAsNoId) {
  std::string jobs =
      R"([{"messageType":"JobAvailable","runnerRequestId":1.21845e+21,"workflowRunId":-1e300}])";
  auto message = [&](const std::string& id) {
    return parse_queue_message(R"({"messageId":)" + id +
                                   R"(,"messageType":"RunnerScaleSetJobMessages","body":)" +
                                   json::quote(jobs) + "}",
                               1);
  };
  EXPECT_FALSE(message("1e400"));  // not JSON RapidJSON accepts (overflow): an error, not a crash
  auto huge = message("1e20");
  ASSERT_FALSE(huge);  // it cannot be acknowledged
  EXPECT_NE(huge.error().find("messageId"), std::string::npos) << huge.error();
  auto m = message("2");
  ASSERT_TRUE(m) << m.error();
  EXPECT_TRUE(m->jobs.empty());
  ASSERT_EQ(m->skipped.size(), 1u);
  EXPECT_EQ(m->skipped[0].reason, "malformed_message");
}

TEST(ScaleSetProtocol, SessionNeedsItsDocumentedFields) {
  auto ok = parse_session(R"({"sessionId":"a-b","ownerName":"h","runnerScaleSet":{"id":3},)"
                          R"("messageQueueUrl":"http://q","messageQueueAccessToken":"t","statistics":{}})");
  ASSERT_TRUE(ok) << ok.error();
  EXPECT_EQ(ok->scale_set_id, 3);
  EXPECT_FALSE(parse_session(R"({"sessionId":"00000000-0000-0000-0000-000000000000","messageQueueUrl":"u",)"
                             R"("messageQueueAccessToken":"t","statistics":{}})"));
  EXPECT_FALSE(parse_session(R"({"sessionId":"x","messageQueueUrl":"u","messageQueueAccessToken":"t"})"));
  EXPECT_FALSE(parse_session("[]"));
}

// The session id goes into request paths and the RunnerSet's status (at most
// 64 characters): a hostile service's id that is not one is refused.
TEST(ScaleSetProtocol, ASessionIdThatIsNotAnIdIsRefused) {
  auto with_id = [](const std::string& id) {
    return parse_session(R"({"sessionId":")" + id +
                         R"(","messageQueueUrl":"http://q",)"
                         R"("messageQueueAccessToken":"t","statistics":{}})");
  };
  EXPECT_TRUE(with_id("5d6b2c1e-8f3a-4b7c-9d0e-1f2a3b4c5d6e"));
  for (const std::string& bad :
       std::vector<std::string>{"../../scalesets/7", "a/b", "a?b=c", "a b", std::string(65, 'a')}) {
    auto refused = with_id(bad);
    ASSERT_FALSE(refused) << bad;
    EXPECT_NE(refused.error().find("sessionId is not an id"), std::string::npos) << refused.error();
  }
}

TEST(ScaleSetProtocol, ScaleSetJsonFollowsTheGoClients) {
  scale_set s;
  s.name = "arc";
  s.runner_group_id = 1;
  EXPECT_EQ(scale_set_json(s, false),
            R"({"name":"arc","runnerGroupId":1,"labels":[{"type":"System","name":"arc"}],)"
            R"("RunnerSetting":{"disableUpdate":true},"createdOn":"0001-01-01T00:00:00Z"})");
  scale_set change;
  change.runner_group_id = 2;
  EXPECT_EQ(scale_set_json(change, true),
            R"({"runnerGroupId":2,"RunnerSetting":{},"createdOn":"0001-01-01T00:00:00Z"})");
  rapidjson::Document d;
  d.Parse(R"({"id":4,"name":"x","labels":[{"name":"a"},"b",7],"runnerSetting":{"disableUpdate":true}})");
  auto parsed = parse_scale_set(d);
  EXPECT_EQ(parsed.id, 4);
  EXPECT_EQ(parsed.labels, (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(parsed.disable_update);
}

TEST(ScaleSetProtocol, ErrorBodiesOfEveryShape) {
  http::response r;
  r.status = 409;
  r.body = R"({"typeName":"AgentExistsException","message":"exists"})";
  EXPECT_EQ(error_message(r), "AgentExistsException: exists");
  EXPECT_EQ(error_type_name(r), "AgentExistsException");
  r.body = R"({"message":"Bad credentials"})";
  EXPECT_EQ(error_message(r), "Bad credentials");
  r.body = "\"Already exists - A runner with the name *** already exists.\"";
  EXPECT_EQ(error_message(r), "Already exists - A runner with the name *** already exists.");
  r.body = "plain text";
  EXPECT_EQ(error_message(r), "HTTP 409 without a GitHub error message (body of 10 bytes)");
  EXPECT_EQ(error_from_response(r, 0, {}).kind, error_kind::conflict);
  r.status = 418;
  EXPECT_EQ(error_from_response(r, 0, {}).kind, error_kind::rejected);
  r.body = "\xEF\xBB\xBF{\"a\":1}";
  EXPECT_TRUE(json_object(r));
}

// What reaches an Event or a condition from a response: GitHub's own words,
// bounded and printable, never the bytes of a body that is not its error.
TEST(ScaleSetProtocol, ErrorTextIsGitHubsMessageBoundedAndPrintable) {
  http::response r;
  r.status = 500;
  r.headers = {{"content-type", "text/plain"}};
  r.body = "-----BEGIN PRIVATE KEY-----\nMIIEvQ...\n-----END PRIVATE KEY-----\n";
  auto said = error_message(r);
  EXPECT_EQ(said, "HTTP 500 without a GitHub error message (text/plain body of 64 bytes)");
  EXPECT_EQ(error_from_response(r, 0, {}).describe().find("PRIVATE"), std::string::npos);

  r.body = R"({"message":"bad\u0000thing\nhere\u001b[31m"})";
  EXPECT_EQ(error_message(r), "bad thing here [31m");
  r.body = "{\"message\":\"" + std::string(1000, 'm') + "\"}";
  said = error_message(r);
  EXPECT_EQ(said.size(), max_error_message_bytes);
  EXPECT_TRUE(said.ends_with("mmm..."));
  r.body = "{\"message\":\"caf\xC3\xA9 \xFF\xFE\xC2\x85 \"}";  // é, two bytes that are not UTF-8, NEL
  EXPECT_EQ(error_message(r), "caf\xC3\xA9 ??  ");
  r.body = std::string(200'000, '[');
  EXPECT_EQ(error_message(r), "HTTP 500 without a GitHub error message (text/plain body of 200000 bytes)");
}

// Random bytes and mutated documents: parsers answer with values, never crash.
TEST(ScaleSetProtocol, SurvivesGarbage) {
  std::mt19937 rng(42);
  const std::string seed =
      R"({"messageId":1,"messageType":"RunnerScaleSetJobMessages","statistics":{"totalAssignedJobs":1},)"
      R"("body":"[{\"messageType\":\"JobStarted\",\"runnerRequestId\":1,\"runnerId\":2,\"requestLabels\":[\"a\"]}]",)"
      R"("sessionId":"s","messageQueueUrl":"u","messageQueueAccessToken":"t"})";
  for (int i = 0; i < 3000; ++i) {
    std::string s = seed;
    int edits = 1 + static_cast<int>(rng() % 8);
    for (int e = 0; e < edits; ++e) {
      size_t at = rng() % s.size();
      switch (rng() % 3) {
        case 0:
          s[at] = static_cast<char>(rng() % 256);
          break;
        case 1:
          s.erase(at, 1 + rng() % 5);
          break;
        default:
          s.insert(at, 1, "{}[]\",:0n"[rng() % 9]);
      }
      if (s.empty()) s = "x";
    }
    (void)parse_queue_message(s, 1);
    (void)parse_session(s);
    http::response r;
    r.body = s;
    (void)error_message(r);
    (void)json_object(r);
  }
  SUCCEED();
}

}  // namespace
}  // namespace octorun::github
