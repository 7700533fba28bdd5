#include "cosim/rt_config/config_reader.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <vector>

#include "cosim/rt_config/scenario.hpp"
#include "cosim/runtime/errno_text.hpp"

namespace cosim::config {

namespace {

/// Levenshtein distance, for "did you mean" hints (short keys only).
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string type_name(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::string:
      return "string";
    case toml::node_type::integer:
      return "integer";
    case toml::node_type::floating_point:
      return "float";
    case toml::node_type::boolean:
      return "boolean";
    case toml::node_type::array:
      return "array";
    case toml::node_type::table:
      return "table";
    default:
      return "date/time";
  }
}

/// Splits a dotted key as TOML does: a quoted part ("mass2.f1" or 'mass2.f1') keeps its dots,
/// so the form the key table prints, coupling.order."mass2.f1", can be given to --set.
/// An unterminated quote gives an empty part (refused as a malformed key).
std::vector<std::string> split_key(const std::string& key) {
  std::vector<std::string> parts;
  std::string cur;
  char quote = 0;
  bool quoted = false;  // the current part was quoted (it may not go on after the quote)
  for (char c : key) {
    if (quote != 0) {
      if (c == quote)
        quote = 0;
      else
        cur.push_back(c);
    } else if (c == '.') {
      parts.push_back(cur);
      cur.clear();
      quoted = false;
    } else if ((c == '"' || c == '\'') && cur.empty() && !quoted) {
      quote = c;
      quoted = true;
    } else if (quoted) {
      return {std::string()};  // text after a closing quote: "a"b
    } else {
      cur.push_back(c);
    }
  }
  if (quote != 0) return {std::string()};
  parts.push_back(cur);
  return parts;
}

/// " (did you mean 'run.macro_step'?)" for a key within two edits of a documented one (a
/// typo, a missing underscore), else "".
std::string did_you_mean(const std::string& key) {
  std::string best;
  std::size_t best_d = 3;
  for (const key_doc& k : documented_keys()) {
    if (k.key.find_first_of("<[ ,") != std::string::npos) continue;  // patterns, not keys
    const std::size_t d = edit_distance(key, k.key);
    if (d < best_d) best_d = d, best = k.key;
  }
  return best.empty() ? "" : " (did you mean '" + best + "'?)";
}

}  // namespace

config_reader config_reader::from_file(const std::string& path) {
  config_reader r;
  r.file_ = path;
  {
    // toml++ reports an unreadable file as a parse error; say what really went wrong.
    std::error_code ec;
    const auto st = std::filesystem::status(path, ec);
    COSIM_INPUT_CHECK(!ec && std::filesystem::exists(st), errc::io,
                      path + ": cannot read scenario: no such file");
    COSIM_INPUT_CHECK(!std::filesystem::is_directory(st), errc::io,
                      path + ": cannot read scenario: is a directory");
    std::FILE* f = std::fopen(path.c_str(), "rb");
    COSIM_INPUT_CHECK(f != nullptr, errc::io,
                      path + ": cannot read scenario: " + errno_text(errno));
    std::fclose(f);
  }
  try {
    r.root_ = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    const auto& b = e.source().begin;
    std::ostringstream os;
    os << path;
    if (b.line > 0) os << ":" << b.line << ":" << b.column;
    os << ": syntax error: " << e.description();
    throw error(errc::config_syntax, os.str());
  }
  return r;
}

config_reader config_reader::from_string(const std::string& text, const std::string& name) {
  config_reader r;
  r.file_ = name;
  try {
    r.root_ = toml::parse(text, name);
  } catch (const toml::parse_error& e) {
    std::ostringstream os;
    os << name << ":" << e.source().begin.line << ":" << e.source().begin.column
       << ": syntax error: " << e.description();
    throw error(errc::config_syntax, os.str());
  }
  return r;
}

config_reader config_reader::from_table(toml::table t, const std::string& name) {
  config_reader r;
  r.file_ = name;
  r.root_ = std::move(t);
  return r;
}

