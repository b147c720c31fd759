#include "common/json_parse.hpp"

#include <rapidjson/encodedstream.h>
#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>

namespace octorun::json {
namespace {

using document = rapidjson::Document;
using rapidjson::SizeType;

// Passes each SAX event to the document being built, counting how deep
// objects and arrays nest; past max_depth it stops the parse.
class depth_limited_handler {
 public:
  explicit depth_limited_handler(document& d) : d_(d) {}

  bool Null() { return d_.Null(); }
  bool Bool(bool b) { return d_.Bool(b); }
  bool Int(int i) { return d_.Int(i); }
  bool Uint(unsigned u) { return d_.Uint(u); }
  bool Int64(std::int64_t i) { return d_.Int64(i); }
  bool Uint64(std::uint64_t u) { return d_.Uint64(u); }
  bool Double(double x) { return d_.Double(x); }
  bool RawNumber(const char* s, SizeType n, bool copy) { return d_.RawNumber(s, n, copy); }
  bool String(const char* s, SizeType n, bool copy) { return d_.String(s, n, copy); }
  bool Key(const char* s, SizeType n, bool copy) { return d_.Key(s, n, copy); }
  bool StartObject() { return enter() && d_.StartObject(); }
  bool EndObject(SizeType members) { return leave() && d_.EndObject(members); }
  bool StartArray() { return enter() && d_.StartArray(); }
  bool EndArray(SizeType elements) { return leave() && d_.EndArray(elements); }

  bool too_deep() const { return too_deep_; }

 private:
  bool enter() {
    if (depth_ == max_depth) {
      too_deep_ = true;
      return false;
    }
    ++depth_;
    return true;
  }
  bool leave() {
    --depth_;
    return true;
  }

  document& d_;
  unsigned depth_ = 0;
  bool too_deep_ = false;
};

// Document::Populate's generator: one iterative parse of `text`.
struct iterative_parse {
  std::string_view text;
  rapidjson::ParseResult result;
  bool too_deep = false;

  bool operator()(document& d) {
    rapidjson::MemoryStream bytes(text.data(), text.size());
    rapidjson::EncodedInputStream<rapidjson::UTF8<>, rapidjson::MemoryStream> in(bytes);
    depth_limited_handler handler(d);
    rapidjson::Reader reader;
    result = reader.Parse<rapidjson::kParseIterativeFlag>(in, handler);
    too_deep = handler.too_deep();
    return !result.IsError();
  }
};

}  // namespace

expected<ok_t, std::string> within_limit(std::string_view text, const source& from) {
  if (text.size() <= from.max_bytes) return ok;
  return unexpected{std::string(from.name) + " of " + std::to_string(text.size()) + " bytes is over its " +
                    std::to_string(from.max_bytes) + "-byte limit"};
}

expected<ok_t, std::string> parse_into(document& out, std::string_view text, const source& from) {
  out.SetNull();
  if (auto fits = within_limit(text, from); !fits) return fits;
  iterative_parse parse{text, {}, false};
  out.Populate(parse);
  if (parse.too_deep)
    return unexpected{"JSON nested deeper than " + std::to_string(max_depth) + " levels (at offset " +
                      std::to_string(parse.result.Offset()) + ")"};
  if (parse.result.IsError()) {
    out.SetNull();
    return unexpected{"invalid JSON at offset " + std::to_string(parse.result.Offset()) + ": " +
                      rapidjson::GetParseError_En(parse.result.Code())};
  }
  return ok;
}

expected<document, std::string> parse(std::string_view text, const source& from) {
  document d;
  auto parsed = parse_into(d, text, from);
  if (!parsed) return unexpected{std::move(parsed.error())};
  return d;
}

}  // namespace octorun::json
