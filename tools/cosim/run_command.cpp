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
  auto print_system = std::make_shared<bool>(false);
  run->add_flag("--print-system", *print_system,
                "Print the scenario as a system file ([subsystems.*], [[connections]], ...) and "
                "exit without running: a [model] preset shows its expansion. The printed file "
                "runs to the same results.csv");
  run->footer(keys_help());
  return {run, [req, print_system] {
            if (*print_system) {
              std::fputs(config::system_toml(config::load_scenario(req->scenario, req->sets)).c_str(),
                         stdout);
              return 0;
            }
            if (req->out_dir.empty())
              req->out_dir = "results/" + fs::path(req->scenario).stem().string();
            install_signal_handlers();
            req->describe_stop = operator_stop_message;
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
