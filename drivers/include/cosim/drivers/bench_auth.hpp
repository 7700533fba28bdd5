#pragma once
// Authenticated bench protocol (CSBP version 2, drivers/PROTOCOL.md "Authenticated
// protocol"): the v1 fields plus a session and a nonce, the CRC-32C, and an
// HMAC-SHA-512-256 tag (libsodium's crypto_auth_hmacsha512256) over everything before it.
// A session is a random 64-bit challenge issued by the receiving side, so datagrams of an
// earlier run or of a sender's earlier life never match the current one, and within a session
// only strictly newer sequence numbers are taken.
//
// The codec and the two handshake state machines are noexcept and allocation-free; the
// random challenges come from libsodium's randombytes (getrandom(2)).
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "cosim/drivers/bench_protocol.hpp"
#include "cosim/drivers/sequence_tracker.hpp"

namespace cosim::drivers {

inline constexpr std::uint8_t auth_protocol_version = 2;
inline constexpr std::size_t auth_header_size = 40, mac_size = 32, bench_key_size = 32;
inline constexpr std::size_t max_auth_datagram_size =
    auth_header_size + 8 * max_channels + crc_size + mac_size;

/// Message types of version 2 beyond the v1 ones (1..4 keep their meaning).
inline constexpr std::uint8_t hello_type = 5;      // sender -> receiver: "give me a session"
inline constexpr std::uint8_t challenge_type = 6;  // receiver -> sender: the session to use

/// A shared secret of one driver and its device(s). prepare_key() keeps libsodium's HMAC
/// state after the key's two pad blocks, so each tag costs two SHA-512 compressions fewer
/// (about half, for datagrams this short); without it every tag starts from the key.
struct bench_key {
  alignas(8) std::array<unsigned char, 416> state{};  // crypto_auth_hmacsha512256_state
  std::array<unsigned char, bench_key_size> bytes{};
  bool prepared = false;
};

/// Fills k.state from k.bytes (call again after changing the bytes).
void prepare_key(bench_key& k) noexcept;

/// One version-2 datagram. `type` is 1..6 (raw, since hello and challenge are no
/// message_type of v1); for hello and challenge there are no channels.
struct auth_message {
  std::uint8_t type = 0;
  std::uint16_t flags = 0;  // defined bits only (flag_lockstep), as in version 1
  std::uint32_t sequence = 0;
  std::uint64_t timestamp_ns = 0;
  std::uint64_t session = 0;  // data/heartbeat/challenge: the session; hello: 0
  std::uint64_t nonce = 0;    // hello: the sender's nonce; challenge: that nonce echoed (0: none)
  std::uint16_t channel_count = 0;
  std::array<double, max_channels> channels{};
};

enum class auth_status {
  ok,
  malformed,  // framing, length or CRC wrong (decode_status of v1 rules)
  bad_mac,    // well framed, CRC right, tag wrong: forged or keyed differently
};

const char* to_string(auth_status) noexcept;

/// 40 + 8 n + 4 + 32.
std::size_t auth_encoded_size(std::uint16_t channel_count) noexcept;

/// Writes the datagram with its tag; returns its size, 0 (nothing written) when `out` is too
/// small or the message is not valid on the wire.
std::size_t encode_auth(const auth_message& m, const bench_key& key,
                        std::span<std::byte> out) noexcept;

/// Checks framing, CRC, then the tag (constant time). `out` is written only on ok.
/// `framing` receives the framing verdict in v1 terms (ok when the tag is what failed).
auth_status decode_auth(std::span<const std::byte> in, const bench_key& key, auth_message& out,
                        decode_status* framing = nullptr) noexcept;

/// A fresh random 64-bit value, never 0 (0 means "none" in the handshake).
std::uint64_t random_nonce() noexcept;

/// Reads a key file: 64 hexadecimal digits (whitespace around them allowed). Refuses a file
/// that group or others may read or write. Throws cosim::error naming `key` (e.g.
/// "drivers.joystick.key_file") and the file.
bench_key read_key_file(const std::string& path, const std::string& key);

/// Creates a new key file with mode 0600 (never overwrites one). Throws cosim::error.
void write_key_file(const std::string& path);

/// Receiving side of the handshake for one peer (the input driver per peer; a device that
/// receives commands). Issues challenges, and accepts data only under the current session
/// with a strictly newer sequence number, or under the one outstanding challenge, which is
/// the sender's authenticated restart.
class auth_receiver {
 public:
  enum class verdict : std::uint8_t {
    fresh,          // deliver
    restart,        // first datagram under a new challenge: deliver; numbering starts again
    old,            // duplicate or older than the newest accepted: drop (replay)
    wrong_session,  // authenticated but under no live session (replay of another session)
    hello,          // answer with challenge(): no values
    refused,        // a challenge sent to a receiver (reflected): drop
  };

  /// Classifies an authenticated datagram (decode_auth() == ok).
  verdict observe(const auth_message& m) noexcept;
  /// The challenge answering a hello with `nonce`: the outstanding challenge (created when
  /// there is none), so replayed hellos never invalidate a challenge already handed out.
  auth_message challenge(std::uint64_t nonce, std::uint32_t sequence) noexcept;

  [[nodiscard]] bool has_session() const noexcept { return has_session_; }
  /// The session a sender may be using: the challenge handed out and not yet used, else the
  /// current one (0: none). Lockstep ticks carry it, so a device answers only its own run.
  [[nodiscard]] std::uint64_t offered_session() const noexcept {
    return pending_ != 0 ? pending_ : (has_session_ ? session_ : 0);
  }
  // Counters over every session (sequence_tracker semantics within one).
  [[nodiscard]] std::uint64_t lost() const noexcept { return lost_ + tracker_.lost(); }
  [[nodiscard]] std::uint64_t duplicates() const noexcept {
    return duplicates_ + tracker_.duplicates();
  }
  [[nodiscard]] std::uint64_t out_of_order() const noexcept {
    return out_of_order_ + tracker_.out_of_order();
  }
  [[nodiscard]] std::uint64_t restarts() const noexcept { return restarts_; }
  [[nodiscard]] std::uint64_t wrong_session() const noexcept { return wrong_session_; }

 private:
  bool has_session_ = false;
  std::uint64_t session_ = 0;
  std::uint64_t pending_ = 0;  // challenge handed out, not yet used by the sender
  sequence_tracker tracker_;   // of the current session
  std::uint64_t lost_ = 0, duplicates_ = 0, out_of_order_ = 0;  // of earlier sessions
  std::uint64_t restarts_ = 0, wrong_session_ = 0;
};

/// Sending side: says hello until a challenge answers it, then sends under that session.
class auth_sender {
 public:
  /// A hello is due (no session yet, or the receiver asked for one) and `period_ns` has
  /// passed since the last.
  [[nodiscard]] bool hello_due(std::int64_t now_ns, std::int64_t period_ns) const noexcept;
  /// The next hello (a new nonce each time).
  auth_message hello(std::int64_t now_ns, std::uint32_t sequence) noexcept;
  /// An authenticated challenge arrived. True when it answered our hello: the session is
  /// now the challenge's. A challenge with nonce 0 is the receiver asking for a hello.
  bool on_challenge(const auth_message& c) noexcept;
  [[nodiscard]] bool has_session() const noexcept { return has_session_; }
  [[nodiscard]] std::uint64_t session() const noexcept { return session_; }

 private:
  bool has_session_ = false, want_hello_ = true;
  std::uint64_t session_ = 0, nonce_ = 0;
  std::int64_t last_hello_ns_ = 0;
  bool hello_sent_ = false;
};

}  // namespace cosim::drivers
