#pragma once
// The subsystems' run hooks (subsystem::start / stop) around one run, shared by every
// executor: started in order, and stopped on every exit path, fail-safe unless the run
// completed.
#include <cstddef>

#include "cosim/runtime/system.hpp"

namespace cosim::detail {

class started_subsystems {
 public:
  /// Starts every subsystem; if one throws, those already started are stopped fail-safe.
  started_subsystems(system& sys, stop_source& stop) : sys_(sys) {
    try {
      for (; started_ < sys_.size(); ++started_) sys_.at(started_).start(stop);
    } catch (...) {
      finish(false);
      throw;
    }
  }
  started_subsystems(const started_subsystems&) = delete;
  started_subsystems& operator=(const started_subsystems&) = delete;
  /// An exception left the run: fail-safe.
  ~started_subsystems() { finish(false); }

  /// Stops every started subsystem once; fail-safe unless `completed`.
  void finish(bool completed) noexcept {
    for (std::size_t i = 0; i < started_; ++i) sys_.at(i).stop(!completed);
    started_ = 0;
  }

 private:
  system& sys_;
  std::size_t started_ = 0;
};

}  // namespace cosim::detail
