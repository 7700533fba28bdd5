// The threaded executors on the crane benchmark: threaded equals offline byte for byte on
// every crane and oscillator scenario, the energy-residual safety stop fires before the
// unstable runs drift 5 mm from the reference, a short realtime run equals offline when it
// meets its deadlines, and impossible placements are rejected before any thread starts.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "cosim/rt_config/scenario.hpp"
#include "cosim/runtime/error.hpp"
#include "cosim/runtime/threaded_executor.hpp"

namespace {

using namespace cosim;
namespace fs = std::filesystem;

const std::string scenarios = COSIM_SOURCE_DIR "/rt_config/scenarios/";

struct memory_sink final : row_sink {
  std::vector<std::string> columns;
  std::vector<double> data;
  std::size_t width = 0;
  void begin(std::span<const std::string> c) override {
    columns.assign(c.begin(), c.end());
    width = c.size();
    data.reserve(200000 * width);
  }
  void write(std::span<const double> row) noexcept override {
    if (data.size() + row.size() <= data.capacity())
      data.insert(data.end(), row.begin(), row.end());
  }
  void end() override {}
  [[nodiscard]] std::size_t rows() const { return data.size() / width; }
  [[nodiscard]] double at(std::size_t r, const std::string& col) const {
    const auto c =
        static_cast<std::size_t>(std::find(columns.begin(), columns.end(), col) - columns.begin());
    return data[r * width + c];
  }
};

run_outcome run_mode(const std::string& file, const std::vector<std::string>& sets,
                     const std::string& mode, memory_sink& sink) {
  const config::scenario sc = config::load_scenario(file, sets);
  auto b = config::build(sc);
  if (mode == "offline") return run_offline(b->sys, b->plan, b->limits, sink);
  threaded_options opt = config::make_threaded_options(sc, *b);
  opt.realtime = mode == "realtime";
  opt.lock_memory = false;
  opt.watchdog.max_overruns = 1'000'000;  // a noisy CI machine must not stop the run
  return run_threaded(b->sys, b->plan, b->limits, sink, opt);
}

bool same_bytes(const memory_sink& a, const memory_sink& b) {
  return a.columns == b.columns && a.data.size() == b.data.size() &&
         std::memcmp(a.data.data(), b.data.data(), a.data.size() * sizeof(double)) == 0;
}

TEST(ThreadedCrane, ThreadedEqualsOfflineOnEveryCraneAndOscillatorScenario) {
  int compared = 0;
  for (const auto& entry : fs::directory_iterator(scenarios)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("crane", 0) != 0 && name.rfind("oscillator", 0) != 0) continue;
    // Each scenario as shipped, and the paper's four crane cases also in Gauss-Seidel.
    const bool paper_case = name.rfind("crane_m", 0) == 0 &&
                            name.find("best") == std::string::npos &&
                            name.find("rim") == std::string::npos;
    for (const char* scheme : {"", "gauss-seidel"}) {
      if (*scheme != '\0' && !paper_case) continue;
      std::vector<std::string> sets{"run.mode=offline"};
      if (*scheme != '\0') sets.push_back(std::string("run.scheme=") + scheme);
      memory_sink a, b;
      run_outcome oa, ob;
      try {
        oa = run_mode(entry.path().string(), sets, "offline", a);
        ob = run_mode(entry.path().string(), sets, "threaded", b);
      } catch (const cosim::error& e) {
        ADD_FAILURE() << name << ": " << e.what();
        continue;
      }
      EXPECT_EQ(oa.status, ob.status) << name;
      EXPECT_EQ(oa.macro_steps, ob.macro_steps) << name;
      EXPECT_GT(a.rows(), 1U) << name;
      EXPECT_TRUE(same_bytes(a, b))
          << name << " (" << (*scheme != '\0' ? scheme : "as shipped") << ")";
      ++compared;
    }
  }
  EXPECT_GE(compared, 8);  // the four crane scenarios in both schemes at least
}

// max |s - s_ref| and the first time it exceeds `bound`, the reference interpolated.
double first_exceedance(const memory_sink& run, const memory_sink& ref, double bound) {
  std::size_t j = 1;
  for (std::size_t r = 0; r < run.rows(); ++r) {
    const double t = run.at(r, "t");
    while (j + 1 < ref.rows() && ref.at(j, "t") < t) ++j;
    const double t0 = ref.at(j - 1, "t"), t1 = ref.at(j, "t");
    const double w = std::clamp((t - t0) / (t1 - t0), 0.0, 1.0);
    const double s_ref = ref.at(j - 1, "s") + w * (ref.at(j, "s") - ref.at(j - 1, "s"));
    if (!(std::abs(run.at(r, "s") - s_ref) <= bound)) return t;
  }
  return INFINITY;
}

