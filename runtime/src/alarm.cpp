#include "cosim/runtime/alarm.hpp"

#include <algorithm>
#include <cmath>

#include <spdlog/spdlog.h>

#include "cosim/runtime/error.hpp"
#include "cosim/runtime/json_writer.hpp"

namespace cosim {

const char* to_string(alarm_action a) noexcept {
  return a == alarm_action::warn ? "warn" : "stop";
}

alarm_monitor::alarm_monitor(std::span<const alarm_spec> alarms,
                             std::span<const std::string> columns)
    : specs_(alarms.begin(), alarms.end()), state_(alarms.size()) {
  for (std::size_t i = 0; i < specs_.size(); ++i) {
    const alarm_spec& a = specs_[i];
    const std::string who = "alarm '" + a.name + "'";
    const auto c = std::find(columns.begin(), columns.end(), a.variable);
    if (c == columns.end()) {
      std::string names;
      for (const std::string& n : columns) names += (names.empty() ? "" : ", ") + n;
      throw error(errc::config_value,
                  who + ": variable '" + a.variable + "' is no results column (" + names + ")");
    }
    state_[i].column = static_cast<std::size_t>(c - columns.begin());
    const bool bounded = a.min > -std::numeric_limits<double>::infinity() ||
                         a.max < std::numeric_limits<double>::infinity() ||
                         a.rate_max < std::numeric_limits<double>::infinity();
    COSIM_INPUT_CHECK(bounded, errc::config_value, who + " needs min, max or rate_max");
    COSIM_INPUT_CHECK(a.min < a.max, errc::config_value,
                      who + ": min (" + format_double(a.min) + ") must be below max (" +
                          format_double(a.max) + ")");
    COSIM_INPUT_CHECK(a.rate_max > 0.0, errc::config_value,
                      who + ": rate_max must be > 0 (" + format_double(a.rate_max) + ")");
    COSIM_INPUT_CHECK(a.debounce.count() >= 0, errc::config_value, who + ": debounce must be >= 0");
  }
}

std::size_t alarm_monitor::judge(time_point t, double H_s, std::span<const double> row,
                                 bool rate) noexcept {
  std::size_t stop = none;
  for (std::size_t i = 0; i < state_.size(); ++i) {
    const alarm_spec& a = specs_[i];
    state& s = state_[i];
    const double v = row[s.column];
    limit_kind kind = limit_kind::max;
    double seen = v;
    double limit = a.max;
    bool holds = v > a.max;
    if (!holds && v < a.min) {
      holds = true;
      kind = limit_kind::min;
      limit = a.min;
    }
    if (!holds && rate) {
      // The change over the step, as a rate between consecutive rows.
      const double r = std::abs(v - s.prev) / H_s;
      if (r > a.rate_max) {
        holds = true;
        kind = limit_kind::rate;
        seen = r;
        limit = a.rate_max;
      }
    }
    s.prev = v;
    if (!holds) {
      s.holding = false;
      s.firing = false;
      continue;
    }
    if (!s.holding) {
      s.holding = true;
      s.since = t;
    }
    if (s.firing) {
      ++s.active_steps;
      continue;
    }
    if (t - s.since < a.debounce) continue;
    s.firing = true;
    if (s.count++ == 0) s.first = t;
    ++s.active_steps;
    s.at = t;
    s.value = seen;
    s.limit = limit;
    s.kind = kind;
    if (a.action == alarm_action::warn) {
      if (s.unlogged++ == 0) s.unlogged_from = t;
      ++unlogged_;
    } else if (stop == none) {
      stop = i;
    }
  }
  return stop;
}

std::size_t alarm_monitor::start(time_point t0, std::span<const double> row) noexcept {
  return judge(t0, 0.0, row, false);
}

std::size_t alarm_monitor::check(time_point t, duration H, std::span<const double> row) noexcept {
  return judge(t, to_seconds(H), row, true);
}

namespace {

std::string seconds(time_point t) {
  return format_double(to_seconds(t));
}

}  // namespace

std::string alarm_monitor::stop_message(std::size_t i) const {
  const alarm_spec& a = specs_.at(i);
  const state& s = state_.at(i);
  std::string what;
  switch (s.kind) {
    case limit_kind::max:
      what = a.variable + " = " + format_double(s.value) + " above max " + format_double(s.limit);
      break;
    case limit_kind::min:
      what = a.variable + " = " + format_double(s.value) + " below min " + format_double(s.limit);
      break;
    case limit_kind::rate:
      what = "|d" + a.variable + "/dt| = " + format_double(s.value) + " above rate_max " +
             format_double(s.limit);
      break;
  }
  std::string m = "alarm '" + a.name + "': " + what + " at t = " + seconds(s.at) + " s";
  if (a.debounce.count() > 0)
    m += ", beyond the limit since t = " + seconds(s.since) + " s (debounce " +
         format_double(to_seconds(a.debounce)) + " s)";
  return m;
}

void alarm_monitor::take_log_lines(std::int64_t now_ns, bool final, std::vector<std::string>& out) {
  for (std::size_t i = 0; i < state_.size(); ++i) {
    state& s = state_[i];
    if (s.unlogged == 0) continue;
    if (!final && s.lined && now_ns - s.last_line_ns < log_interval_ns) continue;
    std::string line = stop_message(i);
    line.insert(std::string("alarm '").size() + specs_[i].name.size() + 1, " (warn)");
    if (s.unlogged > 1)
      line += "; fired " + std::to_string(s.unlogged) +
              " times since t = " + seconds(s.unlogged_from) + " s";
    out.push_back(std::move(line));
    unlogged_ -= s.unlogged;
    s.unlogged = 0;
    s.lined = true;
    s.last_line_ns = now_ns;
  }
}

void alarm_monitor::log_warnings(std::int64_t now_ns, bool final) {
  std::vector<std::string> lines;
  take_log_lines(now_ns, final, lines);
  for (const std::string& l : lines) spdlog::warn("{}", l);
}

std::vector<alarm_report> alarm_monitor::reports() const {
  std::vector<alarm_report> r;
  for (std::size_t i = 0; i < specs_.size(); ++i) {
    const state& s = state_[i];
    r.push_back({specs_[i].name, specs_[i].variable, specs_[i].action, s.count,
                 s.count > 0 ? to_seconds(s.first) : 0.0, s.active_steps});
  }
  return r;
}

}  // namespace cosim
