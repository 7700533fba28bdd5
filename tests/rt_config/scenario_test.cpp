// Scenario reading: every bad input is a cosim::error naming file:LINE:COL and the key;
// --set overrides are TOML values; defaults follow 003 Sect. 5 (h_M = H,
// h_H = min(H, 0.2 ms)).
#include "cosim/rt_config/scenario.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "cosim/runtime/error.hpp"

#include "temp_dir.hpp"

namespace {

using cosim::test::temp_dir;

namespace config = cosim::config;

// Line numbers below refer to this text (1-based).
const std::vector<std::string> base_lines{
    "[model]",                         // 1
    "name = \"crane\"",                // 2
    "coupling = \"f-s\"",              // 3
    "manoeuvre = \"M1\"",              // 4
    "",                                // 5
    "[run]",                           // 6
    "duration = 10.0",                 // 7
    "macro_step = 1e-3",               // 8
    "scheme = \"jacobi\"",             // 9
    "",                                // 10
    "[hydraulics]",                    // 11
    "integrator = \"forward-euler\"",  // 12
};

/// The base text with line `line` (1-based) replaced (or removed when `with` is null).
std::string text_with(std::size_t line, const char* with) {
  std::string s;
  for (std::size_t i = 0; i < base_lines.size(); ++i) {
    if (i + 1 == line) {
      if (with != nullptr) s += std::string(with) + "\n";
    } else {
      s += base_lines[i] + "\n";
    }
  }
  return s;
}
std::string base_text() {
  return text_with(0, nullptr);
}
std::string base_plus(const std::string& extra) {
  return base_text() + extra;
}

/// Expects parse_scenario to throw a cosim::error whose message contains each needle.
std::string expect_error(const std::string& text, const std::vector<std::string>& sets,
                         const std::vector<std::string>& needles) {
  try {
    (void)config::parse_scenario(text, "x.toml", sets);
  } catch (const cosim::error& e) {
    std::string msg = e.what();
    for (const auto& n : needles)
      EXPECT_NE(msg.find(n), std::string::npos) << "missing '" << n << "' in: " << msg;
    return msg;
  }
  ADD_FAILURE() << "no error for:\n" << text;
  return {};
}

/// "x.toml:LINE:COL" with the given line and any column.
void expect_location(const std::string& msg, int line) {
  const std::regex re("x\\.toml:" + std::to_string(line) + ":[0-9]+");
  EXPECT_TRUE(std::regex_search(msg, re)) << "expected x.toml:" << line << ":COL in: " << msg;
}

TEST(Scenario, BaseTextIsValid) {
  const config::scenario sc = config::parse_scenario(base_text(), "x.toml");
  EXPECT_EQ(sc.file, "x.toml");
  EXPECT_EQ(sc.model, "crane");
  EXPECT_EQ(sc.option("coupling"), "f-s");
  EXPECT_EQ(sc.option("manoeuvre"), "M1");
  EXPECT_EQ(sc.run.duration, 10.0);
  EXPECT_EQ(sc.run.macro_step, 1e-3);
  EXPECT_EQ(sc.run.scheme, cosim::scheme_kind::jacobi);
  EXPECT_EQ(sc.run.mode, config::run_mode::offline);
  EXPECT_EQ(sc.run.output_interval, 0.0);
  EXPECT_EQ(sc.coupling.extrapolation, 0);
  const std::vector<std::string> order{"multibody", "hydraulics"};
  EXPECT_EQ(sc.run.order, order);
  EXPECT_EQ(sc.sub("multibody").integrator, "semi-implicit-euler");
  EXPECT_EQ(sc.sub("hydraulics").integrator, "forward-euler");
}

TEST(Scenario, SyntaxErrorNamesFileAndLine) {
  const std::string msg = expect_error(text_with(6, "[run"), {}, {"syntax error"});
  expect_location(msg, 6);
  const std::string msg2 = expect_error(text_with(7, "duration = "), {}, {"syntax error"});
  expect_location(msg2, 7);
}

TEST(Scenario, UnknownKeysAreRejected) {
  expect_location(
      expect_error(text_with(5, "colour = \"red\""), {}, {"unknown key", "model.colour"}), 5);
  expect_location(
      expect_error(text_with(10, "durationn = 10.0"), {}, {"unknown key", "run.durationn"}), 10);
  expect_location(expect_error(base_plus("[coupling]\nextrapolaton = 1\n"), {},
                               {"unknown key", "coupling.extrapolaton"}),
                  14);
  expect_location(expect_error(base_plus("[bogus]\nx = 1\n"), {}, {"unknown key", "bogus.x"}), 14);
}

// A typo within two edits of a documented key gets the key it probably meant; a key far from
// every documented one gets no guess.
TEST(Scenario, AnUnknownKeyNearADocumentedOneSuggestsIt) {
  expect_error(text_with(10, "macrostep = 0.01"), {},
               {"unknown key 'run.macrostep'", "(did you mean 'run.macro_step'?)"});
  expect_error(base_text(), {"run.macrostep=0.01"},
               {"--set run.macrostep", "(did you mean 'run.macro_step'?)"});
  expect_error(text_with(10, "durationn = 10.0"), {},
               {"unknown key 'run.durationn'", "(did you mean 'run.duration'?)"});
  expect_error(base_plus("[coupling]\nextrapolaton = 1\n"), {},
               {"(did you mean 'coupling.extrapolation'?)"});
  const std::string far = expect_error(base_plus("[bogus]\nx = 1\n"), {}, {"unknown key"});
  EXPECT_EQ(far.find("did you mean"), std::string::npos) << far;
}

TEST(Scenario, MissingRequiredKeysAreNamed) {
  // The location is that of the table the key belongs in.
  expect_location(expect_error(text_with(2, nullptr), {}, {"missing key", "model.name"}), 1);
  expect_location(expect_error(text_with(7, nullptr), {}, {"missing key", "run.duration"}), 6);
  expect_location(expect_error(text_with(8, nullptr), {}, {"missing key", "run.macro_step"}), 6);
  // Without the table there is no line to point at; the file and key are still named.
  expect_error("[model]\nname = \"crane\"\n", {}, {"x.toml", "missing key", "run.duration"});
  expect_error("", {}, {"x.toml", "missing key", "model.name"});
}

TEST(Scenario, WrongTypeIsRejected) {
  expect_location(expect_error(text_with(7, "duration = \"ten\""), {},
                               {"run.duration", "expected a number", "string"}),
                  7);
  expect_location(expect_error(text_with(2, "name = 3"), {}, {"model.name", "expected a string"}),
                  2);
  expect_location(expect_error(base_plus("[coupling]\nextrapolation = 1.5\n"), {},
                               {"coupling.extrapolation", "expected an integer"}),
                  14);
}

TEST(Scenario, NonPositiveStepsAreRejected) {
  expect_location(
      expect_error(text_with(8, "macro_step = -1e-3"), {}, {"run.macro_step", "positive"}), 8);
  expect_location(expect_error(text_with(8, "macro_step = 0"), {}, {"run.macro_step", "positive"}),
                  8);
  expect_location(
      expect_error(text_with(8, "macro_step = 0.0"), {}, {"run.macro_step", "positive"}), 8);
  expect_location(expect_error(base_plus("step = -2e-4\n"), {}, {"hydraulics.step", "positive"}),
                  13);
  expect_location(expect_error(base_plus("step = 0.0\n"), {}, {"hydraulics.step", "positive"}), 13);
  expect_location(
      expect_error(base_plus("[multibody]\nstep = -1e-3\n"), {}, {"multibody.step", "positive"}),
      14);
  expect_location(expect_error(text_with(7, "duration = -10.0"), {}, {"run.duration", "positive"}),
                  7);
}

TEST(Scenario, SubsystemStepMustFitTheMacroStep) {
  expect_location(
      expect_error(base_plus("[multibody]\nstep = 2e-3\n"), {}, {"multibody.step", "larger"}), 14);
  expect_location(expect_error(base_plus("step = 2e-3\n"), {}, {"hydraulics.step", "larger"}), 13);
  // 0.3 ms does not divide 1 ms; 0.25 ms does.
  expect_location(expect_error(base_plus("step = 3e-4\n"), {}, {"hydraulics.step", "divide"}), 13);
  expect_location(
      expect_error(base_plus("[multibody]\nstep = 3e-4\n"), {}, {"multibody.step", "divide"}), 14);
  const config::scenario sc = config::parse_scenario(base_plus("step = 2.5e-4\n"), "x.toml");
  EXPECT_EQ(sc.sub("hydraulics").step, 2.5e-4);
  EXPECT_TRUE(sc.sub("hydraulics").step_set);
}

TEST(Scenario, UnknownModelIsRejected) {
  expect_location(
      expect_error(text_with(2, "name = \"boat\""), {}, {"model.name", "unknown model", "crane"}),
      2);
}

TEST(Scenario, ExtrapolationOrderMustBe0To4) {
  for (const char* bad : {"5", "-1"}) {
    expect_location(
        expect_error(base_plus(std::string("[coupling]\nextrapolation = ") + bad + "\n"), {},
                     {"coupling.extrapolation", "0 to 4"}),
        14);
  }
  for (int m = 0; m <= 4; ++m) {
    const auto sc = config::parse_scenario(
        base_plus("[coupling]\nextrapolation = " + std::to_string(m) + "\n"), "x.toml");
    EXPECT_EQ(sc.coupling.extrapolation, m);
  }
}

TEST(Scenario, UnknownChoicesAreRejected) {
  expect_location(expect_error(text_with(9, "scheme = \"jacobian\""), {},
                               {"run.scheme", "jacobi", "gauss-seidel"}),
                  9);
  expect_location(expect_error(text_with(3, "coupling = \"x-y\""), {}, {"model.coupling"}), 3);
  expect_location(expect_error(text_with(4, "manoeuvre = \"M3\""), {}, {"model.manoeuvre"}), 4);
  expect_location(
      expect_error(text_with(12, "integrator = \"rk4\""), {}, {"hydraulics.integrator"}), 12);
  expect_location(expect_error(text_with(10, "order = [\"multibody\"]"), {}, {"run.order"}), 10);
  expect_location(
      expect_error(text_with(10, "output_interval = 1.5e-3"), {}, {"run.output_interval"}), 10);
}

TEST(Scenario, SetOverridesAreParsedAsTomlValues) {
  const config::scenario sc = config::parse_scenario(
      base_text(), "x.toml",
      {"run.macro_step=2e-3", "run.duration=5", "run.order=[\"hydraulics\", \"multibody\"]",
       "model.coupling=p-s", "run.scheme=gauss-seidel", "coupling.extrapolation=2",
       "run.output_interval=0.01", "safety.energy_residual_limit=100"});
  EXPECT_EQ(sc.run.macro_step, 2e-3);
  EXPECT_EQ(sc.run.duration, 5.0);  // a TOML integer is accepted as a number
  const std::vector<std::string> order{"hydraulics", "multibody"};
  EXPECT_EQ(sc.run.order, order);
  EXPECT_EQ(sc.option("coupling"), "p-s");  // not TOML: taken as a string
  EXPECT_EQ(sc.run.scheme, cosim::scheme_kind::gauss_seidel);
  EXPECT_EQ(sc.coupling.extrapolation, 2);
  EXPECT_EQ(sc.run.output_interval, 0.01);
  EXPECT_EQ(sc.safety.energy_residual_limit, 100.0);
  // The steps follow the overridden H.
  EXPECT_EQ(sc.sub("multibody").step, 2e-3);
  EXPECT_NEAR(sc.sub("hydraulics").step, 2e-4, 1e-15);
  // A quoted TOML string works too.
  const config::scenario sc2 =
      config::parse_scenario(base_text(), "x.toml", {"model.manoeuvre=\"M2\""});
  EXPECT_EQ(sc2.option("manoeuvre"), "M2");
}

TEST(Scenario, BadSetOverridesNameTheSetKey) {
  expect_error(base_text(), {"run.bogus=1"}, {"--set run.bogus", "unknown key"});
  expect_error(base_text(), {"nosuch.key=1"}, {"--set nosuch.key", "unknown key"});
  expect_error(base_text(), {"run.macro_step=-1"}, {"--set run.macro_step", "positive"});
  expect_error(base_text(), {"run.macro_step=abc"}, {"--set run.macro_step", "expected a number"});
  expect_error(base_text(), {"coupling.extrapolation=7"}, {"--set coupling.extrapolation"});
  expect_error(base_text(), {"novalue"}, {"--set novalue"});
}

TEST(Scenario, DefaultStepsFollowTheMacroStep) {
  struct row {
    double H, hM, hH;
  };
  // h_M = H; h_H = the largest step <= 0.2 ms dividing H (003 Sect. 5: min(H, 0.2 ms)):
  //   1 ms -> 0.2 ms (k = 5); 0.1 ms -> 0.1 ms; 14 ms -> 0.2 ms (k = 70);
  //   53 ms -> 0.2 ms (k = 265); 0.3 ms -> 0.15 ms (k = 2; 0.2 ms does not divide 0.3 ms).
  for (const row r : {row{1e-3, 1e-3, 2e-4}, row{1e-4, 1e-4, 1e-4}, row{14e-3, 14e-3, 2e-4},
                      row{53e-3, 53e-3, 2e-4}, row{3e-4, 3e-4, 1.5e-4}, row{5e-5, 5e-5, 5e-5}}) {
    const config::scenario sc =
        config::parse_scenario(base_text(), "x.toml", {"run.macro_step=" + std::to_string(r.H)});
    EXPECT_NEAR(sc.sub("multibody").step, r.hM, 1e-15) << "H = " << r.H;
    EXPECT_FALSE(sc.sub("multibody").step_set);
    EXPECT_NEAR(sc.sub("hydraulics").step, r.hH, 1e-15) << "H = " << r.H;
    EXPECT_FALSE(sc.sub("hydraulics").step_set);
  }
  // An explicit multibody step stays put when H changes.
  const config::scenario sc = config::parse_scenario(base_plus("[multibody]\nstep = 1e-3\n"),
                                                     "x.toml", {"run.macro_step=5e-3"});
  EXPECT_EQ(sc.sub("multibody").step, 1e-3);
  EXPECT_TRUE(sc.sub("multibody").step_set);
}

TEST(Scenario, BuildFillsThePlan) {
  const config::scenario sc = config::parse_scenario(
      base_text(), "x.toml",
      {"run.output_interval=0.01", "run.scheme=gauss-seidel", "coupling.extrapolation=1"});
  const auto b = config::build(sc);
  EXPECT_EQ(b->plan.macro_step.count(), 1'000'000);
  EXPECT_EQ(b->plan.macro_steps, 10'000);
  EXPECT_EQ(b->plan.output_every, 10);
  EXPECT_EQ(b->plan.scheme, cosim::scheme_kind::gauss_seidel);
  ASSERT_EQ(b->sys.size(), 2u);
  const std::size_t mb = b->sys.index_of("multibody");
  const std::size_t hy = b->sys.index_of("hydraulics");
  const std::vector<std::size_t> order{mb, hy};
  EXPECT_EQ(b->plan.order, order);
  EXPECT_EQ(b->sys.at(mb).step_size().count(), 1'000'000);
  EXPECT_EQ(b->sys.at(hy).step_size().count(), 200'000);
  for (const auto& c : b->sys.connections()) EXPECT_EQ(b->sys.at(c.to).input(c.input).order(), 1);
  EXPECT_NO_THROW(cosim::validate_plan(b->sys, b->plan));
  // Duration rounds up to whole macro steps: 10 s / 14 ms = 714.3 -> 715.
  const auto b14 =
      config::build(config::parse_scenario(base_text(), "x.toml", {"run.macro_step=0.014"}));
  EXPECT_EQ(b14->plan.macro_steps, 715);
  const std::string json = config::to_json(sc);
  for (const char* k :
       {"\"model\"", "\"run\"", "\"macro_step\"", "\"hydraulics\"", "\"coupling\"", "\"safety\""})
    EXPECT_NE(json.find(k), std::string::npos) << k << " in " << json;
}

TEST(Scenario, LoadScenarioNamesTheFileOnDisk) {
  temp_dir dir;
  const std::string good = dir.file("good.toml", base_text());
  EXPECT_EQ(config::load_scenario(good).file, good);
  const std::string bad = dir.file("bad.toml", text_with(7, "duration = \"ten\""));
  try {
    (void)config::load_scenario(bad);
    ADD_FAILURE() << "no error";
  } catch (const cosim::error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(bad + ":7:"), std::string::npos) << msg;
    EXPECT_NE(msg.find("run.duration"), std::string::npos) << msg;
  }
  const std::string syntax = dir.file("syntax.toml", text_with(8, "macro_step = = 1"));
  try {
    (void)config::load_scenario(syntax);
    ADD_FAILURE() << "no error";
  } catch (const cosim::error& e) {
    EXPECT_NE(std::string(e.what()).find(syntax + ":8:"), std::string::npos) << e.what();
    EXPECT_EQ(e.code(), cosim::errc::config_syntax);
  }
  const std::string missing = dir.file("x", "") + ".does-not-exist.toml";
  try {
    (void)config::load_scenario(missing);
    ADD_FAILURE() << "no error";
  } catch (const cosim::error& e) {
    EXPECT_NE(std::string(e.what()).find(missing), std::string::npos) << e.what();
  }
  // --set on a file: the override's location is the --set, not the file.
  try {
    (void)config::load_scenario(good, {"run.macro_step=0"});
    ADD_FAILURE() << "no error";
  } catch (const cosim::error& e) {
    EXPECT_NE(std::string(e.what()).find("--set run.macro_step"), std::string::npos) << e.what();
  }
}

TEST(Scenario, ShippedScenariosLoad) {
  struct shipped {
    const char* file;
    const char* coupling;
    const char* manoeuvre;
  };
  for (const shipped s :
       {shipped{"crane_m1_fs.toml", "f-s", "M1"}, shipped{"crane_m1_ps.toml", "p-s", "M1"},
        shipped{"crane_m2_fs.toml", "f-s", "M2"}, shipped{"crane_m2_ps.toml", "p-s", "M2"}}) {
    const config::scenario sc =
        config::load_scenario(std::string(COSIM_SOURCE_DIR "/rt_config/scenarios/") + s.file);
    EXPECT_EQ(sc.option("coupling"), s.coupling) << s.file;
    EXPECT_EQ(sc.option("manoeuvre"), s.manoeuvre) << s.file;
    // 003 Sect. 5 defaults: H = h_M = 1 ms, h_H = 0.2 ms, ZOH, Jacobi, 10 s.
    EXPECT_EQ(sc.run.macro_step, 1e-3) << s.file;
    EXPECT_EQ(sc.run.duration, 10.0) << s.file;
    EXPECT_EQ(sc.run.scheme, cosim::scheme_kind::jacobi) << s.file;
    EXPECT_EQ(sc.coupling.extrapolation, 0) << s.file;
    EXPECT_EQ(sc.sub("multibody").step, 1e-3) << s.file;
    EXPECT_NEAR(sc.sub("hydraulics").step, 2e-4, 1e-15) << s.file;
  }
}

}  // namespace
