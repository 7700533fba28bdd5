// The master side of a remote subsystem (remote.hpp): ferries input samples to the worker
// and raw output doubles back, once per communication interval.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cosim/dds/entities.hpp"
#include "cosim/dds/remote.hpp"
#include "cosim/runtime/error.hpp"
#include "cosim/runtime/json_writer.hpp"
#include "remote_protocol.hpp"

namespace cosim::dds {

namespace {

using namespace detail;

std::string seconds(std::int64_t ns) {
  return std::to_string(static_cast<double>(ns) * 1e-9);
}

// A reader of the command topic that does not see this participant's own writer: any writer
// it matches is another master (or a forger) on the same partition, which the setup refuses.
// Keep-last 1, and deleted once the run has started: nothing of it on the step path.
qos_options other_masters(const remote_options& o) {
  qos_options q = endpoint(o);
  q.depth = 1;
  q.deadline_ns = 0;
  q.ignore_local = true;
  return q;
}

class remote_proxy final : public subsystem {
 public:
  remote_proxy(const subsystem& real, const remote_options& o,
               std::unique_ptr<worker_process> child)
      : subsystem(real.name()),
        o_(o),
        child_(std::move(child)),
        p_(o.domain, o.partition, o.lease_ns, o.shared_memory, o.cyclone_config, o.security),
        cmd_topic_(make_topic(p_, &cosim_remote_command_desc, command_topic(real.name()))),
        cmd_w_(p_, cmd_topic_, endpoint(o)),
        reply_r_(p_, make_topic(p_, &cosim_remote_reply_desc, reply_topic(real.name())),
                 endpoint(o)),
        others_(p_, cmd_topic_, other_masters(o)),
        cmd_(std::make_unique<cosim_remote_command>()),
        reply_(std::make_unique<cosim_remote_reply>()) {
    for (std::size_t i = 0; i < real.input_count(); ++i) add_input(real.input(i).desc());
    for (std::size_t o2 = 0; o2 < real.output_count(); ++o2) {
      add_output(real.output_desc(o2));
      set_output(o2, real.output(o2));
    }
    // Per input, as the real one says (an FMU's declared dependencies, or the user's
    // no_feedthrough), not just its ports' feedthrough flags.
    depends_.assign(real.output_count() * real.input_count(), 0);
    for (std::size_t o2 = 0; o2 < real.output_count(); ++o2)
      for (std::size_t i = 0; i < real.input_count(); ++i)
        depends_[o2 * real.input_count() + i] = real.output_depends_on(o2, i) ? 1 : 0;
    // Variables point into this proxy: the worker's values land here (raw doubles).
    const auto vars = real.variables();
    var_values_.assign(vars.size(), 0.0);
    for (std::size_t v = 0; v < vars.size(); ++v) {
      if (vars[v].value != nullptr) var_values_[v] = *vars[v].value;
      add_variable(vars[v].name, vars[v].unit, &var_values_[v]);
    }
    set_step_size(real.step_size());
    *cmd_ = cosim_remote_command{};
    *reply_ = cosim_remote_reply{};
    // A worker this master started builds its model (an FMU: loaded, instantiated and
    // initialised) before it answers: waiting for it while the system is built reports a
    // model that fails there before the results folder is touched.
    if (child_ != nullptr && !discover()) throw error(errc::runtime, no_worker_text());
  }

