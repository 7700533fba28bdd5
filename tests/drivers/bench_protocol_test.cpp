#include "cosim/drivers/bench_protocol.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace {

using cosim::drivers::bench_message;
using cosim::drivers::crc32c;
using cosim::drivers::decode;
using cosim::drivers::decode_status;
using cosim::drivers::encode;
using cosim::drivers::encoded_size;
using cosim::drivers::max_channels;
using cosim::drivers::max_datagram_size;
using cosim::drivers::message_type;

constexpr std::array<message_type, 4> all_types{message_type::command, message_type::valve_command,
                                                message_type::valve_feedback,
                                                message_type::heartbeat};

std::vector<std::byte> bytes_of(std::string_view s) {
  std::vector<std::byte> v(s.size());
  std::transform(s.begin(), s.end(), v.begin(), [](char c) { return static_cast<std::byte>(c); });
  return v;
}

std::vector<std::byte> bytes_of(std::initializer_list<unsigned> list) {
  std::vector<std::byte> v;
  for (const unsigned b : list) {
    v.push_back(static_cast<std::byte>(b));
  }
  return v;
}

bench_message make_message(message_type type, std::uint16_t n, std::uint32_t seed = 1) {
  bench_message m{};
  m.type = type;
  m.sequence = 0x9E3779B9u * seed;
  m.timestamp_ns = 0x0123456789ABCDEFull ^ (static_cast<std::uint64_t>(seed) << 40);
  m.channel_count = n;
  for (std::size_t i = 0; i < n; ++i) {
    m.channels[i] = (static_cast<double>(i) - 7.5) / 7.5 + 1e-3 * seed;
  }
  return m;
}

std::vector<std::byte> encode_vec(const bench_message& m) {
  std::vector<std::byte> buf(max_datagram_size);
  const std::size_t n = encode(m, buf);
  buf.resize(n);
  return buf;
}

// Recomputes the trailing CRC so a test can reach the check it targets.
void reseal(std::vector<std::byte>& d) {
  const std::size_t at = d.size() - 4;
  const std::uint32_t crc = crc32c(std::span<const std::byte>(d).first(at));
  for (std::size_t i = 0; i < 4; ++i) {
    d[at + i] = static_cast<std::byte>((crc >> (8 * i)) & 0xFFu);
  }
}

decode_status decode_vec(const std::vector<std::byte>& d) {
  bench_message m{};
  return decode(d, m);
}

void expect_same(const bench_message& a, const bench_message& b) {
  EXPECT_EQ(a.type, b.type);
  EXPECT_EQ(a.sequence, b.sequence);
  EXPECT_EQ(a.timestamp_ns, b.timestamp_ns);
  ASSERT_EQ(a.channel_count, b.channel_count);
  for (std::size_t i = 0; i < a.channel_count; ++i) {
    // Bitwise, so NaN payloads and -0.0 count.
    EXPECT_EQ(std::bit_cast<std::uint64_t>(a.channels[i]),
              std::bit_cast<std::uint64_t>(b.channels[i]))
        << "channel " << i;
  }
}

TEST(Crc32c, PublishedCheckValue) {
  // Check value from the CRC catalogue (reveng), CRC-32/ISCSI.
  EXPECT_EQ(crc32c(bytes_of("123456789")), 0xE3069283u);
}

TEST(Crc32c, Rfc3720TestVectors) {
  // RFC 3720 appendix B.4; the RFC lists the CRC bytes in wire order (little-endian).
  std::vector<std::byte> zeros(32, std::byte{0x00});
  std::vector<std::byte> ones(32, std::byte{0xFF});
  std::vector<std::byte> up(32), down(32);
  for (std::size_t i = 0; i < 32; ++i) {
    up[i] = static_cast<std::byte>(i);
    down[i] = static_cast<std::byte>(31 - i);
  }
  EXPECT_EQ(crc32c(zeros), 0x8A9136AAu);
  EXPECT_EQ(crc32c(ones), 0x62A8AB43u);
  EXPECT_EQ(crc32c(up), 0x46DD794Eu);
  EXPECT_EQ(crc32c(down), 0x113FDB5Cu);
}

TEST(Crc32c, EmptyInputIsZero) {
  EXPECT_EQ(crc32c({}), 0u);
}

