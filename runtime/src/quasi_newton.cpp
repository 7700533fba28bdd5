#include "quasi_newton.hpp"

#include <cmath>

namespace cosim::detail {

quasi_newton::quasi_newton(std::size_t n, int reuse, std::size_t capacity)
    : n_(n),
      capacity_(capacity),
      reuse_(reuse),
      v_(n * capacity, 0.0),
      w_(n * capacity, 0.0),
      step_(capacity, 0),
      r_prev_(n, 0.0),
      y_prev_(n, 0.0),
      r_(n, 0.0),
      q_(n * n, 0.0),
      r_mat_(n * n, 0.0),
      c_(n, 0.0),
      col_(n, 0.0),
      weight_(n, 0.0),
      kept_(n, 0) {}

std::size_t quasi_newton::slot(std::size_t age) const noexcept {
  return (head_ + capacity_ - 1 - age) % capacity_;
}

void quasi_newton::begin_step() noexcept {
  ++current_;
  have_prev_ = false;
  // The oldest columns are at the largest ages: drop those of steps out of reach.
  while (count_ > 0 && step_[slot(count_ - 1)] < current_ - reuse_) --count_;
}

void quasi_newton::add(std::span<const double> u, std::span<const double> y) noexcept {
  for (std::size_t i = 0; i < n_; ++i) r_[i] = y[i] - u[i];
  if (have_prev_ && capacity_ > 0) {
    double* v = &v_[head_ * n_];
    double* w = &w_[head_ * n_];
    for (std::size_t i = 0; i < n_; ++i) {
      v[i] = r_[i] - r_prev_[i];
      w[i] = y[i] - y_prev_[i];
    }
    step_[head_] = current_;
    head_ = (head_ + 1) % capacity_;
    if (count_ < capacity_) ++count_;
  }
  for (std::size_t i = 0; i < n_; ++i) {
    r_prev_[i] = r_[i];
    y_prev_[i] = y[i];
  }
  have_prev_ = true;
}

bool quasi_newton::solve(std::span<const double> scale, std::span<double> next) noexcept {
  if (!have_prev_ || n_ == 0) return false;
  // A variable with a zero scale (abs = 0 and never away from 0) weighs as one unit.
  for (std::size_t i = 0; i < n_; ++i) weight_[i] = scale[i] > 0.0 ? 1.0 / scale[i] : 1.0;
  std::size_t kept = 0;
  for (std::size_t age = 0; age < count_ && kept < n_; ++age) {
    const std::size_t s = slot(age);
    const double* v = &v_[s * n_];
    double norm0 = 0.0;
    for (std::size_t i = 0; i < n_; ++i) {
      col_[i] = v[i] * weight_[i];
      norm0 += col_[i] * col_[i];
    }
    norm0 = std::sqrt(norm0);
    if (!(norm0 > 0.0) || !std::isfinite(norm0)) continue;
    double* rc = &r_mat_[kept * n_];  // column `kept` of R (rows 0..kept)
    for (std::size_t j = 0; j < kept; ++j) rc[j] = 0.0;
    // Twice: one Gram-Schmidt pass loses orthogonality for nearly dependent columns.
    for (int pass = 0; pass < 2; ++pass)
      for (std::size_t j = 0; j < kept; ++j) {
        const double* q = &q_[j * n_];
        double d = 0.0;
        for (std::size_t i = 0; i < n_; ++i) d += q[i] * col_[i];
        for (std::size_t i = 0; i < n_; ++i) col_[i] -= d * q[i];
        rc[j] += d;
      }
    double norm = 0.0;
    for (std::size_t i = 0; i < n_; ++i) norm += col_[i] * col_[i];
    norm = std::sqrt(norm);
    if (!(norm >= filter * norm0)) continue;  // dependent on newer secants: filtered out
    double* q = &q_[kept * n_];
    for (std::size_t i = 0; i < n_; ++i) q[i] = col_[i] / norm;
    rc[kept] = norm;
    kept_[kept++] = s;
  }
  if (kept == 0) return false;
  // c = -R^-1 Q^T r (scaled residual), by back substitution.
  for (std::size_t j = 0; j < kept; ++j) {
    const double* q = &q_[j * n_];
    double d = 0.0;
    for (std::size_t i = 0; i < n_; ++i) d += q[i] * r_[i] * weight_[i];
    c_[j] = -d;
  }
  for (std::size_t j = kept; j-- > 0;) {
    double sum = c_[j];
    for (std::size_t m = j + 1; m < kept; ++m) sum -= r_mat_[m * n_ + j] * c_[m];
    c_[j] = sum / r_mat_[j * n_ + j];
  }
  // u_{k+1} = y_k + W c, in physical units (the coefficients are dimensionless).
  for (std::size_t i = 0; i < n_; ++i) {
    double x = y_prev_[i];
    for (std::size_t j = 0; j < kept; ++j) x += w_[kept_[j] * n_ + i] * c_[j];
    if (!std::isfinite(x)) return false;
    col_[i] = x;
  }
  for (std::size_t i = 0; i < n_; ++i) next[i] = col_[i];
  return true;
}

}  // namespace cosim::detail
