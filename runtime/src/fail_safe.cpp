#include "cosim/runtime/fail_safe.hpp"

#include <array>
#include <atomic>

namespace cosim::fail_safe {

namespace {

// A slot is taken by storing ctx first (claiming it), then the action; trip_all reads the
// action, then ctx, and skips a slot whose ctx changed meanwhile.
struct slot {
  std::atomic<void*> ctx{nullptr};
  std::atomic<action> fn{nullptr};
};
static_assert(std::atomic<void*>::is_always_lock_free && std::atomic<action>::is_always_lock_free,
              "fail-safe actions run in signal handlers");

std::array<slot, capacity> g_slots{};

}  // namespace

bool add(action a, void* ctx) noexcept {
  if (a == nullptr || ctx == nullptr) return false;
  for (slot& s : g_slots) {
    void* expected = nullptr;
    if (s.ctx.compare_exchange_strong(expected, ctx, std::memory_order_acq_rel)) {
      s.fn.store(a, std::memory_order_release);
      return true;
    }
  }
  return false;
}

void remove(void* ctx) noexcept {
  for (slot& s : g_slots) {
    if (s.ctx.load(std::memory_order_acquire) != ctx) continue;
    s.fn.store(nullptr, std::memory_order_release);
    s.ctx.store(nullptr, std::memory_order_release);
  }
}

void trip_all() noexcept {
  for (slot& s : g_slots) {
    const action a = s.fn.load(std::memory_order_acquire);
    void* const ctx = s.ctx.load(std::memory_order_acquire);
    if (a != nullptr && ctx != nullptr) a(ctx);
  }
}

}  // namespace cosim::fail_safe
