#pragma once
// Master and worker on two "hosts" of one machine for netns_test.cpp and netns_delay_test.cpp
// (docs/distributed.md "Testing across two namespaces"): two network namespaces joined by a
// veth pair, made and removed by the test, and a delay on that link (tc netem where the
// kernel has it, else the NFQUEUE delayer tests/tools/nfq_delay.cpp).
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "process_support.hpp"
#include "temp_dir.hpp"

namespace cosim::test_netns {

namespace proc = cosim::test_process;
using namespace std::chrono_literals;

inline const std::string crane = COSIM_SOURCE_DIR "/rt_config/systems/crane_m1_fs.toml";
inline const std::string prefix = "cosimnt";

inline std::string find_tool(const std::string& name) {
  for (const char* dir : {"/usr/sbin/", "/sbin/", "/usr/bin/", "/bin/"}) {
    std::string p = dir + name;
    if (::access(p.c_str(), X_OK) == 0) return p;
  }
  return {};
}

inline bool sh(const std::string& cmd) {
  return std::system((cmd + " >/dev/null 2>&1").c_str()) == 0;
}

/// Runs `cmd`; whether it succeeded, its stdout and stderr in `output`.
inline bool sh_output(const std::string& cmd, std::string& output) {
  const std::string file = "/tmp/cosimnt-out-" + std::to_string(::getpid());
  const bool ok = std::system((cmd + " >" + file + " 2>&1").c_str()) == 0;
  output = proc::slurp(file);
  std::filesystem::remove(file);
  while (!output.empty() && (output.back() == '\n' || output.back() == ' ')) output.pop_back();
  return ok;
}

// Namespaces left by a killed test run (their pid is gone) are deleted before making ours.
inline void delete_stale(const std::string& ip) {
  const std::string list = "/tmp/cosimnt-list-" + std::to_string(::getpid());
  sh(ip + " netns list > " + list);
  std::istringstream in(proc::slurp(list));
  std::filesystem::remove(list);
  std::string name;
  while (in >> name) {
    if (name.rfind(prefix + "-", 0) != 0) continue;
    const auto dash = name.find('-', prefix.size() + 1);
    const std::string pid = name.substr(prefix.size() + 1, dash - prefix.size() - 1);
    if (!std::filesystem::exists("/proc/" + pid)) sh(ip + " netns del " + name);
  }
}

// Two namespaces a and b, a veth pair between them with 10.231.x.1/30 and .2/30 (private,
// never routed off the machine), lo and the veth up. Removed in the destructor whatever
// happens in the test (deleting a namespace also deletes its veth end, qdiscs and rules).
class netns_pair {
 public:
  netns_pair(std::string ip, const std::string& tag) : ip_(std::move(ip)) {
    const std::string id = std::to_string(::getpid()) + "-" + tag;
    a_ = prefix + "-" + id + "-a";
    b_ = prefix + "-" + id + "-b";
    const std::string va = "cnva" + std::to_string(::getpid() % 100000) + tag.substr(0, 1);
    const std::string vb = "cnvb" + std::to_string(::getpid() % 100000) + tag.substr(0, 1);
    vb_ = vb;
    const std::string net = "10.231." + std::to_string(::getpid() % 250) + ".";
    ok_ = sh(ip_ + " netns add " + a_) && sh(ip_ + " netns add " + b_) &&
          sh(ip_ + " link add " + va + " type veth peer name " + vb) &&
          sh(ip_ + " link set " + va + " netns " + a_) &&
          sh(ip_ + " link set " + vb + " netns " + b_) &&
          sh(ip_ + " -n " + a_ + " addr add " + net + "1/30 dev " + va) &&
          sh(ip_ + " -n " + b_ + " addr add " + net + "2/30 dev " + vb) &&
          sh(ip_ + " -n " + a_ + " link set lo up") && sh(ip_ + " -n " + b_ + " link set lo up") &&
          sh(ip_ + " -n " + a_ + " link set " + va + " up") &&
          sh(ip_ + " -n " + b_ + " link set " + vb + " up") &&
          // SPDP discovery is multicast: route it over the veth.
          sh(ip_ + " -n " + a_ + " route add 224.0.0.0/4 dev " + va) &&
          sh(ip_ + " -n " + b_ + " route add 224.0.0.0/4 dev " + vb);
  }
  netns_pair(const netns_pair&) = delete;
  netns_pair& operator=(const netns_pair&) = delete;
  ~netns_pair() {
    sh(ip_ + " netns del " + a_);
    sh(ip_ + " netns del " + b_);
  }
  [[nodiscard]] bool ok() const { return ok_; }
  [[nodiscard]] const std::string& ip() const { return ip_; }
  [[nodiscard]] const std::string& a() const { return a_; }
  [[nodiscard]] const std::string& b() const { return b_; }
  [[nodiscard]] const std::string& veth_b() const { return vb_; }
  [[nodiscard]] std::vector<std::string> exec(const std::string& ns) const {
    return {ip_, "netns", "exec", ns};
  }

