// cosim reference: ground-truth solutions on the co-simulation's CSV contract.
//  - crane (003 Sect. 4): the monolithic index-3 augmented Lagrangian solver;
//  - oscillators: the closed form of 000 Eq. (36) / 004 Eq. (3), or for the nonlinear
//    000 A.3 problem a fine monolithic RK4, on the scenario's output grid.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <utility>

#include "batch_runner.hpp"
#include "commands.hpp"
#include "cosim/rt_config/model_registry.hpp"
#include "cosim/runtime/error.hpp"
#include "cosim/subsystems/crane_reference.hpp"
#include "error_measures.hpp"

namespace cosim::cli {

namespace fs = std::filesystem;

namespace {

// Optional, not NaN for "not given": CLI11 reads "nan" as a number, which must be refused.
struct reference_request {
  std::string manoeuvre;
  std::string oscillator;
  std::vector<std::string> sets;
  std::optional<double> step, duration, output_interval;
  std::string out;
};

std::string shortest(double v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return {buf, r.ptr};
}

/// "--step 0.3", or "--step 5e-05 (default)" for a value the user did not give.
std::string named(const char* option, const std::optional<double>& given, double value) {
  return std::string(option) + " " + shortest(value) + (given ? "" : " (default)");
}

/// Every numeric option is a time: finite and > 0.
void check_times(const reference_request& q) {
  for (const auto& [option, v] : {std::pair{"--step", q.step}, std::pair{"--duration", q.duration},
                                  std::pair{"--output-interval", q.output_interval}})
    COSIM_INPUT_CHECK(!v || (std::isfinite(*v) && *v > 0.0), errc::config_value,
                      std::string(option) + " " + shortest(*v) + ": must be a finite number > 0");
}

void ensure_parent(const std::string& file) {
  const fs::path parent = fs::path(file).parent_path();
  if (parent.empty()) return;
  std::error_code ec;
  fs::create_directories(parent, ec);
  COSIM_INPUT_CHECK(!ec, errc::io,
                    "cannot create directory " + parent.string() + ": " + ec.message());
}

/// A scenario name (rt_config/scenarios/NAME.toml) or a path to a TOML file.
std::string scenario_path(const std::string& name) {
  if (fs::exists(name) && fs::is_regular_file(name)) return name;
  std::string in_dir = std::string(COSIM_SCENARIO_DIR) + "/" + name + ".toml";
  COSIM_INPUT_CHECK(
      fs::exists(in_dir), errc::config_key,
      "--oscillator " + name + ": no such scenario file or name in " COSIM_SCENARIO_DIR);
  return in_dir;
}

int run_crane(const reference_request& q) {
  crane::reference_options o;
  crane::manoeuvre_kind kind{};
  COSIM_INPUT_CHECK(
      crane::parse_manoeuvre(q.manoeuvre, kind) && kind != crane::manoeuvre_kind::hold,
      errc::config_value,
      "--manoeuvre " + q.manoeuvre +
          ": must be M1 or M2 (hold needs no reference: it is the equilibrium)");
  o.manoeuvre = kind;
  o.step = q.step.value_or(o.step);
  o.duration = q.duration.value_or(o.duration);
  o.output_interval = q.output_interval.value_or(o.output_interval);
  const std::string step = named("--step", q.step, o.step);
  const std::string duration = named("--duration", q.duration, o.duration);
  const std::string interval = named("--output-interval", q.output_interval, o.output_interval);
  // run_crane_reference takes round(duration / step) steps: at least one, and few enough that
  // every step index is exact in double (t = (k + 1) step) and fits its long counter.
  COSIM_INPUT_CHECK(o.step <= o.duration, errc::config_value,
                    step + " is longer than " + duration + ": not one step");
  COSIM_INPUT_CHECK(o.duration / o.step <= 0x1p53, errc::config_value,
                    step + " over " + duration + " gives more than 2^53 steps");
  // Rows come every output interval from t = 0: one longer than the run writes only t = 0.
  COSIM_INPUT_CHECK(o.output_interval <= o.duration * (1.0 + 1e-9), errc::config_value,
                    interval + " is longer than " + duration + ": no row after t = 0");
  // The same test as run_crane_reference's, so that its message never reaches the user.
  const double every = std::round(o.output_interval / o.step);
  COSIM_INPUT_CHECK(
      std::abs(every * o.step - o.output_interval) <= 1e-9 * std::max(o.output_interval, o.step),
      errc::config_value, interval + " is not a whole multiple of " + step);
  const std::string out = q.out.empty() ? "results/reference_" + q.manoeuvre + ".csv" : q.out;
  // The augmented-Lagrangian iteration converges linearly with factor ~ M / (M + h^2/4 alpha
  // |Phi_q|^2) (see crane_reference.hpp): below the paper's 0.05 ms it slows as 1/h^2, and the
  // valve's start at t = 2 s then needs more than 50 corrections in a step.
  o.max_newton_iterations =
      static_cast<int>(std::min(1e6, std::ceil(50.0 * std::max(1.0, std::pow(5e-5 / o.step, 2)))));
  crane::reference_result r;
  install_signal_handlers();  // SIGINT/SIGTERM/SIGHUP: keep the rows so far
  o.stop = &operator_stop();
  try {
    r = crane::run_crane_reference(o);
  } catch (const std::invalid_argument& e) {
    throw error(errc::config_value, std::string("reference: ") + e.what());
  }
  csv_table t;
  t.columns = {"t", "kappa", "s", "sd", "p1", "p2", "fh"};
  for (const auto& s : r.samples) t.rows.push_back({s.t, s.kappa, s.s, s.sd, s.p1, s.p2, s.fh});
  ensure_parent(out);
  write_csv(out, t);  // rows up to a Newton failure are kept
  std::printf("reference %s: h = %.6g s, %ld steps, %zu rows -> %s\n", q.manoeuvre.c_str(), o.step,
              r.steps, r.samples.size(), out.c_str());
  std::printf("  Newton iterations: max %d per step, %ld total; max constraint violation %.3g m\n",
              r.max_iterations_used, r.total_iterations, r.max_constraint_violation);
  if (r.stopped) {
    std::printf("status: interrupted by signal %d at t = %.9g s (the rows up to it are kept)\n",
                operator_stop().code(), r.samples.back().t);
    return 1;
  }
  if (!r.converged) {
    std::printf("status: diverged at t = %.9g s (Newton residual %.6g after %d iterations)\n",
                r.fail_time, r.fail_residual, o.max_newton_iterations);
    return 1;
  }
  std::printf("status: completed\n");
  return 0;
}

int run_oscillator(reference_request q) {
  const std::string path = scenario_path(q.oscillator);
  if (q.duration) q.sets.push_back("run.duration=" + shortest(*q.duration));
  if (q.output_interval) q.sets.push_back("run.output_interval=" + shortest(*q.output_interval));
  const config::scenario sc = config::load_scenario(path, q.sets);
  const auto def = config::oscillator_definition_of(sc);
  COSIM_INPUT_CHECK(
      def.has_value(), errc::config_value,
      path + ": model '" + sc.model + "' is not an oscillator (use --manoeuvre for the crane)");
  const std::vector<double> times = output_times(sc);
  csv_table t;
  if (def->linear()) {
    t = oscillator_reference_table(*def, times);
  } else {
    // Fine monolithic RK4 (000 A.3 has no closed form); --step sets its largest step.
    const double h = q.step.value_or(1e-5);
    const osc::reference_solution ref(*def, h);
    t = oscillator_reference_table(*def, {});
    const auto z = ref.states_at(times);
    for (std::size_t r = 0; r < times.size(); ++r) {
      std::vector<double> row{times[r]};
      for (Eigen::Index j = 0; j < z[r].size(); ++j) row.push_back(z[r][j]);
      row.insert(row.end(), {0.0, 0.0, 0.0});
      t.rows.push_back(std::move(row));
    }
  }
  const std::string out =
      q.out.empty() ? "results/reference_" + fs::path(path).stem().string() + ".csv" : q.out;
  ensure_parent(out);
  write_csv(out, t);
  const fr_cycles s = oscillator_fr_cycles(*def, sc.run.duration);
  std::printf("reference %s (%s, %s): %zu rows on the scenario's output grid -> %s\n",
              q.oscillator.c_str(), sc.model.c_str(),
              def->linear() ? "closed form, 000 Eq. (36)" : "monolithic RK4", t.rows.size(),
              out.c_str());
  std::printf("  FR = %.6g, N = %.6g fast cycles (004 Eqs. (7)-(8) scale FR/N = %.6g)\n", s.fr,
              s.cycles, s.fr / s.cycles);
  std::printf("status: completed\n");
  return 0;
}

}  // namespace

command add_reference_command(CLI::App& app) {
  auto q = std::make_shared<reference_request>();
  auto* cmd = app.add_subcommand(
      "reference",
      "Write a ground-truth solution with the co-simulation's CSV columns, for cosim compare\n"
      "and cosim sweep.\n"
      "  crane:      cosim reference --manoeuvre M1|M2 [--step 5e-5] [--duration 10]\n"
      "                              [--output-interval 0.01] [--out FILE]\n"
      "    monolithic index-3 augmented Lagrangian solver of 003 Sect. 4 (trapezoidal rule,\n"
      "    alpha = 1e12, Newton to ||residual|| < 1e-5); columns t,kappa,s,sd,p1,p2,fh.\n"
      "    If Newton fails, the rows so far are kept, 'status: diverged' names the time and\n"
      "    residual, and the exit code is 1.\n"
      "  oscillator: cosim reference --oscillator NAME [--set KEY=VALUE]... [--out FILE]\n"
      "    NAME is a scenario in rt_config/scenarios (e.g. oscillator2_fd_case1) or a TOML path.\n"
      "    Closed form z(t) = exp(A t) z0 (000 Eq. (36); 004 Eq. (3)) on the scenario's output\n"
      "    grid, columns t,x1..xn,v1..vn,dP,dE,sum_abs_dE (dP = dE = 0: no interface). The\n"
      "    nonlinear 000 A.3 model uses a monolithic RK4 at --step (default 1e-5 s) instead.\n"
      "Default FILE: results/reference_<M1|M2|scenario>.csv.");
  auto* m = cmd->add_option("--manoeuvre", q->manoeuvre,
                            "Crane manoeuvre: M1 (003 Eq. 19) or M2 (003 Eq. 20)");
  auto* o = cmd->add_option("--oscillator", q->oscillator, "Oscillator scenario name or TOML file");
  m->excludes(o);
  cmd->add_option("--set", q->sets, "Override a scenario key (oscillator only; repeatable)")
      ->type_name("KEY=VALUE");
  cmd->add_option(
      "--step", q->step,
      "Integration step [s]: crane default 5e-5 (003 Sect. 4); nonlinear oscillator 1e-5");
  cmd->add_option("--duration", q->duration,
                  "Simulated time [s] (crane default 10; oscillator: the scenario's)");
  cmd->add_option("--output-interval", q->output_interval,
                  "Time between rows [s] (crane default 0.01, a multiple of --step; oscillator: "
                  "the scenario's)");
  non_empty(cmd->add_option("--out", q->out, "Output CSV file"));
  return {cmd, [q] {
            check_times(*q);
            if (!q->manoeuvre.empty()) {
              COSIM_INPUT_CHECK(q->sets.empty(), errc::config_key,
                                "reference: --set applies to --oscillator scenarios only");
              return run_crane(*q);
            }
            COSIM_INPUT_CHECK(!q->oscillator.empty(), errc::config_key,
                              "reference: give --manoeuvre M1|M2 or --oscillator NAME");
            return run_oscillator(*q);
          }};
}

}  // namespace cosim::cli
