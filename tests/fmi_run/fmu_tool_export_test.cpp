// FMUs that behave as some modelling tools export them (tests/fmus/tool_lag): parameters
// reset in fmi2SetupExperiment, a binary default that differs from the declared start, a
// set value changed in initialisation, no step past the stop time, String parameters, and
// outputs without declared dependencies coupled both ways. Expected values come from the
// closed form of x' = -k x + u and from a fixed-step loop over the FMI functions written here.
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <cmath>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cosim/fmi/fmi2.h"
#include "cosim/fmi/fmu_file.hpp"
#include "cosim/fmi/fmu_subsystem.hpp"
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

void run_system(const std::string& text, run_result& r) {
  const cosim::test::temp_dir dir;
  cosim::config::run_request req;
  req.scenario = dir.file("system.toml", text);
  req.out_dir = dir / "out";
  req.quiet = true;
  req.also = &r.rows;
  r.out = cosim::config::run_scenario(req, nullptr).outcome;
}

// The default logger's messages while it lives ("<level> <message>" lines).
struct captured_log {
  std::ostringstream text;
  std::shared_ptr<spdlog::logger> before = spdlog::default_logger();
  captured_log() {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(text);
    sink->set_pattern("%l %v");
    auto logger = std::make_shared<spdlog::logger>("captured", sink);
    logger->set_level(spdlog::level::trace);
    spdlog::set_default_logger(logger);
  }
  ~captured_log() { spdlog::set_default_logger(before); }
  captured_log(const captured_log&) = delete;
  captured_log& operator=(const captured_log&) = delete;
  std::string str() {
    spdlog::default_logger()->flush();
    return text.str();
  }
};

std::string lag_system(const std::string& run, const std::string& params,
                       const std::string& extra = "") {
  return "[run]\n" + run + "\n[subsystems.m]\nfmu = \"" + fmu_path("tool_lag_fmi2") + "\"\n" +
         extra + (params.empty() ? "" : "parameters = { " + params + " }\n") +
         "\n[output]\nrecord = [\"m.y\"]\n";
}

TEST(ToolFmu, ParametersResetInSetupExperimentStillReachTheFmu) {
  // The FMU resets k and x0 in fmi2SetupExperiment; set after it, they hold:
  // y = x0 e^(-k t) with u = 0 (its start), not the defaults' e^(-t). min_step is not set:
  // the binary keeps its own 1e-8 (its declared start 0 would fail initialisation).
  run_result r;
  run_system(lag_system("duration = 1.0\nmacro_step = 0.01\n", "k = 3.0, x0 = 2.0"), r);
  ASSERT_EQ(r.out.status, cosim::run_status::completed) << r.out.message;
  ASSERT_EQ(r.rows.rows(), 101u);
  for (std::size_t i = 0; i < r.rows.rows(); ++i) {
    const double t = r.rows.at(i, "t");
    ASSERT_NEAR(r.rows.at(i, "m.y"), 2.0 * std::exp(-3.0 * t), 1e-12) << "t = " << t;
  }
}

TEST(ToolFmu, TheDeclaredStartOfAParameterNobodySetIsNotWritten) {
  // min_step declares start 0; written into the FMU, initialisation fails. Set explicitly
  // to 0 by the user, it is written, and the FMU's own message says why it fails.
  run_result r;
  run_system(lag_system("duration = 0.1\nmacro_step = 0.01\n", ""), r);
  EXPECT_EQ(r.out.status, cosim::run_status::completed) << r.out.message;
  try {
    run_system(lag_system("duration = 0.1\nmacro_step = 0.01\n", "min_step = 0.0"), r);
    ADD_FAILURE() << "min_step = 0 was not written into the FMU";
  } catch (const cosim::error& e) {
    EXPECT_NE(std::string(e.what()).find("the solver would never advance"), std::string::npos)
        << e.what();
  }
}

