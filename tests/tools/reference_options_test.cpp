// `cosim reference` option checks, in-process through the program's own entry: every time
// option is finite and > 0 (NaN is not "not given"), the crane's step gives at least one step
// over the duration, its output interval fits in the duration and is a whole multiple of the
// step. Bad input exits 2 naming the option and value in the user's terms, and writes no file.
#include <gtest/gtest.h>

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "csv_table.hpp"
#include "process_support.hpp"
#include "sweep_support.hpp"

namespace {

using namespace cosim::test_cli;
namespace fs = std::filesystem;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

/// `cosim reference ARGS --out DIR/x.csv` must exit 2 with `message` on stderr and no file.
void expect_refused(const std::vector<std::string>& args, const std::string& message) {
  temp_dir dir;
  std::vector<std::string> a{"reference"};
  a.insert(a.end(), args.begin(), args.end());
  a.insert(a.end(), {"--out", dir / "x.csv"});
  const cli_result r = cosim_cli(a);
  std::string shown;
  for (const auto& s : args) shown += s + " ";
  EXPECT_EQ(r.code, 2) << shown << "\n" << r.out << r.err;
  EXPECT_TRUE(contains(r.err, message)) << shown << ": " << r.err;
  EXPECT_FALSE(contains(r.err, "run_crane_reference")) << shown << ": " << r.err;
  EXPECT_FALSE(fs::exists(dir / "x.csv")) << shown;
}

TEST(ReferenceOptions, NonFiniteOrNonPositiveTimesAreRefusedNamingOptionAndValue) {
  for (const std::string option : {"--step", "--duration", "--output-interval"})
    for (const std::string value : {"nan", "inf", "0", "-1"}) {
      const std::string message = option + " " + value + ": must be a finite number > 0";
      expect_refused({"--manoeuvre", "M1", option, value}, message);
      expect_refused({"--oscillator", "oscillator2_fd_case1", option, value}, message);
    }
}

TEST(ReferenceOptions, OutputIntervalMustBeAWholeMultipleOfTheStep) {
  expect_refused({"--manoeuvre", "M1", "--step", "0.3", "--output-interval", "0.001"},
                 "--output-interval 0.001 is not a whole multiple of --step 0.3");
  // The default interval (0.01 s, 003 Sect. 4) is named as such.
  expect_refused({"--manoeuvre", "M1", "--step", "0.3"},
                 "--output-interval 0.01 (default) is not a whole multiple of --step 0.3");
  // 0.004 = 80 x 5e-5 is, 0.00401 is 80.2 steps.
  expect_refused({"--manoeuvre", "M1", "--output-interval", "0.00401", "--duration", "0.01"},
                 "--output-interval 0.00401 is not a whole multiple of --step 5e-05 (default)");
}

TEST(ReferenceOptions, StepMustGiveAStepAndTheIntervalARowWithinTheDuration) {
  // 10 s / 1e-300 s: no step counter holds 1e301 steps (it gave "0 steps, 1 rows").
  expect_refused({"--manoeuvre", "M1", "--step", "1e-300"},
                 "--step 1e-300 over --duration 10 (default) gives more than 2^53 steps");
  expect_refused({"--manoeuvre", "M1", "--step", "0.2", "--duration", "0.1"},
                 "--step 0.2 is longer than --duration 0.1");
  // A row every 20 s of a 10-s run is the row at t = 0 only.
  expect_refused({"--manoeuvre", "M1", "--output-interval", "20"},
                 "--output-interval 20 is longer than --duration 10 (default)");
}

TEST(ReferenceOptions, OneStepAndAnIntervalOfTheWholeDurationAreAccepted) {
  temp_dir dir;
  // step = output interval = duration: one step, rows at t = 0 and t = 0.01.
  const cli_result r = cosim_cli({"reference", "--manoeuvre", "M1", "--step", "0.01", "--duration",
                                  "0.01", "--output-interval", "0.01", "--out", dir / "one.csv"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "1 steps, 2 rows")) << r.out;
  const auto t = cosim::cli::read_csv(dir / "one.csv");
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.rows[1][0], 0.01);
  // 0.05 s at the default 5e-5 s step, one interval of 0.05 s: 1000 steps, 2 rows.
  const cli_result w = cosim_cli({"reference", "--manoeuvre", "M1", "--duration", "0.05",
                                  "--output-interval", "0.05", "--out", dir / "w.csv"});
  ASSERT_EQ(w.code, 0) << w.err;
  EXPECT_TRUE(contains(w.out, "1000 steps, 2 rows")) << w.out;
}

}  // namespace

