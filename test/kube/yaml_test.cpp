// Kubeconfig YAML (through yaml-cpp) into RapidJSON: structure, scalar typing,
// JSON input, and errors that name the line.
#include "adapters/kube/yaml.hpp"

#include <gtest/gtest.h>

#include "common/json.hpp"

namespace octorun::kube {
namespace {

std::string yaml_to_json(std::string_view text) {
  rapidjson::Document d;
  auto r = parse_yaml(text, d);
  if (!r) return "ERROR " + r.error();
  return json::write(d);
}

TEST(Yaml, BlockMapsAndSequencesOfMaps) {
  auto json = yaml_to_json(R"(apiVersion: v1
kind: Config
clusters:
- name: octorun-test
  cluster:
    server: https://127.0.0.1:6443
    certificate-authority: /tmp/ca.crt
users:
  - name: u
    user:
      token: abc
current-context: octorun-test
)");
  EXPECT_EQ(json,
            R"({"apiVersion":"v1","kind":"Config","clusters":[{"name":"octorun-test","cluster":{"server":)"
            R"("https://127.0.0.1:6443","certificate-authority":"/tmp/ca.crt"}}],"users":[{"name":"u",)"
            R"("user":{"token":"abc"}}],"current-context":"octorun-test"})");
}

TEST(Yaml, ScalarsQuotedPlainAndTyped) {
  EXPECT_EQ(yaml_to_json("a: 'it''s # not a comment'\nb: \"tab\\tq\\\"\\u00e9\"\nc: plain text # comment\n"
                         "d: true\ne: 42\nf: ~\ng: 1.5\nh: \"42\"\ni: it's\n"),
            R"({"a":"it's # not a comment","b":"tab\tq\"é","c":"plain text","d":true,"e":42,"f":null,)"
            R"("g":1.5,"h":"42","i":"it's"})");
}

TEST(Yaml, CommentsBlankLinesAndDocumentMarker) {
  EXPECT_EQ(yaml_to_json("# head\n---\n\nkey: value   # trailing\n  # indented comment\nother: x#not\n"),
            R"({"key":"value","other":"x#not"})");
}

TEST(Yaml, SequenceAtTheSameIndentAsItsKey) {
  EXPECT_EQ(yaml_to_json("list:\n- a\n- b\nnext: 1\n"), R"({"list":["a","b"],"next":1})");
}

TEST(Yaml, NestedSequencesAndEmptyValues) {
  EXPECT_EQ(yaml_to_json("a:\n  - - x\n    - y\n  -\n    k: v\nempty:\nlast: z\n"),
            R"({"a":[["x","y"],{"k":"v"}],"empty":null,"last":"z"})");
}

TEST(Yaml, FlowCollections) {
  EXPECT_EQ(
      yaml_to_json("clusters: [{name: t, cluster: {server: \"https://h:1\", x: [1, 'two']}}]\nempty: []\n"
                   "m: {}\n"),
      R"({"clusters":[{"name":"t","cluster":{"server":"https://h:1","x":[1,"two"]}}],"empty":[],"m":{}})");
}

TEST(Yaml, BlockScalars) {
  EXPECT_EQ(yaml_to_json("lit: |\n  line one\n    indented\n  # kept\nfold: >-\n  a\n  b\nend: 1\n"),
            R"({"lit":"line one\n  indented\n# kept\n","fold":"a b","end":1})");
}

TEST(Yaml, JsonIsAccepted) {
  EXPECT_EQ(yaml_to_json("{\n  \"kind\": \"Config\",\n  \"users\": [ {\"name\": \"u\"} ]\n}\n"),
            R"({"kind":"Config","users":[{"name":"u"}]})");
}

TEST(Yaml, QuotedKeysAndColonsInValues) {
  EXPECT_EQ(yaml_to_json("\"a: b\": c\nurl: http://x:80/p\ntime: 10:00\n"),
            R"({"a: b":"c","url":"http://x:80/p","time":"10:00"})");
}

TEST(Yaml, ErrorsNameTheLine) {
  EXPECT_EQ(yaml_to_json("a: 1\n  b: 2\n").substr(0, 13), "ERROR line 2:");  // bad indentation
  EXPECT_EQ(yaml_to_json("a: 1\na: 2\n"), "ERROR line 2: duplicate key 'a'");
  EXPECT_EQ(yaml_to_json("a:\n\tb: 1\n").substr(0, 13), "ERROR line 2:");  // a tab as indentation
  EXPECT_EQ(yaml_to_json("a: [1, 2\n"), "ERROR line 1: bad flow collection");
  EXPECT_EQ(yaml_to_json("- a\n- b\n  c: d\n").substr(0, 13), "ERROR line 3:");
  EXPECT_EQ(yaml_to_json("? [a, b]\n: c\n").substr(0, 13), "ERROR line 1:");  // keys are scalars
}

TEST(Yaml, TaggedScalarsAndAliases) {
  EXPECT_EQ(yaml_to_json("a: !!str 5\nb: &x 1\nc: *x\n"), R"({"a":"5","b":1,"c":1})");
}

TEST(Yaml, EmptyDocumentIsNull) { EXPECT_EQ(yaml_to_json("# nothing\n"), "null"); }

// A kubeconfig goes through the same limits as every JSON from outside.
TEST(Yaml, DeepNestingInJsonOrYamlIsAnError) {
  EXPECT_EQ(yaml_to_json(std::string(100'000, '[') + std::string(100'000, ']'))
                .rfind("ERROR JSON nested deeper", 0),
            0u);
  std::string block;  // block mappings, 200 deep: yaml-cpp reads them, the conversion refuses them
  for (int i = 0; i < 200; ++i) block += std::string(static_cast<std::size_t>(i), ' ') + "a:\n";
  auto deep = yaml_to_json(block);
  EXPECT_NE(deep.find("nested deeper than 128 levels"), std::string::npos) << deep.substr(0, 200);
  std::string flow = std::string(100'000, '[') + "x";  // not JSON: refused either way, without a crash
  EXPECT_EQ(yaml_to_json(flow).rfind("ERROR", 0), 0u);
}

}  // namespace
}  // namespace octorun::kube
