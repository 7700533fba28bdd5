// FMI 2.0 / 3.0 co-simulation FMU as a subsystem (see fmu_subsystem.hpp). Calls follow the
// state machines of FMI 2.0 Sect. 4.2.4 and FMI 3.0 Sect. 4.2: instantiate, set parameters,
// (setup experiment,) enter/exit initialisation, [event mode, step mode,] doStep..., then
// terminate and free; after fmiError only free, after fmiFatal nothing.
#include "cosim/fmi/fmu_subsystem.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "cosim/fmi/crash_guard.hpp"
#include "cosim/runtime/error.hpp"
#include "fmu_instance.hpp"
#include "fmu_typed_values.hpp"

namespace cosim::fmi {

namespace {

constexpr std::size_t log_capacity = 256;

void copy_text(char* dst, std::size_t n, const char* src) noexcept {
  if (n == 0) return;
  if (src == nullptr) src = "";
  std::size_t i = 0;
  for (; i + 1 < n && src[i] != '\0'; ++i) dst[i] = src[i];
  dst[i] = '\0';
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
  inst_ = major_ == 2 ? make_fmi2_instance(*this, *api_) : make_fmi3_instance(*this, *api_);
  names_ = &inst_->names();
  inst_->reserve_booleans(1);  // a Boolean parameter
  event_mode_used_ = major_ >= 3 && md.cosim->has_event_mode;
  check_variables(md);
  // An early return is continued to the end of the step, so it is only worth allowing when
  // events are handled in event mode.
  early_return_allowed_ = event_mode_used_ && md.cosim->might_return_early_from_do_step;
  // FMI 2.0 Sect. 4.3.1 / FMI 3.0 Sect. 4.3.1: the FMU gives its outputs' derivatives up to
  // this order at communication points (continuous real outputs).
  deriv_order_ = std::min(md.cosim->max_output_derivative_order, max_extrapolation_order);
  inst_->resolve(*fmu_, event_mode_used_, deriv_order_ > 0);
  check_binary(md);
  add_ports(md);
  check_typed_functions(md);
  build_fetch_groups();
  if (!instantiate) return;  // a description only: the instance lives elsewhere
  instantiate_fmu();
  // Parameters the user set, checked here and set now (FMI: after instantiation, so a value
  // the FMU refuses fails the build early) and again in start_experiment. A constructor
  // that throws gets no destructor call, so the instance is freed here on that path.
  try {
    take_parameters(parameters);
    set_parameters();
  } catch (...) {
    end_instance();
    throw;
  }
  drain_log();
}

void fmu_subsystem::check_variables(const model_description& md) {
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

void fmu_subsystem::check_binary(const model_description& md) {
  if (const std::string why = inst_->binary_mismatch(md); !why.empty()) throw_error(why);
  if (md.cosim->can_be_instantiated_only_once_per_process && fmu_->instances().load() > 0)
    throw_error(
        "canBeInstantiatedOnlyOncePerProcess: the FMU allows one instance per process, "
        "and one exists (use it once per system)");
}

void fmu_subsystem::add_ports(const model_description& md) {
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
}

void fmu_subsystem::check_typed_functions(const model_description& md) {
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

void fmu_subsystem::instantiate_fmu() {
  if (!inst_->instantiate(*fmu_, name(), event_mode_used_, early_return_allowed_))
    throw_error(std::string(names_->instantiate) + " failed (returned NULL)");
  fmu_->instances().fetch_add(1);
  counted_instance_ = true;
}

void fmu_subsystem::set_log_categories(const std::vector<std::string>& categories) {
  std::vector<const char*> names;
  names.reserve(categories.size());
  for (const std::string& c : categories) names.push_back(c.c_str());
  // FMI 2.0 Sect. 2.1.5 / FMI 3.0 Sect. 2.3.1: loggingOn false turns every category off;
  // nCategories 0 would mean all of them.
  const bool on = !categories.empty();
  if (!inst_->has_debug_logging())
    throw_error(std::string("log_categories: its binary does not export ") +
                names_->set_debug_logging);
  const int st = inst_->set_debug_logging(on, names.size(), names.data());
  if (st > fmi2Warning) {
    note_status(st);
    throw_error(std::string(names_->set_debug_logging) + " of log_categories returned " +
                inst_->status_text(st));
  }
  drain_log();
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

fmu_subsystem::~fmu_subsystem() {
  {
    const crash_guard guard(where_.c_str(), names_->termination,
                            "the rows written are kept, and no summary.json claims the run");
    end_instance();
  }
  drain_log();
}

void fmu_subsystem::end_instance() noexcept {
  if (!inst_->instantiated()) return;
  if (phase_ == phase::fatal) {
    // FMI: after fmiFatal no function of the FMU may be called, not even free.
    inst_->abandon();
    return;
  }
  if (fmu_state_ != nullptr) {
    // While the instance is alive (FMI 2.0 Sect. 2.1.8, FMI 3.0 Sect. 2.2.6.4).
    (void)inst_->free_state(&fmu_state_);
    fmu_state_ = nullptr;
  }
  inst_->end(phase_ == phase::initialized || phase_ == phase::terminated);
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
  if (!inst_->instantiated()) throw_error("internal: this FMU subsystem only describes the FMU");
  const model_description& md = fmu_->file().md;
  fmu_start_ = md.experiment.start_time.value_or(0.0);
  if (run_length_s) {
    run_length_ = to_duration(*run_length_s);
    // From the ticks, as the last step's end is: the two are equal bit for bit.
    stop_fmu_ = comm_time(fmu_start_, *run_length_);
    stop_at_ = t0_ + *run_length_;  // again in do_initialize, which knows t0
  }
  experiment_times e;
  e.tolerance_defined = md.experiment.tolerance.has_value();
  e.tolerance = md.experiment.tolerance.value_or(0.0);
  e.start = fmu_start_;
  e.stop = stop_fmu_;
  inst_->initialize(e);
  phase_ = phase::initialized;
  started_ = true;
  check_parameters_kept();
  drain_log();
}

void fmu_subsystem::note_status(int st) noexcept {
  if (st >= fmi2Error) phase_ = st == fmi2Fatal ? phase::fatal : phase::error;
}

bool fmu_subsystem::fail_call(const char* call, int st, double t) noexcept {
  note_status(st);
  return fail(st == fmi2Discard ? fmu_stop::discarded : fmu_stop::failed, call, st, t);
}

// ---- what the adapters reach of their owner (fmu_instance.hpp)

bool fmu_instance::fail(fmu_stop kind, const char* what, int status, double t) noexcept {
  return owner_.fail(kind, what, status, t);
}

bool fmu_instance::end_simulation(const char* what, int status, double last) noexcept {
  return owner_.end_simulation(what, status, last);
}

void fmu_instance::mark_failed(int st) noexcept {
  owner_.phase_ = st == fmi2Fatal ? fmu_subsystem::phase::fatal : fmu_subsystem::phase::error;
}

void fmu_instance::mark_error() noexcept {
  owner_.phase_ = fmu_subsystem::phase::error;
}

void fmu_instance::mark_terminated() noexcept {
  owner_.phase_ = fmu_subsystem::phase::terminated;
}

void fmu_instance::mark_initialized() noexcept {
  owner_.phase_ = fmu_subsystem::phase::initialized;
}

bool fmu_instance::event_mode_used() const noexcept {
  return owner_.event_mode_used_;
}

bool fmu_instance::early_return_allowed() const noexcept {
  return owner_.early_return_allowed_;
}

void fmu_instance::check(int st, const char* call) {
  if (st <= fmi2Warning) return;
  owner_.note_status(st);
  owner_.throw_error(std::string(call) + " returned " + status_text(st));
}

void fmu_instance::set_parameters() {
  owner_.set_parameters();
}

void fmu_instance::throw_error(const std::string& what) {
  owner_.throw_error(what);
}

}  // namespace cosim::fmi
