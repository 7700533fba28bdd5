// cosim tune: the automated co-simulation configuration search of 002 Sect. 2.4, and the
// largest macro step that keeps s1 within a tolerance of a fine reference.
//
// Search (002 Sect. 2.4.1, Fig. 4). The scenario's valve command is replaced by each test
// input of 002 Eqs. (12)-(15) (step, ramp, impulse, sine at the configured frequencies),
// each run for tune.duration seconds. For every configuration of the search space
// (interface, scheme, extrapolation order, force output, integrators) and every test input,
// H grows from H_ini by H_inc up to H_max. The run at H is in the linear region of
// sum|dE| versus H (002 Fig. 3) when it completes and
//     ratio(H) = (E(H) / E(H_ini)) * (H_ini / H)^(m+1) <= F,
// E = sum|dE| of the run, m the extrapolation order, F = linear_factor (default 2): the
// residual has grown at most F times faster than its theoretical order O(H^(m+1)) (002
// Sect. 2.4 citing [28]; for ZOH this is "sum|dE| proportional to H", 002 Fig. 3). Past F
// the residual grows exponentially or jumps (002: "sum|dE| >> O(H^(m+1))"). Slower growth
// than H^(m+1) is not a failure: discontinuous test inputs keep E ~ H at every order. The
// sweep stops at the first H outside the region (or the first failed run); its result is
// the largest H inside. A configuration's H is the smallest over the test inputs (the most
// conservative, 002 Sect. 4.1); the recommendation is the configuration with the largest
// such H, ties going to the first in the search order (simplest first).
//
// Largest step (--largest-step): for each manoeuvre (default M1 and M2) a fine reference
// (direct, Jacobi, ZOH, every step = tune.fine_step) and one run of the scenario as
// configured per H on the grid; the error is max |s1_H(t_n) - s1_fine(t_n)| over the run's
// communication times. Reported: the largest H such that every grid H up to it stays within
// tune.tolerance.
#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include "commands.hpp"
#include "cosim/rt_config/config_reader.hpp"
#include "cosim/rt_config/model_registry.hpp"
#include "cosim/runtime/error.hpp"
#include "cosim/runtime/json_writer.hpp"
#include "progress.hpp"

namespace cosim::cli {

namespace fs = std::filesystem;

namespace {

constexpr double nan_v = std::numeric_limits<double>::quiet_NaN();

std::string num(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return {buf, r.ptr};
}

/// A TOML float literal (always with '.' or an exponent).
std::string toml_float(double v) {
  std::string s = num(v);
  if (s.find_first_of(".eni") == std::string::npos) s += ".0";
  return s;
}

std::string toml_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out + "\"";
}

std::string join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string s;
  for (const auto& e : v) s += (s.empty() ? "" : sep) + e;
  return s;
}

// ---- Options ---------------------------------------------------------------------------

struct tune_options {
  double H_ini = 1e-3;  // 002 Table 4: H_ini = 1 ms
  double H_inc = 1e-3;
  double H_max = 0.03;
  std::vector<std::string> test_inputs{"step", "ramp", "impulse", "sine"};
  std::vector<double> sine_frequencies{2.0, 10.0};  // [Hz]
  double amplitude = 0.01;                          // valve-command increment
  double width = 0.1;                               // impulse width [s]
  double duration = 1.0;                            // 002 Sect. 2.4.1: 1-s tests
  std::vector<int> orders{0, 1, 2, 3, 4};
  std::vector<std::string> interfaces;     // default: scenario's, plus rim if possible
  std::vector<std::string> schemes;        // default: the scenario's
  std::vector<std::string> force_outputs;  // default: sample (rim only)
  std::map<std::string, std::vector<std::string>> integrators;  // default: the scenario's
  double linear_factor = 2.0;
  // --largest-step
  double fine_step = 5e-5;  // 003 Sect. 4 reference step
  double tolerance = 2e-3;  // [m]
  std::vector<std::string> manoeuvres{"M1", "M2"};
  std::string column;  // default: s, else s_1
};

struct cli_overrides {
  std::optional<double> H_ini, H_inc, H_max, factor, tolerance;
  std::vector<int> orders;
  std::vector<std::string> interfaces, test_inputs, schemes, manoeuvres;
};

struct tune_request {
  std::string scenario;
  std::vector<std::string> sets;
  std::string out;
  int jobs = 0;
  bool largest_step = false;
  cli_overrides cli;
  progress_mode progress = progress_mode::automatic;
};

void refuse(const std::string& what) {
  throw error(errc::config_value, what);
}

