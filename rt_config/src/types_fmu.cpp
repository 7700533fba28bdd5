// FMUs as subsystem types: `[subsystems.NAME] fmu = "PATH"` names the type "fmu:" + the
// absolute path, resolved here from the FMU's modelDescription.xml (cached per path).
// Parameters are the FMU's scalar variables with causality parameter (default = start,
// range = min/max, unit); its ports are its inputs and outputs; inputs nothing feeds keep
// their start values.
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <mutex>

#include <spdlog/spdlog.h>

#include "cosim/fmi/crash_guard.hpp"
#include "cosim/fmi/fmu_file.hpp"
#include "cosim/fmi/fmu_subsystem.hpp"
#include "cosim/rt_config/type_registry.hpp"
#include "cosim/runtime/error.hpp"
#include "cosim/runtime/json_writer.hpp"
#include "fmu_types.hpp"

namespace cosim::config {

namespace {

std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  return s;
}

param_decl declare(const fmi::variable& v, int major, const std::string& path) {
  param_decl d;
  d.name = v.name;
  d.unit = v.unit;
  d.doc = one_line(v.description);
  const std::string type = fmi::type_name(v.type, major);
  if (v.type == fmi::var_type::string && !v.is_array) {
    d.kind = param_kind::text;
    d.def = v.start_text.value_or("");
    return d;
  }
  if (!fmi::is_exchanged(v)) {
    // Declared so that a file setting it gets a clear refusal, not "no parameter".
    d.kind = param_kind::text;
    d.def = v.start_text.value_or("");
    d.doc = type + (v.is_array ? " array" : "") + ", cannot be set here" +
            (d.doc.empty() ? "" : "; " + d.doc);
    d.not_settable = path + ": parameter \"" + v.name + "\" has type " + type +
                     (v.is_array ? " array (<Dimension>)" : "") +
                     ", which cannot be set (supported: single numbers, Boolean, Enumeration, "
                     "String)";
    return d;
  }
  switch (v.type) {
    case fmi::var_type::boolean:
      d.kind = param_kind::boolean;
      d.def = v.start.value_or(0.0) != 0.0;
      break;
    case fmi::var_type::real:
    case fmi::var_type::float32:
      d.kind = param_kind::real;
      // No start (FMI 2 requires one; some FMUs omit it): NaN stands for "the FMU's own
      // value", which create() then leaves alone instead of overwriting it with 0.
      d.def = v.start.value_or(std::numeric_limits<double>::quiet_NaN());
      if (!v.start)
        d.doc = "no start: the FMU's own value unless set" + (d.doc.empty() ? "" : "; " + d.doc);
      break;
    default:  // Integer / Int32 and the other integer types, Enumeration
      d.kind = param_kind::integer;
      d.def = static_cast<std::int64_t>(std::llround(v.start.value_or(0.0)));
      break;
  }
  if (v.type != fmi::var_type::boolean) {
    if (v.min && std::isfinite(*v.min)) d.min = *v.min;
    if (v.max && std::isfinite(*v.max)) d.max = *v.max;
  }
  return d;
}

std::unique_ptr<subsystem_type> make_type(const std::shared_ptr<const fmi::fmu_file>& file) {
  const fmi::model_description& md = file->md;
  fmi::require_cosimulation(*file);
  auto t = std::make_unique<subsystem_type>();
  t->name = fmu_type_name(file->path);
  t->description = "FMU " + md.model_name + " (FMI " + md.fmi_version + " co-simulation" +
                   (md.description.empty() ? ")" : "): " + one_line(md.description));
  std::vector<std::size_t> param_vars;
  for (std::size_t k = 0; k < md.variables.size(); ++k) {
    const fmi::variable& v = md.variables[k];
    // Structural parameters need configuration mode, which this importer does not use.
    if (v.causal != fmi::causality::parameter) continue;
    if (v.variab == fmi::variability::constant) continue;
    t->parameters.push_back(declare(v, md.fmi_major, file->path));
    param_vars.push_back(k);
  }
  t->integrators = {"fmu"};
  const std::optional<double> step = md.experiment.step_size;
  t->default_step = [step](double H, const param_set& /*p*/) {
    if (!step) return H;
    const auto hn = to_duration(*step).count(), Hn = to_duration(H).count();
    return hn > 0 && hn <= Hn && Hn % hn == 0 ? *step : H;
  };
  t->unfed_inputs_keep_start = true;
  // Manoeuvres and test inputs on an FMU input move it around its start value.
  for (const fmi::variable& v : md.variables)
    if (v.causal == fmi::causality::input && v.start && fmi::is_exchanged(v))
      t->input_starts[v.name] = *v.start;
  if (md.experiment.stop_time)
    t->default_duration = *md.experiment.stop_time - md.experiment.start_time.value_or(0.0);
  t->default_macro_step = md.experiment.step_size;
  t->create = [file, param_vars](const std::string& name, const param_set& p,
                                 const std::string& /*integrator*/) {
    const fmi::model_description& d = file->md;
    std::vector<fmi::parameter_value> values;
    // Only those the file sets (only_given_parameters): the others keep the binary's values.
    for (std::size_t k : param_vars) {
      const fmi::variable& v = d.variables[k];
      const auto it = p.find(v.name);
      if (it == p.end()) continue;
      const param_value& pv = it->second;
      if (const std::string* text = std::get_if<std::string>(&pv)) {
        // Others than String are never set: resolve_parameters refuses them (not_settable).
        if (v.type == fmi::var_type::string) values.push_back({k, 0.0, *text});
        continue;
      }
      double x = 0.0;
      if (const double* r = std::get_if<double>(&pv)) {
        if (std::isnan(*r) && !v.start) continue;  // not set, no start: the FMU keeps its own
        x = *r;
      }
      if (const std::int64_t* i = std::get_if<std::int64_t>(&pv)) x = static_cast<double>(*i);
      if (const bool* b = std::get_if<bool>(&pv)) x = *b ? 1.0 : 0.0;
      values.push_back({k, x, std::nullopt});
    }
    // Before the results folder is touched: a crash here exits 2 naming the FMU.
    const fmi::crash_guard guard(file->path.c_str(),
                                 "loading or instantiation (dlopen, instantiate, parameters)");
    return std::make_unique<fmi::fmu_subsystem>(name, fmi::load_fmu(file), values);
  };
  t->only_given_parameters = true;
  t->describe = [file](const std::string& name, const prepare_options& o) {
    const fmi::crash_guard guard(file->path.c_str(), "loading (dlopen, version checks)");
    auto f = std::make_unique<fmi::fmu_subsystem>(name, fmi::load_fmu(file),
                                                  std::vector<fmi::parameter_value>{}, false);
    if (o.no_feedthrough) f->declare_no_feedthrough();
    return f;
  };
  t->prepare = [file](subsystem& s, const prepare_options& o) {
    const fmi::crash_guard guard(file->path.c_str(),
                                 "initialisation (setup, enter / exit initialisation mode)");
    // `s` was made by this type's create.
    auto& f = static_cast<fmi::fmu_subsystem&>(s);
    f.refuse_changed_parameters(o.refuse_changed_parameters);
    if (o.no_feedthrough) f.declare_no_feedthrough();
    f.start_experiment(o.run_length);
    if (o.probe_feedthrough) {
      const fmi::fmu_subsystem::probe_result r = f.probe_feedthrough();
      // Outputs that moved have direct feedthrough: declaring none would be wrong.
      if (r.moved && o.no_feedthrough)
        spdlog::warn(
            "{} (subsystem {}): feedthrough probe: {}; subsystems.{}.no_feedthrough = true "
            "declares that these outputs do not depend on the inputs directly, which the FMU "
            "contradicts",
            file->path, s.name(), r.text, s.name());
      else
        spdlog::info("{} (subsystem {}): feedthrough probe (undeclared dependencies): {}{}",
                     file->path, s.name(), r.text,
                     r.moved ? "" : "; consistent with no direct feedthrough");
    }
  };
  return t;
}

}  // namespace

