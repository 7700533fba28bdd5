#include <CLI/CLI.hpp>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <thread>

#include <semaphore.h>

#include <spdlog/spdlog.h>
#include <algorithm>
#include <fstream>
#include <memory>
#include <optional>
#include <string>

#include "batch_runner.hpp"
#include "commands.hpp"
#include "cosim/drivers/udp_driver.hpp"
#include "cosim/runtime/csv_writer.hpp"
#include "cosim/runtime/error.hpp"
#include "cosim/runtime/fail_safe.hpp"
#include "cosim/runtime/json_writer.hpp"
#include "cosim/runtime/threaded_executor.hpp"
#include "dashboard.hpp"
#include "progress.hpp"

namespace cosim::cli {

namespace fs = std::filesystem;

namespace {

// Initialised at compile time: the signal handler never runs a guarded initialisation.
constinit stop_source operator_stop_source;

// Posted by the signal handler (sem_post is async-signal-safe) for the start-up watch.
sem_t g_signalled;
std::atomic<bool> g_signalled_ready{false};

extern "C" void on_stop_signal(int sig) {
  // Lock-free atomics, sendto(2) and sem_post only: async-signal-safe. The bench hears the
  // operator at once, whatever thread the signal interrupted and whatever a model does.
  fail_safe::trip_all();
  operator_stop_source.raise(stop_cause::operator_signal, sig);
  if (g_signalled_ready.load(std::memory_order_acquire)) sem_post(&g_signalled);
}

// A stop during start-up (loading, FMU instantiation and initialisation, waiting for a
// remote worker) has no executor to answer it yet, and the code it interrupted may not
// return (a hung FMU, a discovery wait). Nothing is written before the executor starts, so
// when none has started a second after the signal, the process ends (exit 1), leaving the
// results folder as it was.
void watch_start_up_stop() {
  if (sem_init(&g_signalled, 0, 0) != 0) return;
  g_signalled_ready.store(true, std::memory_order_release);
  std::thread([] {
    while (sem_wait(&g_signalled) != 0) {
    }
    for (int i = 0; i < 100; ++i) {
      if (runs_started() > 0) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (runs_started() > 0) return;
    const int sig = operator_stop_source.code();
    const char* name = sig > 0 ? sigabbrev_np(sig) : nullptr;
    std::fprintf(stderr,
                 "cosim: stopped by SIG%s during start-up, before the run began; nothing was "
                 "written, the results folder is as it was\n",
                 name != nullptr ? name : "?");
    std::fflush(stderr);
    std::fflush(stdout);
    ::_exit(1);
  }).detach();
}

/// The simulated time the recording has reached, for the progress line: one relaxed
/// atomic store per row (on the recording thread, never a subsystem thread), read by the
/// progress line's own thread. Passes every row on to `next` (the dashboard), if any.
class progress_sink final : public row_sink {
 public:
  explicit progress_sink(row_sink* next) : next_(next) {}
  void units(std::span<const std::string> units) override {
    if (next_ != nullptr) next_->units(units);
  }
  void begin(std::span<const std::string> columns) override {
    if (next_ != nullptr) next_->begin(columns);
  }
  void write(std::span<const double> row) noexcept override {
    t_.store(row[0], std::memory_order_relaxed);
    if (next_ != nullptr) next_->write(row);
  }
  void end() override {
    if (next_ != nullptr) next_->end();
  }
  [[nodiscard]] bool failed() const noexcept override {
    return next_ != nullptr && next_->failed();
  }
  [[nodiscard]] double time() const noexcept { return t_.load(std::memory_order_relaxed); }

 private:
  row_sink* next_;
  std::atomic<double> t_{0.0};
};
static_assert(std::atomic<double>::is_always_lock_free);

/// Milliseconds of simulated time, the progress line's unit (runs are 1 ms to 1e9 s long).
std::size_t sim_ms(double t) {
  return t > 0.0 ? static_cast<std::size_t>(std::llround(t * 1e3)) : std::size_t{0};
}

}  // namespace

stop_source& operator_stop() noexcept {
  return operator_stop_source;
}

void install_signal_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  // SIGHUP: a dropped ssh session must end the run in order, not kill it without summary.
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);
}

