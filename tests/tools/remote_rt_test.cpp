// A realtime run at 1 kHz with a remote subsystem (docs/distributed.md): the crane with its
// hydraulics in a `cosim worker` on loopback completes its second of simulated time. Only
// completion is asserted (never timing); overruns on a loaded machine are allowed (the
// watchdog's limit is raised, as in bench_udp_rt_test.cpp).
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include "process_support.hpp"
#include "temp_dir.hpp"

namespace {

namespace proc = cosim::test_process;
using proc::field;
using namespace std::chrono_literals;

const std::string crane = COSIM_SOURCE_DIR "/rt_config/systems/crane_m1_fs.toml";

TEST(RemoteSubsystemRealtime, CraneAt1kHzWithHydraulicsInWorkerCompletes) {
  cosim::test::temp_dir dir;
  const std::string out = dir / "rt";
  const std::vector<std::string> sets{
      "--set", "subsystems.hyd.host=dds",
      "--set", "dds.partition=cosim-test-rt-" + std::to_string(::getpid()),
      "--set", "run.mode=realtime",
      "--set", "run.duration=1",
      "--set", "watchdog.max_overruns=1000000"};
  std::vector<std::string> w{COSIM_EXE, "worker", crane, "--subsystem", "hyd"};
  w.insert(w.end(), sets.begin(), sets.end());
  std::vector<std::string> m{COSIM_EXE, "run", crane, "--out", out};
  m.insert(m.end(), sets.begin(), sets.end());
  const pid_t worker = proc::spawn(w, dir / "w.out", dir / "w.err");
  const pid_t master = proc::spawn(m, dir / "m.out", dir / "m.err");
  EXPECT_EQ(proc::wait_exit(master, 120s), 0) << proc::slurp(dir / "m.err");
  EXPECT_EQ(proc::wait_exit(worker, 60s), 0) << proc::slurp(dir / "w.err");
  const std::string summary = proc::slurp(out + "/summary.json");
  EXPECT_EQ(field(summary, "status"), "completed");
  EXPECT_EQ(field(summary, "macro_steps"), "1000");
  EXPECT_EQ(field(summary, "round_trips"), "1004");  // initialize, update, start, 1000, stop
}

}  // namespace
