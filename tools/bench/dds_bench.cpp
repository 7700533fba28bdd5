// Round trip of one remote macro step (issue 13, docs/distributed.md) against a raw Cyclone
// DDS ping-pong of the same samples, measured in the same run:
//   dds_rtt/raw      Cyclone's C API alone (dds_write, a waitset on the reader's
//                    DATA_AVAILABLE status, dds_take, as ddsperf's waitset mode): this process
//                    writes a cosim_remote command and takes the reply that a child process
//                    (this binary with --pong) writes back at once; the transport's floor for
//                    our sample types and QoS.
//   dds_rtt/remote   one proxy step (make_remote_proxy through the system builder) of the
//                    crane hydraulics (003) served by a real `cosim worker` child process:
//                    command, the worker's step and update_outputs, reply.
//   dds_rtt/raw_shm, dds_rtt/remote_shm   the same over Cyclone's shared-memory transport
//                    (iceoryx; dds.shared_memory = true), in domain N+1. Needs iox-roudi: the
//                    bench starts it if none runs and stops it at the end; without it these two
//                    are left out, with the reason printed.
//   dds_rtt/raw_sec, dds_rtt/remote_sec   the same over loopback UDP with DDS Security
//                    ([dds.security]: authenticated, access-controlled, encrypted), in domain
//                    N+2, with a PKI made by tools/scripts/cosim_pki.sh in a temporary folder
//                    (the master's identity here, a worker's in the child). --no-security
//                    leaves them out.
// Each uses a partition of its own per process. Prints p50/p99/max per repetition and
// summaries with p50(remote)/p50(raw) per transport (target 1.3).
//
// Options (before Google Benchmark's own flags; environment variables as fallback):
//   --round-trips=N   COSIM_BENCH_ROUND_TRIPS   per repetition, default 5000
//   --repetitions=N   COSIM_BENCH_REPETITIONS   default 3
//   --domain=N        DDS domain of the UDP runs (N+1: shared memory), default 0
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "bench_support.hpp"
#include "cosim/dds/entities.hpp"
#include "cosim/dds/remote.hpp"
#include "cosim/rt_config/scenario.hpp"
#include "cosim/runtime/rt_thread.hpp"
#include "cosim/runtime/stop_source.hpp"
#include "cosim/runtime/time.hpp"
#include "cosim_remote.h"

extern char** environ;  // NOLINT: POSIX, for posix_spawn

using cosim::bench::option_value;
using cosim::bench::ratio;

namespace {

struct bench_options {
  std::uint64_t round_trips = 5000;
  int repetitions = 3;
  std::uint32_t domain = 0;
  std::string self;              // this binary, for --pong
  std::int64_t deadline_ns = 0;  // the crane's macro step: the product's deadline QoS (UDP)
};
bench_options options;  // set once in main() before any benchmark runs

const std::string crane = COSIM_SOURCE_DIR "/rt_config/systems/crane_m1_fs.toml";
constexpr std::int64_t reply_timeout_ns = 5'000'000'000;
constexpr std::int64_t discovery_ns = 30'000'000'000;
constexpr std::int32_t kind_step = 3;  // remote_protocol.hpp: cmd_step
constexpr std::int32_t kind_stop = 5;  // remote_protocol.hpp: cmd_stop
const std::int64_t lease_ns = cosim::dds::remote_options{}.lease_ns;  // dds.lease default

// UDP on the given domain; shared memory on the next one (a domain's transport is set when
// this process creates it).
struct transport {
  bool shm = false;
  bool sec = false;  // DDS Security (UDP only)
  [[nodiscard]] std::uint32_t domain() const {
    return options.domain + (shm ? 1 : 0) + (sec ? 2 : 0);
  }
  [[nodiscard]] const char* tag() const { return shm ? "shm" : sec ? "sec" : "udp"; }
};

// The secured runs' files (cosim_pki.sh --out pki_dir), empty when not measured.
std::string pki_dir;

cosim::dds::security_options security_of(const std::string& who) {
  return {pki_dir + "/ca.pem", pki_dir + "/" + who + ".pem", pki_dir + "/" + who + ".key",
          pki_dir + "/ca.pem", pki_dir + "/governance.p7s",  pki_dir + "/permissions.p7s"};
}

std::vector<std::string> security_sets(const std::string& who) {
  const cosim::dds::security_options o = security_of(who);
  return {"dds.security.identity_ca=" + o.identity_ca,
          "dds.security.identity_certificate=" + o.identity_certificate,
          "dds.security.private_key=" + o.private_key,
          "dds.security.permissions_ca=" + o.permissions_ca,
          "dds.security.governance=" + o.governance,
          "dds.security.permissions=" + o.permissions};
}

// A new partition per repetition: the participant of this process outlives a repetition, and
// a peer of the last one that is not yet known to be gone must not be matched (the first,
// volatile command would go to it and the new peer would never answer).
std::string partition(const char* tag) {
  static int n = 0;
  return std::string("cosim-bench-") + tag + "-" + std::to_string(::getpid()) + "-" +
         std::to_string(++n);
}

pid_t spawn(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));  // NOLINT
  argv.push_back(nullptr);
  pid_t pid = -1;
  if (::posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ) != 0)
    throw std::runtime_error("cannot start " + args[0]);
  return pid;
}

