// crane_hydraulics.fmu: the built-in hydraulic cylinder subsystem
// (cosim::crane::hydraulic_cylinder, 003 Eqs. (8)-(14)) behind the FMI 2.0 co-simulation
// interface. Each doStep feeds the importer's inputs (s, sd, kappa) into the subsystem's
// input ports, held over the step, and takes its internal steps; outputs fh (direct
// feedthrough of sd, 003 Eq. (8)), p1 and p2 are evaluated from the state and the inputs
// last set, as the subsystem's update_outputs does. With one internal step per doStep (the
// default experiment's 0.2 ms) and the importer setting kappa at every step, forward Euler
// reproduces the built-in type crane.hydraulics bit for bit; Heun reads kappa at the step's
// end, which the FMU only knows as the held value, so it matches only with kappa constant.
// FMU state (canGetAndSetFMUstate): the variable table, the subsystem's state and the clock.
#include <memory>
#include <string>

#include "cosim/subsystems/crane_subsystems.hpp"
#include "crane_fmu_model.hpp"

namespace {

using namespace cosim::crane_fmu;
namespace crane = cosim::crane;
using cosim::fmu_kit::step_outcome;

class hydraulics_fmu final : public table_model {
 public:
  hydraulics_fmu() : table_model(hydraulics_variables()) {}

  bool initialize(double t0, std::string& why) override {
    if (!check_ranges(why)) return false;
    crane::hydraulic_params hp;
    hp.ap = r(hy::ap);
    hp.l = r(hy::l);
    hp.c = r(hy::c);
    hp.cd = r(hy::cd);
    hp.rho = r(hy::rho);
    hp.pP = r(hy::pP);
    hp.pT = r(hy::pT);
    hp.a = r(hy::a);
    hp.b = r(hy::b);
    hp.valve_area = r(hy::valve_area);
    if (!(hp.pT < hp.pP)) {
      why = "tank pressure pT = " + std::to_string(hp.pT) +
            " Pa must be below the pump pressure pP = " + std::to_string(hp.pP) + " Pa";
      return false;
    }
    crane::equilibrium start;  // the subsystem reads s0, p1, p2, kappa0
    start.s0 = r(hy::s0);
    start.p1 = r(hy::p1_0);
    start.p2 = r(hy::p2_0);
    start.kappa0 = r(hy::kappa0);
    // Inputs the importer has not set hold the built-in type's initial inputs.
    if (!was_set(hy::s)) r(hy::s) = start.s0;
    if (!was_set(hy::sd)) r(hy::sd) = 0.0;
    if (!was_set(hy::kappa)) r(hy::kappa) = start.kappa0;
    sub_ = std::make_unique<crane::hydraulic_cylinder>(
        "hydraulics", hp,
        n(hy::coupling) == 1 ? crane::coupling::force_displacement
                             : crane::coupling::pressure_displacement,
        n(hy::integrator) == 1 ? crane::hydraulic_integrator::forward_euler
                               : crane::hydraulic_integrator::heun,
        start);
    for (const cosim::variable_desc& v : sub_->variables()) {
      if (v.name == "fh") fh_ = v.value;
      if (v.name == "kappa") kappa_ = v.value;
    }
    if (fh_ == nullptr || kappa_ == nullptr) {
      why = "the hydraulic subsystem has no variables fh and kappa";
      return false;
    }
    now_ = cosim::at_seconds(t0);
    sub_->initialize(now_);
    calculate();
    return true;
  }

  step_outcome step(double t, double t_end, bool /*stop_at_events*/) noexcept override {
    step_outcome o;
    cosim::duration h{};
    std::int64_t k = 0;
    if (!internal_steps(t, t_end, r(hy::h_internal), h, k, o.message)) {
      o.what = step_outcome::kind::failed;
      return o;
    }
    const cosim::time_point ta = cosim::at_seconds(t);
    feed(ta);
    const bool ok = sub_->steps(ta, h, k);
    now_ = ta + h * k;
    if (!ok) {
      o.what = step_outcome::kind::failed;
      o.message = "the pressures became non-finite by t = " + std::to_string(t_end) + " s";
      return o;
    }
    o.reached = t_end;
    return o;
  }

  // Outputs at the current time from the state and the inputs as last set (fh depends on
  // sd at the same time).
  void calculate() noexcept override {
    feed(now_);
    sub_->update_outputs(now_);
    r(hy::fh) = *fh_;
    r(hy::p1) = sub_->p1();
    r(hy::p2) = sub_->p2();
    r(hy::kappa_used) = *kappa_;
  }

  // providesDirectionalDerivative: d fh / d sd = -c (003 Eq. (8)); the pressures are states,
  // so no other output depends on an input at the same time.
  bool partial(std::uint32_t out, std::uint32_t in, double& value) const noexcept override {
    const bool output = out == hy::fh || out == hy::p1 || out == hy::p2;
    const bool input = in == hy::s || in == hy::sd || in == hy::kappa;
    if (!output || !input) return false;
    value = out == hy::fh && in == hy::sd ? -r(hy::c) : 0.0;
    return true;
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
  // The importer's input values as samples at t (fresh: the only samples, after a rollback).
  void feed(cosim::time_point t, bool fresh = false) noexcept {
    auto put = [&](std::size_t port, double v) {
      if (fresh)
        sub_->input(port).set_initial(t, v);
      else
        sub_->input(port).receive(t, v);
    };
    put(crane::hydraulic_cylinder::in_s, r(hy::s));
    put(crane::hydraulic_cylinder::in_sd, r(hy::sd));
    put(crane::hydraulic_cylinder::in_kappa, r(hy::kappa));
  }

  std::unique_ptr<crane::hydraulic_cylinder> sub_;
  const double* fh_ = nullptr;
  const double* kappa_ = nullptr;
  cosim::time_point now_{};
};

}  // namespace

namespace cosim::fmu_kit {
std::unique_ptr<model> make_model() {
  return std::make_unique<hydraulics_fmu>();
}
const char* const model_token = cosim::crane_fmu::hydraulics_token;
}  // namespace cosim::fmu_kit