namespace {

namespace proc = cosim::test_process;

/// Whether `pid` has a handler installed for `sig` (SigCgt in /proc/PID/status).
bool catches(pid_t pid, int sig) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("SigCgt:", 0) == 0)
      return ((std::stoull(line.substr(7), nullptr, 16) >> (sig - 1)) & 1U) != 0;
  return false;
}

// SIGINT during a long crane reference (h = 0.01 ms: minutes) ends it in order: exit 1, the
// rows up to the signal written on the output grid, and the reason on stdout.
TEST(ReferenceOptions, SigintKeepsTheRowsUpToItAndSaysSo) {
  temp_dir dir;
  const std::string out = dir / "ref.csv";
  const pid_t pid =
      proc::spawn({COSIM_EXE, "reference", "--manoeuvre", "M1", "--step", "1e-5", "--out", out},
                  dir / "stdout", dir / "stderr");
  ASSERT_TRUE(proc::wait_for(
      pid, [&] { return catches(pid, SIGINT); }, std::chrono::seconds(60)));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ASSERT_EQ(kill(pid, SIGINT), 0);
  EXPECT_EQ(proc::wait_exit(pid, std::chrono::seconds(60)), 1) << proc::slurp(dir / "stderr");
  const std::string text = proc::slurp(dir / "stdout");
  EXPECT_TRUE(contains(text, "status: interrupted by signal 2 at t = ")) << text;
  const auto t = cosim::cli::read_csv(out);
  ASSERT_GE(t.rows.size(), 1u);
  EXPECT_LT(t.rows.back()[0], 10.0);
  for (std::size_t i = 0; i < t.rows.size(); ++i)
    EXPECT_NEAR(t.rows[i][0], 0.01 * static_cast<double>(i), 1e-9) << i;
}

}  // namespace

namespace {

// Below the paper's 0.05 ms the augmented-Lagrangian iteration converges more slowly (factor
// ~ M / (M + h^2/4 alpha |Phi_q|^2)); at 0.01 ms the valve's start at t = 2 s once exhausted
// the 50 corrections a step ("diverged at t = 2.00003 s"). It must complete there and agree
// with the 0.05 ms reference (both second order: their difference is far below 1e-6 m).
TEST(ReferenceOptions, FinerStepThanThePapersStillConvergesThroughTheValveStart) {
  temp_dir dir;
  const cli_result fine = cosim_cli({"reference", "--manoeuvre", "M1", "--step", "1e-5",
                                     "--duration", "2.05", "--out", dir / "fine.csv"});
  ASSERT_EQ(fine.code, 0) << fine.out << fine.err;
  const cli_result paper = cosim_cli(
      {"reference", "--manoeuvre", "M1", "--duration", "2.05", "--out", dir / "paper.csv"});
  ASSERT_EQ(paper.code, 0) << paper.out << paper.err;
  const auto a = cosim::cli::read_csv(dir / "fine.csv");
  const auto b = cosim::cli::read_csv(dir / "paper.csv");
  ASSERT_EQ(a.rows.size(), 206u);
  ASSERT_EQ(b.rows.size(), a.rows.size());
  const int s = a.column("s");
  ASSERT_GE(s, 0);
  double worst = 0.0;
  for (std::size_t i = 0; i < a.rows.size(); ++i)
    worst = std::max(worst, std::abs(a.rows[i][static_cast<std::size_t>(s)] -
                                     b.rows[i][static_cast<std::size_t>(s)]));
  EXPECT_LT(worst, 1e-6);
  EXPECT_GT(
      a.rows.back()[static_cast<std::size_t>(s)] - a.rows.front()[static_cast<std::size_t>(s)],
      1e-4);  // the actuator moved after the valve opened
}

}  // namespace
