#include "cosim/runtime/rt_thread.hpp"

#include <gtest/gtest.h>
#include <linux/capability.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

#include "alloc_counter.hpp"

namespace cosim {
namespace {

struct observed_attributes {
  std::string name;
  int policy = -1;
  int priority = -1;
  int cpu = -1;
  std::size_t stack_size = 0;
};

observed_attributes observe_self() {
  observed_attributes seen;
  std::array<char, 32> name{};
  pthread_getname_np(pthread_self(), name.data(), name.size());
  seen.name = name.data();
  sched_param param{};
  pthread_getschedparam(pthread_self(), &seen.policy, &param);
  seen.priority = param.sched_priority;
  seen.cpu = sched_getcpu();
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    pthread_attr_getstacksize(&attr, &seen.stack_size);
    pthread_attr_destroy(&attr);
  }
  return seen;
}

TEST(RtThread, RunsTheBodyAndJoins) {
  std::atomic<int> runs{0};
  rt_thread thread({.name = "plain"}, [&] { runs.fetch_add(1); });
  EXPECT_TRUE(thread.joinable());
  thread.join();
  EXPECT_FALSE(thread.joinable());
  EXPECT_EQ(runs.load(), 1);
  EXPECT_THROW(thread.join(), std::system_error);
}

TEST(RtThread, DefaultConfigGrantsWhatWasAskedWithoutWarning) {
  observed_attributes seen;
  rt_thread thread({}, [&] { seen = observe_self(); });
  thread.join();
  EXPECT_EQ(thread.grant().cpu_requested, -1);
  EXPECT_EQ(thread.grant().cpu_granted, -1);
  EXPECT_EQ(thread.grant().priority_requested, 0);
  EXPECT_EQ(thread.grant().priority_granted, 0);
  EXPECT_TRUE(thread.grant().warning.empty()) << thread.grant().warning;
  EXPECT_EQ(seen.policy, SCHED_OTHER);
}

TEST(RtThread, NameIsTruncatedToFifteenCharacters) {
  observed_attributes seen;
  rt_thread thread({.name = "a-very-long-thread-name"}, [&] { seen = observe_self(); });
  thread.join();
  EXPECT_EQ(seen.name, "a-very-long-thr");
  EXPECT_TRUE(thread.grant().warning.empty()) << thread.grant().warning;
}

TEST(RtThread, StackSizeIsAtLeastTheRequestedSize) {
  observed_attributes seen;
  rt_thread thread({.name = "stack", .stack_size = std::size_t{1024} * 1024},
                   [&] { seen = observe_self(); });
  thread.join();
  EXPECT_GE(seen.stack_size, 1024u * 1024u);
}

TEST(RtThread, TinyStackRequestIsRoundedUpInsteadOfFailing) {
  std::atomic<bool> ran{false};
  rt_thread thread({.name = "tiny", .stack_size = 1}, [&] { ran = true; });
  thread.join();
  EXPECT_TRUE(ran.load());
}

TEST(RtThread, FifoPriorityIsEitherGrantedAndInEffectOrRefusedWithWarning) {
  observed_attributes seen;
  rt_thread thread({.name = "fifo", .priority = 10}, [&] { seen = observe_self(); });
  thread.join();
  const rt_thread_grant& grant = thread.grant();
  EXPECT_EQ(grant.priority_requested, 10);
  if (grant.priority_granted == 10) {
    EXPECT_EQ(seen.policy, SCHED_FIFO);
    EXPECT_EQ(seen.priority, 10);
    EXPECT_TRUE(grant.warning.empty()) << grant.warning;
  } else {
    EXPECT_EQ(grant.priority_granted, 0);
    EXPECT_EQ(seen.policy, SCHED_OTHER);
    EXPECT_NE(grant.warning.find("SCHED_FIFO"), std::string::npos) << grant.warning;
  }
}

TEST(RtThread, PriorityAboveMaximumIsClampedWithWarning) {
  rt_thread thread({.name = "clamp", .priority = 1000}, [] {});
  thread.join();
  EXPECT_NE(thread.grant().warning.find("clamped"), std::string::npos) << thread.grant().warning;
  EXPECT_LE(thread.grant().priority_granted, 99);
}

// Forked child (death-test machinery): without CAP_SYS_NICE and with RLIMIT_RTPRIO 0,
// SCHED_FIFO creation fails with EPERM and the thread must still run as SCHED_OTHER.
[[noreturn]] void run_without_rt_privilege() {
  const rlimit none{0, 0};
  if (setrlimit(RLIMIT_RTPRIO, &none) != 0) std::_Exit(10);
  __user_cap_header_struct header{};
  header.version = _LINUX_CAPABILITY_VERSION_3;
  header.pid = 0;
  std::array<__user_cap_data_struct, _LINUX_CAPABILITY_U32S_3> caps{};
  if (syscall(SYS_capget, &header, caps.data()) != 0) std::_Exit(11);
  // Clear CAP_SYS_NICE from effective, permitted and inheritable sets.
  caps[CAP_TO_INDEX(CAP_SYS_NICE)].effective &= ~CAP_TO_MASK(CAP_SYS_NICE);
  caps[CAP_TO_INDEX(CAP_SYS_NICE)].permitted &= ~CAP_TO_MASK(CAP_SYS_NICE);
  caps[CAP_TO_INDEX(CAP_SYS_NICE)].inheritable &= ~CAP_TO_MASK(CAP_SYS_NICE);
  if (syscall(SYS_capset, &header, caps.data()) != 0) std::_Exit(12);

  std::atomic<int> policy{-1};
  rt_thread thread({.name = "norights", .priority = 50}, [&] {
    int p = -1;
    sched_param param{};
    pthread_getschedparam(pthread_self(), &p, &param);
    policy = p;
  });
  thread.join();
  const rt_thread_grant& grant = thread.grant();
  if (grant.priority_requested != 50) std::_Exit(20);
  if (grant.priority_granted != 0) std::_Exit(21);
  if (grant.warning.find("refused") == std::string::npos) std::_Exit(22);
  if (policy.load() != SCHED_OTHER) std::_Exit(23);
  std::_Exit(0);
}

TEST(RtThreadDeathTest, RefusedFifoFallsBackToNormalThread) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(run_without_rt_privilege(), testing::ExitedWithCode(0), "");
}

