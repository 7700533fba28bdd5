#pragma once
// Latest-value slot for one writer thread and one reader thread where only the newest
// value matters (set-points, the last coupling sample of a slower partner).
//
// A triple buffer rather than a seqlock: both sides are wait-free. With a seqlock a
// reader that preempts a half-finished writer on the same CPU (SCHED_FIFO reader, lower
// priority writer) would spin forever; here each side owns one buffer, and they swap
// buffers through a single atomic "middle" index, so neither ever waits or retries.
// The payload is copied with plain loads/stores; the acq_rel exchange orders them, so
// ThreadSanitizer sees the happens-before edge directly.
#include <array>
#include <atomic>
#include <cstdint>
#include <type_traits>

#include "cosim/runtime/hardware.hpp"

namespace cosim {

template <class T>
requires std::is_trivially_copyable_v<T> && std::is_default_constructible_v<T>
class latest_value {
 public:
  latest_value() = default;
  latest_value(const latest_value&) = delete;
  latest_value& operator=(const latest_value&) = delete;
  latest_value(latest_value&&) = delete;
  latest_value& operator=(latest_value&&) = delete;
  ~latest_value() = default;

  // ---- writer side ----

  /// Publishes value as the newest one; never blocks. Versions count writes from 1.
  void write(const T& value) noexcept {
    slot& s = slots_[writer_.back];
    s.value = value;
    s.version = ++writer_.written;
    // acq_rel: release publishes the slot just filled; acquire orders the reader's last
    // reads of the slot we get back before we overwrite it on the next write.
    writer_.back =
        middle_.exchange(writer_.back | fresh_bit, std::memory_order_acq_rel) & index_mask;
  }

  /// Number of write() calls so far (writer thread only).
  [[nodiscard]] std::uint64_t writes() const noexcept { return writer_.written; }

  // ---- reader side ----

  /// Copies the newest value into out and returns its version (0 = never written, out
  /// then holds a value-initialised T).
  std::uint64_t read(T& out) noexcept {
    refresh();
    const slot& s = slots_[reader_.front];
    out = s.value;
    return s.version;
  }

  /// Copies the newest value only if it is newer than version, updating version.
  bool read_if_newer(T& out, std::uint64_t& version) noexcept {
    refresh();
    const slot& s = slots_[reader_.front];
    if (s.version <= version) return false;
    out = s.value;
    version = s.version;
    return true;
  }

  /// True if a write happened since the reader last took a buffer (a hint).
  [[nodiscard]] bool has_new() const noexcept {
    // relaxed: a hint only; the data is acquired by the exchange in refresh().
    return (middle_.load(std::memory_order_relaxed) & fresh_bit) != 0;
  }

 private:
  static constexpr std::uint32_t index_mask = 0x3;
  static constexpr std::uint32_t fresh_bit = 0x4;  // middle holds a buffer not yet read

  void refresh() noexcept {
    if (!has_new()) return;
    // acq_rel: acquire makes the writer's payload visible; release hands our finished
    // reads of the old front buffer to the writer before it may refill it.
    reader_.front = middle_.exchange(reader_.front, std::memory_order_acq_rel) & index_mask;
  }

  struct alignas(cache_line_size) slot {
    T value{};
    std::uint64_t version = 0;
  };
  struct alignas(cache_line_size) writer_line {
    std::uint32_t back = 0;     // buffer the writer fills next
    std::uint64_t written = 0;  // version of the last write
  };
  struct alignas(cache_line_size) reader_line {
    std::uint32_t front = 2;  // buffer the reader owns
  };

  std::array<slot, 3> slots_{};
  writer_line writer_{};
  // The only location both sides write; on its own line so it does not drag the
  // private lines along.
  alignas(cache_line_size) std::atomic<std::uint32_t> middle_{1};
  reader_line reader_{};

  static_assert(sizeof(slot) % cache_line_size == 0, "slots must not share lines");
  static_assert(sizeof(writer_line) == cache_line_size && sizeof(reader_line) == cache_line_size);
  static_assert(std::atomic<std::uint32_t>::is_always_lock_free);
};

}  // namespace cosim
