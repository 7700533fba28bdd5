#include "summary_source.hpp"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "cosim/runtime/error.hpp"

namespace cosim::config {

namespace {

/// Just enough JSON to walk summary.json to one string member: values are skipped, strings
/// decoded (\uXXXX to UTF-8, surrogate pairs joined). Throws std::runtime_error on bad JSON.
class json_walker {
 public:
  explicit json_walker(const std::string& text) : s_(text) {}

  /// The string at object path keys[0].keys[1]..., from the top-level value.
  std::optional<std::string> find_string(const std::string& a, const std::string& b) {
    std::optional<std::string> found;
    ws();
    if (peek() != '{') throw std::runtime_error("the top level is not an object");
    for_each_member([&](const std::string& k1) {
      if (k1 != a || peek() != '{') return skip_value();
      for_each_member([&](const std::string& k2) {
        if (k2 == b && peek() == '"')
          found = string();
        else
          skip_value();
      });
    });
    return found;
  }

 private:
  char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  void ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t'))
      ++i_;
  }
  void expect(char c) {
    ws();
    if (peek() != c)
      throw std::runtime_error("expected '" + std::string(1, c) + "' at offset " +
                               std::to_string(i_));
    ++i_;
  }
  template <class F>
  void for_each_member(F&& on_member) {
    expect('{');
    ws();
    if (peek() == '}') {
      ++i_;
      return;
    }
    for (;;) {
      ws();
      const std::string k = string();
      expect(':');
      ws();
      on_member(k);
      ws();
      if (peek() == ',') {
        ++i_;
        continue;
      }
      expect('}');
      return;
    }
  }
  unsigned hex4() {
    if (i_ + 4 > s_.size()) throw std::runtime_error("short \\u escape");
    unsigned v = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = s_[i_++];
      v <<= 4U;
      if (c >= '0' && c <= '9')
        v |= static_cast<unsigned>(c - '0');
      else if (c >= 'a' && c <= 'f')
        v |= static_cast<unsigned>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        v |= static_cast<unsigned>(c - 'A' + 10);
      else
        throw std::runtime_error("bad \\u escape at offset " + std::to_string(i_));
    }
    return v;
  }
  static void utf8(std::string& out, std::uint32_t cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0U | (cp >> 6U));
      out += static_cast<char>(0x80U | (cp & 0x3FU));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0U | (cp >> 12U));
      out += static_cast<char>(0x80U | ((cp >> 6U) & 0x3FU));
      out += static_cast<char>(0x80U | (cp & 0x3FU));
    } else {
      out += static_cast<char>(0xF0U | (cp >> 18U));
      out += static_cast<char>(0x80U | ((cp >> 12U) & 0x3FU));
      out += static_cast<char>(0x80U | ((cp >> 6U) & 0x3FU));
      out += static_cast<char>(0x80U | (cp & 0x3FU));
    }
  }
  std::string string() {
    expect('"');
    std::string out;
    for (;;) {
      if (i_ >= s_.size()) throw std::runtime_error("unterminated string");
      const char c = s_[i_++];
      if (c == '"') return out;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (i_ >= s_.size()) throw std::runtime_error("unterminated string");
      const char e = s_[i_++];
      switch (e) {
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
          std::uint32_t cp = hex4();
          if (cp >= 0xD800 && cp < 0xDC00 && i_ + 1 < s_.size() && s_[i_] == '\\' &&
              s_[i_ + 1] == 'u') {
            i_ += 2;
            cp = 0x10000 + ((cp - 0xD800) << 10U) + (hex4() - 0xDC00);
          }
          utf8(out, cp);
          break;
        }
        default:
          out += e;  // \" \\ \/
      }
    }
  }
  void skip_value() {
    ws();
    const char c = peek();
    if (c == '"') {
      (void)string();
    } else if (c == '{') {
      for_each_member([this](const std::string&) { skip_value(); });
    } else if (c == '[') {
      ++i_;
      ws();
      if (peek() == ']') {
        ++i_;
        return;
      }
      for (;;) {
        skip_value();
        ws();
        if (peek() == ',') {
          ++i_;
          continue;
        }
        expect(']');
        return;
      }
    } else {
      // A number, true, false or null.
      const std::size_t start = i_;
      while (i_ < s_.size() && s_[i_] != ',' && s_[i_] != '}' && s_[i_] != ']' && s_[i_] != ' ' &&
             s_[i_] != '\n')
        ++i_;
      if (i_ == start) throw std::runtime_error("expected a value at offset " + std::to_string(i_));
    }
  }

  const std::string& s_;
  std::size_t i_ = 0;
};

}  // namespace

bool is_summary_path(const std::string& path) {
  return std::filesystem::path(path).extension() == ".json";
}

std::string read_summary_system(const std::string& path) {
  std::ifstream in(path);
  COSIM_INPUT_CHECK(static_cast<bool>(in), errc::config_value, path + ": cannot be read");
  std::ostringstream text;
  text << in.rdbuf();
  const std::string s = text.str();
  std::optional<std::string> system;
  try {
    system = json_walker(s).find_string("config", "system_toml");
  } catch (const std::exception& e) {
    throw error(errc::config_value, path + ": not a summary.json: " + e.what());
  }
  COSIM_INPUT_CHECK(system.has_value(), errc::config_value,
                    path + ": no config.system_toml (a summary.json written by cosim run " +
                        "keeps the system it ran there)");
  return *system;
}

}  // namespace cosim::config
