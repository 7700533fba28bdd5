// 004 Fig. 8 through `cosim sweep` with run.delivery = "fast-step", i.e. 004's interface:
// exchange at every fast step h1 = 10 ms, the slow mass on its own grid h2 = FR h1, ahead
// (slowest-first, SF) or behind (fastest-first, FF), inputs on 004's polynomial points
// (004 Sect. 2.1). Coupling d-d: as in 004 Fig. 5 each side evaluates the spring k2 from
// the other's position. Errors are 004 Eqs. (7)-(8) against each run's closed form, Eq. (3).
//
// Asserted, from the text around 004 Fig. 8 (Sect. 3.4):
//  - "For 25 < FR < 50, SF integration without interpolation (O0) seems to be the most
//    suitable strategy": SF O0 has the lowest position and energy error of all
//    configurations at FR = 30 and 40;
//  - "FF ... leads to a numerical instability ... a peak in the error graphics around
//    FR = 40": FF O2 and O3 errors are higher at FR = 40 than at 30 and at 50, and SF has
//    no such peak;
//  - "For FR < 25, SF ... with cubic interpolation (O3) ... attaining good position and
//    energy error levels": SF O3 keeps both small up to FR = 20.
// "For FR < 25, SF + cubic interpolation (O3) shows the best performance" needs the slow
// subsystem's own integration error to be as small as 004 Sect. 3.2 assumes ("small enough
// to keep integration errors very low"). With the trapezoidal rule at 100 steps per slow
// cycle it is not: its phase lag of the slow mode alone gives Eq. (7) = 1.19e-3 at every FR
// (closed form below), which hides the coupling error of O1..O3 (1e-7..1e-3), and the lead
// of O0's next-sample hold partly cancels that lag, so SF O0 comes out lowest. Asserted:
//  - with the trapezoidal rule, SF O2 and O3 at FR = 2 lie on that closed-form floor and
//    SF O0 below it;
//  - with mass2.integrator = "rk4" (its own Eq. (7) floor is ~5e-7: the coupling error
//    alone), SF O3 has the lowest position error of SF O0..O3 at FR = 2, 10 and 20, and SF
//    O0 the lowest at FR = 40: 004's ranking. An independent prototype of 004's interface
//    (Table 1, plain Python) gave the same orderings and the same numbers to 2-3 digits.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <numbers>
#include <string>
#include <vector>

#include "sweep_support.hpp"

namespace {

using namespace cosim::test_cli;

const std::string scenario = COSIM_SOURCE_DIR "/rt_config/scenarios/oscillator004.toml";
const std::vector<double> frs{2.0, 10.0, 20.0, 30.0, 40.0, 50.0};
const char* const fr_values = "2,10,20,30,40,50";
constexpr std::size_t fr30 = 3, fr40 = 4, fr50 = 5;
// Slow mass integrated with RK4 instead of the trapezoidal rule (SF only).
const std::vector<double> frs_rk4{2.0, 10.0, 20.0, 40.0};
const char* const fr_values_rk4 = "2,10,20,40";
constexpr std::size_t rk4_fr40 = 3;

struct errors {
  std::vector<double> pos, energy;  // per FR
};

errors run_sweep(const std::string& out, const std::string& sync, int order, const char* values,
                 std::size_t n, const std::vector<std::string>& extra) {
  const std::string tag = sync + " O" + std::to_string(order);
  std::vector<std::string> args{
      "sweep",
      scenario,
      "--key",
      "model.fr",
      "--values",
      values,
      "--set",
      "run.delivery=fast-step",
      "--set",
      "model.coupling=d-d",
      "--set",
      std::string("run.sync=") + (sync[0] == 'S' ? "slowest-first" : "fastest-first"),
      "--set",
      "coupling.extrapolation=" + std::to_string(order),
      "--reference",
      "closed-form",
      "--out",
      out};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto r = cosim_cli(args);
  errors e;
  EXPECT_EQ(r.code, 0) << tag << "\n" << r.out << r.err;
  if (r.code != 0) return e;
  const table t = read_table(out + "/sweep.csv");
  EXPECT_EQ(t.rows.size(), n) << tag;
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    EXPECT_EQ(t.text(i, "status"), "completed") << tag << " row " << i;
    e.pos.push_back(t.num(i, "pos_err_x1"));
    e.energy.push_back(t.num(i, "energy_err"));
  }
  return e;
}

