// The one run entry of the library: scenario -> system -> executor (chosen here by the
// scenario's run mode) -> results folder (results.csv streamed, summary.json last).
#include "cosim/rt_config/run.hpp"
#include "cosim/drivers/udp_driver.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>

#include "cosim/drivers/udp_driver.hpp"
#include "cosim/rt_config/results_folder.hpp"
#include "cosim/runtime/csv_writer.hpp"
#include "cosim/runtime/error.hpp"
#include "cosim/runtime/json_writer.hpp"
#include "cosim/runtime/threaded_executor.hpp"

namespace cosim::config {

namespace {

/// Starts the run in the results folder at its first row: only then are the earlier run's
/// files replaced (results.csv truncated, summary.json removed). A start that fails before
/// (a model's initialisation, a remote worker that never appears, a signal meanwhile) leaves
/// them as they were. Passes every row on to the file and to run_request::also.
class starting_sink final : public row_sink {
 public:
  starting_sink(csv_writer& file, results_folder& folder, row_sink* also)
      : file_(file), folder_(folder), also_(also) {}
  void units(std::span<const std::string> units) override {
    if (also_ != nullptr) also_->units(units);
  }
  void begin(std::span<const std::string> columns) override {
    file_.prepare(columns);  // bad columns end the run here, before anything is touched
    if (also_ != nullptr) also_->begin(columns);
  }
  void write(std::span<const double> row) noexcept override {
    if (!started_ && !start()) return;
    file_.write(row);
    if (also_ != nullptr) also_->write(row);
  }
  void end() override {
    if (started_) file_.end();
    if (also_ != nullptr) also_->end();
  }
  [[nodiscard]] bool failed() const noexcept override {
    return start_failed_ || file_.failed() || (also_ != nullptr && also_->failed());
  }
  /// A run that ended without a row (stopped at t0) still replaces the earlier one: its
  /// results.csv holds the header. Throws what start() could not do.
  void finish_unstarted() {
    if (!started_ && !start_failed_ && start()) file_.end();
    COSIM_INPUT_CHECK(!start_failed_, errc::io, start_error_);
  }

 private:
  // On the recording thread, at the first row (not a subsystem thread).
  bool start() noexcept {
    try {
      folder_.start_run();
      file_.open();
      started_ = true;
    } catch (const std::exception& e) {
      start_failed_ = true;
      try {
        start_error_ = e.what();
      } catch (...) {
        // Out of memory while keeping the message: the run still stops (output_error).
      }
    }
    return started_;
  }

