// Round trip of one remote macro step (issue 13, docs/distributed.md) against a raw Cyclone
// DDS ping-pong of the same samples, measured in the same run:
//   dds_rtt/raw      this process writes a cosim_remote command and takes the reply that a
//                    child process (this binary with --pong) writes back at once: the
//                    transport's floor for our sample types and QoS.
//   dds_rtt/remote   one proxy step (make_remote_proxy through the system builder) of the
//                    crane hydraulics (003) served by a real `cosim worker` child process:
//                    command, the worker's step and update_outputs, reply.
// Both use loopback UDP (Cyclone's default) in a partition of their own per process.
// Prints p50/p99/max per repetition and a summary with p50(remote)/p50(raw) (target 1.3).
//
// Options (before Google Benchmark's own flags; environment variables as fallback):
//   --round-trips=N   COSIM_BENCH_ROUND_TRIPS   per repetition, default 5000
//   --repetitions=N   COSIM_BENCH_REPETITIONS   default 3
//   --domain=N        DDS domain, default 0
#include <benchmark/benchmark.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "bench_support.hpp"
#include "cosim/dds/entities.hpp"
#include "cosim/rt_config/scenario.hpp"
#include "cosim/runtime/rt_thread.hpp"
#include "cosim/runtime/stop_source.hpp"
#include "cosim_remote.h"

extern char** environ;  // NOLINT: POSIX, for posix_spawn

using cosim::bench::option_value;
using cosim::bench::ratio;

namespace {

struct bench_options {
  std::uint64_t round_trips = 5000;
  int repetitions = 3;
  std::uint32_t domain = 0;
  std::string self;  // this binary, for --pong
};
bench_options options;  // set once in main() before any benchmark runs

const std::string crane = COSIM_SOURCE_DIR "/rt_config/systems/crane_m1_fs.toml";
constexpr std::int64_t reply_timeout_ns = 5'000'000'000;
constexpr std::int64_t discovery_ns = 30'000'000'000;
constexpr std::int32_t kind_step = 3;  // remote_protocol.hpp: cmd_step
constexpr std::int32_t kind_stop = 5;  // remote_protocol.hpp: cmd_stop

std::string partition(const char* tag) {
  return std::string("cosim-bench-") + tag + "-" + std::to_string(::getpid());
}

// The same QoS as the proxy's endpoints (proxy.cpp): reliable, keep-last 1.
cosim::dds::qos_options qos(const std::string& part) {
  cosim::dds::qos_options q;
  q.partition = part;
  q.depth = 1;
  return q;
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

// ---- raw Cyclone ping-pong ----

// The child: echoes every command as a reply with the same sequence number and as many
// values as the crane hydraulics reply carries, until a stop command or the ping is gone.
int pong(const std::string& part, std::uint32_t n_values) {
  cosim::dds::participant p(options.domain, part);
  cosim::dds::reader r(p, cosim::dds::make_topic(p, &cosim_remote_command_desc, "bench_cmd"),
                       qos(part));
  cosim::dds::writer w(p, cosim::dds::make_topic(p, &cosim_remote_reply_desc, "bench_reply"),
                       qos(part));
  auto cmd = std::make_unique<cosim_remote_command>();
  auto rep = std::make_unique<cosim_remote_reply>();
  *rep = cosim_remote_reply{};
  rep->n_values = n_values;
  for (;;) {
    const auto got = r.take(cmd.get(), reply_timeout_ns * 6);
    if (got != cosim::dds::take_result::sample) return 1;
    if (cmd->kind == kind_stop) return 0;
    rep->seq = cmd->seq;
    rep->values[0] = static_cast<double>(cmd->seq);
    if (!w.write(rep.get())) return 1;
  }
}

// Sample sizes of the product path: inputs and values of the crane hydraulics.
std::uint32_t hyd_inputs = 0, hyd_values = 0;

void bm_raw(benchmark::State& state) {
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): benchmark idiom
    const std::string part = partition("raw");
    const pid_t child = spawn({options.self, "--pong", part, std::to_string(hyd_values)});
    std::vector<std::int64_t> rtt(options.round_trips);
    {
      cosim::dds::participant p(options.domain, part);
      cosim::dds::writer w(p, cosim::dds::make_topic(p, &cosim_remote_command_desc, "bench_cmd"),
                           qos(part));
      cosim::dds::reader r(p, cosim::dds::make_topic(p, &cosim_remote_reply_desc, "bench_reply"),
                           qos(part));
      if (!cosim::dds::wait_for_peer(w, r, discovery_ns)) {
        state.SkipWithError("no pong process discovered");
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
        bool ok = w.write(cmd.get());
        // Skip replies of an older sequence number (none expected with keep-last 1).
        while (ok) {
          ok = r.take(rep.get(), reply_timeout_ns) == cosim::dds::take_result::sample;
          if (ok && rep->seq == cmd->seq) break;
        }
        if (!ok) {
          state.SkipWithError("pong did not answer");
          break;
        }
        if (i >= warmup) rtt[i - warmup] = cosim::monotonic_now_ns() - t0;
      }
      cmd->kind = kind_stop;
      (void)w.write(cmd.get());
      const int rc = wait_child(child);
      if (rc != 0 && !state.error_occurred()) state.SkipWithError("pong process failed");
    }
    if (state.error_occurred()) return;
    report(state, summarise(rtt));
  }
}

