#include "first_order_lag.hpp"

#include <cmath>
#include <memory>

namespace my_models {

namespace {

class first_order_lag final : public cosim::subsystem {
 public:
  first_order_lag(const std::string& name, double tau, double gain, double y0, bool exact)
      : cosim::subsystem(name), tau_(tau), gain_(gain), y0_(y0), exact_(exact) {
    u_ = add_input({"u", "1"});
    y_out_ = add_output({"y", "1"});
    add_variable("y", "1", &y_);
  }

 private:
  void do_initialize(cosim::time_point /*t0*/) override {
    y_ = y0_;
    decay_h_ = cosim::duration{-1};
  }
  // Real-time path: no allocation, no exception, no blocking.
  bool do_step(cosim::time_point t, cosim::duration h) noexcept override {
    const double u = in(u_, t);
    if (exact_) {
      if (h != decay_h_) {  // exp() once per step size, not per step
        decay_h_ = h;
        decay_ = std::exp(-cosim::to_seconds(h) / tau_);
      }
      y_ = decay_ * y_ + (1.0 - decay_) * gain_ * u;
    } else {
      y_ += cosim::to_seconds(h) / tau_ * (gain_ * u - y_);
    }
    return std::isfinite(y_);
  }
  void do_update_outputs(cosim::time_point /*t*/) noexcept override { set_output(y_out_, y_); }
  // Save and restore for iterative coupling (run.iterations).
  bool do_can_save_state() const noexcept override { return true; }
  bool do_save_state() noexcept override {
    saved_ = y_;
    return true;
  }
  bool do_restore_state() noexcept override {
    y_ = saved_;
    return true;
  }

  double tau_, gain_, y0_;
  bool exact_;
  std::size_t u_ = 0, y_out_ = 0;
  double y_ = 0.0, saved_ = 0.0;
  cosim::duration decay_h_{-1};
  double decay_ = 0.0;
};

cosim::config::param_decl real(std::string name, std::string unit, double def, double min,
                               bool min_exclusive, std::string doc) {
  cosim::config::param_decl d;
  d.name = std::move(name);
  d.kind = cosim::config::param_kind::real;
  d.unit = std::move(unit);
  d.def = def;
  d.min = min;
  d.min_exclusive = min_exclusive;
  d.doc = std::move(doc);
  return d;
}

}  // namespace

cosim::config::subsystem_type first_order_lag_type() {
  cosim::config::subsystem_type t;
  t.name = "my.first_order_lag";
  t.description = "first-order lag tau y' + y = K u (examples/my_models); input u, output y";
  const double inf = std::numeric_limits<double>::infinity();
  t.parameters = {real("tau", "s", 1.0, 0.0, true, "time constant"),
                  real("K", "1", 1.0, -inf, false, "static gain"),
                  real("y0", "1", 0.0, -inf, false, "initial output")};
  t.integrators = {"exact", "euler"};
  t.default_step = [](double H, const cosim::config::param_set& /*p*/) { return H; };
  t.create = [](const std::string& name, const cosim::config::param_set& p,
                const std::string& integrator) -> std::unique_ptr<cosim::subsystem> {
    return std::make_unique<first_order_lag>(
        name, cosim::config::real_param(p, "tau"), cosim::config::real_param(p, "K"),
        cosim::config::real_param(p, "y0"), integrator == "exact");
  };
  return t;
}

}  // namespace my_models
