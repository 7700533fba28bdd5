#include "cosim/rt_config/scenario.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "alarm_keys.hpp"
#include "config_echo.hpp"
#include "cosim/rt_config/config_reader.hpp"
#include "cosim/rt_config/driver_wiring.hpp"
#include "cosim/rt_config/model_registry.hpp"
#include "cosim/rt_config/plugin.hpp"
#include "cosim/rt_config/type_registry.hpp"
#include "cosim/runtime/json_writer.hpp"
#include "cosim/runtime/limits.hpp"
#include "cosim/runtime/scheme.hpp"
#include "dds_config.hpp"
#include "fmu_types.hpp"
#include "iteration_keys.hpp"
#include "ssp_reader.hpp"
#include "summary_source.hpp"
#include "system_file.hpp"

namespace cosim::config {

namespace {

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& e : v) s += (s.empty() ? "" : ", ") + e;
  return s;
}

// `prefix` is "" for a preset's [multibody] tables, "subsystems." in a system file.
void read_subsystem(config_reader& r, const subsystem_spec& spec, double H, subsystem_config& sc,
                    const std::string& prefix, bool fast_step) {
  const std::string base = prefix + spec.name;
  const std::string step_key = base + ".step";
  // 004 Sect. 2: smoothing on a (fast) producer, own non-matching time grid.
  sc.smoothing = r.opt_bool(base + ".smoothing").value_or(false);
  sc.non_matching = r.opt_bool(base + ".non_matching").value_or(false);
  // The rule is limits::internal_step (runtime); here it gets the key and a hint.
  const duration Hd = to_duration(H);
  const std::string grid_hint = " (set " + base + ".non_matching = true for an own time grid)";
  // Fast-step delivery: a subsystem slower than H steps on its own grid (004 Sect. 2.1).
  const bool own_grid = sc.non_matching || fast_step;
  if (auto step = r.opt_double(step_key)) {
    check_positive(r, step_key, *step);
    if (*step > max_run_seconds)
      r.fail(step_key, "must be at most " + format_double(max_run_seconds) + " s");
    const std::string why = limits::internal_step(to_duration(*step), Hd, own_grid);
    if (!why.empty())
      r.fail(step_key, step_key + " = " + format_double(*step) + " s " + why +
                           (why.find("internal steps") == std::string::npos ? grid_hint : ""));
    sc.step = *step;
    sc.step_set = true;
  } else {
    sc.step = spec.default_step(H);
    const std::string why = limits::internal_step(to_duration(sc.step), Hd, own_grid);
    if (why.find("internal steps") != std::string::npos)
      r.fail("run.macro_step", "with the default " + step_key + " = " + format_double(sc.step) +
                                   " s, one macro step " + why);
    if (!why.empty())
      r.fail(step_key, "the default step " + format_double(sc.step) + " s " + why + " (set " +
                           step_key + ", or " + base + ".non_matching = true)");
  }
  sc.integrator = r.opt_string(base + ".integrator").value_or(spec.integrators.front());
  check_choice(r, base + ".integrator", sc.integrator, spec.integrators);
  const std::string host = r.opt_string(base + ".host").value_or("local");
  check_choice(r, base + ".host", host, {"local", "dds", "process"});
  sc.remote = host != "local";
  sc.process = host == "process";
  if (prefix == "subsystems.") sc.log_categories = r.opt_string_list(base + ".log_categories");
  if (prefix == "subsystems.") {
    // Read for every system-file subsystem; the builder refuses them on one that is no FMU.
    const std::string changed = r.opt_string(base + ".changed_parameters").value_or("warn");
    check_choice(r, base + ".changed_parameters", changed, {"warn", "refuse"});
    sc.refuse_changed_parameters = changed == "refuse";
    sc.no_feedthrough = r.opt_bool(base + ".no_feedthrough").value_or(false);
    sc.probe_feedthrough = r.opt_bool(base + ".probe_feedthrough").value_or(false);
  }
}

