// cosim-device as a user runs it: the exit codes of cosim (0 done, 2 bad input, command-line
// errors included), rates and durations it cannot honour refused with the option, the value
// and the allowed range named, and a stalled joystick that resumes on its period grid
// instead of sending the missed periods in a burst.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cosim/drivers/bench_protocol.hpp"
#include "temp_dir.hpp"

namespace {

using cosim::test::temp_dir;
using namespace cosim::drivers;

const std::string device_exe = std::string(COSIM_BINARY_DIR) + "/tools/device/cosim-device";

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct result {
  int code = -1;
  std::string out, err;
};

/// Runs `cosim-device ARGS`, at most 30 s: a device that does not stop gives timeout's 124.
result device(const temp_dir& dir, const std::string& args) {
  const std::string cmd = "timeout 30 '" + device_exe + "' " + args + " >'" + (dir / ".stdout") +
                          "' 2>'" + (dir / ".stderr") + "'";
  const int status = std::system(cmd.c_str());
  result r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(dir / ".stdout");
  r.err = slurp(dir / ".stderr");
  return r;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

/// A UDP socket on 127.0.0.1 at a free port, receiving the joystick's datagrams.
struct receiver {
  int fd = -1;
  int port = 0;
  receiver() {
    fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    port = ntohs(a.sin_port);
  }
  receiver(const receiver&) = delete;
  receiver& operator=(const receiver&) = delete;
  ~receiver() { ::close(fd); }
  [[nodiscard]] std::string address() const { return "127.0.0.1:" + std::to_string(port); }
  /// Channel 0 of every command datagram that arrives within timeout_ms.
  void receive(std::vector<double>& kappa, int timeout_ms) const {
    pollfd p{fd, POLLIN, 0};
    while (::poll(&p, 1, timeout_ms) > 0) {
      std::array<std::byte, 2048> buf{};
      const ssize_t n = ::recv(fd, buf.data(), buf.size(), 0);
      bench_message m{};
      if (n > 0 &&
          decode(std::span<const std::byte>(buf.data(), static_cast<std::size_t>(n)), m) ==
              decode_status::ok &&
          m.type == message_type::command && m.channel_count >= 1)
        kappa.push_back(m.channels[0]);
      timeout_ms = 0;  // drain what is queued, then return
    }
  }
};

// Version 1 (the receivers here decode it); bench_udp_rt_test.cpp runs the authenticated one.
const std::string joystick = "joystick --auth none --to 127.0.0.1:9 --manoeuvre M1 ";

TEST(DeviceCli, RefusesRatesItCannotKeep) {
  temp_dir dir;
  // 1e9 used to run for minutes "catching up"; the others are outside (0, 10 kHz] or not
  // numbers at all (NaN passes CLI11's own range check).
  for (const std::string rate : {"1e9", "20000", "0", "-5", "nan", "inf"}) {
    const result r = device(dir, joystick + "--duration 0.2 --rate=" + rate);
    EXPECT_EQ(r.code, 2) << rate << ": " << r.err;
    EXPECT_TRUE(contains(r.err, "--rate: " + rate + ": must be a finite number in [0.1, 10000] Hz"))
        << r.err;
  }
}

TEST(DeviceCli, RefusesNegativeAndNonFiniteDurations) {
  temp_dir dir;
  for (const std::string d : {"-1", "0", "inf", "nan", "1e20"}) {
    const result j = device(dir, joystick + "--duration=" + d);
    EXPECT_EQ(j.code, 2) << "joystick " << d << ": " << j.err;
    EXPECT_TRUE(contains(j.err, "--duration: " + d + ": must be a finite number in (0, 1e+06] s"))
        << j.err;
    // The valve ran forever with --duration -1.
    const result v = device(dir, "valve --listen 127.0.0.1:0 --duration=" + d);
    EXPECT_EQ(v.code, 2) << "valve " << d << ": " << v.err;
    EXPECT_TRUE(contains(v.err, "--duration: " + d + ": must be a finite number in (0, 1e+06] s"))
        << v.err;
  }
  for (const std::string opt : {"--sync-timeout=-1", "--silent-after=nan", "--loss=nan"}) {
    const result r = device(dir, joystick + opt);
    EXPECT_EQ(r.code, 2) << opt << ": " << r.err;
    EXPECT_TRUE(contains(r.err, opt.substr(0, opt.find('=')) + ": ")) << r.err;
  }
}

TEST(DeviceCli, CommandLineErrorsExitTwoLikeCosim) {
  temp_dir dir;
  EXPECT_EQ(device(dir, "").code, 2);                                    // no subcommand
  EXPECT_EQ(device(dir, "joystick --manoeuvre M1").code, 2);             // --to missing (106)
  EXPECT_EQ(device(dir, "valve --listen 127.0.0.1:0 --bogus").code, 2);  // unknown option
  EXPECT_EQ(device(dir, "joystick --to nowhere --manoeuvre M1").code, 2);
  EXPECT_EQ(device(dir, "--help").code, 0);
  // An unknown manoeuvre lists every choice, hold included.
  const result m =
      device(dir, "joystick --auth none --to 127.0.0.1:9 --manoeuvre M3 --duration 0.2");
  EXPECT_EQ(m.code, 2);
  EXPECT_TRUE(contains(m.err, "--manoeuvre M3: no such manoeuvre")) << m.err;
  EXPECT_TRUE(contains(m.err, "M1, M2, hold or a t,kappa CSV file")) << m.err;
  // A send delay of a period or more would fall into the next period.
  const result j = device(dir, joystick + "--rate 1000 --jitter-us 1000 --duration 0.2");
  EXPECT_EQ(j.code, 2);
  EXPECT_TRUE(contains(j.err,
                       "--jitter-us 1000: must be less than one period, 1000 us at --rate "
                       "1000 Hz"))
      << j.err;
}

TEST(DeviceCli, ValidShortRunsExitZero) {
  temp_dir dir;
  receiver rx;
  const result j = device(dir, "joystick --auth none --to " + rx.address() +
                                   " --manoeuvre M1 --rate 100 --duration 0.2");
  EXPECT_EQ(j.code, 0) << j.err;
  std::vector<double> kappa;
  rx.receive(kappa, 1000);
  // t = 0, 0.01, .., 0.2: at most 21 datagrams (fewer if periods were skipped).
  EXPECT_GE(kappa.size(), 1u);
  EXPECT_LE(kappa.size(), 21u);
  EXPECT_EQ(device(dir, "valve --auth none --listen 127.0.0.1:0 --duration 0.2").code, 0);
}

TEST(DeviceCli, StalledJoystickSkipsMissedPeriodsInsteadOfBursting) {
  temp_dir dir;
  receiver rx;
  // kappa(t) = t, so every datagram says which period it belongs to.
  const std::string table = dir.file("ramp.csv", "t,kappa\n0,0\n100,100\n");
  const std::vector<std::string> args{device_exe, "joystick",   "--auth",      "none",
                                      "--to",     rx.address(), "--manoeuvre", table,
                                      "--rate",   "100",        "--duration",  "2"};
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const std::string err_path = dir / "joystick.err";
  const pid_t pid = fork();
  if (pid == 0) {
    const int e = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (e < 0 || ::dup2(e, STDERR_FILENO) < 0) _exit(127);
    ::execv(argv[0], argv.data());
    _exit(127);
  }
  ASSERT_GT(pid, 0);
  std::vector<double> kappa;
  for (int i = 0; i < 100 && kappa.empty(); ++i) rx.receive(kappa, 50);
  ASSERT_FALSE(kappa.empty()) << "no datagram from the joystick";
  // A stall of at least 30 periods: the process is not scheduled at all.
  ::kill(pid, SIGSTOP);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ::kill(pid, SIGCONT);
  int status = 0;
  for (int i = 0; i < 600 && ::waitpid(pid, &status, WNOHANG) == 0; ++i) rx.receive(kappa, 50);
  rx.receive(kappa, 200);
  ASSERT_TRUE(WIFEXITED(status)) << "joystick did not end";
  EXPECT_EQ(WEXITSTATUS(status), 0) << slurp(err_path);

  // Every value is a period time k / 100 (the phase is kept), in order, none twice, and the
  // stall shows as one jump of at least 0.29 s: the missed periods were not sent afterwards.
  double largest_jump = 0.0;
  for (std::size_t i = 0; i < kappa.size(); ++i) {
    EXPECT_NEAR(kappa[i] * 100.0, std::round(kappa[i] * 100.0), 1e-6) << "datagram " << i;
    if (i > 0) {
      EXPECT_GT(kappa[i], kappa[i - 1] + 0.005) << "datagram " << i;
      largest_jump = std::max(largest_jump, kappa[i] - kappa[i - 1]);
    }
  }
  EXPECT_GE(largest_jump, 0.29);
  EXPECT_LE(kappa.size(), 201u - 28u);
  const std::string err = slurp(err_path);
  const auto at = err.find("skipped ");
  ASSERT_NE(at, std::string::npos) << err;
  EXPECT_GE(std::stoi(err.substr(at + 8)), 28) << err;
}

TEST(DeviceCli, KeygenWritesAPrivateKeyAndTheDevicesNeedOneOrAuthNone) {
  temp_dir dir;
  const std::string key = dir / "bench.key";
  ASSERT_EQ(device(dir, "keygen " + key).code, 0);
  struct stat st {};
  ASSERT_EQ(::stat(key.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  const std::string text = slurp(key);
  ASSERT_EQ(text.size(), 65u) << text;  // 64 hex digits and a newline
  EXPECT_EQ(text.find_first_not_of("0123456789abcdef"), 64u) << text;
  // Never overwritten; a second key differs (random, not derived from anything).
  EXPECT_EQ(device(dir, "keygen " + key).code, 2);
  EXPECT_EQ(slurp(key), text);
  ASSERT_EQ(device(dir, "keygen " + (dir / "other.key")).code, 0);
  EXPECT_NE(slurp(dir / "other.key"), text);
  // Neither protocol chosen: refused, naming both ways.
  const result none = device(dir, "joystick --to 127.0.0.1:9 --manoeuvre M1 --duration 0.2");
  EXPECT_EQ(none.code, 2);
  EXPECT_TRUE(contains(none.err, "--key FILE is required")) << none.err;
  EXPECT_TRUE(contains(none.err, "--auth none")) << none.err;
  // A key others may read is refused, naming the file and the fix.
  ::chmod(key.c_str(), 0640);
  const result open = device(dir, "valve --listen 127.0.0.1:0 --duration 0.2 --key " + key);
  EXPECT_EQ(open.code, 2);
  EXPECT_TRUE(contains(open.err, key)) << open.err;
  EXPECT_TRUE(contains(open.err, "mode 0640")) << open.err;
  EXPECT_TRUE(contains(open.err, "chmod 600")) << open.err;
}

}  // namespace
