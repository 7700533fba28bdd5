#pragma once

// Codec for the bench wire protocol (one UDP datagram per message). Layout and rules are
// specified in drivers/PROTOCOL.md; everything here is noexcept and allocation-free so it
// can run on the real-time thread.

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "cosim/drivers/crc32c.hpp"  // crc32c() is part of the codec API

namespace cosim::drivers {

inline constexpr std::uint8_t protocol_version = 1;
inline constexpr std::size_t max_channels = 16;
inline constexpr std::size_t header_size = 24, crc_size = 4;
inline constexpr std::size_t max_datagram_size = header_size + 8 * max_channels + crc_size;

enum class message_type : std::uint8_t {
  command = 1,         // operator input, e.g. joystick kappa in [0,1] or axes in [-1,1]
  valve_command = 2,   // simulation output to the valve drivers
  valve_feedback = 3,  // measured spool positions
  heartbeat = 4,       // liveness only; always 0 channels
};

struct bench_message {
  message_type type;
  std::uint32_t sequence;
  std::uint64_t timestamp_ns;  // sender's monotonic clock
  std::uint16_t channel_count;
  std::array<double, max_channels> channels;  // only [0, channel_count) is meaningful
  /// Defined flag bits only (flag_lockstep); every other bit is written as 0 and ignored.
  std::uint16_t flags;
};

/// Flag of a lockstep run (PROTOCOL.md, "Lockstep"): timestamp_ns is the simulation time
/// of the macro step the datagram belongs to, not a clock reading.
inline constexpr std::uint16_t flag_lockstep = 0x0100;
inline constexpr std::uint16_t known_flags = flag_lockstep;

enum class decode_status {
  ok,
  too_short,
  bad_magic,
  bad_version,
  bad_type,
  bad_length,
  too_many_channels,
  bad_crc
};

// Returns the enumerator name ("ok", "bad_crc", ...); "unknown" for values outside the enum.
const char* to_string(decode_status) noexcept;

// Wire size of a message with `channel_count` channels: 24 + 8 * channel_count + 4.
std::size_t encoded_size(std::uint16_t channel_count) noexcept;

// Writes the datagram to the front of `out` and returns its size. Returns 0 and leaves `out`
// untouched if `out` is too small or the message is not encodable: channel_count >
// max_channels, a heartbeat with channels, or a `type` outside the enum.
std::size_t encode(const bench_message& m, std::span<std::byte> out) noexcept;

// Validates and parses one whole datagram. Never reads outside `in`. `out` is written only
// when the result is ok; channels at and beyond channel_count are then set to 0.0. Flag bits
// other than known_flags and the reserved field are ignored (see PROTOCOL.md).
decode_status decode(std::span<const std::byte> in, bench_message& out) noexcept;

}  // namespace cosim::drivers
