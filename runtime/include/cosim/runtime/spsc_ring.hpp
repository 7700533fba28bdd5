#pragma once
// Lock-free bounded single-producer single-consumer ring for trivially copyable values.
// Exactly one thread may call the producer functions (try_push, push) and exactly one
// thread the consumer functions (try_pop, front, pop) at any time; handing a side over
// to another thread needs external synchronisation (e.g. a thread join).
//
// Indices are free-running counters (slot = index & mask) so the full capacity is usable
// and full/empty need no extra flag. Each side keeps a private copy of the other side's
// index and re-reads the shared one only when that copy says full/empty, so in steady
// state each side touches the other's cache line once per wrap instead of once per item.
#include <atomic>
#include <bit>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <new>
#include <stdexcept>
#include <type_traits>

#include "cosim/runtime/hardware.hpp"

namespace cosim {

template <class T>
requires std::is_trivially_copyable_v<T> && std::is_default_constructible_v<T>
class spsc_ring {
 public:
  using value_type = T;

  /// capacity must be a power of two (>= 1). All storage is allocated and touched here,
  /// so neither side allocates nor page-faults later.
  explicit spsc_ring(std::size_t capacity) : slots_(allocate(capacity)), mask_(capacity - 1) {
    // The class is complete inside member bodies, so the layout can be checked here.
    static_assert(std::is_standard_layout_v<spsc_ring>, "offsetof below needs standard layout");
    static_assert(sizeof(producer_line) == cache_line_size &&
                  alignof(producer_line) == cache_line_size);
    static_assert(sizeof(consumer_line) == cache_line_size &&
                  alignof(consumer_line) == cache_line_size);
    static_assert(offsetof(spsc_ring, producer_) % cache_line_size == 0);
    static_assert(offsetof(spsc_ring, consumer_) % cache_line_size == 0);
    static_assert(line_of(offsetof(spsc_ring, producer_)) >
                      line_of(offsetof(spsc_ring, mask_) + sizeof(mask_) - 1),
                  "read-only fields must not share the producer's line");
    static_assert(line_of(offsetof(spsc_ring, consumer_)) >
                      line_of(offsetof(spsc_ring, producer_) + sizeof(producer_) - 1),
                  "producer and consumer indices must be on different lines");
    static_assert(sizeof(spsc_ring) == 3 * cache_line_size, "read-only, producer, consumer");
  }

  spsc_ring(const spsc_ring&) = delete;
  spsc_ring& operator=(const spsc_ring&) = delete;
  spsc_ring(spsc_ring&&) = delete;
  spsc_ring& operator=(spsc_ring&&) = delete;

  ~spsc_ring() { ::operator delete (slots_, std::align_val_t{storage_alignment}); }

  // ---- producer side ----

  /// Copies value into the ring; false (and nothing written) if the ring is full.
  bool try_push(const T& value) noexcept {
    // relaxed: only this thread writes tail, so it always sees its own latest store.
    const std::size_t tail = producer_.tail.load(std::memory_order_relaxed);
    if (tail - producer_.head_cache == capacity()) {
      // acquire: the consumer's reads of the slot we are about to reuse happen before our write.
      producer_.head_cache = consumer_.head.load(std::memory_order_acquire);
      if (tail - producer_.head_cache == capacity()) return false;
    }
    slot(tail) = value;
    // release: the slot contents become visible no later than the new tail.
    producer_.tail.store(tail + 1, std::memory_order_release);
    return true;
  }

  /// Like try_push, but a full ring counts the rejected value in drops(): the policy
  /// for producers that must never wait and whose loss must be visible.
  bool push(const T& value) noexcept {
    if (try_push(value)) return true;
    // relaxed load+store instead of fetch_add: single writer, so no locked RMW needed;
    // readers only need an eventually visible count.
    producer_.drops.store(producer_.drops.load(std::memory_order_relaxed) + 1,
                          std::memory_order_relaxed);
    return false;
  }

  // ---- consumer side ----

  /// Copies the oldest value out; false if the ring is empty.
  bool try_pop(T& out) noexcept {
    const T* item = front();
    if (item == nullptr) return false;
    out = *item;
    pop();
    return true;
  }