TEST(RtThread, PinnedThreadRunsOnlyOnTheGrantedCpu) {
  const int cpu = online_cpu_count() - 1;
  std::array<int, 64> cpus{};
  rt_thread thread({.name = "pinned", .cpu = cpu}, [&] {
    for (int& c : cpus) {
      c = sched_getcpu();
      sched_yield();
    }
  });
  thread.join();
  const rt_thread_grant& grant = thread.grant();
  EXPECT_EQ(grant.cpu_requested, cpu);
  if (grant.cpu_granted == cpu) {
    for (int c : cpus) EXPECT_EQ(c, cpu);
  } else {
    // A restrictive cpuset can refuse; then the reason must be reported.
    EXPECT_EQ(grant.cpu_granted, -1);
    EXPECT_FALSE(grant.warning.empty());
  }
}

TEST(RtThread, NonexistentCpuIsReportedAndTheThreadStillRuns) {
  std::atomic<bool> ran{false};
  const int cpu = online_cpu_count() + 100;
  rt_thread thread({.name = "nocpu", .cpu = cpu}, [&] { ran = true; });
  thread.join();
  EXPECT_TRUE(ran.load());
  EXPECT_EQ(thread.grant().cpu_requested, cpu);
  EXPECT_EQ(thread.grant().cpu_granted, -1);
  EXPECT_NE(thread.grant().warning.find("not online"), std::string::npos) << thread.grant().warning;
}

TEST(RtThread, ExceptionFromBodyIsRethrownByJoin) {
  rt_thread thread({.name = "throws"}, [] { throw std::runtime_error("boom"); });
  EXPECT_THROW(thread.join(), std::runtime_error);
}

TEST(RtThread, DestructorJoinsAndMoveTransfersOwnership) {
  std::atomic<int> runs{0};
  {
    rt_thread first({.name = "m1"}, [&] { runs.fetch_add(1); });
    rt_thread second(std::move(first));
    // A moved-from rt_thread has a defined state: not joinable.
    // NOLINTNEXTLINE(bugprone-use-after-move,clang-analyzer-cplusplus.Move)
    EXPECT_FALSE(first.joinable());
    EXPECT_TRUE(second.joinable());
    rt_thread third({.name = "m3"}, [&] { runs.fetch_add(1); });
    third = std::move(second);  // joins third's original thread first
    EXPECT_TRUE(third.joinable());
  }
  EXPECT_EQ(runs.load(), 2);
}

