// Values that cannot mean what they say are refused naming the key the user gave: times that
// round to 0 ns or overflow the nanosecond count, and values whose consequence shows in a
// derived key (the default macro step, the springs and dampers of 004).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cosim/rt_config/scenario.hpp"
#include "cosim/runtime/error.hpp"

namespace {

namespace config = cosim::config;

const std::string scenarios = std::string(COSIM_SOURCE_DIR) + "/rt_config/scenarios/";

/// The message of the error loading `file` with `sets` (empty, with a failure, if none).
std::string error_of(const std::string& file, const std::vector<std::string>& sets) {
  try {
    (void)config::load_scenario(scenarios + file, sets);
  } catch (const cosim::error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error for " << file << " with " << (sets.empty() ? "" : sets.back());
  return {};
}

// The message starts "KEY = VALUE: ..." after the file (or --set) part.
void expect_blames(const std::string& msg, const std::string& key, const std::string& why) {
  EXPECT_NE(msg.find(key + " = "), std::string::npos) << msg;
  EXPECT_NE(msg.find(why), std::string::npos) << msg;
}

TEST(KeyBlame, DdsTimesThatRoundToZeroNanosecondsAreRefused) {
  for (const std::string key : {"dds.lease", "dds.timeout", "dds.discovery_timeout"}) {
    const std::string msg = error_of("crane_m1_fs.toml", {key + "=1e-308"});
    expect_blames(msg, key, "must be at least 1 ns (it rounds to 0)");
  }
}

TEST(KeyBlame, DriverTimesThatOverflowOrRoundToZeroAreRefused) {
  for (const std::string key : {"stop_after", "stale_after", "startup_timeout"}) {
    const std::string full = "drivers.joystick." + key;
    // stale_after must stay <= stop_after: both move together where needed.
    std::vector<std::string> huge{full + "=1e308"};
    if (key == "stale_after") huge.insert(huge.begin(), "drivers.joystick.stop_after=1e308");
    expect_blames(error_of("bench_udp.toml", huge), full, "must be at most 1e9 s");
    expect_blames(error_of("bench_udp.toml", {full + "=1e-12"}), full,
                  "must be at least 1 ns (it rounds to 0)");
  }
}

TEST(KeyBlame, FrTooLargeForTheDurationBlamesModelFrNotTheDerivedMacroStep) {
  // H defaults to FR / 100 s (004): FR = 2000 gives H = 20 s > 10 s.
  const std::string msg = error_of("oscillator004.toml", {"run.duration=10", "model.fr=2000"});
  expect_blames(msg, "model.fr",
                "gives the default run.macro_step = 20 s (it follows model.fr), longer than "
                "run.duration = 10 s");
  EXPECT_EQ(msg.find("run.macro_step = <missing>"), std::string::npos) << msg;
  // The file's own model.fr = 30 (H = 0.3 s) against a shorter run: named at its line.
  const std::string file_fr = error_of("oscillator004.toml", {"run.duration=0.1"});
  expect_blames(file_fr, "model.fr", "gives the default run.macro_step = 0.3 s");
  EXPECT_NE(file_fr.find("oscillator004.toml:"), std::string::npos) << file_fr;
}

TEST(KeyBlame, FrThatBreaksTheSpringsBlamesModelFr) {
  // FR = 1e12: w2 = w1 / FR underflows against w1 in the stiffness of 004 Eq. (2).
  const std::string msg = error_of("oscillator004.toml", {"model.fr=1e12"});
  expect_blames(msg, "model.fr", "non-positive spring");
  EXPECT_EQ(msg.find("model.ar12 = <missing>"), std::string::npos) << msg;
}

TEST(KeyBlame, ZetaThatGivesAnInfiniteDamperBlamesModelZeta) {
  // c = 2 zeta m w (004 Eq. (9)) overflows for zeta = 1e308.
  const std::string msg = error_of("oscillator004.toml", {"model.zeta=1e308"});
  expect_blames(msg, "model.zeta", "non-finite damping coefficient");
  EXPECT_EQ(msg.find("parameters.c"), std::string::npos) << msg;
}

TEST(KeyBlame, OutputIntervalBelowOneNanosecondOrHugeBlamesTheKey) {
  expect_blames(error_of("crane_m1_fs.toml", {"run.output_interval=1e-300"}), "run.output_interval",
                "must be 0 (every macro step) or at least run.macro_step");
  expect_blames(error_of("crane_m1_fs.toml", {"run.output_interval=1e10"}), "run.output_interval",
                "must be at most");
}

}  // namespace
