#pragma once
// Shared by proxy and worker: command kinds, reply status, topic names, sample packing.
#include <cstdint>
#include <limits>
#include <string>

#include "cosim/dds/entities.hpp"
#include "cosim/dds/remote.hpp"
#include "cosim/runtime/subsystem.hpp"
#include "cosim_remote.h"

namespace cosim::dds::detail {

enum command_kind : std::int32_t {
  cmd_initialize = 1,  // initialize(t_ns)
  cmd_update = 2,      // apply inputs; update_outputs(t_out_ns)
  cmd_step = 3,        // apply inputs; steps(t_ns, h_ns, k); update_outputs(t_out_ns)
  cmd_start = 4,       // start()
  cmd_stop = 5,        // stop(fail_safe); the worker then ends
};

enum reply_status : std::int32_t {
  reply_ok = 0,
  reply_step_failed = 1,  // steps() returned false
  reply_error = 2,        // initialize()/start() threw
  reply_refused = 3,      // a step command outside the run's plan: not executed
};

/// QoS of both step topics, on both sides: depth 1 + dds.max_missed. Without tolerance one
/// command is in flight at a time (the next is written only after its reply). Each tolerated
/// miss leaves one more unanswered: the worker must still receive every one, in order, and
/// the master every late reply, so that the worker's state keeps step with the master's
/// time and each late reply is counted (never applied) rather than overwritten unseen.
inline qos_options endpoint(const remote_options& o) {
  qos_options q;
  q.partition = o.partition;
  q.depth = static_cast<std::int32_t>(1 + o.max_missed);
  // Over shared memory no deadline: Cyclone 0.10 sends an endpoint with a finite
  // deadline over UDP instead of iceoryx.
  q.deadline_ns = o.shared_memory ? 0 : o.deadline_ns;
  q.lease_ns = o.lease_ns;
  return q;
}

/// Input time stamp of a port that has no sample (a signal source feeds it).
inline constexpr std::int64_t no_sample = std::numeric_limits<std::int64_t>::min();

inline std::string command_topic(const std::string& name) {
  return "cosim_cmd_" + name;
}
inline std::string reply_topic(const std::string& name) {
  return "cosim_reply_" + name;
}

/// Outputs, then variables (raw doubles) of `s` into `r`.
inline void pack_values(const subsystem& s, cosim_remote_reply& r) noexcept {
  std::uint32_t n = 0;
  for (const double v : s.outputs()) r.values[n++] = v;
  for (const variable_desc& v : s.variables()) r.values[n++] = v.value != nullptr ? *v.value : 0.0;
  r.n_values = n;
}

}  // namespace cosim::dds::detail
