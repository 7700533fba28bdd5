// crane_multibody.fmu: the built-in crane multibody subsystem (cosim::crane::crane_multibody,
// 003 Eqs. (1)-(7)) behind the FMI 2.0 co-simulation interface. Each doStep feeds the
// inputs set by the importer into the subsystem's input ports (held over the step, as the
// executor's zero-order hold), takes its internal steps and publishes s, sd and the angles;
// the arithmetic is the subsystem's own, so the FMU reproduces the built-in type
// crane.multibody bit for bit when driven the same way. FMU state (canGetAndSetFMUstate):
// the variable table, the subsystem's state and the clock.
#include <memory>
#include <string>

#include "cosim/subsystems/crane_subsystems.hpp"
#include "crane_fmu_model.hpp"

namespace {

using namespace cosim::crane_fmu;
namespace crane = cosim::crane;
using cosim::fmu_kit::step_outcome;

class multibody_fmu final : public table_model {
 public:
  multibody_fmu() : table_model(multibody_variables()) {}

  bool initialize(double t0, std::string& why) override {
    if (!check_ranges(why)) return false;
    crane::mechanical_params mp;
    mp.L = r(mb::L);
    mp.Lh = r(mb::Lh);
    mp.m = r(mb::m);
    mp.mp = r(mb::mp);
    mp.mh = r(mb::mh);
    mp.xB = r(mb::xB);
    mp.yB = r(mb::yB);
    mp.g = r(mb::g);
    mp.theta1_0 = r(mb::theta1_0);
    mp.theta2_0 = r(mb::theta2_0);
    crane::hydraulic_params hp;  // only ap and c enter the multibody (p-s, 003 Eq. (8))
    hp.ap = r(mb::ap);
    hp.c = r(mb::c);
    crane::equilibrium start;  // the subsystem reads only the initial coupling inputs
    start.fh = r(mb::fh0);
    start.p1 = r(mb::p1_0);
    start.p2 = r(mb::p2_0);
    // Inputs the importer has not set hold the start parameters, as the built-in type's
    // initial inputs.
    if (!was_set(mb::fh)) r(mb::fh) = start.fh;
    if (!was_set(mb::p1)) r(mb::p1) = start.p1;
    if (!was_set(mb::p2)) r(mb::p2) = start.p2;
    fs_ = n(mb::coupling) == 1;
    sub_ = std::make_unique<crane::crane_multibody>(
        "multibody", mp, hp,
        fs_ ? crane::coupling::force_displacement : crane::coupling::pressure_displacement,
        n(mb::integrator) == 1 ? crane::multibody_integrator::semi_implicit_euler
                               : crane::multibody_integrator::trapezoidal,
        start);
    now_ = cosim::at_seconds(t0);
    sub_->initialize(now_);
    feed(now_);
    sub_->update_outputs(now_);
    publish();
    return true;
  }

  step_outcome step(double t, double t_end, bool /*stop_at_events*/) noexcept override {
    step_outcome o;
    cosim::duration h{};
    std::int64_t k = 0;
    if (!internal_steps(t, t_end, r(mb::h_internal), h, k, o.message)) {
      o.what = step_outcome::kind::failed;
      return o;
    }
    const cosim::time_point ta = cosim::at_seconds(t);
    feed(ta);
    const bool ok = sub_->steps(ta, h, k);
    now_ = ta + h * k;
    sub_->update_outputs(now_);
    publish();
    if (!ok) {
      o.what = step_outcome::kind::failed;
      o.message = "the multibody state became non-finite by t = " + std::to_string(t_end) + " s";
      return o;
    }
    o.reached = t_end;
    return o;
  }

  bool get_state(std::unique_ptr<cosim::fmu_kit::model_state>& s, std::string& why) const override {
    return save_crane(sub_.get(), now_, s, why);
  }
  bool set_state(const cosim::fmu_kit::model_state& s, std::string& why) override {
    if (!restore_crane(s, sub_.get(), now_, why)) return false;
    if (sub_) feed(now_, true);
    return true;
  }

 private:
  // The importer's input values as samples at ta, held over the step (fresh: the only
  // samples, after a rollback).
  void feed(cosim::time_point ta, bool fresh = false) noexcept {
    auto put = [&](std::size_t port, double v) {
      if (fresh)
        sub_->input(port).set_initial(ta, v);
      else
        sub_->input(port).receive(ta, v);
    };
    if (fs_) {
      put(crane::crane_multibody::in_fh, r(mb::fh));
    } else {
      put(crane::crane_multibody::in_p1, r(mb::p1));
      put(crane::crane_multibody::in_p2, r(mb::p2));
    }
  }

  void publish() noexcept {
    r(mb::s) = sub_->output(crane::crane_multibody::out_s);
    r(mb::sd) = sub_->output(crane::crane_multibody::out_sd);
    r(mb::theta1) = sub_->q()[0];
    r(mb::theta2) = sub_->q()[1];
    r(mb::theta1d) = sub_->qd()[0];
    r(mb::theta2d) = sub_->qd()[1];
  }

  std::unique_ptr<crane::crane_multibody> sub_;
  bool fs_ = true;
  cosim::time_point now_{};
};

}  // namespace

namespace cosim::fmu_kit {
std::unique_ptr<model> make_model() {
  return std::make_unique<multibody_fmu>();
}
const char* const model_token = cosim::crane_fmu::multibody_token;
}  // namespace cosim::fmu_kit
