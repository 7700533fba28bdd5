#include "json_value.hpp"

#include <cstdlib>
#include <stdexcept>

namespace cosim::cli {

namespace {

class parser {
 public:
  explicit parser(const std::string& s) : s_(s) {}

  json_value document() {
    json_value v = value(0);
    skip();
    if (i_ != s_.size()) fail("end of input");
    return v;
  }

 private:
  [[noreturn]] void fail(const char* expected) const {
    throw std::runtime_error("at byte " + std::to_string(i_) + ": expected " + expected);
  }
  void skip() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t'))
      ++i_;
  }
  bool eat(char c) {
    skip();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  bool word(const char* w) {
    const std::string ws(w);
    if (s_.compare(i_, ws.size(), ws) != 0) return false;
    i_ += ws.size();
    return true;
  }

  std::string string() {
    if (!eat('"')) fail("a string");
    std::string out;
    while (i_ < s_.size() && s_[i_] != '"') {
      char c = s_[i_++];
      if (static_cast<unsigned char>(c) < 0x20) fail("no control character in a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (i_ >= s_.size()) break;
      c = s_[i_++];
      switch (c) {
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
        case 'u': {
          if (i_ + 4 > s_.size()) fail("four hex digits");
          const unsigned long cp = std::strtoul(s_.substr(i_, 4).c_str(), nullptr, 16);
          i_ += 4;
          // UTF-8 of the basic plane (cosim writes only ASCII escapes).
          if (cp < 0x80) {
            out += static_cast<char>(cp);
          } else if (cp < 0x800) {
            out += static_cast<char>(0xC0 | (cp >> 6));
            out += static_cast<char>(0x80 | (cp & 0x3F));
          } else {
            out += static_cast<char>(0xE0 | (cp >> 12));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
          }
          break;
        }
        default:
          out += c;  // \" \\ \/
      }
    }
    if (i_ >= s_.size()) fail("a closing quote");
    ++i_;
    return out;
  }

  json_value value(int depth) {
    if (depth > 200) fail("less nesting");
    skip();
    json_value v;
    if (i_ >= s_.size()) fail("a value");
    const char c = s_[i_];
    if (c == '{') {
      ++i_;
      v.k = json_value::kind::object;
      if (eat('}')) return v;
      do {
        std::string key = string();
        if (!eat(':')) fail("':'");
        v.obj.emplace_back(std::move(key), value(depth + 1));
      } while (eat(','));
      if (!eat('}')) fail("',' or '}'");
    } else if (c == '[') {
      ++i_;
      v.k = json_value::kind::array;
      if (eat(']')) return v;
      do v.arr.push_back(value(depth + 1));
      while (eat(','));
      if (!eat(']')) fail("',' or ']'");
    } else if (c == '"') {
      v.k = json_value::kind::string;
      v.str = string();
    } else if (word("true") || word("false")) {
      v.k = json_value::kind::boolean;
      v.b = c == 't';
    } else if (word("null")) {
      v.k = json_value::kind::null;
    } else {
      const char* begin = s_.c_str() + i_;
      char* end = nullptr;
      v.num = std::strtod(begin, &end);
      if (end == begin || (c != '-' && (c < '0' || c > '9'))) fail("a value");
      v.k = json_value::kind::number;
      v.str.assign(begin, static_cast<std::size_t>(end - begin));
      i_ += static_cast<std::size_t>(end - begin);
    }
    return v;
  }

  const std::string& s_;
  std::size_t i_ = 0;
};

std::string quote(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    if (c == '\n') {
      o += "\\n";
      continue;
    }
    o += c;
  }
  o += '"';
  return o;
}

}  // namespace

const json_value* json_value::find(const std::string& key) const {
  for (const auto& kv : obj)
    if (kv.first == key) return &kv.second;
  return nullptr;
}

std::string json_value::dump() const {
  switch (k) {
    case kind::null:
      return "null";
    case kind::boolean:
      return b ? "true" : "false";
    case kind::number:
      return str;
    case kind::string:
      return quote(str);
    case kind::array: {
      std::string o = "[";
      for (std::size_t i = 0; i < arr.size(); ++i) {
        if (i > 0) o += ',';
        o += arr[i].dump();
      }
      o += ']';
      return o;
    }
    case kind::object: {
      std::string o = "{";
      for (std::size_t i = 0; i < obj.size(); ++i) {
        if (i > 0) o += ',';
        o += quote(obj[i].first);
        o += ':';
        o += obj[i].second.dump();
      }
      o += '}';
      return o;
    }
  }
  return "null";
}

json_value parse_json(const std::string& text) {
  return parser(text).document();
}

}  // namespace cosim::cli
