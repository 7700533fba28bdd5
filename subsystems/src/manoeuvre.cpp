#include "cosim/subsystems/manoeuvre.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <numbers>

namespace cosim::crane {

bool parse_manoeuvre(std::string_view text, manoeuvre_kind& out) noexcept {
  std::string lower;
  for (char ch : text)
    lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(ch))));
  if (lower == "m1")
    out = manoeuvre_kind::m1;
  else if (lower == "m2")
    out = manoeuvre_kind::m2;
  else if (lower == "hold")
    out = manoeuvre_kind::hold;
  else
    return false;
  return true;
}

namespace {
// 003 Eq. (19) with t_a = 2 s, t_b = 6 s, t_r = 1 ms.
constexpr double ta = 2.0, tb = 6.0, tr = 1e-3;
}  // namespace

double manoeuvre::m1(double t, double k0) noexcept {
  if (t <= ta) return k0;
  if (t <= ta + tr) return k0 - 0.01 * (t - ta) / tr;
  if (t <= tb) return k0 - 0.01;
  if (t <= tb + 2.0 * tr) return k0 - 0.01 + 0.03 * (t - tb) / (2.0 * tr);
  return k0 + 0.02;
}

int manoeuvre::m1_piece(double t) noexcept {
  // The branches of m1: 0, 2 and 4 are constant, 1 and 3 the ramps (-1).
  if (t <= ta) return 0;
  if (t <= ta + tr) return -1;
  if (t <= tb) return 2;
  if (t <= tb + 2.0 * tr) return -1;
  return 4;
}

double manoeuvre::m2(double t, double k0) noexcept {
  // 003 Eq. (20), omega = 2 inside sin(2 pi omega t).
  double A = 0.0;
  if (t <= 1.0)
    A = 0.1 * t;
  else if (t <= 8.0)
    A = 0.1;
  else if (t <= 9.0)
    A = 0.1 * (9.0 - t);
  return k0 * (1.0 - A * std::sin(2.0 * std::numbers::pi * 2.0 * t));
}

double manoeuvre::at(manoeuvre_kind kind, double t, double k0) noexcept {
  switch (kind) {
    case manoeuvre_kind::m1:
      return m1(t, k0);
    case manoeuvre_kind::m2:
      return m2(t, k0);
    case manoeuvre_kind::hold:
      break;
  }
  return k0;
}

double manoeuvre::value(time_point t) const noexcept {
  return at(kind_, to_seconds(t), kappa0_);
}

void manoeuvre::values(time_point t, duration h, std::size_t n, double* out) const noexcept {
  // The same expression as value() for every sub-step time, so the numbers are identical.
  auto at_step = [&](std::size_t j) { return to_seconds(t + static_cast<std::int64_t>(j) * h); };
  switch (kind_) {
    case manoeuvre_kind::m1: {
      // M1 is constant but for its two ramps: a batch whose first and last times lie on one
      // constant piece takes that piece's value (m1's own expression, so the same bits);
      // the times in between lie there too, as to_seconds is monotonic.
      if (n == 0) return;
      const int piece = m1_piece(at_step(0));
      if (piece >= 0 && piece == m1_piece(at_step(n - 1))) {
        std::fill(out, out + n, m1(at_step(0), kappa0_));
        return;
      }
      for (std::size_t j = 0; j < n; ++j) out[j] = m1(at_step(j), kappa0_);
      return;
    }
    case manoeuvre_kind::m2:
      for (std::size_t j = 0; j < n; ++j) out[j] = m2(at_step(j), kappa0_);
      return;
    case manoeuvre_kind::hold:
      break;
  }
  for (std::size_t j = 0; j < n; ++j) out[j] = kappa0_;
}

}  // namespace cosim::crane
