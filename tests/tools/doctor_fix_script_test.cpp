// `cosim doctor --fix-script`: the commands printed for a machine laid out below a directory
// like /proc and /sys (a stock kernel, nothing isolated, throttling on, a power-saving
// governor, IRQs on the real-time CPU, no rights), and nothing for a machine already set up.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "doctor.hpp"
#include "process_support.hpp"
#include "temp_dir.hpp"

namespace {

using cosim::test::temp_dir;
namespace fs = std::filesystem;
namespace doctor = cosim::cli::doctor;

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

const std::string no_caps =
    "Name:\tcosim\nCapInh:\t0000000000000000\nCapPrm:\t0000000000000000\n"
    "CapEff:\t0000000000000000\n";
const std::string low_limits =
    "Limit                     Soft Limit           Hard Limit           Units\n"
    "Max locked memory         8388608              8388608              bytes\n"
    "Max realtime priority     0                    0                    \n";

// A stock 2-CPU machine; CPU 1 is to become the real-time CPU.
void stock_machine(const fs::path& r) {
  write(r / "proc/sys/kernel/hostname", "bench-3\n");
  write(r / "proc/sys/kernel/osrelease", "6.1.0-18-amd64\n");
  write(r / "proc/sys/kernel/version", "#1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1\n");
  write(r / "proc/cmdline", "BOOT_IMAGE=/vmlinuz root=/dev/vda1 ro quiet\n");
  write(r / "proc/sys/kernel/sched_rt_runtime_us", "950000\n");
  write(r / "proc/sys/kernel/sched_rt_period_us", "1000000\n");
  write(r / "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "powersave\n");
  write(r / "sys/devices/system/cpu/cpu1/cpufreq/scaling_governor", "schedutil\n");
  write(r / "proc/irq/0/smp_affinity", "3\n");   // CPUs 0 and 1
  write(r / "proc/irq/1/smp_affinity", "1\n");   // CPU 0 only
  write(r / "proc/irq/24/smp_affinity", "2\n");  // CPU 1 only
  write(r / "proc/self/status", no_caps);
  write(r / "proc/self/limits", low_limits);
}

bool has(const std::string& text, const std::string& line) {
  return text.find(line) != std::string::npos;
}

TEST(DoctorFixScript, StockMachineGetsEveryCommand) {
  temp_dir root;
  stock_machine(root.path());
  const std::string s = doctor::fix_script(root.path(), {1}, 2, 80, "/opt/cosim/bin/cosim");
  EXPECT_EQ(s.rfind("#!/bin/sh\n", 0), 0U) << s;
  EXPECT_TRUE(has(s, "for bench-3 (kernel 6.1.0-18-amd64), real-time CPUs 1, SCHED_FIFO 80")) << s;
  EXPECT_TRUE(has(s, "apt-get install -y linux-image-rt-amd64\n")) << s;
  EXPECT_TRUE(has(s,
                  "sed -i 's/^GRUB_CMDLINE_LINUX=\"\\(.*\\)\"/GRUB_CMDLINE_LINUX=\"\\1 isolcpus=1 "
                  "nohz_full=1 rcu_nocbs=1 irqaffinity=0\"/' /etc/default/grub\nupdate-grub\n"))
      << s;
  EXPECT_TRUE(has(s, "sysctl -w kernel.sched_rt_runtime_us=-1\n")) << s;
  EXPECT_TRUE(has(s, "echo performance > /sys/devices/system/cpu/cpu1/cpufreq/scaling_governor"))
      << s;
  // CPU 0 is no real-time CPU: its governor stays.
  EXPECT_FALSE(has(s, "cpu0/cpufreq")) << s;
  // IRQs 0 and 24 reach CPU 1, IRQ 1 does not.
  EXPECT_TRUE(has(s, "for irq in 0 24; do\n  echo 0 > /proc/irq/$irq/smp_affinity_list")) << s;
  EXPECT_TRUE(has(s, "setcap cap_sys_nice,cap_ipc_lock+ep '/opt/cosim/bin/cosim'\n")) << s;
  EXPECT_TRUE(has(s, "#   LimitRTPRIO=80\n#   LimitMEMLOCK=infinity\n")) << s;
  EXPECT_FALSE(has(s, "Nothing to change")) << s;

  // The script is valid shell (parsed, not run).
  const std::string file = root.file("fix.sh", s);
  EXPECT_EQ(std::system(("sh -n '" + file + "'").c_str()), 0);
}

TEST(DoctorFixScript, ReadyMachineGetsNothing) {
  temp_dir root;
  const fs::path r = root.path();
  stock_machine(r);
  write(r / "proc/sys/kernel/version", "#1 SMP PREEMPT_RT Debian 6.1.76-1\n");
  write(r / "proc/cmdline", "ro isolcpus=1 nohz_full=1 rcu_nocbs=1 irqaffinity=0\n");
  write(r / "proc/sys/kernel/sched_rt_runtime_us", "-1\n");
  write(r / "sys/devices/system/cpu/cpu1/cpufreq/scaling_governor", "performance\n");
  write(r / "proc/irq/0/smp_affinity", "1\n");
  write(r / "proc/irq/24/smp_affinity", "1\n");
  // CAP_SYS_NICE (bit 23) and CAP_IPC_LOCK (bit 14): 0x804000.
  write(r / "proc/self/status", "CapEff:\t0000000000804000\n");
  const std::string s = doctor::fix_script(r, {1}, 2, 80, "/usr/bin/cosim");
  EXPECT_TRUE(has(s, "# Nothing to change: every check passed.\n")) << s;
  for (const char* absent :
       {"apt-get", "update-grub", "sysctl", "echo performance", "for irq", "setcap"})
    EXPECT_FALSE(has(s, absent)) << absent << " in\n" << s;
}

TEST(DoctorFixScript, CommandPrintsWithoutMeasuring) {
  temp_dir dir;
  const std::string out = dir / "out", err = dir / "err";
  const int status =
      std::system(("'" COSIM_EXE "' doctor --fix-script >'" + out + "' 2>'" + err + "'").c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  const std::string s = cosim::test_process::slurp(out);
  EXPECT_EQ(s.rfind("#!/bin/sh\n", 0), 0U) << s;
  EXPECT_TRUE(has(s, "Nothing here has been run")) << s;
  EXPECT_FALSE(has(cosim::test_process::slurp(err), "measuring"))
      << cosim::test_process::slurp(err);
}

}  // namespace