/// Reads [tune] (after --set overrides), then the command-line options on top.
tune_options read_options(const tune_request& req, const config::scenario& sc) {
  config::config_reader r = config::config_reader::from_file(req.scenario);
  r.apply_overrides(req.sets);
  tune_options o;
  const config::model_entry* model = config::find_model(sc.model);
  auto pos = [&](const std::string& key, double& v) {
    if (auto x = r.opt_double(key)) {
      if (!(*x > 0.0) || !std::isfinite(*x)) r.fail(key, "must be a positive, finite number");
      v = *x;
    }
  };
  pos("tune.H_ini", o.H_ini);
  if (auto x = r.opt_double("tune.H_inc")) {
    if (!(*x > 0.0) || !std::isfinite(*x))
      r.fail("tune.H_inc", "must be > 0: H grows from H_ini by H_inc (002 Sect. 2.4.1)");
    o.H_inc = *x;
  }
  pos("tune.H_max", o.H_max);
  pos("tune.test_amplitude", o.amplitude);
  pos("tune.test_width", o.width);
  pos("tune.duration", o.duration);
  pos("tune.fine_step", o.fine_step);
  pos("tune.tolerance", o.tolerance);
  if (auto x = r.opt_double("tune.linear_factor")) {
    if (!(*x > 1.0) || !std::isfinite(*x)) r.fail("tune.linear_factor", "must be > 1");
    o.linear_factor = *x;
  }
  if (auto v = r.opt_string_list("tune.test_inputs")) o.test_inputs = *v;
  if (auto v = r.opt_double_list("tune.sine_frequencies")) o.sine_frequencies = *v;
  if (auto v = r.opt_double_list("tune.orders")) {
    o.orders.clear();
    for (double d : *v) {
      if (d != std::floor(d) || d < 0 || d > 4) r.fail("tune.orders", "orders are integers 0-4");
      o.orders.push_back(static_cast<int>(d));
    }
  }
  if (auto v = r.opt_string_list("tune.interfaces")) o.interfaces = *v;
  if (auto v = r.opt_string_list("tune.schemes")) o.schemes = *v;
  if (auto v = r.opt_string_list("tune.force_outputs")) o.force_outputs = *v;
  if (auto v = r.opt_string_list("tune.manoeuvres")) o.manoeuvres = *v;
  if (auto v = r.opt_string("tune.column")) o.column = *v;
  for (const auto& sub : r.table_keys("tune.integrators")) {
    const std::string key = "tune.integrators." + sub;
    if (sc.subsystems.count(sub) == 0) r.fail(key, "no subsystem '" + sub + "' in this model");
    o.integrators[sub] = r.opt_string_list(key).value_or(std::vector<std::string>{});
  }
  for (const auto& f : o.sine_frequencies)
    if (!(f > 0.0) || !std::isfinite(f))
      r.fail("tune.sine_frequencies", "frequencies must be > 0 [Hz]");
  // Unknown [tune] keys are errors; the rest of the file is the scenario's.
  for (const auto& [k, v] : r.table())
    if (k.str() != "tune") r.ignore(std::string(k.str()));
  r.check_all_read();

  // Command-line options override the file.
  const cli_overrides& c = req.cli;
  if (c.H_ini) o.H_ini = *c.H_ini;
  if (c.H_inc) o.H_inc = *c.H_inc;
  if (c.H_max) o.H_max = *c.H_max;
  if (c.factor) o.linear_factor = *c.factor;
  if (c.tolerance) o.tolerance = *c.tolerance;
  if (!c.orders.empty()) o.orders = c.orders;
  if (!c.interfaces.empty()) o.interfaces = c.interfaces;
  if (!c.test_inputs.empty()) o.test_inputs = c.test_inputs;
  if (!c.schemes.empty()) o.schemes = c.schemes;
  if (!c.manoeuvres.empty()) o.manoeuvres = c.manoeuvres;

  if (!(o.H_inc > 0.0) || !std::isfinite(o.H_inc))
    refuse("tune.H_inc = " + num(o.H_inc) +
           ": must be > 0: H grows from H_ini by H_inc (002 Sect. 2.4.1)");
  if (!(o.H_ini > 0.0) || !std::isfinite(o.H_ini))
    refuse("tune.H_ini = " + num(o.H_ini) + ": must be > 0");
  if (!(o.H_max >= o.H_ini))
    refuse("tune.H_max = " + num(o.H_max) + ": must be >= tune.H_ini = " + num(o.H_ini));
  if (!(o.linear_factor > 1.0))
    refuse("tune.linear_factor = " + num(o.linear_factor) + ": must be > 1");
  if (!(o.tolerance > 0.0)) refuse("tune.tolerance = " + num(o.tolerance) + ": must be > 0");
  for (int m : o.orders)
    if (m < 0 || m > 4)
      refuse("tune.orders: extrapolation orders are 0-4, got " + std::to_string(m));

  // Defaults that depend on the scenario.
  if (o.interfaces.empty() && !r.has("tune.interfaces") && c.interfaces.empty()) {
    const auto it = sc.options.find("interface");
    o.interfaces.push_back(it != sc.options.end() ? it->second : "direct");
    if (model != nullptr && model->reduced_interface && o.interfaces.front() != "rim") {
      // Only where this scenario accepts it (e.g. not with p-s coupling).
      std::vector<std::string> probe = req.sets;
      probe.push_back("model.interface=rim");
      try {
        (void)config::load_scenario(req.scenario, probe);
        o.interfaces.push_back("rim");
      } catch (const error&) {
      }
    }
  }
  if (o.schemes.empty() && !r.has("tune.schemes") && c.schemes.empty())
    o.schemes.push_back(sc.run.scheme);
  if (o.force_outputs.empty() && !r.has("tune.force_outputs")) {
    const auto it = sc.options.find("force_output");
    o.force_outputs.push_back(it != sc.options.end() ? it->second : "sample");
  }
  for (const auto& [name, cfg] : sc.subsystems)
    if (o.integrators.count(name) == 0) o.integrators[name] = {cfg.integrator};

  for (const auto& s : o.schemes)
    if (s != "jacobi" && s != "gauss-seidel" && s != "gauss-seidel-reversed")
      refuse("tune.schemes: '" + s + "' is not one of jacobi, gauss-seidel, gauss-seidel-reversed");
  for (const auto& s : o.interfaces)
    if (s != "direct" && s != "rim")
      refuse("tune.interfaces: '" + s + "' is not one of direct, rim");
  for (const auto& s : o.force_outputs)
    if (s != "sample" && s != "mean")
      refuse("tune.force_outputs: '" + s + "' is not one of sample, mean");
  for (const auto& t : o.test_inputs)
    if (t != "step" && t != "ramp" && t != "impulse" && t != "sine")
      refuse("tune.test_inputs: '" + t +
             "' is not a test input of 002 Eqs. (12)-(15) (step, ramp, impulse, sine)");
  return o;
}

// ---- In-process runs -------------------------------------------------------------------

/// Keeps t and one column (or nothing).
class trace_sink final : public row_sink {
 public:
  explicit trace_sink(std::string column) : name_(std::move(column)) {}
  void begin(std::span<const std::string> cols) override {
    for (std::size_t i = 0; i < cols.size(); ++i)
      if (!name_.empty() && cols[i] == name_) col_ = i;
  }
  void write(std::span<const double> row) noexcept override {
    if (col_ == 0) return;
    t.push_back(row[0]);
    v.push_back(row[col_]);
  }
  void end() override {}
  [[nodiscard]] bool found() const noexcept { return col_ != 0; }
  std::vector<double> t, v;

 private:
  std::string name_;
  std::size_t col_ = 0;
};

struct run_result {
  std::string status = "error";  // completed | diverged | safety_stop | interrupted | error
  std::string message;
  double sum_abs_dE = nan_v;
  double wall = 0.0;
  std::vector<double> t, v;
  bool column_found = false;
};

