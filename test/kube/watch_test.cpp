// The watch-stream decoder, event application without duplicates, and the
// relist diff.
#include "adapters/kube/watch.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace octorun::kube {
namespace {

object make(const std::string& name, const std::string& rv, const std::string& uid = "uid") {
  return *parse_object(R"({"metadata":{"namespace":"ns","name":")" + name + R"(","uid":")" + uid +
                       R"(","resourceVersion":")" + rv + R"("}})");
}

std::string describe(const std::vector<cache_event>& events) {
  std::vector<std::string> parts;
  for (const auto& e : events)
    parts.push_back(std::string(to_string(e.type)) + " " + std::string(e.obj.name) + "@" +
                    std::string(e.obj.resource_version));
  std::sort(parts.begin(), parts.end());
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

const char* kStream =
    R"({"type":"ADDED","object":{"kind":"ConfigMap","metadata":{"namespace":"ns","name":"a","resourceVersion":"10"}}})"
    "\n"
    R"({"type":"BOOKMARK","object":{"kind":"ConfigMap","metadata":{"resourceVersion":"12"}}})"
    "\n"
    R"({"type":"DELETED","object":{"kind":"ConfigMap","metadata":{"namespace":"ns","name":"a","resourceVersion":"13"}}})"
    "\n"
    R"x({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 1051 (1187)","reason":"Expired","code":410}})x"
    "\n";

TEST(WatchDecoder, DecodesWhateverTheChunking) {
  std::string stream = kStream;
  for (size_t step : {size_t{1}, size_t{7}, size_t{64}, stream.size()}) {
    watch_decoder d;
    std::vector<watch_event> events;
    for (size_t at = 0; at < stream.size(); at += step)
      ASSERT_TRUE(d.feed(std::string_view(stream).substr(at, step), events)) << d.error();
    ASSERT_EQ(events.size(), 4u) << "chunk size " << step;
    EXPECT_EQ(events[0].type, event_type::added);
    EXPECT_EQ(events[0].obj.name, "a");
    EXPECT_EQ(events[1].type, event_type::bookmark);
    EXPECT_EQ(events[1].obj.resource_version, "12");
    EXPECT_EQ(events[2].type, event_type::deleted);
    EXPECT_EQ(events[3].type, event_type::error);
    EXPECT_TRUE(events[3].error.gone());
    EXPECT_EQ(events[3].error.reason, "Expired");
    EXPECT_EQ(events[3].error.message, "too old resource version: 1051 (1187)");
    EXPECT_EQ(d.pending(), 0u);
  }
}

TEST(WatchDecoder, MalformedOrOversizedInputStopsTheStream) {
  watch_decoder d;
  std::vector<watch_event> events;
  EXPECT_FALSE(d.feed("{not json}\n", events));
  EXPECT_NE(d.error().find("malformed watch event"), std::string::npos);
  EXPECT_FALSE(d.feed("{}\n", events));  // stays failed

  watch_decoder shape;
  EXPECT_FALSE(shape.feed(R"({"type":"ADDED","object":[]})"
                          "\n",
                          events));
  EXPECT_EQ(shape.error(), "watch event without type or object");

  watch_decoder small(false, 16);
  EXPECT_FALSE(small.feed(std::string(17, 'x'), events));

  watch_decoder unknown;
  EXPECT_TRUE(unknown.feed(R"({"type":"FUTURE","object":{}})"
                           "\n\n",
                           events));
  EXPECT_TRUE(events.empty());
}

TEST(WatchDecoder, RefusesADeepEvent) {
  watch_decoder d;
  std::vector<watch_event> events;
  std::string line = R"({"type":"ADDED","object":)";
  for (int i = 0; i < 100'000; ++i) line += R"({"a":)";
  EXPECT_FALSE(d.feed(line + "\n", events));
  EXPECT_NE(d.error().find("nested deeper than 128"), std::string::npos) << d.error();
}

TEST(ApplyEvent, EmitsChangesOnceAndNormalisesTypes) {
  object_cache cache;
  auto e = apply_event(cache, event_type::added, make("a", "1"));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->type, event_type::added);
  EXPECT_FALSE(apply_event(cache, event_type::added, make("a", "1")));     // replay
  EXPECT_FALSE(apply_event(cache, event_type::modified, make("a", "1")));  // replay
  e = apply_event(cache, event_type::added, make("a", "2"));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->type, event_type::modified);
  e = apply_event(cache, event_type::modified, make("b", "3"));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->type, event_type::added);
  e = apply_event(cache, event_type::deleted, make("a", "4"));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->type, event_type::deleted);
  EXPECT_FALSE(apply_event(cache, event_type::deleted, make("a", "4")));
  EXPECT_FALSE(apply_event(cache, event_type::bookmark, make("c", "5")));
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(cache.at("ns/b").resource_version, "3");
}