TEST(ToolFmu, AStringParameterReachesTheFmu) {
  // solver = "euler": x_{n+1} = x_n (1 - k h) with u = 0 and the FMU's step h = 1e-3 s (its
  // DefaultExperiment), ten per row; the exact solver would give e^(-k t).
  run_result r;
  run_system(lag_system("duration = 1.0\nmacro_step = 0.01\n", "k = 2.0, solver = \"euler\""), r);
  ASSERT_EQ(r.out.status, cosim::run_status::completed) << r.out.message;
  ASSERT_EQ(r.rows.rows(), 101u);
  for (std::size_t i = 0; i < r.rows.rows(); ++i)
    ASSERT_NEAR(r.rows.at(i, "m.y"), std::pow(1.0 - 2.0 * 0.001, 10.0 * static_cast<double>(i)),
                1e-12)
        << "row " << i;
  // Differs from the exact solver by far more than the tolerance (0.998^1000 vs e^-2).
  EXPECT_GT(std::abs(r.rows.at(100, "m.y") - std::exp(-2.0)), 1e-4);
}

TEST(ToolFmu, AValueTheFmuChangesInInitialisationWarnsOrIsRefused) {
  // The FMU limits k to 100: k = 500 becomes 100, which the run then uses.
  {
    captured_log log;
    run_result r;
    run_system(lag_system("duration = 0.01\nmacro_step = 0.001\n", "k = 500.0"), r);
    ASSERT_EQ(r.out.status, cosim::run_status::completed) << r.out.message;
    const std::string text = log.str();
    EXPECT_NE(text.find("warning"), std::string::npos) << text;
    EXPECT_NE(text.find("\"k\" set 500, now 100"), std::string::npos) << text;
    EXPECT_NE(text.find("subsystems.m.changed_parameters = \"refuse\""), std::string::npos) << text;
    EXPECT_NEAR(r.rows.at(10, "m.y"), std::exp(-100.0 * 0.01), 1e-12);
  }
  {
    // A value it keeps: no warning.
    captured_log log;
    run_result r;
    run_system(lag_system("duration = 0.01\nmacro_step = 0.001\n", "k = 50.0"), r);
    EXPECT_EQ(log.str().find("changed parameters"), std::string::npos) << log.str();
  }
  run_result r;
  try {
    run_system(lag_system("duration = 0.01\nmacro_step = 0.001\n", "k = 500.0",
                          "changed_parameters = \"refuse\"\n"),
               r);
    ADD_FAILURE() << "the changed k was accepted";
  } catch (const cosim::error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("\"k\" set 500, now 100"), std::string::npos) << m;
    EXPECT_NE(m.find("changed_parameters"), std::string::npos) << m;
  }
}

TEST(ToolFmu, AnFmuThatRefusesToStepPastItsStopTimeCompletes) {
  // It fails a doStep ending after the stop time by even one ulp ("Exceeded model finish
  // time"); these durations ended 1-2 ulp late when times were ticks times 1e-9.
  for (const auto& [D, H] : {std::pair{2.0, 1e-4}, std::pair{0.01, 1e-3}, std::pair{3.0, 1e-4}}) {
    SCOPED_TRACE(D);
    run_result r;
    run_system(
        lag_system("duration = " + std::to_string(D) + "\nmacro_step = " + std::to_string(H) + "\n",
                   "k = 1.0"),
        r);
    ASSERT_EQ(r.out.status, cosim::run_status::completed) << r.out.message;
    EXPECT_EQ(r.rows.at(r.rows.rows() - 1, "t"), D);
    EXPECT_NEAR(r.rows.at(r.rows.rows() - 1, "m.y"), std::exp(-D), 1e-12);
  }
}

