#pragma once
// A `cosim worker` child process that the master starts and owns (host = "process",
// docs/distributed.md): an FMU that crashes takes down the worker, not the master, which
// then ends the run with a safety stop and keeps its rows.
//
// Ownership: the child is ended and reaped on every path out of the owner (its destructor):
// after the master's stop command it gets a grace period to exit by itself, then SIGTERM
// (the worker stops its subsystem fail-safe), then SIGKILL. It runs in a process group of
// its own, so a terminal's Ctrl-C reaches the master only (which then stops the run in
// order); if the master dies without running destructors, the kernel sends the child
// SIGTERM (PR_SET_PDEATHSIG). Its stdout and stderr go, line by line with a prefix, to the
// master's stderr.
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace cosim::dds {

struct process_spec {
  std::string program;            // executable path given to execve
  std::string argv0;              // argv[0] the child sees (shown by ps); program if empty
  std::vector<std::string> args;  // after argv[0]
  std::vector<std::string> env;   // "KEY=VALUE": set or replaced in the child's environment
  std::string log_prefix;         // prefix of each of the child's output lines on stderr
};

class worker_process {
 public:
  /// Starts the child; throws cosim::error (errc::runtime) if it cannot be started (fork,
  /// pipe or execve failure, named with errno's text).
  explicit worker_process(const process_spec& spec);
  worker_process(const worker_process&) = delete;
  worker_process& operator=(const worker_process&) = delete;
  /// Ends (if still running) and reaps the child; joins the output thread.
  ~worker_process();

  [[nodiscard]] pid_t pid() const noexcept { return pid_; }

  /// True once the child has ended (it stays unreaped, its status kept, until the
  /// destructor). Non-blocking, no allocation: one waitid(2) system call.
  bool ended() noexcept;

  /// How it ended, for stop_source::raise's code: the signal number (1-255) if a signal
  /// ended it, 256 + the exit status if it exited; 0 while it runs.
  int stop_code() noexcept;

  /// "exited with status 2", "was killed by SIGSEGV (signal 11)", or "is running".
  std::string describe();

  /// The master sent its stop command: the worker ends by itself; the destructor waits up
  /// to `grace` for that before signalling it.
  void expect_exit(std::chrono::milliseconds grace) noexcept { grace_ms_ = grace.count(); }

 private:
  bool wait_ended(std::chrono::milliseconds d) noexcept;
  void forward_output() noexcept;

  pid_t pid_ = -1;
  int out_fd_ = -1;  // read end of the child's stdout/stderr pipe
  std::string prefix_;
  std::thread output_;
  std::atomic<int> code_{0};
  std::atomic<long long> grace_ms_{0};
};

/// Cyclone DDS configuration for a master and its local workers: the loopback interface
/// only, no multicast, discovery by unicast to 127.0.0.1 (nothing leaves the machine; works
/// without a network). For CYCLONEDDS_URI or remote_options::cyclone_config.
std::string loopback_config();

}  // namespace cosim::dds