 private:
  std::string ip_, a_, b_, vb_;
  bool ok_ = false;
};

inline long long count(const std::string& json, const std::string& key) {
  const std::string v = proc::field(json, key);
  return v.empty() ? -1 : std::stoll(v);
}

/// Delay (uniform jitter, loss) on everything the worker's namespace b sends over the veth,
/// as `tc qdisc add dev VETH root netem delay D J loss P%` in b. Where the kernel has no
/// sch_netem (the CI kernel), the same from nfq_delay (tests/tools/nfq_delay.cpp) run in b,
/// fed by `iptables -A OUTPUT -o VETH -j NFQUEUE`. prepare() readies it, on() switches it
/// on; the destructor (declared after the netns_pair: it runs first) stops nfq_delay.
class link_delay {
 public:
  struct spec {
    double delay_ms = 0;
    double jitter_ms = 0;
    double loss_percent = 0;
  };

  link_delay(const netns_pair& ns, spec s, std::string dir)
      : ns_(ns), s_(s), dir_(std::move(dir)) {}
  link_delay(const link_delay&) = delete;
  link_delay& operator=(const link_delay&) = delete;
  ~link_delay() { stop(); }

  /// Empty when on() can switch the delay on, else why it cannot (a reason to skip).
  std::string prepare() {
    const std::string tc = find_tool("tc");
    std::string why = "tc is not installed";
    if (!tc.empty()) {
      tc_ = ns_.ip() + " netns exec " + ns_.b() + " " + tc + " qdisc ";
      // A netem qdisc without delay forwards at once; on() changes it.
      if (sh_output(tc_ + "add dev " + ns_.veth_b() + " root netem delay 0ms", why)) {
        how_ = "tc netem";
        return {};
      }
      why = "tc netem: " + why;
    }
#ifdef COSIM_NFQ_DELAY_EXE
    const std::string iptables = find_tool("iptables");
    if (iptables.empty()) return why + "; iptables (for nfq_delay) is not installed";
    std::filesystem::create_directories(dir_);
    out_ = dir_ + "/nfq_delay.out";
    const std::string err = dir_ + "/nfq_delay.err";
    pid_ = proc::spawn(
        proc::args(ns_.exec(ns_.b()), {COSIM_NFQ_DELAY_EXE, "--queue", std::to_string(queue),
                                       "--delay-ms", number(s_.delay_ms), "--jitter-ms",
                                       number(s_.jitter_ms), "--loss", number(s_.loss_percent)}),
        out_, err);
    // Bound to its queue before the rule exists: with no reader the kernel drops queued packets.
    if (!proc::wait_for(
            pid_, [&] { return proc::slurp(out_).find(" ready ") != std::string::npos; }, 10s))
      return why + "; nfq_delay did not start: " + proc::slurp(err);
    rule_ = ns_.ip() + " netns exec " + ns_.b() + " " + iptables + " -A OUTPUT -o " + ns_.veth_b() +
            " -j NFQUEUE --queue-num " + std::to_string(queue);
    how_ = "nfq_delay";
    return {};
#else
    return why + "; nfq_delay was not built (libnetfilter-queue-dev missing)";
#endif
  }

