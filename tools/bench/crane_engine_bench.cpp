// Cost of the co-simulation framework on the crane of paper 003 (M1, f-s, Jacobi, ZOH,
// H = h_M = 1 ms, h_H = 0.2 ms, 10 s simulated; rt_config/scenarios/crane_m1_fs.toml):
//   engine  cosim::run_offline on the system built from the scenario file
//   fused   one hand-written loop doing the same arithmetic without the framework
// Both write every row into a preallocated in-memory buffer (no file I/O), so only the
// stepping is timed. Before timing, main() checks that both produce the same rows.
// Ends with a summary: engine/fused ratio of the mean wall time per run and the real-time
// factor (simulated / wall time) of each, then the same ratio in CPU time, which a busy
// machine disturbs less.
//
// Options (before Google Benchmark's own flags; environment variables as fallback):
//   --cpu=N           COSIM_BENCH_CPU          CPU to pin to, default 0; -1 = no pinning
//   --repetitions=N   COSIM_BENCH_REPETITIONS  default 5
// Add --benchmark_enable_random_interleaving=true to interleave the repetitions of the
// two benchmarks when the machine is busy.
#include <benchmark/benchmark.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "cosim/rt_config/scenario.hpp"
#include "cosim/runtime/error.hpp"
#include "cosim/runtime/executor.hpp"
#include "cosim/subsystems/crane_model.hpp"
#include "cosim/subsystems/manoeuvre.hpp"

#include "bench_support.hpp"

namespace {

namespace crane = cosim::crane;

struct bench_options {
  int cpu = 0;
  int repetitions = 5;
};
bench_options options;  // set once in main() before any benchmark runs

// The scenario sits at rt_config/scenarios/ of the repository; this file is tools/bench/.
std::string scenario_path() {
  const std::filesystem::path here = std::filesystem::path(__FILE__).parent_path();
  return (here / ".." / ".." / "rt_config" / "scenarios" / "crane_m1_fs.toml")
      .lexically_normal()
      .string();
}

// Rows kept in memory: one allocation up front, write() only copies.
class memory_sink final : public cosim::row_sink {
 public:
  memory_sink(std::size_t rows, std::size_t columns) : columns_(columns), data_(rows * columns) {}

  void begin(std::span<const std::string> columns) override {
    COSIM_INPUT_CHECK(columns.size() == columns_, cosim::errc::runtime,
                      "memory_sink: expected " + std::to_string(columns_) + " columns, got " +
                          std::to_string(columns.size()));
    rows_ = 0;
  }
  void write(std::span<const double> row) noexcept override { append(row.data()); }
  void end() override {}

  // Non-virtual path used by the fused loop.
  void append(const double* row) noexcept {
    if ((rows_ + 1) * columns_ <= data_.size()) {
      std::copy(row, row + columns_, data_.begin() + static_cast<std::ptrdiff_t>(rows_ * columns_));
    }
    ++rows_;  // counts overflow too, so a short buffer shows up in the check
  }
  void clear() noexcept { rows_ = 0; }

  [[nodiscard]] std::size_t rows() const noexcept { return rows_; }
  [[nodiscard]] std::size_t columns() const noexcept { return columns_; }
  [[nodiscard]] const double* data() const noexcept { return data_.data(); }
  [[nodiscard]] std::span<const double> row(std::size_t i) const noexcept {
    return {data_.data() + i * columns_, columns_};
  }

