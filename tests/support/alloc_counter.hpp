#pragma once
// Test probes for "the RT path allocates nothing and takes no page faults".
//
// Allocation counting replaces the global operator new/delete. A test executable must
// contain those replacements exactly once, so exactly one .cpp per executable does
//   #define COSIM_DEFINE_ALLOC_COUNTER
//   #include "alloc_counter.hpp"
// (in runtime_tests that is tests/runtime/alloc_guard_test.cpp); every other file just
// includes the header. Only operator new is seen; direct malloc calls are not counted.
#include <sys/resource.h>

#include <cstdint>

namespace cosim::test {

/// operator new calls made by the calling thread since it started.
std::uint64_t alloc_count_this_thread() noexcept;
/// operator new calls made by all threads since the program started.
std::uint64_t alloc_count_global() noexcept;

/// Counts the calling thread's allocations from construction on.
class alloc_window {
 public:
  alloc_window() noexcept : start_(alloc_count_this_thread()) {}
  [[nodiscard]] std::uint64_t allocations() const noexcept {
    return alloc_count_this_thread() - start_;
  }

 private:
  std::uint64_t start_;
};

/// Minor page faults of the calling thread so far (getrusage RUSAGE_THREAD).
inline long minor_faults_this_thread() noexcept {
  rusage usage{};
  if (getrusage(RUSAGE_THREAD, &usage) != 0) return -1;
  return usage.ru_minflt;
}

}  // namespace cosim::test

#ifdef COSIM_DEFINE_ALLOC_COUNTER

#include <atomic>
#include <cstdlib>
#include <new>

namespace cosim::test {
namespace alloc_counter_detail {

// Constant-initialised, so touching them from operator new needs no TLS initialiser.
inline thread_local std::uint64_t thread_count = 0;
// relaxed everywhere: a pure statistic, read after the threads of interest joined.
inline std::atomic<std::uint64_t> global_count{0};

inline void note() noexcept {
  ++thread_count;
  global_count.fetch_add(1, std::memory_order_relaxed);
}

inline void* allocate(std::size_t size) noexcept {
  note();
  return std::malloc(size == 0 ? 1 : size);
}

inline void* allocate_aligned(std::size_t size, std::size_t alignment) noexcept {
  note();
  if (alignment < sizeof(void*)) alignment = sizeof(void*);
  void* p = nullptr;
  return posix_memalign(&p, alignment, size == 0 ? 1 : size) == 0 ? p : nullptr;
}

// Out of line so GCC cannot pair an inlined free() with an operator new call at the call
// site and warn about mismatched new/delete (the pair is consistent: malloc/free).
[[gnu::noinline]] inline void deallocate(void* p) noexcept {
  std::free(p);
}

}  // namespace alloc_counter_detail

std::uint64_t alloc_count_this_thread() noexcept {
  return alloc_counter_detail::thread_count;
}
std::uint64_t alloc_count_global() noexcept {
  return alloc_counter_detail::global_count.load(std::memory_order_relaxed);
}

}  // namespace cosim::test

void* operator new(std::size_t size) {
  if (void* p = cosim::test::alloc_counter_detail::allocate(size)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) {
  if (void* p = cosim::test::alloc_counter_detail::allocate(size)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  return cosim::test::alloc_counter_detail::allocate(size);
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  return cosim::test::alloc_counter_detail::allocate(size);
}
void* operator new(std::size_t size, std::align_val_t al) {
  if (void* p =
          cosim::test::alloc_counter_detail::allocate_aligned(size, static_cast<std::size_t>(al)))
    return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size, std::align_val_t al) {
  if (void* p =
          cosim::test::alloc_counter_detail::allocate_aligned(size, static_cast<std::size_t>(al)))
    return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t size, std::align_val_t al, const std::nothrow_t&) noexcept {
  return cosim::test::alloc_counter_detail::allocate_aligned(size, static_cast<std::size_t>(al));
}
void* operator new[](std::size_t size, std::align_val_t al, const std::nothrow_t&) noexcept {
  return cosim::test::alloc_counter_detail::allocate_aligned(size, static_cast<std::size_t>(al));
}

// All forms free with std::free (via deallocate), matching malloc/posix_memalign above.
void operator delete(void* p) noexcept {
  cosim::test::alloc_counter_detail::deallocate(p);
}
void operator delete[](void* p) noexcept {
  cosim::test::alloc_counter_detail::deallocate(p);
}
void operator delete(void* p, std::size_t) noexcept {
  cosim::test::alloc_counter_detail::deallocate(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  cosim::test::alloc_counter_detail::deallocate(p);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
  cosim::test::alloc_counter_detail::deallocate(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
  cosim::test::alloc_counter_detail::deallocate(p);
}
void operator delete(void* p, std::align_val_t) noexcept {
  cosim::test::alloc_counter_detail::deallocate(p);
}
void operator delete[](void* p, std::align_val_t) noexcept {
  cosim::test::alloc_counter_detail::deallocate(p);
}
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
  cosim::test::alloc_counter_detail::deallocate(p);
}
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept {
  cosim::test::alloc_counter_detail::deallocate(p);
}
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  cosim::test::alloc_counter_detail::deallocate(p);
}
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  cosim::test::alloc_counter_detail::deallocate(p);
}

#endif  // COSIM_DEFINE_ALLOC_COUNTER
