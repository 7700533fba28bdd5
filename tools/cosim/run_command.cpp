#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include <spdlog/spdlog.h>
#include <fstream>

#include "commands.hpp"
#include "cosim/drivers/udp_driver.hpp"
#include "cosim/runtime/csv_writer.hpp"
#include "cosim/runtime/error.hpp"
#include "cosim/runtime/json_writer.hpp"
#include "cosim/runtime/threaded_executor.hpp"
#include "results_folder.hpp"

namespace cosim::cli {

namespace fs = std::filesystem;

std::atomic<bool>& operator_stop_flag() noexcept {
  static std::atomic<bool> flag{false};
  return flag;
}

namespace {

std::atomic<int>& last_signal() noexcept {
  static std::atomic<int> sig{0};
  return sig;
}

extern "C" void on_stop_signal(int sig) {
  // Only atomic stores: async-signal-safe.
  last_signal().store(sig, std::memory_order_relaxed);
  operator_stop_flag().store(true, std::memory_order_relaxed);
}

/// Tells the executor that the run has started (its results are about to be written):
/// the moment the earlier run's files may be replaced.
class starting_sink final : public row_sink {
 public:
  starting_sink(row_sink& inner, results_folder& folder) : inner_(inner), folder_(folder) {}
  void begin(std::span<const std::string> columns) override {
    folder_.start_run();
    inner_.begin(columns);
  }
  void write(std::span<const double> row) noexcept override { inner_.write(row); }
  void end() override { inner_.end(); }
  [[nodiscard]] bool failed() const noexcept override { return inner_.failed(); }

 private:
  row_sink& inner_;
  results_folder& folder_;
};

std::string summary_json(const config::scenario& sc, const run_outcome& o,
                         const std::string& results_csv,
                         const drivers::driver_session* session = nullptr) {
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
  j.key("mode").value(o.mode);
  if (o.mode != "offline") {
    j.key("memory_locked").value(o.memory_locked);
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
  }
  if (session != nullptr && !session->empty()) session->write_json(j);  // UDP driver counters
  j.key("results").value(results_csv);
  j.key("config").raw(config::to_json(sc));
  j.end_object();
  return j.str() + "\n";
}

}  // namespace

void install_signal_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  // SIGHUP: a dropped ssh session must end the run in order, not kill it without summary.
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);
}

std::string operator_stop_message() {
  const int sig = last_signal().load(std::memory_order_relaxed);
  const char* name = sig == SIGINT    ? "SIGINT"
                     : sig == SIGTERM ? "SIGTERM"
                     : sig == SIGHUP  ? "SIGHUP"
                                      : nullptr;
  if (name == nullptr) return "stop requested by the operator";
  return std::string("stop requested by the operator (") + name + ")";
}

int exit_code(const run_outcome& o) noexcept {
  switch (o.status) {
    case run_status::completed:
      return 0;
    case run_status::diverged:
    case run_status::safety_stop:
      return 1;
    case run_status::error:
      return 2;
  }
  return 2;
}

run_report run_scenario(const run_request& req, const std::atomic<bool>* stop_request) {
  run_report rep;
  // Everything that can be checked is checked before the results folder is touched.
  rep.sc = config::load_scenario(req.scenario, req.sets);
  auto built = config::build(rep.sc);

  results_folder folder(req.out_dir);  // exclusive until this run ends
  rep.results_csv = folder.file("results.csv").string();
  rep.summary_json = folder.file("summary.json").string();

  csv_writer writer(rep.results_csv);
  starting_sink sink(writer, folder);
  // UDP drivers: I/O threads run around the run; the executor watches a flag
  // that combines the operator's stop request with the drivers' stale-input stop.
  drivers::driver_session session(built->sys, stop_request);
  const std::atomic<bool>* stop = session.empty() ? stop_request : session.stop_flag();
  if (rep.sc.run.mode == "offline") {
    rep.outcome = run_offline(built->sys, built->plan, built->limits, sink, stop);
  } else {
    threaded_options opt = config::make_threaded_options(rep.sc, *built);
    if (rep.sc.rt.timing_csv) opt.timing_csv = folder.file("timing.csv").string();
    rep.outcome = run_threaded(built->sys, built->plan, built->limits, sink, opt, stop);
    // Through the runtime log, so --log-level / --quiet apply (summary.json keeps them).
    for (const auto& w : rep.outcome.warnings) spdlog::warn("{}", w);
  }
  session.finish(rep.outcome);  // fail-safe output unless completed; stale_input reason
  if (rep.outcome.stop_reason == "operator_signal") rep.outcome.message = operator_stop_message();
  // A run whose results could not be stored (full disk, file size limit) is not a finished
  // run: no summary.json marks it; the message says where it stopped and why.
  COSIM_INPUT_CHECK(!writer.failed(), errc::io,
                    writer.failure() +
                        "; the run stopped at t = " + format_double(rep.outcome.stop_time_s) +
                        " s; rows written before the failure are kept, no summary.json");
  folder.write_atomically("summary.json",
                          summary_json(rep.sc, rep.outcome, rep.results_csv, &session));
  return rep;
}

command add_run_command(CLI::App& app) {
  auto req = std::make_shared<run_request>();
  auto* run = app.add_subcommand(
      "run",
      "Run a scenario. Writes DIR/results.csv (one row per macro step or per output interval)\n"
      "and DIR/summary.json (status, stop reason, timing, energy residuals, resolved config).\n"
      "SIGINT/SIGTERM stop the run in order; results up to the stop are kept.");
  run->add_option("scenario", req->scenario, "Scenario TOML file")
      ->required()
      ->check(CLI::ExistingFile);
  run->add_option("--set", req->sets,
                  "Override a scenario key, e.g. --set run.macro_step=0.01 (repeatable)")
      ->type_name("KEY=VALUE");
  run->add_option("--out", req->out_dir, "Output directory (default: results/<scenario name>)");
  run->footer(keys_help());
  return {run, [req] {
            if (req->out_dir.empty())
              req->out_dir = "results/" + fs::path(req->scenario).stem().string();
            install_signal_handlers();
            const run_report rep = run_scenario(*req, &operator_stop_flag());
            const run_outcome& o = rep.outcome;
            std::printf("%s: %s (%s) after %.6g s simulated in %.3g s wall, %lld macro steps\n",
                        req->scenario.c_str(), to_string(o.status), o.stop_reason.c_str(),
                        o.sim_time_s, o.wall_time_s, static_cast<long long>(o.macro_steps));
            if (!o.message.empty()) std::printf("  %s\n", o.message.c_str());
            std::printf("  energy residual sum|dE| = %.6g J, max |dP| = %.6g W\n",
                        o.energy_residual, o.max_residual_power);
            std::printf("  results: %s\n  summary: %s\n", rep.results_csv.c_str(),
                        rep.summary_json.c_str());
            return exit_code(o);
          }};
}

}  // namespace cosim::cli