run_result run_in_process(const std::string& path, const std::vector<std::string>& sets,
                          const std::string& column) {
  run_result rr;
  const auto w0 = std::chrono::steady_clock::now();
  try {
    const config::scenario sc = config::load_scenario(path, sets);
    auto b = config::build(sc);
    trace_sink sink(column);
    // The operator's SIGINT/SIGTERM/SIGHUP stops the run within a macro step.
    const run_outcome o = run_offline(b->sys, b->plan, b->limits, sink, &operator_stop_flag());
    rr.status = o.stop_reason == "operator_signal" ? "interrupted" : to_string(o.status);
    rr.message = o.message;
    rr.sum_abs_dE = o.energy_residual;
    rr.t = std::move(sink.t);
    rr.v = std::move(sink.v);
    rr.column_found = sink.found();
  } catch (const std::exception& e) {
    rr.status = "error";
    rr.message = e.what();
  }
  rr.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
  return rr;
}

bool stop_requested() noexcept {
  return operator_stop_flag().load(std::memory_order_relaxed);
}

/// Runs jobs[0..n) on `threads` workers (each job is independent); after an operator stop
/// no further job starts.
void parallel_for(std::size_t n, int threads, const std::function<void(std::size_t)>& job) {
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i = next.fetch_add(1); i < n && !stop_requested(); i = next.fetch_add(1))
      job(i);
  };
  std::vector<std::thread> pool;
  const int k = std::max(1, std::min<int>(threads, static_cast<int>(n)));
  for (int i = 1; i < k; ++i) pool.emplace_back(worker);
  worker();
  for (auto& th : pool) th.join();
}

int default_jobs() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

/// The grid H_ini, H_ini + H_inc, ... <= H_max, rounded to whole nanoseconds.
std::vector<double> h_grid(const tune_options& o) {
  std::vector<double> g;
  for (std::int64_t k = 0;; ++k) {
    // Whole nanoseconds, printed without binary noise (0.009, not 0.009000000000000001).
    const double H =
        static_cast<double>(to_duration(o.H_ini + static_cast<double>(k) * o.H_inc).count()) / 1e9;
    if (H > o.H_max * (1.0 + 1e-9)) break;
    g.push_back(H);
    if (k > 100000) break;
  }
  return g;
}

std::string set(const std::string& key, const std::string& value) {
  return key + "=" + value;
}

// ---- The search ------------------------------------------------------------------------

struct configuration {
  std::string interface, scheme, force_output;
  int order = 0;
  std::vector<std::pair<std::string, std::string>> integrators;  // (subsystem, integrator)

  [[nodiscard]] std::string label() const {
    std::string s = interface + "/" + scheme + "/m" + std::to_string(order);
    if (interface == "rim") s += "/" + force_output;
    for (const auto& [sub, integ] : integrators) s += "/" + integ;
    return s;
  }
  [[nodiscard]] std::vector<std::string> sets(const config::scenario& sc,
                                              bool has_interface) const {
    std::vector<std::string> v;
    if (has_interface) v.push_back(set("model.interface", interface));
    if (interface == "rim") {
      v.push_back(set("model.force_output", force_output));
    } else {
      // RIM-only keys of the base scenario back to their direct values.
      if (sc.options.count("force_output") != 0) v.push_back(set("model.force_output", "sample"));
      if (sc.options.count("rim_sync") != 0) v.push_back(set("model.rim_sync", "reset"));
    }
    if (scheme == "jacobi") {
      v.push_back(set("run.scheme", "jacobi"));
    } else {
      v.push_back(set("run.scheme", "gauss-seidel"));
      std::vector<std::string> names = sc.run.order;
      if (scheme == "gauss-seidel-reversed") std::reverse(names.begin(), names.end());
      std::string arr = "[";
      for (const auto& n : names) arr += (arr.size() > 1 ? "," : "") + toml_string(n);
      v.push_back(set("run.order", arr + "]"));
    }
    v.push_back(set("coupling.extrapolation", std::to_string(order)));
    for (const auto& [sub, integ] : integrators) v.push_back(set(sub + ".integrator", integ));
    return v;
  }
};

struct test_input {
  std::string kind;
  double frequency = 0.0;  // sine only
  [[nodiscard]] std::string label() const {
    return kind == "sine" ? "sine@" + num(frequency) + "Hz" : kind;
  }
};

std::vector<configuration> search_space(const tune_options& o) {
  std::vector<std::vector<std::pair<std::string, std::string>>> integ{{}};
  for (const auto& [sub, list] : o.integrators) {
    if (list.empty()) refuse("tune.integrators." + sub + " is empty: the search space is empty");
    std::vector<std::vector<std::pair<std::string, std::string>>> next;
    for (const auto& base : integ)
      for (const auto& i : list) {
        auto e = base;
        e.emplace_back(sub, i);
        next.push_back(std::move(e));
      }
    integ = std::move(next);
  }
  std::vector<configuration> out;
  for (const auto& itf : o.interfaces)
    for (const auto& scheme : o.schemes)
      for (int m : o.orders)
        for (const auto& fo : o.force_outputs) {
          if (itf != "rim" && fo != o.force_outputs.front()) continue;  // force output is RIM-only
          for (const auto& ig : integ) out.push_back({itf, scheme, fo, m, ig});
        }
  return out;
}

struct sweep_row {
  double H = 0.0;
  std::string status;  // linear | nonlinear | failed | interrupted | error
  double sum_abs_dE = nan_v;
  double ratio = nan_v;
  double wall = 0.0;
  std::string message;
};

/// Where a sweep over H got to; only finished sweeps count for the recommendation.
enum class sweep_state { not_started, finished, interrupted };

const char* to_string(sweep_state s) noexcept {
  switch (s) {
    case sweep_state::not_started:
      return "not_started";
    case sweep_state::finished:
      return "finished";
    case sweep_state::interrupted:
      return "interrupted";
  }
  return "?";
}

struct sweep {
  std::size_t config = 0;
  std::size_t input = 0;
  std::vector<sweep_row> rows;
  double largest = 0.0;  // largest H in the linear region; 0 if none
  std::string stop;
  sweep_state state = sweep_state::not_started;
};

