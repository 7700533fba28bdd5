// host = "process" (docs/distributed.md): the master starts a `cosim worker` child for the
// subsystem and owns it. End to end from the command line: an FMU that crashes mid-run
// (tests/fmus/crash, crash_in 3/4) takes down the worker, not the master, which ends in the
// documented safety stop with the rows up to the crash (stop_time_s the last row's); one that
// crashes in its initialisation (crash_in 1/2) does so in the worker too; the crane's hydraulics
// FMU in a worker process gives results.csv byte-identical to the all-local run; no worker survives
// its master; a misspelt host is refused naming file, key and value.
#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../tools/process_support.hpp"
#include "temp_dir.hpp"

namespace {

using cosim::test::temp_dir;
namespace fs = std::filesystem;

using cosim::test_process::field;
using cosim::test_process::slurp;

struct result {
  int code = -1;
  std::string out, err;
};

result cosim(const temp_dir& dir, const std::string& args) {
  const std::string cmd = "cd '" + dir.path() + "' && '" + std::string(COSIM_EXE) + "' " + args +
                          " >'" + (dir / ".stdout") + "' 2>'" + (dir / ".stderr") + "'";
  const int status = std::system(cmd.c_str());
  result r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(dir / ".stdout");
  r.err = slurp(dir / ".stderr");
  return r;
}

// Processes whose command line mentions `text` (a test's temporary folder): a worker
// that outlived its master would be one.
int processes_mentioning(const std::string& text) {
  int n = 0;
  DIR* d = opendir("/proc");
  if (d == nullptr) return -1;
  while (const dirent* e = readdir(d)) {
    if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
    std::ifstream in(std::string("/proc/") + e->d_name + "/cmdline");
    std::stringstream ss;
    ss << in.rdbuf();
    if (ss.str().find(text) != std::string::npos) ++n;
  }
  closedir(d);
  return n;
}

const std::string fmus = COSIM_TEST_FMU_DIR;

// The crash FMU alone: y = t until the first doStep ending after crash_at, which crashes.
std::string crash_system(int crash_in, const std::string& host) {
  return "[run]\nduration = 1.0\nmacro_step = 0.01\n[subsystems.c]\nfmu = \"" + fmus +
         "/crash_fmi2.fmu\"\nhost = \"" + host +
         "\"\nparameters = { crash_in = " + std::to_string(crash_in) + ", crash_at = 0.505 }\n" +
         "[output]\nrecord = [{ ref = \"c.y\", as = \"y\" }]\n";
}

void expect_crash_stops_safely(int crash_in, const std::string& signal) {
  SCOPED_TRACE("crash_in = " + std::to_string(crash_in));
  temp_dir dir;
  (void)dir.file("system.toml", crash_system(crash_in, "process"));
  const result r = cosim(dir, "run system.toml --out res");
  // Exit 1: a safety stop with results kept, not the master's death by the signal.
  EXPECT_EQ(r.code, 1) << r.err;
  const std::string summary = slurp(dir / "res/summary.json");
  EXPECT_EQ(field(summary, "status"), "safety_stop") << summary;
  EXPECT_EQ(field(summary, "stop_reason"), "remote_lost") << summary;
  EXPECT_NE(field(summary, "message").find("its worker process " + signal), std::string::npos)
      << summary;
  EXPECT_NE(field(summary, "worker_process").find(signal), std::string::npos) << summary;
  // The rows up to the crash: the steps ending at 0.01 .. 0.50 s (the one ending at 0.51 s
  // > crash_at crashed), each with y = t, the FMU's closed form.
  std::ifstream csv(dir / "res/results.csv");
  std::string line;
  ASSERT_TRUE(std::getline(csv, line));  // header: t, then y (as recorded), ...
  ASSERT_EQ(line.rfind("t,y,", 0), 0U) << line;
  int rows = 0;
  double t = -1.0, y = -1.0;
  while (std::getline(csv, line)) {
    std::istringstream ls(line);
    char comma = 0;
    ls >> t >> comma >> y;
    EXPECT_DOUBLE_EQ(y, t) << line;
    ++rows;
  }
  EXPECT_NEAR(t, 0.50, 1e-12);
  // The crashed step did not complete: the run stopped at its start, the last row.
  EXPECT_EQ(std::stod(field(summary, "stop_time_s")), t) << summary;
  EXPECT_EQ(std::to_string(rows), field(summary, "rows"));
  EXPECT_GE(rows, 50);
  // The worker's own output reached the master's stderr, prefixed.
  EXPECT_NE(r.err.find("[worker c] worker: serving c"), std::string::npos) << r.err;
  EXPECT_EQ(processes_mentioning(dir.path()), 0);
}

TEST(ProcessHost, CrashingFmuEndsInRemoteLostWithRowsKept) {
#ifdef COSIM_SANITIZED
  // Under ASan the worker's own SIGSEGV handler reports the fault and ends the process its
  // way (abort, or exit 1 without abort_on_error): the cause is still named, the signal not.
  expect_crash_stops_safely(3, "");
#else
  expect_crash_stops_safely(3, "was killed by SIGSEGV");
#endif
  expect_crash_stops_safely(4, "was killed by SIGABRT");
}

// The FMU's whole life is in the worker: one that crashes while it is initialised
// (crash_in 1: a null-pointer write, 2: abort(), in fmi2ExitInitializationMode) takes down the
// worker, whose crash guard names it, not the master, which reports the lost worker before the
// results folder is touched (exit 2, as for a local FMU failing there).
TEST(ProcessHost, FmuCrashingInInitialisationTakesDownOnlyTheWorker) {
  for (const int crash_in : {1, 2}) {
    SCOPED_TRACE("crash_in = " + std::to_string(crash_in));
    temp_dir dir;
    (void)dir.file("system.toml", crash_system(crash_in, "process"));
    const result r = cosim(dir, "run system.toml --out res");
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find("[worker c] cosim: error: FMU " + fmus +
                         "/crash_fmi2.fmu crashed in initialisation"),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("its worker process exited with status 2 before it answered"),
              std::string::npos)
        << r.err;
    EXPECT_FALSE(fs::exists(dir / "res"));
    EXPECT_EQ(processes_mentioning(dir.path()), 0);
  }
}