int wait_child(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

struct percentiles {
  double p50_us = 0, p99_us = 0, max_us = 0;
};

percentiles summarise(std::vector<std::int64_t>& ns) {
  std::sort(ns.begin(), ns.end());
  const auto at = [&](double q) {
    return static_cast<double>(
               ns[static_cast<std::size_t>(q * static_cast<double>(ns.size() - 1))]) *
           1e-3;
  };
  return {at(0.5), at(0.99), static_cast<double>(ns.back()) * 1e-3};
}

void report(benchmark::State& state, const percentiles& p) {
  state.SetIterationTime(p.p50_us * 1e-6);
  state.counters["p50_us"] = p.p50_us;
  state.counters["p99_us"] = p.p99_us;
  state.counters["max_us"] = p.max_us;
}

// ---- raw Cyclone ping-pong: the C API alone, as ddsperf's waitset mode ----

// One side of the ping-pong: a participant in its own partition, a writer of one topic and
// a reader of the other with a waitset on the reader's DATA_AVAILABLE status. Domain
// configuration and QoS as the product's step topics (entities.cpp, remote_protocol.hpp
// endpoint()): reliable, keep-last 1, volatile, automatic liveliness with the default lease,
// the macro step as deadline over UDP and none over shared memory.
// With security, the participant is the product's (cosim::dds::participant: the same
// dds.sec.* properties), `who` its identity; the rest of the ping-pong is the C API alone.
struct raw_side {
  std::unique_ptr<cosim::dds::participant> part;
  dds_entity_t pp = 0, w = 0, r = 0, ws = 0;
  raw_side(transport tr, const std::string& partition_name, const dds_topic_descriptor_t* wdesc,
           const char* wname, const dds_topic_descriptor_t* rdesc, const char* rname,
           const char* who) {
    part = std::make_unique<cosim::dds::participant>(
        tr.domain(), partition_name, lease_ns, tr.shm, std::string(),
        tr.sec ? security_of(who) : cosim::dds::security_options{});
    pp = part->get();
    const dds_entity_t pub = part->publisher();
    const dds_entity_t sub = part->subscriber();
    dds_qos_t* q = dds_create_qos();
    dds_qset_reliability(q, DDS_RELIABILITY_RELIABLE, DDS_SECS(1));
    dds_qset_history(q, DDS_HISTORY_KEEP_LAST, 1);
    dds_qset_durability(q, DDS_DURABILITY_VOLATILE);
    dds_qset_liveliness(q, DDS_LIVELINESS_AUTOMATIC, lease_ns);
    if (!tr.shm && options.deadline_ns > 0) dds_qset_deadline(q, options.deadline_ns);
    const dds_entity_t wt = check(dds_create_topic(pp, wdesc, wname, nullptr, nullptr), "topic");
    const dds_entity_t rt = check(dds_create_topic(pp, rdesc, rname, nullptr, nullptr), "topic");
    w = check(dds_create_writer(pub, wt, q, nullptr), "writer");
    r = check(dds_create_reader(sub, rt, q, nullptr), "reader");
    dds_delete_qos(q);
    ws = check(dds_create_waitset(pp), "waitset");
    (void)dds_set_status_mask(r, DDS_DATA_AVAILABLE_STATUS);
    check(dds_waitset_attach(ws, r, 0), "waitset attach");
  }
  raw_side(const raw_side&) = delete;
  raw_side& operator=(const raw_side&) = delete;
  ~raw_side() = default;

  static dds_entity_t check(dds_entity_t h, const char* what) {
    if (h < 0)
      throw std::runtime_error(std::string("Cyclone DDS: ") + what + ": " + dds_strretcode(h));
    return h;
  }

  // Waits for the waitset, then takes one valid sample; false after `timeout` without one.
  bool take(void* sample, dds_duration_t timeout) const {
    void* buf[1] = {sample};
    dds_sample_info_t info[1];
    for (;;) {
      if (dds_waitset_wait(ws, nullptr, 0, timeout) <= 0) return false;
      const dds_return_t n = dds_take(r, buf, info, 1, 1);
      if (n > 0 && info[0].valid_data) return true;
    }
  }

  // Setup only: until the writer has a matched reader and the reader a matched writer.
  [[nodiscard]] bool matched(dds_duration_t timeout) const {
    const dds_time_t until = dds_time() + timeout;
    dds_publication_matched_status_t pm{};
    dds_subscription_matched_status_t sm{};
    while (dds_time() < until) {
      if (dds_get_publication_matched_status(w, &pm) == DDS_RETCODE_OK && pm.current_count > 0 &&
          dds_get_subscription_matched_status(r, &sm) == DDS_RETCODE_OK && sm.current_count > 0)
        return true;
      dds_sleepfor(DDS_MSECS(2));
    }
    return false;
  }
};

// The child: echoes every command as a reply with the same sequence number and as many
// values as the crane hydraulics reply carries, until a stop command or silence.
int pong(transport tr, const std::string& part, std::uint32_t n_values) {
  const raw_side side(tr, part, &cosim_remote_reply_desc, "cosim_reply_bench",
                      &cosim_remote_command_desc, "cosim_cmd_bench", "worker1");
  auto cmd = std::make_unique<cosim_remote_command>();
  auto rep = std::make_unique<cosim_remote_reply>();
  *rep = cosim_remote_reply{};
  rep->n_values = n_values;
  for (;;) {
    if (!side.take(cmd.get(), discovery_ns)) return 1;
    if (cmd->kind == kind_stop) return 0;
    rep->seq = cmd->seq;
    rep->values[0] = static_cast<double>(cmd->seq);
    if (dds_write(side.w, rep.get()) != DDS_RETCODE_OK) return 1;
  }
}

// Sample sizes of the product path: inputs and values of the crane hydraulics.
std::uint32_t hyd_inputs = 0, hyd_values = 0;

void bm_raw(benchmark::State& state, transport tr) {
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): benchmark idiom
    const std::string part = partition("raw");
    const pid_t child = spawn(
        {options.self, "--pong", part, std::to_string(hyd_values), std::to_string(options.domain),
         tr.tag(), std::to_string(options.deadline_ns), pki_dir.empty() ? "-" : pki_dir});
    std::vector<std::int64_t> rtt(options.round_trips);
    {
      const raw_side side(tr, part, &cosim_remote_command_desc, "cosim_cmd_bench",
                          &cosim_remote_reply_desc, "cosim_reply_bench", "master");
      if (!side.matched(discovery_ns)) {
        state.SkipWithError("no pong process discovered");
        (void)wait_child(child);
        return;
      }
      auto cmd = std::make_unique<cosim_remote_command>();
      auto rep = std::make_unique<cosim_remote_reply>();
      *cmd = cosim_remote_command{};
      cmd->kind = kind_step;
      cmd->n_inputs = hyd_inputs;
      const std::uint64_t warmup = 200;
      for (std::uint64_t i = 0; i < warmup + options.round_trips; ++i) {
        cmd->seq = i + 1;
        const std::int64_t t0 = cosim::monotonic_now_ns();
        bool ok = dds_write(side.w, cmd.get()) == DDS_RETCODE_OK;
        // The first command is repeated until answered, as the product's setup exchanges
        // (proxy.cpp): over shared memory a sample written before iceoryx has connected the
        // matched endpoints is lost. Replies of an older sequence number are skipped.
        for (int repeat = 0; ok && i == 0 && repeat < 50; ++repeat) {
          if (side.take(rep.get(), DDS_MSECS(100)) && rep->seq == cmd->seq) break;
          ok = dds_write(side.w, cmd.get()) == DDS_RETCODE_OK;
        }
        while (ok && rep->seq != cmd->seq) {
          ok = side.take(rep.get(), reply_timeout_ns);
        }
        if (!ok) {
          state.SkipWithError("pong did not answer");
          break;
        }
        if (i >= warmup) rtt[i - warmup] = cosim::monotonic_now_ns() - t0;
      }
      cmd->kind = kind_stop;
      (void)dds_write(side.w, cmd.get());
      const int rc = wait_child(child);
      if (rc != 0 && !state.error_occurred()) state.SkipWithError("pong process failed");
    }
    if (state.error_occurred()) return;
    report(state, summarise(rtt));
  }
}