  // Its timing depends on the network and another process: measured, not guaranteed.
  [[nodiscard]] bool realtime_safe() const noexcept override { return false; }
  [[nodiscard]] bool output_depends_on(std::size_t o, std::size_t i) const noexcept override {
    return o < output_count() && i < input_count() && depends_[o * input_count() + i] != 0;
  }
  [[nodiscard]] std::string state_refusal() const override {
    return std::string("it runs in a worker process (host = \"") + host() +
           "\") and cannot roll back";
  }
  [[nodiscard]] bool has_statistics() const noexcept override { return true; }
  void write_statistics(json_writer& j) const override {
    j.begin_object();
    j.key("name").value(name());
    j.key("host").value(host());
    j.key("round_trips").value(round_trips_);
    j.key("late_samples").value(late_);
    j.key("deadline_missed").value(static_cast<std::int64_t>(reply_r_.deadline_missed()));
    j.key("held_steps").value(held_steps_);
    if (foreign_ > 0) j.key("foreign_replies").value(foreign_);
    // How long the worker had been silent (since its last reply, late or not) when the run
    // stopped for it: about dds.lease for remote_lost, at least (dds.max_missed + 1) x
    // dds.timeout for remote_deadline.
    if (failure_ != stop_cause::none)
      j.key("silence_s").value(static_cast<double>(silence_ns_) * 1e-9);
    if (child_ != nullptr) {
      j.key("worker_pid").value(static_cast<std::int64_t>(child_->pid()));
      // How the worker ended, if not by the master's stop (then it may still be exiting).
      if (child_->ended() && child_->stop_code() != 256)
        j.key("worker_process").value(child_->describe());
    }
    j.end_object();
  }

 private:
  [[nodiscard]] const char* host() const noexcept { return child_ != nullptr ? "process" : "dds"; }

  // Waits for the worker like wait_for_peer, in slices: between them a worker this master
  // started is watched (if it ends first, an FMU crashing while it is built, that is the
  // error) and so is the operator's stop (a signal ends the wait, not the discovery timeout).
  bool discover() {
    const dds_time_t until = dds_time() + o_.discovery_timeout_ns;
    for (;;) {
      if (wait_for_peer(cmd_w_, reply_r_,
                        std::min<std::int64_t>(child_poll_ns, until - dds_time()))) {
        check_other_masters();
        return true;
      }
      if (child_ != nullptr && child_->ended())
        throw error(errc::runtime, "remote subsystem '" + name() + "': its worker process " +
                                       child_->describe() +
                                       " before it answered (its output is above, lines "
                                       "prefixed [worker " +
                                       name() + "])");
      if (setup_stopped()) throw error(errc::runtime, interrupted_text("waiting for its worker"));
      if (dds_time() >= until) return false;
    }
  }

  // Two masters on one partition would each take the other's replies as late ones and
  // stall; the one that finds the other refuses to start, saying so.
  void check_other_masters() {
    if (others_.get() == 0 || others_.matched_writers() == 0) return;
    throw error(errc::runtime, other_master_text());
  }
  [[nodiscard]] std::string other_master_text() const {
    return "remote subsystem '" + name() + "': another master is on DDS domain " +
           std::to_string(o_.domain) + ", partition \"" + o_.partition + "\" (" +
           std::to_string(others_.matched_writers()) + " other writer(s) of " +
           command_topic(name()) +
           "): refused, two masters on one partition would stall each other; give each run "
           "its own dds.partition (or dds.domain)";
  }

  [[nodiscard]] bool setup_stopped() const noexcept {
    return setting_up_ && o_.setup_stop != nullptr && o_.setup_stop->stop_requested();
  }

  [[nodiscard]] std::string interrupted_text(const char* what) const {
    const int sig = o_.setup_stop != nullptr ? o_.setup_stop->code() : 0;
    const char* abbrev = sig > 0 ? sigabbrev_np(sig) : nullptr;
    return "remote subsystem '" + name() + "': stopped by the operator" +
           (abbrev != nullptr ? std::string(" (SIG") + abbrev + ")" : std::string()) + " while " +
           what + "; the run did not start";
  }

  void do_initialize(time_point t0) override {
    setting_up_ = true;
    interrupted_ = false;
    failed_ = false;
    pending_ = false;
    held_ = false;
    missed_in_a_row_ = 0;
    if (!discover()) throw error(errc::runtime, no_worker_text());
    cmd_->t_ns = t0.time_since_epoch().count();
    request(cmd_initialize, "initialize");
  }

  std::string no_worker_text() const {
    return "remote subsystem '" + name() + "': no worker on DDS domain " +
           std::to_string(o_.domain) + ", partition \"" + o_.partition +
           "\" within dds.discovery_timeout = " + seconds(o_.discovery_timeout_ns) +
           " s (start it with `cosim worker SYSTEM --subsystem " + name() + "`)";
  }

