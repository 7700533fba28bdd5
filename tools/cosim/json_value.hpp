#pragma once
// A small JSON reader for the files cosim writes (summary.json): objects keep their key
// order. (Boost.JSON's header-only build cannot be linked twice into one program, and a
// test already does.)
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace cosim::cli {

struct json_member;

struct json_value {
  enum class kind { null, boolean, number, string, array, object };
  kind k = kind::null;
  bool b = false;
  double num = 0.0;
  std::string str;  // string; for numbers, the literal as written
  std::vector<json_value> arr;
  // A vector may hold an incomplete type (json_member is defined below); a std::pair of
  // this still incomplete struct may not (clang rejects it).
  std::vector<json_member> obj;

  [[nodiscard]] const json_value* find(const std::string& key) const;
  /// Compact JSON text of this value.
  [[nodiscard]] std::string dump() const;
};

/// One key of an object, in file order.
struct json_member {
  json_member(std::string k, json_value v) : first(std::move(k)), second(std::move(v)) {}
  std::string first;
  json_value second;
};

/// Parses `text`; throws std::runtime_error with the offset and what was expected.
json_value parse_json(const std::string& text);

}  // namespace cosim::cli