// [coupling.order]: "subsystem.input" = order, quoted or as dotted keys (which TOML and
// --set coupling.order.mass1.x2=1 turn into nested tables).
void flatten_orders(config_reader& r, const toml::table& t, const std::string& prefix,
                    const std::vector<std::string>& names, std::map<std::string, int>& out) {
  for (const auto& [k, v] : t) {
    const std::string key =
        prefix.empty() ? std::string(k.str()) : prefix + "." + std::string(k.str());
    if (const toml::table* sub = v.as_table()) {
      flatten_orders(r, *sub, key, names, out);
      continue;
    }
    const auto dot = key.find('.');
    const std::string sub_name = dot == std::string::npos ? key : key.substr(0, dot);
    if (dot == std::string::npos || dot + 1 == key.size() ||
        std::find(names.begin(), names.end(), sub_name) == names.end())
      r.fail("coupling.order",
             "entry \"" + key +
                 "\" must name a consumer input as \"subsystem.input\" (subsystems: " +
                 join(names) + ")");
    const auto* iv = v.as_integer();
    if (iv == nullptr || iv->get() < 0 || iv->get() > max_extrapolation_order)
      r.fail("coupling.order", "entry \"" + key + "\": the order must be an integer from 0 to 4");
    out[key] = static_cast<int>(iv->get());
  }
}

// A system file's subsystems as specs for read_subsystem: integrators and default step
// from the registered type, with the parameters the file gives.
std::vector<subsystem_spec> system_specs(const scenario& sc) {
  std::vector<subsystem_spec> specs;
  for (const auto& d : sc.system.subsystems) {
    const subsystem_type* t = find_subsystem_type(d.type);
    const param_set p = resolve_parameters(*t, d.parameters, d.at.where, d.at.key + ".parameters");
    specs.push_back({d.name, [t, p](double H) { return t->default_step(H, p); }, t->integrators});
  }
  return specs;
}

// run.delivery (004 Sect. 2.1): read before the subsystems, whose default steps and H
// depend on it.
void read_delivery(config_reader& r, scenario& sc) {
  const std::string d = r.opt_string("run.delivery").value_or("macro-step");
  check_choice(r, "run.delivery", d, {"macro-step", "fast-step"});
  sc.run.fast_step = d == "fast-step";
  const std::string timing = r.opt_string("run.fast_step_timing").value_or("newest");
  check_choice(r, "run.fast_step_timing", timing, {"newest", "table1"});
  sc.run.table1_timing = timing == "table1";
  if (sc.run.table1_timing && !sc.run.fast_step)
    r.fail("run.fast_step_timing", "\"table1\" needs run.delivery = \"fast-step\"");
}

// Fast-step delivery is 004's interface: H is the fast step, the order is slowest-first or
// fastest-first, and nothing steps faster than H.
void check_fast_step(config_reader& r, scenario& sc) {
  if (!sc.run.sync)
    r.fail("run.delivery",
           "\"fast-step\" needs run.sync = \"slowest-first\" or "
           "\"fastest-first\" (004 Sect. 2.1: which subsystem runs ahead)");
  const duration H = to_duration(sc.run.macro_step);
  for (const auto& [name, cfg] : sc.subsystems)
    if (to_duration(cfg.step) < H)
      r.fail((sc.preset ? "" : "subsystems.") + name + ".step",
             "is smaller than run.macro_step = " + format_double(sc.run.macro_step) +
                 " s; with run.delivery = \"fast-step\" H is the fastest subsystem's step "
                 "(set run.macro_step to it)");
  // Fastest-first, 004 Table 1 steps the slow side inside a fast step when its grid point
  // does not fall on one, extrapolating the fast samples; the runtime steps it at the next
  // fast grid point, so table1 is exact only on matching grids.
  if (sc.run.table1_timing && *sc.run.sync == scheme::sync::fastest_first)
    for (const auto& [name, cfg] : sc.subsystems)
      if (to_duration(cfg.step).count() % H.count() != 0)
        r.fail("run.fast_step_timing",
               "\"table1\" with run.sync = \"fastest-first\" needs every step a multiple of "
               "run.macro_step = " +
                   format_double(sc.run.macro_step) + " s; " + name +
                   ".step = " + format_double(cfg.step) + " s is not");
}

