#include "cosim/subsystems/test_input.hpp"

#include <cmath>
#include <numbers>

namespace cosim::crane {

bool parse_test_input(const std::string& text, test_input_kind& out) noexcept {
  if (text == "step")
    out = test_input_kind::step;
  else if (text == "ramp")
    out = test_input_kind::ramp;
  else if (text == "impulse")
    out = test_input_kind::impulse;
  else if (text == "sine")
    out = test_input_kind::sine;
  else
    return false;
  return true;
}

const char* to_string(test_input_kind k) noexcept {
  switch (k) {
    case test_input_kind::step:
      return "step";
    case test_input_kind::ramp:
      return "ramp";
    case test_input_kind::impulse:
      return "impulse";
    case test_input_kind::sine:
      return "sine";
  }
  return "step";
}

double test_input_value(test_input_kind kind, const test_input_params& p, double t) noexcept {
  switch (kind) {
    case test_input_kind::step:  // 002 Eq. (12)
      return t < p.t0 ? p.v0 : p.v0 + p.amplitude;
    case test_input_kind::ramp:  // 002 Eq. (13)
      return t < p.t0 ? p.v0 : p.v0 + 2.0 * (t - p.t0) * p.amplitude;
    case test_input_kind::impulse:  // 002 Eq. (14)
      return (t >= p.t0 - 0.5 * p.width && t < p.t0 + 0.5 * p.width) ? p.v0 + p.amplitude : p.v0;
    case test_input_kind::sine:  // 002 Eq. (15)
      return p.v0 + p.amplitude * std::sin(2.0 * std::numbers::pi * p.frequency * t);
  }
  return p.v0;
}

}  // namespace cosim::crane