TEST(ProcessHost, CraneHydraulicsFmuInProcessIsByteIdenticalToLocal) {
  temp_dir dir;
  std::string sys = slurp(COSIM_SOURCE_DIR "/rt_config/systems/crane_m1_fs_fmu.toml");
  const std::string rel = "../../build/tests/fmus";
  for (auto p = sys.find(rel); p != std::string::npos; p = sys.find(rel))
    sys.replace(p, rel.size(), fmus);
  (void)dir.file("crane.toml", sys);
  const result local = cosim(dir, "run crane.toml --set run.duration=0.5 --out local");
  ASSERT_EQ(local.code, 0) << local.err;
  const result remote = cosim(
      dir, "run crane.toml --set run.duration=0.5 --set subsystems.hyd.host=process --out remote");
  ASSERT_EQ(remote.code, 0) << remote.err;
  const std::string summary = slurp(dir / "remote/summary.json");
  EXPECT_EQ(field(summary, "stop_reason"), "end_time");
  EXPECT_EQ(field(summary, "host"), "process") << summary;
  EXPECT_EQ(field(summary, "round_trips"), "504") << summary;  // + initialize, t0, start, stop
  const std::string a = slurp(dir / "local/results.csv");
  ASSERT_GT(a.size(), 1000U);
  EXPECT_TRUE(a == slurp(dir / "remote/results.csv"))
      << "results.csv differs between local and out-of-process hydraulics";
  EXPECT_EQ(processes_mentioning(dir.path()), 0);
}

TEST(ProcessHost, MisspeltHostIsRefusedNamingFileKeyAndValue) {
  temp_dir dir;
  (void)dir.file("system.toml", crash_system(0, "proces"));
  const result r = cosim(dir, "run system.toml --out res");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("system.toml"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("subsystems.c.host"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("proces"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("one of: local, dds, process"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "res"));
}

}  // namespace
