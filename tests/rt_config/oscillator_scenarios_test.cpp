// Every oscillator scenario of rt_config/scenarios against its closed form (000 Eq. (36),
// 004 Eq. (3); the fine monolithic RK4 for 000 A.3), at small macro steps.
//
// Tolerance, from the orders involved: the subsystems integrate with the trapezoidal rule
// (order 2) at h = H, and the explicit coupling with extrapolation order m adds a local
// error O(H^(m+1)) per step, so the global error is e(H) ~ C H^p with p = min(m + 1, 2).
// The a-priori bound for such a method on an oscillation of amplitude A and fastest
// frequency w over time T is e <= A (w H)^p (w T) (local error A (w H)^(p+1) per step,
// T/H steps, no damping credit). Each scenario must
//   (1) stay under that bound at the smaller H, and
//   (2) converge with its order: e(2H) / e(H) = 2^p within 25 %.
// (2) catches any inconsistency of the coupling (a wrong sign, time stamp or delay
// reduces the order or stops convergence); (1) catches gross errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "cosim/rt_config/model_registry.hpp"
#include "cosim/rt_config/scenario.hpp"
#include "cosim/runtime/error.hpp"
#include "cosim/subsystems/oscillator.hpp"

namespace {

namespace config = cosim::config;
namespace osc = cosim::osc;

const std::string dir = COSIM_SOURCE_DIR "/rt_config/scenarios/";

#ifdef COSIM_SANITIZED
constexpr double duration000 = 2.0;  // sanitizers run ~10x slower: a shorter run
constexpr double duration004 = 10.0;
#else
constexpr double duration000 = 10.0;  // 000 App. A.1
constexpr double duration004 = 20.0;  // 20 fast cycles
#endif

class memory_sink final : public cosim::row_sink {
 public:
  void begin(std::span<const std::string> cols) override {
    columns.assign(cols.begin(), cols.end());
  }
  void write(std::span<const double> row) noexcept override {
    rows.emplace_back(row.begin(), row.end());
  }
  void end() override {}
  std::vector<std::string> columns;
  std::vector<std::vector<double>> rows;
};

struct run_result {
  cosim::run_outcome outcome;
  struct {
    std::vector<std::string> columns;
    std::vector<std::vector<double>> rows;
  } rows;
  config::scenario sc;
};

run_result run(const std::string& file, const std::vector<std::string>& sets) {
  run_result r;
  r.sc = config::load_scenario(dir + file, sets);
  auto b = config::build(r.sc);
  memory_sink sink;
  r.outcome = cosim::run_offline(b->sys, b->plan, b->limits, sink);
  r.rows.columns = std::move(sink.columns);
  r.rows.rows = std::move(sink.rows);
  return r;
}

/// Largest |x_i - x_i^exact| over the rows and all position columns; also the amplitude.
struct error_and_amplitude {
  double error = 0.0, amplitude = 0.0;
};
error_and_amplitude position_error(const run_result& r, const osc::oscillator_definition& d,
                                   const std::vector<Eigen::VectorXd>& exact) {
  error_and_amplitude e;
  const std::size_t n = d.size();
  EXPECT_EQ(r.rows.rows.size(), exact.size());
  for (std::size_t k = 0; k < std::min(r.rows.rows.size(), exact.size()); ++k)
    for (std::size_t i = 0; i < n; ++i) {
      std::string col(1, 'x');  // appending avoids GCC 12's -Wrestrict false positive
      col += std::to_string(i + 1);
      EXPECT_EQ(r.rows.columns[1 + i], col);
      const double x = r.rows.rows[k][1 + i], xe = exact[k][static_cast<Eigen::Index>(i)];
      e.error = std::max(e.error, std::abs(x - xe));
      e.amplitude = std::max(e.amplitude, std::abs(xe));
    }
  return e;
}

std::vector<double> row_times(const run_result& r) {
  std::vector<double> t;
  for (const auto& row : r.rows.rows) t.push_back(row[0]);
  return t;
}

struct convergence_case {
  std::string file;
  std::vector<std::string> sets;  // besides macro step and duration
  double H;                       // the smaller macro step [s]
  int extrapolation;
  double duration;
};

void check_convergence(const convergence_case& c) {
  SCOPED_TRACE(c.file + " order " + std::to_string(c.extrapolation));
  auto sets_for = [&](double H) {
    std::vector<std::string> s = c.sets;
    char h[32];
    std::snprintf(h, sizeof h, "%.17g", H);
    s.push_back(std::string("run.macro_step=") + h);
    s.push_back("run.duration=" + std::to_string(c.duration));
    s.push_back("run.output_interval=0.01");  // the same rows for both macro steps
    s.push_back("coupling.extrapolation=" + std::to_string(c.extrapolation));
    return s;
  };
  const run_result coarse = run(c.file, sets_for(2.0 * c.H));
  const run_result fine = run(c.file, sets_for(c.H));
  ASSERT_EQ(coarse.outcome.status, cosim::run_status::completed);
  ASSERT_EQ(fine.outcome.status, cosim::run_status::completed);
  const auto d = config::oscillator_definition_of(fine.sc);
  ASSERT_TRUE(d.has_value());
  // The nonlinear A.3 reference: RK4 at 5e-5 s, error ~ A (w h)^4 (w T) ~ 1e-8 m, far
  // below the co-simulation errors tested here. Both runs share the output grid.
  const osc::reference_solution ref(*d, 5e-5);
  ASSERT_EQ(row_times(coarse), row_times(fine));
  const auto exact = ref.states_at(row_times(fine));
  const auto ec = position_error(coarse, *d, exact);
  const auto ef = position_error(fine, *d, exact);
  const int p = std::min(c.extrapolation + 1, 2);
  const double w = osc::natural_frequencies(*d).back();
  const double bound = ef.amplitude * std::pow(w * c.H, p) * (w * c.duration);
  EXPECT_LT(ef.error, bound) << "amplitude " << ef.amplitude;
  const double ratio = ec.error / ef.error;
  EXPECT_GT(ratio, 0.8 * std::pow(2.0, p)) << ec.error << " -> " << ef.error;
  EXPECT_LT(ratio, 1.25 * std::pow(2.0, p)) << ec.error << " -> " << ef.error;
  std::printf("  %-28s m=%d H=%-8g max|x-x_exact| = %.3e (2H: %.3e, ratio %.2f, bound %.2e)\n",
              c.file.c_str(), c.extrapolation, c.H, ef.error, ec.error, ratio, bound);
}

class OscillatorScenario : public ::testing::TestWithParam<std::string> {};

TEST_P(OscillatorScenario, ConvergesToClosedFormWithItsOrder) {
  for (int m : {0, 1}) check_convergence({GetParam(), {}, 1e-4, m, duration000});
}

INSTANTIATE_TEST_SUITE_P(Files, OscillatorScenario,
                         ::testing::Values("oscillator2_fd_case1.toml", "oscillator2_fd_case2.toml",
                                           "oscillator2_fd_case3.toml", "oscillator2_dd_case1.toml",
                                           "oscillator2_dd_case2.toml", "oscillator2_dd_case3.toml",
                                           "oscillator3_fd.toml", "oscillator3_dd.toml",
                                           "oscillator_nonlinear.toml"),
                         [](const auto& param_info) {
                           std::string s = param_info.param;
                           return s.substr(0, s.find('.'));
                         });

// 004 at a small macro step: both subsystems at h = H (the defaults h1 = min(H, 10 ms),
// h2 = H; single-rate), slowest-first.
TEST(OscillatorScenario004, ConvergesToEq3) {
  for (int m : {0, 1}) check_convergence({"oscillator004.toml", {}, 1.25e-3, m, duration004});
}

// Non-matching grid (004 Sect. 2): mass1 steps with h = 2H/3, which does not divide H; it
// communicates at its own grid points and its inputs are interpolated/extrapolated there.
// The run completes and converges with the coupling's order. Rows show the state at the
// last own grid point, so the rows (every 0.03 s, 9.99 s) are put on both grids.
TEST(OscillatorScenarioMultirate, NonMatchingGridConverges) {
  for (int m : {0, 1}) {
    const run_result a = run("oscillator2_fd_case1.toml",
                             {"run.macro_step=3e-4", "run.output_interval=0.03",
                              "run.duration=9.99", "mass1.non_matching=true", "mass1.step=2e-4",
                              "coupling.extrapolation=" + std::to_string(m)});
    const run_result b = run("oscillator2_fd_case1.toml",
                             {"run.macro_step=1.5e-4", "run.output_interval=0.03",
                              "run.duration=9.99", "mass1.non_matching=true", "mass1.step=1e-4",
                              "coupling.extrapolation=" + std::to_string(m)});
    ASSERT_EQ(a.outcome.status, cosim::run_status::completed);
    ASSERT_EQ(b.outcome.status, cosim::run_status::completed);
    const auto d = config::oscillator_definition_of(b.sc);
    const osc::reference_solution ref(*d);
    const auto ea = position_error(a, *d, ref.states_at(row_times(a)));
    const auto eb = position_error(b, *d, ref.states_at(row_times(b)));
    const int p = std::min(m + 1, 2);
    std::printf("  non-matching m=%d: H=3e-4 %.3e, H=1.5e-4 %.3e\n", m, ea.error, eb.error);
    EXPECT_GT(ea.error / eb.error, 0.8 * std::pow(2.0, p)) << ea.error << " " << eb.error;
    EXPECT_LT(ea.error / eb.error, 1.25 * std::pow(2.0, p)) << ea.error << " " << eb.error;
    const double w = osc::natural_frequencies(*d).back();
    EXPECT_LT(eb.error, eb.amplitude * std::pow(w * 1.5e-4, p) * (w * 9.99));
  }
}

// The paper's own setup at non-integer FR = 1.5: h1 = 10 ms, H = h2 = 15 ms (non-matching
// fast grid), and at FR = 30 with smoothing on the fast producer: both run to the end and
// stay within 004's "good solution" level, position error (Eq. 7) below 10 %.
TEST(OscillatorScenarioMultirate, Paper004SetupsRunToTheEnd) {
  for (const auto& sets : std::vector<std::vector<std::string>>{
           {"model.fr=1.5", "mass1.non_matching=true"}, {"model.fr=30", "mass1.smoothing=true"}}) {
    const run_result r = run("oscillator004.toml", sets);
    ASSERT_EQ(r.outcome.status, cosim::run_status::completed) << sets.front();
    // 100 s (100 fast cycles) rounded up to whole macro steps H = FR/100 s.
    EXPECT_GE(r.outcome.sim_time_s, 100.0 - 1e-9);
    EXPECT_LT(r.outcome.sim_time_s, 100.0 + r.sc.run.macro_step);
    const auto d = config::oscillator_definition_of(r.sc);
    const osc::reference_solution ref(*d);
    const auto exact = ref.states_at(row_times(r));
    double sum = 0.0, sq = 0.0;
    for (std::size_t k = 0; k < exact.size(); ++k) {
      const double e = r.rows.rows[k][1] - exact[k][0];
      sum += e * e;
      sq += exact[k][0] * exact[k][0];
    }
    const double fr = r.sc.param("fr");
    const double dx = fr / 100.0 * std::sqrt(sum / sq);  // 004 Eq. (7), N = 100
    std::printf("  004 %s %s: position error (Eq. 7) %.3g\n", sets[0].c_str(), sets[1].c_str(), dx);
    EXPECT_LT(dx, 0.1) << sets.front();
  }
}

// 000 Sect. 2.4: "selecting the coupling variables such that D = 0 results in better energy
// conservation" (A.1, A.4). Undamped A.1 and A.2 at the files' H = 1 ms, ZOH, Jacobi: the
// d-d coupling (no feedthrough) keeps the energy several times closer to E0 than f-d (whose
// force output feeds the extrapolated displacement through, 000 Eq. (24)).
TEST(OscillatorScenarioCoupling, DisplacementCouplingConservesEnergyBetter) {
  for (const auto& [fd, dd] : {std::pair<std::string, std::string>{"oscillator2_fd_case1.toml",
                                                                   "oscillator2_dd_case1.toml"},
                               {"oscillator3_fd.toml", "oscillator3_dd.toml"}}) {
    double drift[2] = {0.0, 0.0};
    int k = 0;
    for (const std::string& file : {fd, dd}) {
      const run_result r = run(file, {"run.duration=" + std::to_string(duration000)});
      ASSERT_EQ(r.outcome.status, cosim::run_status::completed);
      const auto d = config::oscillator_definition_of(r.sc);
      const auto n = static_cast<Eigen::Index>(d->size());
      const Eigen::VectorXd z0 = osc::initial_state(*d);
      const double e0 = osc::mechanical_energy(*d, z0.head(n), z0.tail(n));
      for (const auto& row : r.rows.rows) {
        Eigen::VectorXd x(n), v(n);
        for (Eigen::Index i = 0; i < n; ++i) {
          x[i] = row[static_cast<std::size_t>(1 + i)];
          v[i] = row[static_cast<std::size_t>(1 + n + i)];
        }
        drift[k] = std::max(drift[k], std::abs(osc::mechanical_energy(*d, x, v) - e0) / e0);
      }
      ++k;
    }
    std::printf("  %s: max |E - E0|/E0 = %.3e (f-d) vs %.3e (d-d)\n", fd.c_str(), drift[0],
                drift[1]);
    EXPECT_LT(drift[1], 0.25 * drift[0]) << fd;
  }
}

// ---- Bad input for the new keys: cosim::error naming the key --------------------------

void expect_error(const std::string& file, const std::vector<std::string>& sets,
                  const std::string& must_contain, bool at_build = false) {
  SCOPED_TRACE(file + " " + (sets.empty() ? "" : sets.back()));
  try {
    const config::scenario sc = config::load_scenario(dir + file, sets);
    if (!at_build) {
      ADD_FAILURE() << "no error while reading";
      return;
    }
    (void)config::build(sc);
    ADD_FAILURE() << "no error while building";
  } catch (const cosim::error& e) {
    EXPECT_NE(std::string(e.what()).find(must_contain), std::string::npos) << e.what();
  }
}

TEST(OscillatorScenarioBadInput, ModelKeys) {
  expect_error("oscillator2_fd_case1.toml", {"model.m1=0"}, "model.m1");
  expect_error("oscillator2_fd_case1.toml", {"model.m2=0"}, "singular");
  expect_error("oscillator3_fd.toml", {"model.m3=-1"}, "model.m3");
  expect_error("oscillator2_fd_case1.toml", {"model.case=4"}, "model.case");
  expect_error("oscillator2_fd_case1.toml", {"model.coupling=\"f-f\""}, "model.coupling");
  expect_error("oscillator2_fd_case1.toml", {"model.kc=-100"}, "model.kc");
  expect_error("oscillator_nonlinear.toml", {"model.damper_exponent=0.5"}, "model.damper_exponent");
  expect_error("oscillator004.toml", {"model.fr=1"}, "model.fr");
  expect_error("oscillator004.toml", {"model.fr=0.5"}, "model.fr");
  expect_error("oscillator004.toml", {"model.zeta=-0.1"}, "model.zeta");
  expect_error("oscillator004.toml", {"model.ar2=1000"}, "model.ar2");
  expect_error("oscillator2_fd_case1.toml", {"model.fr=2"}, "unknown key 'model.fr'");
}

TEST(OscillatorScenarioBadInput, MultirateKeys) {
  const std::string f = "oscillator2_fd_case1.toml";
  expect_error(f, {"coupling.extrapolation=5"}, "coupling.extrapolation");
  expect_error(f, {"coupling.order.mass1.x2=5"}, "coupling.order");
  expect_error(f, {"coupling.order.mass1.x2=-1"}, "0 to 4");
  expect_error(f, {"coupling.order.mass1.x2=1.5"}, "coupling.order");
  expect_error(f, {"coupling.order.mass9.x2=1"}, "mass9.x2");
  expect_error(f, {"coupling.order.mass1.nope=1"}, "mass1.nope", true);
  expect_error(f, {"coupling.order=1"}, "coupling.order");
  expect_error(f, {"run.sync=\"sideways\""}, "run.sync");
  expect_error(f, {"run.sync=\"slowest-first\"", "run.scheme=\"jacobi\""}, "run.sync");
  expect_error(f, {"mass1.step=3e-4"}, "mass1.non_matching = true");
  expect_error(f, {"mass1.step=2e-3"}, "mass1.step");
  expect_error(f, {"mass1.smoothing=\"yes\""}, "mass1.smoothing");
  expect_error(f, {"mass1.non_matching=1"}, "mass1.non_matching");
  // Fast-step delivery needs a sync (which side runs ahead) and nothing faster than H.
  expect_error("oscillator004.toml", {"run.delivery=\"fast\""}, "run.delivery");
  expect_error(f, {"run.delivery=\"fast-step\""}, "needs run.sync");
  expect_error("oscillator004.toml",
               {"run.delivery=\"fast-step\"", "run.sync=\"slowest-first\"", "mass1.step=5e-3"},
               "mass1.step");
  // 004 Table 1 timing: only with fast-step delivery; fastest-first only on matching grids.
  expect_error("oscillator004.toml", {"run.fast_step_timing=\"table1\""}, "run.delivery");
  expect_error("oscillator004.toml",
               {"run.delivery=\"fast-step\"", "run.sync=\"slowest-first\"",
                "run.fast_step_timing=\"table2\""},
               "run.fast_step_timing");
  expect_error("oscillator004.toml",
               {"run.delivery=\"fast-step\"", "run.sync=\"fastest-first\"", "model.fr=2.5",
                "run.fast_step_timing=\"table1\""},
               "mass2.step = 0.025 s is not");
  // oscillator004 at FR = 1.5 without the non-matching switch: h1 = 10 ms does not divide 15 ms.
  expect_error("oscillator004.toml", {"model.fr=1.5"}, "mass1.step");
}

TEST(OscillatorScenarioKeys, PerInputOrderAndSyncAreApplied) {
  const auto sc = config::load_scenario(
      dir + "oscillator004.toml",
      {"coupling.extrapolation=2", "coupling.order.mass2.f1=0", "run.sync=\"fastest-first\""});
  EXPECT_EQ(sc.run.scheme, cosim::scheme_kind::gauss_seidel);
  EXPECT_EQ(sc.run.order, (std::vector<std::string>{"mass1", "mass2"}));  // h1 < h2
  const auto b = config::build(sc);
  const auto& sys = b->sys;
  const std::size_t m1 = sys.index_of("mass1"), m2 = sys.index_of("mass2");
  EXPECT_EQ(sys.at(m2).input(sys.at(m2).find_input("f1")).order(), 0);
  EXPECT_EQ(sys.at(m1).input(sys.at(m1).find_input("x2")).order(), 2);
  EXPECT_EQ(b->plan.order, (std::vector<std::size_t>{m1, m2}));
  const auto sf = config::load_scenario(dir + "oscillator004.toml", {"run.sync=\"slowest-first\""});
  EXPECT_EQ(sf.run.order, (std::vector<std::string>{"mass2", "mass1"}));  // slowest first
  EXPECT_NEAR(sf.run.macro_step, 0.3, 1e-15);  // 004: H = h2 = FR x 10 ms, FR = 30
}

// The key table prints coupling.order."mass2.f1" (a TOML quoted key); --set takes that form
// as well as the dotted one, and refuses a broken quote.
TEST(OscillatorScenarioKeys, SetTakesQuotedKeyParts) {
  for (const char* set : {"coupling.order.\"mass2.f1\"=1", "coupling.order.'mass2.f1'=1"}) {
    SCOPED_TRACE(set);
    const auto b = config::build(config::load_scenario(dir + "oscillator2_fd_case1.toml", {set}));
    const std::size_t m2 = b->sys.index_of("mass2");
    EXPECT_EQ(b->sys.at(m2).input(b->sys.at(m2).find_input("f1")).order(), 1);
  }
  expect_error("oscillator2_fd_case1.toml", {"coupling.order.\"mass2.f1=1"}, "malformed key");
  expect_error("oscillator2_fd_case1.toml", {"coupling.order.\"mass2\"f1=1"}, "malformed key");
}

// 004's interface: H = h1 = 10 ms, mass2 on its own grid h2 = FR h1, ahead with
// slowest-first; its inputs keep the fast samples of one slow step.
TEST(OscillatorScenarioKeys, FastStepDeliveryCommunicatesAtTheFastStep) {
  for (const char* sync : {"slowest-first", "fastest-first"}) {
    const auto sc = config::load_scenario(
        dir + "oscillator004.toml",
        {"run.delivery=\"fast-step\"", std::string("run.sync=\"") + sync + "\""});
    EXPECT_TRUE(sc.run.fast_step);
    EXPECT_NEAR(sc.run.macro_step, 0.01, 1e-15);
    EXPECT_NEAR(sc.subsystems.at("mass2").step, 0.3, 1e-15);
    EXPECT_NEAR(sc.subsystems.at("mass1").step, 0.01, 1e-15);
    const auto b = config::build(sc);
    const cosim::subsystem& m2 = b->sys.at(b->sys.index_of("mass2"));
    EXPECT_TRUE(m2.multirate().options().non_matching);
    EXPECT_EQ(m2.multirate().options().ahead, std::string(sync) == "slowest-first") << sync;
    EXPECT_EQ(cosim::scheme::internal_step(m2), cosim::to_duration(0.3));
    EXPECT_EQ(m2.step_size(), cosim::to_duration(0.01));
  }
}

}  // namespace
