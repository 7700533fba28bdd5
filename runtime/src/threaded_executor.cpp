#include "cosim/runtime/threaded_executor.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <ctime>
#include <memory>
#include <optional>
#include <thread>

#include "cosim/runtime/error.hpp"
#include "cosim/runtime/feedthrough_correction.hpp"
#include "cosim/runtime/hardware.hpp"
#include "cosim/runtime/json_writer.hpp"
#include "cosim/runtime/latency_histogram.hpp"
#include "cosim/runtime/limits.hpp"
#include "cosim/runtime/rt_log.hpp"
#include "cosim/runtime/rt_thread.hpp"
#include "cosim/runtime/spsc_ring.hpp"
#include "observer_file.hpp"
#include "offline_supervisor.hpp"
#include "run_accounting.hpp"
#include "run_hooks.hpp"
#include "trace_writer.hpp"

namespace cosim {

namespace {

// What scheme::deliver would push: delivered_output() stamped sample_time(), so smoothing
// and non-matching grids reach consumers as offline. seq is the communication point the
// sample was delivered at (t0 + seq H); the stamp may be earlier on an own grid.
struct sample {
  std::uint64_t seq = 0;
  std::int64_t stamp_ns = 0;
  double value = 0.0;
  std::int32_t derivs = 0;  // scheme::delivered_derivatives(), orders 1..derivs
  std::array<double, max_extrapolation_order> d{};
  // Feedthrough correction (feedthrough_correction.hpp): the producer's partial derivatives
  // and the input values it used, for the consumer port's terms.
  std::array<double, input_port::max_feedthrough_terms> ft_d{};
  std::array<double, input_port::max_feedthrough_terms> ft_u{};
};

// Longest sleep of the recorder between polls in realtime mode: bounds its reaction to an
// operator stop when H is long.
constexpr std::int64_t max_recorder_sleep_ns = 10'000'000;

// The watchdog checks at a multiple of H of at least this: often enough that a stop
// follows an overflowing bucket within milliseconds, rarely enough to stay off the CPUs.
constexpr std::int64_t min_watchdog_period_ns = 5'000'000;

std::int64_t watchdog_period_ns(std::int64_t H_ns) noexcept {
  return H_ns * std::max<std::int64_t>(1, (min_watchdog_period_ns + H_ns - 1) / H_ns);
}

struct step_record {
  std::uint64_t step = 0;
  std::int64_t wake_latency_ns = 0;
  std::int64_t exec_ns = 0;
  std::int64_t begin_ns = 0;    // CLOCK_MONOTONIC start of the step (trace)
  std::int64_t release_ns = 0;  // realtime: release time on the schedule (observer's slack)
  std::uint32_t ok = 0;
  std::uint32_t count = 0;
  std::uint32_t overrun = 0;  // realtime: this thread's step was an overrun
  std::uint32_t skipped = 0;  // realtime: periods the schedule skipped after this step
  // The step's values (outputs, probes, energy captures) are in the worker's value slot
  // step % value_slots, not here: any number of them fits.
};

struct shared_state {
  explicit shared_state(stop_source& s) noexcept : run_stop(s) {}
  stop_source& run_stop;          // why the run stops early
  std::atomic<bool> stop{false};  // releases every thread: an early stop or the run's end
  std::int64_t start_ns = 0;      // realtime epoch (release of step 0)
  // Realtime schedule: step n of every thread is released at start + (n + shift) H.
  std::atomic<std::int64_t> shift{0};
  std::atomic<std::int64_t> late_steps{0};  // steps that moved the schedule
  // What the watchdog saw when it stopped the run (read after the threads are joined).
  std::atomic<std::int64_t> stop_bucket{0};
  std::atomic<std::ptrdiff_t> stop_hung{-1};
  std::atomic<std::int64_t> stop_busy_ns{0};
  std::atomic<std::int64_t> stop_step{0};  // the step the hung thread was inside

  /// Moves the schedule to at least s; false if another thread already moved it as far.
  bool raise_shift(std::int64_t s) noexcept {
    std::int64_t cur = shift.load(std::memory_order_relaxed);
    while (cur < s) {
      // release: a partner that later pops this thread's output sees the new schedule.
      if (shift.compare_exchange_weak(cur, s, std::memory_order_release, std::memory_order_relaxed))
        return true;
    }
    return false;
  }

