// cosim worker: serves one remote subsystem (host = "dds", or "process" when the master
// starts it) of a system file to the master (docs/distributed.md).
#include <CLI/CLI.hpp>
#include <cstdio>

#include "commands.hpp"
#include "cosim/rt_config/worker.hpp"

namespace cosim::cli {

command add_worker_command(CLI::App& app) {
  auto file = std::make_shared<std::string>();
  auto name = std::make_shared<std::string>();
  auto sets = std::make_shared<std::vector<std::string>>();
  auto* w = app.add_subcommand(
      "worker",
      "Serve one remote subsystem (subsystems.NAME.host = \"dds\") of a system file over DDS\n"
      "([dds] domain and partition), on this or another host, until the master's run ends.\n"
      "Start it with the same file and --set overrides as the master's `cosim run`. Exit codes:\n"
      "0 the master ended the run, 1 the master was lost (the subsystem was stopped\n"
      "fail-safe) or a signal stopped it, 2 bad input (docs/distributed.md). For host =\n"
      "\"process\" the master starts it itself, with a DDS partition of its own.");
  w->add_option("system", *file, "System or scenario TOML file")
      ->required()
      ->check(CLI::ExistingFile);
  w->add_option("--subsystem", *name, "The subsystem to serve")->required();
  w->add_option("--set", *sets, "Override a key, as for `cosim run` (repeatable)")
      ->type_name("KEY=VALUE");
  return {w, [file, name, sets] {
            const config::scenario sc = config::load_scenario(*file, *sets);
            install_signal_handlers();
            std::printf("worker: serving %s on DDS domain %lld, partition \"%s\"\n", name->c_str(),
                        static_cast<long long>(sc.dds.domain), sc.dds.partition.c_str());
            std::fflush(stdout);
            const dds::worker_outcome o = config::serve_worker(sc, *name, &operator_stop());
            std::printf("worker: %s after %lld commands (%lld late, %lld refused)%s%s\n",
                        o.completed ? "run ended" : "stopped", static_cast<long long>(o.commands),
                        static_cast<long long>(o.late), static_cast<long long>(o.refused),
                        o.message.empty() ? "" : ": ", o.message.c_str());
            return o.completed ? 0 : 1;
          }};
}

}  // namespace cosim::cli
