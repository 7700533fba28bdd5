// Results folders are transactional and every stop is orderly (docs/results.md): one run per
// --out folder, an earlier run untouched until a new one has started, a finished run marked
// only by summary.json, SIGINT/SIGTERM/SIGHUP ending the run with its rows and a summary.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "process_support.hpp"
#include "temp_dir.hpp"

namespace {

namespace fs = std::filesystem;
using cosim::test::temp_dir;
using cosim::test_process::slurp;
using cosim::test_process::spawn;
using cosim::test_process::wait_exit;
using cosim::test_process::wait_for;
using namespace std::chrono_literals;

const std::string exe = COSIM_EXE;
const std::string crane = std::string(COSIM_SOURCE_DIR) + "/rt_config/scenarios/crane_m1_fs.toml";

struct finished {
  int code = -1;
  std::string out, err;
};

finished run_cosim(const temp_dir& tmp, std::vector<std::string> args,
                   std::chrono::seconds timeout = 120s) {
  args.insert(args.begin(), exe);
  const pid_t pid = spawn(args, tmp / "stdout.txt", tmp / "stderr.txt");
  finished f;
  f.code = wait_exit(pid, timeout);
  f.out = slurp(tmp / "stdout.txt");
  f.err = slurp(tmp / "stderr.txt");
  return f;
}

std::size_t line_count(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

bool no_tmp_files(const std::string& dir) {
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".tmp") return false;
  return true;
}

// The crane holding its equilibrium (M1 drives the cylinder to its end after about 15 s)
// for 10^5 s: a run that goes on until the test stops it (a row per 0.1 s keeps the file
// small).
const std::vector<std::string> long_run{"--set", "model.manoeuvre=hold",
                                        "--set", "run.duration=100000",
                                        "--set", "run.output_interval=0.1"};

std::uintmax_t size_of(const std::string& path) {
  std::error_code ec;
  const auto n = fs::file_size(path, ec);
  return ec ? 0 : n;
}

pid_t start_long_run(const temp_dir& tmp, const std::string& out, const std::string& tag) {
  std::vector<std::string> args{exe, "run", crane, "--out", out};
  args.insert(args.end(), long_run.begin(), long_run.end());
  return spawn(args, tmp / (tag + ".out"), tmp / (tag + ".err"));
}

// More than the header and the first row: the run is stepping.
bool has_rows(const std::string& csv) {
  return size_of(csv) > 1000;
}

TEST(ResultsFolder, SecondRunIntoALockedFolderExitsTwoNamingTheHolderPid) {
  temp_dir tmp;
  const std::string out = tmp / "out";
  const pid_t first = start_long_run(tmp, out, "first");
  ASSERT_TRUE(wait_for(
      first, [&] { return has_rows(out + "/results.csv"); }, 60s));

  const finished second = run_cosim(tmp, {"run", crane, "--out", out});
  EXPECT_EQ(second.code, 2);
  EXPECT_NE(second.err.find("in use by another cosim run (pid " + std::to_string(first) + ")"),
            std::string::npos)
      << second.err;

  kill(first, SIGINT);
  EXPECT_EQ(wait_exit(first, 30s), 1);
  // The refused run wrote nothing: the first run's summary is its own.
  const std::string summary = slurp(out + "/summary.json");
  EXPECT_NE(summary.find("\"stop_reason\": \"operator_signal\""), std::string::npos) << summary;
  EXPECT_NE(summary.find("\"duration\": 1e+05"), std::string::npos) << summary;
}

TEST(ResultsFolder, ALockHeldByAnyProcessIsHonouredAndReleasedWithIt) {
  temp_dir tmp;
  const std::string out = tmp / "out";
  fs::create_directories(out);
  const int fd = open((out + "/.cosim.lock").c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(flock(fd, LOCK_EX), 0);
  ASSERT_EQ(pwrite(fd, "4242\n", 5, 0), 5);
  const finished refused =
      run_cosim(tmp, {"run", crane, "--set", "run.duration=0.01", "--out", out});
  EXPECT_EQ(refused.code, 2);
  EXPECT_NE(refused.err.find("pid 4242"), std::string::npos) << refused.err;
  EXPECT_FALSE(fs::exists(out + "/results.csv"));
  close(fd);  // the holder ends: the folder is free again
  const finished ok = run_cosim(tmp, {"run", crane, "--set", "run.duration=0.01", "--out", out});
  EXPECT_EQ(ok.code, 0) << ok.err;
  EXPECT_TRUE(fs::exists(out + "/summary.json"));
}

TEST(ResultsFolder, ARunThatFailsToStartLeavesTheEarlierRunUntouched) {
  temp_dir tmp;
  const std::string out = tmp / "out";
  ASSERT_EQ(run_cosim(tmp, {"run", crane, "--set", "run.duration=0.05", "--out", out}).code, 0);
  const std::string csv = slurp(out + "/results.csv");
  const std::string summary = slurp(out + "/summary.json");
  ASSERT_FALSE(csv.empty());
  ASSERT_FALSE(summary.empty());
  // Each of these used to be found only after the results were truncated.
  const std::vector<std::vector<std::string>> bad{
      {"--set", "run.duration=1e20"},
      {"--set", "run.mode=threaded", "--set", "run.ring_capacity=4294967296"},
      {"--set", "run.macro_step=1e9"},
  };
  for (const auto& b : bad) {
    std::vector<std::string> args{"run", crane, "--out", out};
    args.insert(args.end(), b.begin(), b.end());
    const finished f = run_cosim(tmp, args);
    EXPECT_EQ(f.code, 2) << b[1];
    EXPECT_EQ(slurp(out + "/results.csv"), csv) << b[1];
    EXPECT_EQ(slurp(out + "/summary.json"), summary) << b[1];
  }
}

TEST(ResultsFolder, ANewRunRemovesTheEarlierSummaryWhenItStarts) {
  temp_dir tmp;
  const std::string out = tmp / "out";
  ASSERT_EQ(run_cosim(tmp, {"run", crane, "--set", "run.duration=0.05", "--out", out}).code, 0);
  ASSERT_TRUE(fs::exists(out + "/summary.json"));
  const pid_t run = start_long_run(tmp, out, "second");
  // While the new run writes rows, no old summary claims they are a finished run.
  // The old results.csv had rows too: wait for the old summary to go, then for new rows.
  ASSERT_TRUE(wait_for(
      run, [&] { return !fs::exists(out + "/summary.json"); }, 60s));
  ASSERT_TRUE(wait_for(
      run, [&] { return size_of(out + "/results.csv") > 10000; }, 60s));
  EXPECT_FALSE(fs::exists(out + "/summary.json"));
  kill(run, SIGKILL);  // a crash: rows kept, no summary, no temporary file
  EXPECT_EQ(wait_exit(run, 30s), 128 + SIGKILL);
  EXPECT_FALSE(fs::exists(out + "/summary.json"));
  EXPECT_TRUE(no_tmp_files(out));
  EXPECT_GT(line_count(slurp(out + "/results.csv")), 10U);
}

// A file size limit stands in for a full disk: writes fail with EFBIG once the limit is hit.
TEST(ResultsFolder, AFailedWriteStopsTheRunKeepsTheRowsAndWritesNoSummary) {
  temp_dir tmp;
  const std::string out = tmp / "out";
  const std::string cmd =
      "ulimit -f 64; exec " + exe + " run " + crane + " --set run.duration=10 --out " + out;
  const pid_t pid = spawn({"/bin/sh", "-c", cmd}, tmp / "o.txt", tmp / "e.txt");
  EXPECT_EQ(wait_exit(pid, 120s), 2);
  const std::string err = slurp(tmp / "e.txt");
  EXPECT_NE(err.find("error writing " + out + "/results.csv: File too large"), std::string::npos)
      << err;
  EXPECT_NE(err.find("the run stopped at t = "), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(out + "/summary.json"));
  EXPECT_TRUE(no_tmp_files(out));
  const auto size = fs::file_size(out + "/results.csv");
  EXPECT_GT(size, 1000U);
  EXPECT_LE(size, 64U * 512U);  // sh counts ulimit -f in 512-byte blocks
  // It stopped when the disk filled instead of computing 10 s nobody could keep: the
  // reported stop time is far short of the end.
  const auto at = err.find("the run stopped at t = ");
  ASSERT_NE(at, std::string::npos);
  EXPECT_LT(std::stod(err.substr(at + 23)), 5.0) << err;
}

class StopSignal : public ::testing::TestWithParam<int> {};

TEST_P(StopSignal, EndsEveryModeInOrderWithRowsAndSummary) {
  const int sig = GetParam();
  for (const std::string mode : {"offline", "threaded", "realtime"}) {
    temp_dir tmp;
    const std::string out = tmp / "out";
    std::vector<std::string> args{exe,
                                  "run",
                                  crane,
                                  "--set",
                                  "run.mode=" + mode,
                                  "--set",
                                  "run.lock_memory=false",
                                  "--set",
                                  "watchdog.max_overruns=1000000",
                                  "--out",
                                  out};
    args.insert(args.end(), long_run.begin(), long_run.end());
    const pid_t pid = spawn(args, tmp / "o.txt", tmp / "e.txt");
    ASSERT_TRUE(wait_for(
        pid, [&] { return has_rows(out + "/results.csv"); }, 60s))
        << mode;
    kill(pid, sig);
    EXPECT_EQ(wait_exit(pid, 30s), 1) << mode << " " << slurp(tmp / "e.txt");
    const std::string summary = slurp(out + "/summary.json");
    EXPECT_NE(summary.find("\"stop_reason\": \"operator_signal\""), std::string::npos)
        << mode << summary;
    EXPECT_NE(summary.find(std::string("(SIG") + sigabbrev_np(sig) + ")"), std::string::npos)
        << mode << summary;
    EXPECT_GT(line_count(slurp(out + "/results.csv")), 1U);
  }
}

INSTANTIATE_TEST_SUITE_P(IntTermHup, StopSignal, ::testing::Values(SIGINT, SIGTERM, SIGHUP),
                         [](const auto& p) { return std::string(sigabbrev_np(p.param)); });

}  // namespace
