#include "alarm_keys.hpp"

#include <algorithm>
#include <cmath>

#include "cosim/rt_config/model_registry.hpp"
#include "system_file.hpp"

namespace cosim::config::alarm_keys {

namespace {

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& e : v) s += (s.empty() ? "" : ", ") + e;
  return s;
}

std::optional<double> finite(config_reader& r, const std::string& key) {
  const std::optional<double> v = r.opt_double(key);
  if (v && !std::isfinite(*v)) r.fail(key, "must be a finite number");
  return v;
}

// The column an alarm's variable names: a results column as given, the column a recorded
// "subsystem.variable" is written as, or a "subsystem.variable" recorded from now on.
std::string column_of(config_reader& r, const std::string& key, const std::string& var,
                      scenario& sc, std::vector<std::string>& columns) {
  if (std::find(columns.begin(), columns.end(), var) != columns.end()) return var;
  for (const record_decl& d : sc.system.record)
    if (d.ref == var) return d.as.empty() ? d.ref : d.as;
  const auto dot = var.find('.');
  const std::string sub = dot == std::string::npos ? "" : var.substr(0, dot);
  bool known = sc.system.find(sub) != nullptr;
  for (const auto& d : sc.drivers) known = known || d.name == sub;
  if (!known || dot + 1 == var.size()) {
    std::vector<std::string> subs;
    for (const auto& d : sc.system.subsystems) subs.push_back(d.name);
    r.fail(key, "names no results column (" + join(columns) +
                    ") and no \"subsystem.variable\" (subsystems: " + join(subs) + ")");
  }
  // Checked when the system is built, with this key in the message (system_build.cpp).
  record_decl d(var, "");
  d.where = r.where(key);
  d.key = key;
  sc.system.record.push_back(std::move(d));
  columns.push_back(var);
  return var;
}

}  // namespace

void read(config_reader& r, scenario& sc) {
  const std::size_t n = array_size(r, "alarms");
  // results.csv's columns (docs/results.md).
  std::vector<std::string> columns{"t"};
  for (const record_decl& d : sc.system.record) columns.push_back(d.as.empty() ? d.ref : d.as);
  columns.insert(columns.end(), {"dP", "dE", "sum_abs_dE"});
  if (sc.run.iteration.enabled()) columns.insert(columns.end(), {"iterations", "defect"});
  for (std::size_t i = 0; i < n; ++i) {
    const std::string key = "alarms[" + std::to_string(i) + "]";
    only_keys(r, key, {"name", "variable", "min", "max", "rate_max", "debounce", "action"});
    alarm_config a;
    a.at = table_origin(r, key);
    alarm_spec& s = a.spec;
    const std::string var = r.get_string(key + ".variable");
    s.variable = column_of(r, key + ".variable", var, sc, columns);
    s.name = r.opt_string(key + ".name").value_or(var);
    if (s.name.empty() || s.name.find_first_of("\r\n") != std::string::npos)
      r.fail(key + ".name", "must be a non-empty name on one line");
    for (const alarm_config& b : sc.alarms)
      if (b.spec.name == s.name)
        r.fail(r.has(key + ".name") ? key + ".name" : key + ".variable",
               "alarm name \"" + s.name + "\" is taken by " + b.at.key + " (" + b.at.where +
                   "); give each alarm its own name");
    const std::optional<double> lo = finite(r, key + ".min");
    const std::optional<double> hi = finite(r, key + ".max");
    const std::optional<double> rate = finite(r, key + ".rate_max");
    if (!lo && !hi && !rate)
      r.fail(key, "an alarm needs min, max or rate_max (on variable \"" + var + "\")");
    if (lo && hi && !(*lo < *hi))
      r.fail(key + ".min", "must be below " + key + ".max = " + format_double(*hi) +
                               " (the alarm would always fire)");
    if (rate && !(*rate > 0.0)) r.fail(key + ".rate_max", "must be > 0");
    if (lo) s.min = *lo;
    if (hi) s.max = *hi;
    if (rate) s.rate_max = *rate;
    if (const std::optional<double> d = finite(r, key + ".debounce")) {
      if (*d < 0.0 || *d > max_run_seconds)
        r.fail(key + ".debounce", "must be from 0 to " + format_double(max_run_seconds) + " s");
      s.debounce = to_duration(*d);
    }
    const std::string action = r.opt_string(key + ".action").value_or("stop");
    check_choice(r, key + ".action", action, {"stop", "warn"});
    s.action = action == "warn" ? alarm_action::warn : alarm_action::stop;
    sc.alarms.push_back(std::move(a));
  }
}

void write_json(json_writer& j, const std::vector<alarm_config>& alarms) {
  if (alarms.empty()) return;
  j.key("alarms").begin_array();
  for (const alarm_config& a : alarms) {
    const alarm_spec& s = a.spec;
    j.begin_object();
    j.key("name").value(s.name);
    j.key("variable").value(s.variable);
    if (std::isfinite(s.min)) j.key("min").value(s.min);
    if (std::isfinite(s.max)) j.key("max").value(s.max);
    if (std::isfinite(s.rate_max)) j.key("rate_max").value(s.rate_max);
    j.key("debounce").value(to_seconds(s.debounce));
    j.key("action").value(to_string(s.action));
    j.end_object();
  }
  j.end_array();
}

std::vector<key_doc> docs() {
  return {
      {"alarms[i].variable",
       "[[alarms]]: the signal an alarm watches after every macro step: a results.csv column "
       "(e.g. p1, s, dE) or a \"subsystem.variable\" (as output.record takes; recorded too)"},
      {"alarms[i].min, .max",
       "fires when the value is below min or above max (at least one of min, max, rate_max; "
       "min < max)"},
      {"alarms[i].rate_max",
       "fires when |d variable/dt| between consecutive macro steps exceeds this [unit/s]"},
      {"alarms[i].debounce",
       "the condition must hold this long before the alarm fires [s] (default 0)"},
      {"alarms[i].action",
       "stop (default): safety stop 'alarm', safe values sent; warn: counted in summary.json, "
       "logged at most once per second"},
      {"alarms[i].name", "name in messages and summary.json; unique (default: the variable)"},
  };
}

}  // namespace cosim::config::alarm_keys