// ---- the product path: proxy step against `cosim worker` ----

void bm_remote(benchmark::State& state, transport tr) {
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): benchmark idiom
    std::vector<std::string> sets = {"subsystems.hyd.host=dds",
                                     "dds.partition=" + partition("remote"),
                                     "dds.domain=" + std::to_string(tr.domain())};
    if (tr.shm) sets.emplace_back("dds.shared_memory=true");
    std::vector<std::string> worker = {COSIM_EXE, "worker", crane, "--subsystem", "hyd"};
    for (const auto& s : sets) worker.insert(worker.end(), {"--set", s});
    if (tr.sec) {
      for (const auto& s : security_sets("worker1")) worker.insert(worker.end(), {"--set", s});
      const std::vector<std::string> master = security_sets("master");
      sets.insert(sets.end(), master.begin(), master.end());
    }
    const pid_t child = spawn(worker);
    std::vector<std::int64_t> rtt(options.round_trips);
    {
      const cosim::config::scenario sc = cosim::config::load_scenario(crane, sets);
      auto b = cosim::config::build(sc);
      cosim::subsystem* hyd = nullptr;
      for (std::size_t i = 0; i < b->sys.size(); ++i)
        if (b->sys.at(i).name() == "hyd") hyd = &b->sys.at(i);
      if (hyd == nullptr) {
        state.SkipWithError("no subsystem hyd in the crane");
        return;
      }
      cosim::stop_source stop;
      hyd->initialize(cosim::time_point{});
      hyd->start(stop);
      const cosim::duration h = hyd->step_size();
      cosim::time_point t{};
      const std::uint64_t warmup = 200;
      for (std::uint64_t i = 0; i < warmup + options.round_trips; ++i) {
        const std::int64_t t0 = cosim::monotonic_now_ns();
        const bool ok = hyd->step(t, h);
        t += h;
        hyd->update_outputs(t);  // served by the step's reply: no second exchange
        if (!ok) {
          state.SkipWithError("remote step failed");
          break;
        }
        if (i >= warmup) rtt[i - warmup] = cosim::monotonic_now_ns() - t0;
      }
      hyd->stop(false);
    }
    const int rc = wait_child(child);
    if (state.error_occurred()) return;
    if (rc != 0) {
      state.SkipWithError("cosim worker failed");
      return;
    }
    report(state, summarise(rtt));
  }
}