// `plugins = ["libmy_models.so", ...]`: loaded before any subsystem type is looked up; paths
// relative to the file, kept absolute (printed back so, and echoed in summary.json).
void read_plugins(config_reader& r, scenario& sc) {
  const auto list = r.opt_string_list("plugins");
  if (!list) return;
  for (const std::string& p : *list) {
    std::filesystem::path path = p;
    if (path.is_relative()) path = std::filesystem::path(sc.file).parent_path() / path;
    path = std::filesystem::absolute(path).lexically_normal();
    load_plugin(path.string(), r.where("plugins") + ": plugins");
    sc.plugins.push_back(path.string());
  }
}

scenario read(config_reader& r) {
  scenario sc;
  sc.file = r.file();
  read_plugins(r, sc);
  const model_entry* model = nullptr;
  std::vector<subsystem_spec> specs;
  std::string prefix;
  if (r.has("model") || !r.has("subsystems")) {
    // A preset: a [model] that expands into the open description.
    if (r.has("subsystems"))
      r.fail("subsystems",
             "a file is either a preset ([model]) or a system ([subsystems.*]), "
             "not both");
    sc.preset = true;
    sc.model = r.get_string("model.name");
    model = find_model(sc.model);
    if (model == nullptr) {
      std::vector<std::string> names;
      for (const auto& m : models()) names.push_back(m.name);
      r.fail("model.name", "unknown model (known: " + join(names) + ")");
    }
    model->read(r, sc);
    read_delivery(r, sc);
    if (!model->reduced_interface && r.has("model.interface") &&
        r.get_string("model.interface") != "direct")
      r.fail("model.interface", "model '" + sc.model +
                                    "' cannot provide the effective mass matrix and force (001 "
                                    "Eqs. (12)-(13)) a reduced interface model needs; only "
                                    "\"direct\"");
    specs = sc.run.fast_step && model->fast_step_subsystems ? model->fast_step_subsystems(sc)
                                                            : model->subsystems;
  } else {
    (void)read_system_subsystems(r, sc);
    read_delivery(r, sc);
    specs = system_specs(sc);
    prefix = "subsystems.";
  }
  r.ignore("tune");    // read by `cosim tune`
  r.ignore("checks");  // [[checks]]: read by `cosim check --checks` (docs/ci.md)

  {
    const std::string mode = r.opt_string("run.mode").value_or("offline");
    check_choice(r, "run.mode", mode, {"offline", "threaded", "realtime", "lockstep"});
    sc.run.mode = mode == "offline"    ? run_mode::offline
                  : mode == "threaded" ? run_mode::threaded
                  : mode == "lockstep" ? run_mode::lockstep
                                       : run_mode::realtime;
  }
  // A system of one FMU runs its DefaultExperiment unless [run] says otherwise.
  const subsystem_type* fmu = sc.preset ? nullptr : single_fmu_type(sc.system);
  if (!r.has("run.duration") && fmu == nullptr && !sc.preset) {
    // Several FMUs: whose DefaultExperiment would win is not ours to guess; say what they
    // declare so the user can choose.
    std::string declared;
    for (const auto& d : sc.system.subsystems) {
      if (!is_fmu_type(d.type)) continue;
      const subsystem_type* t = find_subsystem_type(d.type);
      if (t != nullptr && t->default_duration)
        declared += (declared.empty() ? "" : ", ") + d.name + ": " +
                    format_double(*t->default_duration) + " s";
    }
    if (!declared.empty())
      throw error(errc::config_key,
                  r.file() +
                      ": missing key 'run.duration' (number): a system of several FMUs does "
                      "not take one FMU's DefaultExperiment (their experiment lengths: " +
                      declared + "); give [run] duration = SECONDS (and macro_step)");
  }
  sc.run.duration = !r.has("run.duration") && fmu != nullptr && fmu->default_duration
                        ? *fmu->default_duration
                        : r.get_double("run.duration");
  check_positive(r, "run.duration", sc.run.duration);
  if (sc.run.duration > max_run_seconds)
    r.fail("run.duration", "must be at most " + format_double(max_run_seconds) +
                               " s (simulation time is kept in integer nanoseconds)");
  if (!r.has("run.macro_step") && model != nullptr && model->default_macro_step) {
    sc.run.macro_step = model->default_macro_step(sc);
  } else if (!r.has("run.macro_step") && fmu != nullptr && fmu->default_macro_step) {
    sc.run.macro_step = *fmu->default_macro_step;
  } else if (!r.has("run.macro_step") && fmu != nullptr) {
    throw error(errc::config_key,
                r.file() +
                    ": missing key 'run.macro_step' (number): the FMU's DefaultExperiment gives "
                    "no stepSize; give [run] macro_step = SECONDS (or --set run.macro_step=...)");
  } else {
    sc.run.macro_step = r.get_double("run.macro_step");
  }
  check_positive(r, "run.macro_step", sc.run.macro_step);
  if (sc.run.macro_step > sc.run.duration && !r.has("run.macro_step") && model != nullptr &&
      !model->default_macro_step_key.empty()) {
    // The default follows a model key: name the key the user gave (or the duration).
    const std::string& key = model->default_macro_step_key;
    const std::string step = "the default run.macro_step = " + format_double(sc.run.macro_step) +
                             " s (it follows " + key + ")";
    if (r.has(key))
      r.fail(key, "gives " + step +
                      ", longer than run.duration = " + format_double(sc.run.duration) +
                      " s; set run.macro_step or a longer "
                      "run.duration");
    r.fail("run.duration", "is shorter than " + step + "; set run.macro_step");
  }
  if (sc.run.macro_step > sc.run.duration)
    r.fail("run.macro_step", "is longer than run.duration = " + format_double(sc.run.duration) +
                                 " s; a run needs at least one whole macro step (allowed: 1 ns "
                                 "to run.duration)");
  if (to_duration(sc.run.macro_step).count() <= 0)
    r.fail("run.macro_step", "is below the 1 ns time resolution (allowed: 1 ns to run.duration)");
  {
    std::string scheme = r.opt_string("run.scheme").value_or("jacobi");
    if (scheme == "gauss_seidel") scheme = "gauss-seidel";
    check_choice(r, "run.scheme", scheme, {"jacobi", "gauss-seidel"});
    sc.run.scheme = scheme == "jacobi" ? scheme_kind::jacobi : scheme_kind::gauss_seidel;
  }
  std::vector<std::string> names;
  names.reserve(specs.size());
  for (const auto& s : specs) names.push_back(s.name);
  sc.run.order = r.opt_string_list("run.order").value_or(names);
  {
    std::vector<std::string> a = sc.run.order, b = names;
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    if (a != b) r.fail("run.order", "must list each subsystem exactly once: " + join(names));
  }
  if (auto oi = r.opt_double("run.output_interval")) {
    if (!(*oi >= 0.0) || !std::isfinite(*oi)) r.fail("run.output_interval", "must be >= 0");
    if (*oi > max_run_seconds)
      r.fail("run.output_interval", "must be at most " + format_double(max_run_seconds) + " s");
    const auto on = to_duration(*oi).count();
    if (*oi > 0.0 && on == 0)
      r.fail("run.output_interval", "must be 0 (every macro step) or at least run.macro_step");
    const auto Hn = to_duration(sc.run.macro_step).count();
    if (on != 0 && (on < Hn || on % Hn != 0))
      r.fail("run.output_interval", "must be a whole multiple of run.macro_step");
    sc.run.output_interval = *oi;
  }
  for (const auto& spec : specs)
    read_subsystem(r, spec, sc.run.macro_step, sc.subsystems[spec.name], prefix, sc.run.fast_step);
  if (auto sync = r.opt_string("run.sync")) {
    // 004 Sect. 2.1: Gauss-Seidel with the slowest (largest step) or the fastest subsystem
    // first; the others follow by step size.
    // It replaces run.order (e.g. --set run.sync=fastest-first on a file that lists the
    // slowest-first order).
    check_choice(r, "run.sync", *sync, {"slowest-first", "fastest-first"});
    if (r.has("run.scheme") && sc.run.scheme != scheme_kind::gauss_seidel)
      r.fail("run.sync", std::string("is a Gauss-Seidel order; remove run.scheme = \"") +
                             to_string(sc.run.scheme) + "\"");
    sc.run.sync =
        *sync == "slowest-first" ? scheme::sync::slowest_first : scheme::sync::fastest_first;
    sc.run.scheme = scheme_kind::gauss_seidel;
    sc.run.order = names;
    std::stable_sort(sc.run.order.begin(), sc.run.order.end(),
                     [&](const std::string& a, const std::string& b) {
                       const double ha = sc.subsystems[a].step, hb = sc.subsystems[b].step;
                       return sc.run.sync == scheme::sync::slowest_first ? ha > hb : ha < hb;
                     });
  }
  if (sc.run.fast_step) check_fast_step(r, sc);
  if (auto m = r.opt_int("coupling.extrapolation")) {
    if (*m < 0 || *m > max_extrapolation_order)
      r.fail("coupling.extrapolation", "must be an integer from 0 to 4");
    sc.coupling.extrapolation = static_cast<int>(*m);
  }
  sc.coupling.energy_correction = r.opt_bool("coupling.energy_correction").value_or(false);
  sc.coupling.energy_correction_method =
      r.opt_string("coupling.energy_correction_method").value_or("remove");
  check_choice(r, "coupling.energy_correction_method", sc.coupling.energy_correction_method,
               {"remove", "balance"});
  sc.coupling.feedthrough_correction =
      r.opt_bool("coupling.feedthrough_correction").value_or(false);
  if (r.has("coupling.order")) {
    (void)r.table_keys("coupling.order");  // fails unless it is a table
    flatten_orders(r, *r.table().at_path("coupling.order").as_table(), "", names,
                   sc.coupling.order);
    r.ignore("coupling.order");
  }
  if (auto v = r.opt_double("safety.energy_residual_limit")) {
    check_positive(r, "safety.energy_residual_limit", *v);
    sc.safety.energy_residual_limit = *v;
  }
  if (auto v = r.opt_double("safety.residual_power_limit")) {
    check_positive(r, "safety.residual_power_limit", *v);
    sc.safety.residual_power_limit = *v;
  }
  read_drivers(r, sc);  // before read_realtime: [threads.<driver>] may place a driver
  if (sc.run.mode != run_mode::realtime && sc.run.mode != run_mode::lockstep)
    for (const auto& d : sc.drivers)
      if (d.direction == drivers::driver_direction::input)
        r.fail("run.mode", "cannot run input driver drivers." + d.name +
                               ": hardware input arrives in wall-clock time, and an " +
                               to_string(sc.run.mode) +
                               " run would race ahead of it (or stall waiting); use "
                               "run.mode = \"realtime\" (or \"lockstep\" with a device that "
                               "follows simulation time), or remove [drivers." +
                               d.name + "] and give the input a signal source");
  read_events(r, sc);           // after read_drivers: events act on drivers
  iteration_keys::read(r, sc);  // after read_drivers: drivers cannot roll back
  read_dds(r, sc);
  read_realtime(r, sc);
  if (!sc.preset)
    read_system_rest(r, sc);
  else if (model->expand)
    sc.system = model->expand(sc);
  alarm_keys::read(r, sc);  // on the system's columns
  r.check_all_read();
  return sc;
}

}  // namespace

