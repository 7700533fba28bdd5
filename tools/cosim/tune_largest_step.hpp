#pragma once
// cosim tune --largest-step (tune_largest_step.cpp).
#include "cosim/rt_config/scenario.hpp"
#include "tune_options.hpp"

namespace cosim::cli::tune {

/// Runs the fine references and the grid, prints the table and writes
/// DIR/largest_step.csv and DIR/largest_step.json. Returns 0, or 1 when interrupted.
int run_largest_step(const tune_request& req, const config::scenario& sc, const tune_options& o);

}  // namespace cosim::cli::tune