void register_benchmarks(bool shm) {
  for (const transport tr :
       {transport{false, false}, transport{true, false}, transport{false, true}}) {
    if (tr.shm && !shm) continue;
    if (tr.sec && pki_dir.empty()) continue;
    const std::string suffix = tr.shm ? "_shm" : tr.sec ? "_sec" : "";
    benchmark::RegisterBenchmark(("dds_rtt/raw" + suffix).c_str(), bm_raw, tr)
        ->UseManualTime()
        ->Iterations(1)
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("dds_rtt/remote" + suffix).c_str(), bm_remote, tr)
        ->UseManualTime()
        ->Iterations(1)
        ->Unit(benchmark::kMicrosecond);
  }
}

// iceoryx's RouDi for the shared-memory runs: the one running, or one of ours (stopped by
// the destructor). `why` says why there is none.
class roudi {
 public:
  roudi() {
    if (cosim::dds::roudi_running()) {
      std::printf("dds_bench: using the iox-roudi that runs already\n");
      return;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    char name[] = "iox-roudi";
    char* argv[] = {name, nullptr};
    const int rc = ::posix_spawnp(&pid_, name, &fa, nullptr, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
      pid_ = -1;
      why = "iox-roudi not found (Debian package iceoryx)";
      return;
    }
    for (int i = 0; i < 500 && !cosim::dds::roudi_running(); ++i) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        why = "iox-roudi exited at start-up";
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (!cosim::dds::roudi_running()) why = "iox-roudi did not come up within 5 s";
    std::printf("dds_bench: started iox-roudi (pid %d), stopped at the end\n",
                static_cast<int>(pid_));
  }
  roudi(const roudi&) = delete;
  roudi& operator=(const roudi&) = delete;
  ~roudi() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    (void)wait_child(pid_);
  }
  [[nodiscard]] bool up() const { return why.empty(); }
  [[nodiscard]] bool owned() const { return pid_ > 0; }
  void disown() { pid_ = -1; }  // in a forked child: the parent stops it
  std::string why;

