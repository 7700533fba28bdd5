// Inputs that used to hang the program, fail after start-up or answer with a message that
// named nothing are rejected while reading, naming file, key, value and the allowed range.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>
#include "bench_key_file.hpp"

#include <string>
#include <vector>

#include "cosim/rt_config/scenario.hpp"
#include "cosim/runtime/error.hpp"
#include "cosim/runtime/time.hpp"
#include "temp_dir.hpp"

namespace {

namespace config = cosim::config;
using cosim::test::temp_dir;

const std::string crane_text =
    "[model]\nname = \"crane\"\ncoupling = \"f-s\"\nmanoeuvre = \"M1\"\n"
    "[run]\nduration = 10.0\nmacro_step = 1e-3\n";

std::string error_of(const std::string& text, const std::vector<std::string>& sets) {
  try {
    (void)config::parse_scenario(text, "s.toml", sets);
  } catch (const cosim::error& e) {
    return e.what();
  }
  return "";
}

void expect_error(const std::vector<std::string>& sets, const std::vector<std::string>& parts) {
  const std::string msg = error_of(crane_text, sets);
  ASSERT_FALSE(msg.empty()) << "accepted: " << sets.front();
  for (const auto& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << p << " in: " << msg;
}

TEST(RunBounds, DurationBeyondTheClockRangeNamesKeyValueAndLimit) {
  // 1e20 s used to overflow the nanosecond clock and fail after start-up as
  // "duration must be >= 0".
  expect_error({"run.duration=1e20"},
               {"--set run.duration", "run.duration = 1e+20", "at most 1e+09 s"});
}

TEST(RunBounds, MacroStepLongerThanTheDurationIsRejected) {
  // Used to run one 20-s step silently for a 10-s run.
  expect_error({"run.macro_step=20"}, {"run.macro_step = 20", "longer than run.duration = 10 s"});
  // Above 9.2e9 s the nanosecond conversion overflowed and answered "is below 1 ns".
  expect_error({"run.macro_step=1e10", "run.duration=1e9"}, {"run.macro_step", "longer than"});
}

TEST(RunBounds, MacroStepWithTooManyInternalStepsNamesTheBound) {
  // 1e9 s with the default h_H = 0.2 ms was 5e12 sub-steps in one macro step: a hang
  // that only SIGKILL ended.
  const double H = 1.0 + 2e-4 * static_cast<double>(cosim::max_substeps_per_macro_step);
  expect_error({"run.duration=1e6", "run.macro_step=" + std::to_string(H)},
               {"run.macro_step", "default hydraulics.step = 2e-04 s",
                "at most " + std::to_string(cosim::max_substeps_per_macro_step)});
  // The limit itself is allowed: H = bound * h_H exactly.
  const double at_bound = 2e-4 * static_cast<double>(cosim::max_substeps_per_macro_step);
  EXPECT_EQ(error_of(crane_text, {"run.duration=1e3", "run.macro_step=" + std::to_string(at_bound),
                                  "multibody.step=1e-3"}),
            "");
  // An explicit subsystem step is named as the culprit.
  expect_error({"run.macro_step=1.0", "multibody.step=1e-6"},
               {"multibody.step = 1e-06", "1e+06 internal steps"});
}

TEST(RunBounds, RingCapacityHasAnUpperBound) {
  // Used to end in a bare std::bad_alloc after the results were truncated.
  expect_error({"run.mode=\"threaded\"", "run.ring_capacity=4294967296"},
               {"run.ring_capacity = 4294967296", "from 4 to 65536"});
}

TEST(RunBounds, SettingAWholeSectionToAValueIsRejectedAtTheSet) {
  // Used to answer "missing key 'run.duration'".
  expect_error({"run=5"}, {"--set run=5", "'run' is a table in s.toml", "--set run."});
}

TEST(RunBounds, ANumberWhereATableOfKeysBelongsSaysHowToSetIt) {
  // Used to answer only "run.iteration_tolerance must be a table".
  expect_error({"run.iteration_tolerance=1e-8"},
               {"--set run.iteration_tolerance", "run.iteration_tolerance = 1e-08",
                "must be a table of keys", "--set run.iteration_tolerance.NAME=VALUE"});
}

TEST(RunBounds, UnreadableScenarioIsNotCalledASyntaxError) {
  if (geteuid() == 0) {
    // root reads a mode-000 file; a directory is unreadable as a scenario for everyone.
    temp_dir tmp;
    try {
      (void)config::load_scenario(tmp.path());
      FAIL() << "a directory was accepted";
    } catch (const cosim::error& e) {
      EXPECT_NE(std::string(e.what()).find("cannot read scenario: is a directory"),
                std::string::npos)
          << e.what();
      EXPECT_EQ(std::string(e.what()).find("syntax"), std::string::npos) << e.what();
    }
  } else {
    temp_dir tmp;
    const std::string p = tmp.file("s.toml", crane_text);
    ::chmod(p.c_str(), 0);
    try {
      (void)config::load_scenario(p);
      FAIL() << "an unreadable file was accepted";
    } catch (const cosim::error& e) {
      EXPECT_NE(std::string(e.what()).find("Permission denied"), std::string::npos) << e.what();
    }
  }
  try {
    (void)config::load_scenario("/nonexistent/s.toml");
    FAIL();
  } catch (const cosim::error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/s.toml: cannot read scenario: no such file"),
              std::string::npos)
        << e.what();
  }
}

TEST(RunBounds, InputDriversNeedRealtimeMode) {
  const std::string bench = std::string(COSIM_SOURCE_DIR) + "/rt_config/scenarios/bench_udp.toml";
  for (const char* mode : {"offline", "threaded"}) {
    try {
      (void)config::load_scenario(
          bench, cosim::test::with_bench_keys({std::string("run.mode=\"") + mode + "\""}));
      FAIL() << mode << " accepted with an input driver";
    } catch (const cosim::error& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("run.mode = \"" + std::string(mode) + "\""), std::string::npos) << m;
      EXPECT_NE(m.find("drivers.joystick"), std::string::npos) << m;
      EXPECT_NE(m.find("wall-clock"), std::string::npos) << m;
    }
  }
  EXPECT_NO_THROW((void)config::load_scenario(
      bench, cosim::test::with_bench_keys({})));  // realtime, as shipped
}

}  // namespace
