#pragma once
// Numbers in FMU messages (private to subsystems/fmi/src).
#include <array>
#include <charconv>

namespace cosim::fmi {

/// A time in a message: the shortest text that reads back as the same double (0.1, not
/// 0.10000000000000001), without allocating (stop messages are written on real-time threads).
inline std::array<char, 32> num_text(double v) noexcept {
  std::array<char, 32> b{};
  const auto r = std::to_chars(b.data(), b.data() + b.size() - 1, v);
  *r.ptr = '\0';
  return b;
}

}  // namespace cosim::fmi
