#include "threaded_roles.hpp"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <thread>

#include "cosim/runtime/feedthrough_correction.hpp"
#include "cosim/runtime/hardware.hpp"
#include "cosim/runtime/json_writer.hpp"
#include "cosim/runtime/rt_thread.hpp"

namespace cosim::detail::threaded {

namespace {

// Longest sleep of the recorder between polls in realtime mode: bounds its reaction to an
// operator stop when H is long.
constexpr std::int64_t max_recorder_sleep_ns = 10'000'000;

// The watchdog checks at a multiple of H of at least this: often enough that a stop
// follows an overflowing bucket within milliseconds, rarely enough to stay off the CPUs.
constexpr std::int64_t min_watchdog_period_ns = 5'000'000;

std::int64_t watchdog_period_ns(std::int64_t H_ns) noexcept {
  return H_ns * std::max<std::int64_t>(1, (min_watchdog_period_ns + H_ns - 1) / H_ns);
}

}  // namespace

void backoff::pause() noexcept {
  if (n_ < 64) {
    cpu_relax();
  } else if (n_ < 256) {
    std::this_thread::yield();
  } else {
    const timespec ts{0, 20'000};
    nanosleep(&ts, nullptr);
  }
  ++n_;
}

bool shared_state::raise_shift(std::int64_t s) noexcept {
  std::int64_t cur = shift.load(std::memory_order_relaxed);
  while (cur < s) {
    // release: a partner that later pops this thread's output sees the new schedule.
    if (shift.compare_exchange_weak(cur, s, std::memory_order_release, std::memory_order_relaxed))
      return true;
  }
  return false;
}

void shared_state::wait_for_go() const noexcept {
  backoff wait;
  while (!go.load(std::memory_order_acquire)) wait.pause();
}

// ---------------------------------------------------------------------- subsystem_worker

subsystem_worker::subsystem_worker(shared_state& shared, std::size_t index, sample_rings& rings,
                                   energy_monitor& mon, std::span<const std::size_t> rank,
                                   rt_log_drain& drain)
    : shared_(shared), index_(index), rings_(rings), mon_(mon) {
  const system& sys = shared.sys;
  const threaded_options& opt = shared.opt;
  setup_ = opt.threads.empty() ? thread_setup{} : opt.threads[index];
  const auto& conns = sys.connections();
  for (std::size_t c = 0; c < conns.size(); ++c) {
    if (conns[c].to == index) {
      in_conns_.push_back(c);
      const bool upstream =
          shared.plan.scheme == scheme_kind::gauss_seidel && rank[conns[c].from] < rank[index];
      in_offset_.push_back(upstream ? 1 : 0);
      in_have_.push_back(0);
    }
    if (conns[c].from == index) out_conns_.push_back(c);
  }
  for (std::size_t p = 0; p < sys.probes().size(); ++p) {
    if (sys.probes()[p].subsystem != index) continue;
    probes_.push_back(sys.probes()[p].value);
    probe_slots_.push_back(p);
  }
  capture_count_ = mon.capture_count(index);
  stride_ = sys.at(index).output_count() + probes_.size() + capture_count_;
  records_ = std::make_unique<spsc_ring<step_record>>(opt.record_capacity);
  value_slots_ = opt.record_capacity + 1;
  values_.assign(value_slots_ * stride_, 0.0);  // allocated and touched here
  log_ = &drain.add_channel(sys.at(index).name());
}

void subsystem_worker::run() noexcept {
  prefault_stack(std::size_t{64} * 1024);
  shared_.wait_for_go();
  const threaded_options& opt = shared_.opt;
  if (opt.hook != nullptr) opt.hook(opt.hook_ctx, index_, true);
  loop();
  if (opt.hook != nullptr) opt.hook(opt.hook_ctx, index_, false);
}

void subsystem_worker::loop() noexcept {
  const bool realtime = shared_.opt.realtime;
  const run_plan& plan = shared_.plan;
  const std::int64_t H_ns = shared_.period_ns();
  const auto& conns = shared_.sys.connections();
  subsystem& sub = shared_.sys.at(index_);
  step_record rec;
  for (std::int64_t n = 0; n < plan.macro_steps; ++n) {
    if (shared_.stopping()) return;
    std::int64_t release = 0;
    std::int64_t woke = 0;
    if (realtime) {
      // A shift raised while this thread slept (a partner ran late) moves its release
      // too: waking at the old time would only mean waiting for the late sample.
      std::int64_t shift = shared_.shift.load(std::memory_order_acquire);
      for (;;) {
        release = shared_.start_ns + (n + shift) * H_ns;
        sleep_until_ns(release);
        const std::int64_t now_shift = shared_.shift.load(std::memory_order_acquire);
        if (now_shift == shift) break;
        shift = now_shift;
      }
      woke = monotonic_now_ns();
      rec.release_ns = release;
      rec.wake_latency_ns = woke - release;
      wake_.record_ns(rec.wake_latency_ns);
    }
    const time_point t = plan.start + n * plan.macro_step;
    // Inputs: pop samples up to the one this step needs (sequence numbers).
    for (std::size_t k = 0; k < in_conns_.size(); ++k) {
      const std::size_t c = in_conns_[k];
      const std::uint64_t need = static_cast<std::uint64_t>(n) + in_offset_[k];
      input_port& port = sub.input(conns[c].input);
      backoff wait;
      // By sequence number, not by stamp: a non-matching producer's stamp lags t0 + seq H.
      while (in_have_[k] < need) {
        sample s;
        if (rings_[c]->try_pop(s)) {
          port.receive(time_point{duration{s.stamp_ns}}, s.value,
                       std::span<const double>(s.d.data(), static_cast<std::size_t>(s.derivs)));
          if (port.feedthrough().count > 0) port.receive_partials(s.ft_d.data(), s.ft_u.data());
          in_have_[k] = s.seq;
          continue;
        }
        if (shared_.stopping()) return;
        wait.pause();
      }
    }
    const std::int64_t exec0 = monotonic_now_ns();
    rec.begin_ns = exec0;
    busy_since_ns_.store(exec0, std::memory_order_relaxed);
    const time_point t1 = t + plan.macro_step;
    const bool ok = scheme::advance(sub, t, plan.macro_step);
    double* const vals = slot(static_cast<std::uint64_t>(n));
    std::size_t v = 0;
    for (double y : sub.outputs()) vals[v++] = y;
    for (const double* p : probes_) vals[v++] = *p;
    mon_.read_captures(index_, t1, vals + v);
    v += capture_count_;
    rec.count = static_cast<std::uint32_t>(v);
    rec.ok = ok ? 1U : 0U;
    rec.step = static_cast<std::uint64_t>(n);
    rec.overrun = 0;
    rec.skipped = 0;
    if (realtime) {
      // Judged before the outputs go out, so a partner that pops them sees the moved
      // schedule and does not count the same stall again.
      const std::int64_t end = monotonic_now_ns();
      const std::int64_t shift = shared_.shift.load(std::memory_order_acquire);
      const step_deadline d =
          check_step_deadline(shared_.start_ns, H_ns, n, shift, release, woke, exec0, end);
      if (d.late) {
        shared_.raise_shift(d.new_shift);
        shared_.late_steps.fetch_add(1, std::memory_order_relaxed);
        rec.skipped = static_cast<std::uint32_t>(d.new_shift - shift);
      }
      if (d.overrun()) {
        rec.overrun = 1;
        overruns_.fetch_add(1, std::memory_order_relaxed);
        log_->post(rt_event_code::overrun, t.time_since_epoch().count(),
                   static_cast<double>(end - release) * 1e-3, static_cast<double>(H_ns) * 1e-3,
                   rec.skipped);
      }
    }
    const std::int64_t stamp = scheme::sample_time(sub, t1).time_since_epoch().count();
    for (std::size_t c : out_conns_) {
      sample s{static_cast<std::uint64_t>(n + 1), stamp,
               scheme::delivered_output(sub, conns[c].output)};
      const std::span<const double> d = scheme::delivered_derivatives(
          sub, conns[c].output, shared_.sys.at(conns[c].to).input(conns[c].input));
      s.derivs = static_cast<std::int32_t>(std::min(d.size(), s.d.size()));
      std::copy_n(d.begin(), s.derivs, s.d.begin());
      const input_port& to = shared_.sys.at(conns[c].to).input(conns[c].input);
      if (to.feedthrough().count > 0) feedthrough::fill(sub, to, s.ft_d.data(), s.ft_u.data());
      backoff wait;
      while (!rings_[c]->try_push(s)) {
        if (shared_.stopping()) return;
        wait.pause();
      }
    }
    const std::int64_t done = monotonic_now_ns();
    rec.exec_ns = done - exec0;
    exec_.record_ns(rec.exec_ns);
    {
      backoff wait;
      while (!records_->try_push(rec)) {
        if (shared_.stopping()) return;
        wait.pause();
      }
    }
    busy_since_ns_.store(0, std::memory_order_relaxed);
    heartbeat_.store(static_cast<std::uint64_t>(n + 1), std::memory_order_release);
    if (!ok) return;  // the recorder sees ok == 0 and stops the run
  }
}

// ------------------------------------------------------------------------------ watchdog

watchdog::watchdog(shared_state& shared, const worker_list& workers, rt_log_channel& log)
    : shared_(shared), workers_(workers), log_(log), busy_since_(workers.size(), 0) {}

void watchdog::run() noexcept {
  prefault_stack(std::size_t{32} * 1024);
  shared_.wait_for_go();
  const watchdog_setup& setup = shared_.opt.watchdog;
  const run_plan& plan = shared_.plan;
  const std::int64_t H_ns = shared_.period_ns();
  const auto steps = static_cast<std::uint64_t>(plan.macro_steps);
  // Checked every few milliseconds, not every period, and half a period away from the
  // releases: the watchdog outranks the subsystem threads, so waking with them would delay
  // every release on its CPU.
  const std::int64_t period = watchdog_period_ns(H_ns);
  watchdog_rules rules(setup.max_overruns, setup.leak_steps, setup.max_overruns * H_ns, period);
  std::int64_t next = shared_.start_ns + H_ns / 2 + period;
  while (!shared_.stopping()) {
    sleep_until_ns(next);
    const std::int64_t now = monotonic_now_ns();
    next += period;
    if (next <= now) next += ((now - next) / period + 1) * period;  // no burst
    std::uint64_t steps_done = steps;
    for (std::size_t i = 0; i < workers_.size(); ++i) {
      busy_since_[i] = workers_[i]->busy_since_ns();
      steps_done = std::min(steps_done, workers_[i]->heartbeat());
    }
    const auto v = rules.check(now, shared_.late_steps.load(std::memory_order_relaxed),
                               static_cast<std::int64_t>(steps_done), busy_since_);
    if (v.stop) {
      // First the bench: the safe values leave now, from this thread, whatever the stuck
      // thread does next.
      shared_.sys.trip_fail_safe();
      shared_.stop_bucket.store(v.bucket, std::memory_order_relaxed);
      shared_.stop_hung.store(v.hung, std::memory_order_relaxed);
      shared_.stop_busy_ns.store(v.busy_ns, std::memory_order_relaxed);
      const std::int64_t tick =
          (plan.start + static_cast<std::int64_t>(steps_done) * plan.macro_step)
              .time_since_epoch()
              .count();
      if (v.hung >= 0) {
        const auto hung = static_cast<std::size_t>(v.hung);
        shared_.stop_step.store(static_cast<std::int64_t>(workers_[hung]->heartbeat()),
                                std::memory_order_relaxed);
        // Worker i's log channel has source id i (added first, in order).
        log_.post(rt_event_code::stall, tick, static_cast<double>(v.busy_ns) * 1e-3,
                  static_cast<double>(setup.max_overruns * H_ns) * 1e-3,
                  static_cast<std::uint32_t>(hung) + 1U);
      } else {
        log_.post(rt_event_code::safety_stop, tick, static_cast<double>(v.bucket),
                  static_cast<double>(setup.max_overruns), 1U);
      }
      shared_.request_stop(v.hung >= 0 ? stop_cause::stall : stop_cause::deadline);
      return;
    }
    if (steps_done >= steps) return;
  }
}

// ------------------------------------------------------------------------ step_observers

step_observers::step_observers(const shared_state& shared, std::size_t threads)
    : shared_(shared),
      interval_(shared.opt.observer != nullptr ? threads : 0),
      next_observe_(monotonic_now_ns() + shared.opt.observer_period_ns) {
  const threaded_options& opt = shared.opt;
  // The diagnostic files are results too: one that cannot be written stops the run as a
  // results.csv that cannot (output_error), naming the file.
  if (!opt.timing_csv.empty()) {
    if (timing_.open(opt.timing_csv))
      std::fputs("step,t,subsystem,wakeup_latency_us,exec_us,overrun,skipped_periods\n",
                 timing_.get());
    else
      failure_ = timing_.failure();
  }
  if (!opt.trace_json.empty()) {
    std::vector<std::string> names;
    for (std::size_t i = 0; i < threads; ++i) names.push_back(shared.sys.at(i).name());
    // Time 0: release of step 0 (realtime) or the start gate (threaded, no schedule).
    const std::int64_t origin = opt.realtime ? shared.start_ns : shared.start_ns - 2'000'000;
    if (!trace_.open(opt.trace_json, names, origin) && failure_.empty())
      failure_ = trace_.failure();
  }
}

void step_observers::step(std::size_t thread, std::int64_t n, time_point t_end,
                          const step_record& rec) {
  const threaded_options& opt = shared_.opt;
  if (std::FILE* f = timing_.get(); f != nullptr)
    std::fprintf(f, "%lld,%s,%s,%.3f,%.3f,%u,%u\n", static_cast<long long>(n),
                 format_double(to_seconds(t_end)).c_str(), shared_.sys.at(thread).name().c_str(),
                 static_cast<double>(rec.wake_latency_ns) * 1e-3,
                 static_cast<double>(rec.exec_ns) * 1e-3, rec.overrun, rec.skipped);
  trace_.step(thread, n, to_seconds(t_end), rec.begin_ns, rec.exec_ns, rec.wake_latency_ns,
              opt.realtime, rec.overrun != 0, rec.skipped);
  if (opt.observer == nullptr) return;
  thread_timing& it = interval_[thread];
  it.wake_max_ns = std::max(it.wake_max_ns, rec.wake_latency_ns);
  it.exec_max_ns = std::max(it.exec_max_ns, rec.exec_ns);
  if (opt.realtime) {
    const std::int64_t slack = rec.release_ns + shared_.period_ns() - (rec.begin_ns + rec.exec_ns);
    it.slack_min_ns = it.steps == 0 ? slack : std::min(it.slack_min_ns, slack);
  }
  it.overruns += rec.overrun;
  ++it.steps;
}

void step_observers::step_done() noexcept {
  const threaded_options& opt = shared_.opt;
  if (opt.observer == nullptr || monotonic_now_ns() < next_observe_) return;
  opt.observer->timing(interval_);
  std::fill(interval_.begin(), interval_.end(), thread_timing{});
  next_observe_ = monotonic_now_ns() + opt.observer_period_ns;
}

void step_observers::close() noexcept {
  if (shared_.opt.observer != nullptr) shared_.opt.observer->timing(interval_);  // last part
  std::fill(interval_.begin(), interval_.end(), thread_timing{});
  if (!timing_.close() && failure_.empty()) failure_ = timing_.failure();
  if (!trace_.close() && failure_.empty()) failure_ = trace_.failure();
}

const std::string& step_observers::failure() noexcept {
  if (failure_.empty() && !timing_.ok()) failure_ = timing_.failure();
  if (failure_.empty() && !trace_.ok()) failure_ = trace_.failure();
  return failure_;
}

// ------------------------------------------------------------------------- step_recorder

step_recorder::step_recorder(shared_state& shared, worker_list& workers, run_accounting& acc,
                             energy_monitor& mon, std::vector<std::vector<double>>& mirror_out,
                             std::vector<double>& mirror_probe, step_observers& observers)
    : shared_(shared),
      workers_(workers),
      acc_(acc),
      mon_(mon),
      mirror_out_(mirror_out),
      mirror_probe_(mirror_probe),
      observers_(observers) {}

void step_recorder::pause(backoff& b) const noexcept {
  if (!shared_.opt.realtime) {
    b.pause();
    return;
  }
  const std::int64_t H_ns = shared_.period_ns();
  const std::int64_t now = monotonic_now_ns();
  const std::int64_t mid = shared_.start_ns + H_ns / 2;
  const std::int64_t next = now < mid ? mid : mid + ((now - mid) / H_ns + 1) * H_ns;
  sleep_until_ns(std::min(next, now + max_recorder_sleep_ns));  // stop requests stay prompt
}

// A model that ends or fails raises its cause at once, while the threads may be thousands
// of steps ahead of the recorder; its failing step is marked by a record with ok == 0, so
// the recorder goes on writing rows up to it, as offline does. Every other cause stops the
// run at the recorder's step.
bool step_recorder::run(run_outcome& out, time_point& t, bool start_ok) {
  const run_plan& plan = shared_.plan;
  stop_source& run_stop = shared_.run_stop;
  t = plan.start;
  bool running = start_ok && observers_.failure().empty();
  for (std::int64_t n = 0; n < plan.macro_steps && running; ++n) {
    bool ok = true;
    const char* failed = nullptr;  // the first subsystem whose step failed
    for (auto& w : workers_) {
      const step_record* front = nullptr;
      backoff wait;
      while ((front = w->records().front()) == nullptr) {
        if (shared_.stopping()) {
          running = false;
          break;
        }
        // Raised upstream or by a subsystem: release the threads. A model that ended or failed
        // still delivers the record of that step: the run ends there.
        if (run_stop.stop_requested() && !ends_at_step_start(run_stop.cause()))
          shared_.request_stop(stop_cause::none);
        pause(wait);
      }
      if (!running) break;
      const step_record rec = *front;
      const double* const vals = w->value_slot(rec.step);
      std::size_t v = 0;
      for (double& y : mirror_out_[w->index()]) y = vals[v++];
      for (std::size_t slot : w->probe_slots()) mirror_probe_[slot] = vals[v++];
      mon_.store_captures(w->index(), vals + v);
      w->records().pop();  // only now may the producer reuse the value slot
      if (rec.ok == 0 && ok) {
        ok = false;
        failed = shared_.sys.at(w->index()).name().c_str();
      }
      observers_.step(w->index(), n, t + plan.macro_step, rec);
    }
    observers_.step_done();
    if (!running) break;
    if (!observers_.failure().empty()) {
      run_stop.raise(stop_cause::output_error);
      return true;
    }
    mon_.close_step(plan.macro_step);
    // As offline: a model that ended the simulation or failed in this step ends the run at its
    // start.
    if (ok || !ends_at_step_start(run_stop.cause())) t += plan.macro_step;
    if (!acc_.after_step(n, t, ok, out, run_stop, failed)) return true;
    if (run_stop.stop_requested() && !ends_at_step_start(run_stop.cause())) running = false;
  }
  return out.macro_steps < plan.macro_steps;
}

}  // namespace cosim::detail::threaded
