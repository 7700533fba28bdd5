// The dashboard's stop button under attack (issue 29, docs/dashboard.md "Limits"): it keeps
// accepting after the process ran out of descriptors, a wrong-token flood with stderr on a
// pipe nobody reads does not hold the run, and --serve-any serves the host's own addresses
// (and warns that the token travels in clear).
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>

#include "process_support.hpp"
#include "temp_dir.hpp"

namespace {

using cosim::test::temp_dir;
using cosim::test_process::slurp;
using cosim::test_process::spawn;
using cosim::test_process::wait_exit;
using cosim::test_process::wait_for;
using namespace std::chrono_literals;

const std::string exe = COSIM_EXE;
const std::string oscillator =
    std::string(COSIM_SOURCE_DIR) + "/rt_config/scenarios/oscillator004.toml";

std::vector<std::string> run_args(const std::string& out, const std::string& serve, double duration,
                                  bool any = false) {
  std::vector<std::string> a{exe,
                             "run",
                             oscillator,
                             "--out",
                             out,
                             "--set",
                             "run.mode=realtime",
                             "--set",
                             "run.macro_step=0.002",
                             "--set",
                             "run.duration=" + std::to_string(duration),
                             "--set",
                             "watchdog.max_overruns=1000000",
                             "--set",
                             "run.lock_memory=false",
                             "--set",
                             "safety.energy_residual_limit=1e6",
                             "--serve",
                             serve,
                             "-q"};
  if (any) a.emplace_back("--serve-any");
  return a;
}

/// PORT and token from "dashboard: http://HOST:PORT/#token=T" on the child's stdout.
std::pair<int, std::string> wait_for_url(pid_t pid, const std::string& out_path) {
  std::pair<int, std::string> r{0, ""};
  const std::regex re(R"(dashboard: http://[0-9.]+:([0-9]+)/#token=([0-9a-f]+)\n)");
  wait_for(
      pid,
      [&] {
        std::smatch m;
        const std::string out = slurp(out_path);
        if (!std::regex_search(out, m, re)) return false;
        r = {std::stoi(m[1]), m[2]};
        return true;
      },
      20s);
  return r;
}

int connect_to(const std::string& addr, int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  ::inet_pton(AF_INET, addr.c_str(), &a.sin_addr);
  const timeval tv{.tv_sec = 3, .tv_usec = 0};  // a server that never answers fails the test
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

/// One HTTP/1.1 request with Host `host`; the status line's code, or 0 without an answer
/// within 3 s.
int request(const std::string& addr, int port, const std::string& host, const std::string& head,
            const std::string& token = "") {
  const int fd = connect_to(addr, port);
  if (fd < 0) return 0;
  std::string req = head + " HTTP/1.1\r\nHost: " + host + "\r\n";
  if (!token.empty()) req += "X-Cosim-Token: " + token + "\r\n";
  req += "Content-Length: 0\r\nConnection: close\r\n\r\n";
  (void)::send(fd, req.data(), req.size(), MSG_NOSIGNAL);
  char buf[256] = {};
  const auto n = ::recv(fd, buf, sizeof buf - 1, 0);
  ::close(fd);
  if (n < 12) return 0;
  return std::atoi(buf + 9);  // "HTTP/1.1 NNN"
}

std::string summary_field(const std::string& out, const std::string& key) {
  return cosim::test_process::field(slurp(out + "/summary.json"), key);
}

TEST(DashboardGuard, AfterDescriptorExhaustionAStopWithTheTokenWorks) {
  temp_dir tmp;
  const std::string out = tmp / "run";
  // A small descriptor limit for the child only, so idle connections exhaust it quickly.
  std::vector<std::string> args = run_args(out, "0", 60);
  std::string cmd = "ulimit -n 64 && exec";
  for (const auto& a : args) cmd += " '" + a + "'";
  const pid_t pid = spawn({"/bin/sh", "-c", cmd}, tmp / "out.txt", tmp / "err.txt");
  const auto [port, token] = wait_for_url(pid, tmp / "out.txt");
  ASSERT_NE(port, 0) << slurp(tmp / "err.txt");
  // The run has opened its result files (they need descriptors too) and is stepping.
  ASSERT_TRUE(wait_for(
      pid, [&] { return slurp(out + "/results.csv").find('\n') != std::string::npos; }, 20s))
      << slurp(tmp / "err.txt");
  std::this_thread::sleep_for(200ms);
  // Idle connections until the server's accept fails (EMFILE): far more than 64 descriptors, more
  // than the 64 connections the server keeps.
  std::vector<int> idle;
  for (int i = 0; i < 300; ++i) {
    const int fd = connect_to("127.0.0.1", port);  // the kernel's backlog takes them all
    if (fd >= 0) idle.push_back(fd);
  }
  std::this_thread::sleep_for(300ms);  // the server has tried to accept them
  for (const int fd : idle) ::close(fd);
  idle.clear();
  // The descriptors are back: the stop with the token is accepted and ends the run.
  int code = 0;
  for (int i = 0; i < 20 && code != 202; ++i) {
    code = request("127.0.0.1", port, "127.0.0.1:" + std::to_string(port), "POST /stop", token);
    if (code != 202) std::this_thread::sleep_for(100ms);
  }
  EXPECT_EQ(code, 202);
  EXPECT_EQ(wait_exit(pid, 30s), 1) << slurp(tmp / "err.txt");
  EXPECT_EQ(summary_field(out, "stop_reason"), "operator_signal");
}

TEST(DashboardGuard, AWrongTokenFloodWithStderrOnABlockedPipeDoesNotHoldTheRun) {
  temp_dir tmp;
  const std::string out = tmp / "run";
  int err_pipe[2];
  ASSERT_EQ(::pipe2(err_pipe, O_CLOEXEC), 0);
  const std::vector<std::string> args = run_args(out, "0", 3);
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const std::string out_txt = tmp / "out.txt";
  const pid_t pid = fork();
  if (pid == 0) {
    const int o = ::open(out_txt.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (o < 0 || ::dup2(o, STDOUT_FILENO) < 0 || ::dup2(err_pipe[1], STDERR_FILENO) < 0) _exit(127);
    ::execv(argv[0], argv.data());
    _exit(127);
  }
  ASSERT_GT(pid, 0);
  ::close(err_pipe[1]);
  const auto [port, token] = wait_for_url(pid, out_txt);
  ASSERT_NE(port, 0);
  // Nobody reads stderr while 3000 wrong-token stops arrive: one line each would fill the
  // 64 KiB pipe many times over and block the server thread, and with it the end of the run.
  const std::string host = "127.0.0.1:" + std::to_string(port);
  int refused = 0, unanswered = 0;
  for (int i = 0; i < 3000 && unanswered < 3; ++i) {
    if (request("127.0.0.1", port, host, "POST /stop", "0123456789abcdef0123456789abcdef") == 403)
      ++refused;
    else
      ++unanswered;  // a blocked server thread: no point in waiting 3 s for each of the rest
  }
  EXPECT_GT(refused, 2900);  // all answered: the server thread never blocked
  // The run ends by itself (3 s of run time; the limit only catches a run held for good).
  const int rc = wait_exit(pid, 60s);
  std::string err;
  std::array<char, 4096> buf{};
  for (ssize_t n = 0; (n = ::read(err_pipe[0], buf.data(), buf.size())) > 0;)
    err.append(buf.data(), static_cast<std::size_t>(n));
  ::close(err_pipe[0]);
  EXPECT_EQ(rc, 0) << err;
  EXPECT_EQ(summary_field(out, "stop_reason"), "end_time");
  // At most one refusal line a second, each counting what it did not log.
  std::size_t lines = 0;
  for (std::size_t at = 0; (at = err.find("stop refused", at)) != std::string::npos; ++at) ++lines;
  EXPECT_GE(lines, 1U);
  EXPECT_LE(lines, 10U) << err;
  EXPECT_NE(err.find("more refused"), std::string::npos) << err;
}

/// An IPv4 address of this host that is not loopback, if it has one.
std::string non_loopback_ipv4() {
  ifaddrs* list = nullptr;
  std::string found;
  if (::getifaddrs(&list) != 0) return found;
  for (const ifaddrs* i = list; i != nullptr && found.empty(); i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET) continue;
    const auto* a = reinterpret_cast<const sockaddr_in*>(i->ifa_addr);
    if ((ntohl(a->sin_addr.s_addr) >> 24) == 127) continue;
    char text[INET_ADDRSTRLEN] = {};
    ::inet_ntop(AF_INET, &a->sin_addr, text, sizeof text);
    found = text;
  }
  ::freeifaddrs(list);
  return found;
}

TEST(DashboardGuard, ServeAnyServesTheHostsOwnAddressesAndWarnsAboutTheToken) {
  temp_dir tmp;
  const std::string out = tmp / "run";
  const pid_t pid = spawn(run_args(out, "0.0.0.0:0", 60, true), tmp / "out.txt", tmp / "err.txt");
  const auto [port, token] = wait_for_url(pid, tmp / "out.txt");
  ASSERT_NE(port, 0) << slurp(tmp / "err.txt");
  const std::string p = ":" + std::to_string(port);
  // Loopback addresses are the host's own too (127.0.0.2 without any set-up).
  std::vector<std::string> addrs{"127.0.0.1", "127.0.0.2"};
  if (const std::string real = non_loopback_ipv4(); !real.empty()) addrs.push_back(real);
  for (const auto& a : addrs) {
    EXPECT_EQ(request(a, port, a + p, "GET /"), 200) << a;
    // A name that is not the address the connection came to is still refused (DNS rebinding).
    EXPECT_EQ(request(a, port, "evil.example" + p, "GET /"), 403) << a;
    EXPECT_EQ(request(a, port, "0.0.0.0" + p, "GET /"), 403) << a;
  }
  EXPECT_EQ(request("127.0.0.1", port, "localhost" + p, "GET /"), 200);
  const std::string err = slurp(tmp / "err.txt");
  EXPECT_NE(err.find("WARNING: --serve-any"), std::string::npos) << err;
  EXPECT_NE(err.find("stop token"), std::string::npos) << err;
  EXPECT_EQ(request(addrs.back(), port, addrs.back() + p, "POST /stop", token), 202);
  EXPECT_EQ(wait_exit(pid, 30s), 1);
}

TEST(DashboardGuard, AListeningPageIsKeptAliveByPingsPastTheIdleTimeoutAndCanStopTheRun) {
  namespace beast = boost::beast;
  namespace net = boost::asio;
  temp_dir tmp;
  const std::string out = tmp / "run";
  // The idle timeout shortened from 300 s to 1 s: a page that only listens (as every page
  // does) used to be dropped after it.
  std::string cmd = "COSIM_DASHBOARD_IDLE_S=1 exec";
  for (const auto& a : run_args(out, "0", 60)) cmd += " '" + a + "'";
  const pid_t pid = spawn({"/bin/sh", "-c", cmd}, tmp / "out.txt", tmp / "err.txt");
  const auto [port, token] = wait_for_url(pid, tmp / "out.txt");
  ASSERT_NE(port, 0) << slurp(tmp / "err.txt");
  net::io_context ioc;
  beast::websocket::stream<net::ip::tcp::socket> ws(ioc);
  net::ip::tcp::resolver resolver(ioc);
  net::connect(ws.next_layer(), resolver.resolve("127.0.0.1", std::to_string(port)));
  ws.handshake("127.0.0.1:" + std::to_string(port), "/ws");
  // Reading answers the server's pings (Beast does it inside read); the page sends nothing.
  const auto until = std::chrono::steady_clock::now() + 4s;
  int messages = 0;
  beast::error_code ec;
  while (std::chrono::steady_clock::now() < until) {
    beast::flat_buffer buf;
    ws.read(buf, ec);
    if (ec) break;
    ++messages;
  }
  ASSERT_FALSE(ec) << "the page was dropped after " << messages << " messages: " << ec.message();
  // Four idle timeouts later the page can still stop the run.
  ws.write(net::buffer(std::string(R"({"type":"stop","token":")") + token + "\"}"), ec);
  ASSERT_FALSE(ec) << ec.message();
  bool accepted = false;
  for (int i = 0; i < 200 && !accepted; ++i) {
    beast::flat_buffer buf;
    ws.read(buf, ec);
    if (ec) break;
    accepted = beast::buffers_to_string(buf.data()).find("stop_accepted") != std::string::npos;
  }
  EXPECT_TRUE(accepted);
  EXPECT_EQ(wait_exit(pid, 30s), 1) << slurp(tmp / "err.txt");
  EXPECT_EQ(summary_field(out, "stop_reason"), "operator_signal");
}

}  // namespace
