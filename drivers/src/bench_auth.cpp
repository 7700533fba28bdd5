// Authenticated bench protocol, version 2 (drivers/PROTOCOL.md "Authenticated protocol").
// The MAC is libsodium's crypto_auth_hmacsha512256 (HMAC-SHA-512 truncated to 256 bits);
// nothing cryptographic is implemented here.
#include "cosim/drivers/bench_auth.hpp"

#include <fcntl.h>
#include <sodium.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <type_traits>

#include "cosim/runtime/errno_text.hpp"
#include "cosim/runtime/error.hpp"

namespace cosim::drivers {
namespace {

static_assert(bench_key_size == crypto_auth_hmacsha512256_KEYBYTES);
static_assert(mac_size == crypto_auth_hmacsha512256_BYTES);
static_assert(max_auth_datagram_size == 204);

// Byte offsets of version 2 (PROTOCOL.md); 0..23 are those of version 1.
constexpr std::size_t off_version = 4, off_type = 5, off_flags = 6, off_sequence = 8,
                      off_timestamp = 12, off_channel_count = 20, off_reserved = 22,
                      off_session = 24, off_nonce = 32, off_channels = 40;
static_assert(off_channels == auth_header_size);

template <typename T>
void put_le(std::span<std::byte> out, std::size_t offset, T value) noexcept {
  static_assert(std::is_unsigned_v<T>);
  for (std::size_t i = 0; i < sizeof(T); ++i)
    out[offset + i] = static_cast<std::byte>(static_cast<std::uint8_t>(value >> (8 * i)));
}

template <typename T>
T get_le(std::span<const std::byte> in, std::size_t offset) noexcept {
  static_assert(std::is_unsigned_v<T>);
  T value = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i)
    value = static_cast<T>(value | static_cast<T>(std::to_integer<T>(in[offset + i]) << (8 * i)));
  return value;
}

std::size_t channel_limit(std::uint8_t type) noexcept {
  return type >= 1 && type <= 3 ? max_channels : 0;  // heartbeat, hello, challenge: none
}

const unsigned char* bytes(std::span<const std::byte> s) noexcept {
  return reinterpret_cast<const unsigned char*>(s.data());
}

static_assert(sizeof(crypto_auth_hmacsha512256_state) <= sizeof(bench_key::state));
static_assert(alignof(crypto_auth_hmacsha512256_state) <= alignof(bench_key));

/// HMAC-SHA-512-256 of `in` under `key`, from the prepared state when there is one.
void tag(const bench_key& key, std::span<const std::byte> in, unsigned char* out) noexcept {
  const auto* data = reinterpret_cast<const unsigned char*>(in.data());
  if (!key.prepared) {
    crypto_auth_hmacsha512256(out, data, in.size(), key.bytes.data());
    return;
  }
  crypto_auth_hmacsha512256_state st;
  std::memcpy(&st, key.state.data(), sizeof st);
  crypto_auth_hmacsha512256_update(&st, data, in.size());
  crypto_auth_hmacsha512256_final(&st, out);
  sodium_memzero(&st, sizeof st);
}

// sodium_init() is required once before randombytes; it is thread-safe and idempotent.
void ensure_sodium() noexcept {
  [[maybe_unused]] static const int once = sodium_init();
}

}  // namespace

const char* to_string(auth_status s) noexcept {
  switch (s) {
    case auth_status::ok:
      return "ok";
    case auth_status::malformed:
      return "malformed";
    case auth_status::bad_mac:
      return "bad_mac";
  }
  return "unknown";
}

std::size_t auth_encoded_size(std::uint16_t channel_count) noexcept {
  return auth_header_size + 8 * std::size_t{channel_count} + crc_size + mac_size;
}

std::size_t encode_auth(const auth_message& m, const bench_key& key,
                        std::span<std::byte> out) noexcept {
  if (m.type < 1 || m.type > challenge_type || m.channel_count > channel_limit(m.type)) return 0;
  const std::size_t size = auth_encoded_size(m.channel_count);
  if (out.size() < size) return 0;
  const std::array<char, 4> magic{'C', 'S', 'B', 'P'};
  for (std::size_t i = 0; i < magic.size(); ++i) out[i] = static_cast<std::byte>(magic[i]);
  put_le(out, off_version, auth_protocol_version);
  put_le(out, off_type, m.type);
  put_le(out, off_flags, static_cast<std::uint16_t>(m.flags & known_flags));
  put_le(out, off_sequence, m.sequence);
  put_le(out, off_timestamp, m.timestamp_ns);
  put_le(out, off_channel_count, m.channel_count);
  put_le(out, off_reserved, std::uint16_t{0});
  put_le(out, off_session, m.session);
  put_le(out, off_nonce, m.nonce);
  for (std::size_t i = 0; i < m.channel_count; ++i)
    put_le(out, off_channels + 8 * i, std::bit_cast<std::uint64_t>(m.channels[i]));
  const std::size_t crc_at = size - mac_size - crc_size;
  put_le(out, crc_at, crc32c(out.first(crc_at)));
  const std::size_t mac_at = size - mac_size;
  tag(key, out.first(mac_at), reinterpret_cast<unsigned char*>(out.data() + mac_at));
  return size;
}

