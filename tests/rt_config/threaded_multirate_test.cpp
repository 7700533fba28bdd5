// Smoothing and non-matching grids (004 Sect. 2) in every run mode: the threaded and
// realtime executors deliver what offline delivers (interval averages, samples stamped
// with the producer's own grid time), so results.csv is the offline file byte for byte.
// Runs go through the library's run entry (config::run_scenario) into results folders.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cosim/rt_config/run.hpp"
#include "cosim/runtime/error.hpp"
#include "temp_dir.hpp"

namespace {

using namespace cosim;
using cosim::test::temp_dir;

const std::string scenarios = COSIM_SOURCE_DIR "/rt_config/scenarios/";

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct mode_run {
  run_outcome outcome;
  std::string csv;
};

mode_run run_in_mode(const temp_dir& tmp, const std::string& file, std::vector<std::string> sets,
                     const std::string& mode) {
  sets.push_back("run.mode=" + mode);
  sets.emplace_back("run.lock_memory=false");
  sets.emplace_back("watchdog.max_overruns=1000000");  // a noisy CI machine must not stop it
  config::run_request req;
  req.scenario = scenarios + file;
  req.sets = sets;
  req.out_dir = tmp / mode;
  req.quiet = true;
  const config::run_report rep = config::run_scenario(req, nullptr);
  return {rep.outcome, slurp(rep.results_csv)};
}

struct multirate_scenario {
  const char* file;
  std::vector<std::string> sets;
  std::vector<std::string> realtime;  // shortens the run to under a second of wall time
};

// Each case changes what consumers receive: smoothing with more than one internal step per
// interval, own grids whose stamps are not the macro grid, extrapolation order > 0 so that a
// wrong stamp changes the polynomial.
const std::vector<multirate_scenario> cases = {
    {"oscillator004.toml",
     {"mass1.smoothing=true", "coupling.extrapolation=2"},
     {"model.fr=3", "run.duration=0.9"}},
    {"oscillator004.toml",
     {"mass1.smoothing=true", "run.sync=fastest-first"},
     {"model.fr=3", "run.duration=0.9"}},
    {"oscillator004.toml",
     {"model.fr=1.5", "mass1.non_matching=true", "coupling.extrapolation=1"},
     {"run.duration=0.6"}},
    {"oscillator004.toml",
     {"mass2.non_matching=true", "mass2.step=0.07", "coupling.extrapolation=2",
      "run.scheme=jacobi"},
     {"model.fr=3", "run.duration=0.9"}},
    {"oscillator2_fd_case1.toml",
     {"mass1.smoothing=true", "mass1.step=2e-4", "mass2.non_matching=true", "mass2.step=7e-4",
      "coupling.extrapolation=2"},
     {"run.duration=0.3"}},
    {"oscillator3_fd.toml",
     {"mass2.smoothing=true", "mass2.non_matching=true", "mass2.step=3e-4",
      "coupling.extrapolation=1", "run.scheme=gauss-seidel"},
     {"run.duration=0.3"}},
    // Fast-step delivery: the slow mass ahead (slowest-first) or behind with a dense history.
    {"oscillator004.toml",
     {"run.delivery=fast-step", "run.sync=slowest-first", "model.fr=7", "coupling.extrapolation=3",
      "run.duration=3"},
     {"run.duration=0.5"}},
    {"oscillator004.toml",
     {"run.delivery=fast-step", "run.sync=fastest-first", "model.coupling=d-d", "model.fr=7",
      "coupling.extrapolation=2", "run.duration=3"},
     {"run.duration=0.5"}},
    // ... and the fast side on 004 Table 1's samples (dense history on its input too).
    {"oscillator004.toml",
     {"run.delivery=fast-step", "run.sync=slowest-first", "run.fast_step_timing=table1",
      "model.coupling=d-d", "model.fr=7.5", "run.duration=3"},
     {"run.duration=0.5"}},
    {"crane_m1_fs.toml",
     {"hydraulics.smoothing=true", "hydraulics.step=2e-4", "multibody.non_matching=true",
      "multibody.step=7e-4", "coupling.extrapolation=1", "run.duration=2"},
     {"run.duration=0.3"}},
};

std::string describe(const multirate_scenario& c) {
  std::string s = c.file;
  for (const auto& k : c.sets) s += " --set " + k;
  return s;
}

TEST(ThreadedMultirate, ThreadedResultsCsvEqualsOfflineWithSmoothingAndNonMatchingGrids) {
  for (const multirate_scenario& c : cases) {
    temp_dir tmp;
    mode_run off, thr;
    try {
      off = run_in_mode(tmp, c.file, c.sets, "offline");
      thr = run_in_mode(tmp, c.file, c.sets, "threaded");
    } catch (const cosim::error& e) {
      ADD_FAILURE() << describe(c) << ": " << e.what();
      continue;
    }
    EXPECT_EQ(off.outcome.status, run_status::completed) << describe(c);
    EXPECT_EQ(thr.outcome.status, run_status::completed) << describe(c);
    EXPECT_GT(off.outcome.rows, 10) << describe(c);
    EXPECT_TRUE(off.csv == thr.csv) << describe(c);
  }
}

TEST(ThreadedMultirate, RealtimeResultsCsvEqualsOfflineWithSmoothingAndNonMatchingGrids) {
  // Shortened to a fraction of a second of wall time each; samples travel with their
  // sequence number and stamp, so a missed deadline changes timing, never values.
  for (const multirate_scenario& c : cases) {
    std::vector<std::string> sets = c.sets;
    sets.insert(sets.end(), c.realtime.begin(), c.realtime.end());
    temp_dir tmp;
    mode_run off, rt;
    try {
      off = run_in_mode(tmp, c.file, sets, "offline");
      rt = run_in_mode(tmp, c.file, sets, "realtime");
    } catch (const cosim::error& e) {
      ADD_FAILURE() << describe(c) << ": " << e.what();
      continue;
    }
    ASSERT_EQ(rt.outcome.status, run_status::completed)
        << describe(c) << ": " << rt.outcome.stop_reason;
    EXPECT_GT(off.outcome.rows, 10) << describe(c);
    EXPECT_TRUE(off.csv == rt.csv) << describe(c) << " (realtime)";
  }
}

}  // namespace
