// What an FMU receives and says (tests/fmus/echo: y = the input it received over its last
// step, no direct feedthrough; it fails on purpose from fail_at on, logging why only when
// logging is on): the recorded input column is the value set into the FMU; an extrapolation
// it could not receive (stepping once per macro step in Jacobi) is refused; the FMU's own
// reason for a failed doStep is quoted in the stop message, and log_categories narrows it.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "cosim/rt_config/run.hpp"
#include "cosim/runtime/error.hpp"
#include "fmu_binary.hpp"
#include "row_table.hpp"
#include "temp_dir.hpp"

namespace {

using cosim::test::fmu_path;

struct run_result {
  cosim::run_outcome out;
  cosim::test::row_table rows;
};

void run_system(const std::string& text, run_result& r, const std::vector<std::string>& sets) {
  const cosim::test::temp_dir dir;
  cosim::config::run_request req;
  req.scenario = dir.file("system.toml", text);
  req.sets = sets;
  req.out_dir = dir / "out";
  req.quiet = true;
  req.also = &r.rows;
  r.out = cosim::config::run_scenario(req, nullptr).outcome;
}

constexpr double k = 3.0;  // 1/s, linear_ode: x = e^(-k t)
constexpr double H = 0.01;

// x = e^(-k t) (linear_ode, which gives x' too) -> echo.u, H = 10 ms, Jacobi.
std::string ode_to_echo(const std::string& extra = "") {
  return "[run]\nduration = 0.1\nmacro_step = 0.01\n\n[subsystems.ode]\nfmu = \"" +
         fmu_path("linear_ode_fmi2") + "\"\nparameters = { k = 3.0 }\n\n[subsystems.e]\nfmu = \"" +
         fmu_path("echo_fmi2") + "\"\n" + extra +
         "\n[[connections]]\nfrom = \"ode.x\"\nto = \"e.u\"\n\n[output]\nrecord = [\"ode.x\", "
         "\"e.u\", \"e.y\"]\n";
}

std::string error_of(const std::string& text, const std::vector<std::string>& sets) {
  try {
    run_result r;
    run_system(text, r, sets);
  } catch (const cosim::error& e) {
    return e.what();
  }
  return "";
}

TEST(FmuEcho, ExtrapolationAnFmuSteppingOncePerMacroStepWouldNotReceiveIsRefused) {
  // At each step start the extrapolation of the samples up to then is the newest sample: the
  // FMU would get the zero-order hold while the key says otherwise.
  const std::string e = error_of(ode_to_echo(), {"coupling.extrapolation=1"});
  EXPECT_NE(e.find("coupling.extrapolation = 1 for e.u has no effect"), std::string::npos) << e;
  EXPECT_NE(e.find("subsystems.e.step smaller than run.macro_step"), std::string::npos) << e;
  // The same through the connection's own key, named as such.
  const std::string c = error_of(ode_to_echo(), {"connections[0].extrapolation=2"});
  EXPECT_NE(c.find("connections[0].extrapolation = 2 for e.u"), std::string::npos) << c;
  // Gauss-Seidel with the echo after its producer interpolates to the step start: accepted.
  run_result gs;
  run_system(ode_to_echo(), gs,
             {"coupling.extrapolation=1", "run.scheme=gauss-seidel", "run.order=[\"ode\", \"e\"]"});
  EXPECT_EQ(gs.out.status, cosim::run_status::completed) << gs.out.message;
}

TEST(FmuEcho, RecordedInputIsWhatTheFmuReceived) {
  // Zero-order hold: over the step from t_n the echo holds x_n, and shows it at t_{n+1}.
  {
    run_result r;
    run_system(ode_to_echo(), r, {});
    ASSERT_EQ(r.out.status, cosim::run_status::completed) << r.out.message;
    ASSERT_EQ(r.rows.rows(), 11u);
    for (std::size_t n = 0; n + 1 < r.rows.rows(); ++n) {
      const double xn = std::exp(-k * H * static_cast<double>(n));
      EXPECT_NEAR(r.rows.at(n + 1, "e.u"), xn, 1e-14) << "row " << n + 1;
      EXPECT_EQ(r.rows.at(n + 1, "e.u"), r.rows.at(n + 1, "e.y")) << "row " << n + 1;
    }
  }
  // Four substeps of 2.5 ms with order 1 from the ODE's own derivative x' = -k x: the last
  // substep, from t_n + 3h, gets x_n (1 - k 3h); the row at t_{n+1} shows that, not the
  // extrapolation to t_{n+1} it never received (x_n (1 - k H)).
  for (const char* mode : {"offline", "threaded"}) {
    SCOPED_TRACE(mode);
    run_result r;
    run_system(
        ode_to_echo(), r,
        {"coupling.extrapolation=1", "subsystems.e.step=0.0025", std::string("run.mode=") + mode});
    ASSERT_EQ(r.out.status, cosim::run_status::completed) << r.out.message;
    ASSERT_EQ(r.rows.rows(), 11u);
    for (std::size_t n = 0; n + 1 < r.rows.rows(); ++n) {
      const double xn = std::exp(-k * H * static_cast<double>(n));
      EXPECT_NEAR(r.rows.at(n + 1, "e.u"), xn * (1.0 - k * 0.0075), 1e-14) << "row " << n + 1;
      EXPECT_EQ(r.rows.at(n + 1, "e.u"), r.rows.at(n + 1, "e.y")) << "row " << n + 1;
    }
  }
}

TEST(FmuEcho, TheFmusReasonForAFailedStepIsInTheStopMessage) {
  // The echo logs only with logging on: cosim turns it on, and quotes the error it logged.
  const std::string fail = "parameters = { fail_at = 0.05 }\n";
  run_result r;
  run_system(ode_to_echo(fail), r, {});
  EXPECT_EQ(r.out.status, cosim::run_status::error);
  EXPECT_EQ(r.out.stop_reason, "model_error");
  EXPECT_NE(r.out.message.find("fmi2DoStep at t = 0.05 s returned fmi2Error; the FMU logged: "),
            std::string::npos)
      << r.out.message;
  EXPECT_NE(r.out.message.find("echo refuses to step from t = 0.05 on (fail_at)"),
            std::string::npos)
      << r.out.message;
  // Asked for its error category only: the same reason.
  run_result only_errors;
  run_system(ode_to_echo(fail + "log_categories = [\"logStatusError\"]\n"), only_errors, {});
  EXPECT_NE(only_errors.out.message.find("echo refuses to step"), std::string::npos)
      << only_errors.out.message;
  // Logging off ([]) or another category: the FMU says nothing, the failure is still named.
  for (const char* cats : {"[]", "[\"logEvents\"]"}) {
    SCOPED_TRACE(cats);
    run_result quiet;
    run_system(ode_to_echo(fail + "log_categories = " + cats + "\n"), quiet, {});
    EXPECT_EQ(quiet.out.stop_reason, "model_error");
    EXPECT_NE(quiet.out.message.find("fmi2DoStep at t = 0.05 s returned fmi2Error"),
              std::string::npos)
        << quiet.out.message;
    EXPECT_EQ(quiet.out.message.find("echo refuses"), std::string::npos) << quiet.out.message;
  }
  // Only FMUs have log categories.
  const std::string e = error_of(
      "[run]\nduration = 0.1\nmacro_step = 0.01\n[subsystems.m]\ntype = \"oscillator.mass\"\n"
      "log_categories = [\"x\"]\n",
      {});
  EXPECT_NE(e.find("subsystems.m.log_categories"), std::string::npos) << e;
  EXPECT_NE(e.find("only an FMU subsystem has log categories"), std::string::npos) << e;
}

}  // namespace
