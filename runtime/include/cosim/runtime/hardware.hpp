#pragma once
// Hardware facts shared by the lock-free primitives: the cache-line size used to keep
// independently written data apart, and a spin-wait hint.
#include <cstddef>

namespace cosim {

/// Fixed instead of std::hardware_destructive_interference_size: GCC warns when that
/// constant is used in headers because its value may differ between translation units.
inline constexpr std::size_t cache_line_size = 64;

/// Tells the CPU we are spinning so it can yield pipeline resources to the other
/// hyper-thread and avoid the memory-order mis-speculation penalty on loop exit.
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
  asm volatile("yield" ::: "memory");
#endif
}

}  // namespace cosim
