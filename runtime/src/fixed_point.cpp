#include "fixed_point.hpp"

#include <algorithm>
#include <cmath>

#include "cosim/runtime/error.hpp"
#include "cosim/runtime/executor.hpp"
#include "cosim/runtime/scheme.hpp"

namespace cosim::detail {

fixed_point::fixed_point(system& sys, const run_plan& plan) : sys_(sys), plan_(plan) {
  COSIM_INPUT_CHECK(plan.iteration.max_iterations >= 1, errc::config_value,
                    "iterations must be >= 1");
  check_rollback(sys, plan);
  for (std::size_t i = 0; i < sys.size(); ++i) sys.at(i).prepare_state();
  // Links grouped by producer, so that a Gauss-Seidel sweep relaxes one producer's at a time.
  first_.assign(sys.size(), 0);
  last_.assign(sys.size(), 0);
  for (std::size_t p = 0; p < sys.size(); ++p) {
    first_[p] = links_.size();
    for (const connection& c : sys.connections())
      if (c.from == p) links_.push_back({c.from, c.output, c.to, &sys.at(c.to).input(c.input)});
    last_[p] = links_.size();
  }
  const std::size_t n = links_.size();
  // Position of each subsystem in the sweep, for the Gauss-Seidel forward links.
  std::vector<std::size_t> position(sys.size(), 0);
  for (std::size_t k = 0; k < plan.order.size(); ++k) position[plan.order[k]] = k;
  const bool jacobi = plan.scheme == scheme_kind::jacobi;
  forward_.assign(n, false);
  for (std::size_t l = 0; l < n; ++l) {
    forward_[l] = !jacobi && position[links_[l].to] > position[links_[l].from];
    if (!forward_[l]) qn_links_.push_back(l);
  }
  if (plan.iteration.relaxation == relaxation_kind::iqn) {
    const std::size_t m = qn_links_.size();
    qn_u_.assign(m, 0.0);
    qn_y_.assign(m, 0.0);
    qn_scale_.assign(m, 1.0);
    qn_next_.assign(m, 0.0);
    // Secants of reuse + 1 steps; beyond 2m + 64 the oldest go (at most m are independent).
    const auto reuse = static_cast<std::size_t>(std::max(plan.iteration.iqn_reuse, 0));
    const std::size_t per_step = static_cast<std::size_t>(plan.iteration.max_iterations);
    qn_.emplace(m, plan.iteration.iqn_reuse,
                std::max<std::size_t>(1, std::min((reuse + 1) * per_step, 2 * m + 64)));
  }
  u_.assign(n, 0.0);
  y_.assign(n, 0.0);
  r_.assign(n, 0.0);
  r_prev_.assign(n, 0.0);
  scale_.assign(n, 1.0);
  peak_.assign(n, 0.0);
}

void fixed_point::collect(std::size_t p, time_point t1) noexcept {
  const subsystem& producer = sys_.at(p);
  const time_point ts = scheme::sample_time(producer, t1);
  for (std::size_t l = first_[p]; l < last_[p]; ++l) {
    u_[l] = links_[l].port->value_at(ts);  // what the consumer integrated with
    y_[l] = scheme::delivered_output(producer, links_[l].output);
    r_[l] = y_[l] - u_[l];
  }
}

void fixed_point::relax(std::size_t p, time_point t1, double omega) noexcept {
  const time_point ts = scheme::sample_time(sys_.at(p), t1);
  // Without derivatives: the port interpolates between t_n and the iterate.
  for (std::size_t l = first_[p]; l < last_[p]; ++l)
    links_[l].port->receive(ts, u_[l] + omega * r_[l]);
}

void fixed_point::pass_forward(std::size_t p, time_point t1) noexcept {
  const time_point ts = scheme::sample_time(sys_.at(p), t1);
  for (std::size_t l = first_[p]; l < last_[p]; ++l)
    if (forward_[l]) links_[l].port->receive(ts, y_[l]);
}

void fixed_point::quasi_newton_update(time_point t1, double omega) noexcept {
  const std::size_t m = qn_links_.size();
  for (std::size_t j = 0; j < m; ++j) qn_scale_[j] = scale_[qn_links_[j]];
  if (!qn_->solve(qn_scale_, qn_next_))
    for (std::size_t j = 0; j < m; ++j) qn_next_[j] = qn_u_[j] + omega * (qn_y_[j] - qn_u_[j]);
  for (std::size_t j = 0; j < m; ++j) {
    const link& lk = links_[qn_links_[j]];
    lk.port->receive(scheme::sample_time(sys_.at(lk.from), t1), qn_next_[j]);
  }
}

double fixed_point::scaled_defect() const noexcept {
  const iteration_options& o = plan_.iteration;
  double d = 0.0;
  for (std::size_t l = 0; l < links_.size(); ++l) {
    const double e = std::abs(r_[l]) / (o.abs_tol + o.rel_tol * std::abs(y_[l]));
    if (!(e <= d)) d = e;  // NaN propagates
  }
  return d;
}

double fixed_point::aitken(double omega_prev) const noexcept {
  double num = 0.0, den = 0.0;
  for (std::size_t l = 0; l < links_.size(); ++l) {
    const double a = r_prev_[l] / scale_[l];
    const double dr = r_[l] / scale_[l] - a;
    num += a * dr;
    den += dr * dr;
  }
  const double omega = -omega_prev * num / den;
  if (!(den > 0.0) || !std::isfinite(omega)) return omega_prev;
  // Safeguard: a scalar secant step cannot follow residuals of opposite-sign modes (Jacobi's
  // eigenvalues come in +-sqrt(s) pairs), and a negative or huge omega throws the iterate
  // away; keep omega in [omega_min, omega_max].
  return std::clamp(omega, aitken_omega_min, aitken_omega_max);
}

bool fixed_point::step(time_point t, energy_monitor& mon) noexcept {
  const iteration_options& o = plan_.iteration;
  const time_point t1 = t + plan_.macro_step;
  const bool jacobi = plan_.scheme == scheme_kind::jacobi;
  // A subsystem that cannot save or restore (an FMU's error status) has raised the stop.
  for (std::size_t i = 0; i < sys_.size(); ++i)
    if (!sys_.at(i).save_state()) return false;
  double omega = o.omega;
  // The omega that relaxed the previous residual r_{k-1} (Aitken's omega_{k-1}). In
  // Gauss-Seidel that is the omega of the previous sweep, not the one about to be used.
  double omega_of_prev = o.omega;
  double defect_prev = 0.0;
  converged_ = false;
  if (qn_) qn_->begin_step();
  for (int k = 0; k < o.max_iterations; ++k) {
    if (k > 0)
      for (std::size_t i = 0; i < sys_.size(); ++i)
        if (!sys_.at(i).restore_state()) return false;
    iterations_ = k + 1;
    const bool last = k + 1 == o.max_iterations;
    // The monitor keeps the inputs of the latest iteration: the accepted one's in the end.
    for (std::size_t i : plan_.order) {
      if (!scheme::advance(sys_.at(i), t, plan_.macro_step)) return false;
      mon.capture_inputs(i, t1);
      if (!jacobi) {
        collect(i, t1);
        if (!last) {
          if (qn_)
            pass_forward(i, t1);
          else
            relax(i, t1, omega);
        }
      }
    }
    if (jacobi)
      for (std::size_t p = 0; p < sys_.size(); ++p) collect(p, t1);
    if (k == 0)
      for (std::size_t l = 0; l < links_.size(); ++l) {
        // Aitken's weights: the variable's largest magnitude so far, so that a force and a
        // velocity passing through zero weigh by their typical size.
        peak_[l] = std::max({peak_[l], std::abs(y_[l]), std::abs(u_[l])});
        scale_[l] = o.abs_tol + o.rel_tol * peak_[l];
      }
    defect_ = scaled_defect();
    if (qn_) {
      // Every iterate gives a secant, the accepted one too: the next steps reuse it.
      for (std::size_t j = 0; j < qn_links_.size(); ++j) {
        qn_u_[j] = u_[qn_links_[j]];
        qn_y_[j] = y_[qn_links_[j]];
      }
      qn_->add(qn_u_, qn_y_);
    }
    if (defect_ <= 1.0) {
      converged_ = true;
      break;
    }
    if (!std::isfinite(defect_)) return false;
    if (last) break;
    if (qn_) {
      quasi_newton_update(t1, o.omega);
      continue;
    }
    // Jacobi relaxes r_k now with the omega computed from it; Gauss-Seidel relaxed r_k during
    // the sweep with `omega`, and the new one serves the next sweep.
    const double applied = omega;
    if (o.relaxation == relaxation_kind::aitken && k > 0) {
      // A defect that grew means the last omega overshot: start again from the initial one.
      omega = defect_ > defect_prev ? o.omega : aitken(jacobi ? omega : omega_of_prev);
    }
    omega_of_prev = jacobi ? omega : applied;
    defect_prev = defect_;
    if (jacobi)
      for (std::size_t p = 0; p < sys_.size(); ++p) relax(p, t1, omega);
    std::copy(r_.begin(), r_.end(), r_prev_.begin());
  }
  // The accepted iterate's outputs, delivered as in the plain scheme (with derivatives).
  for (std::size_t i : plan_.order) scheme::deliver(sys_, i, t1);
  return true;
}

}  // namespace cosim::detail
