#pragma once
// Interface quasi-Newton with inverse least squares (IQN-ILS; Degroote, Bathe, Vierendeels
// 2009, as in preCICE) for the fixed point u = Y(u) of one macro step's coupling variables.
//
// Every iteration k of a macro step gives an iterate u_k and the outputs y_k = Y(u_k), so a
// residual r_k = y_k - u_k. Consecutive iterations give secant columns
//   V_j = r_{j+1} - r_j,   W_j = y_{j+1} - y_j,
// kept over this step and the last `reuse` steps (the reuse of past time windows: the first
// update of a step already knows the coupling's slope). The next iterate is
//   c = argmin |V c + r_k|,   u_{k+1} = y_k + W c,
// the residual's least-squares Newton step with the Jacobian only known along V. The least
// squares runs on the residuals divided by each variable's scale (its tolerance at its
// typical size), so forces and displacements weigh alike. It is solved by a QR
// decomposition built newest column first (modified Gram-Schmidt, orthogonalised twice),
// dropping every column whose part orthogonal to the newer ones is below `filter` of its
// norm: old or nearly parallel secants would make R ill-conditioned (preCICE's QR2 filter).
//
// Allocation-free after construction; at most `capacity` columns (the oldest go first).
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace cosim::detail {

class quasi_newton {
 public:
  /// Relative norm below which a secant column counts as dependent on the newer ones.
  static constexpr double filter = 1e-2;

  /// n coupling variables, secants of this and the `reuse` previous macro steps, at most
  /// `capacity` columns (>= 1).
  quasi_newton(std::size_t n, int reuse, std::size_t capacity);

  /// A new macro step: forgets the previous iterate and the secants older than `reuse` steps.
  void begin_step() noexcept;
  /// Records iterate u and its outputs y (a secant with the previous iterate of this step).
  void add(std::span<const double> u, std::span<const double> y) noexcept;
  /// The quasi-Newton iterate after the last add() into `next` (physical units), the least
  /// squares weighted by 1 / scale. False (next untouched) without any usable secant or if
  /// the result is not finite: the caller relaxes instead.
  bool solve(std::span<const double> scale, std::span<double> next) noexcept;

  /// Columns currently stored (for tests).
  [[nodiscard]] std::size_t columns() const noexcept { return count_; }

 private:
  [[nodiscard]] std::size_t slot(std::size_t age) const noexcept;  // age 0 = newest

  std::size_t n_, capacity_;
  std::int64_t reuse_;
  std::vector<double> v_, w_;         // n x capacity, column-major ring
  std::vector<std::int64_t> step_;    // macro step of each column
  std::size_t head_ = 0, count_ = 0;  // head_: slot of the next column
  std::int64_t current_ = 0;
  std::vector<double> r_prev_, y_prev_, r_;
  bool have_prev_ = false;
  // QR workspace: q_ n x n, r_mat_ n x n (upper), kept_ the slots of the kept columns.
  std::vector<double> q_, r_mat_, c_, col_, weight_;
  std::vector<std::size_t> kept_;
};

}  // namespace cosim::detail