TEST(BenchProtocol, SizesMatchSpec) {
  EXPECT_EQ(max_datagram_size, 156u);
  EXPECT_EQ(encoded_size(0), 28u);
  EXPECT_EQ(encoded_size(1), 36u);
  EXPECT_EQ(encoded_size(16), 156u);
  EXPECT_EQ(encoded_size(0xFFFF), 24u + 8u * 0xFFFFu + 4u);
}

TEST(BenchProtocol, ToStringNamesEveryStatus) {
  std::set<std::string> names;
  for (int s = 0; s <= static_cast<int>(decode_status::bad_crc); ++s) {
    const char* name = to_string(static_cast<decode_status>(s));
    ASSERT_NE(name, nullptr);
    EXPECT_STRNE(name, "unknown");
    names.insert(name);
  }
  EXPECT_EQ(names.size(), 8u);
  EXPECT_STREQ(to_string(decode_status::ok), "ok");
  EXPECT_STREQ(to_string(decode_status::bad_crc), "bad_crc");
  EXPECT_STREQ(to_string(static_cast<decode_status>(99)), "unknown");
}

// The expected bytes are written out from the offset table in PROTOCOL.md, not from the encoder.
// The CRC was computed with an independent bitwise Python implementation.
const std::vector<std::byte> hand_built = bytes_of({
    0x43, 0x53, 0x42, 0x50,                          // 0: magic "CSBP"
    0x01,                                            // 4: version
    0x02,                                            // 5: type valve_command
    0x00, 0x00,                                      // 6: flags
    0x04, 0x03, 0x02, 0x01,                          // 8: sequence 0x01020304
    0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,  // 12: timestamp 0x1122334455667788
    0x02, 0x00,                                      // 20: channel count 2
    0x00, 0x00,                                      // 22: reserved
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xF0, 0x3F,  // 24: 1.0
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0xC0,  // 32: -2.5
    0x1F, 0x1B, 0x01, 0xE2,                          // 40: CRC-32C 0xE2011B1F
});

bench_message hand_built_message() {
  bench_message m{};
  m.type = message_type::valve_command;
  m.sequence = 0x01020304u;
  m.timestamp_ns = 0x1122334455667788ull;
  m.channel_count = 2;
  m.channels[0] = 1.0;
  m.channels[1] = -2.5;
  return m;
}

TEST(BenchProtocol, HandBuiltDatagramDecodes) {
  ASSERT_EQ(hand_built.size(), 44u);
  bench_message m{};
  m.channels.fill(42.0);
  ASSERT_EQ(decode(hand_built, m), decode_status::ok);
  expect_same(m, hand_built_message());
  for (std::size_t i = 2; i < max_channels; ++i) {
    EXPECT_EQ(m.channels[i], 0.0) << "unused channel " << i << " must be cleared";
  }
}

TEST(BenchProtocol, EncoderMatchesHandBuiltBytes) {
  const auto encoded = encode_vec(hand_built_message());
  ASSERT_EQ(encoded.size(), hand_built.size());
  for (std::size_t i = 0; i < encoded.size(); ++i) {
    EXPECT_EQ(std::to_integer<int>(encoded[i]), std::to_integer<int>(hand_built[i]))
        << "offset " << i;
  }
}

TEST(BenchProtocol, RoundTripEveryTypeAndChannelCount) {
  for (const message_type type : all_types) {
    const std::uint16_t max_n = type == message_type::heartbeat ? 0 : max_channels;
    for (std::uint16_t n = 0; n <= max_n; ++n) {
      SCOPED_TRACE(testing::Message() << "type " << static_cast<int>(type) << " n " << n);
      const bench_message in = make_message(type, n, n + 1u);
      std::array<std::byte, max_datagram_size> buf{};
      const std::size_t size = encode(in, buf);
      ASSERT_EQ(size, encoded_size(n));
      bench_message out{};
      ASSERT_EQ(decode(std::span<const std::byte>(buf).first(size), out), decode_status::ok);
      expect_same(out, in);
    }
  }
}

