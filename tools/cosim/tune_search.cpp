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
// Every run is loaded and built in memory (batch_runner.hpp): a candidate configuration is
// a list of --set overrides on the scenario file, never a file of its own. The only TOML
// written is the answer, recommended.toml.
#include "tune_search.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <sstream>

#include "batch_runner.hpp"
#include "cosim/rt_config/model_registry.hpp"
#include "cosim/runtime/error.hpp"
#include "cosim/runtime/json_writer.hpp"

namespace cosim::cli::tune {

namespace fs = std::filesystem;

namespace {

/// A TOML float literal (always with '.' or an exponent).
std::string toml_float(double v) {
  std::string s = num(v);
  if (s.find_first_of(".eni") == std::string::npos) s += ".0";
  return s;
}

std::string join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string s;
  for (const auto& e : v) s += (s.empty() ? "" : sep) + e;
  return s;
}

struct configuration {
  std::string interface, scheme, force_output, correction;
  int order = 0;
  std::vector<std::pair<std::string, std::string>> integrators;  // (subsystem, integrator)

  [[nodiscard]] std::string label() const {
    std::string s = interface + "/" + scheme + "/m" + std::to_string(order);
    if (interface == "rim") s += "/" + force_output;
    if (correction != "none") s += "/" + correction;
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
    v.push_back(
        set("coupling.feedthrough_correction", correction == "feedthrough" ? "true" : "false"));
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
          for (const auto& corr : o.corrections) {
            // The feedthrough correction: Jacobi only, and the RIM has no feedthrough output.
            if (corr == "feedthrough" && (scheme != "jacobi" || itf == "rim")) continue;
            for (const auto& ig : integ) out.push_back({itf, scheme, fo, corr, m, ig});
          }
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
    if (operator_stop().stop_requested()) {
      sw.state = sweep_state::interrupted;
      sw.stop = "interrupted by the operator before H = " + num(H);
      return;
    }
    std::vector<std::string> s = sets;
    s.push_back(set("run.macro_step", num(H)));
    const batch_result rr = run_one(path, {s, "", false, {}});
    bar.advance();
    const double E = rr.outcome ? rr.outcome->energy_residual : nan_v;  // sum|dE|
    sweep_row row;
    row.H = H;
    row.sum_abs_dE = E;
    row.wall = rr.wall_s;
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
      r0 = E;
      h0 = H;
    }
    // No residual at all (no power bond) leaves nothing to judge: treated as linear.
    row.ratio = r0 > 0.0 ? E / r0 * std::pow(h0 / H, order + 1) : 1.0;
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
    << "\nscheme = " << toml_string(to_string(sc.run.scheme)) << "\norder = [";
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
  if (sc.coupling.energy_correction)
    t << "energy_correction = true\nenergy_correction_method = "
      << toml_string(sc.coupling.energy_correction_method) << "\n";
  if (sc.coupling.feedthrough_correction) t << "feedthrough_correction = true\n";
  const bool e = std::isfinite(sc.safety.energy_residual_limit);
  const bool p = std::isfinite(sc.safety.residual_power_limit);
  if (e || p) {
    t << "\n[safety]\n";
    if (e) t << "energy_residual_limit = " << toml_float(sc.safety.energy_residual_limit) << "\n";
    if (p) t << "residual_power_limit = " << toml_float(sc.safety.residual_power_limit) << "\n";
  }
  return t.str();
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

}  // namespace

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
        "the search space is empty (tune.interfaces, tune.schemes, tune.orders, tune.corrections "
        "(feedthrough: direct Jacobi only), tune.test_inputs, "
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
    bar.finish(operator_stop().stop_requested() ? "interrupted" : "");
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
  csv << "configuration,interface,scheme,order,force_output,correction,integrators,test_input,H,"
         "sum_abs_dE,ratio,status,wall_time_s\n";
  for (const auto& sw : sweeps) {
    const configuration& c = configs[sw.config];
    std::vector<std::string> ig;
    for (const auto& [sub, i] : c.integrators) ig.push_back(sub + ":" + i);
    for (const auto& r : sw.rows)
      csv << c.label() << "," << c.interface << "," << c.scheme << "," << c.order << ","
          << (c.interface == "rim" ? c.force_output : "") << "," << c.correction << ","
          << join(ig, ";") << "," << inputs[sw.input].label() << "," << num(r.H) << ","
          << num(r.sum_abs_dE) << "," << num(r.ratio) << "," << r.status << "," << num(r.wall)
          << "\n";
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

  int width = 48;  // the first column fits the longest label
  for (const configuration& c : configs)
    width = std::max(width, static_cast<int>(c.label().size()) + 1);
  std::printf("\n%-*s", width, "configuration \\ largest linear H [ms]");
  for (const auto& in : inputs) std::printf(" %10s", in.label().c_str());
  std::printf(" %8s\n", "min");
  for (std::size_t c = 0; c < configs.size(); ++c) {
    std::printf("%-*s", width, configs[c].label().c_str());
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

}  // namespace cosim::cli::tune
