// The parameters the user gives an FMU subsystem (see fmu_subsystem.hpp): checked against
// their variables' types, set after instantiation and again during initialisation, and read
// back after it to find the ones the FMU changed.
#include <spdlog/spdlog.h>

#include <cmath>
#include <string>
#include <vector>

#include "cosim/fmi/fmu_subsystem.hpp"
#include "cosim/runtime/json_writer.hpp"
#include "fmu_instance.hpp"
#include "fmu_typed_values.hpp"

namespace cosim::fmi {

void fmu_subsystem::take_parameters(const std::vector<parameter_value>& parameters) {
  const model_description& md = fmu_->file().md;
  for (const parameter_value& p : parameters) {
    if (p.variable >= md.variables.size())
      throw_error("internal: parameter index " + std::to_string(p.variable) + " out of range");
    const variable& v = md.variables[p.variable];
    const bool text = v.type == var_type::string && !v.is_array;
    if (!is_exchanged(v) && !text)
      throw_error("parameter \"" + v.name + "\" has type " + type_name(v.type, major_) +
                  (v.is_array ? " (array)" : "") +
                  ", which cannot be set (supported: numbers, Boolean, Enumeration, String)");
    if (text != p.text.has_value())
      throw_error("parameter \"" + v.name + "\" has type " + type_name(v.type, major_) +
                  (text ? ": its value must be a string" : ": its value must be a number"));
    if (text && !inst_->has_string_functions())
      throw_error("parameter \"" + v.name + "\" is a String, and the binary does not export " +
                  names_->string_functions);
    if (is_typed_other(v.type)) {
      const std::string problem = typed_value_problem(v.type, major_, p.value);
      if (!problem.empty())
        throw_error("parameter \"" + v.name + "\" = " + format_double(p.value) + " " + problem);
    } else if (v.type == var_type::integer &&
               (p.value != std::trunc(p.value) || std::abs(p.value) > 2147483647.0)) {
      throw_error("parameter \"" + v.name + "\" = " + format_double(p.value) +
                  " is not a 32-bit integer");
    }
    params_.push_back({p.variable, p.value, p.text});
  }
}

void fmu_subsystem::set_parameters() {
  const model_description& md = fmu_->file().md;
  for (const set_value& p : params_) {
    const variable& v = md.variables[p.variable];
    const std::uint32_t vr = v.value_reference;
    int st = 0;
    const char* call = "";
    if (p.text) {
      const char* c = p.text->c_str();
      call = names_->set_string;
      st = inst_->set_string(vr, c);
    } else if (is_typed_other(v.type)) {
      std::vector<typed_group> one;
      add_typed(one, v.type, vr, 0);
      one[0].size_buffers();
      st = inst_->set_typed(one[0], &p.value, true, call);
    } else if (v.type == var_type::real) {
      call = names_->set_real;
      st = inst_->set_real(&vr, 1, &p.value);
    } else if (v.type == var_type::integer) {
      const std::int32_t i = to_int32(p.value);
      call = names_->set_integer;
      st = inst_->set_integer(&vr, 1, &i);
    } else {
      call = names_->set_boolean;
      const char b = p.value != 0.0 ? 1 : 0;
      st = inst_->set_boolean(&vr, 1, &b);
    }
    if (st > fmi2Warning) {
      note_status(st);
      throw_error(std::string(call) + " of parameter \"" + v.name +
                  "\" = " + (p.text ? "\"" + *p.text + "\"" : format_double(p.value)) +
                  " returned " + inst_->status_text(st));
    }
  }
}

void fmu_subsystem::check_parameters_kept() {
  const model_description& md = fmu_->file().md;
  std::string changed;
  for (const set_value& p : params_) {
    const variable& v = md.variables[p.variable];
    const std::uint32_t vr = v.value_reference;
    int st = 0;
    const char* call = "";
    std::string was, now;
    if (p.text) {
      const char* c = nullptr;
      call = names_->get_string;
      st = inst_->get_string(vr, &c);
      const std::string got = c != nullptr ? c : "";
      if (got != *p.text) {
        was = "\"" + *p.text + "\"";
        now = "\"" + got + "\"";
      }
    } else {
      // As the FMU's type holds what was sent.
      double want = p.value, got = 0.0;
      if (is_typed_other(v.type)) {
        std::vector<typed_group> one;
        add_typed(one, v.type, vr, 0);
        one[0].size_buffers();
        st = inst_->get_typed(one[0], &got, call);
        if (v.type == var_type::float32) want = static_cast<double>(static_cast<float>(p.value));
      } else if (v.type == var_type::real) {
        call = names_->get_real;
        st = inst_->get_real(&vr, 1, &got);
      } else if (v.type == var_type::integer) {
        std::int32_t i = 0;
        call = names_->get_integer;
        st = inst_->get_integer(&vr, 1, &i);
        got = i;
        want = to_int32(p.value);
      } else {
        char b = 0;
        call = names_->get_boolean;
        st = inst_->get_boolean(&vr, 1, &b);
        got = b != 0 ? 1.0 : 0.0;
        want = p.value != 0.0 ? 1.0 : 0.0;
      }
      if (!(got == want) && !(std::isnan(got) && std::isnan(want))) {
        was = format_double(want);
        now = format_double(got);
      }
    }
    if (st > fmi2Warning) {
      note_status(st);
      throw_error(std::string(call) + " of parameter \"" + v.name +
                  "\" after initialisation returned " + inst_->status_text(st));
    }
    if (!was.empty())
      changed += (changed.empty() ? "\"" : ", \"") + v.name + "\" set " + was + ", now " + now;
  }
  if (changed.empty()) return;
  const std::string key = "subsystems." + name() + ".changed_parameters";
  if (refuse_changed_)
    throw_error("the FMU changed parameters it was given during initialisation: " + changed + " (" +
                key + " = \"refuse\"; \"warn\" runs with the FMU's values)");
  spdlog::warn(
      "{} (subsystem {}): the FMU changed parameters it was given during initialisation: {}; "
      "the run uses the FMU's values ({} = \"refuse\" stops instead)",
      where_, name(), changed, key);
}

}  // namespace cosim::fmi