  void do_start(stop_source& stop) override {
    if (failed_) throw error(errc::runtime, failure_text("the start-up exchange"));
    request(cmd_start, "start");
    setting_up_ = false;
    stop_ = &stop;
    others_ = reader();  // setup only
  }

  void do_stop(bool fail_safe) noexcept override {
    setting_up_ = false;  // the stop command goes out whatever stopped the run
    stop_ = nullptr;
    if (failed_) return;
    cmd_->fail_safe = fail_safe;
    // The worker answers, then exits by itself: give it that time before signalling it.
    if (exchange(cmd_stop, o_.timeout_ns, false) && child_ != nullptr)
      child_->expect_exit(std::chrono::seconds(5));
  }

  bool do_step(time_point t, duration h) noexcept override { return do_steps(t, h, 1); }

  bool do_steps(time_point t, duration h, std::int64_t k) noexcept override {
    pack_inputs();
    cmd_->t_ns = t.time_since_epoch().count();
    cmd_->h_ns = h.count();
    cmd_->k = k;
    cmd_->t_out_ns = (t + k * h).time_since_epoch().count();
    if (!exchange(cmd_step)) return false;
    // scheme::advance evaluates the outputs at the end of the steps next: they came along
    // (or, held, the last reply's stay).
    pending_ = true;
    pending_held_ = held_;
    pending_t_ = cmd_->t_out_ns;
    return held_ || reply_->status == reply_ok;
  }

  void do_update_outputs(time_point t) noexcept override {
    if (pending_ && pending_t_ == t.time_since_epoch().count()) {
      pending_ = false;
      if (!pending_held_) apply_reply();
      return;
    }
    pending_ = false;
    pack_inputs();
    cmd_->t_out_ns = t.time_since_epoch().count();
    cmd_->k = 0;
    // Before start() this is the start-up exchange at t0 (initialize_and_exchange): a setup
    // exchange like initialize's, never held. Held, it would leave initialize's reply (outputs
    // not yet evaluated, e.g. a force of 0) in the t0 row and in the t0 delivery to the
    // other subsystems; a failure here is reported by start().
    if (stop_ == nullptr) {
      if (exchange(cmd_update, o_.discovery_timeout_ns, false)) apply_reply();
      return;
    }
    if (exchange(cmd_update) && !held_) apply_reply();
  }

  // The newest sample of every input, as the executor delivered it to this proxy; the
  // worker receives it into the same port of the real subsystem.
  void pack_inputs() noexcept {
    cmd_->n_inputs = static_cast<std::uint32_t>(input_count());
    for (std::size_t i = 0; i < input_count(); ++i) {
      const sample_history& h = input(i).history();
      cmd_->input_time_ns[i] =
          h.size() > 0 ? h.newest_time().time_since_epoch().count() : no_sample;
      cmd_->input_value[i] = h.size() > 0 ? h.newest() : 0.0;
      cmd_->input_correction[i] = input(i).correction();
    }
  }

  void apply_reply() noexcept {
    const std::size_t n_out = output_count();
    for (std::size_t o = 0; o < n_out && o < reply_->n_values; ++o)
      set_output(o, reply_->values[o]);
    for (std::size_t v = 0; v < var_values_.size() && n_out + v < reply_->n_values; ++v)
      var_values_[v] = reply_->values[n_out + v];
  }

  // Setup exchanges (initialize, start): failures throw. They wait up to
  // dds.discovery_timeout, not dds.timeout: the worker may still be setting up (matching its
  // reply writer), and a tight step budget must not turn a slow start into a failed one.
  void request(std::int32_t kind, const char* what) {
    if (!exchange(kind, o_.discovery_timeout_ns, false))
      throw error(errc::runtime, failure_text(what));
    if (reply_->status != reply_ok)
      throw error(errc::runtime, "remote subsystem '" + name() + "': " + what +
                                     " failed in the worker (see its output)");
    apply_reply();
  }

