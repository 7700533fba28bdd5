#pragma once
// The unit exchanged between subsystems at a communication point: N coupling values
// produced at one simulation tick. Trivially copyable so it can cross an spsc_ring.
#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace cosim {

template <std::size_t N>
struct coupling_sample {
  std::uint64_t sequence = 0;  // producer's running count, lets the consumer detect gaps
  std::int64_t tick = 0;       // simulation tick the values belong to
  std::array<double, N> values{};
};

static_assert(std::is_trivially_copyable_v<coupling_sample<4>>);
static_assert(sizeof(coupling_sample<4>) == 48, "no hidden padding expected");

}  // namespace cosim