TEST(RtHelpers, CpuQueries) {
  EXPECT_GE(online_cpu_count(), 1);
  EXPECT_TRUE(cpu_exists(0));
  EXPECT_TRUE(cpu_exists(online_cpu_count() - 1));
  EXPECT_FALSE(cpu_exists(-1));
  EXPECT_FALSE(cpu_exists(100'000));
}

TEST(RtHelpers, MonotonicClockAdvancesAndSleepUntilReachesDeadline) {
  const std::int64_t t0 = monotonic_now_ns();
  const std::int64_t deadline = t0 + 2'000'000;
  sleep_until_ns(deadline);
  const std::int64_t t1 = monotonic_now_ns();
  EXPECT_GE(t1, deadline);
  EXPECT_LT(t1 - deadline, 500'000'000) << "overslept by far more than scheduling noise";
  sleep_until_ns(t0);  // past deadline: returns at once
  sleep_until_ns(-5);  // nonsense deadline: returns at once
}

extern "C" void ignore_signal(int) {}

TEST(RtHelpers, SleepUntilRetriesAfterSignals) {
  struct sigaction action {};
  action.sa_handler = ignore_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;  // no SA_RESTART: the sleep really is interrupted with EINTR
  struct sigaction previous {};
  ASSERT_EQ(sigaction(SIGUSR1, &action, &previous), 0);

  std::atomic<bool> sleeping{false};
  std::atomic<pthread_t> sleeper_id{};
  std::atomic<std::int64_t> woke_late_by{-1};
  const std::int64_t deadline = monotonic_now_ns() + 100'000'000;
  rt_thread sleeper({.name = "sleeper"}, [&] {
    sleeper_id = pthread_self();
    sleeping = true;
    sleep_until_ns(deadline);
    woke_late_by = monotonic_now_ns() - deadline;
  });
  while (!sleeping) sched_yield();
  for (int i = 0; i < 20 && woke_late_by.load() < 0; ++i) {
    pthread_kill(sleeper_id.load(), SIGUSR1);
    usleep(2'000);
  }
  sleeper.join();
  sigaction(SIGUSR1, &previous, nullptr);
  EXPECT_GE(woke_late_by.load(), 0) << "woke before the deadline";
}

TEST(RtHelpers, LockMemoryReportsOutcome) {
  std::string why = "unchanged";
  const bool locked = lock_memory(why);
  if (locked) {
    EXPECT_TRUE(why.empty());
    munlockall();  // do not leave the whole test process locked
  } else {
    EXPECT_NE(why.find("mlockall"), std::string::npos) << why;
  }
}

// Uses 192 KiB of stack in its own frame, which lies below the caller's frame, i.e.
// inside the region prefault_stack() touched (a buffer in the caller's frame would sit
// above it and prove nothing).
[[gnu::noinline]] long faults_using_stack_after_prefault() {
  const long before = test::minor_faults_this_thread();
  constexpr std::size_t used = std::size_t{192} * 1024;
  volatile unsigned char buffer[used];  // NOLINT(modernize-avoid-c-arrays): volatile access
  for (std::size_t i = 0; i < used; i += 512) buffer[i] = static_cast<unsigned char>(i);
  unsigned sum = 0;
  for (std::size_t i = 0; i < used; i += 512) sum += buffer[i];
  (void)sum;
  return test::minor_faults_this_thread() - before;
}

TEST(RtHelpers, PrefaultedStackTakesNoPageFaultsLater) {
  long faults = -1;
  // 2 MiB: sanitizer runtimes put large static TLS blocks at the top of every thread
  // stack (ThreadSanitizer: ~800 KiB), which glibc takes out of the requested size.
  rt_thread thread({.name = "prefault", .stack_size = std::size_t{2} * 1024 * 1024}, [&] {
    prefault_stack(std::size_t{256} * 1024);
    faults = faults_using_stack_after_prefault();
  });
  thread.join();
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
  // Sanitizer shadow memory is faulted in on first use, after the prefault.
  EXPECT_GE(faults, 0);
#else
  EXPECT_EQ(faults, 0);
#endif
}

}  // namespace
}  // namespace cosim
