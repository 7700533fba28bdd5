// A `cosim worker` child owned by the master (worker_process.hpp).
#include "cosim/dds/worker_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "cosim/runtime/error.hpp"

extern char** environ;  // NOLINT(readability-redundant-declaration): POSIX, not in unistd.h

namespace cosim::dds {

namespace {

std::string errno_text(int e) {
  return std::string(strerrordesc_np(e) != nullptr ? strerrordesc_np(e) : "unknown error");
}

void close_fd(int& fd) noexcept {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// The child's environment: the master's, with spec.env's keys set or replaced.
std::vector<std::string> child_environment(const std::vector<std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string kv = *e;
    const std::string key = kv.substr(0, kv.find('=') + 1);
    bool replaced = false;
    for (const std::string& x : extra) replaced = replaced || x.rfind(key, 0) == 0;
    if (!replaced) env.push_back(kv);
  }
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

std::vector<char*> pointers(std::vector<std::string>& v) {
  std::vector<char*> p;
  p.reserve(v.size() + 1);
  for (std::string& s : v) p.push_back(s.data());
  p.push_back(nullptr);
  return p;
}

// In the child between fork and execve: async-signal-safe calls only (the master has
// threads). On failure the errno goes to the parent through `report` (close-on-exec: an
// execve that succeeds closes it, and the parent reads nothing).
[[noreturn]] void exec_child(const char* program, char* const* argv, char* const* envp, int out_fd,
                             int report, pid_t parent) noexcept {
  // A process group of its own: a terminal's SIGINT goes to the master, which then stops
  // the run in order and sends the worker its stop command.
  (void)::setpgid(0, 0);
  // The master dies without ending it (SIGKILL, a crash): the kernel ends the worker; it
  // stops its subsystem fail-safe on SIGTERM.
  if (::prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || ::getppid() != parent) ::_exit(127);
  sigset_t none;
  sigemptyset(&none);
  (void)::pthread_sigmask(SIG_SETMASK, &none, nullptr);  // the forked child has one thread
  const int null_in = ::open("/dev/null", O_RDONLY);
  if (null_in < 0 || ::dup2(null_in, STDIN_FILENO) < 0 || ::dup2(out_fd, STDOUT_FILENO) < 0 ||
      ::dup2(out_fd, STDERR_FILENO) < 0) {
    const int e = errno;
    (void)!::write(report, &e, sizeof e);
    ::_exit(127);
  }
  // Nothing else of the master's (sockets, result files) stays open in the worker.
  const auto r = static_cast<unsigned>(report);
  if (r > 3) (void)::close_range(3, r - 1, 0);
  (void)::close_range(r + 1, ~0U, 0);
  ::execve(program, argv, envp);
  const int e = errno;
  (void)!::write(report, &e, sizeof e);
  ::_exit(127);
}

}  // namespace

worker_process::worker_process(const process_spec& spec) : prefix_(spec.log_prefix) {
  std::vector<std::string> args;
  args.push_back(spec.argv0.empty() ? spec.program : spec.argv0);
  args.insert(args.end(), spec.args.begin(), spec.args.end());
  std::vector<std::string> env = child_environment(spec.env);
  const std::vector<char*> argv = pointers(args);
  const std::vector<char*> envp = pointers(env);
  int out[2] = {-1, -1};
  int report[2] = {-1, -1};
  if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(report, O_CLOEXEC) != 0) {
    const int e = errno;
    for (int fd : {out[0], out[1], report[0], report[1]})
      if (fd >= 0) ::close(fd);
    throw error(errc::runtime, "cannot start " + spec.program + ": pipe: " + errno_text(e));
  }
  const pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ == 0)
    exec_child(spec.program.c_str(), argv.data(), envp.data(), out[1], report[1], parent);
  const int fork_errno = errno;
  ::close(out[1]);
  ::close(report[1]);
  out_fd_ = out[0];
  if (pid_ < 0) {
    close_fd(out_fd_);
    ::close(report[0]);
    throw error(errc::runtime,
                "cannot start " + spec.program + ": fork: " + errno_text(fork_errno));
  }
  int child_errno = 0;
  ssize_t n = 0;
  do {
    n = ::read(report[0], &child_errno, sizeof child_errno);
  } while (n < 0 && errno == EINTR);
  ::close(report[0]);
  if (n > 0) {
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    close_fd(out_fd_);
    throw error(errc::runtime, "cannot start " + spec.program + ": " + errno_text(child_errno));
  }
  output_ = std::thread([this] { forward_output(); });
}

worker_process::~worker_process() {
  if (pid_ > 0) {
    if (!wait_ended(std::chrono::milliseconds(grace_ms_.load()))) {
      (void)::kill(pid_, SIGTERM);
      if (!wait_ended(std::chrono::milliseconds(2000))) (void)::kill(pid_, SIGKILL);
    }
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  // The pipe's write end closed with the child: the thread has read everything.
  if (output_.joinable()) output_.join();
  close_fd(out_fd_);
}

bool worker_process::ended() noexcept {
  if (code_.load(std::memory_order_acquire) != 0) return true;
  siginfo_t info{};
  if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0 ||
      info.si_pid != pid_)
    return false;
  code_.store(info.si_code == CLD_EXITED ? 256 + info.si_status : info.si_status,
              std::memory_order_release);
  return true;
}

int worker_process::stop_code() noexcept {
  (void)ended();
  return code_.load(std::memory_order_acquire);
}

std::string worker_process::describe() {
  const int c = stop_code();
  if (c == 0) return "is running";
  if (c >= 256) return "exited with status " + std::to_string(c - 256);
  const char* abbrev = sigabbrev_np(c);
  return "was killed by " + (abbrev != nullptr ? "SIG" + std::string(abbrev) : "a signal") +
         " (signal " + std::to_string(c) + ")";
}

bool worker_process::wait_ended(std::chrono::milliseconds d) noexcept {
  const auto until = std::chrono::steady_clock::now() + d;
  for (;;) {
    if (ended()) return true;
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

// The child's output, line by line with the prefix, each line one write(2) to stderr so
// that lines of the master and of several workers do not interleave within a line.
void worker_process::forward_output() noexcept {
  std::string line = prefix_;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(out_fd_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    for (ssize_t i = 0; i < n; ++i) {
      line += buf[i];
      if (buf[i] == '\n') {
        (void)!::write(STDERR_FILENO, line.data(), line.size());
        line = prefix_;
      }
    }
  }
  if (line.size() > prefix_.size()) {
    line += '\n';
    (void)!::write(STDERR_FILENO, line.data(), line.size());
  }
}

std::string loopback_config() {
  // ParticipantIndex auto with a larger range than Cyclone's default 10: every proxy has a
  // participant, and several runs may share the machine.
  return "<CycloneDDS><Domain><General><Interfaces><NetworkInterface name=\"lo\"/></Interfaces>"
         "<AllowMulticast>false</AllowMulticast></General><Discovery>"
         "<ParticipantIndex>auto</ParticipantIndex>"
         "<MaxAutoParticipantIndex>99</MaxAutoParticipantIndex>"
         "<Peers><Peer address=\"127.0.0.1\"/></Peers></Discovery></Domain></CycloneDDS>";
}

}  // namespace cosim::dds
