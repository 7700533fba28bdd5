// Iterative co-simulation (000 Sect. 2.3, run.iterations): against the closed form of the
// 000 A.1 oscillator, the fixed-point property (the converged iterate satisfies the coupling
// equations, so the power residual of the bond vanishes), the crane against its monolithic
// reference (003 Sect. 4) where the non-iterative f-s scheme diverges, exact save/restore of
// every built-in subsystem, the refusals and an allocation-free iteration loop.
#define COSIM_DEFINE_ALLOC_COUNTER
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "alloc_counter.hpp"
#include "cosim/rt_config/model_registry.hpp"
#include "cosim/rt_config/scenario.hpp"
#include "cosim/runtime/error.hpp"
#include "cosim/runtime/scheme.hpp"
#include "cosim/subsystems/crane_reference.hpp"
#include "cosim/subsystems/oscillator.hpp"

namespace {

namespace config = cosim::config;
using cosim::run_status;

const std::string dir = COSIM_SOURCE_DIR "/rt_config/scenarios/";

/// Recorded rows, with column lookup.
struct table {
  [[nodiscard]] std::size_t col(const std::string& name) const {
    const auto it = std::find(columns.begin(), columns.end(), name);
    EXPECT_NE(it, columns.end()) << name;
    return static_cast<std::size_t>(it - columns.begin());
  }
  std::vector<std::string> columns;
  std::vector<std::vector<double>> rows;
};

class table_sink final : public cosim::row_sink {
 public:
  void begin(std::span<const std::string> cols) override {
    data.columns.assign(cols.begin(), cols.end());
  }
  void write(std::span<const double> row) noexcept override {
    // Allocations of the macro-step loop: between one row and the next, the sink's own
    // (keeping the row) left out.
    const std::uint64_t now = cosim::test::alloc_count_this_thread();
    if (!data.rows.empty()) loop_allocations += now - after_last_;
    data.rows.emplace_back(row.begin(), row.end());
    after_last_ = cosim::test::alloc_count_this_thread();
  }
  void end() override {}
  table data;
  std::uint64_t loop_allocations = 0;