/// Advances `bar` by one per run (one row each).
void run_sweep(const std::string& path, const std::vector<std::string>& base_sets,
               const std::vector<std::string>& config_sets, int order, const test_input& in,
               const tune_options& o, const std::vector<double>& grid, sweep& sw, progress& bar) {
  sw.state = sweep_state::finished;
  std::vector<std::string> sets = base_sets;
  sets.insert(sets.end(), config_sets.begin(), config_sets.end());
  sets.push_back(set("model.manoeuvre", in.kind));
  sets.push_back(set("model.test_amplitude", num(o.amplitude)));
  sets.push_back(set("model.test_width", num(o.width)));
  if (in.kind == "sine") sets.push_back(set("model.test_frequency", num(in.frequency)));
  sets.push_back(set("run.duration", num(o.duration)));
  sets.push_back(set("run.output_interval", "0"));
  double r0 = nan_v, h0 = nan_v;  // E and H of the first run
  sw.stop = "H_max reached";
  for (double H : grid) {
    if (stop_requested()) {
      sw.state = sweep_state::interrupted;
      sw.stop = "interrupted by the operator before H = " + num(H);
      return;
    }
    std::vector<std::string> s = sets;
    s.push_back(set("run.macro_step", num(H)));
    const run_result rr = run_in_process(path, s, "");
    bar.advance();
    sweep_row row;
    row.H = H;
    row.sum_abs_dE = rr.sum_abs_dE;
    row.wall = rr.wall;
    row.message = rr.message;
    if (rr.status == "error") {
      row.status = "error";
      sw.rows.push_back(row);
      sw.stop = "error at H = " + num(H) + ": " + rr.message;
      return;
    }
    if (rr.status == "interrupted") {
      // Stopped part-way: says nothing about H.
      row.status = "interrupted";
      sw.rows.push_back(row);
      sw.state = sweep_state::interrupted;
      sw.stop = "interrupted by the operator at H = " + num(H);
      return;
    }
    if (rr.status != "completed") {
      row.status = "failed";
      sw.rows.push_back(row);
      sw.stop = rr.status + " at H = " + num(H);
      return;
    }
    if (std::isnan(r0)) {
      r0 = rr.sum_abs_dE;
      h0 = H;
    }
    // No residual at all (no power bond) leaves nothing to judge: treated as linear.
    row.ratio = r0 > 0.0 ? rr.sum_abs_dE / r0 * std::pow(h0 / H, order + 1) : 1.0;
    const bool linear = row.ratio <= o.linear_factor;
    row.status = linear ? "linear" : "nonlinear";
    sw.rows.push_back(row);
    if (!linear) {
      sw.stop = "left the linear region at H = " + num(H) + " (ratio " + num(row.ratio) + ")";
      return;
    }
    sw.largest = H;
  }
}

/// The resolved scenario as a complete TOML file.
std::string to_toml(const config::scenario& sc, const std::string& header) {
  std::ostringstream t;
  t << header << "\n[model]\nname = " << toml_string(sc.model) << "\n";
  for (const auto& [k, v] : sc.options) t << k << " = " << toml_string(v) << "\n";
  for (const auto& [k, v] : sc.params) t << k << " = " << toml_float(v) << "\n";
  t << "\n[run]\nmode = " << toml_string(config::to_string(sc.run.mode))
    << "\nduration = " << toml_float(sc.run.duration)
    << "\nmacro_step = " << toml_float(sc.run.macro_step)
    << "\nscheme = " << toml_string(sc.run.scheme) << "\norder = [";
  for (std::size_t i = 0; i < sc.run.order.size(); ++i)
    t << (i ? ", " : "") << toml_string(sc.run.order[i]);
  t << "]\n";
  const auto oi = to_duration(sc.run.output_interval).count();
  const auto Hn = to_duration(sc.run.macro_step).count();
  if (oi > 0 && oi % Hn == 0)
    t << "output_interval = " << toml_float(sc.run.output_interval) << "\n";
  for (const auto& [name, cfg] : sc.subsystems) {
    t << "\n[" << name << "]\nintegrator = " << toml_string(cfg.integrator) << "\n";
    if (cfg.step_set) t << "step = " << toml_float(cfg.step) << "\n";
  }
  t << "\n[coupling]\nextrapolation = " << sc.coupling.extrapolation << "\n";
  const bool e = std::isfinite(sc.safety.energy_residual_limit);
  const bool p = std::isfinite(sc.safety.residual_power_limit);
  if (e || p) {
    t << "\n[safety]\n";
    if (e) t << "energy_residual_limit = " << toml_float(sc.safety.energy_residual_limit) << "\n";
    if (p) t << "residual_power_limit = " << toml_float(sc.safety.residual_power_limit) << "\n";
  }
  return t.str();
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  COSIM_INPUT_CHECK(out.good(), errc::io, "cannot write " + path.string());
  out << text;
  out.flush();
  COSIM_INPUT_CHECK(out.good(), errc::io, "error writing " + path.string());
}

/// Whether a result sits at an end of the searched grid, where the grid, not the system,
/// may have decided it.
struct bound_note {
  std::string at;       // "", "H_max" or "H_ini"
  std::string message;  // empty when not at a bound
};

bool same_h(double a, double b) {
  return std::abs(a - b) <= 1e-9 * std::max(std::abs(a), std::abs(b));
}

/// The search: H_ini is the ratio's reference, so it is never itself tested.
bound_note search_bound(double H, const std::vector<double>& grid, const tune_options& o) {
  if (grid.empty() || !(H > 0.0)) return {};
  if (same_h(H, grid.back()))
    return {"H_max", "at the search ceiling H_max = " + num(o.H_max) + " s (largest H searched " +
                         num(grid.back()) +
                         " s): every H searched stayed in the linear region; the true limit "
                         "may be higher, raise tune.H_max"};
  if (same_h(H, grid.front()))
    return {"H_ini", "at the search floor H_ini = " + num(grid.front()) + " s: the next step (" +
                         num(grid[1]) +
                         " s) already left the linear region and H_ini is the ratio's "
                         "reference, not itself tested; the true limit may be lower, lower "
                         "tune.H_ini (and tune.H_inc)"};
  return {};
}

void write_bound(json_writer& j, const bound_note& b) {
  j.key("at_bound");
  if (b.at.empty()) {
    j.null();
  } else {
    j.value(b.at);
  }
  j.key("bound_message").value(b.message);
}