auth_status decode_auth(std::span<const std::byte> in, const bench_key& key, auth_message& out,
                        decode_status* framing) noexcept {
  decode_status f = decode_status::ok;
  const auto fail = [&](decode_status s) {
    if (framing != nullptr) *framing = s;
    return auth_status::malformed;
  };
  if (in.size() < auth_encoded_size(0)) return fail(decode_status::too_short);
  if (in[0] != std::byte{'C'} || in[1] != std::byte{'S'} || in[2] != std::byte{'B'} ||
      in[3] != std::byte{'P'})
    return fail(decode_status::bad_magic);
  if (get_le<std::uint8_t>(in, off_version) != auth_protocol_version)
    return fail(decode_status::bad_version);
  const auto type = get_le<std::uint8_t>(in, off_type);
  if (type < 1 || type > challenge_type) return fail(decode_status::bad_type);
  const auto n = get_le<std::uint16_t>(in, off_channel_count);
  if (n > channel_limit(type)) return fail(decode_status::too_many_channels);
  const std::size_t size = auth_encoded_size(n);
  if (in.size() != size) return fail(decode_status::bad_length);
  const std::size_t crc_at = size - mac_size - crc_size;
  if (get_le<std::uint32_t>(in, crc_at) != crc32c(in.first(crc_at)))
    return fail(decode_status::bad_crc);
  if (framing != nullptr) *framing = f;
  const std::size_t mac_at = size - mac_size;
  std::array<unsigned char, mac_size> expected{};
  tag(key, in.first(mac_at), expected.data());
  // Constant-time comparison (libsodium), as crypto_auth_hmacsha512256_verify does.
  const bool good = sodium_memcmp(expected.data(), bytes(in.subspan(mac_at)), mac_size) == 0;
  sodium_memzero(expected.data(), expected.size());
  if (!good) return auth_status::bad_mac;
  auth_message m{};
  m.type = type;
  m.flags = static_cast<std::uint16_t>(get_le<std::uint16_t>(in, off_flags) & known_flags);
  m.sequence = get_le<std::uint32_t>(in, off_sequence);
  m.timestamp_ns = get_le<std::uint64_t>(in, off_timestamp);
  m.session = get_le<std::uint64_t>(in, off_session);
  m.nonce = get_le<std::uint64_t>(in, off_nonce);
  m.channel_count = n;
  for (std::size_t i = 0; i < n; ++i)
    m.channels[i] = std::bit_cast<double>(get_le<std::uint64_t>(in, off_channels + 8 * i));
  out = m;
  return auth_status::ok;
}

void prepare_key(bench_key& k) noexcept {
  crypto_auth_hmacsha512256_state st;
  crypto_auth_hmacsha512256_init(&st, k.bytes.data(), k.bytes.size());
  std::memcpy(k.state.data(), &st, sizeof st);
  sodium_memzero(&st, sizeof st);
  k.prepared = true;
}

std::uint64_t random_nonce() noexcept {
  ensure_sodium();
  std::uint64_t v = 0;
  while (v == 0) randombytes_buf(&v, sizeof v);
  return v;
}

bench_key read_key_file(const std::string& path, const std::string& key) {
  const std::string what = key + " = \"" + path + "\"";
  struct stat st {};
  COSIM_INPUT_CHECK(
      ::stat(path.c_str(), &st) == 0, errc::config_value,
      what + ": " + errno_text(errno) + " (create a key with: cosim-device keygen " + path + ")");
  COSIM_INPUT_CHECK(S_ISREG(st.st_mode), errc::config_value, what + ": not a regular file");
  if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    throw error(errc::config_value,
                what + ": the key file is accessible to group or others (mode " + mode +
                    "); a shared secret must be private: chmod 600 " + path);
  }
  std::ifstream in(path);
  COSIM_INPUT_CHECK(in.good(), errc::config_value, what + ": cannot read it");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  std::string hex;
  for (const char c : text)
    if (c != ' ' && c != '\n' && c != '\r' && c != '\t') hex.push_back(c);
  bench_key k;
  std::size_t len = 0;
  const bool ok = hex.size() == 2 * bench_key_size &&
                  sodium_hex2bin(k.bytes.data(), k.bytes.size(), hex.data(), hex.size(), nullptr,
                                 &len, nullptr) == 0 &&
                  len == bench_key_size;
  sodium_memzero(hex.data(), hex.size());
  sodium_memzero(text.data(), text.size());
  COSIM_INPUT_CHECK(ok, errc::config_value,
                    what +
                        ": expected 64 hexadecimal digits (a 256-bit key, as written by "
                        "cosim-device keygen)");
  return k;
}

