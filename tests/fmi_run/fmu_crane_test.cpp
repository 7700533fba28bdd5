// The crane of paper 003 as two FMI 2.0 FMUs built in the tree (tests/fmus/crane/) against the
// built-in crane: M1 with f-s and p-s coupling equal to <= 1e-12 m in s (issue 11) offline
// and threaded, and the energy-residual safety stop at H = 16 ms tripping as the built-in
// one does, and f-s with the feedthrough correction equal to the built-in p-s. The realtime
// mode is in fmu_crane_rt_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "cosim/subsystems/crane_model.hpp"
#include "cosim/subsystems/manoeuvre.hpp"
#include "crane_fmu_support.hpp"

namespace {

using cosim::test::max_diff;
using cosim::test::memory_sink;
using cosim::test::run_mode;

// Issue 11: the FMU crane reproduces the built-in crane to <= 1e-12 m in s. The FMUs run the
// built-in subsystems' own arithmetic on the same inputs, so the runs agree exactly; the
// bound leaves room only for rounding, not for a different exchange (the valve command held
// over the 1 ms macro step instead of set at every 0.2 ms hydraulic step is off by 2.6e-5 m:
// --set subsystems.hyd.step=0.001 --set subsystems.hyd.parameters.h_internal=0.0002).
constexpr double s_tol = 1e-12;  // [m]

void expect_same_run(const memory_sink& fmu, const memory_sink& builtin, const std::string& what) {
  ASSERT_EQ(fmu.rows(), builtin.rows()) << what;
  ASSERT_GT(fmu.rows(), 1u) << what;
  for (std::size_t r = 0; r < fmu.rows(); r += fmu.rows() / 50 + 1)
    ASSERT_EQ(fmu.at(r, "t"), builtin.at(r, "t")) << what << " row " << r;
  const double ds = max_diff(fmu, builtin, "s");
  std::printf(
      "%s: max |ds| = %.3g m, |dsd| = %.3g m/s, |dp1| = %.3g Pa, |dp2| = %.3g Pa, |dfh| = "
      "%.3g N, |dkappa| = %.3g over %zu rows\n",
      what.c_str(), ds, max_diff(fmu, builtin, "sd"), max_diff(fmu, builtin, "p1"),
      max_diff(fmu, builtin, "p2"), max_diff(fmu, builtin, "fh"), max_diff(fmu, builtin, "kappa"),
      fmu.rows());
  EXPECT_LE(ds, s_tol) << what;
}

TEST(FmuCrane, M1EqualsTheBuiltInCraneOffline) {
  const cosim::test::temp_dir dir;
  for (const std::string c : {"fs", "ps"}) {
    memory_sink fmu, builtin;
    const cosim::run_outcome of = run_mode(cosim::test::fmu_crane_file(dir, c), {}, "offline", fmu);
    const cosim::run_outcome ob =
        run_mode(cosim::test::builtin_crane_file(c), {}, "offline", builtin);
    ASSERT_EQ(of.status, cosim::run_status::completed) << c << ": " << of.message;
    ASSERT_EQ(ob.status, cosim::run_status::completed) << c;
    EXPECT_EQ(fmu.rows(), 10'001u);  // 10 s at H = 1 ms
    expect_same_run(fmu, builtin, "M1 " + c + " offline");
    // The valve manoeuvre on the FMU input kappa moves it around the input's start value,
    // the equilibrium kappa0 of 003 Sect. 1.3: 003 Eq. (19) exactly at every row.
    const double kappa0 = cosim::crane::solve_equilibrium({}, {}, 3).kappa0;
    for (std::size_t r = 0; r < fmu.rows(); r += 97)
      ASSERT_EQ(fmu.at(r, "kappa"), cosim::crane::manoeuvre::m1(fmu.at(r, "t"), kappa0)) << r;
    // The actuator bond sees the same power: same energy residual.
    EXPECT_NEAR(of.energy_residual, ob.energy_residual, 1e-9 * ob.energy_residual) << c;
  }
}

TEST(FmuCrane, M1EqualsTheBuiltInCraneThreaded) {
  const cosim::test::temp_dir dir;
  for (const std::string c : {"fs", "ps"}) {
    memory_sink fmu, builtin;
    const cosim::run_outcome of =
        run_mode(cosim::test::fmu_crane_file(dir, c), {}, "threaded", fmu);
    run_mode(cosim::test::builtin_crane_file(c), {}, "offline", builtin);
    ASSERT_EQ(of.status, cosim::run_status::completed) << c << ": " << of.message;
    EXPECT_EQ(of.mode, "threaded");
    expect_same_run(fmu, builtin, "M1 " + c + " threaded");
  }
}

// README / threaded_crane_test: f-s M1 with safety.energy_residual_limit = 3 x sum|dE| of
// the 10 ms run stops H = 16 ms (unstable, 003 Sect. 5) before it drifts; H = 10 ms
// completes. The FMU crane must trip the same stop at the same time.
TEST(FmuCrane, EnergyResidualSafetyStopAtH16msTripsAsTheBuiltIn) {
  const cosim::test::temp_dir dir;
  const std::string fmu_file = cosim::test::fmu_crane_file(dir, "fs");
  const std::string builtin_file = cosim::test::builtin_crane_file("fs");
  memory_sink ref10;
  const cosim::run_outcome o10 = run_mode(builtin_file, {"run.macro_step=0.01"}, "offline", ref10);
  ASSERT_EQ(o10.status, cosim::run_status::completed);
  const std::string lim =
      "safety.energy_residual_limit=" + std::to_string(3.0 * o10.energy_residual);
  for (const char* mode : {"offline", "threaded"}) {
    memory_sink f10, b16, f16;
    const cosim::run_outcome g10 = run_mode(fmu_file, {"run.macro_step=0.01", lim}, mode, f10);
    EXPECT_EQ(g10.status, cosim::run_status::completed) << mode << ": " << g10.message;
    const cosim::run_outcome bo = run_mode(builtin_file, {"run.macro_step=0.016", lim}, mode, b16);
    const cosim::run_outcome fo = run_mode(fmu_file, {"run.macro_step=0.016", lim}, mode, f16);
    ASSERT_EQ(bo.status, cosim::run_status::safety_stop) << mode;
    EXPECT_EQ(fo.status, cosim::run_status::safety_stop) << mode << ": " << fo.message;
    EXPECT_EQ(fo.stop_reason, "energy_residual") << mode;
    EXPECT_EQ(fo.stop_time_s, bo.stop_time_s) << mode;
    EXPECT_EQ(fo.macro_steps, bo.macro_steps) << mode;
    expect_same_run(f16, b16, std::string("M1 fs H = 16 ms, guarded, ") + mode);
    std::printf("%s H = 16 ms: built-in stops at %.3f s, FMU crane at %.3f s (%s)\n", mode,
                bo.stop_time_s, fo.stop_time_s, fo.stop_reason.c_str());
  }
}

// Feedthrough correction with the FMU's directional derivative (d fh / d sd = -c from
// fmi2GetDirectionalDerivative): the FMU crane in f-s becomes the built-in crane in p-s
// (003 Eq. (8) with the multibody's fresh rate), at H = 30 ms, twice the published f-s limit
// of 003 Sect. 5, where plain f-s oscillates.
TEST(FmuCrane, FsWithFeedthroughCorrectionIsTheBuiltInPs) {
  const cosim::test::temp_dir dir;
  const std::vector<std::string> H{"run.macro_step=0.03"};
  memory_sink ps;
  ASSERT_EQ(run_mode(cosim::test::builtin_crane_file("ps"), H, "offline", ps).status,
            cosim::run_status::completed);
  for (const char* mode : {"offline", "threaded"}) {
    memory_sink fmu;
    std::vector<std::string> sets = H;
    sets.emplace_back("coupling.feedthrough_correction=true");
    const cosim::run_outcome o = run_mode(cosim::test::fmu_crane_file(dir, "fs"), sets, mode, fmu);
    ASSERT_EQ(o.status, cosim::run_status::completed) << mode << ": " << o.message;
    expect_same_run(fmu, ps, std::string("M1 fs corrected vs built-in ps, H = 30 ms, ") + mode);
  }
}

}  // namespace