// ---- the product path: proxy step against `cosim worker` ----

void bm_remote(benchmark::State& state) {
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): benchmark idiom
    const std::vector<std::string> sets = {"subsystems.hyd.host=dds",
                                           "dds.partition=" + partition("remote")};
    std::vector<std::string> worker = {COSIM_EXE, "worker", crane, "--subsystem", "hyd"};
    for (const auto& s : sets) worker.insert(worker.end(), {"--set", s});
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

BENCHMARK(bm_raw)
    ->Name("dds_rtt/raw")
    ->UseManualTime()
    ->Iterations(1)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(bm_remote)
    ->Name("dds_rtt/remote")
    ->UseManualTime()
    ->Iterations(1)
    ->Unit(benchmark::kMicrosecond);

}  // namespace

int run(int argc, char** argv) {
  options.domain = static_cast<std::uint32_t>(option_value(argc, argv, "--domain", nullptr, 0));
  if (argc >= 4 && std::string_view(argv[1]) == "--pong")
    return pong(argv[2], static_cast<std::uint32_t>(std::stoul(argv[3])));
  options.round_trips = static_cast<std::uint64_t>(
      std::max(100LL, option_value(argc, argv, "--round-trips", "COSIM_BENCH_ROUND_TRIPS", 5000)));
  options.repetitions = static_cast<int>(
      std::max(1LL, option_value(argc, argv, "--repetitions", "COSIM_BENCH_REPETITIONS", 3)));
  options.self = "/proc/self/exe";
  {
    // The sample sizes of the product path, from the local crane hydraulics.
    const cosim::config::scenario sc = cosim::config::load_scenario(crane);
    auto b = cosim::config::build(sc);
    for (std::size_t i = 0; i < b->sys.size(); ++i) {
      const cosim::subsystem& s = b->sys.at(i);
      if (s.name() != "hyd") continue;
      hyd_inputs = static_cast<std::uint32_t>(s.input_count());
      hyd_values = static_cast<std::uint32_t>(s.output_count() + s.variables().size());
    }
  }
  std::printf(
      "dds_bench: Cyclone DDS round trips on loopback UDP, domain %u, %u inputs / %u values "
      "per sample, %llu round trips x %d repetitions\n",
      options.domain, hyd_inputs, hyd_values, static_cast<unsigned long long>(options.round_trips),
      options.repetitions);

  cosim::bench::counter_reporter reporter;
  if (cosim::bench::run_benchmarks(argc, argv, options.repetitions, reporter) != 0) return 1;

  cosim::bench::print_latency_summary(reporter, "dds_bench", "dds_rtt", {"raw", "remote"}, 1.3);
  return 0;
}

int main(int argc, char** argv) {
  return cosim::bench::guarded_main(argc, argv, run);
}