int run_search(const tune_request& req, const config::scenario& sc, const tune_options& o) {
  const auto w0 = std::chrono::steady_clock::now();
  const config::model_entry* model = config::find_model(sc.model);
  const bool has_interface = model != nullptr && model->reduced_interface;
  std::vector<test_input> inputs;
  for (const auto& k : o.test_inputs) {
    if (k == "sine") {
      for (double f : o.sine_frequencies) inputs.push_back({k, f});
    } else {
      inputs.push_back({k, 0.0});
    }
  }
  const std::vector<configuration> configs = search_space(o);
  if (configs.empty() || inputs.empty())
    refuse(
        "the search space is empty (tune.interfaces, tune.schemes, tune.orders, tune.test_inputs, "
        "tune.sine_frequencies and tune.integrators must each list at least one choice)");
  const std::vector<double> grid = h_grid(o);

  std::vector<sweep> sweeps;
  for (std::size_t c = 0; c < configs.size(); ++c)
    for (std::size_t i = 0; i < inputs.size(); ++i) sweeps.push_back({c, i, {}, 0.0, "", {}});
  const int jobs = req.jobs > 0 ? req.jobs : default_jobs();
  std::printf(
      "cosim tune %s: %zu configurations x %zu test inputs, H = %s..%s s by %s s, %d jobs\n",
      req.scenario.c_str(), configs.size(), inputs.size(), num(o.H_ini).c_str(),
      num(o.H_max).c_str(), num(o.H_inc).c_str(), jobs);
  std::fflush(stdout);
  std::vector<std::vector<std::string>> config_sets;
  config_sets.reserve(configs.size());
  for (const auto& c : configs) config_sets.push_back(c.sets(sc, has_interface));
  {
    // Counts grid points: a sweep that leaves the linear region early skips the rest of its
    // grid, so the count of runs is not known in advance.
    progress bar("cosim tune", "grid points", sweeps.size() * grid.size(), req.progress);
    parallel_for(sweeps.size(), jobs, [&](std::size_t k) {
      sweep& sw = sweeps[k];
      run_sweep(req.scenario, req.sets, config_sets[sw.config], configs[sw.config].order,
                inputs[sw.input], o, grid, sw, bar);
      if (sw.state == sweep_state::finished) bar.advance(grid.size() - sw.rows.size());
    });
    bar.finish(stop_requested() ? "interrupted" : "");
  }
  std::size_t finished = 0;
  for (const auto& sw : sweeps) finished += sw.state == sweep_state::finished ? 1 : 0;
  const bool interrupted = finished < sweeps.size();

  // tune.csv: one row per configuration, test input and H.
  const fs::path dir = req.out;
  std::error_code ec;
  fs::create_directories(dir, ec);
  COSIM_INPUT_CHECK(!ec, errc::io,
                    "cannot create output directory " + dir.string() + ": " + ec.message());
  std::ostringstream csv;
  csv << "configuration,interface,scheme,order,force_output,integrators,test_input,H,sum_abs_dE,"
         "ratio,status,wall_time_s\n";
  for (const auto& sw : sweeps) {
    const configuration& c = configs[sw.config];
    std::vector<std::string> ig;
    for (const auto& [sub, i] : c.integrators) ig.push_back(sub + ":" + i);
    for (const auto& r : sw.rows)
      csv << c.label() << "," << c.interface << "," << c.scheme << "," << c.order << ","
          << (c.interface == "rim" ? c.force_output : "") << "," << join(ig, ";") << ","
          << inputs[sw.input].label() << "," << num(r.H) << "," << num(r.sum_abs_dE) << ","
          << num(r.ratio) << "," << r.status << "," << num(r.wall) << "\n";
  }
  write_text(dir / "tune.csv", csv.str());

  // Per configuration: the most conservative H over the test inputs, once all are finished.
  std::vector<double> h_cfg(configs.size(), std::numeric_limits<double>::infinity());
  std::vector<bool> complete(configs.size(), true);
  for (const auto& sw : sweeps) {
    h_cfg[sw.config] = std::min(h_cfg[sw.config], sw.largest);
    if (sw.state != sweep_state::finished) complete[sw.config] = false;
  }
  std::size_t best = configs.size();
  if (!interrupted)
    for (std::size_t c = 0; c < configs.size(); ++c)
      if (h_cfg[c] > 0.0 && (best == configs.size() || h_cfg[c] > h_cfg[best] * (1.0 + 1e-9)))
        best = c;
  const bound_note bound =
      best < configs.size() ? search_bound(h_cfg[best], grid, o) : bound_note{};

  std::printf("\n%-48s", "configuration \\ largest linear H [ms]");
  for (const auto& in : inputs) std::printf(" %10s", in.label().c_str());
  std::printf(" %8s\n", "min");
  for (std::size_t c = 0; c < configs.size(); ++c) {
    std::printf("%-48s", configs[c].label().c_str());
    for (const auto& sw : sweeps) {
      if (sw.config != c) continue;
      if (sw.state == sweep_state::finished) {
        std::printf(" %10.4g", sw.largest * 1e3);
      } else if (sw.state == sweep_state::interrupted && sw.largest > 0.0) {
        char so_far[32];  // the largest linear H so far: a lower bound
        std::snprintf(so_far, sizeof so_far, ">=%.4g", sw.largest * 1e3);
        std::printf(" %10s", so_far);
      } else {
        std::printf(" %10s", sw.state == sweep_state::interrupted ? "interr." : "-");
      }
    }
    if (complete[c]) {
      std::printf(" %8.4g%s\n", h_cfg[c] * 1e3, c == best ? "  <- recommended" : "");
    } else {
      std::printf(" %8s\n", "-");
    }
  }
  for (const auto& sw : sweeps)
    if (sw.state == sweep_state::finished && (sw.rows.empty() || sw.rows.back().status == "error"))
      std::printf("  %s, %s: %s\n", configs[sw.config].label().c_str(),
                  inputs[sw.input].label().c_str(), sw.stop.c_str());
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
  std::size_t runs = 0;
  for (const auto& sw : sweeps) runs += sw.rows.size();

  // tune.json: the search state, its outcome and whether the answer sits at a grid bound.
  const std::string status =
      interrupted ? "interrupted" : (best == configs.size() ? "no_recommendation" : "completed");
  json_writer j;
  j.begin_object();
  j.key("status").value(status);
  j.key("scenario").value(req.scenario);
  j.key("search").begin_object();
  j.key("H_ini").value(o.H_ini).key("H_inc").value(o.H_inc).key("H_max").value(o.H_max);
  j.key("grid_points").value(static_cast<std::int64_t>(grid.size()));
  j.key("linear_factor").value(o.linear_factor);
  j.end_object();
  j.key("sweeps_finished").value(static_cast<std::int64_t>(finished));
  j.key("sweeps_total").value(static_cast<std::int64_t>(sweeps.size()));
  j.key("runs").value(static_cast<std::int64_t>(runs));
  j.key("wall_time_s").value(wall);
  j.key("configurations").begin_array();
  for (std::size_t c = 0; c < configs.size(); ++c) {
    j.begin_object();
    j.key("configuration").value(configs[c].label());
    j.key("largest_linear_H_s");
    if (complete[c]) {
      j.value(h_cfg[c]);
    } else {
      j.null();
    }
    j.key("inputs").begin_array();
    for (const auto& sw : sweeps) {
      if (sw.config != c) continue;
      j.begin_object();
      j.key("test_input").value(inputs[sw.input].label());
      j.key("state").value(to_string(sw.state));
      j.key("largest_linear_H_s").value(sw.largest);
      j.key("runs").value(static_cast<std::int64_t>(sw.rows.size()));
      j.key("stop").value(sw.stop);
      j.end_object();
    }
    j.end_array();
    j.end_object();
  }
  j.end_array();
  j.key("recommended");
  if (best < configs.size()) {
    j.begin_object();
    j.key("configuration").value(configs[best].label());
    j.key("H_s").value(h_cfg[best]);
    write_bound(j, bound);
    j.key("file").value((dir / "recommended.toml").string());
    j.end_object();
  } else {
    j.null();
  }
  j.end_object();
  write_text(dir / "tune.json", j.str() + "\n");

  if (best == configs.size()) {
    // No recommendation this time: a recommended.toml of an earlier search would look like
    // this one's.
    fs::remove(dir / "recommended.toml", ec);
    if (interrupted) {
      std::printf(
          "\nINTERRUPTED by signal: %zu of %zu sweeps (configuration x test input) finished; no "
          "recommendation (the search is incomplete)\n",
          finished, sweeps.size());
    } else {
      std::printf(
          "\nno configuration stays in the linear region at H_ini = %s s; no recommendation\n",
          num(o.H_ini).c_str());
    }
    std::printf("%zu runs in %.2f s wall\n  tune.csv: %s\n  tune.json: %s\n", runs, wall,
                (dir / "tune.csv").c_str(), (dir / "tune.json").c_str());
    return 1;
  }

  // recommended.toml: the scenario itself (its manoeuvre and duration) with the chosen
  // configuration and H, checked by loading it back.
  std::vector<std::string> rec_sets = req.sets;
  for (const auto& s : config_sets[best]) rec_sets.push_back(s);
  rec_sets.push_back(set("run.macro_step", num(h_cfg[best])));
  const config::scenario rec = config::load_scenario(req.scenario, rec_sets);
  std::ostringstream header;
  header << "# Recommended by `cosim tune " << req.scenario << "` (002 Sect. 2.4): configuration "
         << configs[best].label() << ",\n# H = " << num(h_cfg[best])
         << " s, the largest step at which sum|dE| stays within a factor " << num(o.linear_factor)
         << " of O(H^(m+1))\n# for every test input:";
  for (const auto& sw : sweeps)
    if (sw.config == best)
      header << " " << inputs[sw.input].label() << " " << num(sw.largest * 1e3) << " ms;";
  header << "\n# searched H = " << num(o.H_ini) << ".." << num(o.H_max) << " s by " << num(o.H_inc)
         << " s.\n";
  if (!bound.at.empty()) header << "# NOTE: H is " << bound.message << ".\n";
  const std::string text = to_toml(rec, header.str());
  (void)config::parse_scenario(text, (dir / "recommended.toml").string());
  write_text(dir / "recommended.toml", text);
  std::printf("\nrecommended: %s at H = %s s (most conservative over the test inputs)\n",
              configs[best].label().c_str(), num(h_cfg[best]).c_str());
  if (!bound.at.empty()) std::printf("  NOTE: H is %s\n", bound.message.c_str());
  std::printf(
      "%zu runs in %.2f s wall on %d jobs\n  tune.csv: %s\n  tune.json: %s\n  recommended.toml: "
      "%s\n",
      runs, wall, jobs, (dir / "tune.csv").c_str(), (dir / "tune.json").c_str(),
      (dir / "recommended.toml").c_str());
  return 0;
}

