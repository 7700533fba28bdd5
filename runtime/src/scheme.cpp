#include "cosim/runtime/scheme.hpp"

#include <cmath>

namespace cosim::scheme {

bool advance(subsystem& s, time_point t, duration H) noexcept {
  const duration h = s.step_size();
  const std::int64_t k = H / h;
  bool ok = true;
  for (std::int64_t j = 0; j < k && ok; ++j) ok = s.step(t + j * h, h);
  s.update_outputs(t + H);
  return ok && outputs_finite(s);
}

void deliver(system& sys, std::size_t from, time_point t) noexcept {
  const subsystem& producer = sys.at(from);
  for (const connection& c : sys.connections())
    if (c.from == from) sys.at(c.to).input(c.input).receive(t, producer.output(c.output));
}

bool outputs_finite(const subsystem& s) noexcept {
  for (double v : s.outputs())
    if (!std::isfinite(v)) return false;
  return true;
}

}  // namespace cosim::scheme
