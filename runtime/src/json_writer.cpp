#include "cosim/runtime/json_writer.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace cosim {

namespace {

/// Length of the well-formed UTF-8 sequence at s[i] (Unicode Table 3-7: no overlong forms,
/// no surrogates, nothing above U+10FFFF), or 0 if the bytes there are not one.
std::size_t utf8_length(std::string_view s, std::size_t i) noexcept {
  const auto at = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char b = at(0);
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // range of the second byte
  if (b >= 0xC2 && b <= 0xDF) {
    n = 2;
  } else if (b >= 0xE0 && b <= 0xEF) {
    n = 3;
    if (b == 0xE0) lo = 0xA0;
    if (b == 0xED) hi = 0x9F;
  } else if (b >= 0xF0 && b <= 0xF4) {
    n = 4;
    if (b == 0xF0) lo = 0x90;
    if (b == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > s.size() || at(1) < lo || at(1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k)
    if (at(k) < 0x80 || at(k) > 0xBF) return 0;
  return n;
}

}  // namespace

std::string format_double(double v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

void json_writer::newline() {
  out_.push_back('\n');
  out_.append(2 * first_.size(), ' ');
}

void json_writer::separate() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!first_.empty()) {
    if (!first_.back()) out_.push_back(',');
    first_.back() = false;
    newline();
  }
}

json_writer& json_writer::begin_object() {
  separate();
  out_.push_back('{');
  first_.push_back(true);
  return *this;
}

json_writer& json_writer::end_object() {
  const bool empty = first_.back();
  first_.pop_back();
  if (!empty) newline();
  out_.push_back('}');
  return *this;
}

json_writer& json_writer::begin_array() {
  separate();
  out_.push_back('[');
  first_.push_back(true);
  return *this;
}

json_writer& json_writer::end_array() {
  const bool empty = first_.back();
  first_.pop_back();
  if (!empty) newline();
  out_.push_back(']');
  return *this;
}

json_writer& json_writer::key(std::string_view k) {
  value(k);
  out_.append(": ");
  after_key_ = true;
  return *this;
}

json_writer& json_writer::value(std::string_view v) {
  separate();
  out_.push_back('"');
  for (std::size_t i = 0; i < v.size(); ++i) {
    const char c = v[i];
    switch (c) {
      case '"':
        out_.append("\\\"");
        break;
      case '\\':
        out_.append("\\\\");
        break;
      case '\n':
        out_.append("\\n");
        break;
      case '\t':
        out_.append("\\t");
        break;
      case '\r':
        out_.append("\\r");
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out_.append(buf);
        } else if (static_cast<unsigned char>(c) < 0x80) {
          out_.push_back(c);
        } else if (const std::size_t n = utf8_length(v, i); n > 0) {
          out_.append(v.substr(i, n));
          i += n - 1;
        } else {
          // JSON text is UTF-8 (RFC 8259 Sect. 8.1): a byte that is not part of a
          // well-formed sequence (a path in another encoding) becomes U+FFFD.
          out_.append("\\ufffd");
        }
    }
  }
  out_.push_back('"');
  return *this;
}

json_writer& json_writer::value(double v) {
  if (!std::isfinite(v)) return null();
  separate();
  out_.append(format_double(v));
  return *this;
}

json_writer& json_writer::value(std::int64_t v) {
  separate();
  out_.append(std::to_string(v));
  return *this;
}

json_writer& json_writer::value(bool v) {
  separate();
  out_.append(v ? "true" : "false");
  return *this;
}

json_writer& json_writer::null() {
  separate();
  out_.append("null");
  return *this;
}

json_writer& json_writer::raw(std::string_view json) {
  separate();
  // Re-indent nested documents by the current depth.
  for (char c : json) {
    out_.push_back(c);
    if (c == '\n') out_.append(2 * first_.size(), ' ');
  }
  return *this;
}

}  // namespace cosim