 private:
  std::size_t columns_;
  std::size_t rows_ = 0;
  std::vector<double> data_;
};

// Everything a run needs that is not timed: the parsed scenario and, for the fused loop,
// the parameters and steps the engine's build resolves.
struct bench_setup {
  cosim::config::scenario sc;
  crane::mechanical_params mp{};
  crane::hydraulic_params hp{};
  crane::equilibrium eq{};
  cosim::duration H{0};
  cosim::duration h_m{0};
  cosim::duration h_h{0};
  std::int64_t macro_steps = 0;
  std::size_t columns = 0;
  std::size_t rows = 0;  // initial row + one per macro step
};
const bench_setup* setup = nullptr;  // set once in main() before any benchmark runs

// The fused loop hard-codes one configuration; refuse a scenario that is not it.
void require(bool ok, const std::string& what) {
  COSIM_INPUT_CHECK(ok, cosim::errc::config_value,
                    "crane_engine_bench: the fused loop implements " + what);
}

bench_setup make_setup(const std::string& path) {
  bench_setup s;
  s.sc = cosim::config::load_scenario(path);
  const auto& sc = s.sc;
  require(sc.model == "crane", "model.name = crane");
  require(sc.option("coupling") == "f-s", "model.coupling = f-s");
  require(sc.option("manoeuvre") == "M1", "model.manoeuvre = M1");
  require(sc.run.scheme == cosim::scheme_kind::jacobi, "run.scheme = jacobi");
  require(sc.run.order == std::vector<std::string>{"multibody", "hydraulics"},
          "run.order = [multibody, hydraulics]");
  require(sc.run.output_interval == 0.0 || sc.run.output_interval == sc.run.macro_step,
          "a row every macro step");
  require(sc.coupling.extrapolation == 0, "coupling.extrapolation = 0 (ZOH)");
  require(sc.sub("multibody").integrator == "semi-implicit-euler",
          "multibody.integrator = semi-implicit-euler");
  require(sc.sub("hydraulics").integrator == "forward-euler",
          "hydraulics.integrator = forward-euler");

  // Steps and columns as the engine resolves them, from a throw-away build.
  const auto built = cosim::config::build(sc);
  s.H = built->plan.macro_step;
  s.macro_steps = built->plan.macro_steps;
  const auto& sys = built->sys;
  s.h_m = sys.at(sys.index_of("multibody")).step_size();
  s.h_h = sys.at(sys.index_of("hydraulics")).step_size();
  const std::vector<std::string> expected{"t",  "kappa", "s",  "sd", "p1",
                                          "p2", "fh",    "dP", "dE", "sum_abs_dE"};
  require(cosim::result_columns(sys) == expected,
          "the columns t, kappa, s, sd, p1, p2, fh, dP, dE, sum_abs_dE");
  s.columns = expected.size();
  s.rows = static_cast<std::size_t>(s.macro_steps) + 1;
  // As build_crane does (003 Sect. 1.3).
  s.eq = crane::solve_equilibrium(s.mp, s.hp, 3);
  return s;
}

struct fused_outcome {
  bool ok = true;
  double max_abs_dP = 0.0;
  double sum_abs_dE = 0.0;
};

// The engine's work on this scenario written out as one loop: the same semi-implicit Euler
// multibody step, forward Euler hydraulics, Jacobi ZOH exchange, f-s feedthrough and energy
// residual, in the same operation order, so the results agree to the last bit.
fused_outcome run_fused(const bench_setup& f, memory_sink& sink) noexcept {
  using crane::vec2;
  const crane::mechanical_params& mp = f.mp;
  const crane::hydraulic_params& hp = f.hp;
  const double kappa0 = f.eq.kappa0;
  const double s0 = f.eq.s0;
  const std::int64_t H = f.H.count();
  const std::int64_t h_h = f.h_h.count();
  const std::int64_t k_m = H / f.h_m.count();
  const std::int64_t k_h = H / h_h;
  const double Hs = cosim::to_seconds(f.H);
  const double hms = cosim::to_seconds(f.h_m);
  const double hhs = cosim::to_seconds(f.h_h);
  fused_outcome out;
  sink.clear();

  // Multibody at rest in the initial configuration (003 Sect. 1.3).
  vec2 q{mp.theta1_0, mp.theta2_0};
  vec2 qd = vec2::Zero();
  crane::actuator_kinematics kin = crane::actuator1(mp, q[0]);
  double s = kin.s;
  double sd = kin.ds_dth1 * qd[0];  // 003 Eq. (4)
  double p1 = f.eq.p1;
  double p2 = f.eq.p2;
  // Start-up exchange: the hydraulics see the multibody's initial outputs, then evaluate
  // their feedthrough output f_h from them.
  double s_held = s;
  double sd_held = sd;
  std::int64_t t = 0;
  double kappa = crane::manoeuvre::m1(cosim::to_seconds(cosim::duration{t}), kappa0);
  double fh = crane::actuator_force(hp, p1, p2, sd_held);  // 003 Eq. (8)
  double fh_held = fh;
  double dP = 0.0;
  double dE = 0.0;
  double row[10] = {0.0, kappa, s, sd, p1, p2, fh, 0.0, 0.0, 0.0};
  sink.append(row);

  for (std::int64_t n = 0; n < f.macro_steps; ++n) {
    const std::int64_t t1 = t + H;
    for (std::int64_t j = 0; j < k_m; ++j) {
      // 003 Eqs. (1)-(3): M qdd = f + J^T f_h - c with J = (ds/dth1, 0), f_h held (ZOH).
      kin = crane::actuator1(mp, q[0]);
      vec2 rhs = crane::gravity_forces(mp, q) - crane::velocity_terms(mp, q, qd);
      rhs[0] += kin.ds_dth1 * fh_held;
      const crane::mat2 M = crane::mass_matrix(mp, q);
      const double det = M(0, 0) * M(1, 1) - M(0, 1) * M(1, 0);
      const vec2 qdd{(M(1, 1) * rhs[0] - M(0, 1) * rhs[1]) / det,
                     (M(0, 0) * rhs[1] - M(1, 0) * rhs[0]) / det};
      qd += hms * qdd;  // 003 Eq. (6)
      q += hms * qd;    // 003 Eq. (7)
      kin = crane::actuator1(mp, q[0]);
      s = kin.s;
      sd = kin.ds_dth1 * qd[0];  // 003 Eq. (4)
      out.ok = out.ok && std::isfinite(q[0]) && std::isfinite(q[1]) && std::isfinite(qd[0]) &&
               std::isfinite(qd[1]);
    }
    for (std::int64_t j = 0; j < k_h; ++j) {
      // 003 Eqs. (9)-(14) with s, sd held and kappa(t) of 003 Eq. (19) exact at each step.
      const double kap =
          crane::manoeuvre::m1(cosim::to_seconds(cosim::duration{t + j * h_h}), kappa0);
      const vec2 pd = crane::pressure_rates(hp, s0, s_held, sd_held, kap, p1, p2);
      p1 += hhs * pd[0];
      p2 += hhs * pd[1];
      out.ok = out.ok && std::isfinite(p1) && std::isfinite(p2);
    }
    // f-s feedthrough at t1: the hydraulics' own (held) sd input, 003 Eq. (8).
    kappa = crane::manoeuvre::m1(cosim::to_seconds(cosim::duration{t1}), kappa0);
    const double fh_new = crane::actuator_force(hp, p1, p2, sd_held);
    // Residual power of the actuator bond with the inputs each side used (000 Eqs. (29)-(32)),
    // rectangle rule for ZOH (002 Eq. (10)).
    dP = fh_held * sd - fh_new * sd_held;
    dE = Hs * dP;
    out.sum_abs_dE += std::abs(dE);
    if (std::abs(dP) > out.max_abs_dP || std::isnan(dP)) out.max_abs_dP = std::abs(dP);
    // Jacobi exchange at t1.
    s_held = s;
    sd_held = sd;
    fh_held = fh_new;
    fh = fh_new;
    t = t1;

    row[0] = cosim::to_seconds(cosim::duration{t});
    row[1] = kappa;
    row[2] = s;
    row[3] = sd;
    row[4] = p1;
    row[5] = p2;
    row[6] = fh;
    row[7] = dP;
    row[8] = dE;
    row[9] = out.sum_abs_dE;
    for (double v : row) out.ok = out.ok && std::isfinite(v);
    if (!out.ok) break;
    sink.append(row);
  }
  return out;
}

cosim::run_outcome run_engine(const bench_setup& s, memory_sink& sink) {
  auto built = cosim::config::build(s.sc);
  sink.clear();
  return cosim::run_offline(built->sys, built->plan, built->limits, sink);
}

// Both runs once; the fused loop counts only if it reproduces the engine's rows.
bool check_equivalence(const bench_setup& s) {
  memory_sink engine_rows(s.rows, s.columns);
  memory_sink fused_rows(s.rows, s.columns);
  const cosim::run_outcome eo = run_engine(s, engine_rows);
  const fused_outcome fo = run_fused(s, fused_rows);
  if (eo.status != cosim::run_status::completed || !fo.ok) {
    std::fprintf(stderr, "crane_engine_bench: run failed (engine %s, fused %s)\n",
                 cosim::to_string(eo.status), fo.ok ? "ok" : "non-finite");
    return false;
  }
  if (engine_rows.rows() != s.rows || fused_rows.rows() != s.rows) {
    std::fprintf(stderr, "crane_engine_bench: rows engine %zu, fused %zu, expected %zu\n",
                 engine_rows.rows(), fused_rows.rows(), s.rows);
    return false;
  }
  auto rel = [](double a, double b) {
    const double scale = std::max({std::abs(a), std::abs(b), 1e-300});
    return a == b ? 0.0 : std::abs(a - b) / scale;
  };
  // Worst relative difference over every value of every row.
  double worst = 0.0;
  std::size_t worst_row = 0;
  std::size_t worst_col = 0;
  for (std::size_t r = 0; r < s.rows; ++r) {
    for (std::size_t c = 0; c < s.columns; ++c) {
      const double d = rel(engine_rows.row(r)[c], fused_rows.row(r)[c]);
      if (d > worst) {
        worst = d;
        worst_row = r;
        worst_col = c;
      }
    }
  }
  const auto e_last = engine_rows.row(s.rows - 1);
  const auto f_last = fused_rows.row(s.rows - 1);
  const double d_s = rel(e_last[2], f_last[2]);
  const double d_p1 = rel(e_last[4], f_last[4]);
  const double d_p2 = rel(e_last[5], f_last[5]);
  const double d_dE = rel(eo.energy_residual, fo.sum_abs_dE);
  const double d_dP = rel(eo.max_residual_power, fo.max_abs_dP);
  constexpr double tol = 1e-12;
  const bool ok =
      d_s <= tol && d_p1 <= tol && d_p2 <= tol && worst <= tol && d_dE <= tol && d_dP <= tol;
  std::printf(
      "equivalence check %s: final s %.17g (rel diff %.3g), p1 %.17g Pa (%.3g), p2 %.17g Pa "
      "(%.3g); sum|dE| %.6g J (%.3g), max|dP| %.6g W (%.3g); worst over all %zu x %zu values "
      "%.3g (row %zu, column %zu); tolerance %.0e\n",
      ok ? "PASSED" : "FAILED", e_last[2], d_s, e_last[4], d_p1, e_last[5], d_p2,
      eo.energy_residual, d_dE, eo.max_residual_power, d_dP, s.rows, s.columns, worst, worst_row,
      worst_col, tol);
  return ok;
}

void bm_engine(benchmark::State& state) {
  memory_sink sink(setup->rows, setup->columns);
  std::int64_t failures = 0;
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): benchmark idiom
    // A run mutates the subsystems: a fresh system per run, built untimed.
    state.PauseTiming();
    auto built = cosim::config::build(setup->sc);
    sink.clear();
    state.ResumeTiming();
    // With an operator's stop source, as `cosim run` has: the supervised path a bench runs.
    const cosim::stop_source operator_stop;
    const cosim::run_outcome o =
        cosim::run_offline(built->sys, built->plan, built->limits, sink, &operator_stop);
    failures += o.status == cosim::run_status::completed ? 0 : 1;
    benchmark::DoNotOptimize(sink.data());
    benchmark::ClobberMemory();
    state.PauseTiming();
    built.reset();  // destruction untimed too
    state.ResumeTiming();
  }
  if (failures != 0 || sink.rows() != setup->rows) state.SkipWithError("engine run failed");
}

