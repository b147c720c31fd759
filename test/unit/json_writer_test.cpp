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

TEST(JsonWriter, NullsRawValuesAndKeysWithTheirLength) {
  writer w;
  w.open().null_field("gone").open_array("raw").raw_value(R"({"a":1})").close_array();
  w.raw_field(std::string_view("k\0ey", 4), "true");
  EXPECT_EQ(w.close().str(), std::string(R"({"gone":null,"raw":[{"a":1}],"k\u0000ey":true})"));
}

TEST(JsonWriter, ControllerReference) {
  writer w;
  w.open();
  write_controller_reference(w, "octorun.io/v1alpha1", "Runner", "r-1", "u-1");
  EXPECT_EQ(w.close().str(),
            R"({"ownerReferences":[{"apiVersion":"octorun.io/v1alpha1","kind":"Runner","name":"r-1",)"
            R"("uid":"u-1","controller":true,"blockOwnerDeletion":true}]})");
}

TEST(JsonWriter, TopLevelArray) {
  EXPECT_EQ(writer().open_array().value("x").close_array().str(), R"(["x"])");
}

}  // namespace
}  // namespace octorun::json
