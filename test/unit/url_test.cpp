// The one split of a URL (common/url.hpp) and the checks users' URLs get on top.
#include "common/url.hpp"

#include <gtest/gtest.h>

namespace octorun {
namespace {

TEST(SplitUrl, EveryPart) {
  auto u = split_url("HTTPS://user:pw@Host.example:8443/a/b?x=1&y=2#top");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->scheme, "HTTPS");
  EXPECT_EQ(u->userinfo, "user:pw");
  EXPECT_EQ(u->host, "Host.example:8443");
  EXPECT_EQ(u->host_name(), "Host.example");
  EXPECT_EQ(u->port(), "8443");
  EXPECT_EQ(u->path, "/a/b");
  EXPECT_EQ(u->query, "x=1&y=2");
  EXPECT_EQ(u->fragment, "top");
  EXPECT_EQ(u->without_userinfo(), "HTTPS://Host.example:8443/a/b?x=1&y=2#top");
}

TEST(SplitUrl, TheAuthorityEndsAtTheFirstSlashQueryOrFragment) {
  auto u = split_url("http://h?q/x");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->host, "h");
  EXPECT_EQ(u->path, "");
  EXPECT_EQ(u->query, "q/x");
  auto at = split_url("http://a@b@c/d@e");
  ASSERT_TRUE(at);
  EXPECT_EQ(at->userinfo, "a@b") << "the authority's last '@'";
  EXPECT_EQ(at->host, "c");
  EXPECT_EQ(at->path, "/d@e");
}

TEST(SplitUrl, PortsAndIpv6Literals) {
  EXPECT_FALSE(split_url("http://h/")->port());
  EXPECT_EQ(split_url("http://h:/")->port(), "");
  auto v6 = split_url("https://[::1]/x");
  EXPECT_EQ(v6->host_name(), "[::1]");
  EXPECT_FALSE(v6->port());
  EXPECT_EQ(split_url("https://[::1]:8443")->port(), "8443");
}

TEST(SplitUrl, NoneWithoutSchemeAndSlashes) {
  EXPECT_FALSE(split_url("github.com/acme"));
  EXPECT_FALSE(split_url("mailto:x@y"));
  EXPECT_FALSE(split_url("://h"));
  EXPECT_FALSE(split_url("ht tp://h"));
  EXPECT_TRUE(split_url("git+ssh://h"));
}

TEST(SplitHttpUrl, UsersUrlsOnly) {
  auto u = split_http_url("HTTP://proxy.corp:3128/");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->scheme, "http");
  EXPECT_EQ(u->path, "/");
  EXPECT_EQ(split_http_url("ftp://h").error(), url_problem::not_http);
  EXPECT_EQ(split_http_url("https://u@h").error(), url_problem::forbidden_characters);
  EXPECT_EQ(split_http_url("https://h/a b").error(), url_problem::forbidden_characters);
  EXPECT_EQ(split_http_url("https://h#f").error(), url_problem::forbidden_characters);
  EXPECT_EQ(split_http_url("https://h:70000").error(), url_problem::bad_host);
  EXPECT_EQ(split_http_url("https:///x").error(), url_problem::bad_host);
}

TEST(Url, ReadsTheSchemeOfAnyUrl) {
  const std::pair<const char*, const char*> cases[] = {{"HTTPS://x", "https"},
                                                       {"file:///etc", "file"},
                                                       {"/etc/hostname", ""},
                                                       {"host:443/x y", "host"},
                                                       {"a b://x", ""}};
  for (const auto& [url, scheme] : cases) EXPECT_EQ(url_scheme(url), scheme) << url;
}

}  // namespace
}  // namespace octorun
