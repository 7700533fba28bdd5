#pragma once
// Closed forms of the test FMUs' problems (tests/fmus/), computed here independently of the
// FMUs' own step code.
#include <cmath>
#include <vector>

namespace cosim::test {

// Defaults of tests/fmus/bouncing_ball/*/modelDescription.xml.
struct ball_params {
  double g = 9.81, e = 0.7, h0 = 1.0, v0 = 0.0, v_min = 1e-3;
};

/// Impact times of the ball: the first at the root of h0 + v0 t - g t^2 / 2 = 0, then flights
/// of 2 u_n / g with rebound speeds u_n = e^n w1, w1 = sqrt(v0^2 + 2 g h0), until a rebound
/// slower than v_min leaves the ball resting (that impact is the last).
inline std::vector<double> ball_impacts(const ball_params& p, double until) {
  std::vector<double> t;
  const double w1 = std::sqrt(p.v0 * p.v0 + 2.0 * p.g * p.h0);
  double tb = (p.v0 + w1) / p.g;
  double u = w1;
  while (tb <= until) {
    t.push_back(tb);
    u *= p.e;
    if (u < p.v_min) break;
    tb += 2.0 * u / p.g;
  }
  return t;
}

struct ball_state {
  double h = 0.0, v = 0.0;
  int bounces = 0;
};

/// h, v and the number of bounces at t.
inline ball_state ball_at(const ball_params& p, double t) {
  const double w1 = std::sqrt(p.v0 * p.v0 + 2.0 * p.g * p.h0);
  const double t1 = (p.v0 + w1) / p.g;
  if (t < t1) return {p.h0 + t * (p.v0 - 0.5 * p.g * t), p.v0 - p.g * t, 0};
  double tb = t1, u = p.e * w1;
  int n = 1;
  while (u >= p.v_min && t >= tb + 2.0 * u / p.g) {
    tb += 2.0 * u / p.g;
    u *= p.e;
    ++n;
  }
  if (u < p.v_min) return {0.0, 0.0, n};  // resting since impact n
  const double tau = t - tb;
  return {tau * (u - 0.5 * p.g * tau), u - p.g * tau, n};
}

/// Apex height after bounce n (n >= 1): e^(2n) w1^2 / (2 g).
inline double ball_apex(const ball_params& p, int n) {
  const double w1sq = p.v0 * p.v0 + 2.0 * p.g * p.h0;
  return std::pow(p.e, 2 * n) * w1sq / (2.0 * p.g);
}

}  // namespace cosim::test