namespace {

/// The run's result on stdout: one line, the message, the residuals, where the files are.
void print_result(const run_request& req, const config::run_report& rep) {
  const run_outcome& o = rep.outcome;
  // A realtime run says how real its time was: the schedule's misses and the worst wake-up.
  std::string realtime;
  if (o.mode == "realtime") {
    double worst_us = 0.0;
    for (const auto& t : o.threads) worst_us = std::max(worst_us, t.wakeup_max_us);
    char buf[128];
    std::snprintf(buf, sizeof buf, "; %lld deadline miss%s, worst wake-up latency %.0f us",
                  static_cast<long long>(o.deadline_misses), o.deadline_misses == 1 ? "" : "es",
                  worst_us);
    realtime = buf;
  }
  std::printf("%s: %s (%s) after %.6g s simulated in %.3g s wall, %lld macro step%s%s\n",
              req.scenario.c_str(), to_string(o.status), o.stop_reason.c_str(), o.sim_time_s,
              o.wall_time_s, static_cast<long long>(o.macro_steps), o.macro_steps == 1 ? "" : "s",
              realtime.c_str());
  if (!o.message.empty()) std::printf("  %s\n", o.message.c_str());
  std::printf("  energy residual sum|dE| = %.6g J, max |dP| = %.6g W\n", o.energy_residual,
              o.max_residual_power);
  std::printf("  results: %s\n  summary: %s\n", rep.results_csv.c_str(), rep.summary_json.c_str());
  if (!o.abandoned.empty())
    std::printf("  exit code %d: the process ended without waiting for the stuck subsystem\n",
                exit_abandoned);
}

/// The run subcommand once its options are parsed.
int run_main(run_request& req, bool print_system, const std::string& serve_arg, bool serve_any_arg,
             const std::string& cert_arg, const std::string& key_arg, progress_mode progress_flag) {
  if (print_system) {
    std::fputs(config::system_toml(config::load_scenario(req.scenario, req.sets)).c_str(), stdout);
    return 0;
  }
  if (req.out_dir.empty()) req.out_dir = "results/" + fs::path(req.scenario).stem().string();
  install_signal_handlers();
  watch_start_up_stop();
  req.on_abandon = [&req](const config::run_report& rep) { print_result(req, rep); };
  // --serve: bound before the run starts and before the results folder is
  // touched, so a port in use ends here (exit 2) with nothing written.
  // The dashboard and the progress line need the scenario's times before the run.
  const bool want_bar = progress::shown(progress_flag);
  std::optional<config::scenario> sc;
  if (!serve_arg.empty() || want_bar) sc = config::load_scenario(req.scenario, req.sets);
  std::unique_ptr<dashboard> dash;
  COSIM_INPUT_CHECK(
      (cert_arg.empty() && key_arg.empty()) || !serve_arg.empty(), errc::config_value,
      std::string(cert_arg.empty() ? "--serve-key " + key_arg : "--serve-cert " + cert_arg) +
          ": TLS for the dashboard needs --serve [ADDR:]PORT");
  if (!serve_arg.empty()) {
    serve_options so = parse_serve(serve_arg, serve_any_arg);
    so.cert_file = cert_arg;
    so.key_file = key_arg;
    dashboard_info info{fs::path(req.scenario).stem().string(),
                        to_string(sc->run.mode),
                        sc->run.macro_step,
                        sc->run.duration,
                        sc->safety.energy_residual_limit,
                        sc->safety.residual_power_limit,
                        {}};
    for (const auto& a : sc->alarms) info.alarms.push_back(a.spec);
    dash = std::make_unique<dashboard>(so, operator_stop(), std::move(info));
    std::printf("dashboard: %s\n  stop token: %s\n", dash->url().c_str(), dash->token().c_str());
    if (!dash->tls_fingerprint().empty())
      std::printf("  TLS certificate SHA-256: %s\n", dash->tls_fingerprint().c_str());
    std::fflush(stdout);
    if (req.also == nullptr) req.also = &dash->rows();
    req.observer = &dash->observer();
    dash->start();
  }
  // Progress: simulated time reached / duration, on stderr (a terminal, or
  // --progress). The scenario is read here only when the line is wanted.
  std::unique_ptr<progress_sink> follower;  // declared first: outlives the bar that reads it
  std::unique_ptr<progress> bar;
  if (want_bar) {
    const std::size_t total = std::max<std::size_t>(sim_ms(sc->run.duration), 1);
    bar = std::make_unique<progress>("cosim run " + fs::path(req.scenario).stem().string(),
                                     "ms simulated", total, progress_mode::on);
    follower = std::make_unique<progress_sink>(req.also);
    req.also = follower.get();
    // The last step may end past the duration (by less than a step).
    bar->follow([f = follower.get(), total] { return std::min(sim_ms(f->time()), total); },
                std::chrono::milliseconds(250));
  }
  run_report rep;
  try {
    rep = run_scenario(req, &operator_stop());
  } catch (const std::exception& e) {
    if (bar) bar->finish("error");
    if (dash) dash->finish_error(e.what());
    throw;
  }
  if (bar)
    bar->finish(rep.outcome.status == run_status::completed
                    ? std::string("completed")
                    : std::string(to_string(rep.outcome.status)) + " (" + rep.outcome.stop_reason +
                          ")");
  if (dash) dash->finish(rep.outcome);
  print_result(req, rep);
  return exit_code(rep.outcome);
}

}  // namespace

