// The test FMUs of tests/fmus/ driven through their FMI 2.0 / 3.0 functions by hand (no
// importer): results against the closed forms of closed_forms.hpp, FMI 3 event mode (the
// ball stops at each impact, the bounce happens in event mode, an ignored event loses the
// bounce), termination (fmi2Discard + fmi2Terminated, terminateSimulation), output
// derivatives, and the FMUs' own checks (guid, parameter after initialisation, stop time).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <string>
#include <vector>

#include "closed_forms.hpp"
#include "cosim/fmi/fmi2.h"
#include "cosim/fmi/fmi3.h"
#include "fmu_binary.hpp"

namespace {

using cosim::test::fmu_binary;

// ---- FMI 2.0 ----------------------------------------------------------------------------

std::vector<std::string>& log2_messages() {
  static std::vector<std::string> m;
  return m;
}

void logger2(fmi2ComponentEnvironment, fmi2String, fmi2Status, fmi2String, fmi2String message,
             ...) {
  char buf[1024];
  va_list args;
  va_start(args, message);
  // FMI 2.0 Sect. 2.1.5: message is a printf format with the variable arguments (the FMU's).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
  std::vsnprintf(buf, sizeof buf, message != nullptr ? message : "", args);
#pragma GCC diagnostic pop
  va_end(args);
  log2_messages().emplace_back(buf);
}

const fmi2CallbackFunctions callbacks2{logger2, nullptr, nullptr, nullptr, nullptr};

struct fmu2 {
  fmu_binary bin;
  fmi2Component c = nullptr;
  fmi2SetupExperimentTYPE* setup = bin.fn<fmi2SetupExperimentTYPE>("fmi2SetupExperiment");
  fmi2EnterInitializationModeTYPE* enter_init =
      bin.fn<fmi2EnterInitializationModeTYPE>("fmi2EnterInitializationMode");
  fmi2ExitInitializationModeTYPE* exit_init =
      bin.fn<fmi2ExitInitializationModeTYPE>("fmi2ExitInitializationMode");
  fmi2DoStepTYPE* do_step = bin.fn<fmi2DoStepTYPE>("fmi2DoStep");
  fmi2GetRealTYPE* get_real = bin.fn<fmi2GetRealTYPE>("fmi2GetReal");
  fmi2SetRealTYPE* set_real = bin.fn<fmi2SetRealTYPE>("fmi2SetReal");
  fmi2GetIntegerTYPE* get_integer = bin.fn<fmi2GetIntegerTYPE>("fmi2GetInteger");
  fmi2GetRealStatusTYPE* real_status = bin.fn<fmi2GetRealStatusTYPE>("fmi2GetRealStatus");
  fmi2GetBooleanStatusTYPE* bool_status = bin.fn<fmi2GetBooleanStatusTYPE>("fmi2GetBooleanStatus");
  fmi2GetRealOutputDerivativesTYPE* output_derivatives =
      bin.fn<fmi2GetRealOutputDerivativesTYPE>("fmi2GetRealOutputDerivatives");

  fmu2(const std::string& name, const char* guid) : bin(name, 2) {
    c = bin.fn<fmi2InstantiateTYPE>("fmi2Instantiate")(name.c_str(), fmi2CoSimulation, guid, "",
                                                       &callbacks2, fmi2False, fmi2False);
    if (c == nullptr) throw std::runtime_error("fmi2Instantiate failed for " + name);
  }
  ~fmu2() {
    if (c != nullptr) bin.fn<fmi2FreeInstanceTYPE>("fmi2FreeInstance")(c);
  }
  fmu2(const fmu2&) = delete;
  fmu2& operator=(const fmu2&) = delete;

