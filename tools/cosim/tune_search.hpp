#pragma once
// cosim tune's configuration search (002 Sect. 2.4; tune_search.cpp).
#include "cosim/rt_config/scenario.hpp"
#include "tune_options.hpp"

namespace cosim::cli::tune {

/// Runs the search, prints the table and writes DIR/tune.csv, DIR/tune.json and (with a
/// recommendation) DIR/recommended.toml. Returns the exit code: 0 with a recommendation,
/// 1 without one (none in the linear region, or interrupted).
int run_search(const tune_request& req, const config::scenario& sc, const tune_options& o);

}  // namespace cosim::cli::tune
