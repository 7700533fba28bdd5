// `cosim check RESULTS_DIR`: pass/fail verdicts on a finished run (docs/ci.md), for CI.
// Checks come from the command line and/or the [[checks]] tables of a TOML file (a system
// file may carry them; the run ignores them). Every check is evaluated and printed; the exit
// code is 0 when all pass, 1 when one fails, 2 on bad input. --junit writes the verdicts as
// JUnit XML (testsuites / testsuite / testcase / failure), the form CI servers read.
#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>

#include "commands.hpp"
#include "cosim/rt_config/config_reader.hpp"
#include "cosim/runtime/error.hpp"
#include "cosim/runtime/json_writer.hpp"
#include "csv_table.hpp"
#include "json_value.hpp"

namespace cosim::cli {

namespace {

namespace fs = std::filesystem;

struct tolerance_check {
  std::string reference;  // CSV path
  std::vector<std::pair<std::string, double>> columns;
};
struct bound_check {
  std::string value;  // summary.json path: "stop_time_s", "drivers.joystick.stale_events"
  std::optional<double> min, max;
};

struct verdict {
  std::string name;
  std::string kind;  // tolerance | stop_reason | bound
  bool pass = false;
  std::string measured, limit, message;
};

std::string num(double v) {
  return format_double(v);
}

std::pair<std::string, double> parse_tolerance(const std::string& item, const std::string& what) {
  const auto eq = item.find('=');
  COSIM_INPUT_CHECK(eq != std::string::npos && eq > 0 && eq + 1 < item.size(), errc::config_value,
                    what + " \"" + item + "\": expected COLUMN=TOLERANCE, e.g. s=1e-3");
  const std::string col = item.substr(0, eq), v = item.substr(eq + 1);
  double tol = 0.0;
  std::size_t used = 0;
  try {
    tol = std::stod(v, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  COSIM_INPUT_CHECK(used == v.size() && std::isfinite(tol) && tol >= 0.0, errc::config_value,
                    what + " \"" + item + "\": the tolerance must be a finite number >= 0");
  return {col, tol};
}

std::pair<std::string, bound_check> parse_bound(const std::string& item) {
  // KEY=MIN:MAX, either side may be empty.
  const auto eq = item.find('=');
  const auto colon = item.find(':', eq == std::string::npos ? 0 : eq);
  COSIM_INPUT_CHECK(eq != std::string::npos && eq > 0 && colon != std::string::npos,
                    errc::config_value,
                    "--bound \"" + item +
                        "\": expected KEY=MIN:MAX (either may be empty), e.g. "
                        "deadline_misses=:0 or drivers.joystick.stale_events=1:");
  bound_check b;
  b.value = item.substr(0, eq);
  const auto side = [&](const std::string& s) -> std::optional<double> {
    if (s.empty()) return std::nullopt;
    std::size_t used = 0;
    double v = 0.0;
    try {
      v = std::stod(s, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    COSIM_INPUT_CHECK(used == s.size() && std::isfinite(v), errc::config_value,
                      "--bound \"" + item + "\": \"" + s + "\" is not a finite number");
    return v;
  };
  b.min = side(item.substr(eq + 1, colon - eq - 1));
  b.max = side(item.substr(colon + 1));
  COSIM_INPUT_CHECK(b.min || b.max, errc::config_value,
                    "--bound \"" + item + "\": give MIN, MAX or both");
  return {item, b};
}

/// summary.json value at a dotted path; an array is searched for the object whose "name" is
/// the next path element (drivers.joystick.stale_events).
const json_value* lookup(const json_value& root, const std::string& path) {
  const json_value* v = &root;
  std::stringstream ss(path);
  std::string part;
  while (v != nullptr && std::getline(ss, part, '.')) {
    if (v->k == json_value::kind::array) {
      const json_value* hit = nullptr;
      for (const json_value& e : v->arr) {
        const json_value* n = e.find("name");
        if (n != nullptr && n->k == json_value::kind::string && n->str == part) hit = &e;
      }
      v = hit;
    } else if (v->k == json_value::kind::object) {
      v = v->find(part);
    } else {
      v = nullptr;
    }
  }
  return v;
}

std::string xml_escape(const std::string& s) {
  std::string o;
  for (const char c : s) {
    switch (c) {
      case '&':
        o += "&amp;";
        break;
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '"':
        o += "&quot;";
        break;
      default:
        o += c;
    }
  }
  return o;
}

std::string junit_xml(const std::string& suite, const std::vector<verdict>& vs) {
  std::size_t failures = 0;
  for (const auto& v : vs) failures += v.pass ? 0 : 1;
  std::ostringstream x;
  x << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    << "<testsuites name=\"cosim check\" tests=\"" << vs.size() << "\" failures=\"" << failures
    << "\" errors=\"0\">\n"
    << "  <testsuite name=\"" << xml_escape(suite) << "\" tests=\"" << vs.size() << "\" failures=\""
    << failures << "\" errors=\"0\" skipped=\"0\">\n";
  for (const auto& v : vs) {
    x << "    <testcase classname=\"cosim.check." << v.kind << "\" name=\"" << xml_escape(v.name)
      << "\"";
    if (v.pass) {
      x << "/>\n";
      continue;
    }
    x << ">\n      <failure type=\"" << v.kind << "\" message=\"" << xml_escape(v.message)
      << "\">measured: " << xml_escape(v.measured) << "; limit: " << xml_escape(v.limit)
      << "</failure>\n    </testcase>\n";
  }
  x << "  </testsuite>\n</testsuites>\n";
  return x.str();
}

struct check_set {
  std::vector<tolerance_check> tolerances;
  std::vector<std::string> stop_reasons;
  std::vector<std::pair<std::string, bound_check>> bounds;  // name, check
};

/// [[checks]] of a TOML file: reference + tolerance = { col = tol }, stop_reason, or
/// value + min/max. Other top-level keys (a system file's) are not read here.
void read_checks_file(const std::string& path, check_set& cs) {
  config::config_reader r = config::config_reader::from_file(path);
  const toml::array* arr = r.table().get_as<toml::array>("checks");
  COSIM_INPUT_CHECK(arr != nullptr && !arr->empty(), errc::config_key,
                    path + ": no [[checks]] tables");
  const fs::path base = fs::path(path).parent_path();
  for (std::size_t i = 0; i < arr->size(); ++i) {
    const std::string key = "checks[" + std::to_string(i) + "]";
    const int kinds = (r.has(key + ".reference") ? 1 : 0) + (r.has(key + ".stop_reason") ? 1 : 0) +
                      (r.has(key + ".value") ? 1 : 0);
    if (kinds != 1)
      r.fail(key,
             "a check has exactly one of: reference (with tolerance), stop_reason, value "
             "(with min and/or max)");
    if (r.has(key + ".reference")) {
      tolerance_check t;
      fs::path ref = r.get_string(key + ".reference");
      if (ref.is_relative()) ref = base / ref;
      t.reference = ref.string();
      const toml::table* tt = r.table().at_path(key + ".tolerance").as_table();
      if (tt == nullptr || tt->empty())
        r.fail(key + ".tolerance", "needs a table of column = tolerance, e.g. { s = 1e-3 }");
      for (const auto& [col, node] : *tt) {
        const std::string k = key + ".tolerance." + std::string(col.str());
        const double v = r.get_double(k);
        if (!std::isfinite(v) || v < 0.0) r.fail(k, "must be a finite number >= 0");
        t.columns.emplace_back(std::string(col.str()), v);
      }
      cs.tolerances.push_back(std::move(t));
    } else if (r.has(key + ".stop_reason")) {
      cs.stop_reasons.push_back(r.get_string(key + ".stop_reason"));
    } else {
      bound_check b;
      b.value = r.get_string(key + ".value");
      b.min = r.opt_double(key + ".min");
      b.max = r.opt_double(key + ".max");
      if (!b.min && !b.max) r.fail(key, "a value check needs min, max or both");
      cs.bounds.emplace_back(b.value, b);
    }
  }
}

std::vector<verdict> evaluate(const std::string& dir, const check_set& cs) {
  std::vector<verdict> out;
  const fs::path results = fs::path(dir) / "results.csv";
  const fs::path summary_path = fs::path(dir) / "summary.json";
  COSIM_INPUT_CHECK(
      fs::exists(summary_path), errc::io,
      "check: " + summary_path.string() + " does not exist (no finished run in " + dir + ")");
  std::ifstream in(summary_path);
  std::stringstream ss;
  ss << in.rdbuf();
  json_value summary;
  try {
    summary = parse_json(ss.str());
  } catch (const std::exception& e) {
    throw error(errc::io, "check: " + summary_path.string() + ": " + e.what());
  }
  for (const tolerance_check& t : cs.tolerances) {
    const csv_table a = read_csv(results.string());
    const csv_table b = read_csv(t.reference);
    std::vector<std::string> cols;
    for (const auto& [c, tol] : t.columns) {
      COSIM_INPUT_CHECK(a.column(c) >= 0, errc::config_value,
                        "check: " + results.string() + " has no column '" + c + "'");
      COSIM_INPUT_CHECK(b.column(c) >= 0, errc::config_value,
                        "check: " + t.reference + " has no column '" + c + "'");
      cols.push_back(c);
    }
    // The run may stop early (an expected safety stop): its rows are compared where both
    // files have data; a stop_reason check says whether the stop was the expected one.
    const std::vector<column_difference> d = compare(a, b, cols, overlap_only_rules);
    for (std::size_t i = 0; i < d.size(); ++i) {
      const double tol = t.columns[i].second;
      verdict v;
      v.kind = "tolerance";
      v.name = "max |" + d[i].column + " - reference|";
      v.limit = num(tol);
      const bool finite = d[i].non_finite.empty() && d[i].samples > 0;
      v.measured =
          finite ? num(d[i].max_abs) : (d[i].samples == 0 ? "no common samples" : d[i].non_finite);
      v.pass = finite && d[i].max_abs <= tol;
      if (!v.pass)
        v.message = finite ? "max |" + d[i].column + " - " + t.reference +
                                 "| = " + num(d[i].max_abs) + " at t = " + num(d[i].t_at_max) +
                                 " s exceeds the tolerance " + num(tol)
                           : d[i].column + ": " + v.measured;
      out.push_back(std::move(v));
    }
  }
  for (const std::string& want : cs.stop_reasons) {
    verdict v;
    v.kind = "stop_reason";
    v.name = "stop_reason";
    const json_value* got = summary.find("stop_reason");
    v.measured = got != nullptr ? got->str : "(none)";
    v.limit = want;
    v.pass = v.measured == want;
    if (!v.pass) {
      const json_value* msg = summary.find("message");
      v.message = "the run stopped with " + v.measured + ", expected " + want +
                  (msg != nullptr ? " (" + msg->str + ")" : "");
    }
    out.push_back(std::move(v));
  }
  for (const auto& [name, b] : cs.bounds) {
    verdict v;
    v.kind = "bound";
    v.name = b.value;
    v.limit = (b.min ? num(*b.min) : "") + " .. " + (b.max ? num(*b.max) : "");
    const json_value* got = lookup(summary, b.value);
    if (got == nullptr || got->k != json_value::kind::number) {
      v.measured = "(absent)";
      v.message = b.value + " is not a number in " + summary_path.string();
    } else {
      v.measured = num(got->num);
      v.pass = (!b.min || got->num >= *b.min) && (!b.max || got->num <= *b.max);
      if (!v.pass) v.message = b.value + " = " + v.measured + " is outside " + v.limit;
    }
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace

command add_check_command(CLI::App& app) {
  struct state {
    std::string dir, reference, checks, junit, stop_reason;
    std::vector<std::string> tolerances, bounds;
  };
  auto st = std::make_shared<state>();
  auto* c = app.add_subcommand(
      "check",
      "Pass/fail verdicts on a finished run, for CI (docs/ci.md). Each check is printed in a\n"
      "table; exit 0 when all pass, 1 when one fails, 2 on bad input. --tolerance compares\n"
      "columns of RESULTS_DIR/results.csv with --reference (max |value - reference| on the\n"
      "reference's time grid where both have rows); --stop-reason and --bound check\n"
      "summary.json. --checks reads [[checks]] tables from a TOML file (a system file may\n"
      "carry them). --junit writes JUnit XML.");
  c->add_option("results", st->dir, "Results folder of a run")
      ->required()
      ->check(CLI::ExistingDirectory);
  c->add_option("--reference", st->reference, "Reference CSV for --tolerance")
      ->check(CLI::ExistingFile);
  c->add_option("--tolerance", st->tolerances, "COLUMN=TOL,... largest allowed |difference|")
      ->delimiter(',');
  c->add_option("--stop-reason", st->stop_reason, "Expected stop_reason (e.g. end_time)");
  c->add_option("--bound", st->bounds,
                "KEY=MIN:MAX on a summary.json number (repeatable), e.g. deadline_misses=:0, "
                "drivers.joystick.stale_events=1:");
  c->add_option("--checks", st->checks, "TOML file with [[checks]] tables")
      ->check(CLI::ExistingFile);
  c->add_option("--junit", st->junit, "Write the verdicts as JUnit XML to FILE");
  return {c, [st] {
            check_set cs;
            COSIM_INPUT_CHECK(st->tolerances.empty() || !st->reference.empty(), errc::config_key,
                              "check: --tolerance needs --reference FILE");
            COSIM_INPUT_CHECK(st->reference.empty() || !st->tolerances.empty(), errc::config_key,
                              "check: --reference needs --tolerance COLUMN=TOL,...");
            if (!st->reference.empty()) {
              tolerance_check t;
              t.reference = st->reference;
              for (const auto& item : st->tolerances)
                t.columns.push_back(parse_tolerance(item, "--tolerance"));
              cs.tolerances.push_back(std::move(t));
            }
            if (!st->stop_reason.empty()) cs.stop_reasons.push_back(st->stop_reason);
            for (const auto& b : st->bounds) cs.bounds.push_back(parse_bound(b));
            if (!st->checks.empty()) read_checks_file(st->checks, cs);
            COSIM_INPUT_CHECK(
                !cs.tolerances.empty() || !cs.stop_reasons.empty() || !cs.bounds.empty(),
                errc::config_key,
                "check: nothing to check (give --tolerance with --reference, "
                "--stop-reason, --bound or --checks)");
            const std::vector<verdict> vs = evaluate(st->dir, cs);
            std::size_t failed = 0;
            std::printf("%-40s %-24s %-24s %s\n", "check", "measured", "limit", "result");
            for (const auto& v : vs) {
              std::printf("%-40s %-24s %-24s %s\n", v.name.c_str(), v.measured.c_str(),
                          v.limit.c_str(), v.pass ? "pass" : "FAIL");
              failed += v.pass ? 0 : 1;
            }
            for (const auto& v : vs)
              if (!v.pass) std::printf("FAIL %s: %s\n", v.name.c_str(), v.message.c_str());
            std::printf("%zu of %zu checks passed\n", vs.size() - failed, vs.size());
            if (!st->junit.empty()) {
              std::ofstream x(st->junit, std::ios::binary | std::ios::trunc);
              x << junit_xml(st->dir, vs);
              x.flush();
              COSIM_INPUT_CHECK(x.good(), errc::io, "check: cannot write --junit " + st->junit);
            }
            return failed == 0 ? 0 : 1;
          }};
}

}  // namespace cosim::cli