  void start(double stop_time) {
    ASSERT_EQ(setup(c, fmi2False, 0.0, 0.0, fmi2True, stop_time), fmi2OK);
    ASSERT_EQ(enter_init(c), fmi2OK);
    ASSERT_EQ(exit_init(c), fmi2OK);
  }
  double real(fmi2ValueReference vr) const {
    double v = NAN;
    EXPECT_EQ(get_real(c, &vr, 1, &v), fmi2OK);
    return v;
  }
  int integer(fmi2ValueReference vr) const {
    int v = -1;
    EXPECT_EQ(get_integer(c, &vr, 1, &v), fmi2OK);
    return v;
  }
  fmi2Status set(fmi2ValueReference vr, double v) { return set_real(c, &vr, 1, &v); }
};

// GUIDs of tests/fmus/*/fmi2/modelDescription.xml.
const char* const ball_guid = "{8c4e8d43-6f35-4b0e-9a61-2c1d2f0b7a01}";
const char* const ode_guid = "{2f9a1b7c-3d54-4e86-8b0f-5a7c9e1d4b02}";
const char* const stair_guid = "{6d3e0a5f-8b21-4c97-a4e2-9f0b1c7d3e03}";
const char* const feedthrough_guid = "{a7b3c9d1-0e4f-4a28-b6c5-1d8e2f9a0b04}";

// Value references (the modelDescription.xml files).
constexpr unsigned ball_h = 1, ball_v = 2, ball_bounces = 7;
constexpr unsigned ode_x = 1, ode_k = 3, ode_x0 = 4;
constexpr unsigned stair_counter = 1, stair_level = 2, stair_t_end = 3;
constexpr unsigned ft_u = 1, ft_y = 2, ft_gain = 3;

// Exact flight and exact impact times: the FMU's h, v at every grid point equal the closed
// form to rounding. 1e-12 m is ~10^4 ulp of the 1 m drop, far below any integration error
// (one explicit Euler step of 0.01 s would be off by g h^2 / 2 = 5e-4 m).
constexpr double ball_tol = 1e-12;

TEST(FmuProtocol, Fmi2BallMatchesTheClosedFormWithBouncesInsideDoStep) {
  fmu2 f("bouncing_ball_fmi2", ball_guid);
  f.start(3.0);
  const cosim::test::ball_params p;
  const double H = 0.01;
  int max_bounces = 0;
  for (int n = 0; n < 300; ++n) {
    ASSERT_EQ(f.do_step(f.c, n * H, H, fmi2True), fmi2OK);
    const double t = (n + 1) * H;
    const auto want = cosim::test::ball_at(p, t);
    ASSERT_NEAR(f.real(ball_h), want.h, ball_tol) << "t = " << t;
    ASSERT_NEAR(f.real(ball_v), want.v, ball_tol) << "t = " << t;
    ASSERT_EQ(f.integer(ball_bounces), want.bounces) << "t = " << t;
    max_bounces = want.bounces;
  }
  // The rebound speeds e^n w1 fall below v_min = 1 mm/s at n = ceil(ln(v_min / w1) / ln e)
  // = 24 (w1 = sqrt(2 g h0) = 4.43 m/s): the ball rests from the 24th impact on, before the
  // flights' sum converges (t = 2.56 s).
  const double w1 = std::sqrt(2.0 * p.g * p.h0);
  const int n_rest = static_cast<int>(std::ceil(std::log(p.v_min / w1) / std::log(p.e)));
  EXPECT_EQ(n_rest, 24);
  EXPECT_EQ(max_bounces, n_rest);
  EXPECT_EQ(f.real(ball_h), 0.0);
  EXPECT_EQ(f.real(ball_v), 0.0);
}

TEST(FmuProtocol, Fmi2LinearOdeIsExactAndGivesItsOutputDerivatives) {
  fmu2 f("linear_ode_fmi2", ode_guid);
  ASSERT_EQ(f.set(ode_k, 2.0), fmi2OK);
  ASSERT_EQ(f.set(ode_x0, 3.0), fmi2OK);
  f.start(5.0);
  EXPECT_EQ(f.real(ode_x), 3.0);
  for (int n = 0; n < 500; ++n) {
    ASSERT_EQ(f.do_step(f.c, n * 0.01, 0.01, fmi2True), fmi2OK);
    const double t = (n + 1) * 0.01;
    // Two roundings per step (exp, product): 500 steps stay below 1e-12 relative.
    ASSERT_NEAR(f.real(ode_x) / (3.0 * std::exp(-2.0 * t)), 1.0, 1e-12) << "t = " << t;
  }
  const double x = f.real(ode_x);
  const fmi2ValueReference vr[2] = {ode_x, ode_x};
  const fmi2Integer order[2] = {1, 2};
  double d[2] = {0.0, 0.0};
  ASSERT_EQ(f.output_derivatives(f.c, vr, 2, order, d), fmi2OK);
  EXPECT_DOUBLE_EQ(d[0], -2.0 * x);
  EXPECT_DOUBLE_EQ(d[1], 4.0 * x);
}

TEST(FmuProtocol, Fmi2StairCountsSecondsAndEndsWithDiscardAndTerminatedAtTEnd) {
  fmu2 f("stair_fmi2", stair_guid);
  f.start(10.0);
  int n = 0;
  fmi2Status s = fmi2OK;
  for (; n < 100; ++n) {
    s = f.do_step(f.c, n * 0.1, 0.1, fmi2True);
    if (s != fmi2OK) break;
    const double t = (n + 1) * 0.1;
    ASSERT_EQ(f.integer(stair_counter), static_cast<int>(std::floor(t + 1e-9))) << t;
    ASSERT_EQ(f.real(stair_level), std::floor(t + 1e-9)) << t;
  }
  // Steps up to T_end = 5.5 s complete; the one starting there is refused.
  EXPECT_EQ(s, fmi2Discard);
  EXPECT_EQ(n, 55);
  fmi2Boolean terminated = fmi2False;
  ASSERT_EQ(f.bool_status(f.c, fmi2Terminated, &terminated), fmi2OK);
  EXPECT_EQ(terminated, fmi2True);
  double last = 0.0;
  ASSERT_EQ(f.real_status(f.c, fmi2LastSuccessfulTime, &last), fmi2OK);
  EXPECT_NEAR(last, 5.5, 1e-12);
  EXPECT_EQ(f.integer(stair_counter), 5);
  // No step after the end.
  EXPECT_EQ(f.do_step(f.c, 5.5, 0.1, fmi2True), fmi2Error);
}

TEST(FmuProtocol, Fmi2StairCutsAStepThatPassesTEnd) {
  fmu2 f("stair_fmi2", stair_guid);
  ASSERT_EQ(f.set(stair_t_end, 2.25), fmi2OK);
  f.start(10.0);
  ASSERT_EQ(f.do_step(f.c, 0.0, 2.0, fmi2True), fmi2OK);
  EXPECT_EQ(f.integer(stair_counter), 2);
  EXPECT_EQ(f.do_step(f.c, 2.0, 0.5, fmi2True), fmi2Discard);
  double last = 0.0;
  ASSERT_EQ(f.real_status(f.c, fmi2LastSuccessfulTime, &last), fmi2OK);
  EXPECT_EQ(last, 2.25);
}

TEST(FmuProtocol, Fmi2FeedthroughAndTheFmusOwnChecks) {
  fmu2 f("feedthrough_fmi2", feedthrough_guid);
  ASSERT_EQ(f.set(ft_gain, -0.5), fmi2OK);
  f.start(1.0);
  ASSERT_EQ(f.set(ft_u, 3.0), fmi2OK);
  EXPECT_EQ(f.real(ft_y), -1.5);  // same time, no step: direct feedthrough
  ASSERT_EQ(f.do_step(f.c, 0.0, 0.5, fmi2True), fmi2OK);
  ASSERT_EQ(f.set(ft_u, 4.0), fmi2OK);
  EXPECT_EQ(f.real(ft_y), -2.0);
  // A fixed parameter after initialisation, a step past the stop time.
  log2_messages().clear();
  EXPECT_EQ(f.set(ft_gain, 1.0), fmi2Error);
  ASSERT_FALSE(log2_messages().empty());
  EXPECT_NE(log2_messages().back().find("fixed parameter"), std::string::npos);
  EXPECT_EQ(f.do_step(f.c, 0.5, 0.75, fmi2True), fmi2Error);
  EXPECT_NE(log2_messages().back().find("stop time"), std::string::npos);
  // A guid that is not the FMU's.
  fmu_binary bin("feedthrough_fmi2", 2);
  EXPECT_EQ(bin.fn<fmi2InstantiateTYPE>("fmi2Instantiate")("x", fmi2CoSimulation, ball_guid, "",
                                                           &callbacks2, fmi2False, fmi2False),
            nullptr);
  EXPECT_NE(log2_messages().back().find("guid"), std::string::npos);
}

// ---- FMI 3.0 ----------------------------------------------------------------------------

std::vector<std::string> log3;

void logger3(fmi3InstanceEnvironment, fmi3Status, fmi3String, fmi3String message) {
  log3.emplace_back(message);
}

struct fmu3 {
  fmu_binary bin;
  fmi3Instance c = nullptr;
  fmi3EnterInitializationModeTYPE* enter_init =
      bin.fn<fmi3EnterInitializationModeTYPE>("fmi3EnterInitializationMode");
  fmi3ExitInitializationModeTYPE* exit_init =
      bin.fn<fmi3ExitInitializationModeTYPE>("fmi3ExitInitializationMode");
  fmi3EnterEventModeTYPE* enter_event = bin.fn<fmi3EnterEventModeTYPE>("fmi3EnterEventMode");
  fmi3UpdateDiscreteStatesTYPE* update =
      bin.fn<fmi3UpdateDiscreteStatesTYPE>("fmi3UpdateDiscreteStates");
  fmi3EnterStepModeTYPE* enter_step = bin.fn<fmi3EnterStepModeTYPE>("fmi3EnterStepMode");
  fmi3DoStepTYPE* do_step = bin.fn<fmi3DoStepTYPE>("fmi3DoStep");
  fmi3GetFloat64TYPE* get_f64 = bin.fn<fmi3GetFloat64TYPE>("fmi3GetFloat64");
  fmi3SetFloat64TYPE* set_f64 = bin.fn<fmi3SetFloat64TYPE>("fmi3SetFloat64");
  fmi3GetInt32TYPE* get_i32 = bin.fn<fmi3GetInt32TYPE>("fmi3GetInt32");
  fmi3GetOutputDerivativesTYPE* output_derivatives =
      bin.fn<fmi3GetOutputDerivativesTYPE>("fmi3GetOutputDerivatives");
  bool event_mode = false;

