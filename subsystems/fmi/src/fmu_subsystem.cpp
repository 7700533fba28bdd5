// FMI 2.0 / 3.0 co-simulation FMU as a subsystem (see fmu_subsystem.hpp). Calls follow the
// state machines of FMI 2.0 Sect. 4.2.4 and FMI 3.0 Sect. 4.2: instantiate, set parameters,
// (setup experiment,) enter/exit initialisation, [event mode, step mode,] doStep..., then
// terminate and free; after fmiError only free, after fmiFatal nothing.
#include "cosim/fmi/fmu_subsystem.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "cosim/fmi/crash_guard.hpp"
#include "cosim/fmi/fmi3.h"
#include "cosim/fmi/status.hpp"
#include "cosim/runtime/error.hpp"
#include "cosim/runtime/json_writer.hpp"
#include "fmu_api.hpp"
#include "fmu_typed_values.hpp"

namespace cosim::fmi {

namespace {

// Bounds on loops the FMU drives, so a misbehaving FMU cannot hang a step forever.
constexpr int max_event_iterations = 1000;
constexpr int max_early_returns = 100000;
constexpr std::size_t log_capacity = 256;
// Half a tick of the runtime's nanosecond clock: an FMU time this close to a communication
// point is that point.
constexpr double half_tick_s = 0.5e-9;

void copy_text(char* dst, std::size_t n, const char* src) noexcept {
  if (n == 0) return;
  if (src == nullptr) src = "";
  std::size_t i = 0;
  for (; i + 1 < n && src[i] != '\0'; ++i) dst[i] = src[i];
  dst[i] = '\0';
}

void log2_callback(fmi2ComponentEnvironment env, fmi2String /*instance*/, fmi2Status status,
                   fmi2String category, fmi2String message, ...) {
  if (env == nullptr) return;
  // FMI 2.0 Sect. 2.1.5: message is a printf format with the variable arguments.
  char text[sizeof(fmu_log_record::text)];
  va_list ap;
  va_start(ap, message);
  // NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized): va_start above initialises it
  std::vsnprintf(text, sizeof text, message != nullptr ? message : "", ap);
  va_end(ap);
  static_cast<fmu_subsystem*>(env)->log_message(static_cast<int>(status), category, text);
}

// FMI 2.0 Sect. 2.1.5: calloc semantics (the standard library's functions are not
// addressable in C++20, hence these wrappers).
void* allocate2(std::size_t n, std::size_t size) {
  return std::calloc(n, size);
}
void free2(void* p) {
  std::free(p);
}

void log3_callback(fmi3InstanceEnvironment env, fmi3Status status, fmi3String category,
                   fmi3String message) {
  if (env == nullptr) return;
  static_cast<fmu_subsystem*>(env)->log_message(static_cast<int>(status), category, message);
}

// A time in a message: the shortest text that reads back as the same double (0.1, not
// 0.10000000000000001), without allocating (stop messages are written on real-time threads).
std::array<char, 32> num_text(double v) noexcept {
  std::array<char, 32> b{};
  const auto r = std::to_chars(b.data(), b.data() + b.size() - 1, v);
  *r.ptr = '\0';
  return b;
}

// FMI 2 and 3 number their statuses alike up to Fatal.
const char* status_text(int major, int s) noexcept {
  return major >= 3 ? status_name(static_cast<fmi3Status>(s))
                    : status_name(static_cast<fmi2Status>(s));
}

std::int32_t to_int32(double v) noexcept {
  if (!(v == v)) return 0;
  if (v >= 2147483647.0) return std::numeric_limits<std::int32_t>::max();
  if (v <= -2147483648.0) return std::numeric_limits<std::int32_t>::min();
  return static_cast<std::int32_t>(std::lround(v));
}

}  // namespace

const char* to_string(fmu_stop s) noexcept {
  switch (s) {
    case fmu_stop::none:
      return "none";
    case fmu_stop::terminated:
      return "fmu_terminated";
    case fmu_stop::discarded:
      return "fmu_discard";
    case fmu_stop::failed:
      return "fmu_error";
    case fmu_stop::stop_time:
      return "fmu_stop_time";
  }
  return "none";
}

fmu_subsystem::fmu_subsystem(std::string name, std::shared_ptr<loaded_fmu> fmu,
                             const std::vector<parameter_value>& parameters, bool instantiate)
    : subsystem(std::move(name)),
      fmu_(std::move(fmu)),
      api_(std::make_unique<api>()),
      where_(fmu_->file().path),
      log_(log_capacity) {
  const model_description& md = fmu_->file().md;
  major_ = md.fmi_major;
  event_mode_used_ = major_ >= 3 && md.cosim->has_event_mode;
  {
    // Ignoring them would run the model with its clocked partitions never activated.
    std::string clocks, unexchanged;
    std::size_t n_unexchanged = 0;
    for (const variable& v : md.variables) {
      if (v.type == var_type::clock) clocks += (clocks.empty() ? "" : ", ") + v.name;
      if (!is_exchanged(v) && v.type != var_type::clock &&
          (v.causal == causality::input || v.causal == causality::output) && ++n_unexchanged <= 8)
        unexchanged += (unexchanged.empty() ? "" : ", ") + v.name;
    }
    if (!clocks.empty())
      throw_error("it declares FMI 3 clocks (" + clocks +
                  "), which this runtime neither activates nor reads: their clocked partitions "
                  "would never run");
    if (n_unexchanged > 0)
      spdlog::warn(
          "{} (subsystem {}): {} input(s)/output(s) are strings, binaries or arrays, "
          "which cosim does not exchange: {}{}",
          where_, this->name(), n_unexchanged, unexchanged, n_unexchanged > 8 ? ", ..." : "");
  }
  // An early return is continued to the end of the step, so it is only worth allowing when
  // events are handled in event mode.
  early_return_allowed_ = event_mode_used_ && md.cosim->might_return_early_from_do_step;
  // FMI 2.0 Sect. 4.3.1 / FMI 3.0 Sect. 4.3.1: the FMU gives its outputs' derivatives up to
  // this order at communication points (continuous real outputs).
  deriv_order_ = std::min(md.cosim->max_output_derivative_order, max_extrapolation_order);
  api_->resolve(*fmu_, event_mode_used_, deriv_order_ > 0);

  const char* version = major_ == 2 ? api_->get_version2() : api_->get_version3();
  if (version == nullptr || version[0] != (major_ == 2 ? '2' : '3'))
    throw_error(std::string("its binary reports FMI version \"") +
                (version != nullptr ? version : "(null)") + "\", modelDescription.xml says \"" +
                md.fmi_version + "\"");
  if (major_ == 2) {
    const char* platform = api_->get_types_platform2();
    if (platform == nullptr || std::strcmp(platform, fmi2TypesPlatform) != 0)
      throw_error(std::string("its binary uses types platform \"") +
                  (platform != nullptr ? platform : "(null)") + "\", not \"default\"");
  }
  if (md.cosim->can_be_instantiated_only_once_per_process && fmu_->instances().load() > 0)
    throw_error(
        "canBeInstantiatedOnlyOncePerProcess: the FMU allows one instance per process, "
        "and one exists (use it once per system)");

  // Ports and recordable variables: outputs, locals and (calculated) parameters, the last
  // fetched only when recorded.
  const auto recordable = [](const variable& v) {
    return v.causal == causality::output || v.causal == causality::local ||
           v.causal == causality::parameter || v.causal == causality::calculated_parameter;
  };
  std::size_t recorded = 0;
  for (const auto& v : md.variables)
    if (is_exchanged(v) && recordable(v)) ++recorded;
  values_.assign(recorded, std::numeric_limits<double>::quiet_NaN());
  std::size_t slot = 0;
  for (std::size_t k = 0; k < md.variables.size(); ++k) {
    const variable& v = md.variables[k];
    if (!is_exchanged(v)) continue;
    if (v.causal == causality::input) {
      add_input(port_desc{v.name, v.unit, port_role::signal, false});
      input_var_.push_back(k);
      continue;
    }
    if (!recordable(v)) continue;
    if (v.causal == causality::output) {
      const bool derivs =
          deriv_order_ > 0 && v.type == var_type::real && v.variab == variability::continuous;
      add_output(port_desc{v.name, v.unit, port_role::signal, md.feedthrough(k),
                           derivs ? deriv_order_ : 0});
      der_offset_.push_back(derivs ? der_vrs_.size() : npos);
      for (int m = 1; derivs && m <= deriv_order_; ++m) {
        der_vrs_.push_back(v.value_reference);
        der_orders_.push_back(m);
      }
      output_slot_.push_back(slot);
      output_var_.push_back(k);
      any_feedthrough_ = any_feedthrough_ || md.feedthrough(k);
    }
    add_variable(v.name, v.unit, &values_[slot]);
    if (is_typed_other(v.type)) {
      add_typed(all_other_, v.type, v.value_reference, slot);
    } else {
      value_group& g = v.type == var_type::real      ? all_real_
                       : v.type == var_type::integer ? all_int_
                                                     : all_bool_;
      g.vrs.push_back(v.value_reference);
      g.slots.push_back(slot);
    }
    fetch_.push_back(v.causal == causality::output ? 1 : 0);
    ++slot;
  }
  der_values_.assign(der_vrs_.size(), 0.0);
  {
    // The functions of the other number types this FMU's ports and variables use.
    std::string missing;
    for (const variable& v : md.variables) {
      if (v.is_array || !is_typed_other(v.type)) continue;
      const bool in = v.causal == causality::input || v.causal == causality::parameter;
      const std::string m = typed_missing(*api_, major_, v.type, in);
      if (!m.empty() && missing.find(m) == std::string::npos)
        missing += (missing.empty() ? "" : ", ") + m + " (" + v.name + ")";
    }
    if (!missing.empty())
      throw_error("its binary does not export the FMI functions for its " +
                  std::string("variables' types: ") + missing);
  }
  build_fetch_groups();
  if (!instantiate) return;  // a description only: the instance lives elsewhere

  // Instantiate.
  const std::string& token = md.token;
  if (major_ == 2) {
    fmi2_callbacks_.reset(
        new fmi2CallbackFunctions{&log2_callback, &allocate2, &free2, nullptr, this});
    const std::string uri = fmu_->resource_uri();
    // Logging on: the FMU's messages go to the log ring (log2_callback), and the reason for
    // a failed call reaches the stop message; log_categories narrows them.
    instance_ = api_->instantiate2(this->name().c_str(), fmi2CoSimulation, token.c_str(),
                                   uri.c_str(), fmi2_callbacks_.get(), fmi2False, fmi2True);
  } else {
    const std::string path = fmu_->resource_path();
    instance_ = api_->instantiate3(this->name().c_str(), token.c_str(), path.c_str(), fmi3False,
                                   fmi3True, event_mode_used_, early_return_allowed_, nullptr, 0,
                                   this, &log3_callback, nullptr);
  }
  if (instance_ == nullptr)
    throw_error(std::string(major_ == 2 ? "fmi2Instantiate" : "fmi3InstantiateCoSimulation") +
                " failed (returned NULL)");
  fmu_->instances().fetch_add(1);
  counted_instance_ = true;

  // Parameters the user set, checked here and set now (FMI: after instantiation, so a value
  // the FMU refuses fails the build early) and again in start_experiment. A constructor
  // that throws gets no destructor call, so the instance is freed here on that path.
  try {
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
      if (text && (major_ == 2 ? api_->set_string2 == nullptr || api_->get_string2 == nullptr
                               : api_->set_string3 == nullptr || api_->get_string3 == nullptr))
        throw_error(
            "parameter \"" + v.name + "\" is a String, and the binary does not export " +
            (major_ == 2 ? "fmi2SetString / fmi2GetString" : "fmi3SetString / fmi3GetString"));
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
    set_parameters();
  } catch (...) {
    end_instance();
    throw;
  }
  drain_log();
}

void fmu_subsystem::set_log_categories(const std::vector<std::string>& categories) {
  std::vector<const char*> names;
  names.reserve(categories.size());
  for (const std::string& c : categories) names.push_back(c.c_str());
  // FMI 2.0 Sect. 2.1.5 / FMI 3.0 Sect. 2.3.1: loggingOn false turns every category off;
  // nCategories 0 would mean all of them.
  const bool on = !categories.empty();
  int st = 0;
  if (major_ == 2) {
    if (api_->set_debug_logging2 == nullptr)
      throw_error("log_categories: its binary does not export fmi2SetDebugLogging");
    st = static_cast<int>(
        api_->set_debug_logging2(instance_, on ? fmi2True : fmi2False, names.size(), names.data()));
  } else {
    if (api_->set_debug_logging3 == nullptr)
      throw_error("log_categories: its binary does not export fmi3SetDebugLogging");
    st = static_cast<int>(api_->set_debug_logging3(instance_, on, names.size(), names.data()));
  }
  if (st > fmi2Warning) {
    if (st >= fmi2Error) phase_ = st == fmi2Fatal ? phase::fatal : phase::error;
    throw_error(std::string(major_ == 2 ? "fmi2SetDebugLogging" : "fmi3SetDebugLogging") +
                " of log_categories returned " + status_text(major_, st));
  }
  drain_log();
}

void fmu_subsystem::set_parameters() {
  const model_description& md = fmu_->file().md;
  for (const set_value& p : params_) {
    const variable& v = md.variables[p.variable];
    const fmi3ValueReference vr = v.value_reference;
    int st = 0;
    const char* call = "";
    if (p.text) {
      const char* c = p.text->c_str();
      call = major_ == 2 ? "fmi2SetString" : "fmi3SetString";
      st = major_ == 2 ? static_cast<int>(api_->set_string2(instance_, &vr, 1, &c))
                       : static_cast<int>(api_->set_string3(instance_, &vr, 1, &c, 1));
    } else if (is_typed_other(v.type)) {
      std::vector<typed_group> one;
      add_typed(one, v.type, vr, 0);
      one[0].size_buffers();
      st = typed_set(*api_, major_, instance_, one[0], &p.value, true, call);
    } else if (v.type == var_type::real) {
      call = major_ == 2 ? "fmi2SetReal" : "fmi3SetFloat64";
      st = major_ == 2 ? static_cast<int>(api_->set_real2(instance_, &vr, 1, &p.value))
                       : static_cast<int>(api_->set_float64(instance_, &vr, 1, &p.value, 1));
    } else if (v.type == var_type::integer) {
      const std::int32_t i = to_int32(p.value);
      call = major_ == 2 ? "fmi2SetInteger" : "fmi3SetInt32";
      st = major_ == 2 ? static_cast<int>(api_->set_integer2(instance_, &vr, 1, &i))
                       : static_cast<int>(api_->set_int32(instance_, &vr, 1, &i, 1));
    } else {
      call = major_ == 2 ? "fmi2SetBoolean" : "fmi3SetBoolean";
      const fmi2Boolean b2 = p.value != 0.0 ? fmi2True : fmi2False;
      const fmi3Boolean b3 = p.value != 0.0;
      st = major_ == 2 ? static_cast<int>(api_->set_boolean2(instance_, &vr, 1, &b2))
                       : static_cast<int>(api_->set_boolean3(instance_, &vr, 1, &b3, 1));
    }
    if (st > fmi2Warning) {
      if (st >= fmi2Error) phase_ = st == fmi2Fatal ? phase::fatal : phase::error;
      throw_error(std::string(call) + " of parameter \"" + v.name +
                  "\" = " + (p.text ? "\"" + *p.text + "\"" : format_double(p.value)) +
                  " returned " + status_text(major_, st));
    }
  }
}

void fmu_subsystem::check_parameters_kept() {
  const model_description& md = fmu_->file().md;
  std::string changed;
  for (const set_value& p : params_) {
    const variable& v = md.variables[p.variable];
    const fmi3ValueReference vr = v.value_reference;
    int st = 0;
    const char* call = "";
    std::string was, now;
    if (p.text) {
      const char* c = nullptr;
      call = major_ == 2 ? "fmi2GetString" : "fmi3GetString";
      st = major_ == 2 ? static_cast<int>(api_->get_string2(instance_, &vr, 1, &c))
                       : static_cast<int>(api_->get_string3(instance_, &vr, 1, &c, 1));
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
        st = typed_get(*api_, major_, instance_, one[0], &got, call);
        if (v.type == var_type::float32) want = static_cast<double>(static_cast<float>(p.value));
      } else if (v.type == var_type::real) {
        call = major_ == 2 ? "fmi2GetReal" : "fmi3GetFloat64";
        st = major_ == 2 ? static_cast<int>(api_->get_real2(instance_, &vr, 1, &got))
                         : static_cast<int>(api_->get_float64(instance_, &vr, 1, &got, 1));
      } else if (v.type == var_type::integer) {
        std::int32_t i = 0;
        call = major_ == 2 ? "fmi2GetInteger" : "fmi3GetInt32";
        st = major_ == 2 ? static_cast<int>(api_->get_integer2(instance_, &vr, 1, &i))
                         : static_cast<int>(api_->get_int32(instance_, &vr, 1, &i, 1));
        got = i;
        want = to_int32(p.value);
      } else {
        fmi2Boolean b2 = fmi2False;
        fmi3Boolean b3 = false;
        call = major_ == 2 ? "fmi2GetBoolean" : "fmi3GetBoolean";
        st = major_ == 2 ? static_cast<int>(api_->get_boolean2(instance_, &vr, 1, &b2))
                         : static_cast<int>(api_->get_boolean3(instance_, &vr, 1, &b3, 1));
        got = (major_ == 2 ? b2 != fmi2False : b3) ? 1.0 : 0.0;
        want = p.value != 0.0 ? 1.0 : 0.0;
      }
      if (!(got == want) && !(std::isnan(got) && std::isnan(want))) {
        was = format_double(want);
        now = format_double(got);
      }
    }
    if (st > fmi2Warning) {
      if (st >= fmi2Error) phase_ = st == fmi2Fatal ? phase::fatal : phase::error;
      throw_error(std::string(call) + " of parameter \"" + v.name +
                  "\" after initialisation returned " + status_text(major_, st));
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

void fmu_subsystem::declare_no_feedthrough() {
  const model_description& md = fmu_->file().md;
  no_feedthrough_ = true;
  any_feedthrough_ = false;
  // The ports keep their desc (set at construction); output_depends_on() answers for them.
  for (const std::size_t k : output_var_)
    any_feedthrough_ = any_feedthrough_ || (md.dependencies_declared(k) && md.feedthrough(k));
}

bool fmu_subsystem::feedthrough_assumed(std::size_t o) const noexcept {
  if (o >= output_var_.size() || no_feedthrough_) return false;
  const model_description& md = fmu_->file().md;
  return !md.dependencies_declared(output_var_[o]) && md.feedthrough(output_var_[o]);
}

bool fmu_subsystem::output_depends_on(std::size_t o, std::size_t i) const noexcept {
  if (o >= output_var_.size() || i >= input_var_.size()) return false;
  const model_description& md = fmu_->file().md;
  if (no_feedthrough_ && !md.dependencies_declared(output_var_[o])) return false;
  return md.feedthrough(output_var_[o]) && md.depends_on(output_var_[o], input_var_[i]);
}

void fmu_subsystem::build_fetch_groups() {
  auto pick = [&](const value_group& all, value_group& out) {
    out = {};
    for (std::size_t j = 0; j < all.vrs.size(); ++j)
      if (fetch_[all.slots[j]] != 0) {
        out.vrs.push_back(all.vrs[j]);
        out.slots.push_back(all.slots[j]);
      }
  };
  pick(all_real_, out_real_);
  pick(all_int_, out_int_);
  pick(all_bool_, out_bool_);
  out_other_.clear();
  for (const typed_group& all : all_other_) {
    typed_group g;
    g.type = all.type;
    for (std::size_t j = 0; j < all.vrs.size(); ++j)
      if (fetch_[all.slots[j]] != 0) {
        g.vrs.push_back(all.vrs[j]);
        g.slots.push_back(all.slots[j]);
      }
    if (g.vrs.empty()) continue;
    g.size_buffers();
    out_other_.push_back(std::move(g));
  }
  real_direct_ = !out_real_.slots.empty();
  for (std::size_t j = 1; j < out_real_.slots.size(); ++j)
    real_direct_ = real_direct_ && out_real_.slots[j] == out_real_.slots[0] + j;
  reals_only_direct_ =
      real_direct_ && out_int_.vrs.empty() && out_bool_.vrs.empty() && out_other_.empty();
  out_real_buf_.assign(out_real_.vrs.size(), 0.0);
  out_int_buf_.assign(out_int_.vrs.size(), 0);
  out_bool2_buf_.assign(out_bool_.vrs.size(), 0);
  out_bool3_buf_ = std::make_unique<bool[]>(out_bool_.vrs.size() + 1);
}

void fmu_subsystem::do_record_variable(std::size_t v) {
  // variables() and values_ share their order (one variable per slot).
  if (v >= fetch_.size() || fetch_[v] != 0) return;
  fetch_[v] = 1;
  build_fetch_groups();
}

fmu_subsystem::~fmu_subsystem() {
  {
    const crash_guard guard(where_.c_str(),
                            major_ == 2 ? "termination (fmi2Terminate, fmi2FreeInstance)"
                                        : "termination (fmi3Terminate, fmi3FreeInstance)",
                            "the rows written are kept, and no summary.json claims the run");
    end_instance();
  }
  drain_log();
}

void fmu_subsystem::end_instance() noexcept {
  if (instance_ == nullptr) return;
  if (phase_ == phase::fatal) {
    // FMI: after fmiFatal no function of the FMU may be called, not even free.
    instance_ = nullptr;
    return;
  }
  if (fmu_state_ != nullptr) {
    // While the instance is alive (FMI 2.0 Sect. 2.1.8, FMI 3.0 Sect. 2.2.6.4).
    if (major_ == 2)
      (void)api_->free_fmu_state2(instance_, &fmu_state_);
    else
      (void)api_->free_fmu_state3(instance_, &fmu_state_);
    fmu_state_ = nullptr;
  }
  if (phase_ == phase::initialized || phase_ == phase::terminated) {
    if (major_ == 2)
      (void)api_->terminate2(instance_);
    else
      (void)api_->terminate3(instance_);
  }
  if (major_ == 2)
    api_->free_instance2(instance_);
  else
    api_->free_instance3(instance_);
  instance_ = nullptr;
  if (counted_instance_) fmu_->instances().fetch_sub(1);
  counted_instance_ = false;
}

std::string fmu_subsystem::not_exchanged(const std::string& variable_name) const {
  const model_description& md = fmu_->file().md;
  const std::size_t k = md.find(variable_name);
  if (k == model_description::npos) return {};
  const variable& v = md.variables[k];
  if (is_exchanged(v)) return {};
  return std::string("the FMU declares ") + variable_name + " as " +
         type_name(v.type, md.fmi_major) + (v.is_array ? " array (<Dimension>)" : "") +
         ", which cosim does not exchange (supported: single numbers, Boolean, Enumeration)";
}

void fmu_subsystem::throw_error(const std::string& what) {
  // The FMU's own messages usually say why; they are printed, and the last one is quoted.
  drain_log();
  throw error(errc::model, where_ + " (subsystem " + name() + "): " + what +
                               (last_log_.empty() ? "" : "; the FMU said: " + last_log_));
}

void fmu_subsystem::log_message(int status, const char* category, const char* text) noexcept {
  fmu_log_record r;
  r.status = status;
  copy_text(r.category.data(), r.category.size(), category);
  copy_text(r.text.data(), r.text.size(), text);
  // The reason for an error must not depend on room in the ring: kept apart for the stop
  // message.
  if (status >= static_cast<int>(fmi2Error))
    copy_text(last_error_text_.data(), last_error_text_.size(), r.text.data());
  (void)log_.push(r);
}

void fmu_subsystem::drain_log() {
  fmu_log_record r;
  while (log_.try_pop(r)) {
    const auto level = r.status >= static_cast<int>(fmi2Error)     ? spdlog::level::err
                       : r.status >= static_cast<int>(fmi2Warning) ? spdlog::level::warn
                                                                   : spdlog::level::info;
    spdlog::log(level, "[FMU {}] {}{}{}", name(), r.category.data(), r.category[0] ? ": " : "",
                r.text.data());
    if (r.status >= static_cast<int>(fmi2Warning)) last_log_ = r.text.data();
  }
  const std::uint64_t drops = log_.drops();
  if (drops > reported_drops_) {
    spdlog::warn(
        "[FMU {}] {} log messages lost: at most {} are kept between the prints, which happen "
        "off the run's threads (at start and end); the last error message is kept in the stop "
        "reason",
        name(), drops - reported_drops_, log_.capacity());
    reported_drops_ = drops;
  }
}

void fmu_subsystem::start_experiment(std::optional<double> run_length_s) {
  if (started_) return;
  if (instance_ == nullptr) throw_error("internal: this FMU subsystem only describes the FMU");
  const model_description& md = fmu_->file().md;
  fmu_start_ = md.experiment.start_time.value_or(0.0);
  const bool tol_defined = md.experiment.tolerance.has_value();
  const double tol = md.experiment.tolerance.value_or(0.0);
  if (run_length_s) {
    run_length_ = to_duration(*run_length_s);
    // From the ticks, as the last step's end is: the two are equal bit for bit.
    stop_fmu_ = comm_time(fmu_start_, *run_length_);
    stop_at_ = t0_ + *run_length_;  // again in do_initialize, which knows t0
  }
  auto check = [&](int st, const char* call) {
    if (st <= fmi2Warning) return;
    if (st >= fmi2Error) phase_ = st == fmi2Fatal ? phase::fatal : phase::error;
    throw_error(std::string(call) + " returned " + status_text(major_, st));
  };
  // The parameters again after the setup (FMI 2: some FMUs reset them there) and in
  // initialisation mode, where tools set them (FMI 2.0 Sect. 2.2.7 and FMI 3.0 Sect. 2.4.7
  // allow both for parameters, whose initial is "exact").
  if (major_ == 2) {
    check(api_->setup_experiment2(instance_, tol_defined ? fmi2True : fmi2False, tol, fmu_start_,
                                  stop_fmu_ ? fmi2True : fmi2False, stop_fmu_.value_or(0.0)),
          "fmi2SetupExperiment");
    set_parameters();
    check(api_->enter_initialization2(instance_), "fmi2EnterInitializationMode");
    set_parameters();
    check(api_->exit_initialization2(instance_), "fmi2ExitInitializationMode");
  } else {
    check(api_->enter_initialization3(instance_, tol_defined, tol, fmu_start_,
                                      stop_fmu_.has_value(), stop_fmu_.value_or(0.0)),
          "fmi3EnterInitializationMode");
    set_parameters();
    check(api_->exit_initialization3(instance_), "fmi3ExitInitializationMode");
    phase_ = phase::initialized;
    // FMI 3.0 Sect. 4.2.2: with eventModeUsed, initialisation ends in event mode.
    if (event_mode_used_ && !settle_events(fmu_start_, false))
      throw_error(std::string(stop_message()));
  }
  phase_ = phase::initialized;
  started_ = true;
  check_parameters_kept();
  drain_log();
}

void fmu_subsystem::do_initialize(time_point t0) {
  if (stepped_) throw_error("an FMU subsystem runs once; build a new system to run again");
  t0_ = t0;
  start_experiment(std::nullopt);
  const model_description& md = fmu_->file().md;
  in_real_ = {};
  in_int_ = {};
  in_bool_ = {};
  in_other_.clear();
  input_group_.assign(input_count(), {0, 0});
  for (std::size_t i = 0; i < input_count(); ++i) {
    const variable& v = md.variables[input_var_[i]];
    // value_at() needs a sample; connected inputs get theirs in the start-up exchange.
    input(i).set_initial(t0, v.start.value_or(0.0));
    if (!input(i).connected()) continue;  // keeps its start value inside the FMU
    if (is_typed_other(v.type)) {
      add_typed(in_other_, v.type, v.value_reference, i);
      for (std::size_t k = 0; k < in_other_.size(); ++k)
        if (in_other_[k].type == v.type) input_group_[i] = {4 + k, in_other_[k].vrs.size() - 1};
      continue;
    }
    value_group& g = v.type == var_type::real      ? in_real_
                     : v.type == var_type::integer ? in_int_
                                                   : in_bool_;
    input_group_[i] = {v.type == var_type::real      ? 1
                       : v.type == var_type::integer ? 2
                                                     : 3,
                       g.vrs.size()};
    g.vrs.push_back(v.value_reference);
    g.slots.push_back(i);
  }
  in_real_buf_.assign(in_real_.vrs.size(), 0.0);
  in_int_buf_.assign(in_int_.vrs.size(), 0);
  in_bool2_buf_.assign(in_bool_.vrs.size(), 0);
  in_bool3_buf_ = std::make_unique<bool[]>(in_bool_.vrs.size() + 1);
  in_real_last_.assign(in_real_.vrs.size(), 0.0);
  in_int_last_.assign(in_int_.vrs.size(), 0);
  in_bool_last_.assign(in_bool_.vrs.size(), 0);
  for (typed_group& g : in_other_) g.size_buffers();
  in_other_values_.assign(input_count(), 0.0);
  send_vrs_.assign(std::max({in_real_.vrs.size(), in_int_.vrs.size(), in_bool_.vrs.size()}), 0);
  inputs_sent_ = false;
  inputs_held_ = true;
  any_input_ = false;
  for (std::size_t i = 0; i < input_count(); ++i) {
    if (!input(i).connected()) continue;
    any_input_ = true;
    if (!input(i).held()) inputs_held_ = false;
  }
  stop_at_ = run_length_ ? t0 + *run_length_ : time_point::max();
}

double fmu_subsystem::do_received_input(std::size_t i, time_point t) const noexcept {
  const auto [group, j] = i < input_group_.size() ? input_group_[i] : std::pair{0UL, 0UL};
  // Before the first set, what the first set at t sends.
  if (group == 0 || !inputs_sent_) {
    const double v = input(i).value_at(t);
    if (group == 2) return static_cast<double>(to_int32(v));
    if (group == 3) return v >= 0.5 ? 1.0 : 0.0;
    if (group >= 4) return typed_as_sent(in_other_[group - 4].type, major_, v);
    return v;
  }
  switch (group) {
    case 1:
      return in_real_last_[j];
    case 2:
      return static_cast<double>(in_int_last_[j]);
    case 3:
      return in_bool_last_[j] != 0 ? 1.0 : 0.0;
    default:
      return typed_as_sent(in_other_[group - 4].type, major_, in_other_[group - 4].last[j]);
  }
}

void fmu_subsystem::do_start(stop_source& stop) {
  run_stop_ = &stop;
  // A failure in the start-up exchange (update_outputs at t0) stops the run before it starts.
  if (stop_ != fmu_stop::none) raise_stop();
}

void fmu_subsystem::do_stop(bool /*fail_safe*/) noexcept {
  run_stop_ = nullptr;
  try {
    drain_log();  // off the real-time threads: the run is over
  } catch (...) {
    // Printing the FMU's messages must not turn a finished run into a failed one.
  }
}

void fmu_subsystem::raise_stop() noexcept {
  if (run_stop_ == nullptr) return;
  (void)run_stop_->raise(
      // Only the model's own end completes the run; a discarded step did not.
      stop_ == fmu_stop::terminated || stop_ == fmu_stop::stop_time ? stop_cause::model_end
                                                                    : stop_cause::model_error,
      0, stop_text_.data());
}

bool fmu_subsystem::fail(fmu_stop kind, const char* what, int status, double t) noexcept {
  if (stop_ != fmu_stop::none) return false;
  stop_ = kind;
  switch (kind) {
    case fmu_stop::terminated: {
      const double from = fmu_time(step_from_);
      // Past the start of the macro step but short of its end: that step is not complete.
      const bool inside = !end_pending_ && started_ && t > from + half_tick_s;
      std::snprintf(stop_text_.data(), stop_text_.size(),
                    "%s (subsystem %s): the FMU ended the simulation at t = %s s (%s)%s%s%s%s%s",
                    where_.c_str(), name().c_str(), num_text(t).data(), what,
                    inside ? ", inside the macro step from t = " : "",
                    inside ? num_text(from).data() : "", inside ? " s to " : "",
                    inside ? num_text(fmu_time(step_to_)).data() : "",
                    inside ? " s, which it did not complete: the run ends at that step's start, "
                             "its last communication point"
                           : "");
      break;
    }
    case fmu_stop::stop_time:
      std::snprintf(stop_text_.data(), stop_text_.size(),
                    "%s (subsystem %s): %s; no doStep past the experiment's stop time t = %s s "
                    "is issued",
                    where_.c_str(), name().c_str(), what, num_text(stop_fmu_.value_or(0.0)).data());
      break;
    case fmu_stop::none:
    case fmu_stop::discarded:
    case fmu_stop::failed:
      std::snprintf(stop_text_.data(), stop_text_.size(),
                    "%s (subsystem %s): %s at t = %s s%s%s%s%s%s", where_.c_str(), name().c_str(),
                    what, num_text(t).data(), status == no_fmu_status ? "" : " returned ",
                    status == no_fmu_status ? "" : status_text(major_, status),
                    // FMI 2.0 Sect. 4.2.3, FMI 3.0 Sect. 4.2.1: a discarded step without
                    // the request to terminate is for the importer to retry shorter.
                    kind == fmu_stop::discarded
                        ? " without asking to end the simulation: the FMU could not complete "
                          "the communication step, and this runtime does not retry shorter "
                          "steps (a smaller run.macro_step, or this subsystem's step, may help)"
                        : "",
                    last_error_text_[0] != '\0' ? "; the FMU logged: " : "",
                    last_error_text_.data());
      break;
  }
  if (!end_pending_) raise_stop();
  return false;
}

[[gnu::cold]] bool fmu_subsystem::end_simulation(const char* what, int status,
                                                 double last) noexcept {
  phase_ = phase::terminated;
  // Only in a run's step (not in initialisation), and only at the end of the whole macro
  // step: an FMU that ended after one of its k steps did not complete the macro step.
  end_pending_ = started_ && stop_ == fmu_stop::none && stepped_ &&
                 std::abs(last - fmu_time(step_to_)) <= half_tick_s;
  (void)fail(fmu_stop::terminated, what, status, last);
  return end_pending_;
}

[[gnu::cold, gnu::noinline]] bool fmu_subsystem::refuse_step() noexcept {
  if (end_pending_) {
    end_pending_ = false;
    raise_stop();
  }
  return false;
}

void fmu_subsystem::set_inputs(time_point t) noexcept {
  if (phase_ != phase::initialized || stop_ != fmu_stop::none) return;
  // Only values that differ (bitwise: NaN and -0.0 count) from the last set go to the FMU,
  // all changed ones of a type in one call; the FMU keeps an input's value until it is set.
  const bool all = !inputs_sent_;
  int st = 0;
  const char* call = "";
  std::size_t n = 0;
  for (std::size_t j = 0; j < in_real_.vrs.size(); ++j) {
    const double v = in(in_real_.slots[j], t);
    if (!all && std::bit_cast<std::uint64_t>(v) == std::bit_cast<std::uint64_t>(in_real_last_[j]))
      continue;
    in_real_last_[j] = v;
    send_vrs_[n] = in_real_.vrs[j];
    in_real_buf_[n++] = v;
  }
  if (n > 0) {
    call = major_ == 2 ? "fmi2SetReal (inputs)" : "fmi3SetFloat64 (inputs)";
    st =
        major_ == 2
            ? static_cast<int>(api_->set_real2(instance_, send_vrs_.data(), n, in_real_buf_.data()))
            : static_cast<int>(
                  api_->set_float64(instance_, send_vrs_.data(), n, in_real_buf_.data(), n));
  }
  n = 0;
  for (std::size_t j = 0; st <= fmi2Warning && j < in_int_.vrs.size(); ++j) {
    const std::int32_t v = to_int32(in(in_int_.slots[j], t));
    if (!all && v == in_int_last_[j]) continue;
    in_int_last_[j] = v;
    send_vrs_[n] = in_int_.vrs[j];
    in_int_buf_[n++] = v;
  }
  if (st <= fmi2Warning && n > 0) {
    call = major_ == 2 ? "fmi2SetInteger (inputs)" : "fmi3SetInt32 (inputs)";
    st = major_ == 2 ? static_cast<int>(
                           api_->set_integer2(instance_, send_vrs_.data(), n, in_int_buf_.data()))
                     : static_cast<int>(
                           api_->set_int32(instance_, send_vrs_.data(), n, in_int_buf_.data(), n));
  }
  n = 0;
  for (std::size_t j = 0; st <= fmi2Warning && j < in_bool_.vrs.size(); ++j) {
    // Rounded to the nearest of false (0) and true (1), as the integer types round and
    // saturate: 0.4 is false, -3 false, 0.5 and above true.
    const char b = in(in_bool_.slots[j], t) >= 0.5 ? 1 : 0;
    if (!all && b == in_bool_last_[j]) continue;
    in_bool_last_[j] = b;
    send_vrs_[n] = in_bool_.vrs[j];
    in_bool2_buf_[n] = b != 0 ? fmi2True : fmi2False;
    in_bool3_buf_[n++] = b != 0;
  }
  if (st <= fmi2Warning && n > 0) {
    call = major_ == 2 ? "fmi2SetBoolean (inputs)" : "fmi3SetBoolean (inputs)";
    st = major_ == 2 ? static_cast<int>(
                           api_->set_boolean2(instance_, send_vrs_.data(), n, in_bool2_buf_.data()))
                     : static_cast<int>(api_->set_boolean3(instance_, send_vrs_.data(), n,
                                                           in_bool3_buf_.get(), n));
  }
  for (std::size_t k = 0; st <= fmi2Warning && k < in_other_.size(); ++k) {
    typed_group& g = in_other_[k];
    for (const std::size_t i : g.slots) in_other_values_[i] = in(i, t);
    st = typed_set(*api_, major_, instance_, g, in_other_values_.data(), all, call);
  }
  if (st > fmi2Warning) {
    if (st >= fmi2Error) phase_ = st == fmi2Fatal ? phase::fatal : phase::error;
    (void)fail(st == fmi2Discard ? fmu_stop::discarded : fmu_stop::failed, call, st, fmu_time(t));
    return;
  }
  inputs_sent_ = true;
}

inline bool fmu_subsystem::get_values() noexcept {
  // The common case, reals only and consecutive: one call straight into values_.
  if (reals_only_direct_) [[likely]] {
    const std::size_t n = out_real_.vrs.size();
    double* dst = &values_[out_real_.slots[0]];
    const int st =
        major_ == 2
            ? static_cast<int>(api_->get_real2(instance_, out_real_.vrs.data(), n, dst))
            : static_cast<int>(api_->get_float64(instance_, out_real_.vrs.data(), n, dst, n));
    if (st <= fmi2Warning) [[likely]]
      return true;
  }
  return get_values_all();
}

[[gnu::noinline]] bool fmu_subsystem::get_values_all() noexcept {
  int st = 0;
  const char* call = "";
  if (!out_real_.vrs.empty()) {
    call = major_ == 2 ? "fmi2GetReal" : "fmi3GetFloat64";
    const std::size_t n = out_real_.vrs.size();
    // Straight into values_ when the slots are consecutive (no local left out in between).
    double* dst = real_direct_ ? &values_[out_real_.slots[0]] : out_real_buf_.data();
    st = major_ == 2
             ? static_cast<int>(api_->get_real2(instance_, out_real_.vrs.data(), n, dst))
             : static_cast<int>(api_->get_float64(instance_, out_real_.vrs.data(), n, dst, n));
    if (st <= fmi2Warning && !real_direct_)
      for (std::size_t j = 0; j < n; ++j) values_[out_real_.slots[j]] = out_real_buf_[j];
  }
  if (st <= fmi2Warning && !out_int_.vrs.empty()) {
    call = major_ == 2 ? "fmi2GetInteger" : "fmi3GetInt32";
    st = major_ == 2
             ? static_cast<int>(api_->get_integer2(instance_, out_int_.vrs.data(),
                                                   out_int_.vrs.size(), out_int_buf_.data()))
             : static_cast<int>(api_->get_int32(instance_, out_int_.vrs.data(), out_int_.vrs.size(),
                                                out_int_buf_.data(), out_int_buf_.size()));
    if (st <= fmi2Warning)
      for (std::size_t j = 0; j < out_int_.slots.size(); ++j)
        values_[out_int_.slots[j]] = static_cast<double>(out_int_buf_[j]);
  }
  if (st <= fmi2Warning && !out_bool_.vrs.empty()) {
    const std::size_t n = out_bool_.vrs.size();
    call = major_ == 2 ? "fmi2GetBoolean" : "fmi3GetBoolean";
    st = major_ == 2 ? static_cast<int>(api_->get_boolean2(instance_, out_bool_.vrs.data(), n,
                                                           out_bool2_buf_.data()))
                     : static_cast<int>(api_->get_boolean3(instance_, out_bool_.vrs.data(), n,
                                                           out_bool3_buf_.get(), n));
    if (st <= fmi2Warning)
      for (std::size_t j = 0; j < n; ++j)
        values_[out_bool_.slots[j]] =
            (major_ == 2 ? out_bool2_buf_[j] != fmi2False : out_bool3_buf_[j]) ? 1.0 : 0.0;
  }
  for (std::size_t k = 0; st <= fmi2Warning && k < out_other_.size(); ++k)
    st = typed_get(*api_, major_, instance_, out_other_[k], values_.data(), call);
  if (st > fmi2Warning) {
    if (st >= fmi2Error) phase_ = st == fmi2Fatal ? phase::fatal : phase::error;
    return fail(st == fmi2Discard ? fmu_stop::discarded : fmu_stop::failed, call, st,
                fmu_time(comm_t_));
  }
  return true;
}

void fmu_subsystem::do_update_outputs(time_point t) noexcept {
  if (phase_ != phase::initialized && phase_ != phase::terminated) return;
  // FMI co-simulation: outputs at a communication point reflect the inputs set there, so a
  // feedthrough output sees in(i, t).
  if (any_feedthrough_ && any_input_) set_inputs(t);
  if (phase_ != phase::initialized && phase_ != phase::terminated) return;
  der_fetched_ = false;  // of the previous communication point
  comm_t_ = t;
  if (!get_values()) [[unlikely]] {
    // No values at t: the previous ones must not pass for them. Non-finite outputs fail the
    // step that led here, so the run ends at its start (the stop names the call).
    for (std::size_t i = 0; i < output_slot_.size(); ++i)
      set_output(i, std::numeric_limits<double>::quiet_NaN());
    return;
  }
  for (std::size_t i = 0; i < output_slot_.size(); ++i) set_output(i, values_[output_slot_[i]]);
}

std::span<const double> fmu_subsystem::do_output_derivatives(std::size_t o) noexcept {
  if (o >= der_offset_.size() || der_offset_[o] == npos) return {};
  if (!der_fetched_) {
    // All of them in one call, at the first consumer that asks after update_outputs.
    if ((phase_ != phase::initialized && phase_ != phase::terminated) ||
        (stop_ != fmu_stop::none && !end_pending_))
      return {};
    const int st = major_ == 2 ? static_cast<int>(api_->get_output_derivatives2(
                                     instance_, der_vrs_.data(), der_vrs_.size(),
                                     der_orders_.data(), der_values_.data()))
                               : static_cast<int>(api_->get_output_derivatives3(
                                     instance_, der_vrs_.data(), der_vrs_.size(),
                                     der_orders_.data(), der_values_.data(), der_values_.size()));
    if (st > fmi2Warning) {
      if (st >= fmi2Error) phase_ = st == fmi2Fatal ? phase::fatal : phase::error;
      (void)fail(st == fmi2Discard ? fmu_stop::discarded : fmu_stop::failed,
                 major_ == 2 ? "fmi2GetRealOutputDerivatives" : "fmi3GetOutputDerivatives", st,
                 fmu_time(comm_t_));
      return {};
    }
    der_fetched_ = true;
  }
  return {der_values_.data() + der_offset_[o], static_cast<std::size_t>(deriv_order_)};
}

bool fmu_subsystem::do_step(time_point t, duration h) noexcept {
  return do_steps(t, h, 1);
}

// Inlined into do_steps: the per-step path is a doStep call and a status check.
inline bool fmu_subsystem::step_fmi2(double tc, double h) noexcept {
  // With rollback the importer may set a state before tc (FMI 2.0 Sect. 4.2.2).
  const fmi2Status st = api_->do_step2(instance_, tc, h, rollback_ ? fmi2False : fmi2True);
  if (st == fmi2OK || st == fmi2Warning) [[likely]]
    return true;
  return step_fmi2_failed(st, tc, h);
}

inline bool fmu_subsystem::step_fmi3(double tc, double h) noexcept {
  // The common case (a full step, no event) without the early-return loop's bookkeeping.
  fmi3Boolean event = false, terminate = false, early = false;
  fmi3Float64 last = tc + h;
  const fmi3Status st =
      api_->do_step3(instance_, tc, h, !rollback_, &event, &terminate, &early, &last);
  if ((st == fmi3OK || st == fmi3Warning) && !event && !terminate && !early) [[likely]]
    return true;
  return step_fmi3_rest(tc, h, st, event, terminate, early, last);
}

bool fmu_subsystem::do_steps(time_point t, duration h, std::int64_t k) noexcept {
  stepped_ = true;
  if (k <= 0) return true;
  if (phase_ != phase::initialized || stop_ != fmu_stop::none) [[unlikely]]
    return refuse_step();
  step_from_ = t;
  step_to_ = t + k * h;
  for (std::int64_t j = 0; j < k; ++j) {
    const time_point tj = t + j * h;
    if (tj + h > stop_at_) [[unlikely]]
      return fail_stop_time(tj, h);
    // Held inputs are the same at every step of the k: set (if changed) once.
    if (any_input_ && (j == 0 || !inputs_held_)) {
      set_inputs(tj);
      if (stop_ != fmu_stop::none) return false;
    }
    // h from the two points, not a constant: tc + hs is then the next step's tc exactly.
    const double tc = fmu_time(tj), hs = fmu_time(tj + h) - tc;
    if (!(major_ == 2 ? step_fmi2(tc, hs) : step_fmi3(tc, hs))) return false;
  }
  return true;
}

[[gnu::cold, gnu::noinline]] bool fmu_subsystem::fail_stop_time(time_point t, duration h) noexcept {
  const double tc = fmu_time(t), hs = fmu_time(t + h) - tc;
  char what[160];
  std::snprintf(what, sizeof what, "the step from t = %s s to %s s", num_text(tc).data(),
                num_text(tc + hs).data());
  return fail(fmu_stop::stop_time, what, 0, tc);
}

[[gnu::cold, gnu::noinline]] bool fmu_subsystem::step_fmi2_failed(fmi2Status st, double tc,
                                                                  double h) noexcept {
  if (st == fmi2Discard) {
    // FMI 2.0 Sect. 4.2.3: after fmi2Discard, fmi2Terminated tells whether the model wants
    // the simulation to end (then at fmi2LastSuccessfulTime).
    fmi2Boolean terminated = fmi2False;
    if (api_->get_boolean_status2(instance_, fmi2Terminated, &terminated) <= fmi2Warning &&
        terminated != fmi2False) {
      fmi2Real last = tc;
      if (api_->get_real_status2 != nullptr)
        (void)api_->get_real_status2(instance_, fmi2LastSuccessfulTime, &last);
      return end_simulation("fmi2DoStep returned fmi2Discard, fmi2Terminated", st, last);
    }
    phase_ = phase::terminated;
    char what[160];
    std::snprintf(what, sizeof what, "fmi2DoStep over h = %s s", num_text(h).data());
    return fail(fmu_stop::discarded, what, st, tc);
  }
  phase_ = st == fmi2Fatal ? phase::fatal : phase::error;
  return fail(fmu_stop::failed, "fmi2DoStep", st, tc);
}

bool fmu_subsystem::settle_events(double t, bool from_step_mode) noexcept {
  if (from_step_mode) {
    const fmi3Status st = api_->enter_event_mode3(instance_);
    if (st > fmi3Warning) {
      phase_ = st == fmi3Fatal ? phase::fatal : phase::error;
      return fail(fmu_stop::failed, "fmi3EnterEventMode", st, t);
    }
  }
  // FMI 3.0 Sect. 3.2.5: repeat until no discrete state needs another update.
  for (int k = 0; k < max_event_iterations; ++k) {
    fmi3Boolean again = false, terminate = false, nominals = false, values = false,
                next_defined = false;
    fmi3Float64 next = 0.0;
    const fmi3Status st = api_->update_discrete_states3(instance_, &again, &terminate, &nominals,
                                                        &values, &next_defined, &next);
    if (st > fmi3Warning) {
      phase_ = st == fmi3Fatal ? phase::fatal : phase::error;
      return fail(st == fmi3Discard ? fmu_stop::discarded : fmu_stop::failed,
                  "fmi3UpdateDiscreteStates", st, t);
    }
    if (terminate) return end_simulation("fmi3UpdateDiscreteStates: terminateSimulation", st, t);
    if (!again) {
      const fmi3Status s2 = api_->enter_step_mode3(instance_);
      if (s2 > fmi3Warning) {
        phase_ = s2 == fmi3Fatal ? phase::fatal : phase::error;
        return fail(fmu_stop::failed, "fmi3EnterStepMode", s2, t);
      }
      return true;
    }
  }
  phase_ = phase::error;
  return fail(fmu_stop::failed, "fmi3UpdateDiscreteStates kept asking for another iteration",
              no_fmu_status, t);
}

[[gnu::noinline]] bool fmu_subsystem::step_fmi3_rest(double tc, double h, int st0, bool event0,
                                                     bool terminate0, bool early0,
                                                     double last0) noexcept {
  const double end = tc + h;
  double cur = tc;
  for (int k = 0; k < max_early_returns; ++k) {
    fmi3Boolean event = event0, terminate = terminate0, early = early0;
    fmi3Float64 last = last0;
    fmi3Status st = static_cast<fmi3Status>(st0);
    const double step = k == 0 ? h : end - cur;
    if (k > 0) {
      event = terminate = early = false;
      last = end;
      st = api_->do_step3(instance_, cur, step, !rollback_, &event, &terminate, &early, &last);
    }
    if (st == fmi3Error || st == fmi3Fatal) {
      phase_ = st == fmi3Fatal ? phase::fatal : phase::error;
      return fail(fmu_stop::failed, "fmi3DoStep", st, cur);
    }
    // FMI 3.0 Sect. 4.2.1: a discarded step reached lastSuccessfulTime only.
    if (terminate)
      return end_simulation("fmi3DoStep: terminateSimulation", st,
                            early || st == fmi3Discard ? last : end);
    if (st == fmi3Discard) {
      phase_ = phase::terminated;
      char what[160];
      std::snprintf(what, sizeof what, "fmi3DoStep over h = %s s", num_text(step).data());
      return fail(fmu_stop::discarded, what, st, cur);
    }
    const double reached = early ? last : end;
    // An ignored event would lose e.g. a bouncing ball's bounce (issue 11).
    if (event && event_mode_used_ && !settle_events(reached, true)) return false;
    if (!early || !(reached < end)) return true;
    if (!early_return_allowed_) {
      phase_ = phase::error;
      return fail(fmu_stop::failed,
                  "fmi3DoStep returned early although earlyReturnAllowed was "
                  "false",
                  no_fmu_status, reached);
    }
    if (!(reached > cur)) {
      phase_ = phase::error;
      return fail(fmu_stop::failed, "fmi3DoStep returned early without advancing", no_fmu_status,
                  cur);
    }
    cur = reached;
  }
  phase_ = phase::error;
  return fail(fmu_stop::failed, "fmi3DoStep kept returning early", no_fmu_status, cur);
}

}  // namespace cosim::fmi
