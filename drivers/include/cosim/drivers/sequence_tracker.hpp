#pragma once

#include <cstdint>
#include <optional>

namespace cosim::drivers {

// Signed distance from `from` to `to` in RFC 1982 serial-number arithmetic: positive when
// `to` is newer, correct across the 0xFFFFFFFF -> 0 wrap. A distance of exactly 2^31 is
// ambiguous and comes out as INT32_MIN, i.e. "older".
constexpr std::int32_t sequence_distance(std::uint32_t from, std::uint32_t to) noexcept {
  return static_cast<std::int32_t>(to - from);  // modular conversion is defined since C++20
}

enum class sequence_class : std::uint8_t {
  fresh,         // newer than anything seen: deliver
  duplicate,     // equal to the newest seen: drop
  out_of_order,  // older than the newest seen: drop (a real-time consumer wants the latest)
};

const char* to_string(sequence_class) noexcept;

// Classifies the sequence numbers of decoded (CRC-valid) datagrams from one sender.
// O(1) state and no allocation, so it only remembers the newest number: a late packet that
// fills a gap already counted in lost() is counted as out_of_order and lost() is NOT reduced.
// lost() is therefore "gaps seen at the time", an upper bound on packets never received.
// A sender restart (numbers jumping back) looks like out_of_order; call reset() when the
// transport detects one.
class sequence_tracker {
 public:
  sequence_class observe(std::uint32_t sequence) noexcept;
  void reset() noexcept;
  /// The datagram `sequence` just classified out_of_order is the first of a restarted
  /// numbering: it is counted fresh instead, and numbering starts again from it. The other
  /// counters are kept (what was lost or dropped before the restart stays counted).
  sequence_class restart_at(std::uint32_t sequence) noexcept;
  std::uint64_t restarts() const noexcept { return restarts_; }

  std::optional<std::uint32_t> newest() const noexcept;
  std::uint64_t received_fresh() const noexcept { return received_fresh_; }
  std::uint64_t lost() const noexcept { return lost_; }
  std::uint64_t duplicates() const noexcept { return duplicates_; }
  std::uint64_t out_of_order() const noexcept { return out_of_order_; }

 private:
  bool started_ = false;
  std::uint32_t newest_ = 0;
  std::uint64_t received_fresh_ = 0;
  std::uint64_t lost_ = 0;
  std::uint64_t duplicates_ = 0;
  std::uint64_t out_of_order_ = 0;
  std::uint64_t restarts_ = 0;
};

}  // namespace cosim::drivers
