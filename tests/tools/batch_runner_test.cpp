// The batch runner of cosim tune and cosim sweep (tools/cosim/batch_runner.hpp):
//  - a run kept in memory holds exactly the rows `cosim run` writes to results.csv: the same
//    columns, every value equal to the last bit, and the same bytes once formatted by the
//    results.csv writer;
//  - a run that also keeps a results folder holds in memory what that folder's results.csv
//    holds;
//  - a run kept in memory writes no file at all; cosim tune writes nothing but its answer
//    files (no scenario file per candidate), and cosim sweep never reads a results.csv back
//    (the kernel's inotify events of the run folders say which files were opened how);
//  - after a stop request no further run starts.
#include <gtest/gtest.h>
#include <sys/inotify.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "batch_runner.hpp"
#include "cosim/runtime/csv_writer.hpp"
#include "csv_table.hpp"
#include "process_support.hpp"
#include "sweep_support.hpp"

namespace {

using namespace cosim::test_cli;
namespace fs = std::filesystem;
namespace cli = cosim::cli;
namespace proc = cosim::test_process;

const std::string scenarios = COSIM_SOURCE_DIR "/rt_config/scenarios/";
const std::string oscillator = scenarios + "oscillator2_fd_case1.toml";

/// `cosim run SCENARIO --set ... --out DIR` as its own process.
void cosim_run(const std::string& scenario, const std::vector<std::string>& sets,
               const std::string& out, const temp_dir& dir) {
  std::vector<std::string> args{COSIM_EXE, "run", scenario};
  for (const auto& s : sets) args.insert(args.end(), {"--set", s});
  args.insert(args.end(), {"--out", out});
  ASSERT_EQ(proc::wait_exit(proc::spawn(args, dir / "run.out", dir / "run.err"),
                            std::chrono::seconds(120)),
            0)
      << proc::slurp(dir / "run.err");
}

/// Equal to the last bit (NaN included), row by row.
void expect_bit_equal(const cli::csv_table& a, const cli::csv_table& b) {
  ASSERT_EQ(a.columns, b.columns);
  ASSERT_EQ(a.rows.size(), b.rows.size());
  for (std::size_t i = 0; i < a.rows.size(); ++i) {
    ASSERT_EQ(a.rows[i].size(), b.rows[i].size()) << "row " << i;
    ASSERT_EQ(std::memcmp(a.rows[i].data(), b.rows[i].data(), a.rows[i].size() * sizeof(double)), 0)
        << "row " << i;
  }
}

/// The table written by the writer of results.csv (runtime/csv_writer.hpp).
std::string formatted(const cli::csv_table& t, const std::string& path) {
  {
    cosim::csv_writer w(path);
    w.begin(t.columns);
    for (const auto& row : t.rows) w.write(row);
    w.end();
    EXPECT_FALSE(w.failed());
  }
  return proc::slurp(path);
}

TEST(BatchRunner, InMemoryRowsAreCosimRunResultsToTheLastBit) {
  const temp_dir dir;
  struct check {
    std::string scenario;
    std::vector<std::string> sets;
  };
  for (const check& c :
       {check{oscillator, {"run.duration=1", "coupling.extrapolation=2"}},
        check{scenarios + "crane_m1_fs.toml",
              {"run.duration=2", "run.macro_step=0.004", "run.output_interval=0"}}}) {
    const std::string out = dir / ("run_" + fs::path(c.scenario).stem().string());
    cosim_run(c.scenario, c.sets, out, dir);
    const cli::csv_table file = cli::read_csv(out + "/results.csv");
    ASSERT_GT(file.rows.size(), 100u);

    cli::batch_run run;
    run.sets = c.sets;
    run.all_columns = true;
    const cosim::stop_source no_stop;
    const cli::batch_result r = cli::run_one(c.scenario, run, no_stop);
    ASSERT_EQ(r.status, "completed") << r.message;
    ASSERT_TRUE(r.outcome.has_value());
    EXPECT_EQ(r.outcome->rows, static_cast<std::int64_t>(file.rows.size()));
    expect_bit_equal(r.rows.to_csv_table(), file);
    EXPECT_EQ(formatted(r.rows.to_csv_table(), dir / "formatted.csv"),
              proc::slurp(out + "/results.csv"))
        << c.scenario;

    // Only t and the named columns, in the order asked; a name not recorded is reported.
    run.all_columns = false;
    run.columns = {file.columns[2], "no_such_column", file.columns[1]};
    const cli::batch_result some = cli::run_one(c.scenario, run, no_stop);
    ASSERT_EQ(some.status, "completed") << some.message;
    EXPECT_EQ(some.rows.columns, (std::vector<std::string>{"t", file.columns[2], file.columns[1]}));
    EXPECT_EQ(some.missing, std::vector<std::string>{"no_such_column"});
    const cli::csv_table kept = some.rows.to_csv_table();
    ASSERT_EQ(kept.rows.size(), file.rows.size());
    for (std::size_t i = 0; i < file.rows.size(); ++i) {
      ASSERT_EQ(kept.rows[i],
                (std::vector<double>{file.rows[i][0], file.rows[i][2], file.rows[i][1]}))
          << i;
    }
  }
}

TEST(BatchRunner, AKeptFolderHoldsTheRowsKeptInMemory) {
  const temp_dir dir;
  cli::batch_run run;
  run.sets = {"run.duration=1", "run.macro_step=2e-3"};
  run.out_dir = dir / "kept";
  run.all_columns = true;
  const cosim::stop_source no_stop;
  const cli::batch_result r = cli::run_one(oscillator, run, no_stop);
  ASSERT_EQ(r.status, "completed") << r.message;
  EXPECT_EQ(r.rows.path, dir / "kept/results.csv");
  EXPECT_TRUE(fs::exists(dir / "kept/summary.json"));
  expect_bit_equal(r.rows.to_csv_table(), cli::read_csv(dir / "kept/results.csv"));
  ASSERT_TRUE(r.sc.has_value());
  EXPECT_EQ(r.sc->run.macro_step, 2e-3);
}

/// Watches directories with inotify; events() lists "<dir>/<name>:<what>" since the start.
class watcher {
 public:
  explicit watcher(const std::vector<std::string>& dirs) : fd_(inotify_init1(IN_NONBLOCK)) {
    EXPECT_GE(fd_, 0);
    for (const auto& d : dirs) {
      const int wd = inotify_add_watch(
          fd_, d.c_str(), IN_CREATE | IN_CLOSE_WRITE | IN_CLOSE_NOWRITE | IN_MOVED_TO | IN_DELETE);
      EXPECT_GE(wd, 0) << d;
      dirs_[wd] = d;
    }
  }
  ~watcher() { close(fd_); }
  watcher(const watcher&) = delete;
  watcher& operator=(const watcher&) = delete;

