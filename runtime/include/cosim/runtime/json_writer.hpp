#pragma once
// Minimal streaming JSON writer for summaries. Numbers use the shortest round-trip
// form; non-finite numbers become null (JSON has no infinity). Strings are written as
// UTF-8; each byte that is not part of well-formed UTF-8 (a path in another encoding)
// becomes \ufffd (U+FFFD), so the text is valid JSON for any input.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cosim {

class json_writer {
 public:
  json_writer& begin_object();
  json_writer& end_object();
  json_writer& begin_array();
  json_writer& end_array();
  json_writer& key(std::string_view k);
  json_writer& value(std::string_view v);
  json_writer& value(const char* v) { return value(std::string_view{v}); }
  json_writer& value(const std::string& v) { return value(std::string_view{v}); }
  json_writer& value(double v);
  json_writer& value(std::int64_t v);
  json_writer& value(int v) { return value(static_cast<std::int64_t>(v)); }
  json_writer& value(bool v);
  json_writer& null();
  /// Inserts an already-serialised JSON value.
  json_writer& raw(std::string_view json);
  [[nodiscard]] const std::string& str() const noexcept { return out_; }

 private:
  void separate();
  void newline();
  std::string out_;
  std::vector<bool> first_;  // per open container: no element written yet
  bool after_key_ = false;
};

/// Shortest decimal form that reads back to the same double.
std::string format_double(double v);

}  // namespace cosim