  std::string failure_text(const char* what) const {
    if (interrupted_) return interrupted_text(what);
    if (other_master_)
      return "remote subsystem '" + name() + "': " + what + ": " + other_master_text();
    if (failure_ == stop_cause::remote_lost && child_ != nullptr && child_->ended())
      return "remote subsystem '" + name() + "': " + what + ": its worker process " +
             child_->describe() + " (its output is above, lines prefixed [worker " + name() + "])";
    return "remote subsystem '" + name() + "': " + what + ": " +
           (failure_ == stop_cause::remote_lost
                ? "the worker was lost (liveliness lease " + seconds(o_.lease_ns) + " s)"
                : "no reply within " +
                      std::string(waited_ns_ == o_.timeout_ns ? "dds.timeout = "
                                                              : "dds.discovery_timeout = ") +
                      seconds(waited_ns_) + " s");
  }

  // One command, one reply with the same sequence number, within timeout. Replies with
  // another number (a late answer to an earlier command) are counted and dropped: reply_
  // then holds a sample that is never applied. In the run's steps (`tolerant`) up to
  // dds.max_missed consecutive timeouts are held: true with held_ set, the outputs stay at
  // the last reply's values (zero-order hold) and the command stays in flight; the worker
  // still answers it, late. The next miss is the remote_deadline stop.
  // Setup and stop exchanges (not `tolerant`) repeat their command every setup_resend_ns
  // until the answer comes: matched endpoints do not yet mean a connected path (over shared
  // memory, iceoryx connects a subscriber after DDS has matched it, and a volatile sample
  // written in between is lost). The worker answers a repeat with its last reply again;
  // such answers are not late samples.
  bool exchange(std::int32_t kind) noexcept { return exchange(kind, o_.timeout_ns, true); }
  bool exchange(std::int32_t kind, std::int64_t timeout_ns, bool tolerant) noexcept {
    if (failed_) return false;
    held_ = false;
    cmd_->seq = ++seq_;
    cmd_->kind = kind;
    if (!cmd_w_.write(cmd_.get())) return fail(stop_cause::remote_lost);
    waited_ns_ = timeout_ns;
    const dds_time_t until = dds_time() + timeout_ns;
    dds_time_t resend_at = dds_time() + setup_resend_ns;
    for (;;) {
      const dds_time_t now = dds_time();
      // A worker this master started is checked between slices of the wait: its end is
      // noticed within a slice, not after the liveliness lease.
      dds_time_t wait = until - now;
      if (child_ != nullptr) wait = std::min<dds_time_t>(wait, child_poll_ns);
      if (!tolerant) wait = std::min<dds_time_t>(wait, resend_at - now);
      switch (reply_r_.take(reply_.get(), wait > 0 ? wait : 0)) {
        case take_result::sample:
          heard_ns_ = now_ns();  // any reply, late or not, is a sign of life
          // The worker is the writer of the first answer: from then on only its writer's
          // liveliness counts (another participant's writer on the topic keeps no dead
          // worker alive), and other writers' samples are not its answers.
          if (reply_r_.peer() != 0 && reply_r_.last_writer() != reply_r_.peer()) {
            ++foreign_;
            continue;
          }
          if (reply_->seq != seq_) {
            if (!repeated(reply_->seq)) ++late_;
            continue;
          }
          if (reply_r_.peer() == 0) reply_r_.bind_peer(reply_r_.last_writer());
          ++round_trips_;
          missed_in_a_row_ = 0;
          return true;
        case take_result::timeout:
          if (child_ != nullptr && child_->ended()) return fail(stop_cause::remote_lost);
          if (!tolerant && setup_stopped()) {
            interrupted_ = true;
            failed_ = true;
            return false;
          }
          // A worker serving another master refuses our commands: find out why no answer.
          if (!tolerant && setting_up_ && others_.get() != 0 && others_.matched_writers() > 0) {
            other_master_ = true;
            failed_ = true;
            return false;
          }
          if (!tolerant && dds_time() >= resend_at && dds_time() < until) {
            if (!repeated(seq_)) repeated_[n_repeated_++ % repeated_.size()] = seq_;
            if (!cmd_w_.write(cmd_.get())) return fail(stop_cause::remote_lost);
            resend_at = dds_time() + setup_resend_ns;
            continue;
          }
          if ((child_ != nullptr || !tolerant) && dds_time() < until) continue;
          if (tolerant && missed_in_a_row_ < o_.max_missed) {
            ++missed_in_a_row_;
            ++held_steps_;
            held_ = true;
            return true;
          }
          return fail(stop_cause::remote_deadline);
        case take_result::lost:
          return fail(stop_cause::remote_lost);
      }
    }
  }

