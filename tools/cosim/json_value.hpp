#pragma once
// A small JSON reader for the files cosim writes (summary.json): objects keep their key
// order. (Boost.JSON's header-only build cannot be linked twice into one program, and a
// test already does.)
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace cosim::cli {

struct json_value {
  enum class kind { null, boolean, number, string, array, object };
  kind k = kind::null;
  bool b = false;
  double num = 0.0;
  std::string str;  // string; for numbers, the literal as written
  std::vector<json_value> arr;
  std::vector<std::pair<std::string, json_value>> obj;

  [[nodiscard]] const json_value* find(const std::string& key) const;
  /// Compact JSON text of this value.
  [[nodiscard]] std::string dump() const;
};

/// Parses `text`; throws std::runtime_error with the offset and what was expected.
json_value parse_json(const std::string& text);

}  // namespace cosim::cli
