#pragma once
// One macro step of iterative co-simulation (000 Sect. 2.3, Fig. 8) for the offline
// executor: the Jacobi or Gauss-Seidel step becomes a fixed-point iteration on the coupling
// variables at t_{n+1} = t_n + H, with every subsystem rolled back to t_n before each
// repetition (subsystem::save_state / restore_state).
//
// Waveform: the consumers' input ports hold the samples up to t_n plus the current iterate
// u_k at t_{n+1} (input_port::receive replaces a sample re-delivered at the same time), so a
// port of order >= 1 interpolates between them; an order-0 port holds u_k over the whole
// step (the implicit counterpart of the zero-order hold). The first iterate u_0 is the
// plain scheme's extrapolation, so iteration 0 is the non-iterative step.
//
// Update (relaxation): u_{k+1} = u_k + omega_k r_k, r_k = y_k - u_k, y_k the delivered
// output of iteration k. omega_k is constant, or Aitken's dynamic relaxation
//   omega_k = -omega_{k-1} r_{k-1}.(r_k - r_{k-1}) / |r_k - r_{k-1}|^2
// on the residuals scaled by each variable's tolerance at its largest magnitude so far
// (forces in N and displacements in m weigh alike). Gauss-Seidel delivers during the sweep, before
// r_k is complete, so it uses the omega from the previous sweep.
//
// Quasi-Newton (relaxation_kind::iqn, quasi_newton.hpp): the IQN-ILS update on the fixed
// point's variables, scaled like Aitken's. In Jacobi those are all connections. In
// Gauss-Seidel they are the backward connections (consumer not after the producer in the
// order); a forward connection passes its producer's output of the current sweep unchanged,
// so the sweep is a map of the backward values alone (preCICE's serial-implicit coupling).
//
// Accepted iterate: the last one (converged, or the maximum count reached); its outputs y_k
// are delivered as in the plain scheme, and the energy monitor sees the inputs u_k the
// subsystems integrated with. Allocation-free after construction.
#include <cstddef>
#include <optional>
#include <vector>

#include "cosim/runtime/energy_monitor.hpp"
#include "cosim/runtime/executor.hpp"
#include "quasi_newton.hpp"

namespace cosim::detail {

/// Aitken's omega is kept in this range (a safeguard; a constant omega is in (0, 1]).
inline constexpr double aitken_omega_min = 0.01;
inline constexpr double aitken_omega_max = 2.0;

class fixed_point {
 public:
  /// Checks that every subsystem can roll back (throws cosim::error naming the first that
  /// cannot) and allocates the state buffers.
  fixed_point(system& sys, const run_plan& plan);

  /// Macro step [t, t + H]. Returns false if a state or output became non-finite or a
  /// subsystem could not save or restore its state (it raised the run's stop).
  bool step(time_point t, energy_monitor& mon) noexcept;

  [[nodiscard]] int iterations() const noexcept { return iterations_; }
  /// Largest |y - u| / (abs_tol + rel_tol |y|) of the accepted iterate (<= 1: converged).
  [[nodiscard]] double defect() const noexcept { return defect_; }
  [[nodiscard]] bool converged() const noexcept { return converged_; }

 private:
  struct link {
    std::size_t from, output, to;
    input_port* port;
  };
  /// Residuals of producer p's connections after its advance (u read from the ports).
  void collect(std::size_t p, time_point t1) noexcept;
  /// u_{k+1} = u_k + omega r_k into the consumers' ports, for producer p's connections.
  void relax(std::size_t p, time_point t1, double omega) noexcept;
  /// The fixed point's variables updated by quasi-Newton (relaxing with omega while it has
  /// no secant); the other links already carry their producer's output.
  void quasi_newton_update(time_point t1, double omega) noexcept;
  /// Gauss-Seidel with quasi-Newton: producer p's forward links take its output as is.
  void pass_forward(std::size_t p, time_point t1) noexcept;
  /// Largest scaled residual of the current iterate.
  [[nodiscard]] double scaled_defect() const noexcept;
  /// Aitken's omega from the current and previous residuals (and the previous omega).
  [[nodiscard]] double aitken(double omega_prev) const noexcept;

  system& sys_;
  const run_plan& plan_;
  std::vector<link> links_;
  std::vector<double> u_, y_, r_, r_prev_, scale_, peak_;
  std::vector<std::size_t> first_, last_;  // producer p's links: [first_[p], last_[p])
  std::vector<bool> forward_;              // Gauss-Seidel: consumer after producer
  std::vector<std::size_t> qn_links_;      // the quasi-Newton variables
  std::vector<double> qn_u_, qn_y_, qn_scale_, qn_next_;
  std::optional<quasi_newton> qn_;
  int iterations_ = 0;
  double defect_ = 0.0;
  bool converged_ = true;
};

}  // namespace cosim::detail
