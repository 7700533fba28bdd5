// Setup exchanges survive a lost first sample. Matched DDS endpoints do not yet mean a
// connected path (over shared memory iceoryx connects a subscriber after DDS matched it, and a
// volatile sample written in between is gone), so the proxy repeats initialize/start until it
// hears the answer, and the worker answers a repeat with its last reply without applying the
// command twice. Both ends are checked against a hand-written peer on the raw entities: one
// that ignores the first copy of every command, and one that sends every command twice.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cosim/dds/entities.hpp"
#include "cosim/dds/remote.hpp"
#include "cosim/runtime/json_writer.hpp"
#include "cosim/runtime/stop_source.hpp"
#include "cosim_remote.h"

namespace {

using namespace cosim;
using namespace cosim::dds;

constexpr std::int32_t kind_initialize = 1;  // remote_protocol.hpp
constexpr std::int32_t kind_start = 4;
constexpr std::int32_t kind_stop = 5;

std::string unique_partition(const char* test) {
  return std::string("cosim-test-repeat-") + test + "-" + std::to_string(::getpid());
}

/// One output y = 7 (so a reply carries one value); counts its initializations.
class seven final : public subsystem {
 public:
  seven() : subsystem("seven") {
    add_output({"y", "1", port_role::signal});
    set_step_size(duration{1'000'000});
  }
  int initialized = 0;
  int started = 0;

 private:
  void do_initialize(time_point /*t0*/) override { ++initialized; }
  void do_start(stop_source& /*stop*/) override { ++started; }
  bool do_step(time_point /*t*/, duration /*h*/) noexcept override { return true; }
  void do_update_outputs(time_point /*t*/) noexcept override { set_output(0, 7.0); }
};

remote_options options(const std::string& part) {
  remote_options o;
  o.partition = part;
  o.lease_ns = 2'000'000'000;
  o.timeout_ns = 2'000'000'000;
  o.discovery_timeout_ns = 10'000'000'000;
  return o;
}

qos_options qos(const remote_options& o) {
  qos_options q;
  q.partition = o.partition;
  q.lease_ns = o.lease_ns;
  return q;
}

std::string statistics(const subsystem& s) {
  json_writer j;
  s.write_statistics(j);
  return j.str();
}

TEST(DdsSetupRepeat, ProxyRepeatsACommandWhoseFirstCopyIsLost) {
  const remote_options o = options(unique_partition("proxy"));
  const seven real;
  // The peer: a worker that never sees the first copy of a command (as if the path had lost
  // it) and answers the second.
  std::atomic<bool> done{false};
  std::map<std::int32_t, int> copies;  // per command kind, written by the peer thread only
  std::thread peer([&] {
    const participant p(o.domain, o.partition, o.lease_ns);
    reader cmd_r(p, make_topic(p, &cosim_remote_command_desc, "cosim_cmd_seven"), qos(o));
    writer reply_w(p, make_topic(p, &cosim_remote_reply_desc, "cosim_reply_seven"), qos(o));
    auto cmd = std::make_unique<cosim_remote_command>();
    auto rep = std::make_unique<cosim_remote_reply>();
    *rep = cosim_remote_reply{};
    std::uint64_t answered = 0;
    while (!done) {
      if (cmd_r.take(cmd.get(), 50'000'000) != take_result::sample) continue;
      if (++copies[cmd->kind] == 1 || cmd->seq == answered) continue;
      rep->seq = cmd->seq;
      rep->n_values = 1;
      rep->values[0] = 7.0;
      answered = cmd->seq;
      (void)reply_w.write(rep.get());
      if (cmd->kind == kind_stop) return;
    }
  });
  // In a function of its own, so that a failed assertion still ends and joins the peer.
  [&] {
    auto proxy = make_remote_proxy(real, o);
    ASSERT_NO_THROW(proxy->initialize(time_point{}));
    stop_source stop;
    ASSERT_NO_THROW(proxy->start(stop));
    EXPECT_EQ(proxy->output(0), 7.0);
    proxy->stop(false);
    const std::string stats = statistics(*proxy);
    // The peer's answers to repeats it ignored are none; nothing is late.
    EXPECT_NE(stats.find("\"late_samples\": 0,"), std::string::npos) << stats;
  }();
  done = true;
  peer.join();
  EXPECT_GE(copies[kind_initialize], 2);
  EXPECT_GE(copies[kind_start], 2);
}

TEST(DdsSetupRepeat, WorkerAnswersARepeatWithoutApplyingItTwice) {
  const remote_options o = options(unique_partition("worker"));
  seven real;
  worker_outcome out;
  std::thread worker([&] { out = serve_subsystem(real, o, nullptr); });
  [&] {
    // The peer: a master that writes every setup command twice and wants two answers.
    const participant p(o.domain, o.partition, o.lease_ns);
    writer cmd_w(p, make_topic(p, &cosim_remote_command_desc, "cosim_cmd_seven"), qos(o));
    reader reply_r(p, make_topic(p, &cosim_remote_reply_desc, "cosim_reply_seven"), qos(o));
    ASSERT_TRUE(wait_for_peer(cmd_w, reply_r, o.discovery_timeout_ns));
    auto cmd = std::make_unique<cosim_remote_command>();
    auto rep = std::make_unique<cosim_remote_reply>();
    *cmd = cosim_remote_command{};
    std::uint64_t seq = 0;
    for (const std::int32_t kind : {kind_initialize, kind_start, kind_stop}) {
      cmd->seq = ++seq;
      cmd->kind = kind;
      const int copies = kind == kind_stop ? 1 : 2;  // the worker ends after stop's answer
      for (int c = 0; c < copies; ++c) {
        ASSERT_TRUE(cmd_w.write(cmd.get()));
        // Each copy answered with the command's own number: the worker's reply path was
        // matched before its first reply, and nothing else is in flight.
        ASSERT_EQ(reply_r.take(rep.get(), 5'000'000'000), take_result::sample)
            << "no answer to copy " << c + 1 << " of command kind " << kind;
        EXPECT_EQ(rep->seq, seq);
      }
    }
  }();
  worker.join();
  EXPECT_TRUE(out.completed) << out.message;
  EXPECT_EQ(out.commands, 3);
  EXPECT_EQ(out.late, 0);
  EXPECT_EQ(real.initialized, 1);
  EXPECT_EQ(real.started, 1);
}

}  // namespace
