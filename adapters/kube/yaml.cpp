#include "adapters/kube/yaml.hpp"

#include <cerrno>
#include <cstdlib>
#include <vector>

namespace octorun::kube {
namespace {

using rapidjson::Value;
using allocator = rapidjson::Document::AllocatorType;

struct line {
  int indent = 0;
  std::string text;  // without indentation and comment, right-trimmed
  std::string raw;   // without indentation only (block scalars keep '#')
  int number = 0;    // 1-based, for messages
  bool blank = false;
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// A quote opens a scalar only where a token may start; an apostrophe inside
// a plain word ("it's") is just a character.
bool token_start(std::string_view s, size_t i) {
  return i == 0 || s[i - 1] == ' ' || s[i - 1] == '\t' || s[i - 1] == '[' || s[i - 1] == '{' ||
         s[i - 1] == ',';
}

std::string strip_comment(std::string_view s) {
  char quote = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (quote == '"') {
      if (c == '\\')
        ++i;
      else if (c == '"')
        quote = 0;
    } else if (quote == '\'') {
      if (c == '\'' && i + 1 < s.size() && s[i + 1] == '\'')
        ++i;  // '' is an escaped quote
      else if (c == '\'')
        quote = 0;
    } else if ((c == '"' || c == '\'') && token_start(s, i)) {
      quote = c;
    } else if (c == '#' && (i == 0 || s[i - 1] == ' ' || s[i - 1] == '\t')) {
      return std::string(trim(s.substr(0, i)));
    }
  }
  return std::string(trim(s));
}

void append_utf8(std::string& out, unsigned cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

class parser {
 public:
  parser(std::string_view text, allocator& a) : a_(a) {
    int number = 0;
    while (!text.empty()) {
      auto nl = text.find('\n');
      std::string_view raw = text.substr(0, nl);
      text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
      if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
      line l;
      l.number = ++number;
      size_t i = 0;
      while (i < raw.size() && raw[i] == ' ') ++i;
      l.indent = static_cast<int>(i);
      l.raw = std::string(raw.substr(i));
      l.text = strip_comment(raw.substr(i));
      l.blank = l.text.empty() || ((l.text == "---" || l.text == "...") && l.indent == 0);
      if (!l.blank && !l.raw.empty() && l.raw.front() == '\t' && tab_line_ == 0) tab_line_ = l.number;
      lines_.push_back(std::move(l));
    }
  }

  expected<ok_t, std::string> run(Value& root) {
    if (tab_line_ != 0) return fail_at(tab_line_, "tab used for indentation");
    if (!block(0, root)) return unexpected{error_};
    skip_blank();
    if (pos_ < lines_.size()) return fail_at(lines_[pos_].number, "unexpected content");
    return ok;
  }

 private:
  unexpected<std::string> fail_at(int number, const std::string& what) {
    return unexpected{"line " + std::to_string(number) + ": " + what};
  }
  bool fail(const std::string& what) {
    int number = pos_ < lines_.size() ? lines_[pos_].number : static_cast<int>(lines_.size());
    error_ = "line " + std::to_string(number) + ": " + what;
    return false;
  }

  void skip_blank() {
    while (pos_ < lines_.size() && lines_[pos_].blank) ++pos_;
  }
  const line* peek() {
    skip_blank();
    return pos_ < lines_.size() ? &lines_[pos_] : nullptr;
  }

  static bool is_item(std::string_view t) { return t == "-" || t.starts_with("- "); }

  // Splits "key: rest" (key plain or quoted); false when the line is no map entry.
  bool split_key(std::string_view t, std::string& key, std::string_view& rest) {
    if (t.empty() || t.front() == '[' || t.front() == '{') return false;
    size_t after = 0;
    if (t.front() == '"' || t.front() == '\'') {
      size_t end = 0;
      if (!quoted(t, 0, key, end)) return false;
      after = end;
      while (after < t.size() && t[after] == ' ') ++after;
      if (after >= t.size() || t[after] != ':') return false;
    } else {
      size_t colon = t.find(": ");
      if (colon == std::string_view::npos) {
        if (t.back() != ':') return false;
        colon = t.size() - 1;
      }
      key = std::string(trim(t.substr(0, colon)));
      after = colon;
    }
    if (after + 1 < t.size() && t[after + 1] != ' ') return false;
    rest = trim(t.substr(after + 1));
    return true;
  }

  // A quoted scalar starting at t[at]; `end` is one past the closing quote.
  bool quoted(std::string_view t, size_t at, std::string& out, size_t& end) {
    char q = t[at];
    out.clear();
    for (size_t i = at + 1; i < t.size(); ++i) {
      char c = t[i];
      if (q == '\'') {
        if (c == '\'') {
          if (i + 1 < t.size() && t[i + 1] == '\'') {
            out += '\'';
            ++i;
            continue;
          }
          end = i + 1;
          return true;
        }
        out += c;
        continue;
      }
      if (c == '"') {
        end = i + 1;
        return true;
      }
      if (c != '\\') {
        out += c;
        continue;
      }
      if (++i >= t.size()) break;
      switch (t[i]) {
        case 'n':
          out += '\n';
          break;
        case 't':
          out += '\t';
          break;
        case 'r':
          out += '\r';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case '0':
          out += '\0';
          break;
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case ' ':
          out += ' ';
          break;
        case 'x':
        case 'u': {
          size_t digits = t[i] == 'x' ? 2 : 4;
          if (i + digits >= t.size()) return false;
          std::string hex(t.substr(i + 1, digits));
          char* stop = nullptr;
          unsigned long cp = std::strtoul(hex.c_str(), &stop, 16);
          if (stop != hex.c_str() + digits) return false;
          append_utf8(out, static_cast<unsigned>(cp));
          i += digits;
          break;
        }
        default:
          return false;
      }
    }
    return false;
  }

  void plain(std::string_view s, Value& v) {
    s = trim(s);
    if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") {
      v.SetNull();
      return;
    }
    if (s == "true" || s == "True" || s == "TRUE") return (void)v.SetBool(true);
    if (s == "false" || s == "False" || s == "FALSE") return (void)v.SetBool(false);
    std::string str(s);
    bool numeric_start = (s[0] >= '0' && s[0] <= '9') || s[0] == '-' || s[0] == '+' || s[0] == '.';
    if (numeric_start) {
      char* stop = nullptr;
      errno = 0;
      long long n = std::strtoll(str.c_str(), &stop, 10);
      if (stop == str.c_str() + str.size() && errno == 0) return (void)v.SetInt64(n);
      errno = 0;
      double d = std::strtod(str.c_str(), &stop);
      bool hexish = str.find_first_of("xXnN") != std::string::npos;  // no hex floats, nan, inf
      if (stop == str.c_str() + str.size() && errno == 0 && !hexish) return (void)v.SetDouble(d);
    }
    v.SetString(str.data(), static_cast<rapidjson::SizeType>(str.size()), a_);
  }

  // A scalar or flow collection that fills the rest of a line.
  bool inline_value(std::string_view s, Value& v) {
    s = trim(s);
    if (!s.empty() && (s.front() == '[' || s.front() == '{')) {
      size_t at = 0;
      if (!flow(s, at, v)) return fail("bad flow collection");
      while (at < s.size() && s[at] == ' ') ++at;
      if (at != s.size()) return fail("content after flow collection");
      return true;
    }
    if (!s.empty() && (s.front() == '"' || s.front() == '\'')) {
      std::string str;
      size_t end = 0;
      if (!quoted(s, 0, str, end)) return fail("unterminated or invalid quoted scalar");
      if (!trim(s.substr(end)).empty()) return fail("content after quoted scalar");
      v.SetString(str.data(), static_cast<rapidjson::SizeType>(str.size()), a_);
      return true;
    }
    plain(s, v);
    return true;
  }

  bool flow(std::string_view s, size_t& at, Value& v) {
    auto ws = [&] {
      while (at < s.size() && s[at] == ' ') ++at;
    };
    auto scalar = [&](bool is_key, Value& out) {
      ws();
      if (at < s.size() && (s[at] == '"' || s[at] == '\'')) {
        std::string str;
        size_t end = 0;
        if (!quoted(s, at, str, end)) return false;
        at = end;
        out.SetString(str.data(), static_cast<rapidjson::SizeType>(str.size()), a_);
        return true;
      }
      size_t start = at;
      while (at < s.size() && s[at] != ',' && s[at] != ']' && s[at] != '}' &&
             !(is_key && s[at] == ':' && (at + 1 == s.size() || s[at + 1] == ' ')))
        ++at;
      if (is_key) {
        std::string key(trim(s.substr(start, at - start)));
        out.SetString(key.data(), static_cast<rapidjson::SizeType>(key.size()), a_);
      } else {
        plain(s.substr(start, at - start), out);
      }
      return true;
    };
    auto value = [&](Value& out) {
      ws();
      if (at < s.size() && (s[at] == '[' || s[at] == '{')) return flow(s, at, out);
      return scalar(false, out);
    };
    char open = s[at++];
    char close = open == '[' ? ']' : '}';
    if (open == '[')
      v.SetArray();
    else
      v.SetObject();
    ws();
    if (at < s.size() && s[at] == close) return ++at, true;
    while (at < s.size()) {
      if (open == '[') {
        Value item;
        if (!value(item)) return false;
        v.PushBack(item, a_);
      } else {
        Value key, item;
        if (!scalar(true, key)) return false;
        ws();
        if (at >= s.size() || s[at] != ':') return false;
        ++at;
        if (!value(item)) return false;
        v.AddMember(key, item, a_);
      }
      ws();
      if (at < s.size() && s[at] == ',') {
        ++at;
        continue;
      }
      if (at < s.size() && s[at] == close) return ++at, true;
      return false;
    }
    return false;
  }

  // A block node whose first line is indented at least `min_indent`.
  bool block(int min_indent, Value& v) {
    const line* l = peek();
    if (l == nullptr || l->indent < min_indent) {
      v.SetNull();
      return true;
    }
    if (is_item(l->text)) return sequence(l->indent, v);
    std::string key;
    std::string_view rest;
    if (split_key(l->text, key, rest)) return mapping(l->indent, v);
    std::string text = l->text;
    if (!inline_value(text, v)) return false;  // reported on this line
    ++pos_;
    return true;
  }

  bool sequence(int indent, Value& v) {
    v.SetArray();
    for (const line* l = peek(); l && l->indent == indent && is_item(l->text); l = peek()) {
      Value item;
      std::string_view text = l->text;
      size_t offset = 1;
      while (offset < text.size() && text[offset] == ' ') ++offset;
      if (offset >= text.size()) {
        ++pos_;
        if (!block(indent + 1, item)) return false;
      } else {
        // "- key: value" opens a node at the column after the dash: reparse
        // the rest of this line as if it started there.
        line& mut = lines_[pos_];
        mut.text = std::string(text.substr(offset));
        mut.raw = mut.text;
        mut.indent = indent + static_cast<int>(offset);
        if (!block(mut.indent, item)) return false;
      }
      v.PushBack(item, a_);
    }
    const line* next = peek();
    if (next && next->indent > indent) return fail("bad indentation in sequence");
    return true;
  }

  bool mapping(int indent, Value& v) {
    v.SetObject();
    for (const line* l = peek(); l && l->indent == indent && !is_item(l->text); l = peek()) {
      std::string key;
      std::string_view rest;
      if (!split_key(l->text, key, rest)) return fail("expected 'key: value'");
      std::string rest_copy(rest);
      Value item;
      bool scalar_here = !rest_copy.empty() && rest_copy[0] != '|' && rest_copy[0] != '>';
      if (scalar_here && !inline_value(rest_copy, item)) return false;  // reported on this line
      ++pos_;
      if (rest_copy.empty()) {
        const line* next = peek();
        if (next && next->indent > indent) {
          if (!block(indent + 1, item)) return false;
        } else if (next && next->indent == indent && is_item(next->text)) {
          if (!sequence(indent, item)) return false;
        }
      } else if (!scalar_here) {
        block_scalar(indent, rest_copy, item);
      }
      if (v.FindMember(key.c_str()) != v.MemberEnd()) return fail("duplicate key '" + key + "'");
      Value name(key.data(), static_cast<rapidjson::SizeType>(key.size()), a_);
      v.AddMember(name, item, a_);
    }
    const line* next = peek();
    if (next && next->indent > indent) return fail("bad indentation in mapping");
    return true;
  }

  void block_scalar(int parent_indent, const std::string& header, Value& v) {
    bool folded = header[0] == '>';
    bool strip = header.find('-') != std::string::npos;
    bool keep = header.find('+') != std::string::npos;
    std::vector<std::string> body;
    int content_indent = -1;
    while (pos_ < lines_.size()) {
      const line& l = lines_[pos_];
      bool empty = trim(l.raw).empty();
      if (!empty && l.indent <= parent_indent) break;
      if (!empty && content_indent < 0) content_indent = l.indent;
      if (empty) {
        body.emplace_back();
      } else {
        int extra = l.indent - content_indent;
        body.push_back(std::string(extra > 0 ? extra : 0, ' ') + l.raw);
      }
      ++pos_;
    }
    size_t trailing = 0;
    while (!body.empty() && body.back().empty()) body.pop_back(), ++trailing;
    std::string out;
    for (size_t i = 0; i < body.size(); ++i) {
      if (i > 0) out += (folded && !body[i].empty() && !body[i - 1].empty()) ? ' ' : '\n';
      out += body[i];
    }
    if (!strip && !body.empty()) out += '\n';
    if (keep) out.append(trailing, '\n');
    v.SetString(out.data(), static_cast<rapidjson::SizeType>(out.size()), a_);
  }

  std::vector<line> lines_;
  size_t pos_ = 0;
  allocator& a_;
  std::string error_;
  int tab_line_ = 0;
};

}  // namespace

expected<ok_t, std::string> parse_yaml(std::string_view text, rapidjson::Document& out) {
  auto first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && text[first] == '{') {
    out.Parse(text.data(), text.size());
    if (!out.HasParseError()) return ok;
    // Not JSON after all: a one-line YAML flow map, handled below.
  }
  out.SetNull();
  rapidjson::Value root;
  parser p(text, out.GetAllocator());
  auto r = p.run(root);
  if (!r) return r;
  // Swap the value, not the document: the values stay in `out`'s allocator.
  static_cast<rapidjson::Value&>(out).Swap(root);
  return ok;
}

}  // namespace octorun::kube
