#include "adapters/kube/yaml.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <regex>
#include <set>

#include "common/json_parse.hpp"

namespace octorun::kube {
namespace {

using allocator = rapidjson::Document::AllocatorType;

struct conversion_error {
  std::string what;
};

std::string at_line(const YAML::Mark& mark, const std::string& what) {
  return "line " + std::to_string(mark.line + 1) + ": " + what;
}

// A plain (unquoted, untagged) scalar typed by the YAML 1.2 core schema.
rapidjson::Value plain_scalar(const std::string& s, allocator& a) {
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL")
    return rapidjson::Value(rapidjson::kNullType);
  if (s == "true" || s == "True" || s == "TRUE") return rapidjson::Value(true);
  if (s == "false" || s == "False" || s == "FALSE") return rapidjson::Value(false);
  static const std::regex integer("[-+]?[0-9]+");
  static const std::regex floating(R"([-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?)");
  if (std::regex_match(s, integer)) {
    std::int64_t v = 0;
    const char* begin = s.data() + (s.front() == '+' ? 1 : 0);
    auto [end, ec] = std::from_chars(begin, s.data() + s.size(), v);
    if (ec == std::errc{} && end == s.data() + s.size()) return rapidjson::Value(v);
  }
  if (std::regex_match(s, floating)) return rapidjson::Value(std::strtod(s.c_str(), nullptr));
  return rapidjson::Value(s.c_str(), static_cast<rapidjson::SizeType>(s.size()), a);
}

// `depth`: how many collections enclose `node`; the limit is JSON's
// (json::max_depth), so nothing recursive later meets a deeper tree.
rapidjson::Value convert(const YAML::Node& node, allocator& a, unsigned depth = 0) {
  if ((node.IsSequence() || node.IsMap()) && depth == json::max_depth)
    throw conversion_error{
        at_line(node.Mark(), "nested deeper than " + std::to_string(json::max_depth) + " levels")};
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return rapidjson::Value(rapidjson::kNullType);
    case YAML::NodeType::Scalar: {
      const auto& s = node.Scalar();
      if (node.Tag() != "?")
        return rapidjson::Value(s.c_str(), static_cast<rapidjson::SizeType>(s.size()), a);
      return plain_scalar(s, a);
    }
    case YAML::NodeType::Sequence: {
      rapidjson::Value out(rapidjson::kArrayType);
      for (const auto& item : node) out.PushBack(convert(item, a, depth + 1), a);
      return out;
    }
    case YAML::NodeType::Map: {
      rapidjson::Value out(rapidjson::kObjectType);
      std::set<std::string> seen;
      for (const auto& kv : node) {
        if (!kv.first.IsScalar()) throw conversion_error{at_line(kv.first.Mark(), "keys must be scalars")};
        const auto& key = kv.first.Scalar();
        if (!seen.insert(key).second)
          throw conversion_error{at_line(kv.first.Mark(), "duplicate key '" + key + "'")};
        out.AddMember(rapidjson::Value(key.c_str(), static_cast<rapidjson::SizeType>(key.size()), a),
                      convert(kv.second, a, depth + 1), a);
      }
      return out;
    }
  }
  return rapidjson::Value(rapidjson::kNullType);
}

// yaml-cpp's message in our words where they differ, on the line a reader
// would look at: an error found at the end of the input (an unclosed flow
// collection) is on the last line that has content.
std::string parse_error(std::string_view text, const YAML::Exception& e) {
  std::string what = e.msg;
  if (what == YAML::ErrorMsg::END_OF_SEQ_FLOW || what == YAML::ErrorMsg::END_OF_MAP_FLOW)
    what = "bad flow collection";
  const auto last = text.find_last_not_of(" \t\r\n");
  const int last_line = last == std::string_view::npos
                            ? 0
                            : static_cast<int>(std::count(text.begin(), text.begin() + last, '\n'));
  YAML::Mark mark = e.mark;
  mark.line = std::min(mark.line, last_line);
  return at_line(mark, what);
}

bool looks_like_json(std::string_view text) {
  auto first = text.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && (text[first] == '{' || text[first] == '[');
}

}  // namespace

expected<ok_t, std::string> parse_yaml(std::string_view text, rapidjson::Document& out) {
  if (auto fits = json::within_limit(text, json::sources::kubeconfig); !fits) return fits;
  if (looks_like_json(text)) {
    auto parsed = json::parse_into(out, text, json::sources::kubeconfig);
    if (parsed) return ok_t{};
    if (parsed.error().starts_with("JSON nested deeper")) return unexpected{std::move(parsed.error())};
    // Not JSON after all: a flow collection in YAML ("[a, b]") still parses below.
  }
  try {
    const YAML::Node root = YAML::Load(std::string(text));
    auto value = convert(root, out.GetAllocator());
    static_cast<rapidjson::Value&>(out) = value;  // moves; the values live in out's allocator
    return ok_t{};
  } catch (const YAML::Exception& e) {
    return unexpected{parse_error(text, e)};
  } catch (const conversion_error& e) {
    return unexpected{e.what};
  }
}

}  // namespace octorun::kube
