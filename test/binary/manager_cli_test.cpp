// The octorun binary's command line, without a cluster: --version, --help,
// `octorun probe`, `--flag value`, and one sentence with exit status 2 for
// every bad flag or file it names.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "adapters/http/http_server.hpp"

namespace octorun {
namespace {

struct outcome {
  int status = -1;
  std::string output;  // stdout and stderr
};

outcome run(const std::string& args, const std::string& env = "OCTORUN_WEBHOOK_SECRET=") {
  outcome o;
  const std::string command = "env " + env + " " + OCTORUN_BINARY + " " + args + " 2>&1";
  FILE* p = popen(command.c_str(), "r");
  if (p == nullptr) return o;
  std::array<char, 4096> buf{};
  while (auto n = fread(buf.data(), 1, buf.size(), p)) o.output.append(buf.data(), n);
  int status = pclose(p);
  o.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return o;
}

TEST(ManagerCli, VersionNamesTheVersionAndTheCommit) {
  auto o = run("--version");
  EXPECT_EQ(o.status, 0);
  EXPECT_TRUE(o.output.starts_with(std::string("octorun ") + OCTORUN_VERSION + " (commit ")) << o.output;
  EXPECT_EQ(o.output.find("(commit )"), std::string::npos) << o.output;
}

// The exec probe: 0 when the listener on 127.0.0.1 answers 200, 1 on any
// other answer or none, 2 on a bad argument.
TEST(ManagerCli, ProbeExitsZeroOnlyWhenTheListenerAnswers200) {
  auto srv = http::server::start(
      {}, {{"/healthz", {"GET"}, http::request_body::refused, [](const http::server_request&) {
              return http::server_response{200, "text/plain", "ok", {}};
            }}});
  ASSERT_TRUE(srv) << srv.error();
  const auto port = " --port=" + std::to_string((*srv)->port());
  EXPECT_EQ(run("probe" + port + " --path=/healthz").status, 0);
  auto missing = run("probe" + port + " --path=/readyz");
  EXPECT_EQ(missing.status, 1);
  EXPECT_NE(missing.output.find("answered 404"), std::string::npos) << missing.output;
  const auto free_port = (*srv)->port();
  srv->reset();  // nobody listens there now
  EXPECT_EQ(run("probe --port=" + std::to_string(free_port)).status, 1);
  EXPECT_EQ(run("probe --port=http").status, 2);
  EXPECT_EQ(run("probe --path=healthz").status, 2);
}

TEST(ManagerCli, HelpListsTheFlags) {
  auto o = run("--help");
  EXPECT_EQ(o.status, 0);
  for (const char* flag :
       {"--namespaces", "--webhook-intake", "--kube-qps", "--kube-burst", "--github-ca-file"})
    EXPECT_NE(o.output.find(flag), std::string::npos) << flag;
}

// `args` stop the binary with status 2 and the one sentence `sentence`.
void expect_refused(const std::string& args, const std::string& sentence) {
  auto o = run(args);
  EXPECT_EQ(o.status, 2) << args;
  EXPECT_EQ(o.output, "octorun: " + sentence + "\n") << args;
}

TEST(ManagerCli, BadFlagsExitTwoWithOneSentence) {
  expect_refused("--bogus", "unknown flag --bogus (octorun --help lists the flags)");
  expect_refused("--kubeconfig", "--kubeconfig needs a value (--kubeconfig=VALUE or --kubeconfig VALUE)");
  expect_refused("--kube-burst many", "--kube-burst: 'many' is not a number");
  expect_refused("--webhook-intake=perhaps", "--webhook-intake: 'perhaps' is not true or false");
}

TEST(ManagerCli, ABadCafSettingIsNamedAlone) {
  expect_refused("--log-format text --scheduler.max-threads abc",
                 "--scheduler.max-threads: CAF does not take 'abc' (unexpected_character)");
  expect_refused(
      "--scheduler.max-threads=2 --caf.no-such.setting=1",
      "unknown CAF setting --caf.no-such.setting (octorun --help says which CAF settings pass through)");
}

TEST(ManagerCli, TakesFlagSpaceValue) {
  // `--kubeconfig FILE` reaches the kubeconfig loader (no parser error).
  auto o = run("--kubeconfig /nonexistent/kubeconfig --log-format text");
  EXPECT_EQ(o.status, 2);
  EXPECT_NE(o.output.find("Kubernetes configuration"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("/nonexistent/kubeconfig"), std::string::npos) << o.output;
}

class ManagerCliFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("octorun-cli-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
    // A kubeconfig that loads (nothing is called before the checks below).
    kubeconfig_ = (dir_ / "kubeconfig").string();
    std::ofstream(kubeconfig_)
        << "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n"
           "    server: https://127.0.0.1:1\n    insecure-skip-tls-verify: true\n"
           "users:\n- name: u\n  user:\n    token: t\ncontexts:\n- name: x\n  context:\n"
           "    cluster: c\n    user: u\ncurrent-context: x\n";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
  std::string kubeconfig_;
};

TEST_F(ManagerCliFiles, AGithubCaFileThatIsNotPemFailsAtStartupNamingTheFlag) {
  auto not_pem = (dir_ / "ca.txt").string();
  std::ofstream(not_pem) << "not a certificate\n";
  auto o = run("--log-format=text --webhook-intake=false --kubeconfig=" + kubeconfig_ + " --github-ca-file " +
               not_pem);
  EXPECT_EQ(o.status, 2);
  EXPECT_NE(o.output.find("--github-ca-file: " + not_pem + " is not a PEM certificate bundle"),
            std::string::npos)
      << o.output;
}

TEST_F(ManagerCliFiles, TheWebhookIntakeNeedsASecretUnlessTurnedOff) {
  auto o = run("--log-format=text --kubeconfig=" + kubeconfig_);
  EXPECT_EQ(o.status, 2);
  EXPECT_NE(o.output.find("no webhook secret"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("--webhook-intake=false"), std::string::npos) << o.output;
}

// The binary tests find the ports the manager took through this file: one
// it cannot write stops it at once, naming the file.
TEST_F(ManagerCliFiles, AnEndpointsFileThatCannotBeWrittenStopsTheManagerNamingIt) {
  auto unwritable = (dir_ / "missing" / "endpoints.json").string();
  auto o = run("--log-format=text --webhook-intake=false --health-port=0 --metrics-port=0 --kubeconfig=" +
               kubeconfig_ + " --endpoints-file=" + unwritable);
  EXPECT_EQ(o.status, 1);
  EXPECT_NE(o.output.find("--endpoints-file: cannot write " + unwritable), std::string::npos) << o.output;
}

}  // namespace
}  // namespace octorun