  bool on() {
    if (how_ == "tc netem") {
      std::string cmd =
          tc_ + "change dev " + ns_.veth_b() + " root netem delay " + number(s_.delay_ms) + "ms";
      if (s_.jitter_ms > 0) cmd += " " + number(s_.jitter_ms) + "ms";
      if (s_.loss_percent > 0) cmd += " loss " + number(s_.loss_percent) + "%";
      return sh(cmd);
    }
    return !rule_.empty() && sh(rule_);
  }

  /// Stops nfq_delay (it releases what it holds); its counts line, empty for netem.
  std::string stop() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      proc::wait_exit(pid_, 5s);
      pid_ = -1;
    }
    return out_.empty() ? std::string() : proc::slurp(out_);
  }

  /// Packets nfq_delay delayed (after stop()), -1 with netem.
  long long delayed() const {
    const std::string text = out_.empty() ? std::string() : proc::slurp(out_);
    const auto k = text.find(" delayed,");
    if (k == std::string::npos) return -1;
    const auto start = text.rfind(' ', k - 1) + 1;
    return std::stoll(text.substr(start, k - start));
  }

  [[nodiscard]] const std::string& how() const {
    return how_;
  }

 private:
  static constexpr int queue = 0;  // NFQUEUE numbers are per network namespace

  static std::string number(double v) {
    std::ostringstream s;
    s << v;
    return s.str();
  }

  const netns_pair& ns_;
  spec s_;
  std::string dir_, tc_, rule_, out_, how_;
  pid_t pid_ = -1;
};

class netns_fixture : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root for ip netns / veth";
    ip_ = find_tool("ip");
    if (ip_.empty() || !sh(ip_ + " netns list")) GTEST_SKIP() << "ip netns is unavailable";
    delete_stale(ip_);
  }

  // Worker in b, master in a, same keys; returns the master's output directory.
  std::string run_pair(const netns_pair& ns, const cosim::test::temp_dir& dir,
                       const std::string& tag, const std::vector<std::string>& sets,
                       int expect_master, const std::function<void()>& once_running = {}) const {
    std::string out = dir / ("remote-" + tag);
    const auto rs =
        proc::args(sets, {"--set", "subsystems.hyd.host=dds", "--set",
                          "dds.partition=cosim-netns-" + tag, "--set", "dds.discovery_timeout=10"});
    const pid_t worker =
        proc::spawn(proc::args(ns.exec(ns.b()),
                               proc::args({COSIM_EXE, "worker", crane, "--subsystem", "hyd"}, rs)),
                    dir / "w.out", dir / "w.err");
    const pid_t master = proc::spawn(
        proc::args(ns.exec(ns.a()), proc::args({COSIM_EXE, "run", crane, "--out", out}, rs)),
        dir / "m.out", dir / "m.err");
    if (once_running) {
      // Rows written: start-up (discovery, initialize) is over and the run is going.
      EXPECT_TRUE(proc::wait_for(
          master,
          [&] {
            std::error_code ec;
            return std::filesystem::file_size(out + "/results.csv", ec) > 20000 && !ec;
          },
          30s));
      once_running();
    }
    EXPECT_EQ(proc::wait_exit(master, 60s), expect_master)
        << proc::slurp(dir / "m.out") << proc::slurp(dir / "m.err");
    // The worker exits 0 when the master ended the run, 1 when it lost the master.
    const int w = proc::wait_exit(worker, 30s);
    EXPECT_TRUE(w == 0 || w == 1) << w << proc::slurp(dir / "w.err");
    return out;
  }

  std::string local_run(const cosim::test::temp_dir& dir,
                        const std::vector<std::string>& sets) const {
    const std::string out = dir / "local";
    EXPECT_EQ(proc::wait_exit(proc::spawn(proc::args({COSIM_EXE, "run", crane, "--out", out}, sets),
                                          dir / "l.out", dir / "l.err"),
                              60s),
              0)
        << proc::slurp(dir / "l.err");
    return proc::slurp(out + "/results.csv");
  }

  std::string ip_;
};

}  // namespace cosim::test_netns
