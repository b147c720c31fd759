// A JSON text as a document, for tests that look into what a builder wrote;
// a parse error fails the test.
#pragma once

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <string>

namespace octorun::test {

inline rapidjson::Document parse_json(const std::string& s) {
  rapidjson::Document d;
  d.Parse(s.c_str());
  EXPECT_FALSE(d.HasParseError()) << s;
  return d;
}

}  // namespace octorun::test
