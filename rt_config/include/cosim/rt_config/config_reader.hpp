#pragma once
// Reads a TOML document into plain structs, one key at a time, so that every error can
// name the file, line, key and value. Keys never read are reported as unknown.
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <toml++/toml.h>

#include "cosim/runtime/error.hpp"

namespace cosim::config {

class config_reader {
 public:
  /// Parses `path`; throws cosim::error (config_syntax) with file:line:column on bad TOML.
  static config_reader from_file(const std::string& path);
  static config_reader from_string(const std::string& text, const std::string& name);
  /// A document built in memory (an SSP's system, ssp_reader.cpp); messages name `name`,
  /// without lines.
  static config_reader from_table(toml::table t, const std::string& name);

  /// Applies "key.path=value" overrides. The value is parsed as a TOML value when it can
  /// be, otherwise taken as a string.
  void apply_overrides(const std::vector<std::string>& sets);

  [[nodiscard]] bool has(const std::string& key) const;
  [[nodiscard]] double get_double(const std::string& key);
  [[nodiscard]] std::optional<double> opt_double(const std::string& key);
  [[nodiscard]] std::int64_t get_int(const std::string& key);
  [[nodiscard]] std::optional<std::int64_t> opt_int(const std::string& key);
  [[nodiscard]] std::string get_string(const std::string& key);
  [[nodiscard]] std::optional<std::string> opt_string(const std::string& key);
  [[nodiscard]] std::optional<bool> opt_bool(const std::string& key);
  [[nodiscard]] std::optional<std::vector<std::string>> opt_string_list(const std::string& key);
  [[nodiscard]] std::optional<std::vector<double>> opt_double_list(const std::string& key);
  /// Names of the sub-tables of `key` (e.g. "threads" -> ["multibody", "hydraulics"]).
  [[nodiscard]] std::vector<std::string> table_keys(const std::string& key);

  /// Marks a whole table as read (for sections this scenario does not use).
  void ignore(const std::string& key);

  /// Throws for the first key that was never read.
  void check_all_read() const;

  /// "file:line:col: key = value: why" for a value that fails validation.
  [[noreturn]] void fail(const std::string& key, const std::string& why) const;
  [[nodiscard]] std::string where(const std::string& key) const;
  [[nodiscard]] std::string value_text(const std::string& key) const;
  [[nodiscard]] const std::string& file() const noexcept { return file_; }
  [[nodiscard]] const toml::table& table() const noexcept { return root_; }

 private:
  const toml::node* node(const std::string& key) const;
  const toml::node& require(const std::string& key, const char* type);
  void collect_unread(const toml::table& t, const std::string& prefix,
                      std::vector<std::string>& out) const;

  std::string file_;
  toml::table root_;
  std::set<std::string> read_;
  std::set<std::string> overridden_;
};

}  // namespace cosim::config
