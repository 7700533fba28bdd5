// The worker side of a remote subsystem (remote.hpp): applies each command's input samples
// to the real subsystem's ports and runs it exactly as a local executor would.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>

#include "cosim/dds/entities.hpp"
#include "cosim/dds/remote.hpp"
#include "cosim/runtime/error.hpp"
#include "remote_protocol.hpp"

namespace cosim::dds {

namespace {

using namespace detail;

time_point at_ns(std::int64_t ns) noexcept {
  return time_point{duration{ns}};
}

// The same samples the proxy's ports hold, into the real ports: receive() of an equal time
// replaces the newest value, as in the local run's re-delivery.
void apply_inputs(subsystem& s, const cosim_remote_command& c) noexcept {
  const std::size_t n = std::min<std::size_t>(c.n_inputs, s.input_count());
  for (std::size_t i = 0; i < n; ++i)
    if (c.input_time_ns[i] != no_sample)
      s.input(i).receive(at_ns(c.input_time_ns[i]), c.input_value[i]);
  for (const energy_correction& e : s.corrections())
    if (e.input < n) s.input(e.input).set_correction(c.input_correction[e.input]);
}

// Why a step command is outside the run's plan, or nullptr. The proxy sends, per macro step
// H, k steps of its subsystem's step h with k h <= H (k = H / h), or single steps of an own
// grid step (multirate); nothing else, so a larger k (a forged k = 1e12 would keep the worker
// busy for ever) or an inconsistent end time is refused.
const char* step_refusal(const cosim_remote_command& c, std::int64_t macro_step_ns) noexcept {
  if (c.h_ns <= 0) return "internal step h <= 0";
  if (c.k < 0) return "k < 0";
  if (macro_step_ns > 0 && c.k > std::max<std::int64_t>(1, macro_step_ns / c.h_ns))
    return "k steps of h cover more than the run's macro step";
  // Forged values may be anything: no signed overflow on the way.
  std::int64_t span = 0, end = 0;
  if (__builtin_mul_overflow(c.k, c.h_ns, &span) || __builtin_add_overflow(c.t_ns, span, &end) ||
      end != c.t_out_ns)
    return "end time is not t + k h";
  return nullptr;
}

// The first few refusals on stderr, the rest counted only (reported at the end): a flood of
// foreign commands cannot turn the worker's loop into a logging loop.
void log_refusal(worker_outcome& out, const std::string& name, const cosim_remote_command& c,
                 const char* why) {
  ++out.refused;
  constexpr std::int64_t logged = 10;
  if (out.refused > logged) return;
  std::fprintf(stderr, "worker %s: refused command seq %llu (kind %d, k %lld): %s%s\n",
               name.c_str(), static_cast<unsigned long long>(c.seq), static_cast<int>(c.kind),
               static_cast<long long>(c.k), why,
               out.refused == logged ? " (further refusals are counted, not logged)" : "");
  std::fflush(stderr);
}

}  // namespace

worker_outcome serve_subsystem(subsystem& real, const remote_options& o, const stop_source* stop) {
  worker_outcome out;
  const participant p(o.domain, o.partition, o.lease_ns, o.shared_memory, {}, o.security);
  reader cmd_r(p, make_topic(p, &cosim_remote_command_desc, command_topic(real.name())),
               endpoint(o));
  writer reply_w(p, make_topic(p, &cosim_remote_reply_desc, reply_topic(real.name())), endpoint(o));
  auto cmd = std::make_unique<cosim_remote_command>();
  auto reply = std::make_unique<cosim_remote_reply>();
  *cmd = cosim_remote_command{};
  *reply = cosim_remote_reply{};
  stop_source local_stop(stop);
  bool started = false;
  bool reply_matched = false;
  std::uint64_t expected = 1;
  // Polls in slices so an operator signal ends the wait for the master too.
  const std::int64_t slice = 100'000'000;
  const dds_time_t give_up = dds_time() + o.discovery_timeout_ns;
  for (;;) {
    if (local_stop.stop_requested()) {
      if (started) real.stop(true);
      out.message = "stopped by the operator";
      return out;
    }
    const take_result r = cmd_r.take(cmd.get(), slice);
    if (r == take_result::timeout) {
      if (out.commands == 0 && !cmd_r.ever_alive() && dds_time() > give_up) {
        out.message = "no master within dds.discovery_timeout";
        return out;
      }
      continue;
    }
    if (r == take_result::lost) {
      // The master is gone: the subsystem stops fail-safe (a driver sends its safe values).
      if (started) real.stop(true);
      out.master_lost = true;
      out.message = "the master's liveliness was lost; subsystem stopped fail-safe";
      return out;
    }
    // The master is the writer of the first command; anyone else writing commands on this
    // partition (a second master, a forger) is refused, and does not count as the master's
    // liveliness either.
    if (cmd_r.peer() != 0 && cmd_r.last_writer() != cmd_r.peer()) {
      log_refusal(out, real.name(), *cmd,
                  "not from the master this worker serves (a second master on its partition?)");
      continue;
    }
    if (cmd->seq + 1 == expected && out.commands > 0) {
      // The master repeats a setup or stop command until it hears the answer (the path may
      // have lost the first copy or our reply): the same reply again, nothing re-applied.
      // It never repeats a step.
      if (cmd->kind == cmd_step)
        log_refusal(out, real.name(), *cmd, "a step command repeated");
      else
        (void)reply_w.write(reply.get());
      continue;
    }
    if (cmd->seq != expected) {
      ++out.late;  // never applied: it belongs to another step
      log_refusal(out, real.name(), *cmd, "sequence number is not the next one");
      continue;
    }
    if (expected == 1) cmd_r.bind_peer(cmd_r.last_writer());
    ++expected;
    ++out.commands;
    reply->seq = cmd->seq;
    reply->status = reply_ok;
    const char* refusal = cmd->kind == cmd_step ? step_refusal(*cmd, o.macro_step_ns) : nullptr;
    if (refusal != nullptr) {
      // From the master itself: answered as refused, so that its run stops at this step
      // rather than waiting for a reply that never comes.
      log_refusal(out, real.name(), *cmd, refusal);
      reply->status = reply_refused;
      pack_values(real, *reply);
      (void)reply_w.write(reply.get());
      continue;
    }
    switch (cmd->kind) {
      case cmd_initialize:
        try {
          real.initialize(at_ns(cmd->t_ns));
        } catch (const std::exception& e) {
          reply->status = reply_error;
          out.message = std::string("initialize: ") + e.what();
        }
        break;
      case cmd_update:
        apply_inputs(real, *cmd);
        real.update_outputs(at_ns(cmd->t_out_ns));
        break;
      case cmd_step: {
        apply_inputs(real, *cmd);
        const bool ok = real.steps(at_ns(cmd->t_ns), duration{cmd->h_ns}, cmd->k);
        // As scheme::advance: the outputs at the end, whether or not a step failed.
        real.update_outputs(at_ns(cmd->t_out_ns));
        if (!ok) reply->status = reply_step_failed;
        break;
      }
      case cmd_start:
        try {
          real.start(local_stop);
          started = true;
        } catch (const std::exception& e) {
          reply->status = reply_error;
          out.message = std::string("start: ") + e.what();
        }
        break;
      case cmd_stop:
        if (started) real.stop(cmd->fail_safe);
        started = false;
        break;
      default:
        reply->status = reply_error;
        break;
    }
    pack_values(real, *reply);
    if (!reply_matched) {
      // The master's command writer can be discovered before its reply reader: a reply
      // written then reaches nobody (volatile durability) and the master waits in vain.
      // Once, before the first reply (setup, not the step path).
      const dds_time_t until = dds_time() + o.discovery_timeout_ns;
      while (reply_w.matched() == 0 && dds_time() < until) dds_sleepfor(DDS_MSECS(1));
      reply_matched = true;
    }
    (void)reply_w.write(reply.get());
    if (cmd->kind == cmd_stop) {
      out.completed = true;
      return out;
    }
  }
}

}  // namespace cosim::dds