void bm_fused(benchmark::State& state) {
  memory_sink sink(setup->rows, setup->columns);
  std::int64_t failures = 0;
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): benchmark idiom
    const fused_outcome o = run_fused(*setup, sink);
    failures += o.ok ? 0 : 1;
    benchmark::DoNotOptimize(sink.data());
    benchmark::ClobberMemory();
  }
  if (failures != 0 || sink.rows() != setup->rows) state.SkipWithError("fused run failed");
}

// Keeps the real (and CPU) time per run of every repetition.
class summary_reporter : public benchmark::ConsoleReporter {
 public:
  // A reporter passed to RunSpecifiedBenchmarks ignores --benchmark_color; colour only a tty.
  summary_reporter() : ConsoleReporter(isatty(STDOUT_FILENO) != 0 ? OO_ColorTabular : OO_Tabular) {}
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      if (run.run_type != Run::RT_Iteration || run.error_occurred || run.iterations == 0) continue;
      const double n = static_cast<double>(run.iterations);
      real_[run.run_name.function_name].push_back(run.real_accumulated_time / n);
      cpu_[run.run_name.function_name].push_back(run.cpu_accumulated_time / n);
    }
  }
  [[nodiscard]] std::vector<double> real_seconds(const std::string& bench) const {
    return find(real_, bench);
  }
  [[nodiscard]] std::vector<double> cpu_seconds(const std::string& bench) const {
    return find(cpu_, bench);
  }

 private:
  using table = std::map<std::string, std::vector<double>>;
  static std::vector<double> find(const table& t, const std::string& bench) {
    const auto it = t.find(bench);
    return it == t.end() ? std::vector<double>{} : it->second;
  }
  table real_;
  table cpu_;
};

