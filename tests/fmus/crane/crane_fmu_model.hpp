#pragma once
// What the two crane FMUs share: variable storage laid out by value reference from their
// table (crane_fmu_variables.hpp), range checks naming the parameter, which inputs the
// importer has set, and the conversion of FMI times (seconds) to the cosim clock the wrapped
// subsystems run on (integer nanoseconds; a communication point the importer computed from
// that clock converts back exactly).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cosim/runtime/time.hpp"
#include "crane_fmu_variables.hpp"
#include "fmu_model.hpp"

namespace cosim::crane_fmu {

class table_model : public fmu_kit::model {
 protected:
  explicit table_model(std::vector<var_spec> vars)
      : specs_(std::move(vars)),
        reals_(specs_.size(), 0.0),
        ints_(specs_.size(), 0),
        set_(specs_.size(), false) {
    for (const var_spec& v : specs_) {
      reals_[v.vr] = v.start;
      ints_[v.vr] = static_cast<std::int32_t>(v.start);
      const fmu_kit::causality c = v.causal == causality::parameter ? fmu_kit::causality::parameter
                                   : v.causal == causality::input   ? fmu_kit::causality::input
                                   : v.causal == causality::output  ? fmu_kit::causality::output
                                                                    : fmu_kit::causality::local;
      if (v.type == kind::integer)
        add(v.vr, c, &ints_[v.vr]);
      else
        add(v.vr, c, &reals_[v.vr]);
    }
  }

  [[nodiscard]] double& r(std::uint32_t vr) noexcept { return reals_[vr]; }
  [[nodiscard]] double r(std::uint32_t vr) const noexcept { return reals_[vr]; }
  [[nodiscard]] std::int32_t n(std::uint32_t vr) const noexcept { return ints_[vr]; }
  /// The importer set input vr.
  [[nodiscard]] bool was_set(std::uint32_t vr) const noexcept { return set_[vr]; }

  void on_set(std::uint32_t vr) noexcept override {
    if (vr < set_.size()) set_[vr] = true;
  }

  /// The table's values (parameters, inputs, outputs, which inputs were set): the part of
  /// the FMU state the table holds.
  struct table_values {
    std::vector<double> reals;
    std::vector<std::int32_t> ints;
    std::vector<bool> set;
  };
  void save_table(table_values& t) const {
    t.reals = reals_;
    t.ints = ints_;
    t.set = set_;
  }
  /// Copied element by element: the variables point into reals_ and ints_.
  void restore_table(const table_values& t) noexcept {
    std::copy(t.reals.begin(), t.reals.end(), reals_.begin());
    std::copy(t.ints.begin(), t.ints.end(), ints_.begin());
    std::copy(t.set.begin(), t.set.end(), set_.begin());
  }

  /// FMU state of a crane FMU wrapping subsystem type Sub: the table, the subsystem's
  /// state (Sub::snapshot) and the model's clock.
  template <typename Sub>
  struct crane_state {
    table_values table;
    bool initialized = false;
    typename Sub::state_type sub{};
    time_point now{};
  };
  template <typename Sub>
  bool save_crane(const Sub* sub, time_point now, std::unique_ptr<fmu_kit::model_state>& s,
                  std::string& why) const {
    if (!s) s = std::make_unique<fmu_kit::state_copy<crane_state<Sub>>>();
    auto* c = dynamic_cast<fmu_kit::state_copy<crane_state<Sub>>*>(s.get());
    if (c == nullptr) {
      why = "the state was made by another model";
      return false;
    }
    save_table(c->value.table);
    c->value.initialized = sub != nullptr;
    if (sub != nullptr) c->value.sub = sub->snapshot();
    c->value.now = now;
    return true;
  }
  /// The wrapped subsystem's input ports are reset to the restored inputs at `now` by the
  /// caller (their sample history belongs to the abandoned future).
  template <typename Sub>
  bool restore_crane(const fmu_kit::model_state& s, Sub* sub, time_point& now,
                     std::string& why) noexcept {
    const auto* c = dynamic_cast<const fmu_kit::state_copy<crane_state<Sub>>*>(&s);
    if (c == nullptr) {
      why = "the state was made by another model";
      return false;
    }
    if (c->value.initialized != (sub != nullptr)) {
      why = "a state saved before initialisation cannot be restored after it, nor the reverse";
      return false;
    }
    restore_table(c->value.table);
    if (sub != nullptr) sub->set_snapshot(c->value.sub);
    now = c->value.now;
    return true;
  }

  /// Every parameter finite and within its declared range; else `why` names it.
  [[nodiscard]] bool check_ranges(std::string& why) const {
    for (const var_spec& v : specs_) {
      if (v.causal != causality::parameter) continue;
      const double x = v.type == kind::integer ? ints_[v.vr] : reals_[v.vr];
      if (std::isfinite(x) && x >= v.min && x <= v.max) continue;
      why = std::string("parameter ") + v.name + " = " + std::to_string(x) + " is outside [" +
            std::to_string(v.min) + ", " + std::to_string(v.max) + "]";
      return false;
    }
    return true;
  }

  /// Internal step and count for a communication step [t, t_end]: h_internal (0: the whole
  /// step). False with `why` when h_internal does not divide the step.
  [[nodiscard]] bool internal_steps(double t, double t_end, double h_internal, duration& h,
                                    std::int64_t& k, std::string& why) const {
    const duration H = to_duration(t_end - t);
    h = h_internal > 0.0 ? to_duration(h_internal) : H;
    if (h.count() <= 0 || H.count() % h.count() != 0) {
      why = "h_internal = " + std::to_string(h_internal) +
            " s does not divide the communication step " + std::to_string(t_end - t) + " s";
      return false;
    }
    k = H.count() / h.count();
    return true;
  }

 private:
  std::vector<var_spec> specs_;
  std::vector<double> reals_;
  std::vector<std::int32_t> ints_;
  std::vector<bool> set_;
};

}  // namespace cosim::crane_fmu