  csv_writer& file_;
  results_folder& folder_;
  row_sink* also_;
  bool started_ = false;
  bool start_failed_ = false;
  std::string start_error_;
};

/// Which software ran where and when (provenance.hpp).
void write_provenance_json(json_writer& j, const run_report& rep) {
  j.key("started_at").value(rep.started_at);
  write_software_json(j);
  write_host_json(j, rep.host);
}

std::string summary_json(const run_report& rep, const run_outcome& o, const system& sys) {
  const scenario& sc = rep.sc;
  const std::string& results_csv = rep.results_csv;
  json_writer j;
  j.begin_object();
  j.key("status").value(to_string(o.status));
  j.key("stop_reason").value(o.stop_reason);
  if (!o.message.empty()) j.key("message").value(o.message);
  j.key("stop_time_s").value(o.stop_time_s);
  j.key("sim_time_s").value(o.sim_time_s);
  j.key("wall_time_s").value(o.wall_time_s);
  j.key("real_time_factor").value(o.wall_time_s > 0 ? o.sim_time_s / o.wall_time_s : 0.0);
  j.key("macro_steps").value(o.macro_steps);
  j.key("rows").value(o.rows);
  j.key("energy_residual_J").value(o.energy_residual);
  j.key("max_residual_power_W").value(o.max_residual_power);
  j.key("bonds").begin_array();
  for (const auto& b : o.bonds) {
    j.begin_object();
    j.key("name").value(b.name);
    j.key("energy_residual_J").value(b.sum_abs_dE);
    j.key("max_residual_power_W").value(b.max_abs_dP);
    j.end_object();
  }
  j.end_array();
  if (!o.alarms.empty()) {
    // Every [[alarms]] entry: how often it fired (a stop alarm at most once).
    j.key("alarms").begin_array();
    for (const alarm_report& a : o.alarms) {
      j.begin_object();
      j.key("name").value(a.name);
      j.key("variable").value(a.variable);
      j.key("action").value(to_string(a.action));
      j.key("count").value(a.count);
      if (a.count > 0) j.key("first_time_s").value(a.first_time_s);
      j.key("active_steps").value(a.active_steps);
      j.end_object();
    }
    j.end_array();
  }
  if (o.iteration.enabled) {
    // Iterative coupling (run.iterations > 1): iterations per macro step, final defects.
    const iteration_stats& it = o.iteration;
    j.key("iteration").begin_object();
    j.key("max_iterations").value(static_cast<std::int64_t>(it.max_iterations));
    j.key("mean_iterations")
        .value(it.steps > 0
                   ? static_cast<double>(it.total_iterations) / static_cast<double>(it.steps)
                   : 0.0);
    j.key("max_defect").value(it.max_defect);
    j.key("steps_not_converged").value(it.not_converged);
    j.end_object();
  }
  if (!o.abandoned.empty()) {
    // Still inside a step when the process ended (watchdog.grace): exit code 3.
    j.key("abandoned").begin_array();
    for (const auto& n : o.abandoned) j.value(n);
    j.end_array();
  }
  j.key("mode").value(o.mode);
  if (o.mode != "offline" && o.mode != "lockstep") {
    j.key("memory_locked").value(o.memory_locked);
    // Real time as asked for (run.require_realtime) and as the run's threads got it.
    bool granted = o.memory_locked;
    for (const auto& t : o.threads)
      granted =
          granted && t.priority_granted == t.priority_requested && t.cpu_granted == t.cpu_requested;
    j.key("realtime").begin_object();
    j.key("required").value(sc.rt.require_realtime);
    j.key("granted").value(granted && o.mode == "realtime");
    j.end_object();
    j.key("deadline_misses").value(o.deadline_misses);
    j.key("ring_drops").value(static_cast<std::int64_t>(o.ring_drops));
    j.key("threads").begin_array();
    for (const auto& t : o.threads) {
      j.begin_object();
      j.key("name").value(t.name);
      j.key("cpu").value(t.cpu_granted);
      j.key("cpu_requested").value(t.cpu_requested);
      j.key("priority_granted").value(t.priority_granted);
      j.key("priority_requested").value(t.priority_requested);
      j.key("wakeup_latency_us").begin_object();
      j.key("p50")
          .value(t.wakeup_p50_us)
          .key("p99")
          .value(t.wakeup_p99_us)
          .key("max")
          .value(t.wakeup_max_us);
      j.end_object();
      j.key("exec_time_us").begin_object();
      j.key("p50")
          .value(t.exec_p50_us)
          .key("p99")
          .value(t.exec_p99_us)
          .key("max")
          .value(t.exec_max_us);
      j.end_object();
      j.key("overruns").value(t.overruns);
      j.key("steps").value(t.steps);
      j.end_object();
    }
    j.end_array();
    j.key("warnings").begin_array();
    for (const auto& w : o.warnings) j.value(w);
    j.end_array();
    // Subsystems not known to be allocation-free and bounded in time (imported FMUs): their
    // step times above are measured, not guaranteed.
    j.key("timing_not_guaranteed").begin_array();
    for (std::size_t i = 0; i < sys.size(); ++i)
      if (!sys.at(i).realtime_safe()) j.value(sys.at(i).name());
    j.end_array();
  }
  // Subsystems' run statistics (UDP drivers' packet counters).
  bool statistics = false;
  for (std::size_t i = 0; i < sys.size(); ++i)
    statistics = statistics || sys.at(i).has_statistics();
  if (statistics) {
    j.key("drivers").begin_array();
    for (std::size_t i = 0; i < sys.size(); ++i)
      if (sys.at(i).has_statistics()) sys.at(i).write_statistics(j);
    j.end_array();
    // Drivers whose datagrams anyone on the bench network could forge (auth = "none").
    j.key("unauthenticated_drivers").begin_array();
    for (std::size_t i = 0; i < sys.size(); ++i)
      if (const auto* d = dynamic_cast<const drivers::udp_driver*>(&sys.at(i));
          d != nullptr && d->config().auth == drivers::driver_auth::none)
        j.value(d->name());
    j.end_array();
  }
  if (!sc.events.empty()) {
    // [[events]]: what was planned and when it fired (null: never reached).
    j.key("events").begin_array();
    for (const auto& e : sc.events) {
      j.begin_object();
      j.key("time_s").value(e.time);
      j.key("action").value(e.action);
      j.key("driver").value(e.driver);
      double fired = -1.0;
      for (std::size_t i = 0; i < sys.size(); ++i)
        if (sys.at(i).name() == e.driver)
          if (const auto* d = dynamic_cast<const drivers::udp_driver*>(&sys.at(i)))
            fired = d->stats().silenced_at_s;
      j.key("fired_s");
      if (fired >= 0.0)
        j.value(fired);
      else
        j.null();
      j.end_object();
    }
    j.end_array();
  }
  // The inputs a coupling correction acted on, whichever key turned it on.
  const auto corrected = [&](const char* key, auto&& is_corrected) {
    std::vector<std::string> refs;
    for (std::size_t s = 0; s < sys.size(); ++s)
      for (std::size_t i = 0; i < sys.at(s).input_count(); ++i)
        if (is_corrected(sys.at(s), i))
          refs.push_back(sys.at(s).name() + "." + sys.at(s).input(i).desc().name);
    if (refs.empty()) return;
    j.key(key).begin_array();
    for (const std::string& r : refs) j.value(r);
    j.end_array();
  };
  corrected("energy_corrected_inputs", [](const subsystem& s, std::size_t i) {
    for (const energy_correction& c : s.corrections())
      if (c.input == i) return true;
    return false;
  });
  corrected("feedthrough_corrected_inputs",
            [](const subsystem& s, std::size_t i) { return s.input(i).feedthrough().count > 0; });
  // Each results.csv column's unit ("" where the model declares none): report and scripts.
  {
    const auto names = result_columns(sys);
    const auto units = result_units(sys);
    j.key("units").begin_object();
    for (std::size_t c = 0; c < names.size(); ++c) j.key(names[c]).value(units[c]);
    j.end_object();
  }
  j.key("results").value(results_csv);
  write_provenance_json(j, rep);
  j.key("config").raw(to_json(sc));
  j.end_object();
  return j.str() + "\n";
}

/// What the abandon handler needs to finish a run whose executor cannot return.
struct abandon_context {
  const run_request* req = nullptr;
  run_report* rep = nullptr;
  results_folder* folder = nullptr;
  const csv_writer* writer = nullptr;
  const system* sys = nullptr;
};

/// safety_limits::abandon: the rows are in results.csv (the executor ended the sink);
/// summary.json says why the run stopped and what was abandoned; then the process ends.
void finish_abandoned(void* ctx, run_outcome& out) noexcept {
  const auto& a = *static_cast<abandon_context*>(ctx);
  try {
    a.rep->outcome = out;
    for (const auto& w : out.warnings) spdlog::warn("{}", w);
    if (a.writer->failed())
      spdlog::error("{}; no summary.json", a.writer->failure());
    else
      a.folder->write_atomically("summary.json", summary_json(*a.rep, out, *a.sys));
    if (a.req->on_abandon) a.req->on_abandon(*a.rep);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cosim: error: %s\n", e.what());
  } catch (...) {
    std::fputs("cosim: error: the abandoned run's summary could not be written\n", stderr);
  }
  spdlog::default_logger_raw()->flush();
  std::fflush(stdout);
  std::fflush(stderr);
  ::_exit(exit_abandoned);
}

}  // namespace

int exit_code(const run_outcome& o) noexcept {
  switch (o.status) {
    case run_status::completed:
      return 0;
    case run_status::diverged:
    case run_status::safety_stop:
      return 1;
    case run_status::error:
      // A model that failed mid-run (or a thread that died) leaves the rows up to its step:
      // a run stopped early. Only results that could not be stored are an I/O error.
      return o.stop_reason == to_string(stop_cause::output_error) ? 2 : 1;
  }
  return 2;
}

run_report run_scenario(const run_request& req, const stop_source* stop) {
  run_report rep;
  // Everything that can be checked is checked before the results folder is touched.
  rep.sc = load_scenario(req.scenario, req.sets);
  auto built = build(rep.sc, stop);
  require_realtime(rep.sc, *built);

  results_folder folder(req.out_dir);  // exclusive until this run ends
  rep.results_csv = folder.file("results.csv").string();
  rep.summary_json = folder.file("summary.json").string();

  csv_writer writer(rep.results_csv);
  starting_sink sink(writer, folder, req.also);
  abandon_context abandoning{&req, &rep, &folder, &writer, &built->sys};
  built->limits.abandon = &finish_abandoned;
  built->limits.abandon_ctx = &abandoning;
  rep.host = read_host_info();
  rep.started_at = utc_iso8601(std::chrono::system_clock::now());
  // Drivers are subsystems: the executor starts and stops them (fail-safe unless completed)
  // and links its own stop source to the operator's.
  if (rep.sc.run.mode == run_mode::offline || rep.sc.run.mode == run_mode::lockstep) {
    // Lockstep is the offline executor: its drivers pace each macro step by their devices'
    // answers (drivers/PROTOCOL.md, "Lockstep").
    rep.outcome = run_offline(built->sys, built->plan, built->limits, sink, stop);
    if (rep.sc.run.mode == run_mode::lockstep) rep.outcome.mode = "lockstep";
    for (const auto& w : rep.outcome.warnings) spdlog::warn("{}", w);
  } else {
    threaded_options opt = make_threaded_options(rep.sc, *built);
    opt.observer = req.observer;
    if (rep.sc.rt.timing_csv) opt.timing_csv = folder.file("timing.csv").string();
    if (rep.sc.rt.trace) opt.trace_json = folder.file("trace.json").string();
    rep.outcome = run_threaded(built->sys, built->plan, built->limits, sink, opt, stop);
    // Through the runtime log, so --log-level / --quiet apply (summary.json keeps them).
    for (const auto& w : rep.outcome.warnings) spdlog::warn("{}", w);
  }
  sink.finish_unstarted();
  // A run whose results could not be stored (full disk, file size limit) is not a finished
  // run: no summary.json marks it; the message says where it stopped and why.
  COSIM_INPUT_CHECK(!writer.failed(), errc::io,
                    writer.failure() +
                        "; the run stopped at t = " + format_double(rep.outcome.stop_time_s) +
                        " s; rows written before the failure are kept, no summary.json");
  // "Finished" only once every model is torn down: an FMU crashing in its termination ends
  // the process there (its crash guard names it, exit 2) with no summary claiming the run.
  // And "summary.json exists" must imply "the data is complete", after a power cut too: the
  // data is durable first (results.csv synced by the writer's end()), then the summary (its
  // temporary synced, renamed, the folder synced).
  const std::string summary = summary_json(rep, rep.outcome, built->sys);
  built.reset();
  if (rep.sc.rt.timing_csv) folder.sync("timing.csv");
  if (rep.sc.rt.trace) folder.sync("trace.json");
  folder.write_atomically("summary.json", summary);
  return rep;
}

}  // namespace cosim::config
