#pragma once
// Valve command kappa(t) of the crane manoeuvres: M1 (003 Eq. (19)) and M2 (003 Eq. (20)).
#include <string_view>

#include "cosim/runtime/port.hpp"

namespace cosim::crane {

enum class manoeuvre_kind { m1, m2, hold };

/// Parses "M1", "M2" or "hold" (case-insensitive); returns false on anything else.
bool parse_manoeuvre(std::string_view text, manoeuvre_kind& out) noexcept;

/// Pure function of time evaluated exactly at every hydraulic sub-step.
class manoeuvre final : public signal_source {
 public:
  manoeuvre(manoeuvre_kind kind, double kappa0) noexcept : kind_(kind), kappa0_(kappa0) {}
  [[nodiscard]] double value(time_point t) const noexcept override;
  /// A sub-step batch with the manoeuvre chosen once, not per value.
  void values(time_point t, duration h, std::size_t n, double* out) const noexcept override;
  [[nodiscard]] static double m1(double t, double kappa0) noexcept;
  [[nodiscard]] static double m2(double t, double kappa0) noexcept;
  /// Which piece of 003 Eq. (19) holds at t: 0, 2, 4 the constant ones, -1 a ramp.
  [[nodiscard]] static int m1_piece(double t) noexcept;
  /// kappa(t) of `kind` (M1, M2, or kappa0 held) at t seconds.
  [[nodiscard]] static double at(manoeuvre_kind kind, double t, double kappa0) noexcept;

 private:
  manoeuvre_kind kind_;
  double kappa0_;
};

}  // namespace cosim::crane
