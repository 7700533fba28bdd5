// Real-time sections of a scenario: thread placement per subsystem and the watchdog.
#include <sys/mman.h>

#include <algorithm>
#include <set>
#include <utility>

#include "cosim/rt_config/model_registry.hpp"
#include "cosim/runtime/error.hpp"
#include "cosim/runtime/limits.hpp"
#include "cosim/runtime/rt_thread.hpp"

namespace cosim::config {

void read_realtime(config_reader& r, scenario& sc) {
  if (auto cap = r.opt_int("run.ring_capacity")) {
    // The upper bound keeps every ring preallocated and locked in memory a few MiB at most.
    if (const std::string why = limits::ring_capacity(*cap); !why.empty())
      r.fail("run.ring_capacity", why);
    sc.rt.ring_capacity = static_cast<std::size_t>(*cap);
  }
  sc.rt.lock_memory = r.opt_bool("run.lock_memory").value_or(true);
  sc.rt.timing_csv = r.opt_bool("run.timing_csv").value_or(false);
  sc.rt.trace = r.opt_bool("run.trace").value_or(false);
  sc.rt.require_realtime = r.opt_bool("run.require_realtime").value_or(false);
  if (sc.rt.require_realtime && sc.run.mode != run_mode::realtime)
    r.fail("run.require_realtime", "needs run.mode = \"realtime\" (run.mode is \"" +
                                       std::string(to_string(sc.run.mode)) + "\")");
  if (sc.rt.require_realtime && !sc.rt.lock_memory)
    r.fail("run.require_realtime", "needs locked memory: remove run.lock_memory = false");
  for (const std::string& name : r.table_keys("threads")) {
    const std::string base = "threads." + name;
    if (sc.subsystems.count(name) == 0) {
      std::string known;
      for (const auto& [k, v] : sc.subsystems) known += (known.empty() ? "" : ", ") + k;
      r.fail(base, "no subsystem named '" + name + "' (subsystems: " + known + ")");
    }
    thread_setup t;
    if (auto cpu = r.opt_int(base + ".cpu")) {
      if (const std::string why = limits::cpu(*cpu); !why.empty()) r.fail(base + ".cpu", why);
      t.cpu = static_cast<int>(*cpu);
    }
    if (auto prio = r.opt_int(base + ".priority")) {
      if (const std::string why = limits::priority(*prio, false); !why.empty())
        r.fail(base + ".priority", why);
      t.priority = static_cast<int>(*prio);
    }
    if (auto stack = r.opt_int(base + ".stack_size")) {
      if (const std::string why = limits::stack_size(*stack); !why.empty())
        r.fail(base + ".stack_size", why);
      t.stack_size = static_cast<std::size_t>(*stack);
    }
    if (auto budget = r.opt_double(base + ".budget")) {
      if (const std::string why = limits::budget(*budget); !why.empty())
        r.fail(base + ".budget", why);
      t.budget_s = *budget;
    }
    sc.rt.threads[name] = t;
  }
  if (auto cpu = r.opt_int("watchdog.cpu")) {
    if (const std::string why = limits::cpu(*cpu); !why.empty()) r.fail("watchdog.cpu", why);
    sc.rt.watchdog.cpu = static_cast<int>(*cpu);
  }
  if (auto prio = r.opt_int("watchdog.priority")) {
    if (const std::string why = limits::priority(*prio, false); !why.empty())
      r.fail("watchdog.priority", why);
    sc.rt.watchdog.priority = static_cast<int>(*prio);
  }
  if (auto m = r.opt_int("watchdog.max_overruns")) {
    if (const std::string why = limits::watchdog_count(*m); !why.empty())
      r.fail("watchdog.max_overruns", why);
    sc.rt.watchdog.max_overruns = *m;
  }
  if (auto l = r.opt_int("watchdog.leak_steps")) {
    if (const std::string why = limits::watchdog_count(*l); !why.empty())
      r.fail("watchdog.leak_steps", why);
    sc.rt.watchdog.leak_steps = *l;
  }
  if (auto g = r.opt_double("watchdog.grace")) {
    if (const std::string why = limits::grace(*g); !why.empty()) r.fail("watchdog.grace", why);
    sc.rt.watchdog.grace_ns = to_duration(*g).count();
  }
  // A watchdog that cannot preempt the threads it guards is no watchdog.
  int max_prio = 0;
  for (const auto& [n, t] : sc.rt.threads) max_prio = std::max(max_prio, t.priority);
  if (max_prio > 0 && sc.rt.watchdog.priority != 0 && sc.rt.watchdog.priority <= max_prio)
    r.fail("watchdog.priority", "must be higher than every subsystem thread's priority (" +
                                    std::to_string(max_prio) + ")");
  if (max_prio > 0 && sc.rt.watchdog.priority == 0)
    sc.rt.watchdog.priority = std::min(99, max_prio + 1);
  if (sc.rt.require_realtime) {
    // Real time means every subsystem's thread under SCHED_FIFO: one without a priority
    // would run at the mercy of every other process.
    std::string missing;
    const auto check = [&](const std::string& name) {
      const auto it = sc.rt.threads.find(name);
      if (it == sc.rt.threads.end() || it->second.priority == 0)
        missing += (missing.empty() ? "" : ", ") + std::string("threads.") + name + ".priority";
    };
    for (const auto& [name, c] : sc.subsystems) check(name);
    if (!missing.empty())
      r.fail("run.require_realtime",
             "needs a SCHED_FIFO priority for every subsystem thread; "
             "not set: " +
                 missing);
  }
}

void require_realtime(const scenario& sc, const built_scenario& b) {
  if (!sc.rt.require_realtime) return;
  std::vector<std::string> refused;
  std::string why;
  // Kept on success: the executor locks again (a no-op) and the run needs it anyway.
  if (!lock_memory(why)) refused.push_back("locked memory: " + why);
  // Each distinct placement once, on a short-lived thread created exactly as the run's are.
  const threaded_options o = make_threaded_options(sc, b);
  std::set<std::pair<int, int>> tried;
  const auto probe = [&](const std::string& who, int cpu, int priority) {
    if (!tried.insert({cpu, priority}).second) return;
    rt_thread_config cfg;
    cfg.name = "cosim-probe";
    cfg.cpu = cpu;
    cfg.priority = priority;
    rt_thread t(cfg, [] {});
    const rt_thread_grant g = t.grant();
    t.join();
    if (g.priority_granted != priority || g.cpu_granted != cpu)
      refused.push_back(who + " (priority " + std::to_string(priority) +
                        (cpu >= 0 ? ", CPU " + std::to_string(cpu) : std::string()) +
                        "): " + g.warning);
  };
  for (std::size_t i = 0; i < b.sys.size(); ++i)
    probe("threads." + b.sys.at(i).name(), o.threads[i].cpu, o.threads[i].priority);
  probe("watchdog", o.watchdog.cpu, o.watchdog.priority);
  if (refused.empty()) return;
  std::string text;
  for (const std::string& r : refused) text += "\n  " + r;
  throw error(errc::config_value,
              sc.file +
                  ": run.require_realtime = true, and this process cannot have real time "
                  "(nothing was written):" +
                  text + "\n  (or set run.require_realtime = false to run degraded)");
}

threaded_options make_threaded_options(const scenario& sc, const built_scenario& b) {
  threaded_options o;
  o.realtime = sc.run.mode == run_mode::realtime;
  o.watchdog = sc.rt.watchdog;
  o.ring_capacity = sc.rt.ring_capacity;
  o.lock_memory = sc.rt.lock_memory;
  o.threads.resize(b.sys.size());
  for (const auto& [name, t] : sc.rt.threads) o.threads[b.sys.index_of(name)] = t;
  return o;
}

}  // namespace cosim::config
