// The test FMUs of tests/fmus/ run through system files (`[subsystems.X] fmu = "..."`) by
// the library's run entry, at their default experiments unless a test says otherwise, and
// compared with the closed forms of closed_forms.hpp: the bouncing ball's bounce times and
// heights (FMI 2.0 inside doStep, FMI 3.0 through event mode), x0 e^(-k t) of the linear ODE,
// the stair's termination (run completed with the reason, rows up to T_end), and the pure
// feedthrough with a source on its input, in chains whose evaluation order shows in the
// results, and in an algebraic loop the builder refuses.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "closed_forms.hpp"
#include "cosim/rt_config/run.hpp"
#include "cosim/runtime/error.hpp"
#include "fmu_binary.hpp"
#include "row_table.hpp"
#include "temp_dir.hpp"

namespace {

using cosim::test::fmu_path;

using table = cosim::test::row_table;

struct run_result {
  cosim::run_outcome out;
  table rows;
};

/// Runs the system file `text` (written to a fresh folder) with `sets`.
void run_system(const std::string& text, run_result& r, const std::vector<std::string>& sets = {}) {
  const cosim::test::temp_dir dir;
  cosim::config::run_request req;
  req.scenario = dir.file("system.toml", text);
  req.sets = sets;
  req.out_dir = dir / "out";
  req.quiet = true;
  req.also = &r.rows;
  r.out = cosim::config::run_scenario(req, nullptr).outcome;
}

std::string one_fmu(const std::string& fmu, const std::string& params, const std::string& record) {
  return "[subsystems.m]\nfmu = \"" + fmu_path(fmu) + "\"\n" +
         (params.empty() ? "" : "parameters = { " + params + " }\n") + "\n[output]\nrecord = [" +
         record + "]\n";
}

// Exact flight and impact times in the FMU: grid values equal the closed form to rounding
// (an explicit Euler step of 0.01 s would be off by g h^2 / 2 = 5e-4 m).
constexpr double ball_tol = 1e-12;

void check_ball(const std::string& fmu, const cosim::test::ball_params& p,
                const std::string& params) {
  SCOPED_TRACE(fmu + " " + params);
  run_result r;
  run_system(one_fmu(fmu, params, "\"m.h\", \"m.v\", \"m.bounces\""), r);
  ASSERT_EQ(r.out.status, cosim::run_status::completed) << r.out.message;
  // Default experiment: 0 .. 3 s in steps of 0.01 s.
  ASSERT_EQ(r.rows.rows(), 301u);
  EXPECT_DOUBLE_EQ(r.rows.at(300, "t"), 3.0);
  int bounces_seen = 0;
  for (std::size_t i = 0; i < r.rows.rows(); ++i) {
    const double t = r.rows.at(i, "t");
    ASSERT_NEAR(t, 0.01 * static_cast<double>(i), 1e-12);
    const cosim::test::ball_state want = cosim::test::ball_at(p, t);
    ASSERT_NEAR(r.rows.at(i, "m.h"), want.h, ball_tol) << "t = " << t;
    ASSERT_NEAR(r.rows.at(i, "m.v"), want.v, ball_tol) << "t = " << t;
    ASSERT_EQ(r.rows.at(i, "m.bounces"), want.bounces) << "t = " << t;
    bounces_seen = want.bounces;
  }
  // Every impact of the closed form happened (the last leaves the ball resting).
  EXPECT_EQ(bounces_seen, static_cast<int>(cosim::test::ball_impacts(p, 3.0).size()));
}

TEST(FmuRun, BouncingBallFmi2MatchesTheClosedForm) {
  check_ball("bouncing_ball_fmi2", {}, "");
}

TEST(FmuRun, BouncingBallFmi3InEventModeMatchesTheClosedForm) {
  // hasEventMode and mightReturnEarlyFromDoStep: the importer uses event mode, the FMU stops
  // at each impact and bounces only in fmi3UpdateDiscreteStates. An importer ignoring
  // eventHandlingNeeded would let the ball fall through the floor at the first impact
  // (FmuProtocol.Fmi3BallLosesTheBounceWhenEventHandlingNeededIsIgnored).
  check_ball("bouncing_ball_fmi3", {}, "");
}

TEST(FmuRun, BouncingBallParametersFromTheSystemFile) {
  cosim::test::ball_params p;
  p.e = 0.5;
  p.h0 = 2.0;
  p.v0 = 1.0;
  // Apex heights after bounce n: e^(2n) w1^2 / (2 g), w1^2 = v0^2 + 2 g h0.
  EXPECT_NEAR(cosim::test::ball_apex(p, 1), 0.25 * (1.0 + 2.0 * 9.81 * 2.0) / (2.0 * 9.81), 1e-15);
  for (const char* fmu : {"bouncing_ball_fmi2", "bouncing_ball_fmi3"})
    check_ball(fmu, p, "e = 0.5, h0 = 2.0, v0 = 1.0");
}

void check_ode(const std::string& fmu, double k, double x0, const std::string& params) {
  SCOPED_TRACE(fmu + " " + params);
  run_result r;
  run_system(one_fmu(fmu, params, "\"m.x\""), r);
  ASSERT_EQ(r.out.status, cosim::run_status::completed) << r.out.message;
  ASSERT_EQ(r.rows.rows(), 501u);  // 0 .. 5 s in steps of 0.01 s
  for (std::size_t i = 0; i < r.rows.rows(); ++i) {
    const double t = r.rows.at(i, "t");
    // Exact per step: two roundings per step leave < 1e-12 relative after 500 steps.
    ASSERT_NEAR(r.rows.at(i, "m.x") / (x0 * std::exp(-k * t)), 1.0, 1e-12) << "t = " << t;
  }
}

TEST(FmuRun, LinearOdeMatchesItsClosedForm) {
  for (const char* fmu : {"linear_ode_fmi2", "linear_ode_fmi3"}) {
    check_ode(fmu, 1.0, 1.0, "");
    check_ode(fmu, 0.5, 4.0, "k = 0.5, x0 = 4.0");
  }
}

TEST(FmuRun, StairEndsTheRunAsCompletedWithTheReasonAndRowsUpToTEnd) {
  for (const char* fmu : {"stair_fmi2", "stair_fmi3"}) {
    SCOPED_TRACE(fmu);
    run_result r;
    run_system(one_fmu(fmu, "", "\"m.counter\", \"m.level\""), r);
    // The FMU ended the simulation at T_end = 5.5 s (default experiment to 10 s): that is
    // how this model completes, not a failure.
    EXPECT_EQ(r.out.status, cosim::run_status::completed) << r.out.message;
    EXPECT_NE(r.out.stop_reason, "end_time");
    EXPECT_NE(r.out.stop_reason, "non_finite");
    // The reason names the FMU that ended the run.
    EXPECT_NE(r.out.message.find(fmu), std::string::npos) << r.out.message;
    EXPECT_NEAR(r.out.stop_time_s, 5.5, 1e-9);
    ASSERT_EQ(r.rows.rows(), 56u);  // t = 0, 0.1, ..., 5.5
    EXPECT_NEAR(r.rows.at(55, "t"), 5.5, 1e-12);
    for (std::size_t i = 0; i < r.rows.rows(); ++i) {
      const double t = r.rows.at(i, "t");
      ASSERT_EQ(r.rows.at(i, "m.counter"), std::floor(t + 1e-9)) << "t = " << t;
      ASSERT_EQ(r.rows.at(i, "m.level"), std::floor(t + 1e-9)) << "t = " << t;
    }
  }
}

// An FMU that ends the simulation with the step that reaches T_end (end_in_step): FMI 2
// fmi2Discard + fmi2Terminated with fmi2LastSuccessfulTime = the step's end, FMI 3 fmi3OK with
// terminateSimulation. That step is complete, so its communication point is a row (as FMI
// tools record it) and the run ends there: counter(t) = floor(t) up to and including T_end.
// Output every 0.3 s: the end falls between output points and is still written.
TEST(FmuRun, StairEndingWithItsLastStepKeepsThatCommunicationPoint) {
  const double t_end = 1.0;
  for (const char* fmu : {"stair_fmi2", "stair_fmi3"})
    for (const char* mode : {"offline", "threaded", "realtime"})
      for (const bool thinned : {false, true}) {
        SCOPED_TRACE(std::string(fmu) + " " + mode + (thinned ? " output every 0.3 s" : ""));
        run_result r;
        run_system(one_fmu(fmu, "T_end = 1.0, end_in_step = true", "\"m.counter\"") +
                       "\n[run]\nduration = 2.0\nmacro_step = 0.1\n" +
                       (thinned ? "output_interval = 0.3\n" : ""),
                   r, {std::string("run.mode=") + mode});
        EXPECT_EQ(r.out.status, cosim::run_status::completed) << r.out.message;
        EXPECT_EQ(r.out.stop_reason, "model_end");
        EXPECT_NE(r.out.message.find(fmu), std::string::npos) << r.out.message;
        EXPECT_NE(r.out.message.find("ended the simulation at t = 1 s"), std::string::npos)
            << r.out.message;
        // Rows every 0.1 s (or 0.3 s) from 0, then the end point.
        const std::size_t want = thinned ? 5u : 11u;  // 0 .. 0.9 by 0.3, and 1.0
        ASSERT_EQ(r.rows.rows(), want);
        const double last = r.rows.at(want - 1, "t");
        EXPECT_NEAR(last, t_end, 1e-12);
        EXPECT_EQ(r.out.stop_time_s, last);
        EXPECT_EQ(r.rows.at(want - 1, "m.counter"), std::floor(t_end + 1e-9));
        for (std::size_t i = 0; i < r.rows.rows(); ++i) {
          const double t = r.rows.at(i, "t");
          ASSERT_EQ(r.rows.at(i, "m.counter"), std::floor(t + 1e-9)) << "t = " << t;
        }
      }
}

// The same FMU ending inside a step (T_end = 0.95 s in the step from 0.9 s to 1 s): that step
// did not complete, so the run ends at its start, 0.9 s, and the message says so.
TEST(FmuRun, StairEndingInsideAStepEndsTheRunAtTheStepsStartAndSaysSo) {
  for (const char* fmu : {"stair_fmi2", "stair_fmi3"})
    for (const char* mode : {"offline", "threaded"}) {
      SCOPED_TRACE(std::string(fmu) + " " + mode);
      run_result r;
      run_system(one_fmu(fmu, "T_end = 0.95, end_in_step = true", "\"m.counter\"") +
                     "\n[run]\nduration = 2.0\nmacro_step = 0.1\n",
                 r, {std::string("run.mode=") + mode});
      EXPECT_EQ(r.out.status, cosim::run_status::completed) << r.out.message;
      EXPECT_EQ(r.out.stop_reason, "model_end");
      EXPECT_NE(r.out.message.find("ended the simulation at t = 0.95 s"), std::string::npos)
          << r.out.message;
      EXPECT_NE(r.out.message.find("inside the macro step from t = 0.9 s to 1 s"),
                std::string::npos)
          << r.out.message;
      EXPECT_NE(r.out.message.find("the run ends at that step's start"), std::string::npos)
          << r.out.message;
      ASSERT_EQ(r.rows.rows(), 10u);  // t = 0 .. 0.9
      EXPECT_NEAR(r.rows.at(9, "t"), 0.9, 1e-12);
      EXPECT_EQ(r.out.stop_time_s, r.rows.at(9, "t"));
    }
}

// An fmi2GetReal that returns fmi2Error (the crash FMU's crash_in = 5: every get after the
// step ending after crash_at = 0.495 s, i.e. at t = 0.5 s) is the FMU's error, named with its
// call and time; the step that led there is not recorded with the previous values: the last
// row is 0.49 s, where y = t still held, and the run stopped there.
TEST(FmuRun, AFailedGetIsAModelErrorAtItsTimeWithoutAFabricatedRow) {
  for (const char* mode : {"offline", "threaded"}) {
    SCOPED_TRACE(mode);
    run_result r;
    run_system(one_fmu("crash_fmi2", "crash_in = 5, crash_at = 0.495", "\"m.y\"") +
                   "\n[run]\nduration = 1.0\nmacro_step = 0.01\n",
               r, {std::string("run.mode=") + mode});
    EXPECT_EQ(r.out.status, cosim::run_status::error) << r.out.message;
    EXPECT_EQ(r.out.stop_reason, "model_error");
    EXPECT_NE(r.out.message.find(fmu_path("crash_fmi2")), std::string::npos) << r.out.message;
    EXPECT_NE(r.out.message.find("fmi2GetReal at t = 0.5 s returned fmi2Error"), std::string::npos)
        << r.out.message;
    ASSERT_EQ(r.rows.rows(), 50u);  // t = 0 .. 0.49
    for (std::size_t i = 0; i < r.rows.rows(); ++i)
      ASSERT_NEAR(r.rows.at(i, "m.y"), r.rows.at(i, "t"), 1e-12) << "row " << i;
    EXPECT_NEAR(r.rows.at(49, "t"), 0.49, 1e-12);
    EXPECT_EQ(r.out.stop_time_s, r.rows.at(49, "t"));
  }
  // Already at t = 0 (the start-up exchange): the same error, not a non-finite value.
  for (const char* mode : {"offline", "threaded"}) {
    SCOPED_TRACE(std::string(mode) + " at t = 0");
    run_result r;
    run_system(one_fmu("crash_fmi2", "crash_in = 5, crash_at = -1.0", "\"m.y\""), r,
               {std::string("run.mode=") + mode});
    EXPECT_EQ(r.out.status, cosim::run_status::error) << r.out.message;
    EXPECT_EQ(r.out.stop_reason, "model_error");
    EXPECT_NE(r.out.message.find("fmi2GetReal at t = 0 s returned fmi2Error"), std::string::npos)
        << r.out.message;
    EXPECT_EQ(r.rows.rows(), 0u);
    EXPECT_EQ(r.out.stop_time_s, 0.0);
  }
}

// FMI 2.0 Sect. 4.2.3 / FMI 3.0 Sect. 4.2.1: a discarded step without the request to end is
// a step the FMU could not complete (here: longer than its max_step of 0.05 s against the
// run's 0.1 s). The run did not complete: it stops as a model error that says so, keeping the
// rows before the step.
TEST(FmuRun, StairThatDiscardsAStepWithoutEndingStopsTheRunAsAnError) {
  for (const char* fmu : {"stair_fmi2", "stair_fmi3"}) {
    SCOPED_TRACE(fmu);
    run_result r;
    run_system(one_fmu(fmu, "max_step = 0.05", "\"m.counter\"") +
                   "\n[run]\nduration = 2.0\nmacro_step = 0.1\n",
               r);
    EXPECT_EQ(r.out.status, cosim::run_status::error) << r.out.message;
    EXPECT_EQ(r.out.stop_reason, "model_error");
    EXPECT_NE(r.out.message.find("Discard"), std::string::npos) << r.out.message;
    EXPECT_NE(r.out.message.find("could not complete"), std::string::npos) << r.out.message;
    EXPECT_NE(r.out.message.find("run.macro_step"), std::string::npos) << r.out.message;
    // Times as written in the system file (shortest round trip), not 0.10000000000000001.
    EXPECT_NE(r.out.message.find("over h = 0.1 s at t = 0 s"), std::string::npos) << r.out.message;
    // The first step (0 -> 0.1 s) was refused: only the initial row, and the run stopped at 0.
    EXPECT_EQ(r.out.stop_time_s, 0.0);
    ASSERT_EQ(r.rows.rows(), 1u);
    EXPECT_EQ(r.rows.at(0, "t"), 0.0);
  }
  // The same FMU completes when the steps fit its limit (the parameter is not the failure).
  run_result ok;
  run_system(one_fmu("stair_fmi2", "max_step = 0.1", "\"m.counter\"") +
                 "\n[run]\nduration = 2.0\nmacro_step = 0.1\n",
             ok);
  EXPECT_EQ(ok.out.status, cosim::run_status::completed) << ok.out.message;
  EXPECT_EQ(ok.rows.rows(), 21u);
}

TEST(FmuRun, FeedthroughWithASourceOnItsInput) {
  const cosim::test::temp_dir dir;
  // u(t) = 3 t, linearly interpolated by the csv source: exact at every row.
  const std::string csv = dir.file("u.csv", "t,u\n0,0\n1,3\n");
  for (const char* fmu : {"feedthrough_fmi2", "feedthrough_fmi3"}) {
    SCOPED_TRACE(fmu);
    run_result r;
    run_system(one_fmu(fmu, "gain = -1.5", "\"m.y\", \"m.gain\"") +
                   "\n[[sources]]\nto = \"m.u\"\nsignal = \"csv:" + csv + ":u\"\n",
               r);
    ASSERT_EQ(r.out.status, cosim::run_status::completed) << r.out.message;
    ASSERT_EQ(r.rows.rows(), 101u);  // 0 .. 1 s in steps of 0.01 s
    for (std::size_t i = 0; i < r.rows.rows(); ++i) {
      const double t = r.rows.at(i, "t");
      // Direct feedthrough: y at t from u at the same t, no lag.
      ASSERT_NEAR(r.rows.at(i, "m.y"), -1.5 * 3.0 * t, 1e-12) << "t = " << t;
      ASSERT_EQ(r.rows.at(i, "m.gain"), -1.5) << "t = " << t;  // a parameter, as set
    }
  }
}

// A damper FMU (feedthrough, y = -c u, d y / d u = -c from its directional derivative) on a
// free mass (m = 1 kg, v0 = 1 m/s), H = 10 ms, c H / m = 1.5. With the feedthrough correction
// the mass feels -c v_n over each step, the held force is integrated exactly, so
// v_n = (1 - c H / m)^n = (-0.5)^n; without it the damper acts one step late and diverges.
std::string damped_mass(const std::string& fmu, const std::string& extra) {
  return "[run]\nduration = 0.3\nmacro_step = 0.01\norder = [\"mass\", \"damp\"]\n\n"
         "[subsystems.mass]\ntype = \"oscillator.mass\"\n"
         "parameters = { v0 = 1.0, forces = [\"1\"], force_f0 = [-150.0] }\n\n"
         "[subsystems.damp]\nfmu = \"" +
         fmu_path(fmu) + "\"\nparameters = { gain = -150.0" + extra +
         " }\n\n"
         "[[connections]]\nfrom = \"mass.v\"\nto = \"damp.u\"\n\n"
         "[[connections]]\nfrom = \"damp.y\"\nto = \"mass.f1\"\n"
         "feedthrough_correction = true\n\n"
         "[output]\nrecord = [\"mass.v\"]\n";
}

TEST(FmuRun, FeedthroughCorrectionFromTheFmusDirectionalDerivative) {
  for (const char* fmu : {"feedthrough_fmi2", "feedthrough_fmi3"})
    for (const char* mode : {"offline", "threaded"}) {
      SCOPED_TRACE(std::string(fmu) + " " + mode);
      run_result r;
      run_system(damped_mass(fmu, ""), r, {std::string("run.mode=") + mode});
      ASSERT_EQ(r.out.status, cosim::run_status::completed) << r.out.message;
      ASSERT_EQ(r.rows.rows(), 31u);
      for (std::size_t n = 0; n < r.rows.rows(); ++n)
        ASSERT_NEAR(r.rows.at(n, "mass.v"), std::pow(-0.5, static_cast<double>(n)), 1e-12)
            << "row " << n;
    }
}

TEST(FmuRun, SummaryListsTheFeedthroughCorrectedInputs) {
  const cosim::test::temp_dir dir;
  cosim::config::run_request req;
  req.scenario = dir.file("system.toml", damped_mass("feedthrough_fmi3", ""));
  req.out_dir = dir / "out";
  req.quiet = true;
  ASSERT_EQ(cosim::config::run_scenario(req, nullptr).outcome.status, cosim::run_status::completed);
  std::ifstream in(dir / "out/summary.json");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("\"feedthrough_corrected_inputs\": [\n    \"mass.f1\"\n  ]"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("energy_corrected_inputs"), std::string::npos) << text;
}

TEST(FmuRun, ANonFiniteDirectionalDerivativeStopsTheRun) {
  // The FMU's derivative turns NaN from t = 0.05 s: an error naming the call, not a silent
  // run without the correction.
  for (const char* fmu : {"feedthrough_fmi2", "feedthrough_fmi3"}) {
    SCOPED_TRACE(fmu);
    run_result r;
    run_system(damped_mass(fmu, ", bad_partial_from = 0.05"), r);
    EXPECT_EQ(r.out.status, cosim::run_status::error);
    EXPECT_EQ(r.out.stop_reason, "model_error");
    EXPECT_NE(r.out.message.find("GetDirectionalDerivative gave a non-finite derivative"),
              std::string::npos)
        << r.out.message;
    ASSERT_GE(r.rows.rows(), 5u);  // the rows before the stop are kept
    EXPECT_LE(r.rows.rows(), 7u);
  }
}

// x = e^(-t) (linear_ode, FMI 2) -> a (feedthrough FMI 3, gain 2) -> b (feedthrough FMI 2,
// gain -0.5): b.y = -x at the same time only if a and b are evaluated after the ODE at each
// communication point; every hop evaluated before its input is fresh lags one macro step.
std::string chain(const std::string& run) {
  return "[run]\nduration = 1.0\nmacro_step = 0.01\n" + run + "\n[subsystems.ode]\nfmu = \"" +
         fmu_path("linear_ode_fmi2") + "\"\n\n[subsystems.a]\nfmu = \"" +
         fmu_path("feedthrough_fmi3") + "\"\n\n[subsystems.b]\nfmu = \"" +
         fmu_path("feedthrough_fmi2") +
         "\"\nparameters = { gain = -0.5 }\n\n"
         "[[connections]]\nfrom = \"ode.x\"\nto = \"a.u\"\n\n"
         "[[connections]]\nfrom = \"a.y\"\nto = \"b.u\"\n\n"
         "[output]\nrecord = [\"a.y\", \"b.y\"]\n";
}

/// a.y(t_n) = 2 x(t_{n - lag_a}), b.y(t_n) = -x(t_{n - lag_b}) from row `from` on.
void check_chain(const std::string& run, int lag_a, int lag_b) {
  SCOPED_TRACE(run);
  run_result r;
  run_system(chain(run), r);
  ASSERT_EQ(r.out.status, cosim::run_status::completed) << r.out.message;
  ASSERT_EQ(r.rows.rows(), 101u);
  const double h = 0.01;
  for (std::size_t i = 2; i < r.rows.rows(); ++i) {
    const double n = static_cast<double>(i);
    ASSERT_NEAR(r.rows.at(i, "a.y"), 2.0 * std::exp(-(n - lag_a) * h), 1e-12) << "row " << i;
    ASSERT_NEAR(r.rows.at(i, "b.y"), -std::exp(-(n - lag_b) * h), 1e-12) << "row " << i;
  }
}

TEST(FmuRun, FeedthroughChainsShowTheEvaluationOrder) {
  // Gauss-Seidel in data-flow order: no lag at all.
  check_chain("scheme = \"gauss-seidel\"\norder = [\"ode\", \"a\", \"b\"]\n", 0, 0);
  // Against the data flow: each hop sees its input of the previous communication point.
  check_chain("scheme = \"gauss-seidel\"\norder = [\"b\", \"a\", \"ode\"]\n", 1, 2);
  // Jacobi: every subsystem steps from the same exchange; ZOH makes each hop lag one step.
  check_chain("scheme = \"jacobi\"\n", 1, 2);
}

TEST(FmuRun, AnFmuInputNothingFeedsKeepsItsStartValue) {
  // feedthrough's u has start 0 in modelDescription.xml: y = gain * 0 throughout, and the
  // run is not refused for the unfed input.
  for (const char* fmu : {"feedthrough_fmi2", "feedthrough_fmi3"}) {
    SCOPED_TRACE(fmu);
    run_result r;
    run_system(one_fmu(fmu, "", "\"m.y\""), r);
    ASSERT_EQ(r.out.status, cosim::run_status::completed) << r.out.message;
    ASSERT_EQ(r.rows.rows(), 101u);
    for (std::size_t i = 0; i < r.rows.rows(); ++i) ASSERT_EQ(r.rows.at(i, "m.y"), 0.0);
  }
}

TEST(FmuRun, AlgebraicLoopOfFeedthroughFmusIsRefusedUnderGaussSeidel) {
  // Declared feedthrough both ways: Gauss-Seidel cannot order it (Jacobi needs no order).
  std::string text = chain("scheme = \"gauss-seidel\"\norder = [\"ode\", \"a\", \"b\"]\n");
  const std::string from_ode = "from = \"ode.x\"";
  text.replace(text.find(from_ode), from_ode.size(), "from = \"b.y\"");
  run_result r;
  try {
    run_system(text, r);
    ADD_FAILURE() << "an algebraic loop a.y -> b.u, b.y -> a.u was accepted";
  } catch (const cosim::error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("algebraic loop"), std::string::npos) << m;
    EXPECT_NE(m.find("a.y"), std::string::npos) << m;
    EXPECT_NE(m.find("b.y"), std::string::npos) << m;
    // Declared, not assumed; and no "state output" to add to a binary FMU.
    EXPECT_EQ(m.find("ASSUMED"), std::string::npos) << m;
    EXPECT_EQ(m.find("state output"), std::string::npos) << m;
  }
}

// Several FMUs and no [run] duration: the message says that no DefaultExperiment is taken and
// lists the FMUs' experiment lengths (stopTime - startTime, from their modelDescription.xml),
// instead of a bare "missing key 'run.duration'".
TEST(FmuRun, SeveralFmusWithoutADurationListTheirStopTimes) {
  std::string text = chain("");
  const std::string duration = "duration = 1.0\n";
  text.erase(text.find(duration), duration.size());
  run_result r;
  try {
    run_system(text, r);
    ADD_FAILURE() << "a system of three FMUs ran without run.duration";
  } catch (const cosim::error& e) {
    const std::string m = e.what();
    for (const char* part : {"missing key 'run.duration'", "DefaultExperiment", "ode: 5 s",
                             "a: 1 s", "b: 1 s", "system.toml"})
      EXPECT_NE(m.find(part), std::string::npos) << part << " not in: " << m;
  }
}

}  // namespace
