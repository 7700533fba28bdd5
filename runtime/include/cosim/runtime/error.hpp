#pragma once
// Errors by phase: setup and configuration throw cosim::error; the real-time path is
// noexcept and reports through return values.
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace cosim {

enum class errc {
  config_syntax,
  config_key,
  config_value,
  model,
  io,
  runtime,
};

class error : public std::runtime_error {
 public:
  error(errc code, const std::string& message) : std::runtime_error(message), code_(code) {}
  [[nodiscard]] errc code() const noexcept { return code_; }

 private:
  errc code_;
};

}  // namespace cosim

/// Broken internal invariant: always on, aborts. Never for user input.
#define COSIM_DEMAND(cond)                                                                    \
  do {                                                                                        \
    if (!(cond)) {                                                                            \
      std::fprintf(stderr, "cosim: internal invariant failed: %s (%s:%d)\n", #cond, __FILE__, \
                   __LINE__);                                                                 \
      std::abort();                                                                           \
    }                                                                                         \
  } while (false)

/// Bad user input: throws cosim::error with the given message.
#define COSIM_INPUT_CHECK(cond, code, message)        \
  do {                                                \
    if (!(cond)) throw ::cosim::error(code, message); \
  } while (false)