  [[nodiscard]] bool repeated(std::uint64_t seq) const noexcept {
    return std::find(repeated_.begin(), repeated_.end(), seq) != repeated_.end();
  }

  static std::int64_t now_ns() noexcept {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }

  bool fail(stop_cause c) noexcept {
    if (heard_ns_ != 0) silence_ns_ = now_ns() - heard_ns_;
    failed_ = true;
    failure_ = c;
    // code: how a started worker process ended (256 + exit status, or the signal; executor.cpp
    // names it in the stop message), 0 for a host = "dds" worker.
    const int code = c == stop_cause::remote_lost && child_ != nullptr ? child_->stop_code() : 0;
    if (stop_ != nullptr) stop_->raise(c, code, name().c_str());
    return false;
  }

  static constexpr std::int64_t child_poll_ns = 20'000'000;
  static constexpr std::int64_t setup_resend_ns = 100'000'000;

  remote_options o_;
  // Declared before the DDS entities: the worker process ends after them.
  std::unique_ptr<worker_process> child_;
  participant p_;
  dds_entity_t cmd_topic_;
  writer cmd_w_;
  reader reply_r_;
  reader others_;  // other writers of the command topic, during setup (then empty)
  std::unique_ptr<cosim_remote_command> cmd_;
  std::unique_ptr<cosim_remote_reply> reply_;
  std::vector<double> var_values_;
  std::vector<char> depends_;  // output o, input i at o * input_count() + i
  std::uint64_t seq_ = 0;
  std::array<std::uint64_t, 4> repeated_{};  // the last commands sent more than once
  std::size_t n_repeated_ = 0;
  stop_source* stop_ = nullptr;
  bool setting_up_ = true;     // from initialize until start returned: setup_stop is watched
  bool interrupted_ = false;   // a setup exchange ended by setup_stop
  bool other_master_ = false;  // a setup exchange ended by another master on the partition
  std::int64_t foreign_ = 0;   // replies from another writer than the worker's (not applied)
  bool failed_ = false;
  stop_cause failure_ = stop_cause::none;
  bool pending_ = false;
  bool pending_held_ = false;  // the pending outputs are held (the reply timed out)
  std::int64_t pending_t_ = 0;
  bool held_ = false;                 // the last exchange timed out within dds.max_missed
  std::int64_t missed_in_a_row_ = 0;  // consecutive held exchanges
  std::int64_t held_steps_ = 0;       // held exchanges in the run
  std::int64_t heard_ns_ = 0;         // steady clock when the last reply (any) was taken
  std::int64_t silence_ns_ = 0;       // since then, when the run failed for this worker
  std::int64_t late_ = 0;
  std::int64_t round_trips_ = 0;
  std::int64_t waited_ns_ = 0;  // the timeout of the last exchange, for its failure message
};

}  // namespace

std::string remote_refusal(const subsystem& real) {
  if (real.input_count() > max_remote_inputs)
    return "has " + std::to_string(real.input_count()) +
           " inputs; a remote subsystem has at most " + std::to_string(max_remote_inputs);
  if (real.output_count() + real.variables().size() > max_remote_values)
    return "has " + std::to_string(real.output_count() + real.variables().size()) +
           " outputs and variables; a remote subsystem has at most " +
           std::to_string(max_remote_values);
  for (std::size_t o = 0; o < real.output_count(); ++o)
    if (real.output_desc(o).derivative_order > 0)
      return "output '" + real.output_desc(o).name +
             "' gives time derivatives, which remote subsystems do not carry yet";
  return {};
}

std::unique_ptr<subsystem> make_remote_proxy(const subsystem& real, const remote_options& o,
                                             std::unique_ptr<worker_process> child) {
  const std::string why = remote_refusal(real);
  if (!why.empty()) throw error(errc::config_value, "subsystem '" + real.name() + "' " + why);
  return std::make_unique<remote_proxy>(real, o, std::move(child));
}

}  // namespace cosim::dds