  /// Oldest value in place (no copy) or nullptr if empty. Stays valid until pop().
  [[nodiscard]] const T* front() noexcept {
    // relaxed: only this thread writes head.
    const std::size_t head = consumer_.head.load(std::memory_order_relaxed);
    if (head == consumer_.tail_cache) {
      // acquire: pairs with the producer's release of tail, making the slot contents visible.
      consumer_.tail_cache = producer_.tail.load(std::memory_order_acquire);
      if (head == consumer_.tail_cache) return nullptr;
    }
    return &slot(head);
  }

  /// Releases the slot returned by the last non-null front(). Precondition: that call.
  void pop() noexcept {
    // relaxed: only this thread writes head.
    const std::size_t head = consumer_.head.load(std::memory_order_relaxed);
    assert(head != consumer_.tail_cache && "pop() without a successful front()");
    // release: our reads of the slot complete before the producer can see it free.
    consumer_.head.store(head + 1, std::memory_order_release);
  }

  // ---- either side / observers ----

  /// Number of stored values; exact only when both sides are quiescent.
  [[nodiscard]] std::size_t size_approx() const noexcept {
    // acquire: synchronises with the consumer's release of head, so the tail read below is
    // at least the tail the consumer had seen, which keeps tail - head from going negative.
    const std::size_t head = consumer_.head.load(std::memory_order_acquire);
    // relaxed: any tail at least as new as the one above gives a usable estimate.
    const std::size_t tail = producer_.tail.load(std::memory_order_relaxed);
    const std::size_t n = tail - head;
    return n < capacity() ? n : capacity();
  }

  [[nodiscard]] std::size_t capacity() const noexcept { return mask_ + 1; }

  /// Values rejected by push() because the ring was full.
  [[nodiscard]] std::uint64_t drops() const noexcept {
    // relaxed: a statistic; no other data is published through it.
    return producer_.drops.load(std::memory_order_relaxed);
  }

 private:
  T& slot(std::size_t index) const noexcept {
    // Never null after construction; saying so lets static analysis drop impossible paths
    // and costs nothing at run time.
    if (slots_ == nullptr) __builtin_unreachable();
    return slots_[index & mask_];
  }

  static constexpr std::size_t line_of(std::size_t offset) { return offset / cache_line_size; }

  static constexpr std::size_t storage_alignment = alignof(T) > cache_line_size ? alignof(T)
                                                                                : cache_line_size;

  static T* allocate(std::size_t capacity) {
    if (capacity == 0 || !std::has_single_bit(capacity)) {
      throw std::invalid_argument("spsc_ring capacity must be a power of two");
    }
    if (capacity > std::numeric_limits<std::size_t>::max() / sizeof(T)) {
      throw std::length_error("spsc_ring capacity too large");
    }
    // Line-aligned so the first slot does not share a line with unrelated heap data.
    void* raw = ::operator new (capacity * sizeof(T), std::align_val_t{storage_alignment});
    T* slots = static_cast<T*>(raw);
    try {
      // Value-initialisation writes every slot, which also pre-faults the pages.
      std::uninitialized_value_construct_n(slots, capacity);
    } catch (...) {
      ::operator delete (raw, std::align_val_t{storage_alignment});
      throw;
    }
    return slots;
  }

  // Written by the producer on every push; read by the consumer only on apparent empty.
  struct alignas(cache_line_size) producer_line {
    std::atomic<std::size_t> tail{0};     // next index to write
    std::size_t head_cache = 0;           // producer's private, possibly stale, copy of head
    std::atomic<std::uint64_t> drops{0};  // values rejected by push()
  };
  // Written by the consumer on every pop; read by the producer only on apparent full.
  struct alignas(cache_line_size) consumer_line {
    std::atomic<std::size_t> head{0};  // next index to read
    std::size_t tail_cache = 0;        // consumer's private, possibly stale, copy of tail
  };

  // Read-only after construction: shared by both sides without ever being invalidated.
  alignas(cache_line_size) T* const slots_;
  const std::size_t mask_;
  producer_line producer_;
  consumer_line consumer_;
};

}  // namespace cosim