// ---- Largest macro step ----------------------------------------------------------------

double interpolate(const std::vector<double>& t, const std::vector<double>& v, double x) {
  const auto it = std::lower_bound(t.begin(), t.end(), x - 1e-12);
  if (it == t.end()) return v.back();
  const std::size_t k = static_cast<std::size_t>(it - t.begin());
  if (k == 0 || std::abs(t[k] - x) < 1e-12) return v[k];
  const double a = (x - t[k - 1]) / (t[k] - t[k - 1]);
  return v[k - 1] + a * (v[k] - v[k - 1]);
}

int run_largest_step(const tune_request& req, const config::scenario& sc, const tune_options& o) {
  const auto w0 = std::chrono::steady_clock::now();
  const config::model_entry* model = config::find_model(sc.model);
  const bool has_interface = model != nullptr && model->reduced_interface;
  if (o.manoeuvres.empty()) refuse("tune.manoeuvres is empty: nothing to measure");
  const std::vector<double> grid = h_grid(o);
  const int jobs = req.jobs > 0 ? req.jobs : default_jobs();

  std::string column = o.column;
  if (column.empty()) {
    const auto b = config::build(sc);
    const auto cols = result_columns(b->sys);
    column = std::find(cols.begin(), cols.end(), "s") != cols.end() ? "s" : "s_1";
  }

  // One fine reference per manoeuvre, then every (manoeuvre, H) run, all in parallel.
  struct cell {
    std::size_t manoeuvre = 0;
    double H = 0.0;  // 0: the fine reference
    run_result rr;
    double max_abs = nan_v;
    std::string status;
    bool started = false;
  };
  std::vector<cell> cells;
  for (std::size_t m = 0; m < o.manoeuvres.size(); ++m) {
    cells.push_back({m, 0.0, {}, nan_v, "", false});
    for (double H : grid) cells.push_back({m, H, {}, nan_v, "", false});
  }
  std::printf(
      "cosim tune --largest-step %s: column %s, tolerance %s m, H = %s..%s s by %s s, %d jobs\n",
      req.scenario.c_str(), column.c_str(), num(o.tolerance).c_str(), num(o.H_ini).c_str(),
      num(o.H_max).c_str(), num(o.H_inc).c_str(), jobs);
  std::fflush(stdout);
  progress bar("cosim tune --largest-step", "runs", cells.size(), req.progress);
  parallel_for(cells.size(), jobs, [&](std::size_t k) {
    cell& c = cells[k];
    c.started = true;
    std::vector<std::string> s = req.sets;
    s.push_back(set("model.manoeuvre", o.manoeuvres[c.manoeuvre]));
    s.push_back(set("run.output_interval", "0"));
    if (c.H == 0.0) {
      // Fine reference: direct Jacobi ZOH with every step at fine_step (003 Sect. 4 step).
      if (has_interface) s.push_back(set("model.interface", "direct"));
      if (sc.options.count("force_output") != 0) s.push_back(set("model.force_output", "sample"));
      if (sc.options.count("rim_sync") != 0) s.push_back(set("model.rim_sync", "reset"));
      s.push_back(set("run.scheme", "jacobi"));
      s.push_back(set("coupling.extrapolation", "0"));
      s.push_back(set("run.macro_step", num(o.fine_step)));
      for (const auto& [name, cfg] : sc.subsystems)
        s.push_back(set(name + ".step", num(o.fine_step)));
    } else {
      s.push_back(set("run.macro_step", num(c.H)));
      // Explicit internal steps stay at most as configured and divide H.
      for (const auto& [name, cfg] : sc.subsystems)
        if (cfg.step_set)
          s.push_back(set(name + ".step", num(config::dividing_step(c.H, cfg.step))));
    }
    c.rr = run_in_process(req.scenario, s, column);
    bar.advance();
  });
  bool interrupted = false;
  for (const auto& c : cells) {
    if (!c.started || c.rr.status == "interrupted") interrupted = true;
  }
  bar.finish(interrupted ? "interrupted" : "");

  std::ostringstream csv;
  csv << "manoeuvre,H,max_abs_ds,status\n";
  std::printf("\n%-10s %10s %14s  %s\n", "manoeuvre", "H [ms]", "max|ds| [mm]", "status");
  struct manoeuvre_result {
    std::string name;
    std::string state = "finished";  // finished | interrupted | no_reference
    double largest = nan_v;          // 0: none on the grid
    bound_note bound;
  };
  std::vector<manoeuvre_result> summary;
  for (std::size_t m = 0; m < o.manoeuvres.size(); ++m) {
    manoeuvre_result res;
    res.name = o.manoeuvres[m];
    const cell* fine = nullptr;
    for (const auto& c : cells)
      if (c.manoeuvre == m && c.H == 0.0) fine = &c;
    if (!fine->started || fine->rr.status == "interrupted") {
      std::printf("%-10s fine reference %s\n", res.name.c_str(),
                  fine->started ? "interrupted" : "not started");
      res.state = "interrupted";
      summary.push_back(res);
      continue;
    }
    if (fine->rr.status != "completed" || !fine->rr.column_found) {
      std::printf("%-10s fine reference %s: %s\n", res.name.c_str(), fine->rr.status.c_str(),
                  fine->rr.status != "completed" ? fine->rr.message.c_str()
                                                 : ("no column " + column).c_str());
      res.state = "no_reference";
      summary.push_back(res);
      continue;
    }
    double largest = 0.0;
    bool contiguous = true;
    for (auto& c : cells) {
      if (c.manoeuvre != m || c.H == 0.0) continue;
      if (!c.started) {
        c.status = "not_started";
      } else if (c.rr.status == "completed") {
        // Only where the reference exists: a duration that H does not divide ends past it.
        double mx = 0.0;
        for (std::size_t i = 0; i < c.rr.t.size() && c.rr.t[i] <= fine->rr.t.back() + 1e-9; ++i)
          mx = std::max(mx, std::abs(c.rr.v[i] - interpolate(fine->rr.t, fine->rr.v, c.rr.t[i])));
        c.max_abs = mx;
        c.status = mx <= o.tolerance ? "within" : "outside";
      } else {
        c.status = c.rr.status;
      }
      // A gap left by the interruption ends the contiguous run of "within" as well: what
      // follows it was not checked.
      if (contiguous && (c.status == "not_started" || c.status == "interrupted"))
        res.state = "interrupted";
      if (c.status == "within" && contiguous)
        largest = c.H;
      else
        contiguous = false;
      csv << res.name << "," << num(c.H) << "," << num(c.max_abs) << "," << c.status << "\n";
      std::printf("%-10s %10.4g %14.4g  %s\n", res.name.c_str(), c.H * 1e3, c.max_abs * 1e3,
                  c.status.c_str());
    }
    res.largest = largest;
    if (res.state == "finished") {
      if (largest > 0.0 && same_h(largest, grid.back())) {
        res.bound = {"H_max", "at the search ceiling H_max = " + num(o.H_max) +
                                  " s (largest H searched " + num(grid.back()) +
                                  " s): the true limit may be higher, raise tune.H_max"};
      } else if (largest == 0.0) {
        res.bound = {"H_ini", "below the search floor H_ini = " + num(grid.front()) +
                                  " s: already the smallest H searched is outside the "
                                  "tolerance; the true limit is lower, lower tune.H_ini"};
      }
    }
    summary.push_back(res);
  }
  const fs::path dir = req.out;
  std::error_code ec;
  fs::create_directories(dir, ec);
  COSIM_INPUT_CHECK(!ec, errc::io,
                    "cannot create output directory " + dir.string() + ": " + ec.message());
  write_text(dir / "largest_step.csv", csv.str());
  std::printf("\n");
  for (const auto& r : summary) {
    std::string answer;
    if (r.state == "interrupted") {
      answer = r.largest > 0.0 ? "at least " + num(r.largest * 1e3) + " ms (interrupted)"
                               : "n/a (interrupted)";
    } else if (r.state == "no_reference") {
      answer = "n/a";
    } else {
      answer = r.largest > 0.0 ? num(r.largest * 1e3) + " ms" : "none on the grid";
    }
    std::printf("largest H with %s within %s mm of the fine reference, %s: %s\n", column.c_str(),
                num(o.tolerance * 1e3).c_str(), r.name.c_str(), answer.c_str());
    if (!r.bound.at.empty()) std::printf("  NOTE: %s\n", r.bound.message.c_str());
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
  std::size_t runs = 0;
  for (const auto& c : cells) runs += c.started ? 1 : 0;

  json_writer j;
  j.begin_object();
  j.key("status").value(interrupted ? "interrupted" : "completed");
  j.key("scenario").value(req.scenario);
  j.key("column").value(column);
  j.key("tolerance_m").value(o.tolerance);
  j.key("search").begin_object();
  j.key("H_ini").value(o.H_ini).key("H_inc").value(o.H_inc).key("H_max").value(o.H_max);
  j.key("grid_points").value(static_cast<std::int64_t>(grid.size()));
  j.end_object();
  j.key("runs").value(static_cast<std::int64_t>(runs));
  j.key("wall_time_s").value(wall);
  j.key("manoeuvres").begin_array();
  for (const auto& r : summary) {
    j.begin_object();
    j.key("manoeuvre").value(r.name);
    j.key("state").value(r.state);
    j.key("largest_H_s").value(r.largest);  // null (NaN) without a reference
    write_bound(j, r.bound);
    j.end_object();
  }
  j.end_array();
  j.end_object();
  write_text(dir / "largest_step.json", j.str() + "\n");
  if (interrupted)
    std::printf("INTERRUPTED by signal: %zu of %zu runs done; the results above are partial\n",
                runs, cells.size());
  std::printf("%zu runs in %.2f s wall\n  largest_step.csv: %s\n  largest_step.json: %s\n", runs,
              wall, (dir / "largest_step.csv").c_str(), (dir / "largest_step.json").c_str());
  return interrupted ? 1 : 0;
}

}  // namespace