const char* to_string(run_mode m) noexcept {
  switch (m) {
    case run_mode::offline:
      return "offline";
    case run_mode::threaded:
      return "threaded";
    case run_mode::realtime:
      return "realtime";
    case run_mode::lockstep:
      return "lockstep";
  }
  return "offline";
}

double dividing_step(double H, double limit) {
  const std::int64_t Hn = to_duration(H).count();
  std::int64_t k = static_cast<std::int64_t>(std::ceil(H / limit - 1e-9));
  if (k < 1) k = 1;
  while (Hn % k != 0) ++k;
  return to_seconds(duration{Hn / k});
}

void check_choice(config_reader& r, const std::string& key, const std::string& value,
                  const std::vector<std::string>& allowed) {
  if (std::find(allowed.begin(), allowed.end(), value) == allowed.end())
    r.fail(key, "must be one of: " + join(allowed));
}

void check_positive(config_reader& r, const std::string& key, double v) {
  if (!(v > 0.0) || !std::isfinite(v)) r.fail(key, "must be a positive, finite number");
}

const std::vector<model_entry>& models() {
  static const std::vector<model_entry> all{
      crane_model_entry(),
      crane2_model_entry(),
      oscillator2_model_entry(),
      oscillator3_model_entry(),
      oscillator_nonlinear_model_entry(),
      oscillator004_model_entry(),
  };
  return all;
}

