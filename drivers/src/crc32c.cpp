#include "cosim/drivers/crc32c.hpp"

#include <array>
#include <string_view>

namespace cosim::drivers {
namespace {

constexpr std::uint32_t reflected_polynomial = 0x82F63B78u;

constexpr std::array<std::uint32_t, 256> make_table() noexcept {
  std::array<std::uint32_t, 256> table{};
  for (std::uint32_t i = 0; i < table.size(); ++i) {
    std::uint32_t r = i;
    for (int bit = 0; bit < 8; ++bit) {
      r = (r & 1u) != 0 ? (r >> 1) ^ reflected_polynomial : r >> 1;
    }
    table[i] = r;
  }
  return table;
}

constexpr auto table = make_table();

constexpr std::uint32_t update(std::uint32_t state, std::uint8_t byte) noexcept {
  return table[(state ^ byte) & 0xFFu] ^ (state >> 8);
}

constexpr std::uint32_t checksum(std::string_view s) noexcept {
  std::uint32_t state = 0xFFFFFFFFu;
  for (const char c : s) {
    state = update(state, static_cast<std::uint8_t>(c));
  }
  return state ^ 0xFFFFFFFFu;
}

// Catch a wrong polynomial or bit order at compile time, not on the bench.
static_assert(table[1] == 0xF26B8303u);
static_assert(checksum("123456789") == 0xE3069283u);

}  // namespace

std::uint32_t crc32c(std::span<const std::byte> data) noexcept {
  std::uint32_t state = 0xFFFFFFFFu;
  for (const std::byte b : data) {
    state = update(state, std::to_integer<std::uint8_t>(b));
  }
  return state ^ 0xFFFFFFFFu;
}

}  // namespace cosim::drivers