  fmu3(const std::string& name, const char* token, bool event_mode_used, bool early_return)
      : bin(name, 3), event_mode(event_mode_used) {
    c = bin.fn<fmi3InstantiateCoSimulationTYPE>("fmi3InstantiateCoSimulation")(
        name.c_str(), token, "", false, false, event_mode_used, early_return, nullptr, 0, nullptr,
        logger3, nullptr);
    if (c == nullptr) throw std::runtime_error("fmi3InstantiateCoSimulation failed for " + name);
  }
  ~fmu3() {
    if (c != nullptr) bin.fn<fmi3FreeInstanceTYPE>("fmi3FreeInstance")(c);
  }
  fmu3(const fmu3&) = delete;
  fmu3& operator=(const fmu3&) = delete;

  // Event mode: the pending discrete changes, then back to step mode.
  void handle_events() {
    fmi3Boolean more = true, terminate = false, nominals = false, values = false, next = false;
    double next_time = 0.0;
    while (more)
      ASSERT_EQ(update(c, &more, &terminate, &nominals, &values, &next, &next_time), fmi3OK);
    ASSERT_EQ(enter_step(c), fmi3OK);
  }
  void start(double stop_time) {
    ASSERT_EQ(enter_init(c, false, 0.0, 0.0, true, stop_time), fmi3OK);
    ASSERT_EQ(exit_init(c), fmi3OK);
    if (event_mode) handle_events();  // FMI 3: event mode after initialisation
  }
  double real(fmi3ValueReference vr) const {
    double v = NAN;
    EXPECT_EQ(get_f64(c, &vr, 1, &v, 1), fmi3OK);
    return v;
  }
  int integer(fmi3ValueReference vr) const {
    fmi3Int32 v = -1;
    EXPECT_EQ(get_i32(c, &vr, 1, &v, 1), fmi3OK);
    return v;
  }
  fmi3Status set(fmi3ValueReference vr, double v) { return set_f64(c, &vr, 1, &v, 1); }
};

struct step3 {
  fmi3Status status = fmi3OK;
  fmi3Boolean event = false, terminate = false, early = false;
  double last = 0.0;
};

step3 do_step3(fmu3& f, double t, double h) {
  step3 s;
  s.status = f.do_step(f.c, t, h, true, &s.event, &s.terminate, &s.early, &s.last);
  return s;
}

TEST(FmuProtocol, Fmi3BallInEventModeStopsAtEveryImpactAndBouncesInEventMode) {
  fmu3 f("bouncing_ball_fmi3", ball_guid, true, true);
  f.start(3.0);
  const cosim::test::ball_params p;
  const std::vector<double> impacts = cosim::test::ball_impacts(p, 3.0);
  ASSERT_EQ(impacts.size(), 24u);  // the 24th rebound is below v_min (see the FMI 2 test)
  const double w1 = std::sqrt(2.0 * p.g * p.h0);
  std::vector<double> seen;
  const double H = 0.01;
  for (int n = 0; n < 300; ++n) {
    const double target = (n + 1) * H;
    double t = n * H;
    while (t < target) {
      const step3 s = do_step3(f, t, target - t);
      ASSERT_EQ(s.status, fmi3OK);
      ASSERT_FALSE(s.terminate);
      if (!s.event) {
        ASSERT_FALSE(s.early);
        ASSERT_EQ(s.last, target);
        break;
      }
      // Stopped at the impact: on the floor, still moving down; the bounce is not applied
      // before event mode.
      const std::size_t k = seen.size();
      ASSERT_LT(k, impacts.size());
      seen.push_back(s.last);
      EXPECT_TRUE(s.early);
      EXPECT_NEAR(s.last, impacts[k], ball_tol) << "impact " << k + 1;
      EXPECT_EQ(f.real(ball_h), 0.0);
      const double w = w1 * std::pow(p.e, static_cast<double>(k));  // impact speed
      EXPECT_NEAR(f.real(ball_v), -w, ball_tol);
      EXPECT_EQ(f.integer(ball_bounces), static_cast<int>(k));
      ASSERT_EQ(f.enter_event(f.c), fmi3OK);
      f.handle_events();
      // Rebound e w, whose apex is e^(2(k+1)) h0; resting once e w < v_min.
      const double u = f.real(ball_v);
      if (p.e * w < p.v_min) {
        EXPECT_EQ(u, 0.0);
      } else {
        EXPECT_NEAR(u, p.e * w, ball_tol);
        EXPECT_NEAR(u * u / (2.0 * p.g), cosim::test::ball_apex(p, static_cast<int>(k) + 1),
                    ball_tol);
      }
      EXPECT_EQ(f.integer(ball_bounces), static_cast<int>(k) + 1);
      t = s.last;
    }
    const auto want = cosim::test::ball_at(p, target);
    ASSERT_NEAR(f.real(ball_h), want.h, ball_tol) << "t = " << target;
    ASSERT_NEAR(f.real(ball_v), want.v, ball_tol) << "t = " << target;
  }
  EXPECT_EQ(seen.size(), impacts.size());
}

TEST(FmuProtocol, Fmi3BallLosesTheBounceWhenEventHandlingNeededIsIgnored) {
  fmu3 f("bouncing_ball_fmi3", ball_guid, true, true);
  f.start(3.0);
  double t = 0.0;
  int events = 0;
  while (t < 1.0 - 1e-12) {
    const step3 s = do_step3(f, t, 0.01);
    ASSERT_EQ(s.status, fmi3OK);
    events += s.event ? 1 : 0;
    t = s.last;  // goes on from the impact without event mode
  }
  EXPECT_EQ(events, 1);
  // Through the floor: below it at 1 s where the bouncing ball is 0.18 m up.
  EXPECT_LT(f.real(ball_h), -1.0);
  EXPECT_GT(cosim::test::ball_at({}, t).h, 0.1);
}

TEST(FmuProtocol, Fmi3BallWithoutEventModeBouncesInsideDoStep) {
  for (const bool event_mode : {false, true}) {
    // Event mode without early return: the step cannot stop at the impact, so the FMU
    // handles it inside.
    SCOPED_TRACE(event_mode ? "event mode, no early return" : "no event mode");
    fmu3 f("bouncing_ball_fmi3", ball_guid, event_mode, false);
    f.start(3.0);
    const cosim::test::ball_params p;
    for (int n = 0; n < 300; ++n) {
      const step3 s = do_step3(f, n * 0.01, 0.01);
      ASSERT_EQ(s.status, fmi3OK);
      ASSERT_FALSE(s.event);
      const auto want = cosim::test::ball_at(p, (n + 1) * 0.01);
      ASSERT_NEAR(f.real(ball_h), want.h, ball_tol);
      ASSERT_EQ(f.integer(ball_bounces), want.bounces);
    }
  }
}

TEST(FmuProtocol, Fmi3LinearOdeIsExactAndGivesItsOutputDerivatives) {
  fmu3 f("linear_ode_fmi3", ode_guid, false, false);
  f.start(5.0);
  for (int n = 0; n < 500; ++n) {
    ASSERT_EQ(do_step3(f, n * 0.01, 0.01).status, fmi3OK);
    ASSERT_NEAR(f.real(ode_x) / std::exp(-(n + 1) * 0.01), 1.0, 1e-12);
  }
  const double x = f.real(ode_x);
  const fmi3ValueReference vr[2] = {ode_x, ode_x};
  const fmi3Int32 order[2] = {1, 2};
  double d[2] = {0.0, 0.0};
  ASSERT_EQ(f.output_derivatives(f.c, vr, 2, order, d, 2), fmi3OK);
  EXPECT_DOUBLE_EQ(d[0], -x);
  EXPECT_DOUBLE_EQ(d[1], x);
}

TEST(FmuProtocol, Fmi3StairSetsTerminateSimulationAtTEnd) {
  fmu3 f("stair_fmi3", stair_guid, false, false);
  f.start(10.0);
  int n = 0;
  step3 s;
  for (; n < 100; ++n) {
    s = do_step3(f, n * 0.1, 0.1);
    if (s.status != fmi3OK || s.terminate) break;
    ASSERT_EQ(f.integer(stair_counter), static_cast<int>(std::floor((n + 1) * 0.1 + 1e-9)));
  }
  EXPECT_EQ(n, 55);
  EXPECT_TRUE(s.terminate);
  EXPECT_EQ(s.status, fmi3Discard);  // the step at 5.5 s did not get anywhere
  EXPECT_NEAR(s.last, 5.5, 1e-12);
  EXPECT_EQ(f.integer(stair_counter), 5);
}

TEST(FmuProtocol, Fmi3FeedthroughAndTheFmusOwnChecks) {
  fmu3 f("feedthrough_fmi3", feedthrough_guid, false, false);
  f.start(1.0);
  ASSERT_EQ(f.set(ft_u, 3.0), fmi3OK);
  EXPECT_EQ(f.real(ft_y), 6.0);  // default gain 2
  log3.clear();
  EXPECT_EQ(f.set(ft_gain, 1.0), fmi3Error);
  ASSERT_FALSE(log3.empty());
  EXPECT_NE(log3.back().find("fixed parameter"), std::string::npos);
  const fmi3ValueReference vr = ft_y;
  fmi3Int32 wrong_type = 0;
  EXPECT_EQ(f.get_i32(f.c, &vr, 1, &wrong_type, 1), fmi3Error);
  EXPECT_EQ(do_step3(f, 0.0, 1.5).status, fmi3Error);  // past the stop time
  EXPECT_NE(log3.back().find("stop time"), std::string::npos);
  fmu_binary bin("feedthrough_fmi3", 3);
  EXPECT_EQ(
      bin.fn<fmi3InstantiateCoSimulationTYPE>("fmi3InstantiateCoSimulation")(
          "x", ode_guid, "", false, false, false, false, nullptr, 0, nullptr, logger3, nullptr),
      nullptr);
  EXPECT_NE(log3.back().find("instantiationToken"), std::string::npos);
}

TEST(FmuProtocol, Fmi3EventModeProtocolIsEnforced) {
  fmu3 f("bouncing_ball_fmi3", ball_guid, true, true);
  ASSERT_EQ(f.enter_init(f.c, false, 0.0, 0.0, true, 3.0), fmi3OK);
  ASSERT_EQ(f.exit_init(f.c), fmi3OK);
  // In event mode after initialisation: no step before fmi3EnterStepMode.
  log3.clear();
  EXPECT_EQ(do_step3(f, 0.0, 0.01).status, fmi3Error);
  EXPECT_NE(log3.back().find("event mode"), std::string::npos);
  f.handle_events();
  EXPECT_EQ(do_step3(f, 0.0, 0.01).status, fmi3OK);
}

}  // namespace
