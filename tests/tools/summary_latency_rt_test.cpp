// summary.json's per-thread wake-up latency and execution-time percentiles (p50, p99) are
// those of the run's own timing.csv: the nearest-rank percentile of the per-step values there,
// reported as the upper edge of its 1-µs histogram bin (latency_histogram.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "json_value.hpp"
#include "process_support.hpp"
#include "temp_dir.hpp"

namespace {

namespace tp = cosim::test_process;

// Nearest rank: the smallest value with at least p % of the samples at or below it.
double nearest_rank(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(v.size())));
  rank = std::clamp<std::size_t>(rank, 1, v.size());
  return v[rank - 1];
}

// The 1-µs bin's upper edge of a value timing.csv printed with 3 decimals. A value that
// printed as x.000 may have been (x - 1).9995.. in ns and so lie in the bin below.
void expect_bin_edge(double summary, double exact_us, const std::string& what) {
  const double edge = std::floor(std::max(exact_us, 0.0)) + 1.0;
  const bool rounded_up = exact_us > 0 && exact_us == std::floor(exact_us);
  EXPECT_TRUE(summary == edge || (rounded_up && summary == edge - 1.0))
      << what << ": summary " << summary << ", timing.csv's percentile " << exact_us;
}

TEST(SummaryLatency, PercentilesAreThoseOfTimingCsv) {
  const cosim::test::temp_dir dir;
  const std::string out = dir / "out";
  const std::string scenario =
      std::string(COSIM_SOURCE_DIR) + "/rt_config/scenarios/crane_m1_fs.toml";
  const pid_t pid =
      tp::spawn({COSIM_EXE, "run", scenario, "--out", out, "--set", "run.mode=\"realtime\"",
                 "--set", "run.duration=1", "--set", "run.timing_csv=true",
                 // The percentiles are the subject, not the deadline: a loaded CI machine's
                 // late steps must not end the run early.
                 "--set", "watchdog.max_overruns=1000000"},
                dir / "stdout", dir / "stderr");
  ASSERT_EQ(tp::wait_exit(pid, std::chrono::seconds(60)), 0) << tp::slurp(dir / "stderr");

  // timing.csv: step,t,subsystem,wakeup_latency_us,exec_us,overrun,skipped_periods
  std::map<std::string, std::vector<double>> wake, exec;
  std::istringstream csv(tp::slurp(out + "/timing.csv"));
  std::string line;
  std::getline(csv, line);
  while (std::getline(csv, line)) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string x; std::getline(ss, x, ',');) f.push_back(x);
    ASSERT_EQ(f.size(), 7u) << line;
    wake[f[2]].push_back(std::stod(f[3]));
    exec[f[2]].push_back(std::stod(f[4]));
  }
  ASSERT_FALSE(wake.empty());

  const cosim::cli::json_value summary = cosim::cli::parse_json(tp::slurp(out + "/summary.json"));
  const cosim::cli::json_value* threads = summary.find("threads");
  ASSERT_NE(threads, nullptr);
  ASSERT_EQ(threads->arr.size(), wake.size());
  for (const cosim::cli::json_value& t : threads->arr) {
    const std::string name = t.find("name")->str;
    ASSERT_EQ(wake.count(name), 1u) << name;
    const auto& w = *t.find("wakeup_latency_us");
    const auto& e = *t.find("exec_time_us");
    for (const double p : {50.0, 99.0}) {
      const std::string key = p == 50.0 ? "p50" : "p99";
      expect_bin_edge(w.find(key)->num, nearest_rank(wake[name], p), name + " wake-up " + key);
      expect_bin_edge(e.find(key)->num, nearest_rank(exec[name], p), name + " exec " + key);
    }
    std::printf("%s: wake-up p50/p99/max %g/%g/%g us, exec p50/p99/max %g/%g/%g us (%zu steps)\n",
                name.c_str(), w.find("p50")->num, w.find("p99")->num, w.find("max")->num,
                e.find("p50")->num, e.find("p99")->num, e.find("max")->num, wake[name].size());
  }
}

}  // namespace