  std::vector<std::string> events() {
    alignas(inotify_event) char buf[1 << 16];
    for (ssize_t n; (n = read(fd_, buf, sizeof buf)) > 0;) {
      for (ssize_t p = 0; p < n;) {
        inotify_event ev{};
        std::memcpy(&ev, buf + p, sizeof ev);
        const std::string name = ev.len > 0 ? std::string(buf + p + sizeof ev) : "";
        const char* what = (ev.mask & IN_CREATE)          ? "create"
                           : (ev.mask & IN_CLOSE_WRITE)   ? "close_write"
                           : (ev.mask & IN_CLOSE_NOWRITE) ? "close_read"
                           : (ev.mask & IN_MOVED_TO)      ? "moved_to"
                           : (ev.mask & IN_DELETE)        ? "delete"
                                                          : "other";
        if (dirs_.count(ev.wd) != 0) events_.push_back(dirs_[ev.wd] + "/" + name + ":" + what);
        p += static_cast<ssize_t>(sizeof(inotify_event) + ev.len);
      }
    }
    return events_;
  }

 private:
  int fd_;
  std::map<int, std::string> dirs_;
  std::vector<std::string> events_;
};

std::size_t count(const std::vector<std::string>& events, const std::string& e) {
  std::size_t n = 0;
  for (const auto& x : events) n += x == e ? 1 : 0;
  return n;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& e : v) s += e + "\n";
  return s;
}

TEST(BatchRunner, RunsKeptInMemoryWriteNoFile) {
  const temp_dir dir;
  fs::create_directories(dir / "sc");
  fs::create_directories(dir / "cwd");
  fs::copy_file(oscillator, dir / "sc/osc.toml");
  const fs::path cwd = fs::current_path();
  fs::current_path(dir / "cwd");  // a file written relative to the working directory shows
  std::vector<cli::batch_run> runs(3);
  for (std::size_t i = 0; i < runs.size(); ++i) {
    runs[i].sets = {"run.duration=0.5", "coupling.extrapolation=" + std::to_string(i)};
    runs[i].all_columns = true;
  }
  watcher w({dir.path(), dir / "sc", dir / "cwd"});
  const cosim::stop_source no_stop;
  const auto results = cli::run_batch(dir / "sc/osc.toml", runs, 2, nullptr, {}, no_stop);
  fs::current_path(cwd);
  const std::vector<std::string> ev = w.events();
  for (const auto& r : results) {
    EXPECT_EQ(r.status, "completed") << r.message;
    EXPECT_EQ(r.rows.rows(), 51u);  // 0.5 s every 0.01 s
  }
  // The scenario file is read (inotify merges the runs' identical events); nothing is
  // created or written anywhere.
  EXPECT_GE(count(ev, dir / "sc/osc.toml:close_read"), 1u) << joined(ev);
  for (const auto& e : ev) EXPECT_EQ(e, dir / "sc/osc.toml:close_read") << joined(ev);
  EXPECT_TRUE(fs::is_empty(dir / "cwd"));
}

