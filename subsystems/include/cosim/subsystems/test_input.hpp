#pragma once
// Pre-defined external-input tests of the automated configuration search, 002 Sect. 2.4.2,
// Eqs. (12)-(15), used in place of an unknown input such as the valve command kappa(t).
//
//   step     w1 = v0 for t < t0, v0 + a after            (002 Eq. (12))
//   ramp     w2 = v0 for t < t0, v0 + 2 (t - t0) a after  (002 Eq. (13))
//   impulse  w3 = v0 + a for |t - t0| < d/2 (left-closed), v0 otherwise (002 Eq. (14))
//   sine     w4 = v0 + a sin(2 pi f t)                    (002 Eq. (15), omega = 2 pi f)
//
// 002 writes the step and impulse level as v_max and the ramp as v0 + 2(t - 0.5) v_max
// with v0 = 0 V in its example; here the amplitude a is an increment over v0 throughout
// (so all four tests move the input by at most |a| away from its equilibrium value v0).
// t0 = 0.5 s places the event in the middle of 002's 1-s tests.
#include <string>

#include "cosim/runtime/port.hpp"

namespace cosim::crane {

enum class test_input_kind { step, ramp, impulse, sine };

/// "step", "ramp", "impulse", "sine"; false on anything else.
bool parse_test_input(const std::string& text, test_input_kind& out) noexcept;
const char* to_string(test_input_kind k) noexcept;

struct test_input_params {
  double v0 = 0.0;         // initial (equilibrium) value
  double amplitude = 0.0;  // a
  double t0 = 0.5;         // event time [s]
  double width = 0.1;      // impulse width d [s]
  double frequency = 1.0;  // sine frequency f [Hz]
};

[[nodiscard]] double test_input_value(test_input_kind kind, const test_input_params& p,
                                      double t) noexcept;

class test_input final : public signal_source {
 public:
  test_input(test_input_kind kind, test_input_params p) noexcept : kind_(kind), p_(p) {}
  [[nodiscard]] double value(time_point t) const noexcept override {
    return test_input_value(kind_, p_, to_seconds(t));
  }

 private:
  test_input_kind kind_;
  test_input_params p_;
};

}  // namespace cosim::crane