TEST(ThreadedCrane, EnergyResidualStopPrecedesTheDriftOfUnstableRuns) {
  const std::string file = scenarios + "crane_m1_fs.toml";
  memory_sink fine, stable;
  run_mode(file, {"run.macro_step=5e-5"}, "offline", fine);
  const run_outcome o10 = run_mode(file, {"run.macro_step=0.01"}, "offline", stable);
  ASSERT_EQ(o10.status, run_status::completed);
  const double limit = 3.0 * o10.energy_residual;
  const std::string lim = "safety.energy_residual_limit=" + std::to_string(limit);
  for (const char* mode : {"offline", "threaded"}) {
    memory_sink guarded10;
    const run_outcome g10 = run_mode(file, {"run.macro_step=0.01", lim}, mode, guarded10);
    EXPECT_EQ(g10.status, run_status::completed) << mode;
    for (const char* H : {"0.016", "0.02"}) {
      memory_sink unguarded, guarded;
      run_mode(file, {std::string("run.macro_step=") + H}, "offline", unguarded);
      const double drift = first_exceedance(unguarded, fine, 5e-3);
      ASSERT_TRUE(std::isfinite(drift)) << "H = " << H << " should be unstable";
      const run_outcome g =
          run_mode(file, {std::string("run.macro_step=") + H, lim}, mode, guarded);
      EXPECT_EQ(g.status, run_status::safety_stop) << mode << " H = " << H;
      EXPECT_EQ(g.stop_reason, "energy_residual") << mode << " H = " << H;
      EXPECT_LT(g.stop_time_s, drift) << mode << " H = " << H;
      // Results up to the stop are kept: the last row is the stop time.
      EXPECT_DOUBLE_EQ(guarded.at(guarded.rows() - 1, "t"), g.stop_time_s);
      std::printf("%s H = %s s: energy stop at %.3f s, |ds| > 5 mm from %.3f s\n", mode, H,
                  g.stop_time_s, drift);
    }
  }
}

TEST(ThreadedCrane, ShortRealtimeRunEqualsOfflineWhenDeadlinesAreMet) {
  const std::string file = scenarios + "crane_m1_fs.toml";
  const std::vector<std::string> sets{"run.duration=1", "threads.multibody.cpu=0",
                                      "threads.multibody.priority=80", "threads.hydraulics.cpu=1",
                                      "threads.hydraulics.priority=80"};
  memory_sink off, rt;
  run_mode(file, sets, "offline", off);
  const run_outcome o = run_mode(file, sets, "realtime", rt);
  ASSERT_EQ(o.status, run_status::completed) << o.stop_reason;
  for (const auto& t : o.threads)
    std::printf("%s: cpu %d prio %d, wake-up p50/p99/max %.0f/%.0f/%.0f us, overruns %lld\n",
                t.name.c_str(), t.cpu_granted, t.priority_granted, t.wakeup_p50_us, t.wakeup_p99_us,
                t.wakeup_max_us, static_cast<long long>(t.overruns));
  if (o.deadline_misses > 0) {
    std::printf("realtime run missed %lld deadlines on this machine; results still compared\n",
                static_cast<long long>(o.deadline_misses));
  }
  // Samples for t_n are all there at tick n whether or not a period was skipped: the
  // trajectory is the offline one byte for byte.
  EXPECT_TRUE(same_bytes(off, rt));
}

// Every shipped scenario and system file (not bench_udp: its input driver needs a bench),
// realtime-paced for a short while: the same bytes as offline, whatever the deadlines did.
TEST(ThreadedCrane, RealtimeEqualsOfflineOnEveryShippedScenarioAndSystem) {
  int compared = 0;
  for (const std::string& dir : {scenarios, std::string(COSIM_SOURCE_DIR "/rt_config/systems/")})
    for (const auto& entry : fs::directory_iterator(dir)) {
      const std::string name = entry.path().filename().string();
      if (entry.path().extension() != ".toml" || name.rfind("bench_udp", 0) == 0) continue;
      const double H = config::load_scenario(entry.path().string()).run.macro_step;
      // About 0.3 s of wall time, and at least 20 macro steps.
      const double T = std::max(0.3, 20.0 * H);
      const std::vector<std::string> sets{"run.duration=" + std::to_string(T)};
      memory_sink a, b;
      try {
        run_mode(entry.path().string(), sets, "offline", a);
        const run_outcome o = run_mode(entry.path().string(), sets, "realtime", b);
        EXPECT_EQ(o.status, run_status::completed) << name << ": " << o.stop_reason;
      } catch (const cosim::error& e) {
        ADD_FAILURE() << name << ": " << e.what();
        continue;
      }
      EXPECT_GE(a.rows(), 20U) << name;
      EXPECT_TRUE(same_bytes(a, b)) << name;
      ++compared;
    }
  EXPECT_GE(compared, 24);  // 19 scenarios + 5 system files
}

TEST(ThreadedCrane, RejectsImpossiblePlacementFromTheScenario) {
  const std::string file = scenarios + "crane_m1_fs.toml";
  auto expect_error = [&](const std::vector<std::string>& sets, const std::string& key) {
    try {
      const config::scenario sc = config::load_scenario(file, sets);
      auto b = config::build(sc);
      validate_threaded(b->sys, b->plan, config::make_threaded_options(sc, *b));
      ADD_FAILURE() << "accepted: " << sets.back();
    } catch (const cosim::error& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  };
  expect_error({"run.mode=threaded", "threads.multibody.cpu=64"}, "threads.multibody.cpu");
  expect_error({"run.mode=threaded", "threads.multibody.priority=100"},
               "threads.multibody.priority");
  expect_error({"run.mode=threaded", "threads.nosuch.cpu=0"}, "threads.nosuch");
  expect_error({"run.mode=threaded", "run.ring_capacity=2"}, "run.ring_capacity");
  expect_error({"run.mode=threaded", "run.scheme=gauss-seidel", "threads.multibody.budget=0.0006",
                "threads.hydraulics.budget=0.0006"},
               "budget");
  expect_error({"run.mode=realtime", "threads.multibody.priority=80", "watchdog.priority=70"},
               "watchdog.priority");
}

}  // namespace