TEST(BatchRunner, NoRunStartsAfterTheStopRequest) {
  std::vector<cli::batch_run> runs(4);
  for (auto& r : runs) r.sets = {"run.duration=0.1"};
  cosim::stop_source stop;
  std::vector<std::size_t> done;
  // One job: the stop raised when the first run ends keeps the other three from starting.
  const auto results = cli::run_batch(
      oscillator, runs, 1, nullptr,
      [&](std::size_t i, cli::batch_result&) {
        done.push_back(i);
        stop.raise(cosim::stop_cause::operator_signal);
      },
      stop);
  EXPECT_EQ(done, std::vector<std::size_t>{0});
  EXPECT_TRUE(results[0].started);
  EXPECT_EQ(results[0].status, "completed");
  for (std::size_t i = 1; i < 4; ++i) EXPECT_FALSE(results[i].started) << i;
  // Bad input is a result, not an exception.
  const cosim::stop_source no_stop;
  const auto bad = cli::run_batch(oscillator, {cli::batch_run{{"run.macro_step=-1"}, "", true, {}}},
                                  1, nullptr, {}, no_stop);
  EXPECT_EQ(bad[0].status, "error");
  EXPECT_EQ(bad[0].stop_reason, "bad_input");
  EXPECT_NE(bad[0].message.find("run.macro_step"), std::string::npos) << bad[0].message;
  EXPECT_FALSE(bad[0].outcome.has_value());
}

TEST(SweepInMemory, ErrorsComeFromTheRunsRowsNotFromResultsCsvReadBack) {
  // The folders exist before the sweep (as after an earlier sweep), so that their files'
  // opens can be watched from the start. results.csv is written once and never opened for
  // reading; the errors still match the ones computed here from the written file.
  temp_dir dir;
  const std::vector<std::string> folders{dir / "sw/1_run.macro_step=1e-3",
                                         dir / "sw/2_run.macro_step=2e-3"};
  for (const auto& f : folders) fs::create_directories(f);
  watcher w(folders);
  const auto r = cosim_cli({"sweep", oscillator, "--key", "run.macro_step", "--values", "1e-3,2e-3",
                            "--set", "run.duration=1", "--reference", "closed-form", "--jobs", "2",
                            "--out", dir / "sw"});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const std::vector<std::string> ev = w.events();
  for (const auto& f : folders) {
    EXPECT_EQ(count(ev, f + "/results.csv:close_write"), 1u) << joined(ev);
    EXPECT_EQ(count(ev, f + "/results.csv:close_read"), 0u) << joined(ev);
  }
  // The same numbers as from the file: the rows in memory are the file's rows.
  const table t = read_table(dir / "sw/sweep.csv");
  ASSERT_EQ(t.rows.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    const cli::csv_table res = cli::read_csv(folders[i] + "/results.csv");
    cli::batch_run again;
    again.sets = {"run.duration=1", std::string("run.macro_step=") + (i == 0 ? "1e-3" : "2e-3")};
    again.all_columns = true;
    const cosim::stop_source no_stop;
    expect_bit_equal(cli::run_one(oscillator, again, no_stop).rows.to_csv_table(), res);
    EXPECT_EQ(t.text(i, "status"), "completed");
    EXPECT_GT(t.num(i, "x1_max"), 0.0);
  }
}

TEST(TuneInMemory, WritesNoScenarioFilePerCandidateOnlyItsAnswerFiles) {
  // Every place a candidate scenario file could go: beside the scenario, the output folder,
  // the working directory and TMPDIR.
  const temp_dir dir;
  for (const char* d : {"sc", "out", "cwd", "tmp"}) fs::create_directories(dir / d);
  fs::copy_file(scenarios + "crane_m1_fs.toml", dir / "sc/crane.toml");
  watcher w({dir / "sc", dir / "out", dir / "cwd", dir / "tmp"});
  auto tune = [&](const std::string& args, const std::string& out) {
    const std::string cmd = "cd '" + (dir / "cwd") + "' && TMPDIR='" + (dir / "tmp") + "' '" +
                            COSIM_EXE + "' tune '" + (dir / "sc/crane.toml") + "' " + args +
                            " --jobs 2 --out '" + out + "' >'" + (dir / "tune.out") + "' 2>&1";
    const int status = std::system(cmd.c_str());
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << proc::slurp(dir / "tune.out");
  };
  // 2 configurations x 2 inputs x 3 steps, and 2 fine references + 4 steps.
  tune(
      "--orders 0,1 --interfaces direct --test-inputs step,ramp --H-ini 0.001 --H-inc 0.001 "
      "--H-max 0.003",
      dir / "out");
  tune("--largest-step --manoeuvres M1 --H-ini 0.002 --H-inc 0.002 --H-max 0.008", dir / "out");
  const std::vector<std::string> ev = w.events();
  std::vector<std::string> created;
  for (const auto& e : ev)
    if (e.size() > 7 && e.compare(e.size() - 7, 7, ":create") == 0) created.push_back(e);
  std::sort(created.begin(), created.end());
  EXPECT_EQ(created, (std::vector<std::string>{
                         dir / "out/largest_step.csv:create", dir / "out/largest_step.json:create",
                         dir / "out/recommended.toml:create", dir / "out/tune.csv:create",
                         dir / "out/tune.json:create"}))
      << joined(ev);
  EXPECT_TRUE(fs::is_empty(dir / "cwd"));
  EXPECT_TRUE(fs::is_empty(dir / "tmp"));
}

}  // namespace
