// What the worker and the proxy refuse whether or not DDS Security is on: a worker runs only
// step commands that fit the run's plan (the next sequence number, k internal steps within
// one macro step, a consistent end time) and only from the master it serves; a second
// master on a partition is refused at start-up with a message saying so. Checked against a
// hand-written peer on the raw entities.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "cosim/dds/entities.hpp"
#include "cosim/dds/remote.hpp"
#include "cosim/runtime/error.hpp"
#include "cosim/runtime/stop_source.hpp"
#include "cosim_remote.h"

namespace {

using namespace cosim;
using namespace cosim::dds;

// remote_protocol.hpp
constexpr std::int32_t kind_initialize = 1;
constexpr std::int32_t kind_step = 3;
constexpr std::int32_t kind_start = 4;
constexpr std::int32_t kind_stop = 5;
constexpr std::int32_t status_ok = 0;
constexpr std::int32_t status_refused = 3;

constexpr std::int64_t h_ns = 1'000'000;  // internal step = macro step: k = 1 per command

/// One output y = number of internal steps taken.
class counter final : public subsystem {
 public:
  counter() : subsystem("counter") {
    add_output({"y", "1", port_role::signal});
    set_step_size(duration{h_ns});
  }
  std::atomic<std::int64_t> steps{0};

 private:
  void do_initialize(time_point /*t0*/) override {}
  bool do_step(time_point /*t*/, duration /*h*/) noexcept override {
    ++steps;
    return true;
  }
  void do_update_outputs(time_point /*t*/) noexcept override {
    set_output(0, static_cast<double>(steps.load()));
  }
};

remote_options options(const char* test) {
  remote_options o;
  o.partition = std::string("cosim-test-guard-") + test + "-" + std::to_string(::getpid());
  o.lease_ns = 2'000'000'000;
  o.timeout_ns = 2'000'000'000;
  o.discovery_timeout_ns = 10'000'000'000;
  o.macro_step_ns = h_ns;
  return o;
}

qos_options qos(const remote_options& o) {
  qos_options q;
  q.partition = o.partition;
  q.lease_ns = o.lease_ns;
  return q;
}

TEST(DdsGuard, WorkerRefusesCommandsOutsideThePlan) {
  const remote_options o = options("plan");
  counter real;
  worker_outcome out;
  std::thread worker([&] { out = serve_subsystem(real, o, nullptr); });
  [&] {
    const participant p(o.domain, o.partition, o.lease_ns);
    writer cmd_w(p, make_topic(p, &cosim_remote_command_desc, "cosim_cmd_counter"), qos(o));
    reader reply_r(p, make_topic(p, &cosim_remote_reply_desc, "cosim_reply_counter"), qos(o));
    ASSERT_TRUE(wait_for_peer(cmd_w, reply_r, o.discovery_timeout_ns));
    auto cmd = std::make_unique<cosim_remote_command>();
    auto rep = std::make_unique<cosim_remote_reply>();
    *cmd = cosim_remote_command{};
    // Sends one command; the reply's status, or -1 if none came within `wait_ns`.
    const auto send = [&](std::uint64_t seq, std::int32_t kind, std::int64_t k,
                          std::int64_t wait_ns = 5'000'000'000) -> std::int32_t {
      cmd->seq = seq;
      cmd->kind = kind;
      cmd->t_ns = 0;
      cmd->h_ns = h_ns;
      cmd->k = k;
      cmd->t_out_ns = k * h_ns;
      EXPECT_TRUE(cmd_w.write(cmd.get()));
      for (;;) {
        if (reply_r.take(rep.get(), wait_ns) != take_result::sample) return -1;
        if (rep->seq == seq) return rep->status;
      }
    };
    ASSERT_EQ(send(1, kind_initialize, 0), status_ok);
    ASSERT_EQ(send(2, kind_start, 0), status_ok);
    // k = 10^12 steps of 1 ms: a forged command that would keep the worker busy for ever.
    EXPECT_EQ(send(3, kind_step, 1'000'000'000'000), status_refused);
    EXPECT_EQ(send(4, kind_step, 1), status_ok);
    // The same step again, and a step that skips a number: not answered, not run.
    EXPECT_EQ(send(4, kind_step, 1, 300'000'000), -1);
    EXPECT_EQ(send(6, kind_step, 1, 300'000'000), -1);
    EXPECT_EQ(send(5, kind_stop, 0), status_ok);
  }();
  worker.join();
  EXPECT_TRUE(out.completed) << out.message;
  EXPECT_EQ(real.steps.load(), 1) << "a refused step command was run";
  EXPECT_EQ(out.refused, 3);
  EXPECT_EQ(out.late, 1);
}

TEST(DdsGuard, SecondMasterOnAPartitionIsRefused) {
  const remote_options o = options("masters");
  counter real;
  worker_outcome out;
  std::thread worker([&] { out = serve_subsystem(real, o, nullptr); });
  [&] {
    auto first = make_remote_proxy(real, o);
    ASSERT_NO_THROW(first->initialize(time_point{}));
    stop_source stop;
    ASSERT_NO_THROW(first->start(stop));
    auto second = make_remote_proxy(real, o);
    try {
      second->initialize(time_point{});
      ADD_FAILURE() << "a second master on the partition started";
    } catch (const error& e) {
      EXPECT_NE(std::string(e.what()).find("another master is on DDS domain"), std::string::npos)
          << e.what();
    }
    second.reset();
    // The first master's run goes on.
    EXPECT_TRUE(first->steps(time_point{}, duration{h_ns}, 1));
    first->update_outputs(time_point{duration{h_ns}});
    EXPECT_EQ(first->output(0), 1.0);
    first->stop(false);
  }();
  worker.join();
  EXPECT_TRUE(out.completed) << out.message;
}

}  // namespace
