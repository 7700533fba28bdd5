#include "cosim/runtime/threaded_executor.hpp"

#include <algorithm>
#include <memory>
#include <optional>

#include "cosim/runtime/error.hpp"
#include "cosim/runtime/hardware.hpp"
#include "cosim/runtime/json_writer.hpp"
#include "cosim/runtime/limits.hpp"
#include "cosim/runtime/rt_log.hpp"
#include "cosim/runtime/rt_thread.hpp"
#include "offline_supervisor.hpp"
#include "run_accounting.hpp"
#include "run_hooks.hpp"
#include "threaded_roles.hpp"

namespace cosim {

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
  using namespace detail::threaded;
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
  sample_rings rings;
  rings.reserve(sys.connections().size());
  for (std::size_t c = 0; c < sys.connections().size(); ++c)
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

  stop_source run_stop(stop);
  shared_state shared(sys, plan, opt, run_stop);
  rt_log_drain drain;
  worker_list workers;
  for (std::size_t i = 0; i < n_sub; ++i)
    workers.push_back(std::make_unique<subsystem_worker>(shared, i, rings, mon, rank, drain));
  rt_log_channel& watchdog_log = drain.add_channel("watchdog");
  watchdog supervisor(shared, workers, watchdog_log);

  sink.units(result_units(sys));
  sink.begin(columns);
  // end() on every way out, the exceptional ones included: the observer may hold `sys`.
  struct observer_end {
    timing_observer* o;
    ~observer_end() {
      if (o != nullptr) o->end();
    }
  } observer_guard{opt.observer};
  if (opt.observer != nullptr) opt.observer->begin(sys);
  {
    // Initialisation is model code on this thread: supervised as an offline step is.
    std::optional<detail::offline_supervisor> init_supervisor;
    if (stop != nullptr)
      init_supervisor.emplace(sys, run_stop, limits.grace_ns, [&](std::size_t stuck) {
        out.abandoned.push_back(sys.at(stuck).name());
        finish_outcome(out, plan, plan.start, wall0, &run_stop);
        detail::end_sink(sink);
        detail::abandon_run(limits, out);
      });
    detail::supervised_initialize(sys, plan, init_supervisor ? &*init_supervisor : nullptr);
  }
  for (std::size_t i = 0; i < n_sub; ++i)
    for (std::size_t o = 0; o < sys.at(i).output_count(); ++o)
      mirror_out[i][o] = sys.at(i).output(o);
  for (std::size_t p = 0; p < sys.probes().size(); ++p) mirror_probe[p] = *sys.probes()[p].value;
  // Stopped after the threads are joined (declared before them), fail-safe on exceptions.
  // Started before the t0 row is judged, as offline.
  detail::started_subsystems hooks(sys, run_stop);
  // A value already non-finite at t0: no thread steps, nothing more is recorded.
  const bool start_ok = acc.start(plan.start, out, run_stop);
  if (!start_ok) shared.request_stop(stop_cause::none);

  // Start gate: threads prefault and wait until every thread exists; then the epoch is
  // set a little ahead so that step 0 is released on time.
  drain.start();
  std::vector<rt_thread> threads;
  threads.reserve(n_sub + 1);
  try {
    for (auto& w : workers) {
      rt_thread_config cfg;
      cfg.name = "cosim-" + sys.at(w->index()).name();
      cfg.cpu = w->setup().cpu;
      cfg.priority = w->setup().priority;
      cfg.stack_size = w->setup().stack_size;
      subsystem_worker* wp = w.get();
      threads.emplace_back(cfg, [wp] { wp->run(); });
    }
    if (opt.realtime) {
      rt_thread_config cfg;
      cfg.name = "cosim-watchdog";
      cfg.cpu = opt.watchdog.cpu;
      cfg.priority = opt.watchdog.priority;
      threads.emplace_back(cfg, [&supervisor] { supervisor.run(); });
    }
  } catch (...) {
    shared.request_stop(stop_cause::error);
    shared.go.store(true, std::memory_order_release);
    threads.clear();
    drain.stop();
    throw;
  }
  shared.start_ns = monotonic_now_ns() + 2'000'000;
  shared.go.store(true, std::memory_order_release);

  step_observers observers(shared, n_sub);
  if (!observers.failure().empty()) {
    run_stop.raise(stop_cause::output_error);
    shared.request_stop(stop_cause::none);
  }
  step_recorder recorder(shared, workers, acc, mon, mirror_out, mirror_probe, observers);
  time_point t = plan.start;
  bool stopped = recorder.run(out, t, start_ok);
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
  observers.close();
  if (!observers.failure().empty()) {
    run_stop.raise(stop_cause::output_error);
    stopped = true;
    out.message = observers.failure();
  }

  const std::int64_t H_ns = plan.macro_step.count();
  const double H_ms = static_cast<double>(H_ns) * 1e-6;
  if (stopped && run_stop.cause() == stop_cause::stall) {
    const auto hung = static_cast<std::size_t>(shared.stop_hung.load());
    const std::int64_t step = shared.stop_step.load();
    out.message = "subsystem '" + sys.at(hung).name() + "' stalled: it stayed inside its step " +
                  std::to_string(step) +
                  " (from t = " + format_double(to_seconds(plan.start + step * plan.macro_step)) +
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
    const subsystem_worker& w = *workers[i];
    thread_report r;
    r.name = sys.at(i).name();
    r.cpu_requested = threads[i].grant().cpu_requested;
    r.cpu_granted = threads[i].grant().cpu_granted;
    r.priority_requested = threads[i].grant().priority_requested;
    r.priority_granted = threads[i].grant().priority_granted;
    if (!threads[i].grant().warning.empty())
      out.warnings.push_back(r.name + ": " + threads[i].grant().warning);
    // percentile_us takes percent (0-100).
    r.wakeup_p50_us = w.wake().percentile_us(50);
    r.wakeup_p99_us = w.wake().percentile_us(99);
    r.wakeup_max_us = w.wake().max_us();
    r.exec_p50_us = w.exec().percentile_us(50);
    r.exec_p99_us = w.exec().percentile_us(99);
    r.exec_max_us = w.exec().max_us();
    r.overruns = w.overruns();
    r.steps = static_cast<std::int64_t>(w.steps_done());
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