// 004 Eq. (7) of the trapezoidal rule's phase error alone: with an exact coupling x1's slow
// part C13 cos(w2 t) turns at the trapezoidal rule's discrete frequency
// w2~ = (2/h2) atan(w2 h2 / 2) (h2 = FR/100 s, 004 Sect. 3.2), sampled at the n = 10 000
// fast steps over N = 100 fast cycles. 004 Eqs. (3)-(5): w1 = 2 pi, C11 = 1, C13 = 10.
double trapezoidal_floor(double fr) {
  const double w1 = 2.0 * std::numbers::pi, w2 = w1 / fr, h2 = fr / 100.0;
  const double w2t = 2.0 / h2 * std::atan(w2 * h2 / 2.0);
  double se = 0.0, sx = 0.0;
  constexpr int n = 10000;
  for (int i = 1; i <= n; ++i) {
    const double t = 0.01 * i;
    const double x = std::cos(w1 * t) + 10.0 * std::cos(w2 * t);
    const double e = 10.0 * (std::cos(w2t * t) - std::cos(w2 * t));
    se += e * e;
    sx += x * x;
  }
  return fr / 100.0 * std::sqrt(se / sx);
}

class FrSweepFastStep : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    static temp_dir dir;
    for (const char* sync : {"SF", "FF"})
      for (int order = 0; order <= 3; ++order) {
        const std::string tag = std::string(sync) + " O" + std::to_string(order);
        results()[tag] = run_sweep(dir / (std::string(sync) + std::to_string(order)), sync, order,
                                   fr_values, frs.size(), {});
      }
    for (int order = 0; order <= 3; ++order)
      rk4_results()["SF O" + std::to_string(order)] =
          run_sweep(dir / ("rk4_" + std::to_string(order)), "SF", order, fr_values_rk4,
                    frs_rk4.size(), {"--set", "mass2.integrator=rk4"});
    std::printf(
        "  004 Fig. 8, fast-step delivery, d-d: position error (Eq. 7) of x1 / energy "
        "error (Eq. 8)\n  %-6s",
        "FR");
    for (double fr : frs) std::printf(" %19g", fr);
    std::printf("\n");
    for (const auto& [tag, e] : results()) {
      std::printf("  %-6s", tag.c_str());
      for (std::size_t i = 0; i < frs.size(); ++i)
        std::printf("  %8.2e/%8.2e", e.pos[i], e.energy[i]);
      std::printf("\n");
    }
    std::printf("  same, slow mass with RK4 (mass2.integrator = rk4)\n  %-6s", "FR");
    for (double fr : frs_rk4) std::printf(" %19g", fr);
    std::printf("\n");
    for (const auto& [tag, e] : rk4_results()) {
      std::printf("  %-6s", tag.c_str());
      for (std::size_t i = 0; i < e.pos.size(); ++i)
        std::printf("  %8.2e/%8.2e", e.pos[i], e.energy[i]);
      std::printf("\n");
    }
  }
  static std::map<std::string, errors>& results() {
    static std::map<std::string, errors> r;
    return r;
  }
  static std::map<std::string, errors>& rk4_results() {
    static std::map<std::string, errors> r;
    return r;
  }
};

// One test, five findings: ctest runs every test in a process of its own, and each would
// recompute the same 64 runs of the sweep (30 s under ASan).
void slowest_first_o0_is_best_between_25_and_50(const std::map<std::string, errors>& results) {
  const errors& sf0 = results.at("SF O0");
  for (const std::size_t i : {fr30, fr40})
    for (const auto& [tag, e] : results) {
      if (tag == "SF O0") continue;
      EXPECT_LT(sf0.pos[i], e.pos[i]) << tag << " FR " << frs[i];
      EXPECT_LT(sf0.energy[i], e.energy[i]) << tag << " FR " << frs[i];
    }
}

void fastest_first_peaks_near_fr_40(const std::map<std::string, errors>& results) {
  for (const char* tag : {"FF O2", "FF O3"}) {
    const errors& e = results.at(tag);
    EXPECT_GT(e.pos[fr40], e.pos[fr30]) << tag;
    EXPECT_GT(e.pos[fr40], e.pos[fr50]) << tag;
    EXPECT_GT(e.energy[fr40], e.energy[fr30]) << tag;
    EXPECT_GT(e.energy[fr40], e.energy[fr50]) << tag;
  }
  for (int order = 0; order <= 3; ++order) {  // slowest-first rises on through FR = 50
    const errors& e = results.at("SF O" + std::to_string(order));
    EXPECT_LT(e.pos[fr40], e.pos[fr50]) << "SF O" << order;
  }
}

void slowest_first_o3_is_good_below_25(const std::map<std::string, errors>& results) {
  const errors& e = results.at("SF O3");
  for (std::size_t i = 0; i < fr30; ++i) {  // FR = 2, 10, 20
    EXPECT_LT(e.pos[i], 0.02) << "FR " << frs[i];
    EXPECT_LT(e.energy[i], 2e-3) << "FR " << frs[i];
  }
}

