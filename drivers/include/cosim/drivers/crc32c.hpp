#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace cosim::drivers {

// CRC-32C (Castagnoli): reflected polynomial 0x82F63B78, init 0xFFFFFFFF, final xor
// 0xFFFFFFFF. Check value of the ASCII string "123456789" is 0xE3069283.
// Chosen over CRC-32/IEEE for its better Hamming distance on short datagrams.
std::uint32_t crc32c(std::span<const std::byte> data) noexcept;

}  // namespace cosim::drivers