TEST(BenchProtocol, RoundTripSpecialDoublesBitExact) {
  bench_message in = make_message(message_type::valve_feedback, 8);
  in.channels[0] = std::numeric_limits<double>::quiet_NaN();
  in.channels[1] = std::bit_cast<double>(0x7FF8DEADBEEF0001ull);  // NaN with payload
  in.channels[2] = std::numeric_limits<double>::infinity();
  in.channels[3] = -std::numeric_limits<double>::infinity();
  in.channels[4] = -0.0;
  in.channels[5] = std::numeric_limits<double>::denorm_min();
  in.channels[6] = std::numeric_limits<double>::max();
  in.channels[7] = std::numeric_limits<double>::lowest();
  const auto d = encode_vec(in);
  bench_message out{};
  ASSERT_EQ(decode(d, out), decode_status::ok);
  expect_same(out, in);
}

TEST(BenchProtocol, RoundTripExtremeHeaderFields) {
  bench_message in = make_message(message_type::command, 1);
  in.sequence = 0xFFFFFFFFu;
  in.timestamp_ns = 0xFFFFFFFFFFFFFFFFull;
  const auto d = encode_vec(in);
  bench_message out{};
  ASSERT_EQ(decode(d, out), decode_status::ok);
  expect_same(out, in);
}

TEST(BenchProtocol, EncodeRejectsUnencodableMessages) {
  std::array<std::byte, max_datagram_size + 8> buf{};
  buf.fill(std::byte{0xAA});
  const auto untouched = [&] {
    return std::all_of(buf.begin(), buf.end(), [](std::byte b) { return b == std::byte{0xAA}; });
  };

  bench_message m = make_message(message_type::command, 16);
  m.channel_count = 17;
  EXPECT_EQ(encode(m, buf), 0u);
  m.channel_count = 0xFFFF;
  EXPECT_EQ(encode(m, buf), 0u);

  m = make_message(message_type::heartbeat, 1);
  EXPECT_EQ(encode(m, buf), 0u);

  for (const int raw : {0, 5, 255}) {
    m = make_message(message_type::command, 1);
    m.type = static_cast<message_type>(raw);
    EXPECT_EQ(encode(m, buf), 0u) << raw;
  }
  EXPECT_TRUE(untouched());
}

TEST(BenchProtocol, EncodeRejectsSmallBufferWithoutWriting) {
  for (const std::uint16_t n : {0, 1, 16}) {
    const bench_message m = make_message(message_type::valve_command, n);
    const std::size_t need = encoded_size(n);
    std::vector<std::byte> buf(need - 1, std::byte{0xAA});
    EXPECT_EQ(encode(m, buf), 0u);
    EXPECT_TRUE(
        std::all_of(buf.begin(), buf.end(), [](std::byte b) { return b == std::byte{0xAA}; }));
    EXPECT_EQ(encode(m, {}), 0u);
    buf.resize(need + 10, std::byte{0xAA});
    EXPECT_EQ(encode(m, buf), need);
    EXPECT_EQ(buf[need], std::byte{0xAA}) << "must not write past the datagram";
  }
}

TEST(BenchProtocol, EncoderWritesZeroFlagsAndReserved) {
  const auto d = encode_vec(make_message(message_type::command, 3));
  EXPECT_EQ(d[6], std::byte{0});
  EXPECT_EQ(d[7], std::byte{0});
  EXPECT_EQ(d[22], std::byte{0});
  EXPECT_EQ(d[23], std::byte{0});
}

TEST(BenchProtocol, FailedDecodeLeavesOutputUntouched) {
  bench_message out = make_message(message_type::valve_feedback, 4, 77);
  const bench_message before = out;
  auto d = encode_vec(make_message(message_type::command, 2));
  d.back() ^= std::byte{0x01};
  ASSERT_EQ(decode(d, out), decode_status::bad_crc);
  expect_same(out, before);
}

