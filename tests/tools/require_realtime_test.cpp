// run.require_realtime (docs/realtime.md): a realtime run that cannot have SCHED_FIFO at its
// threads' priorities, their CPUs and locked memory refuses to start (exit 2) before the
// results folder is touched; with them (root) it runs and summary.json says they were
// granted, and the one-line result gives the deadline misses and the worst wake-up latency.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "process_support.hpp"
#include "temp_dir.hpp"

namespace {

namespace fs = std::filesystem;
namespace proc = cosim::test_process;
using cosim::test::temp_dir;
using namespace std::chrono_literals;

const std::string exe = COSIM_EXE;
const std::string crane = std::string(COSIM_SOURCE_DIR) + "/rt_config/scenarios/crane_m1_fs.toml";

// Every subsystem thread at SCHED_FIFO 80, one pinned: what require_realtime asks for.
const std::vector<std::string> realtime_sets{"--set", "run.mode=realtime",
                                             "--set", "run.require_realtime=true",
                                             "--set", "run.duration=0.2",
                                             "--set", "threads.multibody.priority=80",
                                             "--set", "threads.hydraulics.priority=80",
                                             "--set", "threads.multibody.cpu=0"};

std::string command_line(const std::vector<std::string>& args) {
  std::string s;
  for (const std::string& a : args) s += " '" + a + "'";
  return s;
}

TEST(RequireRealtime, RefusedWithoutPrivilegesBeforeTheResultsFolderIsTouched) {
  temp_dir tmp;
  // The folder of an earlier run, writable by anyone: a run that touched it would show.
  const std::string out = tmp / "out";
  std::vector<std::string> first{exe, "run", crane, "--set", "run.duration=0.1", "--out", out};
  ASSERT_EQ(proc::wait_exit(proc::spawn(first, tmp / "o1", tmp / "e1"), 60s), 0)
      << proc::slurp(tmp / "e1");
  ASSERT_EQ(::chmod(tmp.path().c_str(), 0755), 0);
  ASSERT_EQ(::chmod(out.c_str(), 0777), 0);
  std::vector<std::pair<std::string, std::string>> before;
  for (const auto& e : fs::directory_iterator(out)) {
    ASSERT_EQ(::chmod(e.path().c_str(), 0666), 0);
    before.emplace_back(e.path().string(), proc::slurp(e.path().string()));
  }
  const auto mtime = fs::last_write_time(out + "/results.csv");

  std::vector<std::string> run{exe, "run", crane, "--out", out};
  run.insert(run.end(), realtime_sets.begin(), realtime_sets.end());
  // No RT priority and 64 KiB of lockable memory; as root, also no capabilities (the user
  // nobody: setpriv from util-linux, which Debian always installs).
  std::string cmd = "ulimit -r 0; ulimit -l 64; exec";
  if (::geteuid() == 0) {
    ASSERT_TRUE(fs::exists("/usr/bin/setpriv")) << "setpriv (util-linux) is needed";
    // A process that changed its user is not dumpable: LeakSanitizer cannot attach to it.
    proc::add_sanitizer_option("detect_leaks=0");
    cmd += " /usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups";
  }
  cmd += command_line(run);
  const pid_t pid = proc::spawn({"/bin/sh", "-c", cmd}, tmp / "o2", tmp / "e2");
  EXPECT_EQ(proc::wait_exit(pid, 60s), 2);
  const std::string err = proc::slurp(tmp / "e2");
  EXPECT_NE(err.find("run.require_realtime = true"), std::string::npos) << err;
  EXPECT_NE(err.find("SCHED_FIFO priority 80 refused"), std::string::npos) << err;
  EXPECT_NE(err.find("threads.multibody (priority 80, CPU 0)"), std::string::npos) << err;
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
  // The sanitizers replace mlockall by a no-op that succeeds: only a plain build can see it
  // refused.
  EXPECT_NE(err.find("locked memory: mlockall"), std::string::npos) << err;
#endif
  // Every file as it was, none added.
  std::size_t files = 0;
  for (const auto& e : fs::directory_iterator(out)) {
    (void)e;
    ++files;
  }
  EXPECT_EQ(files, before.size());
  for (const auto& [path, text] : before) EXPECT_EQ(proc::slurp(path), text) << path;
  EXPECT_EQ(fs::last_write_time(out + "/results.csv"), mtime);
}

TEST(RequireRealtime, SchedulingKeysMustBeSetForEverySubsystemThread) {
  temp_dir tmp;
  std::vector<std::string> run{exe,
                               "run",
                               crane,
                               "--set",
                               "run.mode=realtime",
                               "--set",
                               "run.require_realtime=true",
                               "--out",
                               tmp / "out"};
  EXPECT_EQ(proc::wait_exit(proc::spawn(run, tmp / "o", tmp / "e"), 60s), 2);
  const std::string err = proc::slurp(tmp / "e");
  EXPECT_NE(err.find("threads.hydraulics.priority, threads.multibody.priority"), std::string::npos)
      << err;
  EXPECT_FALSE(fs::exists(tmp / "out"));
  run[4] = "run.mode=threaded";
  EXPECT_EQ(proc::wait_exit(proc::spawn(run, tmp / "o", tmp / "e"), 60s), 2);
  EXPECT_NE(proc::slurp(tmp / "e").find("needs run.mode = \"realtime\""), std::string::npos);
}

TEST(RequireRealtime, AcceptedAsRootAndTheResultLineGivesMissesAndLatency) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (SCHED_FIFO, mlockall): not root here";
  temp_dir tmp;
  const std::string out = tmp / "out";
  std::vector<std::string> run{exe, "run", crane, "--out", out};
  run.insert(run.end(), realtime_sets.begin(), realtime_sets.end());
  ASSERT_EQ(proc::wait_exit(proc::spawn(run, tmp / "o", tmp / "e"), 60s), 0)
      << proc::slurp(tmp / "e");
  const std::string summary = proc::slurp(out + "/summary.json");
  EXPECT_NE(summary.find("\"realtime\": {\n    \"required\": true,\n    \"granted\": true"),
            std::string::npos)
      << summary;
  EXPECT_NE(summary.find("\"memory_locked\": true"), std::string::npos);
  EXPECT_NE(summary.find("\"priority_granted\": 80"), std::string::npos);
  const std::string line = proc::slurp(tmp / "o");
  EXPECT_NE(line.find(" deadline miss"), std::string::npos) << line;
  EXPECT_NE(line.find(", worst wake-up latency "), std::string::npos) << line;
}

}  // namespace
