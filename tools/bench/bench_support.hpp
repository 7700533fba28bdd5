#pragma once
// What every benchmark program here shares: its own command-line options (taken out of
// argv before Google Benchmark sees it), a reporter that keeps per-repetition counters for
// the closing summary, and the run with the project's default library flags.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace cosim::bench {

/// Consumes "--name=value" or "--name value" from argv; returns true and the value if
/// present.
inline bool take_option(int& argc, char** argv, std::string_view name, std::string& value) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    int used = 0;
    if (arg == name && i + 1 < argc) {
      value = argv[i + 1];
      used = 2;
    } else if (arg.size() > name.size() && arg.substr(0, name.size()) == name &&
               arg[name.size()] == '=') {
      value = std::string(arg.substr(name.size() + 1));
      used = 1;
    }
    if (used > 0) {
      for (int j = i; j + used < argc; ++j) argv[j] = argv[j + used];
      argc -= used;
      return true;
    }
  }
  return false;
}

/// Consumes the bare flag `name` from argv; true if it was there.
inline bool take_flag(int& argc, char** argv, std::string_view name) {
  for (int i = 1; i < argc; ++i) {
    if (argv[i] == name) {
      for (int j = i; j + 1 < argc; ++j) argv[j] = argv[j + 1];
      --argc;
      return true;
    }
  }
  return false;
}

/// Integer option from argv, else from the environment variable `env` (may be null), else
/// `fallback`. Throws std::invalid_argument naming the option on a malformed value.
inline long long option_value(int& argc, char** argv, std::string_view name, const char* env,
                              long long fallback) {
  std::string text;
  if (!take_option(argc, argv, name, text)) {
    // Only read during start-up, before any other thread exists.
    const char* from_env = env != nullptr ? std::getenv(env) : nullptr;  // NOLINT
    if (from_env == nullptr) return fallback;
    text = from_env;
  }
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (end == text.c_str() || *end != '\0')
    throw std::invalid_argument("bad value '" + text + "' for " + std::string(name));
  return v;
}

/// x / baseline, or 0 when the baseline was not measured.
inline double ratio(double x, double baseline) {
  return baseline > 0 ? x / baseline : 0.0;
}

/// Console output as usual, plus every repetition's counters so the summary can use
/// medians and the worst max.
class counter_reporter : public benchmark::ConsoleReporter {
 public:
  // A reporter passed to RunSpecifiedBenchmarks ignores --benchmark_color; colour only a tty.
  counter_reporter() : ConsoleReporter(isatty(STDOUT_FILENO) != 0 ? OO_Defaults : OO_Tabular) {}

  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      if (run.run_type != Run::RT_Iteration || run.error_occurred) continue;
      auto& values = results_[run.run_name.function_name];
      for (const auto& [key, counter] : run.counters) values[key].push_back(counter.value);
    }
  }

  [[nodiscard]] double median(const std::string& bench, const std::string& key) const {
    std::vector<double> v = values(bench, key);
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    return v.size() % 2 == 1 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
  }
  [[nodiscard]] double worst(const std::string& bench, const std::string& key) const {
    const std::vector<double> v = values(bench, key);
    return v.empty() ? 0.0 : *std::max_element(v.begin(), v.end());
  }

 private:
  [[nodiscard]] std::vector<double> values(const std::string& bench, const std::string& key) const {
    const auto b = results_.find(bench);
    if (b == results_.end()) return {};
    const auto k = b->second.find(key);
    return k == b->second.end() ? std::vector<double>{} : k->second;
  }
  std::map<std::string, std::map<std::string, std::vector<double>>> results_;
};

/// The round-trip summary of a latency benchmark: for each of `names` (benchmarks `group`/NAME
/// with p50_us/p99_us/max_us counters), median p50 and p99 over the repetitions, the worst max,
/// and the p50 ratio against the first name, the baseline, with the verdict against `target`.
inline void print_latency_summary(const counter_reporter& reporter, const char* program,
                                  const std::string& group, const std::vector<std::string>& names,
                                  double target) {
  std::printf(
      "\n%s summary (median p50/p99 over repetitions, worst max; lower is better; "
      "target: p50 within %.1fx of %s):\n",
      program, target, names.front().c_str());
  const int width = static_cast<int>(
      std::max_element(names.begin(), names.end(), [](const auto& a, const auto& b) {
        return a.size() < b.size();
      })->size());
  const double base_p50 = reporter.median(group + "/" + names.front(), "p50_us");
  for (const std::string& name : names) {
    const std::string bench = group + "/" + name;
    const double p50 = reporter.median(bench, "p50_us");
    if (p50 <= 0) {
      std::printf("  %-*s not measured\n", width, name.c_str());
      continue;
    }
    const double r = ratio(p50, base_p50);
    std::printf("  %-*s p50 %8.2f us  p99 %8.2f us  max %9.2f us  p50 ratio %.3f%s\n", width,
                name.c_str(), p50, reporter.median(bench, "p99_us"),
                reporter.worst(bench, "max_us"), r,
                name == names.front() ? ""
                : base_p50 <= 0       ? "  (no baseline)"
                : r <= target         ? "  (within target)"
                                      : "  (ABOVE target)");
  }
}

/// Runs the registered benchmarks through `reporter` with the project's defaults as library
/// flags (a flag the user gave wins): `repetitions` repetitions, randomly interleaved so
/// the drift of a busy machine hits the measurement and its baseline alike. Returns 1 on
/// an unrecognised argument, else 0.
inline int run_benchmarks(int argc, char** argv, int repetitions,
                          benchmark::BenchmarkReporter& reporter) {
  std::vector<char*> args(argv, argv + argc);
  std::string reps = "--benchmark_repetitions=" + std::to_string(repetitions);
  std::string interleave = "--benchmark_enable_random_interleaving=true";
  for (std::string* flag : {&reps, &interleave}) {
    const std::string_view key = std::string_view(*flag).substr(0, flag->find('='));
    const bool given = std::any_of(args.begin() + 1, args.end(), [key](const char* a) {
      return std::string_view(a).starts_with(key);
    });
    if (!given) args.insert(args.begin() + 1, flag->data());
  }
  int bench_argc = static_cast<int>(args.size());
  benchmark::Initialize(&bench_argc, args.data());
  if (benchmark::ReportUnrecognizedArguments(bench_argc, args.data())) return 1;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}

/// main() of a benchmark program: runs `run`, and turns an exception (a bad option, a
/// failed set-up) into a message and exit code 2.
inline int guarded_main(int argc, char** argv, int (*run)(int, char**)) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", argc > 0 ? argv[0] : "bench", e.what());
    return 2;
  }
}

}  // namespace cosim::bench