// Two tool_lag FMUs, a.y -> b.u and b.y -> a.u; neither declares the dependencies of y.
std::string coupled(const std::string& run, const std::string& extra_a = "",
                    const std::string& extra_b = "") {
  return "[run]\nduration = 1.0\nmacro_step = 0.001\n" + run + "\n[subsystems.a]\nfmu = \"" +
         fmu_path("tool_lag_fmi2") + "\"\n" + extra_a +
         "parameters = { k = 2.0, x0 = 1.0 }\n\n[subsystems.b]\nfmu = \"" +
         fmu_path("tool_lag_fmi2") + "\"\n" + extra_b +
         "parameters = { k = 0.5, x0 = -1.0 }\n\n"
         "[[connections]]\nfrom = \"a.y\"\nto = \"b.u\"\n\n"
         "[[connections]]\nfrom = \"b.y\"\nto = \"a.u\"\n\n"
         "[output]\nrecord = [\"a.y\", \"b.y\"]\n";
}

void ignore_log(fmi2ComponentEnvironment /*env*/, fmi2String /*instance*/, fmi2Status /*status*/,
                fmi2String /*category*/, fmi2String /*message*/, ...) {}

// Jacobi with zero-order hold over the FMI 2.0 functions, without the importer: both FMUs
// get the other's output of the last communication point, then step.
std::vector<std::pair<double, double>> reference_jacobi(int steps, double H) {
  const cosim::test::fmu_binary bin("tool_lag_fmi2", 2);
  auto instantiate = bin.fn<fmi2InstantiateTYPE>("fmi2Instantiate");
  auto setup = bin.fn<fmi2SetupExperimentTYPE>("fmi2SetupExperiment");
  auto enter = bin.fn<fmi2EnterInitializationModeTYPE>("fmi2EnterInitializationMode");
  auto exit_init = bin.fn<fmi2ExitInitializationModeTYPE>("fmi2ExitInitializationMode");
  auto set_real = bin.fn<fmi2SetRealTYPE>("fmi2SetReal");
  auto get_real = bin.fn<fmi2GetRealTYPE>("fmi2GetReal");
  auto do_step = bin.fn<fmi2DoStepTYPE>("fmi2DoStep");
  auto terminate = bin.fn<fmi2TerminateTYPE>("fmi2Terminate");
  auto free_instance = bin.fn<fmi2FreeInstanceTYPE>("fmi2FreeInstance");
  const fmi2CallbackFunctions cb{&ignore_log, nullptr, nullptr, nullptr, nullptr};
  const fmi2ValueReference u = 1, y = 2, k = 3, x0 = 4;
  const std::string guid = "{6c1e0b3a-94d2-4f57-a8e1-3b7d5c2f9e10}";
  fmi2Component c[2];
  const double params[2][2] = {{2.0, 1.0}, {0.5, -1.0}};
  const double stop = steps * H;
  for (int j = 0; j < 2; ++j) {
    c[j] = instantiate(j == 0 ? "a" : "b", fmi2CoSimulation, guid.c_str(), "", &cb, fmi2False,
                       fmi2False);
    EXPECT_NE(c[j], nullptr);
    EXPECT_EQ(setup(c[j], fmi2False, 0.0, 0.0, fmi2True, stop), fmi2OK);
    EXPECT_EQ(set_real(c[j], &k, 1, &params[j][0]), fmi2OK);
    EXPECT_EQ(set_real(c[j], &x0, 1, &params[j][1]), fmi2OK);
    EXPECT_EQ(enter(c[j]), fmi2OK);
    EXPECT_EQ(exit_init(c[j]), fmi2OK);
  }
  std::vector<std::pair<double, double>> out;
  double ya = 0.0, yb = 0.0;
  EXPECT_EQ(get_real(c[0], &y, 1, &ya), fmi2OK);
  EXPECT_EQ(get_real(c[1], &y, 1, &yb), fmi2OK);
  out.emplace_back(ya, yb);
  for (int n = 0; n < steps; ++n) {
    const double t = n * H, t_next = (n + 1) * H;
    EXPECT_EQ(set_real(c[0], &u, 1, &yb), fmi2OK);
    EXPECT_EQ(set_real(c[1], &u, 1, &ya), fmi2OK);
    const double h = n + 1 == steps ? stop - t : t_next - t;
    EXPECT_EQ(do_step(c[0], t, h, fmi2True), fmi2OK);
    EXPECT_EQ(do_step(c[1], t, h, fmi2True), fmi2OK);
    EXPECT_EQ(get_real(c[0], &y, 1, &ya), fmi2OK);
    EXPECT_EQ(get_real(c[1], &y, 1, &yb), fmi2OK);
    out.emplace_back(ya, yb);
  }
  for (fmi2Component i : c) {
    (void)terminate(i);
    free_instance(i);
  }
  return out;
}

