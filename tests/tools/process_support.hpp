#pragma once
// The cosim program as a child process the test controls (sweep_test.cpp, tune_test.cpp):
// started in the background so that it can be signalled once it has made progress, or with
// a pseudo-terminal as stderr so that it sees a terminal (isatty) as a user's shell gives it.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace cosim::test_process {

inline std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

namespace detail {
inline std::vector<char*> argv_of(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  return argv;
}
}  // namespace detail

/// Adds `option` (e.g. "detect_leaks=0") to ASAN_OPTIONS for the children this test
/// process starts from now on. In sanitizer builds some children need it: LeakSanitizer
/// cannot run under ptrace (strace) or in a process that changed its user (it is no longer
/// dumpable), and AddressSanitizer's own SIGSEGV handler would end a crash test's child with
/// its report and abort() instead of the program's handler. Harmless in other builds.
inline void add_sanitizer_option(const std::string& option) {
  const char* old = ::getenv("ASAN_OPTIONS");
  const std::string value =
      (old != nullptr && *old != '\0') ? std::string(old) + ":" + option : option;
  // NOLINTNEXTLINE(concurrency-mt-unsafe): set before the test starts the child; no thread reads it
  ::setenv("ASAN_OPTIONS", value.c_str(), 1);
}

/// Starts args[0] (a path) with args, stdout and stderr into the files given.
inline pid_t spawn(const std::vector<std::string>& args, const std::string& out_path,
                   const std::string& err_path) {
  const std::vector<char*> argv = detail::argv_of(args);
  const pid_t pid = fork();
  if (pid == 0) {
    // Only async-signal-safe calls between fork and exec (the test process has threads).
    const int o = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (o < 0 || e < 0 || dup2(o, STDOUT_FILENO) < 0 || dup2(e, STDERR_FILENO) < 0) _exit(127);
    execv(argv[0], argv.data());
    _exit(127);
  }
  EXPECT_GT(pid, 0) << "fork failed";
  return pid;
}

/// The exit code of `pid` (128 + signal if a signal ended it), or -1 if it did not end
/// within `timeout`; then it is killed.
inline int wait_exit(pid_t pid, std::chrono::seconds timeout) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  for (;;) {
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (r < 0) return -1;
    if (std::chrono::steady_clock::now() > end) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

/// Polls `done()` every 5 ms for up to `timeout`; whether it came true. Gives up early if
/// `pid` ends (a child that ended cannot make more progress).
template <class F>
bool wait_for(pid_t pid, F done, std::chrono::seconds timeout) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    siginfo_t info{};
    if (waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
        info.si_pid == pid)
      return done();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

struct pty_result {
  int code = -1;
  std::string terminal;  // what the program wrote to stderr (the terminal)
};

/// Runs args[0] with stderr on a pseudo-terminal and stdout into `out_path`.
inline pty_result run_on_pty(const std::vector<std::string>& args, const std::string& out_path,
                             std::chrono::seconds timeout) {
  pty_result r;
  const int master = posix_openpt(O_RDWR | O_NOCTTY);
  if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0) {
    ADD_FAILURE() << "no pseudo-terminal: errno " << errno;
    return r;
  }
  char slave[128];
  if (ptsname_r(master, slave, sizeof slave) != 0) {
    ADD_FAILURE() << "ptsname_r: errno " << errno;
    close(master);
    return r;
  }
  const std::vector<char*> argv = detail::argv_of(args);
  const pid_t pid = fork();
  if (pid == 0) {
    setsid();
    const int s = open(slave, O_RDWR);
    const int o = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (s < 0 || o < 0 || dup2(o, STDOUT_FILENO) < 0 || dup2(s, STDERR_FILENO) < 0) _exit(127);
    close(master);
    execv(argv[0], argv.data());
    _exit(127);
  }
  // Read until the child's side closes (EIO on Linux), so nothing it wrote is lost.
  const auto end = std::chrono::steady_clock::now() + timeout;
  char buf[4096];
  while (std::chrono::steady_clock::now() < end) {
    pollfd p{master, POLLIN, 0};
    if (poll(&p, 1, 50) <= 0) continue;
    const ssize_t n = read(master, buf, sizeof buf);
    if (n <= 0) break;
    r.terminal.append(buf, static_cast<std::size_t>(n));
  }
  r.code = wait_exit(pid, std::chrono::seconds(5));
  close(master);
  return r;
}

/// `a` followed by `more`: a command line with extra arguments.
inline std::vector<std::string> args(std::vector<std::string> a,
                                     const std::vector<std::string>& more) {
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

/// The value of "key" in summary.json text (strings without their quotes); empty if absent.
/// Enough for the flat fields the CLI tests read, not a JSON parser.
inline std::string field(const std::string& json, const std::string& key) {
  const auto k = json.find("\"" + key + "\":");
  if (k == std::string::npos) return {};
  const auto v = json.find_first_not_of(' ', k + key.size() + 3);
  std::string s = json.substr(v, json.find_first_of(",}\n", v) - v);
  if (!s.empty() && s.front() == '"') s = s.substr(1, s.size() - 2);
  return s;
}

}  // namespace cosim::test_process