 private:
  pid_t pid_ = -1;
};

// The secured runs' PKI: cosim_pki.sh into a temporary folder, removed at the end; the
// partitions the bench uses (cosim-bench-*) granted. `why` says why there is none.
class pki {
 public:
  explicit pki(std::uint32_t domain) {
    char tmpl[] = "/tmp/cosim_dds_bench_XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) {
      why = "cannot create a temporary folder";
      return;
    }
    dir = tmpl;
    // Through a shell only to silence its summary on stdout.
    const std::string script =
        "exec \"$0\" --out \"$1\" --domain \"$2\" --partition "
        "'cosim-bench-*' >/dev/null";
    const std::string program = COSIM_SOURCE_DIR "/tools/scripts/cosim_pki.sh";
    const pid_t p =
        spawn({"/bin/bash", "-c", script, program, dir + "/pki", std::to_string(domain)});
    if (wait_child(p) != 0) why = "tools/scripts/cosim_pki.sh failed (is openssl installed?)";
    dir += "/pki";
  }
  pki(const pki&) = delete;
  pki& operator=(const pki&) = delete;
  ~pki() {
    if (dir.empty()) return;
    std::error_code ec;
    std::filesystem::remove_all(std::filesystem::path(dir).parent_path(), ec);
  }
  std::string dir, why;
};

int measure(int argc, char** argv, bool shm) {
  register_benchmarks(shm);
  cosim::bench::counter_reporter reporter;
  if (cosim::bench::run_benchmarks(argc, argv, options.repetitions, reporter) != 0) return 1;
  cosim::bench::print_latency_summary(reporter, "dds_bench", "dds_rtt", {"raw", "remote"}, 1.3);
  if (shm)
    cosim::bench::print_latency_summary(reporter, "dds_bench", "dds_rtt", {"raw_shm", "remote_shm"},
                                        1.3);
  if (!pki_dir.empty()) {
    // The secured product path against the secured transport, and against the raw unsecured
    // ping-pong: what security costs on top of the transport.
    cosim::bench::print_latency_summary(reporter, "dds_bench", "dds_rtt", {"raw_sec", "remote_sec"},
                                        1.3);
    cosim::bench::print_latency_summary(reporter, "dds_bench", "dds_rtt", {"raw", "remote_sec"},
                                        1.3);
  }
  return 0;
}

}  // namespace