void config_reader::apply_overrides(const std::vector<std::string>& sets) {
  for (const std::string& kv : sets) {
    const auto eq = kv.find('=');
    COSIM_INPUT_CHECK(eq != std::string::npos && eq > 0, errc::config_key,
                      "--set " + kv + ": expected key=value");
    const std::string key = kv.substr(0, eq);
    const std::string text = kv.substr(eq + 1);
    const auto parts = split_key(key);
    for (const auto& p : parts)
      COSIM_INPUT_CHECK(!p.empty(), errc::config_key, "--set " + kv + ": malformed key");
    toml::table* t = &root_;
    for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
      // "connections[2]": an element of an array of tables ([[connections]]).
      if (const auto lb = parts[i].find('['); lb != std::string::npos && parts[i].back() == ']') {
        const std::string name = parts[i].substr(0, lb);
        std::size_t idx = 0, used = 0;
        try {
          idx = std::stoul(parts[i].substr(lb + 1, parts[i].size() - lb - 2), &used);
        } catch (const std::exception&) {
          used = 0;
        }
        toml::node* arr = t->get(name);
        COSIM_INPUT_CHECK(used > 0 && used == parts[i].size() - lb - 2, errc::config_key,
                          "--set " + kv + ": malformed index in '" + parts[i] + "'");
        COSIM_INPUT_CHECK(
            arr != nullptr && arr->is_array_of_tables() && idx < arr->as_array()->size(),
            errc::config_key,
            "--set " + kv + ": " + file_ + " has no " + parts[i] +
                " (the file must already have that [[" + name + "]] table)");
        t = (*arr->as_array())[idx].as_table();
        continue;
      }
      toml::node* child = t->get(parts[i]);
      if (child == nullptr) {
        t->insert(parts[i], toml::table{});
        child = t->get(parts[i]);
      }
      COSIM_INPUT_CHECK(child->is_table(), errc::config_key,
                        "--set " + kv + ": '" + parts[i] + "' is not a table");
      t = child->as_table();
    }
    toml::table parsed;
    bool is_toml = true;
    try {
      parsed = toml::parse("v = " + text);
    } catch (const toml::parse_error&) {
      is_toml = false;
    }
    // Replacing a whole section by one value would only surface later as "missing key"
    // errors far from the cause.
    if (const toml::node* old = t->get(parts.back()); old != nullptr && old->is_table()) {
      std::string inside;
      for (const auto& [k, v] : *old->as_table()) {
        inside = key + "." + std::string(k.str());
        break;
      }
      throw error(errc::config_key,
                  "--set " + kv + ": '" + key + "' is a table in " + file_ +
                      ", not a value; set a key inside it" +
                      (inside.empty() ? std::string() : ", e.g. --set " + inside + "=..."));
    }
    if (is_toml && parsed.get("v") != nullptr) {
      t->insert_or_assign(parts.back(), *parsed.get("v"));
    } else {
      t->insert_or_assign(parts.back(), text);
    }
    overridden_.insert(key);
  }
}

const toml::node* config_reader::node(const std::string& key) const {
  return root_.at_path(key).node();
}

bool config_reader::has(const std::string& key) const {
  return node(key) != nullptr;
}

std::string config_reader::where(const std::string& key) const {
  if (overridden_.count(key) != 0) return "--set " + key;
  std::ostringstream os;
  os << file_;
  const toml::node* n = node(key);
  if (n != nullptr && n->source().begin.line > 0)
    os << ":" << n->source().begin.line << ":" << n->source().begin.column;
  return os.str();
}