double mean(const std::vector<double>& v) {
  double sum = 0.0;
  for (double x : v) sum += x;
  return v.empty() ? 0.0 : sum / static_cast<double>(v.size());
}
double smallest(const std::vector<double>& v) {
  return v.empty() ? 0.0 : *std::min_element(v.begin(), v.end());
}

// Pins the calling (benchmark) thread; returns false with a warning if refused.
bool pin_to(int cpu) {
  if (cpu < 0) return true;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof(set), &set) != 0) {
    std::fprintf(stderr, "crane_engine_bench: cannot pin to CPU %d; running unpinned\n", cpu);
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    options.cpu =
        static_cast<int>(cosim::bench::option_value(argc, argv, "--cpu", "COSIM_BENCH_CPU", 0));
    options.repetitions =
        static_cast<int>(std::max(1LL, cosim::bench::option_value(argc, argv, "--repetitions",
                                                                  "COSIM_BENCH_REPETITIONS", 5)));
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "crane_engine_bench: %s\n", e.what());
    return 2;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  const bool pinned = pin_to(options.cpu) && options.cpu >= 0;

  const std::string path = scenario_path();
  bench_setup s;
  try {
    s = make_setup(path);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "crane_engine_bench: %s\n", e.what());
    return 2;
  }
  setup = &s;
  const double sim_s = cosim::to_seconds(s.H) * static_cast<double>(s.macro_steps);
  std::printf(
      "crane_engine_bench: %s\n  H = %g ms, h_M = %g ms, h_H = %g ms, %lld macro steps (%g s "
      "simulated), %zu rows x %zu columns; CPU %s, %d repetitions\n",
      path.c_str(), cosim::to_seconds(s.H) * 1e3, cosim::to_seconds(s.h_m) * 1e3,
      cosim::to_seconds(s.h_h) * 1e3, static_cast<long long>(s.macro_steps), sim_s, s.rows,
      s.columns, pinned ? std::to_string(options.cpu).c_str() : "unpinned", options.repetitions);
  if (!check_equivalence(s)) return 1;
  std::fflush(stdout);  // before Google Benchmark's context lines on stderr

  auto configure = [](benchmark::internal::Benchmark* b) {
    b->Repetitions(options.repetitions)->Unit(benchmark::kMillisecond);
  };
  configure(benchmark::RegisterBenchmark("engine", bm_engine));
  configure(benchmark::RegisterBenchmark("fused", bm_fused));

  summary_reporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();

  const std::vector<double> engine = reporter.real_seconds("engine");
  const std::vector<double> fused = reporter.real_seconds("fused");
  if (engine.empty() || fused.empty()) {
    std::printf("\ncrane_engine_bench summary: needs both engine and fused runs for a ratio\n");
    return 0;
  }
  const double te = mean(engine);
  const double tf = mean(fused);
  const double ce = mean(reporter.cpu_seconds("engine"));
  const double cf = mean(reporter.cpu_seconds("fused"));
  // CPU time as a cross-check: on a busy machine wall time also counts time spent preempted.
  std::printf(
      "\ncrane_engine_bench summary (mean wall time per %g s run over %zu/%zu repetitions):\n"
      "  engine %.3f ms (RTF %.0f)  fused %.3f ms (RTF %.0f)  ratio engine/fused %.3f "
      "(best-of: %.3f)\n"
      "  CPU time per run: engine %.3f ms  fused %.3f ms  ratio %.3f\n",
      sim_s, engine.size(), fused.size(), te * 1e3, sim_s / te, tf * 1e3, sim_s / tf, te / tf,
      smallest(engine) / smallest(fused), ce * 1e3, cf * 1e3, cf > 0.0 ? ce / cf : 0.0);
  return 0;
}
