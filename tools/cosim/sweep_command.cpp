// cosim sweep: one run per value of one key, in parallel, with error measures against a
// reference (a CSV, or each run's own oscillator closed form). The runs go through the batch
// runner (batch_runner.hpp): each writes its results folder as `cosim run --out` does, and
// its errors are computed from the same rows kept in memory, not from results.csv read back.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <optional>
#include <set>

#include "batch_runner.hpp"
#include "commands.hpp"
#include "cosim/rt_config/model_registry.hpp"
#include "cosim/rt_config/results_folder.hpp"
#include "cosim/runtime/error.hpp"
#include "csv_table.hpp"
#include "error_measures.hpp"
#include "progress.hpp"

namespace cosim::cli {

namespace fs = std::filesystem;

namespace {

constexpr const char* closed_form = "closed-form";

struct sweep_request {
  std::string scenario;
  std::string key;
  std::vector<std::string> values;
  std::vector<std::string> sets;
  std::string reference;
  std::vector<std::string> columns;
  int jobs = 0;
  std::string out;
  progress_mode progress = progress_mode::automatic;
};

struct sweep_row {
  std::string value;
  std::string status = "error";
  std::string stop_reason = "bad_input";
  std::string message;
  std::vector<double> max_abs, rms;  // per column
  std::vector<double> position;      // 004 Eq. (7) per position column (closed form)
  double energy = std::numeric_limits<double>::quiet_NaN();  // 004 Eq. (8)
  double sum_abs_dE = std::numeric_limits<double>::quiet_NaN();
  double wall_time_s = std::numeric_limits<double>::quiet_NaN();
};

std::string num(double v) {
  if (std::isnan(v)) return "nan";
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return {buf, r.ptr};
}

/// DIR/<n>_<key>=<value>: n is the 1-based row of the value in sweep.csv, zero-padded to the
/// width of the count. It makes folder names unique by construction (equal values would
/// otherwise write into one folder at once) and `ls` lists them in input order.
std::string dir_name(std::size_t index, std::size_t count, const std::string& key,
                     const std::string& value) {
  const std::string n = std::to_string(index + 1);
  std::string s =
      std::string(std::to_string(count).size() - n.size(), '0') + n + "_" + key + "=" + value;
  for (char& c : s)
    if (c == '/' || c == '\\' || c == ' ') c = '_';
  return s;
}

bool is_residual_column(const std::string& c) {
  return c == "dP" || c == "dE" || c == "sum_abs_dE";
}

/// Everything fixed before the runs start, shared read-only by the workers.
struct sweep_plan {
  sweep_request req;
  std::optional<csv_table> reference_file;
  bool closed = false;
  std::vector<std::string> columns;   // compared columns
  std::vector<std::string> position;  // x1..xn for the closed form
};

/// The run of value i: the sweep's --set overrides, then KEY=VALUE, into its own folder.
batch_run run_of(const sweep_request& q, std::size_t i) {
  batch_run r;
  r.sets = q.sets;
  r.sets.push_back(q.key + "=" + q.values[i]);
  r.out_dir = (fs::path(q.out) / dir_name(i, q.values.size(), q.key, q.values[i])).string();
  // Rows are kept in memory only to compare them with a reference: without one, a run's
  // memory does not grow with its length (its rows are in its results.csv).
  r.all_columns = !q.reference.empty();
  return r;
}

/// Run folders (<n>_<key>=<value>, files only, with results) of an earlier sweep into DIR that
/// this sweep will not write: left there, they would sit beside a sweep.csv that does not list
/// them. Each is locked before it goes, so a folder a running process writes into is never
/// removed (that error names the holder's pid). Returns how many were removed.
std::size_t remove_stale_run_folders(const sweep_request& q) {
  std::set<std::string> ours;
  for (std::size_t i = 0; i < q.values.size(); ++i)
    ours.insert(dir_name(i, q.values.size(), q.key, q.values[i]));
  std::vector<fs::path> stale;
  for (const auto& e : fs::directory_iterator(q.out)) {
    const std::string name = e.path().filename().string();
    const auto us = name.find('_');
    if (!e.is_directory() || us == 0 || us == std::string::npos ||
        name.find('=', us) == std::string::npos || ours.count(name) != 0 ||
        !std::all_of(name.begin(), name.begin() + static_cast<std::ptrdiff_t>(us),
                     [](char c) { return c >= '0' && c <= '9'; }))
      continue;
    bool files_only = true;
    for (const auto& f : fs::directory_iterator(e.path())) files_only &= f.is_regular_file();
    if (files_only &&
        (fs::exists(e.path() / "results.csv") || fs::exists(e.path() / "summary.json")))
      stale.push_back(e.path());
  }
  for (const fs::path& p : stale) {
    const config::results_folder lock(p);
    fs::remove_all(p);
  }
  return stale.size();
}

/// The row of value i from its run: status, and the errors computed from its rows in memory
/// (which it releases).
void evaluate(const sweep_plan& plan, std::size_t i, batch_result& run, sweep_row& row) {
  row.value = plan.req.values[i];
  row.status = run.status;
  row.stop_reason = run.stop_reason;
  row.message = run.message;
  if (run.outcome) {
    row.sum_abs_dE = run.outcome->energy_residual;
    row.wall_time_s = run.outcome->wall_time_s;
  }
  if (run.rows.rows() == 0 || !run.sc) return;
  const csv_table res = run.rows.to_csv_table();  // exactly the rows of the folder's results.csv
  run.rows = {};                                  // one copy of the rows at a time
  try {
    if (plan.closed) {
      const auto def = config::oscillator_definition_of(*run.sc);
      std::vector<double> times;
      for (const auto& r : res.rows) times.push_back(r[0]);
      const csv_table ref = oscillator_reference_table(*def, times);
      for (const auto& d : compare(ref, res, plan.columns, overlap_only_rules)) {
        row.max_abs.push_back(d.max_abs);
        row.rms.push_back(d.rms);
      }
      // Fast-step delivery: a mass slower than H has a state only on its own grid.
      std::vector<std::int64_t> grid;
      if (run.sc->run.fast_step)
        for (std::size_t m = 0; m < def->size(); ++m) {
          const auto it = run.sc->subsystems.find("mass" + std::to_string(m + 1));
          grid.push_back(it == run.sc->subsystems.end() ? 0 : to_duration(it->second.step).count());
        }
      const oscillator_errors e = oscillator_errors_004(*def, run.sc->run.duration, res, ref, grid);
      row.position = e.position;
      row.energy = e.energy;
    } else if (plan.reference_file) {
      // The reference interpolated to this run's rows.
      for (const auto& d : compare(*plan.reference_file, res, plan.columns, overlap_only_rules)) {
        row.max_abs.push_back(d.samples > 0 ? d.max_abs : std::nan(""));
        row.rms.push_back(d.samples > 0 ? d.rms : std::nan(""));
      }
    }
  } catch (const std::exception& e) {
    row.status = "error";
    row.stop_reason = "bad_input";
    row.message = e.what();
  }
}

std::vector<std::string> header(const sweep_plan& p) {
  std::vector<std::string> h{"value", "status", "stop_reason"};
  for (const auto& c : p.columns) {
    h.push_back(c + "_max");
    h.push_back(c + "_rms");
  }
  for (const auto& c : p.position) h.push_back("pos_err_" + c);
  if (p.closed) h.push_back("energy_err");
  h.insert(h.end(), {"sum_abs_dE", "wall_time_s"});
  return h;
}

std::vector<std::string> cells(const sweep_plan& p, const sweep_row& r) {
  std::vector<std::string> c{r.value, r.status, r.stop_reason};
  for (std::size_t i = 0; i < p.columns.size(); ++i) {
    c.push_back(num(i < r.max_abs.size() ? r.max_abs[i] : std::nan("")));
    c.push_back(num(i < r.rms.size() ? r.rms[i] : std::nan("")));
  }
  for (std::size_t i = 0; i < p.position.size(); ++i)
    c.push_back(num(i < r.position.size() ? r.position[i] : std::nan("")));
  if (p.closed) c.push_back(num(r.energy));
  c.push_back(num(r.sum_abs_dE));
  c.push_back(num(r.wall_time_s));
  return c;
}

sweep_plan make_plan(const sweep_request& q) {
  sweep_plan p;
  p.req = q;
  COSIM_INPUT_CHECK(!q.key.empty(), errc::config_key, "sweep: --key is required");
  COSIM_INPUT_CHECK(!q.values.empty(), errc::config_key,
                    "sweep: --values needs at least one value");
  for (const auto& v : q.values)
    COSIM_INPUT_CHECK(!v.empty(), errc::config_value, "sweep: --values contains an empty value");
  COSIM_INPUT_CHECK(q.key.find('=') == std::string::npos, errc::config_key,
                    "sweep: --key " + q.key + ": give the key only, values go to --values");
  // Bad scenario files and --set keys fail here, before anything runs.
  const config::scenario base = config::load_scenario(q.scenario, q.sets);
  // An unknown key (or a table) fails every value alike: refuse the sweep, not each row. A
  // bad value stays that value's row.
  try {
    std::vector<std::string> sets = q.sets;
    sets.push_back(q.key + "=" + q.values.front());
    (void)config::load_scenario(q.scenario, sets);
  } catch (const cosim::error& e) {
    if (e.code() == errc::config_key)
      throw error(errc::config_key, "sweep: --key " + q.key + ": " + e.what());
  }
  if (q.reference == closed_form) {
    const auto def = config::oscillator_definition_of(base);
    COSIM_INPUT_CHECK(def.has_value(), errc::config_value,
                      "sweep: --reference closed-form needs an oscillator scenario, not model '" +
                          base.model + "'");
    p.closed = true;
    for (std::size_t i = 0; i < def->size(); ++i) p.position.push_back(state_column('x', i));
    std::vector<std::string> states = p.position;  // the closed form's columns
    for (std::size_t i = 0; i < def->size(); ++i) states.push_back(state_column('v', i));
    for (const auto& c : q.columns)
      COSIM_INPUT_CHECK(
          std::find(states.begin(), states.end(), c) != states.end(), errc::config_value,
          "sweep: --columns " + c + ": the closed form has only the columns x1..xn, v1..vn");
    if (q.columns.empty()) p.columns = std::move(states);
  } else if (!q.reference.empty()) {
    p.reference_file = read_csv(q.reference);
    if (q.columns.empty()) {
      // Columns the scenario records and the reference has.
      const auto built = config::build(base);
      for (const std::string& c : result_columns(built->sys))
        if (c != "t" && !is_residual_column(c) && p.reference_file->column(c) >= 0)
          p.columns.push_back(c);
      COSIM_INPUT_CHECK(!p.columns.empty(), errc::config_value,
                        "sweep: " + q.reference + " shares no column with the scenario's results");
    }
  }
  if (!q.columns.empty()) {
    COSIM_INPUT_CHECK(!q.reference.empty(), errc::config_key, "sweep: --columns needs --reference");
    p.columns = q.columns;
    if (p.reference_file)
      for (const auto& c : p.columns)
        COSIM_INPUT_CHECK(p.reference_file->column(c) >= 0, errc::config_value,
                          "sweep: " + q.reference + " has no column '" + c + "'");
  }
  return p;
}

}  // namespace

/// The example of --help; sweep_test runs exactly this text from the help output.
constexpr const char* help_example =
    "  build/tools/cosim sweep rt_config/scenarios/oscillator004.toml --key model.fr \\\n"
    "    --values 1.5,10,30,100 --set coupling.extrapolation=3 \\\n"
    "    --set mass1.non_matching=true --reference closed-form --out results/fr\n";

command add_sweep_command(CLI::App& app) {
  auto q = std::make_shared<sweep_request>();
  auto* cmd = app.add_subcommand(
      "sweep",
      std::string(
          "Run a scenario once per value of one key, in parallel (in-process, one thread per\n"
          "job), each into DIR/<n>_<key>=<value>/ (n: the value's row in sweep.csv, from 1,\n"
          "zero-padded; equal values get folders of their own), and write DIR/sweep.csv with one\n"
          "row per value in input order: value, status, stop_reason, max and RMS error per\n"
          "column against the reference (when given), the 004 position error (Eq. 7) per xi and\n"
          "energy error (Eq. 8) when the reference is an oscillator closed form, sum |dE| and\n"
          "the run's wall time.\n"
          "  --reference FILE.csv   e.g. from cosim reference; interpolated to each run's rows\n"
          "  --reference closed-form  each run's own oscillator closed form (follows the swept\n"
          "                         parameters, e.g. --key model.fr)\n"
          "Progress (runs done/total, elapsed, ETA) goes to stderr when it is a terminal.\n"
          "SIGINT/SIGTERM/SIGHUP: no further run starts, running runs stop and keep their rows\n"
          "(status 'interrupted', stop_reason operator_signal), values not started get status\n"
          "'not_started'; sweep.csv and the table are still written, exit code 1.\n"
          "Example (from the repository root):\n") +
          help_example +
          "Exit code: 0 all runs completed, 1 some run stopped early or the sweep was\n"
          "interrupted, 2 bad input (for the sweep, or for some value: that row has status\n"
          "'error').");
  cmd->add_option("scenario", q->scenario, "Scenario TOML file")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--key", q->key, "Key to sweep, e.g. run.macro_step or model.fr")->required();
  cmd->add_option("--values", q->values, "Comma-separated values, e.g. 0.001,0.005,0.01")
      ->required()
      ->delimiter(',');
  cmd->add_option("--set", q->sets, "Override a scenario key for every run (repeatable)")
      ->type_name("KEY=VALUE");
  cmd->add_option("--reference", q->reference, "Reference CSV, or closed-form (oscillators)");
  cmd->add_option("--columns", q->columns,
                  "Columns to compare, comma-separated (default: all shared)")
      ->delimiter(',');
  add_jobs_option(*cmd, q->jobs);
  non_empty(cmd->add_option("--out", q->out, "Output directory")->required());
  add_progress_flags(*cmd, q->progress);
  cmd->footer(keys_help());
  return {cmd, [q] {
            const auto wall0 = std::chrono::steady_clock::now();
            // "0.001, 0.002" (a space after the comma) means the same values.
            for (std::string& v : q->values) {
              v.erase(0, v.find_first_not_of(" \t"));
              v.erase(v.find_last_not_of(" \t") + 1);
            }
            const sweep_plan plan = make_plan(*q);
            std::error_code ec;
            fs::create_directories(q->out, ec);
            COSIM_INPUT_CHECK(!ec, errc::io, "cannot create " + q->out + ": " + ec.message());
            if (const std::size_t gone = remove_stale_run_folders(*q); gone > 0)
              std::fprintf(stderr,
                           "cosim sweep: removed %zu run folder(s) of an earlier sweep from %s "
                           "(values this sweep does not have)\n",
                           gone, q->out.c_str());
            install_signal_handlers();

            std::vector<sweep_row> rows(q->values.size());
            const std::size_t jobs = std::min(
                static_cast<std::size_t>(q->jobs > 0 ? q->jobs : default_jobs()), rows.size());
            std::vector<batch_run> runs;
            runs.reserve(rows.size());
            for (std::size_t i = 0; i < rows.size(); ++i) runs.push_back(run_of(*q, i));
            progress bar("cosim sweep", "runs", rows.size(), q->progress);
            // Errors are computed on the worker as each run ends; its rows are dropped then.
            const std::vector<batch_result> results =
                run_batch(q->scenario, runs, static_cast<int>(jobs), &bar,
                          [&](std::size_t i, batch_result& r) { evaluate(plan, i, r, rows[i]); });
            // A signal after the last run finished loses nothing: not an interruption.
            std::size_t finished = 0;
            for (std::size_t i = 0; i < rows.size(); ++i) {
              if (!results[i].started) {
                rows[i].value = q->values[i];
                rows[i].status = "not_started";
                rows[i].stop_reason = "operator_signal";
              } else if (rows[i].status != "interrupted") {
                ++finished;
              }
            }
            const bool interrupted = finished < rows.size();
            bar.finish(interrupted ? "interrupted" : "");

            const std::vector<std::string> h = header(plan);
            const std::string csv = (fs::path(q->out) / "sweep.csv").string();
            {
              std::ofstream out(csv, std::ios::trunc);
              COSIM_INPUT_CHECK(out.good(), errc::io, "cannot write " + csv);
              for (std::size_t i = 0; i < h.size(); ++i) out << (i ? "," : "") << h[i];
              out << '\n';
              for (const auto& r : rows) {
                const auto c = cells(plan, r);
                for (std::size_t i = 0; i < c.size(); ++i) out << (i ? "," : "") << c[i];
                out << '\n';
              }
              COSIM_INPUT_CHECK(out.good(), errc::io, "error writing " + csv);
            }
            // The table: one line per value, columns as in sweep.csv.
            std::vector<std::size_t> width(h.size());
            std::vector<std::vector<std::string>> text;
            text.reserve(rows.size());
            for (const auto& r : rows) text.push_back(cells(plan, r));
            for (std::size_t i = 0; i < h.size(); ++i) {
              width[i] = h[i].size();
              for (const auto& t : text)
                width[i] = std::max(width[i], std::min<std::size_t>(t[i].size(), 12));
            }
            auto line = [&](const std::vector<std::string>& c) {
              for (std::size_t i = 0; i < c.size(); ++i) {
                std::string s = c[i];
                if (i >= 3 && s.size() > 12) {  // numbers: 6 significant digits on screen
                  char b[32];
                  std::snprintf(b, sizeof b, "%.6g", std::strtod(s.c_str(), nullptr));
                  s = b;
                }
                std::printf("%s%*s", i ? "  " : "", static_cast<int>(width[i]), s.c_str());
              }
              std::printf("\n");
            };
            line(h);
            int code = interrupted ? 1 : 0;
            for (std::size_t i = 0; i < rows.size(); ++i) {
              line(text[i]);
              if (rows[i].status == "error") {
                std::fprintf(stderr, "cosim sweep: %s=%s: %s\n", q->key.c_str(),
                             rows[i].value.c_str(), rows[i].message.c_str());
                code = 2;
              } else if (rows[i].status != "completed" && code == 0) {
                code = 1;
              }
            }
            const double wall =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
            if (interrupted)
              std::printf(
                  "INTERRUPTED by signal: %zu of %zu runs finished; the others are marked "
                  "interrupted or not_started\n",
                  finished, rows.size());
            std::printf("%zu runs on %zu threads in %.3g s wall -> %s\n", rows.size(), jobs, wall,
                        csv.c_str());
            return code;
          }};
}

}  // namespace cosim::cli
