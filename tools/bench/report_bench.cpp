// Time and size of `cosim report` for a 10 s, 1 kHz run (the crane, threaded, with
// timing.csv: 10 000 rows, 20 000 timing records), against a baseline in the same run:
// only reading the report's inputs (results.csv, summary.json and timing.csv as text).
// Targets (issue 12): report under 1 s and under 5 MB.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "bench_support.hpp"
#include "cosim/rt_config/run.hpp"
#include "csv_table.hpp"
#include "report.hpp"

namespace {

namespace fs = std::filesystem;
using cosim::bench::ratio;

std::string run_dir;  // the 10 s, 1 kHz run (made once in main())

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void report(benchmark::State& state) {
  std::size_t bytes = 0;
  double total = 0.0;
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): benchmark idiom
    const auto t0 = std::chrono::steady_clock::now();
    const std::string path = cosim::cli::write_report({run_dir, "", ""});
    total += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    bytes = fs::file_size(path);
  }
  state.counters["seconds"] = total / static_cast<double>(state.iterations());
  state.counters["size_MB"] = static_cast<double>(bytes) * 1e-6;
}

void read_inputs(benchmark::State& state) {
  std::size_t bytes = 0;
  double total = 0.0;
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): benchmark idiom
    const auto t0 = std::chrono::steady_clock::now();
    const cosim::cli::csv_table t = cosim::cli::read_csv(run_dir + "/results.csv");
    bytes = t.rows.size() + slurp(run_dir + "/summary.json").size() +
            slurp(run_dir + "/timing.csv").size();
    benchmark::DoNotOptimize(bytes);
    total += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  state.counters["seconds"] = total / static_cast<double>(state.iterations());
}

BENCHMARK(report)->Name("report/write")->Unit(benchmark::kMillisecond);
BENCHMARK(read_inputs)->Name("report/read_inputs")->Unit(benchmark::kMillisecond);

int run(int argc, char** argv) {
  const int repetitions = static_cast<int>(std::max(
      1LL, cosim::bench::option_value(argc, argv, "--repetitions", "COSIM_BENCH_REPETITIONS", 5)));
  char tmpl[] = "/tmp/cosim_report_bench_XXXXXX";
  const char* dir = mkdtemp(tmpl);
  if (dir == nullptr) throw std::runtime_error("report_bench: cannot create a temporary folder");
  run_dir = std::string(dir) + "/run";
  cosim::config::run_request req;
  req.scenario = std::string(COSIM_SCENARIO_DIR) + "/crane_m1_fs.toml";
  req.sets = {"run.mode=threaded", "run.duration=10", "run.macro_step=0.001", "run.timing_csv=true",
              "run.lock_memory=false"};
  req.out_dir = run_dir;
  req.quiet = true;
  const auto rep = cosim::config::run_scenario(req, nullptr);
  const cosim::cli::csv_table t = cosim::cli::read_csv(rep.results_csv);
  std::printf("report_bench: %s, 10 s at 1 kHz threaded: %zu rows, %zu columns; %d repetitions\n",
              req.scenario.c_str(), t.rows.size(), t.columns.size(), repetitions);

  cosim::bench::counter_reporter reporter;
  const int rc = cosim::bench::run_benchmarks(argc, argv, repetitions, reporter);
  if (rc == 0) {
    const double s = reporter.median("report/write", "seconds");
    const double mb = reporter.worst("report/write", "size_MB");
    const double base = reporter.median("report/read_inputs", "seconds");
    std::printf(
        "\nreport_bench summary (10 s, 1 kHz run, medians; targets < 1 s, < 5 MB):\n"
        "  report       %.3f s  %.2f MB  (%s)\n"
        "  read inputs  %.3f s  ratio report/read inputs %.2f\n",
        s, mb, s < 1.0 && mb < 5.0 ? "within the targets" : "OVER a target", base, ratio(s, base));
  }
  fs::remove_all(dir);
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  return cosim::bench::guarded_main(argc, argv, run);
}
