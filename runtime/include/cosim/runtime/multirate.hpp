#pragma once
// Multirate interface options of one subsystem (004 Sect. 2) and the little state that
// scheme::advance / scheme::deliver keep for them.
//
//  - smoothing (004 Sect. 2.2): the subsystem's outputs are evaluated after every internal
//    step and the consumers receive their average over the communication interval instead
//    of the value at its end. Meant for a fast producer feeding a slow consumer.
//  - non_matching (004 Sect. 2.1, "non-equidistant, non-synchronised grids"): the internal
//    step h need not divide the communication step H. The subsystem keeps its own grid
//    t0 + j h and, in the macro step [t_n, t_n + H], steps to the last own grid point
//    <= t_n + H; its outputs are evaluated there and delivered stamped with that time, so
//    consumers interpolate/extrapolate from the true sample times. Its inputs are
//    evaluated at its own grid times by the input ports' polynomials. h may exceed H (then
//    some macro steps take no step and re-deliver the last sample).
//  - ahead (with non_matching; 004 Sect. 2.1 slowest-first with fast-step delivery): the
//    subsystem instead steps on until its own grid reaches or passes t_n + H, so it runs
//    ahead of the others by up to one own step and they interpolate its samples. Without
//    it a non-matching subsystem stays behind (fastest-first).
//    validate_plan requires step_size() to divide H; a non-matching subsystem therefore
//    reports step_size() = H (its communication step) and keeps h as own_step().
//
// Configured once before the run (configure allocates); at run time only the thread that
// advances the subsystem touches it.
#include <algorithm>
#include <cstddef>
#include <vector>

#include "cosim/runtime/time.hpp"

namespace cosim {

struct multirate_options {
  bool smoothing = false;
  bool non_matching = false;
  bool ahead = false;  // non-matching only: step past t_n + H (slowest-first)
};

/// A copy of a multirate_state's run-time part (own grid time, interval average), for
/// rolling a subsystem back (subsystem::save_state). Sized by multirate_state::prepare.
struct multirate_snapshot {
  time_point own_time{};
  bool has_average = false;
  std::vector<double> average;
};

class multirate_state {
 public:
  void configure(const multirate_options& o, duration own_step, std::size_t outputs) {
    options_ = o;
    own_step_ = own_step;
    average_.assign(outputs, 0.0);
    has_average_ = false;
  }
  /// Start of a run: the own grid begins at t0 and no average exists yet.
  void reset(time_point t0) noexcept {
    own_time_ = t0;
    has_average_ = false;
  }

  [[nodiscard]] const multirate_options& options() const noexcept { return options_; }
  [[nodiscard]] bool active() const noexcept { return options_.smoothing || options_.non_matching; }
  [[nodiscard]] duration own_step() const noexcept { return own_step_; }
  /// Newest point of the own grid reached (non-matching subsystems).
  [[nodiscard]] time_point own_time() const noexcept { return own_time_; }
  void set_own_time(time_point t) noexcept { own_time_ = t; }

  [[nodiscard]] bool has_average() const noexcept { return has_average_; }
  [[nodiscard]] double average(std::size_t o) const noexcept { return average_[o]; }
  /// Scratch for the running sum; valid only while advance() accumulates.
  [[nodiscard]] std::vector<double>& average_buffer() noexcept { return average_; }
  void set_has_average(bool v) noexcept { has_average_ = v; }

  /// Sizes `s` for save() (setup only: allocates).
  void prepare(multirate_snapshot& s) const { s.average.assign(average_.size(), 0.0); }
  void save(multirate_snapshot& s) const noexcept {
    s.own_time = own_time_;
    s.has_average = has_average_;
    std::copy_n(average_.begin(), std::min(average_.size(), s.average.size()), s.average.begin());
  }
  void restore(const multirate_snapshot& s) noexcept {
    own_time_ = s.own_time;
    has_average_ = s.has_average;
    std::copy_n(s.average.begin(), std::min(average_.size(), s.average.size()), average_.begin());
  }

 private:
  multirate_options options_;
  duration own_step_{0};
  time_point own_time_{};
  std::vector<double> average_;
  bool has_average_ = false;
};

}  // namespace cosim
