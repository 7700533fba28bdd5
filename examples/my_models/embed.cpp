// An embedding program: registers the lag type itself (no plugin) and runs a system file
// with the cosim library's run entry, as `cosim run SYSTEM --out DIR` would.
//   my_models_run SYSTEM.toml OUT_DIR
#include <cosim/rt_config/plugin.hpp>
#include <cosim/rt_config/run.hpp>
#include <cstdio>
#include <exception>

#include "first_order_lag.hpp"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s SYSTEM.toml OUT_DIR\n", argv[0]);
    return 2;
  }
  try {
    cosim::config::register_subsystem_type(my_models::first_order_lag_type());
    cosim::config::run_request req;
    req.scenario = argv[1];
    req.out_dir = argv[2];
    req.sets = {"plugins=[]"};  // the type is registered above, not loaded from the plugin
    const cosim::config::run_report rep = cosim::config::run_scenario(req, nullptr);
    std::printf("%s: %s after %g s simulated\n", rep.summary_json.c_str(),
                rep.outcome.stop_reason.c_str(), rep.outcome.sim_time_s);
    return cosim::config::exit_code(rep.outcome);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "my_models_run: error: %s\n", e.what());
    return 2;
  }
}
