#include "cosim/runtime/json_writer.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace cosim {

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
  for (char c : v) {
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
        } else {
          out_.push_back(c);
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
