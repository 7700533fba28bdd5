// The start-up probe of an FMU's undeclared direct feedthrough (see fmu_subsystem.hpp): an
// output that depends on an input at the same time changes when the input is set, without a
// step (FMI 2.0 Sect. 4.2.4: outputs at a communication point reflect the inputs set there).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "cosim/fmi/fmu_subsystem.hpp"
#include "cosim/runtime/json_writer.hpp"
#include "fmu_instance.hpp"

namespace cosim::fmi {

fmu_subsystem::probe_result fmu_subsystem::probe_feedthrough() {
  if (phase_ != phase::initialized || stepped_)
    throw_error("internal: the feedthrough probe runs after initialisation, before the run");
  const model_description& md = fmu_->file().md;
  std::vector<std::uint32_t> out_vrs, in_vrs;
  std::vector<std::string> out_names, in_names;
  for (const std::size_t k : output_var_) {
    const variable& v = md.variables[k];
    if (v.type != var_type::real || md.dependencies_declared(k)) continue;
    out_vrs.push_back(v.value_reference);
    out_names.push_back(v.name);
  }
  for (const std::size_t k : input_var_) {
    const variable& v = md.variables[k];
    if (v.type != var_type::real) continue;
    in_vrs.push_back(v.value_reference);
    in_names.push_back(v.name);
  }
  probe_result r;
  if (out_vrs.empty() || in_vrs.empty()) {
    r.text = "nothing to probe (no Real output with undeclared dependencies, or no Real input)";
    return r;
  }
  const auto check = [&](int st, const char* call) {
    if (st <= fmi2Warning) return;
    note_status(st);
    throw_error(std::string(call) + " (feedthrough probe) returned " + inst_->status_text(st));
  };
  const auto get = [&](const std::uint32_t* vrs, std::size_t n, double* dst) {
    check(inst_->get_real(vrs, n, dst), names_->get_real);
  };
  const auto set = [&](std::uint32_t vr, double v) {
    check(inst_->set_real(&vr, 1, &v), names_->set_real);
  };
  // The FMU's state, where it can save it: a model may react to a set itself.
  void* state = nullptr;
  if (do_can_save_state()) {
    check(inst_->get_state(&state), names_->get_state);
  }
  std::vector<double> y0(out_vrs.size()), y1(out_vrs.size());
  get(out_vrs.data(), out_vrs.size(), y0.data());
  for (std::size_t i = 0; i < in_vrs.size(); ++i) {
    double u0 = 0.0;
    get(&in_vrs[i], 1, &u0);
    // Large enough to show in any output that depends on it, small enough to stay in range.
    const double du = 0.01 * std::max(1.0, std::abs(u0));
    set(in_vrs[i], u0 + du);
    get(out_vrs.data(), out_vrs.size(), y1.data());
    set(in_vrs[i], u0);
    std::string moved;
    for (std::size_t o = 0; o < out_vrs.size(); ++o)
      if (!(y1[o] == y0[o]))
        moved += (moved.empty() ? "" : ", ") + out_names[o] + " by " + format_double(y1[o] - y0[o]);
    r.moved = r.moved || !moved.empty();
    r.text += (r.text.empty() ? "" : "; ") + in_names[i] + " + " + format_double(du) + ": " +
              (moved.empty() ? "no output moved" : "moved " + moved);
  }
  if (state != nullptr) {
    check(inst_->set_state(state), names_->set_state);
    (void)inst_->free_state(&state);
  } else {
    r.text += " (the FMU cannot save its state: the inputs were restored, nothing else)";
  }
  return r;
}

}  // namespace cosim::fmi