command add_tune_command(CLI::App& app) {
  auto req = std::make_shared<tune_request>();
  auto* tune = app.add_subcommand(
      "tune",
      "Automated configuration search of paper 002 Sect. 2.4: replaces the valve command by the\n"
      "test inputs of 002 Eqs. (12)-(15), raises H from H_ini by H_inc for every configuration\n"
      "(interface, scheme, extrapolation order, integrators) until sum|dE| vs H leaves the linear\n"
      "region, and writes DIR/tune.csv (every run), DIR/tune.json (the search state and result)\n"
      "and DIR/recommended.toml (the most conservative H over the test inputs of the best\n"
      "configuration). An answer at an end of the grid says so (printed, \"at_bound\" in\n"
      "tune.json, a NOTE in recommended.toml): at H_max the true limit may be higher, at H_ini\n"
      "lower. With --largest-step: the largest H at which s1 stays within tune.tolerance of a\n"
      "fine reference, for M1 and M2 (DIR/largest_step.csv, DIR/largest_step.json).\n"
      "The search space and grid come from the scenario's [tune] table, --set tune.KEY=VALUE and\n"
      "the options below. Progress (grid points or runs done/total, elapsed, ETA) goes to stderr\n"
      "when it is a terminal. SIGINT/SIGTERM/SIGHUP: no further run starts, running runs stop,\n"
      "and the files are written with the search state so far, marked \"interrupted\" (no\n"
      "recommendation, an earlier recommended.toml is removed); exit code 1.");
  tune->add_option("scenario", req->scenario, "Scenario TOML file")
      ->required()
      ->check(CLI::ExistingFile);
  tune->add_option("--out", req->out, "Output directory (default: results/tune_<scenario name>)");
  tune->add_option("--jobs", req->jobs, "Parallel runs (default: all cores)")
      ->check(CLI::PositiveNumber);
  tune->add_option("--set", req->sets, "Override a scenario or [tune] key (repeatable)")
      ->type_name("KEY=VALUE");
  tune->add_flag(
      "--largest-step", req->largest_step,
      "Report the largest H keeping s1 within tune.tolerance (2 mm) of a fine reference");
  tune->add_option("--H-ini", req->cli.H_ini, "First macro step [s] (tune.H_ini, default 0.001)");
  tune->add_option("--H-inc", req->cli.H_inc, "Increment of H [s] (tune.H_inc, default 0.001)");
  tune->add_option("--H-max", req->cli.H_max, "Largest H tried [s] (tune.H_max, default 0.03)");
  tune->add_option("--factor", req->cli.factor,
                   "Linear-region factor F (tune.linear_factor, default 2)");
  tune->add_option("--tolerance", req->cli.tolerance,
                   "--largest-step tolerance [m] (default 0.002)");
  tune->add_option("--orders", req->cli.orders, "Extrapolation orders, e.g. 0,1,2 (tune.orders)")
      ->delimiter(',');
  tune->add_option("--interfaces", req->cli.interfaces, "direct,rim (tune.interfaces)")
      ->delimiter(',');
  tune->add_option("--schemes", req->cli.schemes,
                   "jacobi,gauss-seidel,gauss-seidel-reversed (tune.schemes)")
      ->delimiter(',');
  tune->add_option("--test-inputs", req->cli.test_inputs,
                   "step,ramp,impulse,sine (tune.test_inputs)")
      ->delimiter(',');
  tune->add_option("--manoeuvres", req->cli.manoeuvres, "--largest-step manoeuvres (default M1,M2)")
      ->delimiter(',');
  tune->footer(
      "[tune] keys: H_ini, H_inc, H_max [s]; test_inputs; sine_frequencies [Hz]; test_amplitude;\n"
      "test_width [s]; duration [s]; orders; interfaces; schemes; force_outputs;\n"
      "integrators.<subsystem>; linear_factor; fine_step [s]; tolerance [m]; manoeuvres; column.");
  add_progress_flags(*tune, req->progress);
  return {tune, [req] {
            if (req->out.empty())
              req->out = "results/tune_" + fs::path(req->scenario).stem().string();
            const config::scenario sc = config::load_scenario(req->scenario, req->sets);
            const tune_options o = read_options(*req, sc);
            install_signal_handlers();
            return req->largest_step ? run_largest_step(*req, sc, o) : run_search(*req, sc, o);
          }};
}

}  // namespace cosim::cli