TEST(ToolFmu, UndeclaredDependenciesCoupledBothWaysRunUnderJacobi) {
  run_result r;
  run_system(coupled("scheme = \"jacobi\"\n"), r);
  ASSERT_EQ(r.out.status, cosim::run_status::completed) << r.out.message;
  const auto want = reference_jacobi(1000, 0.001);
  ASSERT_EQ(r.rows.rows(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    ASSERT_NEAR(r.rows.at(i, "a.y"), want[i].first, 1e-12) << "row " << i;
    ASSERT_NEAR(r.rows.at(i, "b.y"), want[i].second, 1e-12) << "row " << i;
  }
  // The coupling acts: a alone would decay to e^-2 = 0.135 (b pulls it below zero).
  EXPECT_GT(std::abs(r.rows.at(1000, "a.y") - std::exp(-2.0)), 0.05);
}

TEST(ToolFmu, UndeclaredDependenciesAreRefusedUnderGaussSeidelNamingTheAssumption) {
  run_result r;
  try {
    run_system(coupled("scheme = \"gauss-seidel\"\norder = [\"a\", \"b\"]\n"), r);
    ADD_FAILURE() << "a loop of assumed feedthrough was accepted under Gauss-Seidel";
  } catch (const cosim::error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("algebraic loop"), std::string::npos) << m;
    EXPECT_NE(m.find("ASSUMED, not declared"), std::string::npos) << m;
    EXPECT_NE(m.find("subsystems.a.no_feedthrough = true"), std::string::npos) << m;
    EXPECT_EQ(m.find("state output"), std::string::npos) << m;
  }
  // Declared without feedthrough (one side breaks the loop), it runs; the probe agrees.
  captured_log log;
  run_system(coupled("scheme = \"gauss-seidel\"\norder = [\"a\", \"b\"]\n",
                     "no_feedthrough = true\nprobe_feedthrough = true\n"),
             r);
  ASSERT_EQ(r.out.status, cosim::run_status::completed) << r.out.message;
  const std::string text = log.str();
  EXPECT_NE(text.find("feedthrough probe"), std::string::npos) << text;
  EXPECT_NE(text.find("u + 0.01: no output moved"), std::string::npos) << text;
  EXPECT_EQ(text.find("contradicts"), std::string::npos) << text;
}

TEST(ToolFmu, TheProbeFindsARealFeedthroughAndRestoresTheInput) {
  // y = gain u with gain 2, its dependencies left out of the description.
  const auto loaded =
      cosim::fmi::load_fmu(cosim::fmi::read_fmu(fmu_path("feedthrough_undeclared_fmi2")));
  cosim::fmi::fmu_subsystem s("ft", loaded, {});
  EXPECT_TRUE(s.feedthrough_assumed(0));
  s.start_experiment(1.0);
  const cosim::fmi::fmu_subsystem::probe_result r = s.probe_feedthrough();
  EXPECT_TRUE(r.moved) << r.text;
  EXPECT_NE(r.text.find("u + 0.01: moved y by 0.02"), std::string::npos) << r.text;
  // Declared otherwise by the user, the assumption is gone.
  cosim::fmi::fmu_subsystem d("ft2", loaded, {});
  d.declare_no_feedthrough();
  EXPECT_FALSE(d.feedthrough_assumed(0));
  EXPECT_FALSE(d.output_depends_on(0, 0));
}

}  // namespace