const model_entry* find_model(const std::string& name) {
  for (const auto& m : models())
    if (m.name == name) return &m;
  return nullptr;
}

scenario load_scenario(const std::string& path, const std::vector<std::string>& sets) {
  if (is_ssp_path(path)) {
    config_reader r = read_ssp(path, sets);  // SSP 1.0 (ssp_reader.hpp), sets applied
    scenario sc = read(r);
    sc.sets = sets;
    return sc;
  }
  if (is_summary_path(path)) {
    // A finished run's summary.json: the system it ran (config.system_toml), read as if it
    // were the file itself, so that messages and relative paths name the summary.
    config_reader r = config_reader::from_string(read_summary_system(path), path);
    r.apply_overrides(sets);
    scenario sc = read(r);
    sc.sets = sets;
    return sc;
  }
  config_reader r = config_reader::from_file(path);
  r.apply_overrides(sets);
  scenario sc = read(r);
  sc.sets = sets;
  return sc;
}

scenario parse_scenario(const std::string& text, const std::string& name,
                        const std::vector<std::string>& sets) {
  config_reader r = config_reader::from_string(text, name);
  r.apply_overrides(sets);
  scenario sc = read(r);
  sc.sets = sets;
  return sc;
}

namespace {

// Fast-step delivery: a consumer whose own step spans k fast samples evaluates its inputs
// inside that span on 004's points, so it keeps k + 6 samples (order 4 needs 5, plus the
// one after t). With table1 timing a fast consumer of a slower producer evaluates on the
// samples 004 Table 1 would have produced by then (order 4 needs 5, plus up to 3 later).
void keep_dense_histories(const scenario& sc, built_scenario& b) {
  const std::int64_t H = to_duration(sc.run.macro_step).count();
  for (const connection& c : b.sys.connections()) {
    const subsystem& to = b.sys.at(c.to);
    const std::int64_t h = scheme::internal_step(to).count();
    if (h <= H) {
      if (sc.run.table1_timing && scheme::internal_step(b.sys.at(c.from)).count() > H)
        b.sys.at(c.to).input(c.input).keep_dense_history(max_extrapolation_order + 4,
                                                         sc.run.sync == scheme::sync::slowest_first
                                                             ? dense_points::first_at_or_after
                                                             : dense_points::last_before);
      continue;
    }
    const auto k = static_cast<std::size_t>((h + H - 1) / H);
    b.sys.at(c.to).input(c.input).keep_dense_history(k + max_extrapolation_order + 2);
  }
}

// In Jacobi without iterations a consumer's newest sample at the start of a macro step is
// the producer's value at that time, and an extrapolation of the samples up to a time gives
// the newest sample there. A subsystem that reads an input only at its step starts and for
// outputs depending on it (an FMU), stepping once per macro step, therefore receives the
// zero-order hold whatever the order: refused, rather than a setting with no effect.
void refuse_extrapolation_without_effect(const scenario& sc, built_scenario& b) {
  if (sc.run.scheme != scheme_kind::jacobi || sc.run.iteration.enabled()) return;
  for (const connection& c : b.sys.connections()) {
    subsystem& to = b.sys.at(c.to);
    const input_port& in = to.input(c.input);
    if (in.order() == 0 || in.source() != nullptr || !to.reads_inputs_at_step_starts() ||
        to.multirate().active() || to.step_size() != b.plan.macro_step)
      continue;
    bool feeds_output = false;
    for (std::size_t o = 0; o < to.output_count(); ++o)
      feeds_output = feeds_output || to.output_depends_on(o, c.input);
    if (feeds_output) continue;
    const std::string ref = to.name() + "." + in.desc().name;
    std::string key = "coupling.extrapolation";
    if (sc.coupling.order.count(ref) != 0) key = "coupling.order.\"" + ref + "\"";
    for (const auto& d : sc.system.connections)
      if (d.to == ref && d.extrapolation) key = d.at.key + ".extrapolation";
    throw error(errc::config_value,
                sc.file + ": " + key + " = " + std::to_string(in.order()) + " for " + ref +
                    " has no effect: '" + to.name() +
                    "' sets its inputs at the start of each of its steps, its step is the macro "
                    "step, and there the extrapolation is the newest sample itself (no output "
                    "of it depends on " +
                    ref +
                    " directly, where the value at the step's end would be used); it would "
                    "receive the zero-order hold. Give this input extrapolation = 0, or "
                    "subsystems." +
                    to.name() +
                    ".step smaller than run.macro_step so that it receives extrapolated values "
                    "at its substeps (docs/coupling.md)");
  }
}

}  // namespace

