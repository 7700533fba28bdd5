// cosim tune --largest-step: the largest macro step that keeps s1 within a tolerance of a
// fine reference.
//
// Largest step (--largest-step): for each manoeuvre (default M1 and M2) a fine reference
// (direct, Jacobi, ZOH, every step = tune.fine_step) and one run of the scenario as
// configured per H on the grid; the error is max |s1_H(t_n) - s1_fine(t_n)| over the run's
// communication times. Reported: the largest H such that every grid H up to it stays within
// tune.tolerance.
// The runs go through the batch runner (batch_runner.hpp): loaded and built in memory, s1
// kept in memory, nothing written but the two answer files.
#include "tune_largest_step.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "batch_runner.hpp"
#include "cosim/rt_config/model_registry.hpp"
#include "cosim/runtime/error.hpp"
#include "cosim/runtime/json_writer.hpp"

namespace cosim::cli::tune {

namespace fs = std::filesystem;

namespace {

/// Column 1 of rows (t, value) at time x: linear between rows, the last value past the end.
double interpolate(const row_table& ref, double x) {
  const std::size_t n = ref.rows();
  std::size_t k = 0, hi = n;  // the first row with t >= x - 1e-12
  while (k < hi) {
    const std::size_t mid = k + (hi - k) / 2;
    if (ref.at(mid, 0) < x - 1e-12) {
      k = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (k == n) return ref.at(n - 1, 1);
  if (k == 0 || std::abs(ref.at(k, 0) - x) < 1e-12) return ref.at(k, 1);
  const double a = (x - ref.at(k - 1, 0)) / (ref.at(k, 0) - ref.at(k - 1, 0));
  return ref.at(k - 1, 1) + a * (ref.at(k, 1) - ref.at(k - 1, 1));
}

}  // namespace

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
    double max_abs = nan_v;
    std::string status;
  };
  std::vector<cell> cells;
  for (std::size_t m = 0; m < o.manoeuvres.size(); ++m) {
    cells.push_back({m, 0.0, nan_v, ""});
    for (double H : grid) cells.push_back({m, H, nan_v, ""});
  }
  std::vector<batch_run> batch;
  batch.reserve(cells.size());
  for (const cell& c : cells) {
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
      s.push_back(set("coupling.energy_correction", "false"));
      s.push_back(set("coupling.feedthrough_correction", "false"));
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
    batch.push_back({std::move(s), "", false, {column}});  // t and the column, in memory
  }
  std::printf(
      "cosim tune --largest-step %s: column %s, tolerance %s m, H = %s..%s s by %s s, %d jobs\n",
      req.scenario.c_str(), column.c_str(), num(o.tolerance).c_str(), num(o.H_ini).c_str(),
      num(o.H_max).c_str(), num(o.H_inc).c_str(), jobs);
  std::fflush(stdout);
  progress bar("cosim tune --largest-step", "runs", cells.size(), req.progress);
  const std::vector<batch_result> results = run_batch(req.scenario, batch, jobs, &bar);
  bool interrupted = false;
  for (const auto& r : results) {
    if (!r.started || r.status == "interrupted") interrupted = true;
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
    const batch_result* fine = nullptr;
    for (std::size_t k = 0; k < cells.size(); ++k)
      if (cells[k].manoeuvre == m && cells[k].H == 0.0) fine = &results[k];
    if (!fine->started || fine->status == "interrupted") {
      std::printf("%-10s fine reference %s\n", res.name.c_str(),
                  fine->started ? "interrupted" : "not started");
      res.state = "interrupted";
      summary.push_back(res);
      continue;
    }
    if (fine->status != "completed" || !fine->missing.empty() || fine->rows.rows() == 0) {
      std::printf(
          "%-10s fine reference %s: %s\n", res.name.c_str(), fine->status.c_str(),
          fine->status != "completed" ? fine->message.c_str() : ("no column " + column).c_str());
      res.state = "no_reference";
      summary.push_back(res);
      continue;
    }
    const row_table& ref = fine->rows;  // t, column
    const double ref_end = ref.at(ref.rows() - 1, 0);
    double largest = 0.0;
    bool contiguous = true;
    for (std::size_t k = 0; k < cells.size(); ++k) {
      cell& c = cells[k];
      const batch_result& r = results[k];
      if (c.manoeuvre != m || c.H == 0.0) continue;
      if (!r.started) {
        c.status = "not_started";
      } else if (r.status == "completed" && !r.missing.empty()) {
        c.status = "no_column";  // this configuration does not record the reference's column
      } else if (r.status == "completed") {
        // Only where the reference exists: a duration that H does not divide ends past it.
        double mx = 0.0;
        for (std::size_t i = 0; i < r.rows.rows() && r.rows.at(i, 0) <= ref_end + 1e-9; ++i)
          mx = std::max(mx, std::abs(r.rows.at(i, 1) - interpolate(ref, r.rows.at(i, 0))));
        c.max_abs = mx;
        c.status = mx <= o.tolerance ? "within" : "outside";
      } else {
        c.status = r.status;
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
  for (const auto& r : results) runs += r.started ? 1 : 0;

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

}  // namespace cosim::cli::tune