std::string config_reader::value_text(const std::string& key) const {
  const toml::node* n = node(key);
  if (n == nullptr) return "<missing>";
  if (n->is_string()) return '"' + n->value_or(std::string{}) + '"';
  std::ostringstream os;
  n->visit([&](const auto& v) { os << toml::toml_formatter{v, toml::format_flags::none}; });
  // One line: the formatter breaks arrays holding nan/inf and tables over several lines,
  // and a message is one line.
  const std::string text = os.str();
  std::string out;
  bool space = false;
  for (const char c : text) {
    if (c == '\n' || c == '\r' || c == '\t' || c == ' ') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

void config_reader::fail(const std::string& key, const std::string& why) const {
  throw error(errc::config_value, where(key) + ": " + key + " = " + value_text(key) + ": " + why);
}

const toml::node& config_reader::require(const std::string& key, const char* type) {
  const toml::node* n = node(key);
  if (n == nullptr) {
    const auto dot = key.rfind('.');
    std::string table_where = file_;
    std::string hint;
    if (dot != std::string::npos && has(key.substr(0, dot))) {
      table_where = where(key.substr(0, dot));
      // A key of that table nobody reads and spelled almost alike is likely the intended
      // one ("durration"): name it, rather than only the missing one.
      const toml::node* parent = node(key.substr(0, dot));
      if (parent != nullptr && parent->is_table())
        for (const auto& [k, v] : *parent->as_table()) {
          const std::string name(k.str());
          const std::string full = key.substr(0, dot + 1) + name;
          if (read_.count(full) == 0 && edit_distance(name, key.substr(dot + 1)) <= 2)
            hint = "; the table has '" + full + "', which nothing reads: a misspelling?";
        }
    }
    throw error(errc::config_key,
                table_where + ": missing key '" + key + "' (" + type + ")" + hint);
  }
  read_.insert(key);
  return *n;
}

double config_reader::get_double(const std::string& key) {
  const toml::node& n = require(key, "number");
  if (n.is_floating_point()) return n.as_floating_point()->get();
  if (n.is_integer()) return static_cast<double>(n.as_integer()->get());
  throw error(errc::config_key, where(key) + ": " + key + " = " + value_text(key) +
                                    ": expected a number, got " + type_name(n));
}

std::optional<double> config_reader::opt_double(const std::string& key) {
  if (!has(key)) return std::nullopt;
  return get_double(key);
}

std::int64_t config_reader::get_int(const std::string& key) {
  const toml::node& n = require(key, "integer");
  if (n.is_integer()) return n.as_integer()->get();
  throw error(errc::config_key, where(key) + ": " + key + " = " + value_text(key) +
                                    ": expected an integer, got " + type_name(n));
}

std::optional<std::int64_t> config_reader::opt_int(const std::string& key) {
  if (!has(key)) return std::nullopt;
  return get_int(key);
}

std::string config_reader::get_string(const std::string& key) {
  const toml::node& n = require(key, "string");
  if (n.is_string()) return n.as_string()->get();
  throw error(errc::config_key, where(key) + ": " + key + " = " + value_text(key) +
                                    ": expected a string, got " + type_name(n));
}

std::optional<std::string> config_reader::opt_string(const std::string& key) {
  if (!has(key)) return std::nullopt;
  return get_string(key);
}

std::optional<bool> config_reader::opt_bool(const std::string& key) {
  if (!has(key)) return std::nullopt;
  const toml::node& n = require(key, "boolean");
  if (n.is_boolean()) return n.as_boolean()->get();
  throw error(errc::config_key, where(key) + ": " + key + " = " + value_text(key) +
                                    ": expected true or false, got " + type_name(n));
}

std::optional<std::vector<std::string>> config_reader::opt_string_list(const std::string& key) {
  if (!has(key)) return std::nullopt;
  const toml::node& n = require(key, "array of strings");
  std::vector<std::string> out;
  const toml::array* arr = n.as_array();
  if (arr == nullptr)
    throw error(errc::config_key, where(key) + ": " + key + " = " + value_text(key) +
                                      ": expected an array of strings, got " + type_name(n));
  for (const auto& e : *arr) {
    if (!e.is_string())
      throw error(errc::config_key, where(key) + ": " + key + " = " + value_text(key) +
                                        ": expected an array of strings");
    out.push_back(e.as_string()->get());
  }
  return out;
}

std::optional<std::vector<double>> config_reader::opt_double_list(const std::string& key) {
  if (!has(key)) return std::nullopt;
  const toml::node& n = require(key, "array of numbers");
  std::vector<double> out;
  const toml::array* arr = n.as_array();
  if (arr == nullptr)
    throw error(errc::config_key, where(key) + ": " + key + " = " + value_text(key) +
                                      ": expected an array of numbers, got " + type_name(n));
  for (const auto& e : *arr) {
    if (e.is_floating_point())
      out.push_back(e.as_floating_point()->get());
    else if (e.is_integer())
      out.push_back(static_cast<double>(e.as_integer()->get()));
    else
      throw error(errc::config_key, where(key) + ": " + key + " = " + value_text(key) +
                                        ": expected an array of numbers");
  }
  return out;
}

std::vector<std::string> config_reader::table_keys(const std::string& key) {
  std::vector<std::string> out;
  const toml::node* n = node(key);
  if (n == nullptr) return out;
  if (!n->is_table())
    throw error(errc::config_key,
                where(key) + ": " + key + " = " + value_text(key) + ": must be a table of keys (" +
                    key + " = { NAME = VALUE, ... } or a [" + key +
                    "] section; --set takes them one by one: --set " + key + ".NAME=VALUE)");
  for (const auto& [k, v] : *n->as_table()) out.emplace_back(k.str());
  return out;
}

void config_reader::ignore(const std::string& key) {
  read_.insert(key);
}

void config_reader::collect_unread(const toml::table& t, const std::string& prefix,
                                   std::vector<std::string>& out) const {
  for (const auto& [k, v] : t) {
    const std::string key =
        prefix.empty() ? std::string(k.str()) : prefix + "." + std::string(k.str());
    if (read_.count(key) != 0) continue;
    if (v.is_table()) {
      collect_unread(*v.as_table(), key, out);
    } else if (const toml::array* arr = v.as_array(); arr != nullptr && arr->is_array_of_tables()) {
      // [[connections]] and friends: each element's keys are read as "connections[i].key".
      for (std::size_t i = 0; i < arr->size(); ++i) {
        const std::string ek = key + "[" + std::to_string(i) + "]";
        if (read_.count(ek) == 0) collect_unread(*(*arr)[i].as_table(), ek, out);
      }
    } else {
      out.push_back(key);
    }
  }
}

void config_reader::check_all_read() const {
  std::vector<std::string> unread;
  collect_unread(root_, "", unread);
  if (unread.empty()) return;
  const std::string& key = unread.front();
  // Scenario files take <subsystem>.step; a system file keeps a subsystem's keys in its
  // [subsystems.NAME] table, so say where the key belongs.
  std::string hint;
  if (const auto dot = key.find('.'); dot != std::string::npos) {
    const toml::table* subs = root_["subsystems"].as_table();
    if (subs != nullptr && subs->contains(key.substr(0, dot)))
      hint = " (a subsystem's keys are under subsystems.NAME here: subsystems." + key + ")";
  }
  if (hint.empty()) hint = did_you_mean(key);
  throw error(errc::config_key, where(key) + ": unknown key '" + key + "'" + hint);
}

}  // namespace cosim::config