void write_key_file(const std::string& path) {
  ensure_sodium();
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  COSIM_INPUT_CHECK(fd >= 0, errc::io,
                    path + ": cannot create the key file: " + errno_text(errno) +
                        (errno == EEXIST ? " (an existing key is never overwritten)" : ""));
  std::array<unsigned char, bench_key_size> k{};
  crypto_auth_hmacsha512256_keygen(k.data());
  std::array<char, 2 * bench_key_size + 2> hex{};
  sodium_bin2hex(hex.data(), hex.size(), k.data(), k.size());
  sodium_memzero(k.data(), k.size());
  hex[2 * bench_key_size] = '\n';
  const auto n = ::write(fd, hex.data(), 2 * bench_key_size + 1);
  sodium_memzero(hex.data(), hex.size());
  const bool ok = n == static_cast<ssize_t>(2 * bench_key_size + 1) && ::fsync(fd) == 0;
  ::close(fd);
  if (!ok) {
    ::unlink(path.c_str());
    throw error(errc::io, path + ": cannot write the key file");
  }
}

// ---------------------------------------------------------------------------- receiver

auth_receiver::verdict auth_receiver::observe(const auth_message& m) noexcept {
  if (m.type == hello_type) return verdict::hello;
  if (m.type == challenge_type) return verdict::refused;
  if (has_session_ && m.session == session_) {
    return tracker_.observe(m.sequence) == sequence_class::fresh ? verdict::fresh : verdict::old;
  }
  if (pending_ != 0 && m.session == pending_) {
    // The sender took the challenge only this receiver knows: a new life of the sender.
    // Numbering starts again from this datagram; the counters so far are kept.
    const bool restart = has_session_;
    lost_ += tracker_.lost();
    duplicates_ += tracker_.duplicates();
    out_of_order_ += tracker_.out_of_order();
    tracker_.reset();
    (void)tracker_.observe(m.sequence);
    session_ = pending_;
    pending_ = 0;
    has_session_ = true;
    if (restart) ++restarts_;
    return restart ? verdict::restart : verdict::fresh;
  }
  ++wrong_session_;
  return verdict::wrong_session;
}

auth_message auth_receiver::challenge(std::uint64_t nonce, std::uint32_t sequence) noexcept {
  if (pending_ == 0) pending_ = random_nonce();
  auth_message c{};
  c.type = challenge_type;
  c.sequence = sequence;
  c.session = pending_;
  c.nonce = nonce;
  return c;
}

// ------------------------------------------------------------------------------ sender

bool auth_sender::hello_due(std::int64_t now_ns, std::int64_t period_ns) const noexcept {
  return want_hello_ && (!hello_sent_ || now_ns - last_hello_ns_ >= period_ns);
}

auth_message auth_sender::hello(std::int64_t now_ns, std::uint32_t sequence) noexcept {
  // One nonce per round of hellos: an answer to an earlier hello of the round still counts
  // when the round trip is longer than the hello period.
  if (nonce_ == 0) nonce_ = random_nonce();
  last_hello_ns_ = now_ns;
  hello_sent_ = true;
  auth_message h{};
  h.type = hello_type;
  h.sequence = sequence;
  h.nonce = nonce_;
  return h;
}

bool auth_sender::on_challenge(const auth_message& c) noexcept {
  if (c.type != challenge_type) return false;
  if (c.nonce == 0) {
    // The receiver knows no session of ours (it started, or lost it): say hello. The session
    // in use stays until an answer arrives, so a replayed request costs one round trip.
    if (!want_hello_) {
      want_hello_ = true;
      hello_sent_ = false;
    }
    return false;
  }
  if (nonce_ == 0 || c.nonce != nonce_) return false;  // not an answer to our latest hello
  session_ = c.session;
  has_session_ = true;
  want_hello_ = false;
  nonce_ = 0;
  return true;
}

}  // namespace cosim::drivers