TEST(BenchProtocol, EveryStatusIsReachable) {
  const auto valid = encode_vec(make_message(message_type::valve_command, 3));
  ASSERT_EQ(decode_vec(valid), decode_status::ok);

  EXPECT_EQ(decode_vec({}), decode_status::too_short);
  EXPECT_EQ(decode_vec(std::vector<std::byte>(valid.begin(), valid.begin() + 27)),
            decode_status::too_short);

  auto d = valid;
  d[3] = std::byte{'Q'};
  reseal(d);
  EXPECT_EQ(decode_vec(d), decode_status::bad_magic);

  for (const unsigned v : {0u, 2u, 255u}) {
    d = valid;
    d[4] = static_cast<std::byte>(v);
    reseal(d);
    EXPECT_EQ(decode_vec(d), decode_status::bad_version) << v;
  }

  for (const unsigned t : {0u, 5u, 255u}) {
    d = valid;
    d[5] = static_cast<std::byte>(t);
    reseal(d);
    EXPECT_EQ(decode_vec(d), decode_status::bad_type) << t;
  }

  d = valid;
  d[20] = std::byte{17};
  reseal(d);
  EXPECT_EQ(decode_vec(d), decode_status::too_many_channels);
  d[20] = std::byte{0xFF};
  d[21] = std::byte{0xFF};
  reseal(d);
  EXPECT_EQ(decode_vec(d), decode_status::too_many_channels);

  // A heartbeat carries no channels.
  auto hb = encode_vec(make_message(message_type::heartbeat, 0));
  hb[20] = std::byte{1};
  hb.insert(hb.end() - 4, 8, std::byte{0});
  reseal(hb);
  EXPECT_EQ(decode_vec(hb), decode_status::too_many_channels);

  d = valid;
  d[20] = std::byte{2};  // count disagrees with the datagram length
  reseal(d);
  EXPECT_EQ(decode_vec(d), decode_status::bad_length);
  d = valid;
  d.push_back(std::byte{0});
  EXPECT_EQ(decode_vec(d), decode_status::bad_length);

  d = valid;
  d[30] ^= std::byte{0x10};
  EXPECT_EQ(decode_vec(d), decode_status::bad_crc);
}

TEST(BenchProtocol, NonZeroFlagsAndReservedAreIgnored) {
  auto d = encode_vec(make_message(message_type::command, 2));
  d[6] = std::byte{0x01};
  d[7] = std::byte{0x80};
  d[22] = std::byte{0xEF};
  d[23] = std::byte{0xBE};
  reseal(d);
  bench_message m{};
  ASSERT_EQ(decode(d, m), decode_status::ok);
  expect_same(m, make_message(message_type::command, 2));
}

TEST(BenchProtocol, EverySingleBitFlipIsRejected) {
  for (const message_type type : all_types) {
    for (const std::uint16_t n : {0, 1, 5, 16}) {
      if (type == message_type::heartbeat && n != 0) {
        continue;
      }
      const auto valid = encode_vec(make_message(type, n));
      ASSERT_FALSE(valid.empty());
      for (std::size_t bit = 0; bit < valid.size() * 8; ++bit) {
        auto d = valid;
        d[bit / 8] ^= static_cast<std::byte>(1u << (bit % 8));
        EXPECT_NE(decode_vec(d), decode_status::ok)
            << "type " << static_cast<int>(type) << " n " << n << " bit " << bit;
      }
    }
  }
}

TEST(BenchProtocol, EveryTruncationIsRejected) {
  for (const std::uint16_t n : {0, 1, 16}) {
    const auto valid = encode_vec(make_message(message_type::valve_feedback, n));
    for (std::size_t len = 0; len < valid.size(); ++len) {
      // Exact-size heap copy so AddressSanitizer would catch a read past the end.
      const std::vector<std::byte> d(valid.begin(),
                                     valid.begin() + static_cast<std::ptrdiff_t>(len));
      const decode_status s = decode_vec(d);
      EXPECT_NE(s, decode_status::ok) << "n " << n << " len " << len;
      EXPECT_EQ(s, len < 28 ? decode_status::too_short : decode_status::bad_length)
          << "n " << n << " len " << len;
    }
  }
}

TEST(BenchProtocol, DecodeIsTotalOnArbitraryBytes) {
  // Cheap deterministic sweep; the libFuzzer target does the real exploration.
  std::uint64_t state = 0x243F6A8885A308D3ull;
  const auto next = [&] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  for (int iter = 0; iter < 20000; ++iter) {
    std::vector<std::byte> d(next() % (max_datagram_size + 32));
    for (auto& b : d) {
      b = static_cast<std::byte>(next() & 0xFFu);
    }
    if (d.size() >= 6 && (iter & 1) != 0) {
      // Half the inputs get a valid prefix so the later checks are exercised.
      const char prefix[] = {'C', 'S', 'B', 'P', 1};
      std::memcpy(d.data(), prefix, sizeof prefix);
      d[5] = static_cast<std::byte>(1 + next() % 4);
    }
    bench_message m{};
    if (decode(d, m) == decode_status::ok) {
      EXPECT_EQ(encode_vec(m), d);
    }
  }
}

}  // namespace