 private:
  std::uint64_t after_last_ = 0;
};

struct result {
  cosim::run_outcome out;
  table rows;
  config::scenario sc;
};

result run(const std::string& file, const std::vector<std::string>& sets) {
  result r;
  r.sc = config::load_scenario(dir + file, sets);
  auto b = config::build(r.sc);
  table_sink sink;
  r.out = cosim::run_offline(b->sys, b->plan, b->limits, sink);
  r.rows = std::move(sink.data);
  return r;
}

/// Largest |x_i - x_i^exact| over the rows and the position columns x1, x2.
double oscillator_error(const result& r) {
  const auto d = config::oscillator_definition_of(r.sc);
  EXPECT_TRUE(d.has_value());
  const cosim::osc::reference_solution ref(*d);
  std::vector<double> t;
  for (const auto& row : r.rows.rows) t.push_back(row[0]);
  const auto exact = ref.states_at(t);
  const std::size_t cols[2] = {r.rows.col("x1"), r.rows.col("x2")};
  double e = 0.0;
  for (std::size_t k = 0; k < t.size(); ++k)
    for (int i = 0; i < 2; ++i) e = std::max(e, std::abs(r.rows.rows[k][cols[i]] - exact[k][i]));
  return e;
}

std::vector<std::string> oscillator_sets(double H, int iterations) {
  // Internal steps of 20 us: the trapezoidal rule's own error (~1e-5 m here) stays far below
  // the coupling error the test is about.
  return {"run.macro_step=" + std::to_string(H),
          "run.duration=2",
          "mass1.step=2e-5",
          "mass2.step=2e-5",
          "coupling.extrapolation=1",
          "run.iterations=" + std::to_string(iterations),
          "run.iteration_tolerance.rel=1e-10",
          "run.iteration_tolerance.abs=1e-12"};
}

// 000 A.1, f-d, undamped (case 1), against its closed form (000 Eq. (36)): the converged
// iterative Jacobi scheme is the implicit coupling with linear interpolation, second order in
// H; the non-iterative one extrapolates and is far less accurate at the same H.
TEST(IterativeCoupling, OscillatorBeatsNonIterativeAndConvergesWithOrderTwo) {
  const result plain = run("oscillator2_fd_case1.toml", oscillator_sets(2e-3, 1));
  const result iter = run("oscillator2_fd_case1.toml", oscillator_sets(2e-3, 50));
  const result iter_half = run("oscillator2_fd_case1.toml", oscillator_sets(1e-3, 50));
  ASSERT_EQ(plain.out.status, run_status::completed);
  ASSERT_EQ(iter.out.status, run_status::completed);
  ASSERT_EQ(iter_half.out.status, run_status::completed);
  const double e_plain = oscillator_error(plain), e_iter = oscillator_error(iter),
               e_half = oscillator_error(iter_half);
  std::printf(
      "  H = 2 ms: non-iterative %.3e m, iterative %.3e m (%.2f iterations/step); "
      "H = 1 ms iterative %.3e m\n",
      e_plain, e_iter,
      static_cast<double>(iter.out.iteration.total_iterations) /
          static_cast<double>(iter.out.iteration.steps),
      e_half);
  EXPECT_LT(e_iter, 0.2 * e_plain);
  const double ratio = e_iter / e_half;  // 2^2 for a second-order method
  EXPECT_GT(ratio, 0.8 * 4.0);
  EXPECT_LT(ratio, 1.25 * 4.0);
  EXPECT_EQ(iter.out.iteration.not_converged, 0);
  EXPECT_LE(iter.out.iteration.max_defect, 1.0);
  EXPECT_GE(iter.out.iteration.max_iterations, 2);
  EXPECT_TRUE(plain.rows.columns.back() == "sum_abs_dE");  // no iteration columns when off
}

// A fixed point satisfies the coupling equations: the input each side integrated with at
// t_n+1 equals the other side's output to the tolerance. The bond's residual power
// dP = f_used v2 - f v2_used (000 Sect. 3.1) is then bounded by the tolerances alone:
// |dP| <= tol(f) |v2| + |f| tol(v2), tol(y) = abs + rel |y| (f = kc (x1 - x2), case 1 has
// no coupling damper). The non-iterative run violates that bound by orders of magnitude.
TEST(IterativeCoupling, FixedPointSatisfiesCouplingEquations) {
  const double rel = 1e-10, abs = 1e-12, kc = 100.0;
  const result iter = run("oscillator2_fd_case1.toml", oscillator_sets(2e-3, 50));
  const result plain = run("oscillator2_fd_case1.toml", oscillator_sets(2e-3, 1));
  const table& r = iter.rows;
  const std::size_t x1 = r.col("x1"), x2 = r.col("x2"), v2 = r.col("v2"), dP = r.col("dP"),
                    defect = r.col("defect"), its = r.col("iterations");
  double worst = 0.0, worst_plain = 0.0;
  for (std::size_t k = 1; k < r.rows.size(); ++k) {
    const auto& row = r.rows[k];
    const double f = kc * (row[x1] - row[x2]);
    const double bound = 2.0 * ((abs + rel * std::abs(f)) * std::abs(row[v2]) +
                                std::abs(f) * (abs + rel * std::abs(row[v2])));
    worst = std::max(worst, std::abs(row[dP]) / bound);
    EXPECT_LE(row[defect], 1.0);
    EXPECT_GE(row[its], 1.0);
    const auto& prow = plain.rows.rows[k];
    worst_plain = std::max(worst_plain, std::abs(prow[dP]) / bound);
  }
  std::printf("  max |dP| / bound: iterative %.3f, non-iterative %.3g\n", worst, worst_plain);
  EXPECT_LE(worst, 1.0);
  EXPECT_GT(worst_plain, 1e3);
}

// Crane M1, f-s (003 Sect. 5, h_M = 1 ms, h_H = 0.2 ms) at H = 40 ms: the non-iterative
// scheme diverges (003: f-s stable up to 15 ms), the iterative one with omega = 0.4 and
// linear interpolation stays within 2 mm of the monolithic reference (003 Sect. 4).
TEST(IterativeCoupling, CraneAt40msWithinTwoMillimetresOfMonolithicReference) {
  const double duration = 4.0;  // the non-iterative run diverges at ~3.2 s
  const std::vector<std::string> common{"run.macro_step=0.04", "run.duration=4",
                                        "multibody.step=1e-3", "coupling.extrapolation=1"};
  std::vector<std::string> iter_sets = common;
  iter_sets.insert(iter_sets.end(), {"run.iterations=100", "run.relaxation=0.4"});
  const result plain = run("crane_m1_fs.toml", common);
  const result iter = run("crane_m1_fs.toml", iter_sets);
  EXPECT_EQ(plain.out.status, run_status::diverged);
  ASSERT_EQ(iter.out.status, run_status::completed);
  EXPECT_EQ(iter.out.iteration.not_converged, 0);

  cosim::crane::reference_options o;
  o.duration = duration;
  o.output_interval = 0.04;
  const auto ref = cosim::crane::run_crane_reference(o);
  ASSERT_TRUE(ref.converged);
  const std::size_t s = iter.rows.col("s");
  ASSERT_EQ(iter.rows.rows.size(), ref.samples.size());
  double worst = 0.0;
  for (std::size_t k = 0; k < ref.samples.size(); ++k) {
    ASSERT_NEAR(iter.rows.rows[k][0], ref.samples[k].t, 1e-9);
    worst = std::max(worst, std::abs(iter.rows.rows[k][s] - ref.samples[k].s));
  }
  std::printf("  H = 40 ms, omega = 0.4: max |s - s_ref| = %.3e m, %.2f iterations/step\n", worst,
              static_cast<double>(iter.out.iteration.total_iterations) /
                  static_cast<double>(iter.out.iteration.steps));
  EXPECT_LT(worst, 2e-3);
  EXPECT_GT(worst, 1e-6);  // a real co-simulation error, not the reference echoed
}

/// Largest |s - s_ref| of a crane run against the monolithic reference (003 Sect. 4) at the
/// run's rows (one per macro step H over 10 s).
double crane_error(const result& r, cosim::crane::manoeuvre_kind m, double H) {
  cosim::crane::reference_options o;
  o.manoeuvre = m;
  o.duration = 10.0;
  o.output_interval = H;
  const auto ref = cosim::crane::run_crane_reference(o);
  EXPECT_TRUE(ref.converged);
  const std::size_t s = r.rows.col("s");
  EXPECT_EQ(r.rows.rows.size(), ref.samples.size());
  double worst = 0.0;
  for (std::size_t k = 0; k < std::min(ref.samples.size(), r.rows.rows.size()); ++k) {
    EXPECT_NEAR(r.rows.rows[k][0], ref.samples[k].t, 1e-9);
    worst = std::max(worst, std::abs(r.rows.rows[k][s] - ref.samples[k].s));
  }
  return worst;
}

double mean_iterations(const result& r) {
  return static_cast<double>(r.out.iteration.total_iterations) /
         static_cast<double>(r.out.iteration.steps);
}

// Quasi-Newton (IQN-ILS), the default update: crane f-s (003 Sect. 5: h_M = 1 ms,
// h_H = 0.2 ms), default tolerance, no relaxation key. M1 within 2 mm of the monolithic
// reference at H = 40, 80 and 100 ms (the non-iterative scheme is stable to 15 ms, plain
// iteration stops converging between 20 and 40 ms), M2 at 40 and 100 ms, with Jacobi and
// Gauss-Seidel; a few iterations per macro step (<= 3 on average for M1 at 40 ms, where
// omega = 0.4 takes 16.8).
TEST(IterativeCoupling, QuasiNewtonCraneWithinTwoMillimetresWithoutTuning) {
  using cosim::crane::manoeuvre_kind;
  struct crane_case {
    const char* file;
    manoeuvre_kind m;
    double H;
    const char* scheme;
  };
  const crane_case cases[] = {
      {"crane_m1_fs.toml", manoeuvre_kind::m1, 0.04, "jacobi"},
      {"crane_m1_fs.toml", manoeuvre_kind::m1, 0.08, "jacobi"},
      {"crane_m1_fs.toml", manoeuvre_kind::m1, 0.1, "jacobi"},
      {"crane_m2_fs.toml", manoeuvre_kind::m2, 0.04, "jacobi"},
      {"crane_m2_fs.toml", manoeuvre_kind::m2, 0.1, "jacobi"},
      {"crane_m1_fs.toml", manoeuvre_kind::m1, 0.04, "gauss-seidel"},
      {"crane_m2_fs.toml", manoeuvre_kind::m2, 0.1, "gauss-seidel"},
  };
  for (const crane_case& c : cases) {
    SCOPED_TRACE(std::string(c.file) + " " + c.scheme + " H = " + std::to_string(c.H));
    const result r = run(c.file, {"run.macro_step=" + std::to_string(c.H), "multibody.step=1e-3",
                                  "coupling.extrapolation=1", "run.iterations=100",
                                  std::string("run.scheme=") + c.scheme});
    ASSERT_EQ(r.out.status, run_status::completed) << r.out.message;
    EXPECT_EQ(r.sc.run.iteration.relaxation, cosim::relaxation_kind::iqn);
    EXPECT_EQ(r.out.iteration.not_converged, 0);
    const double e = crane_error(r, c.m, c.H);
    std::printf("  %s %s H = %.0f ms: max |s - s_ref| = %.3f mm, iterations %.2f mean / %d max\n",
                c.file, c.scheme, c.H * 1e3, e * 1e3, mean_iterations(r),
                r.out.iteration.max_iterations);
    EXPECT_LT(e, 2e-3);
    EXPECT_GT(e, 1e-6);  // a real co-simulation error, not the reference echoed
    if (c.m == manoeuvre_kind::m1 && c.H == 0.04 && std::string(c.scheme) == "jacobi") {
      EXPECT_LE(mean_iterations(r), 3.0);
    }
  }
}

// Quasi-Newton and a constant omega reach the same fixed point where both converge (one
// solution of the coupling equations per step): crane M1 at 40 ms against omega = 0.4.
TEST(IterativeCoupling, QuasiNewtonReachesTheRelaxedFixedPoint) {
  const std::vector<std::string> common{"run.macro_step=0.04", "run.duration=4",
                                        "multibody.step=1e-3", "coupling.extrapolation=1",
                                        "run.iterations=100",  "run.iteration_tolerance.rel=1e-9"};
  std::vector<std::string> relaxed = common, iqn = common, no_reuse = common;
  relaxed.emplace_back("run.relaxation=0.4");
  iqn.emplace_back("run.relaxation=\"iqn\"");
  no_reuse.emplace_back("run.iqn_reuse=0");
  const result a = run("crane_m1_fs.toml", relaxed);
  const result b = run("crane_m1_fs.toml", iqn);
  const result c = run("crane_m1_fs.toml", no_reuse);
  ASSERT_EQ(a.out.iteration.not_converged, 0);
  ASSERT_EQ(b.out.iteration.not_converged, 0);
  ASSERT_EQ(c.out.iteration.not_converged, 0);
  const std::size_t s = a.rows.col("s");
  double d_b = 0.0, d_c = 0.0;
  for (std::size_t k = 0; k < a.rows.rows.size(); ++k) {
    d_b = std::max(d_b, std::abs(a.rows.rows[k][s] - b.rows.rows[k][s]));
    d_c = std::max(d_c, std::abs(a.rows.rows[k][s] - c.rows.rows[k][s]));
  }
  std::printf("  iterations/step: omega = 0.4 %.2f, iqn %.2f, iqn without reuse %.2f\n",
              mean_iterations(a), mean_iterations(b), mean_iterations(c));
  // Against a co-simulation error of ~0.6 mm: the same solution.
  EXPECT_LT(d_b, 1e-6);
  EXPECT_LT(d_c, 1e-6);
  // Reusing the previous steps' secants saves iterations.
  EXPECT_LT(mean_iterations(b), mean_iterations(c));
}

// The 000 A.1 oscillator, f-d, undamped, with a coupling spring 100 times the paper's
// (kc = 1e4 N/m > k2: with the paper's kc = 100 N/m plain Jacobi iteration converges at
// every H up to 250 ms). At H = 50 ms plain iteration (omega = 1) does not converge within
// 100 iterations; quasi-Newton converges on every step in a few. Against the closed form
// (000 Eq. (36)) quasi-Newton's iterate is the implicit scheme: second order in H (the error
// ratio between H = 1 ms and 0.5 ms is about 4; at 0.5 ms plain iteration converges too and
// reaches the same solution). At 50 ms (about one period of the stiff coupling) the error
// is of the order of the amplitude whatever the iteration, so it is not compared there.
TEST(IterativeCoupling, QuasiNewtonConvergesWherePlainIterationDoesNot) {
  auto sets = [](double H, const char* relaxation) {
    std::vector<std::string> s = oscillator_sets(H, 100);
    s.emplace_back("model.kc=1e4");
    s.emplace_back("run.output_interval=" + std::to_string(H));
    s.emplace_back(std::string("run.relaxation=") + relaxation);
    return s;
  };
  const result plain = run("oscillator2_fd_case1.toml", sets(0.05, "1"));
  const result iqn = run("oscillator2_fd_case1.toml", sets(0.05, "\"iqn\""));
  ASSERT_EQ(iqn.out.status, run_status::completed);
  std::printf(
      "  kc = 1e4, H = 50 ms: omega = 1 %lld of %lld steps unconverged (%.1f "
      "iterations/step); iqn %lld unconverged, %.2f mean / %d max\n",
      static_cast<long long>(plain.out.iteration.not_converged),
      static_cast<long long>(plain.out.iteration.steps), mean_iterations(plain),
      static_cast<long long>(iqn.out.iteration.not_converged), mean_iterations(iqn),
      iqn.out.iteration.max_iterations);
  EXPECT_GT(plain.out.iteration.not_converged, plain.out.iteration.steps / 2);
  EXPECT_EQ(iqn.out.iteration.not_converged, 0);
  EXPECT_LE(mean_iterations(iqn), 4.0);

  const result iqn_1ms = run("oscillator2_fd_case1.toml", sets(0.001, "\"iqn\""));
  const result iqn_05ms = run("oscillator2_fd_case1.toml", sets(0.0005, "\"iqn\""));
  const result plain_05ms = run("oscillator2_fd_case1.toml", sets(0.0005, "1"));
  ASSERT_EQ(iqn_1ms.out.iteration.not_converged, 0);
  ASSERT_EQ(iqn_05ms.out.iteration.not_converged, 0);
  ASSERT_EQ(plain_05ms.out.iteration.not_converged, 0);
  const double e1 = oscillator_error(iqn_1ms), e05 = oscillator_error(iqn_05ms),
               e_plain = oscillator_error(plain_05ms);
  std::printf(
      "  kc = 1e4 against the closed form: iqn H = 1 ms %.3e m, 0.5 ms %.3e m (ratio "
      "%.2f); omega = 1 at 0.5 ms %.3e m (%.2f vs %.2f iterations/step)\n",
      e1, e05, e1 / e05, e_plain, mean_iterations(plain_05ms), mean_iterations(iqn_05ms));
  EXPECT_GT(e1 / e05, 0.8 * 4.0);
  EXPECT_LT(e1 / e05, 1.25 * 4.0);
  EXPECT_NEAR(e05, e_plain, 1e-3 * e05);
}

// The default update (no run.relaxation: quasi-Newton) converges wherever a relaxed one does:
// every shipped crane and oscillator scenario at H = 20 and 40 ms, 2 s, against omega = 0.4
// and Aitken. Where either of those converges on every step, so does the default. (It also
// converges where they do not: crane2 f-s, where both diverge, and crane M1/M2 f-s with
// Aitken.)
TEST(IterativeCoupling, DefaultConvergesWhereverRelaxationDoes) {
  const char* files[] = {
      "crane_m1_fs.toml",    "crane_m2_fs.toml",          "crane_m1_ps.toml",
      "crane_m2_ps.toml",    "crane_m1_fs_rim.toml",      "crane2_m1_fs.toml",
      "crane2_m1_rim.toml",  "crane_m1_best.toml",        "crane_m2_best.toml",
      "oscillator004.toml",  "oscillator2_fd_case1.toml", "oscillator2_dd_case3.toml",
      "oscillator3_fd.toml", "oscillator_nonlinear.toml"};
  int compared = 0;
  for (const char* file : files)
    for (const char* H : {"0.02", "0.04"}) {
      SCOPED_TRACE(std::string(file) + " H = " + H);
      const std::vector<std::string> base{std::string("run.macro_step=") + H, "run.duration=2",
                                          std::string("run.output_interval=") + H,
                                          "run.iterations=100"};
      const result dflt = run(file, base);
      EXPECT_EQ(dflt.sc.run.iteration.relaxation, cosim::relaxation_kind::iqn);
      const bool default_ok =
          dflt.out.status == run_status::completed && dflt.out.iteration.not_converged == 0;
      for (const char* relaxation : {"0.4", "\"aitken\""}) {
        std::vector<std::string> sets = base;
        sets.push_back(std::string("run.relaxation=") + relaxation);
        const result other = run(file, sets);
        if (other.out.status != run_status::completed || other.out.iteration.not_converged > 0)
          continue;
        ++compared;
        EXPECT_TRUE(default_ok) << relaxation << " converges, the default does not: "
                                << dflt.out.iteration.not_converged << " steps, "
                                << dflt.out.message;
        EXPECT_LE(dflt.out.iteration.total_iterations, other.out.iteration.total_iterations)
            << relaxation;
      }
    }
  EXPECT_GE(compared, 40);  // most cases converge with a relaxation too
}

// Save, run ahead, restore, run the same steps again: bit for bit the same outputs and
// recorded variables, for every built-in subsystem type (crane and crane2 multibody, the
// hydraulic cylinder, the RIM hydraulics of one and two actuators, oscillator masses with
// each integrator) and the multirate state (smoothing average, non-matching own grid).
void check_round_trip(const std::string& file, const std::vector<std::string>& sets) {
  SCOPED_TRACE(file);
  const config::scenario sc = config::load_scenario(dir + file, sets);
  auto b = config::build(sc);
  cosim::system& sys = b->sys;
  cosim::initialize_and_exchange(sys, b->plan);
  const cosim::duration H = b->plan.macro_step;
  cosim::time_point t = b->plan.start;
  auto advance_all = [&](int steps, std::vector<double>* trace) {
    cosim::time_point tt = t;
    for (int n = 0; n < steps; ++n, tt += H)
      for (std::size_t i = 0; i < sys.size(); ++i) {
        EXPECT_TRUE(cosim::scheme::advance(sys.at(i), tt, H));
        if (trace == nullptr) continue;
        for (double v : sys.at(i).outputs()) trace->push_back(v);
        for (const auto& var : sys.at(i).variables()) trace->push_back(*var.value);
        trace->push_back(cosim::scheme::delivered_output(sys.at(i), 0));
      }
    return tt;
  };
  t = advance_all(5, nullptr);
  for (std::size_t i = 0; i < sys.size(); ++i) {
    ASSERT_TRUE(sys.at(i).can_save_state()) << sys.at(i).name();
    sys.at(i).prepare_state();
    ASSERT_TRUE(sys.at(i).save_state());
  }
  std::vector<double> first, second;
  (void)advance_all(7, &first);
  for (std::size_t i = 0; i < sys.size(); ++i) ASSERT_TRUE(sys.at(i).restore_state());
  (void)advance_all(7, &second);
  ASSERT_EQ(first.size(), second.size());
  for (std::size_t k = 0; k < first.size(); ++k)
    ASSERT_EQ(first[k], second[k]) << "value " << k;  // exact: the same arithmetic again
}

TEST(IterativeCoupling, SaveRestoreRoundTripOfEveryBuiltIn) {
  check_round_trip("crane_m1_fs.toml", {"run.macro_step=0.01", "multibody.step=1e-3"});
  check_round_trip("crane_m1_ps.toml", {"multibody.integrator=trapezoidal"});
  check_round_trip("crane_m1_fs_rim.toml", {});
  check_round_trip("crane_m1_fs.toml", {"hydraulics.integrator=heun"});
  check_round_trip("crane2_m1_fs.toml", {});
  check_round_trip("crane2_m1_rim.toml", {});
  check_round_trip("oscillator004.toml", {});  // RK4 and trapezoidal masses
  check_round_trip("oscillator2_fd_case1.toml",
                   {"mass1.integrator=semi-implicit-euler", "mass2.smoothing=true",
                    "mass2.step=2.5e-4", "mass1.non_matching=true", "mass1.step=3e-4"});
}

// A fixed-point loop over many macro steps does not allocate (the state buffers are
// preallocated): no allocation between the first and the last row.
// Aitken with Gauss-Seidel, quasi-Newton with Jacobi and with Gauss-Seidel (its secant
// storage and QR workspace sized at build).
TEST(IterativeCoupling, IterationLoopIsAllocationFree) {
  for (const char* scheme : {"gauss-seidel", "jacobi"})
    for (const char* relaxation : {"\"aitken\"", "\"iqn\""}) {
      SCOPED_TRACE(std::string(scheme) + " " + relaxation);
      std::vector<std::string> sets = oscillator_sets(2e-3, 50);
      sets.push_back(std::string("run.scheme=") + scheme);
      sets.push_back(std::string("run.relaxation=") + relaxation);
      const config::scenario sc = config::load_scenario(dir + "oscillator2_fd_case1.toml", sets);
      auto b = config::build(sc);
      table_sink sink;
      sink.data.rows.reserve(static_cast<std::size_t>(b->plan.macro_steps) + 2);
      const cosim::run_outcome o = cosim::run_offline(b->sys, b->plan, b->limits, sink);
      ASSERT_EQ(o.status, run_status::completed);
      EXPECT_GT(o.iteration.total_iterations, o.iteration.steps);
      EXPECT_EQ(sink.loop_allocations, 0u);
    }
}

// Gauss-Seidel and Aitken converge to the same fixed point as Jacobi with a constant omega
// (one solution of the coupling equations per step, whatever the iteration).
TEST(IterativeCoupling, SchemesAndRelaxationsReachTheSameFixedPoint) {
  const result jacobi = run("oscillator2_fd_case1.toml", oscillator_sets(2e-3, 50));
  std::vector<std::string> gs = oscillator_sets(2e-3, 50);
  gs.insert(gs.end(), {"run.scheme=gauss-seidel", "run.relaxation=aitken"});
  std::vector<std::string> jw = oscillator_sets(2e-3, 100);
  jw.push_back("run.relaxation=0.7");
  const result gauss = run("oscillator2_fd_case1.toml", gs);
  const result relaxed = run("oscillator2_fd_case1.toml", jw);
  ASSERT_EQ(gauss.out.status, run_status::completed);
  ASSERT_EQ(relaxed.out.status, run_status::completed);
  const std::size_t x2 = jacobi.rows.col("x2");
  double d_gs = 0.0, d_w = 0.0;
  for (std::size_t k = 0; k < jacobi.rows.rows.size(); ++k) {
    d_gs = std::max(d_gs, std::abs(jacobi.rows.rows[k][x2] - gauss.rows.rows[k][x2]));
    d_w = std::max(d_w, std::abs(jacobi.rows.rows[k][x2] - relaxed.rows.rows[k][x2]));
  }
  // Against a co-simulation error of ~2e-2 m (test above): the same solution.
  EXPECT_LT(d_gs, 1e-5);
  EXPECT_LT(d_w, 1e-5);
}

// Aitken with Gauss-Seidel on an oscillator where plain iteration contracts by ~0.007 per
// sweep (an independent probe's parameters): it used the omega of the current sweep in the
// secant formula instead of the one that relaxed the previous residual, and had no
// safeguard, so it blew up (non-finite at t = 0.03 s; defect 1e14 x the tolerance) where
// omega = 1 converges in 8 sweeps. Now every step converges, to omega = 1's fixed point.
TEST(IterativeCoupling, AitkenWithGaussSeidelConvergesWherePlainIterationDoes) {
  const std::vector<std::string> base = {"model.m1=2",
                                         "model.m2=0.5",
                                         "model.k1=20",
                                         "model.k2=300",
                                         "model.kc=50",
                                         "model.c1=0.1",
                                         "model.cc=0.5",
                                         "run.macro_step=0.01",
                                         "run.duration=2",
                                         "coupling.extrapolation=1",
                                         "run.iterations=500",
                                         "run.scheme=gauss-seidel",
                                         "run.iteration_tolerance.rel=1e-12",
                                         "run.iteration_tolerance.abs=1e-14"};
  std::vector<std::string> aitken = base, plain = base;
  aitken.emplace_back("run.relaxation=aitken");
  plain.emplace_back("run.relaxation=1");
  for (const char* omega0 : {"0.5", "0.1"}) {
    SCOPED_TRACE(omega0);
    std::vector<std::string> sets = aitken;
    sets.push_back(std::string("run.relaxation_initial=") + omega0);
    const result a = run("oscillator2_fd_case1.toml", sets);
    const result p = run("oscillator2_fd_case1.toml", plain);
    ASSERT_EQ(a.out.status, run_status::completed) << a.out.message;
    EXPECT_EQ(a.out.iteration.not_converged, 0);
    ASSERT_EQ(p.out.iteration.not_converged, 0);
    const std::size_t x2 = a.rows.col("x2");
    double d = 0.0;
    for (std::size_t k = 0; k < a.rows.rows.size(); ++k)
      d = std::max(d, std::abs(a.rows.rows[k][x2] - p.rows.rows[k][x2]));
    EXPECT_LT(d, 1e-9);
  }
}

// Not converging within N: counted, and with on_no_convergence = "stop" a stop of its own.
TEST(IterativeCoupling, NoConvergenceIsReportedOrStops) {
  std::vector<std::string> sets = oscillator_sets(2e-3, 2);
  const result counted = run("oscillator2_fd_case1.toml", sets);
  EXPECT_EQ(counted.out.status, run_status::completed);
  EXPECT_GT(counted.out.iteration.not_converged, 0);
  EXPECT_FALSE(counted.out.warnings.empty());
  sets.push_back("run.on_no_convergence=stop");
  const result stopped = run("oscillator2_fd_case1.toml", sets);
  EXPECT_EQ(stopped.out.status, run_status::diverged);
  EXPECT_EQ(stopped.out.stop_reason, "no_convergence");
  EXPECT_NE(stopped.out.message.find("did not converge within 2 iterations"), std::string::npos)
      << stopped.out.message;
}

void expect_refused(const std::string& file, const std::vector<std::string>& sets,
                    const std::string& needle) {
  try {
    const config::scenario sc = config::load_scenario(file, sets);
    auto b = config::build(sc);
    table_sink sink;
    (void)cosim::run_offline(b->sys, b->plan, b->limits, sink);
    ADD_FAILURE() << "accepted: " << file;
  } catch (const cosim::error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(IterativeCoupling, RefusedWhereNoRollbackExists) {
  expect_refused(dir + "crane_m1_fs.toml", {"run.iterations=3", "run.mode=threaded"},
                 "offline only");
  expect_refused(dir + "crane_m1_fs.toml", {"run.iterations=3", "run.mode=realtime"},
                 "offline only");
  expect_refused(dir + "crane_m1_fs.toml", {"run.iterations=0"}, "run.iterations");
  expect_refused(dir + "crane_m1_fs.toml", {"run.relaxation=1.5"}, "run.relaxation");
  expect_refused(dir + "crane_m1_fs.toml", {"run.relaxation=\"newton\""}, "\"iqn\"");
  expect_refused(dir + "crane_m1_fs.toml", {"run.iterations=3", "run.iqn_reuse=-1"},
                 "run.iqn_reuse");
  expect_refused(dir + "crane_m1_fs.toml", {"run.iterations=3", "run.iqn_reuse=101"},
                 "run.iqn_reuse");
  expect_refused(dir + "crane_m1_fs.toml",
                 {"run.iterations=3", "run.relaxation=0.5", "run.iqn_reuse=4"}, "not \"iqn\"");
  expect_refused(dir + "crane_m1_fs.toml",
                 {"run.iterations=3", "run.relaxation=0.5", "run.relaxation_initial=0.3"},
                 "run.relaxation_initial");
  expect_refused(dir + "crane_m1_fs.toml", {"run.on_no_convergence=\"abort\""},
                 "run.on_no_convergence");
  // FMUs without canGetAndSetFMUstate: tests/fmi_run/fmu_state_test.cpp.
}

}  // namespace
