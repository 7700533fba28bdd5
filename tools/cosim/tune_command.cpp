// cosim tune: the automated co-simulation configuration search of 002 Sect. 2.4
// (tune_search.cpp), and the largest macro step that keeps s1 within a tolerance of a fine
// reference (tune_largest_step.cpp). Options, --help and their validation: tune_options.cpp;
// the runs: batch_runner.cpp.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <memory>

#include "commands.hpp"
#include "tune_largest_step.hpp"
#include "tune_options.hpp"
#include "tune_search.hpp"

namespace cosim::cli {

command add_tune_command(CLI::App& app) {
  auto req = std::make_shared<tune::tune_request>();
  CLI::App* cmd = tune::add_tune_arguments(app, *req);
  return {cmd, [req] {
            if (req->out.empty())
              req->out = "results/tune_" + std::filesystem::path(req->scenario).stem().string();
            const config::scenario sc = config::load_scenario(req->scenario, req->sets);
            const tune::tune_options o = tune::read_options(*req, sc);
            install_signal_handlers();
            return req->largest_step ? tune::run_largest_step(*req, sc, o)
                                     : tune::run_search(*req, sc, o);
          }};
}

}  // namespace cosim::cli