int run(int argc, char** argv) {
  options.domain = static_cast<std::uint32_t>(option_value(argc, argv, "--domain", nullptr, 0));
  // The raw pong child: --pong PARTITION VALUES DOMAIN udp|shm|sec DEADLINE_NS PKI_DIR|-
  if (argc >= 8 && std::string_view(argv[1]) == "--pong") {
    options.domain = static_cast<std::uint32_t>(std::stoul(argv[4]));
    options.deadline_ns = std::stoll(argv[6]);  // both ends' QoS must match
    if (std::string_view(argv[7]) != "-") pki_dir = argv[7];
    return pong(transport{std::string_view(argv[5]) == "shm", std::string_view(argv[5]) == "sec"},
                argv[2], static_cast<std::uint32_t>(std::stoul(argv[3])));
  }
  options.round_trips = static_cast<std::uint64_t>(
      std::max(100LL, option_value(argc, argv, "--round-trips", "COSIM_BENCH_ROUND_TRIPS", 5000)));
  options.repetitions = static_cast<int>(
      std::max(1LL, option_value(argc, argv, "--repetitions", "COSIM_BENCH_REPETITIONS", 3)));
  options.self = "/proc/self/exe";
  const bool no_shm = cosim::bench::take_flag(argc, argv, "--no-shm");
  const bool no_security = cosim::bench::take_flag(argc, argv, "--no-security");
  std::unique_ptr<pki> bench_pki;
  if (!no_security) {
    bench_pki = std::make_unique<pki>(options.domain + 2);
    if (!bench_pki->why.empty())
      std::printf("dds_bench: DDS Security not measured: %s\n", bench_pki->why.c_str());
    else
      pki_dir = bench_pki->dir;
  }
  {
    // The sample sizes of the product path, from the local crane hydraulics.
    const cosim::config::scenario sc = cosim::config::load_scenario(crane);
    options.deadline_ns = cosim::to_duration(sc.run.macro_step).count();
    auto b = cosim::config::build(sc);
    for (std::size_t i = 0; i < b->sys.size(); ++i) {
      const cosim::subsystem& s = b->sys.at(i);
      if (s.name() != "hyd") continue;
      hyd_inputs = static_cast<std::uint32_t>(s.input_count());
      hyd_values = static_cast<std::uint32_t>(s.output_count() + s.variables().size());
    }
  }
  std::printf(
      "dds_bench: Cyclone DDS round trips, loopback UDP in domain %u, shared memory in domain "
      "%u, DDS Security in domain %u, %u inputs / %u values per sample, %llu round trips x %d "
      "repetitions\n",
      options.domain, options.domain + 1, options.domain + 2, hyd_inputs, hyd_values,
      static_cast<unsigned long long>(options.round_trips), options.repetitions);

  std::unique_ptr<roudi> daemon;
  if (!no_shm) {
    daemon = std::make_unique<roudi>();
    if (!daemon->up())
      std::printf("dds_bench: shared memory not measured: %s\n", daemon->why.c_str());
  }
  // iceoryx's RouDi, when it stops, sends SIGTERM to every process still registered with it,
  // and the shared-memory runs register this one: with a RouDi of our own the benchmarks run
  // in a child, and this process stops RouDi only after the child has printed its summary.
  if (daemon && daemon->owned()) {
    std::fflush(stdout);
    std::fflush(stderr);
    const pid_t child = ::fork();
    if (child < 0) throw std::runtime_error("cannot fork the benchmark process");
    if (child == 0) {
      daemon->disown();
      const int rc = measure(argc, argv, daemon->up());
      std::fflush(stdout);
      std::fflush(stderr);
      ::_exit(rc);
    }
    return wait_child(child);
  }
  return measure(argc, argv, daemon && daemon->up());
}

int main(int argc, char** argv) {
  return cosim::bench::guarded_main(argc, argv, run);
}
