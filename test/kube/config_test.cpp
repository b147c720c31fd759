// kubeconfig and in-cluster configuration, and token files that rotate.
#include "adapters/kube/config.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

namespace octorun::kube {
namespace {

namespace fs = std::filesystem;

class Config : public ::testing::Test {
 protected:
  Config() {
    char tmpl[] = "/tmp/octorun-kube-config-XXXXXX";
    dir = mkdtemp(tmpl);
    write("ca.crt", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n");
    write("client.crt", "cert");
    write("client.key", "key");
    write("token", "file-token\n");
  }
  ~Config() override { fs::remove_all(dir); }

  void write(const std::string& name, const std::string& text) { std::ofstream(dir + "/" + name) << text; }

  expected<config, std::string> parse(const std::string& text, const std::string& context = {}) {
    return parse_kubeconfig(text, dir, context);
  }

  static std::string kubeconfig(const std::string& user_body, const std::string& cluster_extra = {}) {
    return "apiVersion: v1\nkind: Config\nclusters:\n- name: c1\n  cluster:\n    server: "
           "https://127.0.0.1:6443/\n"
           "    certificate-authority: ca.crt\n" +
           cluster_extra +
           "- name: c2\n  cluster:\n    server: https://10.0.0.1\n    certificate-authority-data: " +
           "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==\n"
           "contexts:\n- name: one\n  context: {cluster: c1, user: u1}\n- name: two\n  context:\n"
           "    cluster: c2\n    user: u1\n    namespace: team-a\ncurrent-context: one\nusers:\n- name: u1\n"
           "  user:\n" +
           user_body;
  }

  std::string dir;
};

TEST_F(Config, CurrentContextWithTokenAndRelativeCaFile) {
  auto cfg = parse(kubeconfig("    token: abc\n"));
  ASSERT_TRUE(cfg) << cfg.error();
  EXPECT_EQ(cfg->server, "https://127.0.0.1:6443");
  EXPECT_EQ(cfg->tls.ca_file, dir + "/ca.crt");
  EXPECT_EQ(cfg->namespace_, "default");
  EXPECT_EQ(cfg->context, "one");
  ASSERT_TRUE(cfg->token);
  EXPECT_EQ(*cfg->token->token(), "abc");
}

TEST_F(Config, NamedContextWithNamespaceAndCaData) {
  auto cfg = parse(kubeconfig("    token: abc\n"), "two");
  ASSERT_TRUE(cfg) << cfg.error();
  EXPECT_EQ(cfg->server, "https://10.0.0.1");
  EXPECT_EQ(cfg->tls.ca_pem, "-----BEGIN CERTIFICATE-----\n");
  EXPECT_EQ(cfg->namespace_, "team-a");
}

TEST_F(Config, TokenFileWinsOverToken) {
  auto cfg = parse(kubeconfig("    token: static\n    tokenFile: token\n"));
  ASSERT_TRUE(cfg) << cfg.error();
  EXPECT_EQ(*cfg->token->token(), "file-token");
}

TEST_F(Config, ClientCertificateFilesAndData) {
  auto files = parse(kubeconfig("    client-certificate: client.crt\n    client-key: client.key\n"));
  ASSERT_TRUE(files) << files.error();
  EXPECT_EQ(files->tls.client_cert_file, dir + "/client.crt");
  EXPECT_EQ(files->tls.client_key_file, dir + "/client.key");
  EXPECT_FALSE(files->token);
  auto data = parse(kubeconfig("    client-certificate-data: Y2VydA==\n    client-key-data: a2V5\n"));
  ASSERT_TRUE(data) << data.error();
  EXPECT_EQ(data->tls.client_cert_pem, "cert");
  EXPECT_EQ(data->tls.client_key_pem, "key");
}

TEST_F(Config, JsonKubeconfig) {
  auto cfg =
      parse(R"({"clusters":[{"name":"c","cluster":{"server":"https://h:1","insecure-skip-tls-verify":true}}],
    "contexts":[{"name":"x","context":{"cluster":"c","user":"u"}}],"current-context":"x",
    "users":[{"name":"u","user":{"token":"t"}}]})");
  ASSERT_TRUE(cfg) << cfg.error();
  EXPECT_TRUE(cfg->tls.insecure_skip_verify);
  EXPECT_EQ(*cfg->token->token(), "t");
}

TEST_F(Config, EachBrokenInputHasAClearError) {
  auto err = [&](const std::string& text, const std::string& context = {}) {
    auto cfg = parse(text, context);
    return cfg ? std::string("no error") : cfg.error();
  };
  EXPECT_EQ(err(kubeconfig("    token: a\n"), "three"), "context 'three' not found in 'contexts'");
  EXPECT_EQ(err("kind: Config\n"), "no context given and no current-context set");
  EXPECT_EQ(err("- a\n"), "not a kubeconfig (top level is not a map)");
  EXPECT_EQ(err("a: [\n"), "not valid YAML/JSON: line 1: bad flow collection");
  EXPECT_EQ(err("current-context: x\ncontexts:\n- name: x\n  context:\n    cluster: nope\nclusters: []\n"),
            "cluster 'nope' not found in 'clusters'");
  EXPECT_EQ(err("current-context: x\ncontexts:\n- name: x\n  context:\n    user: u\n"),
            "context 'x' names no cluster");
  EXPECT_EQ(err("current-context: x\ncontexts:\n- name: x\n  context: {cluster: c}\nclusters:\n- name: c\n"
                "  cluster: {}\n"),
            "cluster 'c' has no server");
  EXPECT_EQ(err("current-context: x\ncontexts:\n- name: x\n  context: {cluster: c}\nclusters:\n- name: c\n"
                "  cluster: {server: ftp://h}\n"),
            "cluster 'c': server 'ftp://h' is not an http(s) URL");
  EXPECT_EQ(err(kubeconfig("    token: a\n").replace(kubeconfig("").find("LS0t"), 4, "$$$$"), "two"),
            "cluster 'c2': certificate-authority-data is not valid base64");
  fs::remove(dir + "/ca.crt");
  EXPECT_EQ(err(kubeconfig("    token: a\n")),
            "cluster 'c1': cannot read certificate-authority " + dir + "/ca.crt");
  write("ca.crt", "x");
  EXPECT_EQ(err(kubeconfig("    client-certificate: client.crt\n")),
            "user 'u1': client certificate and key must be given together");
  EXPECT_EQ(err(kubeconfig("    client-certificate: missing.crt\n    client-key: client.key\n")),
            "user 'u1': cannot read client-certificate " + dir + "/missing.crt");
  EXPECT_EQ(err(kubeconfig("    tokenFile: missing\n")),
            "user 'u1': token file " + dir + "/missing: cannot stat");
  EXPECT_EQ(err(kubeconfig("    exec:\n      command: aws\n")), "user 'u1': exec is not supported");
  EXPECT_EQ(err(kubeconfig("    token: \"\"\n")), "user 'u1': token is empty");
  EXPECT_EQ(load_kubeconfig(dir + "/nope").error(), "kubeconfig " + dir + "/nope: cannot read");
}

TEST_F(Config, InClusterFromAServiceAccountFolder) {
  write("namespace", "runners\n");
  auto env = [](const char* name) -> std::string {
    if (std::string(name) == "KUBERNETES_SERVICE_HOST") return "10.0.0.1";
    if (std::string(name) == "KUBERNETES_SERVICE_PORT") return "443";
    return {};
  };
  auto cfg = in_cluster_config(dir, env);
  ASSERT_TRUE(cfg) << cfg.error();
  EXPECT_EQ(cfg->server, "https://10.0.0.1:443");
  EXPECT_EQ(cfg->tls.ca_file, dir + "/ca.crt");
  EXPECT_EQ(cfg->namespace_, "runners");
  EXPECT_EQ(*cfg->token->token(), "file-token");

  auto v6 = in_cluster_config(dir, [](const char* n) -> std::string {
    return std::string(n) == "KUBERNETES_SERVICE_HOST" ? "fd00::1" : "6443";
  });
  ASSERT_TRUE(v6) << v6.error();
  EXPECT_EQ(v6->server, "https://[fd00::1]:6443");
}

TEST_F(Config, InClusterErrors) {
  auto none = [](const char*) { return std::string{}; };
  EXPECT_EQ(in_cluster_config(dir, none).error(),
            "in-cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set");
  auto env = [](const char* n) -> std::string {
    return std::string(n) == "KUBERNETES_SERVICE_HOST" ? "h" : "https";
  };
  EXPECT_EQ(in_cluster_config(dir, env).error(),
            "in-cluster: KUBERNETES_SERVICE_PORT 'https' is not a port number");
  auto good = [](const char* n) -> std::string {
    return std::string(n) == "KUBERNETES_SERVICE_HOST" ? "h" : "1";
  };
  EXPECT_EQ(in_cluster_config(dir + "/missing", good).error(),
            "in-cluster: token file " + dir + "/missing/token: cannot stat");
  fs::remove(dir + "/ca.crt");
  EXPECT_EQ(in_cluster_config(dir, good).error(), "in-cluster: cannot read CA " + dir + "/ca.crt");
}

TEST_F(Config, TokenFileRotationIsPickedUp) {
  auto source = token_source::file(dir + "/token");
  EXPECT_EQ(*source->token(), "file-token");
  // The kubelet's way: write a new file and swap it in atomically.
  write("token.new", "second");
  fs::rename(dir + "/token.new", dir + "/token");
  EXPECT_EQ(*source->token(), "second");
  // In place, same size: caught by the modification time.
  write("token", "third!");
  struct timespec later[2] = {{0, UTIME_OMIT}, {4102444800, 0}};
  utimensat(AT_FDCWD, (dir + "/token").c_str(), later, 0);
  EXPECT_EQ(*source->token(), "third!");
  // Mid-rotation (missing or empty): keep the last good token.
  fs::remove(dir + "/token");
  EXPECT_EQ(*source->token(), "third!");
  write("token", "");
  EXPECT_EQ(*source->token(), "third!");
}

}  // namespace
}  // namespace octorun::kube