command add_run_command(CLI::App& app) {
  auto req = std::make_shared<run_request>();
  auto* run = app.add_subcommand(
      "run",
      "Run a scenario: a [model] preset (rt_config/scenarios/), a system file ([subsystems.*],\n"
      "[[connections]], ...; docs/systems.md, rt_config/systems/) or an SSP (.ssp/.ssd) of FMUs.\n"
      "Writes DIR/results.csv (one row per macro step or per output interval) and\n"
      "DIR/summary.json (status, stop reason, timing, energy residuals, resolved config).\n"
      "SIGINT/SIGTERM/SIGHUP stop the run in order; results up to the stop are kept.");
  run->add_option("scenario", req->scenario, "Scenario or system TOML file, or .ssp/.ssd")
      ->required()
      ->check(CLI::ExistingFile);
  run->add_option("--set", req->sets,
                  "Override a scenario key, e.g. --set run.macro_step=0.01 (repeatable)")
      ->type_name("KEY=VALUE");
  non_empty(run->add_option("--out", req->out_dir,
                            "Output directory (default: results/<scenario name>)"));
  auto print_system = std::make_shared<bool>(false);
  run->add_flag("--print-system", *print_system,
                "Print the scenario as a system file ([subsystems.*], [[connections]], ...) and "
                "exit without running: a [model] preset shows its expansion. The printed file "
                "runs to the same results.csv");
  auto serve = std::make_shared<std::string>();
  auto serve_any = std::make_shared<bool>(false);
  run->add_option("--serve", *serve,
                  "Serve a live dashboard during the run at [ADDR:]PORT (default address "
                  "127.0.0.1; PORT 0 picks a free port). Prints the URL and the stop token "
                  "(docs/dashboard.md)")
      ->type_name("[ADDR:]PORT");
  run->add_flag("--serve-any", *serve_any,
                "Allow --serve on a non-loopback address (the page and its stop button are then "
                "reachable from the network, guarded by the token only)");
  auto serve_cert = std::make_shared<std::string>();
  auto serve_key = std::make_shared<std::string>();
  run->add_option("--serve-cert", *serve_cert,
                  "With --serve: serve HTTPS/WSS only, with this PEM certificate (chain); "
                  "needs --serve-key")
      ->type_name("FILE");
  run->add_option("--serve-key", *serve_key,
                  "With --serve-cert: the certificate's unencrypted PEM private key")
      ->type_name("FILE");
  auto progress_flag = std::make_shared<progress_mode>(progress_mode::automatic);
  add_progress_flags(*run, *progress_flag);
  run->footer(keys_help());
  return {run, [req, print_system, serve, serve_any, serve_cert, serve_key, progress_flag] {
            return run_main(*req, *print_system, *serve, *serve_any, *serve_cert, *serve_key,
                            *progress_flag);
          }};
}

}  // namespace cosim::cli