void fill_plan(const scenario& sc, built_scenario& b) {
  run_plan& plan = b.plan;
  plan.macro_step = to_duration(sc.run.macro_step);
  plan.macro_steps =
      static_cast<std::int64_t>(std::ceil(sc.run.duration / sc.run.macro_step - 1e-9));
  plan.scheme = sc.run.scheme;
  plan.order.clear();
  for (const auto& name : sc.run.order) plan.order.push_back(b.sys.index_of(name));
  plan.output_every = sc.run.output_interval > 0.0
                          ? to_duration(sc.run.output_interval).count() / plan.macro_step.count()
                          : 1;
  plan.iteration = sc.run.iteration;
  for (const auto& [name, cfg] : sc.subsystems) {
    subsystem& sub = b.sys.at(b.sys.index_of(name));
    sub.set_step_size(to_duration(cfg.step));
    // Fast-step delivery: a slower subsystem steps on its own grid, ahead when it goes first.
    const bool own_grid = sc.run.fast_step && to_duration(cfg.step) > plan.macro_step;
    const bool ahead = own_grid && sc.run.sync == scheme::sync::slowest_first;
    if (cfg.smoothing || cfg.non_matching || own_grid)
      scheme::configure_multirate(sub, {cfg.smoothing, cfg.non_matching || own_grid, ahead},
                                  to_duration(cfg.step), plan.macro_step);
  }
  if (sc.run.fast_step) keep_dense_histories(sc, b);
  for (const connection& c : b.sys.connections())
    b.sys.at(c.to).input(c.input).set_order(sc.coupling.extrapolation);
  // [coupling.order] overrides per consumer input (004 Sect. 2.1: orders per direction).
  for (const auto& [ref, order] : sc.coupling.order) {
    std::size_t c = 0;
    try {
      c = b.sys.connection_to(ref);
    } catch (const error& e) {
      throw error(errc::config_value,
                  sc.file + ": coupling.order: entry \"" + ref + "\": " + e.what());
    }
    const connection& cn = b.sys.connections()[c];
    b.sys.at(cn.to).input(cn.input).set_order(order);
  }
  apply_connection_orders(sc, b);  // [[connections]] extrapolation / hold
  refuse_extrapolation_without_effect(sc, b);
  apply_energy_correction(sc, b);
  apply_feedthrough_correction(sc, b);
  b.limits.energy_residual = sc.safety.energy_residual_limit;
  b.limits.residual_power = sc.safety.residual_power_limit;
  b.limits.grace_ns = sc.rt.watchdog.grace_ns;
  b.limits.alarms.clear();
  for (const alarm_config& a : sc.alarms) b.limits.alarms.push_back(a.spec);
}

