#pragma once
// std::strerror may return a buffer shared by all threads (glibc marks it MT-Unsafe), and
// setup code that reports OS errors runs while other threads already exist.
#include <string.h>  // strerror_r (the GNU variant, which g++ and clang++ select on glibc)
#include <string>

namespace cosim {

/// The message for an errno value, the text std::strerror gives, without shared state.
inline std::string errno_text(int e) {
  char buf[256];
  // GNU strerror_r returns either buf or a static immutable string, never nullptr.
  return ::strerror_r(e, buf, sizeof buf);
}

}  // namespace cosim
