#include "cosim/drivers/bench_protocol.hpp"

#include <bit>
#include <type_traits>

namespace cosim::drivers {
namespace {

// Byte offsets from PROTOCOL.md.
constexpr std::size_t off_magic = 0;
constexpr std::size_t off_version = 4;
constexpr std::size_t off_type = 5;
constexpr std::size_t off_flags = 6;
constexpr std::size_t off_sequence = 8;
constexpr std::size_t off_timestamp = 12;
constexpr std::size_t off_channel_count = 20;
constexpr std::size_t off_reserved = 22;
constexpr std::size_t off_channels = 24;
constexpr std::size_t channel_size = 8;

static_assert(off_channels == header_size);
static_assert(max_datagram_size == 156);

constexpr std::array<std::byte, 4> magic{std::byte{'C'}, std::byte{'S'}, std::byte{'B'},
                                         std::byte{'P'}};

// Explicit little-endian (de)serialisation keeps the wire format independent of host
// endianness, struct padding and alignment.
template <typename T>
void put_le(std::span<std::byte> out, std::size_t offset, T value) noexcept {
  static_assert(std::is_unsigned_v<T>);
  for (std::size_t i = 0; i < sizeof(T); ++i) {
    out[offset + i] = static_cast<std::byte>(static_cast<std::uint8_t>(value >> (8 * i)));
  }
}

template <typename T>
T get_le(std::span<const std::byte> in, std::size_t offset) noexcept {
  static_assert(std::is_unsigned_v<T>);
  T value = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) {
    value = static_cast<T>(value | static_cast<T>(std::to_integer<T>(in[offset + i]) << (8 * i)));
  }
  return value;
}

bool is_known_type(std::uint8_t raw) noexcept {
  return raw >= static_cast<std::uint8_t>(message_type::command) &&
         raw <= static_cast<std::uint8_t>(message_type::heartbeat);
}

std::size_t channel_limit(message_type type) noexcept {
  return type == message_type::heartbeat ? 0 : max_channels;
}

}  // namespace

const char* to_string(decode_status s) noexcept {
  switch (s) {
    case decode_status::ok:
      return "ok";
    case decode_status::too_short:
      return "too_short";
    case decode_status::bad_magic:
      return "bad_magic";
    case decode_status::bad_version:
      return "bad_version";
    case decode_status::bad_type:
      return "bad_type";
    case decode_status::bad_length:
      return "bad_length";
    case decode_status::too_many_channels:
      return "too_many_channels";
    case decode_status::bad_crc:
      return "bad_crc";
  }
  return "unknown";
}

std::size_t encoded_size(std::uint16_t channel_count) noexcept {
  return header_size + channel_size * channel_count + crc_size;
}

std::size_t encode(const bench_message& m, std::span<std::byte> out) noexcept {
  if (!is_known_type(static_cast<std::uint8_t>(m.type)) ||
      m.channel_count > channel_limit(m.type)) {
    return 0;
  }
  const std::size_t size = encoded_size(m.channel_count);
  if (out.size() < size) {
    return 0;
  }
  for (std::size_t i = 0; i < magic.size(); ++i) {
    out[off_magic + i] = magic[i];
  }
  put_le(out, off_version, protocol_version);
  put_le(out, off_type, static_cast<std::uint8_t>(m.type));
  put_le(out, off_flags, static_cast<std::uint16_t>(m.flags & known_flags));
  put_le(out, off_sequence, m.sequence);
  put_le(out, off_timestamp, m.timestamp_ns);
  put_le(out, off_channel_count, m.channel_count);
  put_le(out, off_reserved, std::uint16_t{0});
  for (std::size_t i = 0; i < m.channel_count; ++i) {
    // bit_cast keeps every bit, NaN payloads included, so round trips are exact.
    put_le(out, off_channels + channel_size * i, std::bit_cast<std::uint64_t>(m.channels[i]));
  }
  const std::size_t crc_offset = size - crc_size;
  put_le(out, crc_offset, crc32c(out.first(crc_offset)));
  return size;
}

decode_status decode(std::span<const std::byte> in, bench_message& out) noexcept {
  // Cheap structural checks come first so a foreign or future-version datagram is named
  // precisely; the CRC is checked before any value is trusted.
  if (in.size() < header_size + crc_size) {
    return decode_status::too_short;
  }
  for (std::size_t i = 0; i < magic.size(); ++i) {
    if (in[off_magic + i] != magic[i]) {
      return decode_status::bad_magic;
    }
  }
  if (get_le<std::uint8_t>(in, off_version) != protocol_version) {
    return decode_status::bad_version;
  }
  const auto raw_type = get_le<std::uint8_t>(in, off_type);
  if (!is_known_type(raw_type)) {
    return decode_status::bad_type;
  }
  const auto type = static_cast<message_type>(raw_type);
  const auto channel_count = get_le<std::uint16_t>(in, off_channel_count);
  if (channel_count > channel_limit(type)) {
    return decode_status::too_many_channels;
  }
  const std::size_t size = encoded_size(channel_count);
  if (in.size() != size) {
    return decode_status::bad_length;
  }
  const std::size_t crc_offset = size - crc_size;
  if (get_le<std::uint32_t>(in, crc_offset) != crc32c(in.first(crc_offset))) {
    return decode_status::bad_crc;
  }

  bench_message m{};
  m.type = type;
  m.sequence = get_le<std::uint32_t>(in, off_sequence);
  m.timestamp_ns = get_le<std::uint64_t>(in, off_timestamp);
  m.channel_count = channel_count;
  m.flags = static_cast<std::uint16_t>(get_le<std::uint16_t>(in, off_flags) & known_flags);
  for (std::size_t i = 0; i < channel_count; ++i) {
    m.channels[i] =
        std::bit_cast<double>(get_le<std::uint64_t>(in, off_channels + channel_size * i));
  }
  out = m;
  return decode_status::ok;
}

}  // namespace cosim::drivers