std::unique_ptr<built_scenario> build(const scenario& sc, const stop_source* setup_stop) {
  auto b = std::make_unique<built_scenario>();
  b->setup_stop = setup_stop;
  const model_entry* model = sc.preset ? find_model(sc.model) : nullptr;
  if (sc.preset && !model->expand) {
    model->build(sc, *b);  // transitional: a model not yet expanded into a system_spec
    add_drivers(sc, *b);   // no-op for drivers the model already added
  } else {
    build_system(sc, *b);
  }
  fill_plan(sc, *b);
  // Before any results folder is touched (an FMU without canGetAndSetFMUstate).
  try {
    check_rollback(b->sys, b->plan);
  } catch (const error& e) {
    throw error(e.code(), sc.file + ": " + e.what());
  }
  return b;
}

std::string to_json(const scenario& sc) {
  json_writer j;
  j.begin_object();
  j.key("file").value(sc.file);
  if (sc.preset) {
    j.key("model").begin_object();
    j.key("name").value(sc.model);
    for (const auto& [k, v] : sc.options) j.key(k).value(v);
    for (const auto& [k, v] : sc.params) j.key(k).value(v);
    j.end_object();
  }
  // The open description (a preset's expansion, or the system file's).
  j.key("system").begin_object();
  j.key("subsystems").begin_object();
  for (const auto& d : sc.system.subsystems) j.key(d.name).value(d.type);
  j.end_object();
  j.key("initialization").begin_array();
  for (const auto& in : sc.system.initialization) j.value(in.type);
  j.end_array();
  j.key("connections").begin_array();
  for (const auto& c : sc.system.connections) {
    std::string text = c.from + " -> " + c.to;
    if (c.hold) text += " (hold)";
    if (c.extrapolation) text += " (extrapolation " + std::to_string(*c.extrapolation) + ")";
    j.value(text);
  }
  j.end_array();
  j.key("sources").begin_array();
  for (const auto& src : sc.system.sources) j.value(src.signal + " -> " + src.to);
  j.end_array();
  j.end_object();
  j.key("run").begin_object();
  j.key("mode").value(to_string(sc.run.mode));
  j.key("duration").value(sc.run.duration);
  j.key("macro_step").value(sc.run.macro_step);
  j.key("scheme").value(to_string(sc.run.scheme));
  j.key("order").begin_array();
  for (const auto& o : sc.run.order) j.value(o);
  j.end_array();
  j.key("output_interval")
      .value(sc.run.output_interval > 0 ? sc.run.output_interval : sc.run.macro_step);
  if (sc.run.fast_step) j.key("delivery").value("fast-step");
  if (sc.run.table1_timing) j.key("fast_step_timing").value("table1");
  if (sc.run.sync)
    j.key("sync").value(*sc.run.sync == scheme::sync::slowest_first ? "slowest-first"
                                                                    : "fastest-first");
  iteration_keys::write_json(j, sc.run.iteration);
  write_run_settings_json(j, sc);
  j.end_object();
  for (const auto& [name, cfg] : sc.subsystems) {
    j.key(name).begin_object();
    j.key("step").value(cfg.step);
    j.key("integrator").value(cfg.integrator);
    if (cfg.smoothing) j.key("smoothing").value(true);
    if (cfg.non_matching) j.key("non_matching").value(true);
    if (cfg.log_categories) {
      j.key("log_categories").begin_array();
      for (const auto& c : *cfg.log_categories) j.value(c);
      j.end_array();
    }
    if (cfg.refuse_changed_parameters) j.key("changed_parameters").value("refuse");
    if (cfg.no_feedthrough) j.key("no_feedthrough").value(true);
    if (cfg.probe_feedthrough) j.key("probe_feedthrough").value(true);
    j.end_object();
  }
  j.key("coupling").begin_object();
  j.key("extrapolation").value(sc.coupling.extrapolation);
  if (sc.coupling.energy_correction) j.key("energy_correction").value(true);
  if (sc.coupling.energy_correction_method != "remove")
    j.key("energy_correction_method").value(sc.coupling.energy_correction_method);
  if (sc.coupling.feedthrough_correction) j.key("feedthrough_correction").value(true);
  if (!sc.coupling.order.empty()) {
    j.key("order").begin_object();
    for (const auto& [ref, o] : sc.coupling.order) j.key(ref).value(o);
    j.end_object();
  }
  j.end_object();
  j.key("safety").begin_object();
  j.key("energy_residual_limit").value(sc.safety.energy_residual_limit);
  j.key("residual_power_limit").value(sc.safety.residual_power_limit);
  j.end_object();
  alarm_keys::write_json(j, sc.alarms);
  write_runtime_config_json(j, sc);
  j.end_object();
  return j.str();
}

}  // namespace cosim::config