  /// Raises c (none: the run ended) and releases every thread.
  void request_stop(stop_cause c) noexcept {
    run_stop.raise(c);
    stop.store(true, std::memory_order_release);
  }
  [[nodiscard]] bool stopping() const noexcept { return stop.load(std::memory_order_acquire); }
};

// Spin, then yield, then sleep briefly: a waiting thread must not starve a
// lower-priority producer pinned to the same CPU.
class backoff {
 public:
  void pause() noexcept {
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

 private:
  unsigned n_ = 0;
};

struct worker {
  std::size_t index = 0;
  std::vector<std::size_t> in_conns;
  std::vector<std::uint64_t> in_offset;  // 0: needs sample n at step n; 1: needs n + 1
  std::vector<std::uint64_t> in_have;    // newest sample received (0: the start-up exchange)
  std::vector<std::size_t> out_conns;
  std::vector<const double*> probes;     // live values of this subsystem's probes
  std::vector<std::size_t> probe_slots;  // their index in the global probe list
  std::size_t capture_count = 0;
  std::unique_ptr<spsc_ring<step_record>> records;
  // value_slots = ring capacity + 1 slots of `stride` values. The producer fills slot
  // n % value_slots before pushing record n; pushing record n - 1 needed record n - 1 - C
  // popped, and the recorder pops a record only after reading its slot, so the slot being
  // filled is never one the recorder may still read.
  std::vector<double> values;
  std::size_t stride = 0;
  std::size_t value_slots = 0;
  [[nodiscard]] double* value_slot(std::uint64_t step) noexcept {
    return values.data() + (step % value_slots) * stride;
  }
  latency_histogram wake;
  latency_histogram exec;
  std::atomic<std::uint64_t> heartbeat{0};  // completed steps
  std::atomic<std::int64_t> overruns{0};
  // When the own work of the current step began (inputs present), 0 while sleeping or
  // waiting for a partner: the watchdog's hang rule.
  std::atomic<std::int64_t> busy_since_ns{0};
  rt_log_channel* log = nullptr;
  thread_setup setup;
};

}  // namespace

namespace detail {

step_deadline check_step_deadline(std::int64_t start_ns, std::int64_t period_ns, std::int64_t n,
                                  std::int64_t shift, std::int64_t release, std::int64_t woke,
                                  std::int64_t inputs, std::int64_t done) noexcept {
  step_deadline d;
  d.late = done > start_ns + (n + 1 + shift) * period_ns;
  d.own = (woke - release) + (done - inputs) > period_ns;
  // Step n + 1 then starts at the first boundary after done: start + (n + 1 + s) H > done.
  if (d.late) d.new_shift = (done - start_ns) / period_ns - n;
  return d;
}

watchdog_rules::watchdog_rules(std::int64_t max_overruns, std::int64_t leak_steps,
                               std::int64_t hang_limit_ns, std::int64_t check_period_ns) noexcept
    : max_overruns_(max_overruns),
      leak_steps_(leak_steps),
      hang_limit_ns_(hang_limit_ns),
      check_period_ns_(check_period_ns) {}

watchdog_rules::verdict watchdog_rules::check(std::int64_t now_ns, std::int64_t late_steps,
                                              std::int64_t steps_done,
                                              std::span<const std::int64_t> busy_since) noexcept {
  verdict v;
  // Leak first: steps completed while the bucket was empty forgive nothing in advance.
  const std::int64_t leaks = steps_done / leak_steps_ - leaked_;
  if (leaks > 0) {
    leaked_ += leaks;
    bucket_ = std::max<std::int64_t>(0, bucket_ - leaks);
  }
  bucket_ += late_steps - seen_;
  seen_ = late_steps;
  v.bucket = bucket_;
  v.stop = bucket_ >= max_overruns_;
  const bool on_time = last_check_ns_ < 0 || now_ns - last_check_ns_ <= 2 * check_period_ns_;
  last_check_ns_ = now_ns;
  if (!v.stop && on_time) {
    for (std::size_t i = 0; i < busy_since.size(); ++i) {
      const std::int64_t since = busy_since[i];
      if (since != 0 && now_ns - since > hang_limit_ns_) {
        v.stop = true;
        v.hung = static_cast<std::ptrdiff_t>(i);
        v.busy_ns = now_ns - since;
        break;
      }
    }
  }
  return v;
}

}  // namespace detail

void validate_threaded(const system& sys, const run_plan& plan, const threaded_options& opt) {
  validate_plan(sys, plan);
  COSIM_INPUT_CHECK(opt.threads.empty() || opt.threads.size() == sys.size(), errc::config_value,
                    "thread settings must be given per subsystem");
  // The rules are limits.hpp's, the same the scenario reader applies with file and key.
  auto check = [](const std::string& why, const std::string& what) {
    COSIM_INPUT_CHECK(why.empty(), errc::config_value, what + ": " + why);
  };
  check(limits::ring_capacity(static_cast<std::int64_t>(opt.ring_capacity)),
        "run.ring_capacity = " + std::to_string(opt.ring_capacity));
  COSIM_INPUT_CHECK(
      opt.record_capacity >= 2 && (opt.record_capacity & (opt.record_capacity - 1)) == 0,
      errc::config_value, "record ring capacity must be a power of two");
  for (std::size_t i = 0; i < opt.threads.size(); ++i) {
    const thread_setup& t = opt.threads[i];
    const std::string who = "threads." + sys.at(i).name();
    check(limits::cpu(t.cpu), who + ".cpu = " + std::to_string(t.cpu));
    check(limits::priority(t.priority, true), who + ".priority = " + std::to_string(t.priority));
    check(limits::stack_size(static_cast<std::int64_t>(t.stack_size)),
          who + ".stack_size = " + std::to_string(t.stack_size));
    check(limits::budget(t.budget_s), who + ".budget = " + format_double(t.budget_s));
  }
  check(limits::cpu(opt.watchdog.cpu), "watchdog.cpu = " + std::to_string(opt.watchdog.cpu));
  check(limits::priority(opt.watchdog.priority, true),
        "watchdog.priority = " + std::to_string(opt.watchdog.priority));
  check(limits::watchdog_count(opt.watchdog.max_overruns),
        "watchdog.max_overruns = " + std::to_string(opt.watchdog.max_overruns));
  check(limits::watchdog_count(opt.watchdog.leak_steps),
        "watchdog.leak_steps = " + std::to_string(opt.watchdog.leak_steps));
  // Subsystems that share a CPU run one after the other within a macro step (always so
  // for a Gauss-Seidel chain), so their budgets must fit in H.
  if (!opt.threads.empty()) {
    const double H = to_seconds(plan.macro_step);
    for (int cpu = -1; cpu < online_cpu_count(); ++cpu) {
      double sum = 0.0;
      std::string names;
      for (std::size_t i = 0; i < opt.threads.size(); ++i) {
        const bool same = plan.scheme == scheme_kind::gauss_seidel && cpu == -1
                              ? true
                              : opt.threads[i].cpu == cpu && cpu != -1;
        if (!same) continue;
        sum += opt.threads[i].budget_s;
        names += (names.empty() ? "" : " + ") + sys.at(i).name();
      }
      COSIM_INPUT_CHECK(sum <= H, errc::config_value,
                        "threads.*.budget: " + names + " need " + format_double(sum) +
                            " s per macro step" +
                            (cpu >= 0 ? " on CPU " + std::to_string(cpu) : "") +
                            " but run.macro_step is " + format_double(H) + " s");
    }
  }
}

run_outcome run_threaded(system& sys, const run_plan& plan, const safety_limits& limits,
                         row_sink& sink, const threaded_options& opt, const stop_source* stop) {
  detail::count_run_start();
  validate_threaded(sys, plan, opt);
  // Threads (and hardware) cannot roll back a macro step.
  COSIM_INPUT_CHECK(!plan.iteration.enabled(), errc::config_value,
                    "iterative coupling runs offline only (threaded and realtime runs cannot "
                    "roll back a macro step)");
  sys.check_complete();
  const auto wall0 = std::chrono::steady_clock::now();
  run_outcome out;
  out.mode = opt.realtime ? "realtime" : "threaded";

  // Start-up order: config check -> mlockall -> allocate -> threads (no page fault or
  // allocation once the real-time threads run).
  if (opt.lock_memory) {
    std::string why;
    out.memory_locked = lock_memory(why);
    if (!out.memory_locked) out.warnings.push_back("mlockall refused: " + why);
  }

  // Held for the whole realtime run, as cyclictest holds it while measuring.
  std::unique_ptr<cpu_latency_guard> idle_latency;
  if (opt.realtime) idle_latency = std::make_unique<cpu_latency_guard>();

  const std::size_t n_sub = sys.size();
  const auto& conns = sys.connections();
  std::vector<std::unique_ptr<spsc_ring<sample>>> rings;
  rings.reserve(conns.size());
  for (std::size_t c = 0; c < conns.size(); ++c)
    rings.push_back(std::make_unique<spsc_ring<sample>>(opt.ring_capacity));

  // Mirror of every subsystem's outputs and of every probe, written only by this thread.
  std::vector<std::vector<double>> mirror_out(n_sub);
  for (std::size_t i = 0; i < n_sub; ++i) mirror_out[i].assign(sys.at(i).output_count(), 0.0);
  std::vector<double> mirror_probe(sys.probes().size(), 0.0);
  auto locate = [](void* ctx, std::size_t s, std::size_t o) -> const double* {
    return &(*static_cast<std::vector<std::vector<double>>*>(ctx))[s][o];
  };
  energy_monitor mon(sys, locate, &mirror_out);
  std::vector<const double*> probe_ptrs;
  probe_ptrs.reserve(mirror_probe.size());
  for (double& v : mirror_probe) probe_ptrs.push_back(&v);
  const auto columns = result_columns(sys);
  detail::run_accounting acc(plan, limits, sink, mon, probe_ptrs, columns);

  // Position of each subsystem in the scheme order (Gauss-Seidel dependencies).
  std::vector<std::size_t> rank(n_sub, 0);
  for (std::size_t k = 0; k < plan.order.size(); ++k) rank[plan.order[k]] = k;

  rt_log_drain drain;
  std::vector<std::unique_ptr<worker>> workers;
  for (std::size_t i = 0; i < n_sub; ++i) {
    auto w = std::make_unique<worker>();
    w->index = i;
    w->setup = opt.threads.empty() ? thread_setup{} : opt.threads[i];
    for (std::size_t c = 0; c < conns.size(); ++c) {
      if (conns[c].to == i) {
        w->in_conns.push_back(c);
        const bool upstream =
            plan.scheme == scheme_kind::gauss_seidel && rank[conns[c].from] < rank[i];
        w->in_offset.push_back(upstream ? 1 : 0);
        w->in_have.push_back(0);
      }
      if (conns[c].from == i) w->out_conns.push_back(c);
    }
    for (std::size_t p = 0; p < sys.probes().size(); ++p) {
      if (sys.probes()[p].subsystem != i) continue;
      w->probes.push_back(sys.probes()[p].value);
      w->probe_slots.push_back(p);
    }
    w->capture_count = mon.capture_count(i);
    w->stride = sys.at(i).output_count() + w->probes.size() + w->capture_count;
    w->records = std::make_unique<spsc_ring<step_record>>(opt.record_capacity);
    w->value_slots = opt.record_capacity + 1;
    w->values.assign(w->value_slots * w->stride, 0.0);  // allocated and touched here
    w->log = &drain.add_channel(sys.at(i).name());
    workers.push_back(std::move(w));
  }
  rt_log_channel& watchdog_log = drain.add_channel("watchdog");

  sink.begin(columns);
  // end() on every way out, the exceptional ones included: the observer may hold `sys`.
  struct observer_end {
    timing_observer* o;
    ~observer_end() {
      if (o != nullptr) o->end();
    }
  } observer_guard{opt.observer};
  if (opt.observer != nullptr) opt.observer->begin(sys);
  stop_source run_stop(stop);
  {
    // Initialisation is model code on this thread: supervised as an offline step is.
    std::optional<detail::offline_supervisor> supervisor;
    if (stop != nullptr)
      supervisor.emplace(sys, run_stop, limits.grace_ns, [&](std::size_t stuck) {
        out.abandoned.push_back(sys.at(stuck).name());
        finish_outcome(out, plan, plan.start, wall0, &run_stop);
        detail::end_sink(sink);
        detail::abandon_run(limits, out);
      });
    detail::supervised_initialize(sys, plan, supervisor ? &*supervisor : nullptr);
  }
  for (std::size_t i = 0; i < n_sub; ++i)
    for (std::size_t o = 0; o < sys.at(i).output_count(); ++o)
      mirror_out[i][o] = sys.at(i).output(o);
  for (std::size_t p = 0; p < sys.probes().size(); ++p) mirror_probe[p] = *sys.probes()[p].value;
  // A value already non-finite at t0: no thread steps, nothing more is recorded.
  const bool start_ok = acc.start(plan.start, out, run_stop);
  shared_state shared(run_stop);
  if (!start_ok) shared.request_stop(stop_cause::none);
  // Stopped after the threads are joined (declared before them), fail-safe on exceptions.
  detail::started_subsystems hooks(sys, run_stop);
  const std::int64_t H_ns = plan.macro_step.count();
  const std::int64_t steps = plan.macro_steps;
  const time_point t0 = plan.start;
  // Start gate: threads prefault and wait until every thread exists; then the epoch is
  // set a little ahead so that step 0 is released on time.
  std::atomic<bool> go{false};
  auto wait_for_go = [&] {
    backoff wait;
    while (!go.load(std::memory_order_acquire)) wait.pause();
  };

  auto loop = [&](worker& w) {
    subsystem& sub = sys.at(w.index);
    step_record rec;
    for (std::int64_t n = 0; n < steps; ++n) {
      if (shared.stopping()) return;
      std::int64_t release = 0;
      std::int64_t woke = 0;
      if (opt.realtime) {
        // A shift raised while this thread slept (a partner ran late) moves its release
        // too: waking at the old time would only mean waiting for the late sample.
        std::int64_t shift = shared.shift.load(std::memory_order_acquire);
        for (;;) {
          release = shared.start_ns + (n + shift) * H_ns;
          sleep_until_ns(release);
          const std::int64_t now_shift = shared.shift.load(std::memory_order_acquire);
          if (now_shift == shift) break;
          shift = now_shift;
        }
        woke = monotonic_now_ns();
        rec.release_ns = release;
        rec.wake_latency_ns = woke - release;
        w.wake.record_ns(rec.wake_latency_ns);
      }
      const time_point t = t0 + n * plan.macro_step;
      // Inputs: pop samples up to the one this step needs (sequence numbers).
      for (std::size_t k = 0; k < w.in_conns.size(); ++k) {
        const std::size_t c = w.in_conns[k];
        const std::uint64_t need = static_cast<std::uint64_t>(n) + w.in_offset[k];
        input_port& port = sub.input(conns[c].input);
        backoff wait;
        // By sequence number, not by stamp: a non-matching producer's stamp lags t0 + seq H.
        while (w.in_have[k] < need) {
          sample s;
          if (rings[c]->try_pop(s)) {
            port.receive(time_point{duration{s.stamp_ns}}, s.value,
                         std::span<const double>(s.d.data(), static_cast<std::size_t>(s.derivs)));
            if (port.feedthrough().count > 0) port.receive_partials(s.ft_d.data(), s.ft_u.data());
            w.in_have[k] = s.seq;
            continue;
          }
          if (shared.stopping()) return;
          wait.pause();
        }
      }
      const std::int64_t exec0 = monotonic_now_ns();
      rec.begin_ns = exec0;
      w.busy_since_ns.store(exec0, std::memory_order_relaxed);
      const time_point t1 = t + plan.macro_step;
      const bool ok = scheme::advance(sub, t, plan.macro_step);
      double* const vals = w.value_slot(static_cast<std::uint64_t>(n));
      std::size_t v = 0;
      for (double y : sub.outputs()) vals[v++] = y;
      for (const double* p : w.probes) vals[v++] = *p;
      mon.read_captures(w.index, t1, vals + v);
      v += w.capture_count;
      rec.count = static_cast<std::uint32_t>(v);
      rec.ok = ok ? 1U : 0U;
      rec.step = static_cast<std::uint64_t>(n);
      rec.overrun = 0;
      rec.skipped = 0;
      if (opt.realtime) {
        // Judged before the outputs go out, so a partner that pops them sees the moved
        // schedule and does not count the same stall again.
        const std::int64_t end = monotonic_now_ns();
        const std::int64_t shift = shared.shift.load(std::memory_order_acquire);
        const detail::step_deadline d =
            detail::check_step_deadline(shared.start_ns, H_ns, n, shift, release, woke, exec0, end);
        if (d.late) {
          shared.raise_shift(d.new_shift);
          shared.late_steps.fetch_add(1, std::memory_order_relaxed);
          rec.skipped = static_cast<std::uint32_t>(d.new_shift - shift);
        }
        if (d.overrun()) {
          rec.overrun = 1;
          w.overruns.fetch_add(1, std::memory_order_relaxed);
          w.log->post(rt_event_code::overrun, t.time_since_epoch().count(),
                      static_cast<double>(end - release) * 1e-3, static_cast<double>(H_ns) * 1e-3,
                      rec.skipped);
        }
      }
      const std::int64_t stamp = scheme::sample_time(sub, t1).time_since_epoch().count();
      for (std::size_t c : w.out_conns) {
        sample s{static_cast<std::uint64_t>(n + 1), stamp,
                 scheme::delivered_output(sub, conns[c].output)};
        const std::span<const double> d = scheme::delivered_derivatives(
            sub, conns[c].output, sys.at(conns[c].to).input(conns[c].input));
        s.derivs = static_cast<std::int32_t>(std::min(d.size(), s.d.size()));
        std::copy_n(d.begin(), s.derivs, s.d.begin());
        const input_port& to = sys.at(conns[c].to).input(conns[c].input);
        if (to.feedthrough().count > 0) feedthrough::fill(sub, to, s.ft_d.data(), s.ft_u.data());
        backoff wait;
        while (!rings[c]->try_push(s)) {
          if (shared.stopping()) return;
          wait.pause();
        }
      }
      const std::int64_t done = monotonic_now_ns();
      rec.exec_ns = done - exec0;
      w.exec.record_ns(rec.exec_ns);
      {
        backoff wait;
        while (!w.records->try_push(rec)) {
          if (shared.stopping()) return;
          wait.pause();
        }
      }
      w.busy_since_ns.store(0, std::memory_order_relaxed);
      w.heartbeat.store(static_cast<std::uint64_t>(n + 1), std::memory_order_release);
      if (!ok) return;  // the recorder sees ok == 0 and stops the run
    }
  };

  auto body = [&](worker& w) {
    prefault_stack(std::size_t{64} * 1024);
    wait_for_go();
    if (opt.hook != nullptr) opt.hook(opt.hook_ctx, w.index, true);
    loop(w);
    if (opt.hook != nullptr) opt.hook(opt.hook_ctx, w.index, false);
  };

  std::vector<std::int64_t> busy_since(n_sub, 0);  // watchdog's snapshot, allocated up front
  drain.start();
  std::vector<rt_thread> threads;
  threads.reserve(n_sub + 1);
  try {
    for (auto& w : workers) {
      rt_thread_config cfg;
      cfg.name = "cosim-" + sys.at(w->index).name();
      cfg.cpu = w->setup.cpu;
      cfg.priority = w->setup.priority;
      cfg.stack_size = w->setup.stack_size;
      worker* wp = w.get();
      threads.emplace_back(cfg, [&body, wp] { body(*wp); });
    }
    if (opt.realtime) {
      rt_thread_config cfg;
      cfg.name = "cosim-watchdog";
      cfg.cpu = opt.watchdog.cpu;
      cfg.priority = opt.watchdog.priority;
      threads.emplace_back(cfg, [&] {
        prefault_stack(std::size_t{32} * 1024);
        wait_for_go();
        // Checked every few milliseconds, not every period, and half a period away from
        // the releases: the watchdog outranks the subsystem threads, so waking with them
        // would delay every release on its CPU.
        const std::int64_t period = watchdog_period_ns(H_ns);
        detail::watchdog_rules rules(opt.watchdog.max_overruns, opt.watchdog.leak_steps,
                                     opt.watchdog.max_overruns * H_ns, period);
        std::int64_t next = shared.start_ns + H_ns / 2 + period;
        while (!shared.stopping()) {
          sleep_until_ns(next);
          const std::int64_t now = monotonic_now_ns();
          next += period;
          if (next <= now) next += ((now - next) / period + 1) * period;  // no burst
          std::uint64_t steps_done = static_cast<std::uint64_t>(steps);
          for (std::size_t i = 0; i < workers.size(); ++i) {
            busy_since[i] = workers[i]->busy_since_ns.load(std::memory_order_relaxed);
            steps_done =
                std::min(steps_done, workers[i]->heartbeat.load(std::memory_order_relaxed));
          }
          const auto v = rules.check(now, shared.late_steps.load(std::memory_order_relaxed),
                                     static_cast<std::int64_t>(steps_done), busy_since);
          if (v.stop) {
            // First the bench: the safe values leave now, from this thread, whatever the
            // stuck thread does next.
            sys.trip_fail_safe();
            shared.stop_bucket.store(v.bucket, std::memory_order_relaxed);
            shared.stop_hung.store(v.hung, std::memory_order_relaxed);
            shared.stop_busy_ns.store(v.busy_ns, std::memory_order_relaxed);
            if (v.hung >= 0)
              shared.stop_step.store(static_cast<std::int64_t>(
                                         workers[static_cast<std::size_t>(v.hung)]->heartbeat.load(
                                             std::memory_order_relaxed)),
                                     std::memory_order_relaxed);
            const std::int64_t tick = (t0 + static_cast<std::int64_t>(steps_done) * plan.macro_step)
                                          .time_since_epoch()
                                          .count();
            if (v.hung >= 0) {
              // Worker i's log channel has source id i (added first, in order).
              watchdog_log.post(rt_event_code::stall, tick, static_cast<double>(v.busy_ns) * 1e-3,
                                static_cast<double>(opt.watchdog.max_overruns * H_ns) * 1e-3,
                                static_cast<std::uint32_t>(v.hung) + 1U);
            } else {
              watchdog_log.post(rt_event_code::safety_stop, tick, static_cast<double>(v.bucket),
                                static_cast<double>(opt.watchdog.max_overruns), 1U);
            }
            shared.request_stop(v.hung >= 0 ? stop_cause::stall : stop_cause::deadline);
            return;
          }
          if (steps_done >= static_cast<std::uint64_t>(steps)) return;
        }
      });
    }
  } catch (...) {
    shared.request_stop(stop_cause::error);
    go.store(true, std::memory_order_release);
    threads.clear();
    drain.stop();
    throw;
  }

  shared.start_ns = monotonic_now_ns() + 2'000'000;
  go.store(true, std::memory_order_release);

  // The diagnostic files are results too: one that cannot be written stops the run as a
  // results.csv that cannot (output_error), naming the file.
  detail::observer_file timing_file;
  std::string output_failure;
  if (!opt.timing_csv.empty()) {
    if (timing_file.open(opt.timing_csv))
      std::fputs("step,t,subsystem,wakeup_latency_us,exec_us,overrun,skipped_periods\n",
                 timing_file.get());
    else
      output_failure = timing_file.failure();
  }
  std::FILE* const timing = timing_file.get();
  detail::trace_writer trace;
  if (!opt.trace_json.empty()) {
    std::vector<std::string> names;
    for (std::size_t i = 0; i < n_sub; ++i) names.push_back(sys.at(i).name());
    // Time 0: release of step 0 (realtime) or the start gate (threaded, no schedule).
    const std::int64_t origin = opt.realtime ? shared.start_ns : shared.start_ns - 2'000'000;
    if (!trace.open(opt.trace_json, names, origin) && output_failure.empty())
      output_failure = trace.failure();
  }
  if (!output_failure.empty()) {
    run_stop.raise(stop_cause::output_error);
    shared.request_stop(stop_cause::none);
  }

  // Realtime: records arrive once per period, so the recorder sleeps to the middle of the
  // next one instead of polling; polling every few microseconds kept the real-time CPUs
  // busy with a normal thread, which a hypervisor or a non-preemptible kernel section
  // then made the real-time threads wait for. Threaded mode runs as fast as possible.
  auto recorder_pause = [&](backoff& b) {
    if (!opt.realtime) {
      b.pause();
      return;
    }
    const std::int64_t now = monotonic_now_ns();
    const std::int64_t mid = shared.start_ns + H_ns / 2;
    const std::int64_t next = now < mid ? mid : mid + ((now - mid) / H_ns + 1) * H_ns;
    sleep_until_ns(std::min(next, now + max_recorder_sleep_ns));  // stop requests stay prompt
  };

  // Live view: per-thread aggregates of the records mirrored below, handed over at most
  // every observer_period_ns (allocated here, before the loop).
  std::vector<thread_timing> interval(opt.observer != nullptr ? n_sub : 0);
  std::int64_t next_observe = monotonic_now_ns() + opt.observer_period_ns;
  auto observe = [&](const step_record& rec, thread_timing& it) noexcept {
    it.wake_max_ns = std::max(it.wake_max_ns, rec.wake_latency_ns);
    it.exec_max_ns = std::max(it.exec_max_ns, rec.exec_ns);
    if (opt.realtime) {
      const std::int64_t slack = rec.release_ns + H_ns - (rec.begin_ns + rec.exec_ns);
      it.slack_min_ns = it.steps == 0 ? slack : std::min(it.slack_min_ns, slack);
    }
    it.overruns += rec.overrun;
    ++it.steps;
  };
  auto hand_over = [&]() noexcept {
    opt.observer->timing(interval);
    std::fill(interval.begin(), interval.end(), thread_timing{});
  };

  // A model that ends or fails raises its cause at once, while the threads may be thousands
  // of steps ahead of the recorder; its failing step is marked by a record with ok == 0, so
  // the recorder goes on writing rows up to it, as offline does. Every other cause stops the
  // run at the recorder's step.
  // Recording thread: one record per subsystem per step, then the shared accounting.
  time_point t = plan.start;
  bool running = start_ok && output_failure.empty();
  bool stopped = false;  // ended early: run_stop holds the cause
  for (std::int64_t n = 0; n < steps && running; ++n) {
    bool ok = true;
    const char* failed = nullptr;  // the first subsystem whose step failed
    for (auto& w : workers) {
      const step_record* front = nullptr;
      backoff wait;
      while ((front = w->records->front()) == nullptr) {
        if (shared.stopping()) {
          running = false;
          break;
        }
        // Raised upstream or by a subsystem: release the threads. A model that ended or failed
        // still delivers the record of that step: the run ends there.
        if (run_stop.stop_requested() && !ends_at_step_start(run_stop.cause()))
          shared.request_stop(stop_cause::none);
        recorder_pause(wait);
      }
      if (!running) break;
      const step_record rec = *front;
      const double* const vals = w->value_slot(rec.step);
      std::size_t v = 0;
      for (double& y : mirror_out[w->index]) y = vals[v++];
      for (std::size_t slot : w->probe_slots) mirror_probe[slot] = vals[v++];
      mon.store_captures(w->index, vals + v);
      w->records->pop();  // only now may the producer reuse the value slot
      if (rec.ok == 0 && ok) {
        ok = false;
        failed = sys.at(w->index).name().c_str();
      }
      if (timing != nullptr)
        std::fprintf(timing, "%lld,%s,%s,%.3f,%.3f,%u,%u\n", static_cast<long long>(n),
                     format_double(to_seconds(t + plan.macro_step)).c_str(),
                     sys.at(w->index).name().c_str(),
                     static_cast<double>(rec.wake_latency_ns) * 1e-3,
                     static_cast<double>(rec.exec_ns) * 1e-3, rec.overrun, rec.skipped);
      trace.step(w->index, n, to_seconds(t + plan.macro_step), rec.begin_ns, rec.exec_ns,
                 rec.wake_latency_ns, opt.realtime, rec.overrun != 0, rec.skipped);
      if (opt.observer != nullptr) observe(rec, interval[w->index]);
    }
    if (opt.observer != nullptr && monotonic_now_ns() >= next_observe) {
      hand_over();
      next_observe = monotonic_now_ns() + opt.observer_period_ns;
    }
    if (!running) break;
    if (!timing_file.ok() || !trace.ok()) {
      output_failure = !timing_file.ok() ? timing_file.failure() : trace.failure();
      run_stop.raise(stop_cause::output_error);
      stopped = true;
      break;
    }
    mon.close_step(plan.macro_step);
    // As offline: a model that ended the simulation or failed in this step ends the run at its
    // start.
    if (ok || !ends_at_step_start(run_stop.cause())) t += plan.macro_step;
    if (!acc.after_step(n, t, ok, out, run_stop, failed)) {
      stopped = true;
      break;
    }
    if (run_stop.stop_requested() && !ends_at_step_start(run_stop.cause())) running = false;
  }
  if (opt.observer != nullptr) hand_over();  // the last partial interval
  stopped = stopped || out.macro_steps < steps;
  // Threads only stop early for a raised cause; should one not, the run is no success.
  if (stopped) run_stop.raise(stop_cause::error);
  // The bench first, before waiting for any thread: one may be stuck inside a model.
  if (stopped) sys.trip_fail_safe();
  shared.request_stop(stop_cause::none);  // releases every waiting thread
  // A thread still inside a step after the grace is abandoned: its subsystem is neither
  // stopped nor destroyed, and the process ends once the results are out (limits.abandon).
  const std::int64_t join_deadline = monotonic_now_ns() + limits.grace_ns;
  std::vector<std::size_t> stuck;
  for (std::size_t i = 0; i < threads.size(); ++i)
    if (!threads[i].join_until(join_deadline) && i < n_sub) stuck.push_back(i);
  if (stuck.empty()) {
    hooks.finish(!stopped);
  } else {
    hooks.finish_except(stuck);
    for (std::size_t i : stuck) out.abandoned.push_back(sys.at(i).name());
  }
  drain.stop();
  if (!timing_file.close() && output_failure.empty()) output_failure = timing_file.failure();
  if (!trace.close() && output_failure.empty()) output_failure = trace.failure();
  if (!output_failure.empty()) {
    run_stop.raise(stop_cause::output_error);
    stopped = true;
    out.message = output_failure;
  }

  const double H_ms = static_cast<double>(H_ns) * 1e-6;
  if (stopped && run_stop.cause() == stop_cause::stall) {
    const auto hung = static_cast<std::size_t>(shared.stop_hung.load());
    const std::int64_t step = shared.stop_step.load();
    out.message = "subsystem '" + sys.at(hung).name() + "' stalled: it stayed inside its step " +
                  std::to_string(step) +
                  " (from t = " + format_double(to_seconds(t0 + step * plan.macro_step)) +
                  " s) for " + std::to_string(shared.stop_busy_ns.load() / 1'000'000) +
                  " ms, longer than watchdog.max_overruns (" +
                  std::to_string(opt.watchdog.max_overruns) + ") periods of " +
                  format_double(H_ms) + " ms; safe values sent";
  }
  if (stopped && run_stop.cause() == stop_cause::deadline)
    out.message = std::to_string(shared.stop_bucket.load()) +
                  " late steps in the watchdog's leaky bucket reached watchdog.max_overruns = " +
                  std::to_string(opt.watchdog.max_overruns) + " (one is forgiven per " +
                  std::to_string(opt.watchdog.leak_steps) +
                  " macro steps, watchdog.leak_steps); safe values sent";
  if (stopped && run_stop.cause() == stop_cause::error)
    out.message = "a subsystem thread stopped unexpectedly";

  acc.finish(out);
  for (std::size_t i = 0; i < n_sub; ++i) {
    const worker& w = *workers[i];
    thread_report r;
    r.name = sys.at(i).name();
    r.cpu_requested = threads[i].grant().cpu_requested;
    r.cpu_granted = threads[i].grant().cpu_granted;
    r.priority_requested = threads[i].grant().priority_requested;
    r.priority_granted = threads[i].grant().priority_granted;
    if (!threads[i].grant().warning.empty())
      out.warnings.push_back(r.name + ": " + threads[i].grant().warning);
    // percentile_us takes percent (0-100).
    r.wakeup_p50_us = w.wake.percentile_us(50);
    r.wakeup_p99_us = w.wake.percentile_us(99);
    r.wakeup_max_us = w.wake.max_us();
    r.exec_p50_us = w.exec.percentile_us(50);
    r.exec_p99_us = w.exec.percentile_us(99);
    r.exec_max_us = w.exec.max_us();
    r.overruns = w.overruns.load();
    r.steps = static_cast<std::int64_t>(w.heartbeat.load());
    out.threads.push_back(r);
  }
  // Each stall once, however many threads it delayed (a thread's own overruns are above).
  out.deadline_misses = shared.late_steps.load();
  if (opt.realtime && threads.size() > n_sub && !threads[n_sub].grant().warning.empty())
    out.warnings.push_back("watchdog: " + threads[n_sub].grant().warning);
  for (const auto& r : rings) out.ring_drops += r->drops();
  finish_outcome(out, plan, t, wall0, stopped ? &run_stop : nullptr);
  sink.end();
  if (!stuck.empty()) detail::abandon_run(limits, out);  // never returns
  return out;
}

}  // namespace cosim