void trapezoidal_phase_error_is_the_floor(const std::map<std::string, errors>& results) {
  const double floor = trapezoidal_floor(frs[0]);  // FR = 2: 1.19e-3
  for (const char* tag : {"SF O2", "SF O3"})
    EXPECT_NEAR(results.at(tag).pos[0], floor, 0.03 * floor) << tag;
  EXPECT_LT(results.at("SF O0").pos[0], 0.8 * floor);  // its lead cancels part of the lag
}

void slowest_first_o3_is_best_below_25_with_accurate_slow_integration(
    const std::map<std::string, errors>& rk4) {
  ASSERT_EQ(rk4.size(), 4u);
  for (const auto& [tag, e] : rk4) ASSERT_EQ(e.pos.size(), frs_rk4.size()) << tag;
  const errors& o3 = rk4.at("SF O3");
  for (std::size_t i = 0; i < rk4_fr40; ++i) {  // FR = 2, 10, 20
    for (const char* tag : {"SF O0", "SF O1", "SF O2"})
      EXPECT_LT(o3.pos[i], rk4.at(tag).pos[i]) << tag << " FR " << frs_rk4[i];
    // Up to FR = 10 the coupling error of O3 alone lies below the trapezoidal floor.
    if (frs_rk4[i] <= 10.0) {
      EXPECT_LT(o3.pos[i], 0.1 * trapezoidal_floor(frs_rk4[i])) << "FR " << frs_rk4[i];
    }
    EXPECT_LT(o3.energy[i], 1e-3) << "FR " << frs_rk4[i];
  }
  const errors& o0 = rk4.at("SF O0");
  for (const char* tag : {"SF O1", "SF O2", "SF O3"}) {
    EXPECT_LT(o0.pos[rk4_fr40], rk4.at(tag).pos[rk4_fr40]) << tag << " FR 40";
    EXPECT_LT(o0.energy[rk4_fr40], rk4.at(tag).energy[rk4_fr40]) << tag << " FR 40";
  }
}

TEST_F(FrSweepFastStep, Fig8RankingOfOrdersOverFr) {
  ASSERT_EQ(results().size(), 8u);
  for (const auto& [tag, e] : results()) ASSERT_EQ(e.pos.size(), frs.size()) << tag;
  {
    SCOPED_TRACE("slowest-first O0 is best between FR 25 and 50");
    slowest_first_o0_is_best_between_25_and_50(results());
  }
  {
    SCOPED_TRACE("fastest-first peaks near FR 40");
    fastest_first_peaks_near_fr_40(results());
  }
  {
    SCOPED_TRACE("slowest-first O3 is good below FR 25");
    slowest_first_o3_is_good_below_25(results());
  }
  {
    SCOPED_TRACE("the trapezoidal rule's phase error is the floor at low FR");
    trapezoidal_phase_error_is_the_floor(results());
  }
  {
    SCOPED_TRACE("slowest-first O3 is best below FR 25 with an accurate slow integrator");
    slowest_first_o3_is_best_below_25_with_accurate_slow_integration(rk4_results());
  }
}

}  // namespace

// run.fast_step_timing = "table1": the fast mass sees the slow samples as 004 Table 1 has
// them (slowest-first: at a slow grid point the slow side has not stepped on yet;
// fastest-first: the sample at t is not there yet). Expected values from an independent
// prototype of 004 Table 1 (plain Python, ode4 and trapezoidal rule, 004's polynomial
// points, integer-microsecond time grids). Only O0 notices the timing at integer FR; at
// FR = 2.5 and 7.5 the default hold of the newest sample is up to two slow steps ahead.
TEST(FrSweepFastStepTable1, MatchesAnIndependentModelOf004Table1) {
  temp_dir dir;
  struct expected {
    const char* sync;
    const char* values;
    std::vector<double> pos;  // pos_err_x1, O0, per value
  };
  for (const expected& x : {expected{"SF", "2.5,7.5", {1.38099e-3, 4.07128e-3}},
                            expected{"FF", "2,10", {2.11750e-3, 3.86486e-2}}}) {
    const errors e = run_sweep(dir / x.sync, x.sync, 0, x.values, x.pos.size(),
                               {"--set", "run.fast_step_timing=table1"});
    ASSERT_EQ(e.pos.size(), x.pos.size()) << x.sync;
    for (std::size_t i = 0; i < x.pos.size(); ++i)
      EXPECT_NEAR(e.pos[i], x.pos[i], 0.01 * x.pos[i]) << x.sync << " row " << i;
  }
}
