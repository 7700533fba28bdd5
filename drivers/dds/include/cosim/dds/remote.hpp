#pragma once
// Remote subsystems (issue 13, docs/distributed.md): a subsystem that runs in a
// `cosim worker` process, on this or another host, behind a proxy with the same ports and
// variables. Per communication interval the proxy sends one command sample (the newest
// sample of every input port, the energy corrections, t, h, k) on the topic
// "cosim_cmd_NAME" and waits for one reply sample (outputs and variables as raw doubles) on
// "cosim_reply_NAME", both in the [dds] partition. The worker applies the same samples to
// the same input ports and does the same arithmetic, so results are bit for bit those of
// the local subsystem; the transport changes timing only.
//
// Failure semantics: the proxy waits at most `timeout` for a reply (stop cause
// remote_deadline) and stops waiting as soon as the worker's liveliness lease expires
// (remote_lost); replies with another sequence number are counted as late and never
// applied. The worker stops its subsystem fail-safe when the master's liveliness is lost.
#include <cstdint>
#include <memory>
#include <string>

#include "cosim/dds/entities.hpp"
#include "cosim/dds/worker_process.hpp"
#include "cosim/runtime/stop_source.hpp"
#include "cosim/runtime/subsystem.hpp"

namespace cosim::dds {

struct remote_options {
  std::uint32_t domain = 0;
  std::string partition = "cosim";
  std::int64_t lease_ns = 1'000'000'000;               // liveliness (participant) lease
  std::int64_t timeout_ns = 5'000'000'000;             // longest wait for one reply
  std::int64_t discovery_timeout_ns = 30'000'000'000;  // wait for the peer at start-up
  std::int64_t deadline_ns = 0;                        // DDS deadline QoS (the macro step)
  std::int64_t macro_step_ns = 0;  // the run's macro step: a step command covers at most
                                   // this (or one internal step, if longer); 0: not checked
  std::int64_t max_missed = 0;     // consecutive timed-out replies held (outputs kept) before
                                   // remote_deadline; 0: the first one stops the run
  bool shared_memory = false;      // Cyclone's iceoryx transport (RouDi must run); no deadline QoS
  std::string cyclone_config;      // more Cyclone XML for the domain (host = "process": loopback)
  security_options security;       // DDS Security ([dds.security]); empty: none
  /// Optional, not owned: the operator's stop source. While the proxy sets up (waits for its
  /// worker, initialize, start) a cause raised there ends the wait: initialize()/start()
  /// throw, and the run does not start.
  const stop_source* setup_stop = nullptr;
};

/// Limits of the fixed-size samples (cosim_remote.idl).
inline constexpr std::size_t max_remote_inputs = 16;
inline constexpr std::size_t max_remote_values = 64;

/// Empty if `real` fits the samples; else why not.
[[nodiscard]] std::string remote_refusal(const subsystem& real);

/// The master side: a subsystem with the ports, variables and step size of `real` (which
/// it only describes; the worker builds its own). Creates the DDS entities (may throw).
/// `child` (host = "process"): the worker process the master started; the proxy owns it,
/// notices its end without waiting for the lease (remote_lost naming how it ended) and
/// ends it with itself.
std::unique_ptr<subsystem> make_remote_proxy(const subsystem& real, const remote_options& o,
                                             std::unique_ptr<worker_process> child = nullptr);

/// The worker side: serves `real` (built and configured exactly as on the master) until the
/// master sends stop, the master is lost, or `stop` is raised. The master is the writer of
/// the first command; commands from any other writer are refused, and so are step commands
/// outside the plan (sequence not strictly the next, k * h longer than the macro step,
/// end time not t + k h): each is logged on stderr (the first few) and counted, never run.
struct worker_outcome {
  bool completed = false;    // the master ended the run (stop command)
  bool master_lost = false;  // the master's liveliness was lost: stopped fail-safe
  std::string message;
  std::int64_t commands = 0;
  std::int64_t late = 0;     // commands with an unexpected sequence number (ignored)
  std::int64_t refused = 0;  // commands refused: from another writer than the master's, or
                             // a step outside the plan (k, h, times); logged, not executed
};
worker_outcome serve_subsystem(subsystem& real, const remote_options& o, const stop_source* stop);

}  // namespace cosim::dds