// A typed informer's events (informer_impl.hpp): an object that stops
// qualifying (its keep-filter refuses an update, e.g. a Pod whose Runner
// ownerReference was removed) leaves the cache with a DELETED of its last
// kept state, as a relist would; an unreadable update keeps what was cached.
TEST(ApplyDecodedEvent, ARefusedUpdateLeavesTheCacheAnUnreadableOneKeepsIt) {
  object_cache cache;
  auto e = apply_decoded_event(cache, event_type::added, "ns/a", decoded::kept, make("a", "1"));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->type, event_type::added);
  EXPECT_FALSE(apply_decoded_event(cache, event_type::modified, "ns/a", decoded::unreadable, object{}));
  EXPECT_EQ(cache.at("ns/a").resource_version, "1");
  EXPECT_FALSE(apply_decoded_event(cache, event_type::error, "", decoded::unreadable, object{}));

  e = apply_decoded_event(cache, event_type::modified, "ns/a", decoded::refused, object{});
  ASSERT_TRUE(e);
  EXPECT_EQ(e->type, event_type::deleted);
  EXPECT_EQ(e->obj.resource_version, "1");  // the last state kept: subscribers route it as before
  EXPECT_EQ(cache.count("ns/a"), 0u);
  // Refused again, or refused and never kept: nothing to tell.
  EXPECT_FALSE(apply_decoded_event(cache, event_type::modified, "ns/a", decoded::refused, object{}));
  EXPECT_FALSE(apply_decoded_event(cache, event_type::added, "ns/b", decoded::refused, object{}));
  EXPECT_FALSE(apply_decoded_event(cache, event_type::deleted, "ns/b", decoded::refused, object{}));

  // Kept again: ADDED anew. Its deletion, unreadable or refused, removes it.
  e = apply_decoded_event(cache, event_type::modified, "ns/a", decoded::kept, make("a", "3"));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->type, event_type::added);
  e = apply_decoded_event(cache, event_type::deleted, "ns/a", decoded::unreadable, object{});
  ASSERT_TRUE(e);
  EXPECT_EQ(e->type, event_type::deleted);
  EXPECT_EQ(e->obj.resource_version, "3");
  apply_decoded_event(cache, event_type::added, "ns/c", decoded::kept, make("c", "4"));
  e = apply_decoded_event(cache, event_type::deleted, "ns/c", decoded::refused, object{});
  ASSERT_TRUE(e);
  EXPECT_EQ(e->type, event_type::deleted);
  EXPECT_TRUE(cache.empty());
}

TEST(ReplaceAll, DiffIncludesDeletionsAndRecreations) {
  object_cache cache;
  for (auto o : {make("same", "1"), make("changed", "2"), make("gone", "3"), make("recreated", "4", "old")})
    apply_event(cache, event_type::added, o);
  auto diff = replace_all(
      cache, {make("same", "1"), make("changed", "9"), make("new", "10"), make("recreated", "11", "new")});
  EXPECT_EQ(describe(diff),
            "ADDED new@10, ADDED recreated@11, DELETED gone@3, DELETED recreated@4, MODIFIED changed@9");
  EXPECT_EQ(cache.size(), 4u);
  EXPECT_EQ(cache.count("ns/gone"), 0u);
  EXPECT_EQ(cache.at("ns/recreated").uid, "new");
  EXPECT_TRUE(replace_all(cache, {make("same", "1"), make("changed", "9"), make("new", "10"),
                                  make("recreated", "11", "new")})
                  .empty());
  EXPECT_EQ(describe(replace_all(cache, {})),
            "DELETED changed@9, DELETED new@10, DELETED recreated@11, DELETED same@1");
}

TEST(ResourceVersion, ComparesByLengthThenLexically) {
  EXPECT_TRUE(newer_resource_version("10", "9"));
  EXPECT_TRUE(newer_resource_version("1188", "1187"));
  EXPECT_FALSE(newer_resource_version("1187", "1187"));
  EXPECT_FALSE(newer_resource_version("99", "100"));
}

}  // namespace
}  // namespace octorun::kube
