// The one request-body writer: member order, escaping, arrays, optional and raw members.
#include "common/json_writer.hpp"

#include <gtest/gtest.h>

namespace octorun::json {
namespace {

TEST(JsonWriter, ObjectsArraysAndScalarsInTheOrderWritten) {
  writer w;
  w.open().field("name", std::string("r-1")).field("group", std::int64_t{7}).field("count", 2);
  w.field("busy", false).field("kind", "Runner").open_array("labels").value("a").value(std::int64_t{3});
  w.open().field("k", "v").close().close_array().open("meta").close();
  EXPECT_EQ(
      w.close().str(),
      R"({"name":"r-1","group":7,"count":2,"busy":false,"kind":"Runner","labels":["a",3,{"k":"v"}],"meta":{}})");
}

TEST(JsonWriter, StringsAreEscaped) {
  EXPECT_EQ(writer().open().field("m", "quote \" backslash \\ newline \n").close().str(),
            R"({"m":"quote \" backslash \\ newline \n"})");
  EXPECT_EQ(writer().open().field("m", std::string_view("nul\0byte", 8)).close().str(),
            R"({"m":"nul\u0000byte"})");
}

TEST(JsonWriter, OptionalSkipsEmptyAndRawCopiesJson) {
  EXPECT_EQ(
      writer().open().optional("a", "").optional("b", "x").raw_field("v", R"({"n":[1,2]})").close().str(),
      R"({"b":"x","v":{"n":[1,2]}})");
}

TEST(JsonWriter, TopLevelArray) {
  EXPECT_EQ(writer().open_array().value("x").close_array().str(), R"(["x"])");
}

}  // namespace
}  // namespace octorun::json