const subsystem_type* fmu_subsystem_type(const std::string& path) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<subsystem_type>> cache;
  std::error_code ec;
  std::filesystem::path p = std::filesystem::absolute(path, ec);
  if (ec) p = path;
  const std::string key = p.lexically_normal().string();
  const std::lock_guard lock(mutex);
  auto it = cache.find(key);
  if (it == cache.end()) it = cache.emplace(key, make_type(fmi::read_fmu(key))).first;
  return it->second.get();
}

const subsystem_type* single_fmu_type(const system_spec& s) {
  const subsystem_type* found = nullptr;
  for (const auto& d : s.subsystems) {
    if (!is_fmu_type(d.type)) continue;
    if (found != nullptr) return nullptr;
    found = find_subsystem_type(d.type);
  }
  return found;
}

namespace {

constexpr std::string_view fmu_type_prefix = "fmu:";

}  // namespace

std::string fmu_type_name(std::string_view absolute_path) {
  return std::string(fmu_type_prefix) + std::string(absolute_path);
}

bool is_fmu_type(std::string_view type) noexcept {
  return type.starts_with(fmu_type_prefix);
}

std::optional<std::string> fmu_path_of(std::string_view type) {
  if (!is_fmu_type(type)) return std::nullopt;
  return std::string(type.substr(fmu_type_prefix.size()));
}

}  // namespace cosim::config
