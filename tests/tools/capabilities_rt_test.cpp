// Real time without root (README, "Real time without root"): a copy of the cosim program with
// the file capabilities cap_sys_nice,cap_ipc_lock runs a realtime system as the unprivileged
// user nobody, with no RT priority and 64 KiB of lockable memory in its limits, and its
// summary.json shows SCHED_FIFO at the requested priority and locked memory. The same copy
// without the capabilities is refused (run.require_realtime). Needs root to set the
// capabilities and to become nobody: where that cannot be done the test fails, it does not
// skip (CI runs as root).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
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

const std::string crane = std::string(COSIM_SOURCE_DIR) + "/rt_config/scenarios/crane_m1_fs.toml";

TEST(FileCapabilities, UnprivilegedUserGetsSchedFifoAndLockedMemory) {
  ASSERT_EQ(::geteuid(), 0U) << "needs root to set file capabilities and switch to nobody";
  ASSERT_TRUE(fs::exists("/usr/sbin/setcap")) << "setcap (Debian libcap2-bin) is needed";
  ASSERT_TRUE(fs::exists("/usr/bin/setpriv")) << "setpriv (util-linux) is needed";
  temp_dir tmp;
  ASSERT_EQ(::chmod(tmp.path().c_str(), 0755), 0);
  const std::string plain = tmp / "cosim-plain", capable = tmp / "cosim";
  fs::copy_file(COSIM_EXE, plain);
  fs::copy_file(COSIM_EXE, capable);
  const std::string out = tmp / "out";
  fs::create_directory(out);
  ASSERT_EQ(::chmod(out.c_str(), 0777), 0);
  ASSERT_EQ(std::system(("/usr/sbin/setcap cap_sys_nice,cap_ipc_lock+ep '" + capable + "' 2>'" +
                         (tmp / "setcap.err") + "'")
                            .c_str()),
            0)
      << "setcap failed: " << proc::slurp(tmp / "setcap.err");

  // Both subsystem threads at SCHED_FIFO 80, pinned; refuse to start without them.
  const std::string sets =
      " run '" + crane +
      "' --set run.mode=realtime --set run.require_realtime=true --set run.duration=0.2"
      " --set threads.multibody.priority=80 --set threads.hydraulics.priority=80"
      " --set threads.multibody.cpu=0"
      " --set watchdog.max_overruns=1000 --quiet --out '" +
      out + "'";
  // nobody, no capabilities inherited, no RT priority, 64 KiB of lockable memory.
  const std::string as_nobody =
      "ulimit -r 0; ulimit -l 64; exec /usr/bin/setpriv --reuid=65534 --regid=65534 "
      "--clear-groups --inh-caps=-all ";

  // Without the capabilities: refused, nothing written.
  EXPECT_EQ(proc::wait_exit(proc::spawn({"/bin/sh", "-c", as_nobody + "'" + plain + "'" + sets},
                                        tmp / "o1", tmp / "e1"),
                            60s),
            2)
      << proc::slurp(tmp / "e1");
  EXPECT_NE(proc::slurp(tmp / "e1").find("SCHED_FIFO priority 80 refused"), std::string::npos)
      << proc::slurp(tmp / "e1");
  EXPECT_FALSE(fs::exists(out + "/summary.json"));

  // With them: granted.
  ASSERT_EQ(proc::wait_exit(proc::spawn({"/bin/sh", "-c", as_nobody + "'" + capable + "'" + sets},
                                        tmp / "o2", tmp / "e2"),
                            60s),
            0)
      << proc::slurp(tmp / "e2");
  const std::string summary = proc::slurp(out + "/summary.json");
  EXPECT_NE(summary.find("\"memory_locked\": true"), std::string::npos) << summary;
  EXPECT_NE(summary.find("\"realtime\": {\n    \"required\": true,\n    \"granted\": true"),
            std::string::npos)
      << summary;
  std::size_t granted = 0;
  for (std::size_t p = summary.find("\"priority_granted\": 80"); p != std::string::npos;
       p = summary.find("\"priority_granted\": 80", p + 1))
    ++granted;
  EXPECT_EQ(granted, 2U) << summary;
  // The run was the user nobody's: the results belong to it.
  struct stat st {};
  ASSERT_EQ(::stat((out + "/summary.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 65534U);
}

}  // namespace
