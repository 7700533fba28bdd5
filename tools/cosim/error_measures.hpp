#pragma once
// Error measures against a reference solution (cosim compare, cosim sweep; docs/tools.md):
//  - max and RMS differences per column (csv_table.hpp: compare());
//  - the position error of 004 Eq. (7),
//      dx = (FR/N) sqrt( (1/n) sum_i ((x_i - x_i^exact) / x_rms)^2 ),
//    x_rms the quadratic mean of the exact solution, N the number of fast cycles;
//  - the energy error of 004 Eq. (8),
//      dE = (FR/N) sqrt( (1/n) sum_i ((E_i - E_0) / E_0)^2 ),
//    E_0 the initial energy, E_i the energy of the co-simulated state at t_i. It is meant for
//    conservative systems (004 Sect. 3.2): with damping it also counts the true dissipation.
// For an oscillator scenario FR and N generalise 004's definitions: FR = w_max / w_min of
// the undamped natural frequencies and N = number of cycles of w_max over the run (for
// oscillator004 exactly the paper's FR and N = 100).
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cosim/rt_config/scenario.hpp"
#include "cosim/subsystems/oscillator.hpp"
#include "csv_table.hpp"

namespace cosim::cli {

/// "x3" for ('x', 2): the co-simulation's state columns x1..xn, v1..vn.
std::string state_column(char kind, std::size_t i);

/// 004 Eq. (7). Throws cosim::error if the sizes differ, n = 0 or x_rms = 0.
double position_error_004(std::span<const double> x, std::span<const double> x_exact, double fr,
                          double cycles);
/// 004 Eq. (8). Throws cosim::error if E is empty or E0 = 0.
double energy_error_004(std::span<const double> energy, double e0, double fr, double cycles);

struct fr_cycles {
  double fr = 1.0;      // FR
  double cycles = 1.0;  // N
};
/// FR and N of an oscillator run of length `duration` [s] (see above).
fr_cycles oscillator_fr_cycles(const osc::oscillator_definition& d, double duration);

/// Row times `cosim run` writes for a scenario: every output interval and the last step.
std::vector<double> output_times(const config::scenario& sc);

/// The oscillator's reference (closed form, or the fine monolithic RK4 for nonlinear
/// definitions) at the given times, with the co-simulation's columns t, x1..xn, v1..vn and
/// dP, dE, sum_abs_dE (zero: the monolithic solution has no interface).
csv_table oscillator_reference_table(const osc::oscillator_definition& d,
                                     const std::vector<double>& times);

/// Energies (kinetic + spring) of the rows of `results` (columns x1..xn, v1..vn).
std::vector<double> row_energies(const osc::oscillator_definition& d, const csv_table& results);

struct oscillator_errors {
  std::vector<std::string> columns;  // x1..xn
  std::vector<double> position;      // 004 Eq. (7) per position column
  double energy = 0.0;               // 004 Eq. (8)
  fr_cycles scale;
};
/// 004 errors of `results` against `reference` (interpolated to the results' times, which
/// must lie inside the reference's range). E_0 is the definition's initial energy.
/// own_grid_ns[i] (optional, 0 = every row): mass i has a state only at multiples of this
/// time (fast-step delivery: a slow mass on its own grid shows its newest grid point), so
/// x_i is compared only there, and the energy only where every mass has one.
oscillator_errors oscillator_errors_004(const osc::oscillator_definition& d, double duration,
                                        const csv_table& results, const csv_table& reference,
                                        const std::vector<std::int64_t>& own_grid_ns = {});

/// Writes a csv_table (header + rows, 17 significant digits) to `path`.
void write_csv(const std::string& path, const csv_table& t);

}  // namespace cosim::cli
