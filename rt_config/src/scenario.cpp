#include "cosim/rt_config/scenario.hpp"

#include <cmath>
#include <sstream>

#include "cosim/rt_config/config_reader.hpp"
#include "cosim/runtime/json_writer.hpp"
#include "cosim/subsystems/crane_subsystems.hpp"
#include "cosim/subsystems/manoeuvre.hpp"

namespace cosim::config {

namespace {

constexpr double default_hydraulic_step = 2e-4;  // 003 Sect. 5: forward Euler limit

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& e : v) s += (s.empty() ? "" : ", ") + e;
  return s;
}

void check_choice(config_reader& r, const std::string& key, const std::string& value,
                  const std::vector<std::string>& allowed) {
  for (const auto& a : allowed)
    if (a == value) return;
  r.fail(key, "must be one of: " + join(allowed));
}

void check_positive(config_reader& r, const std::string& key, double v) {
  if (!(v > 0.0) || !std::isfinite(v)) r.fail(key, "must be a positive, finite number");
}

// Largest step <= limit that divides H exactly in nanoseconds.
double dividing_step(double H, double limit) {
  const std::int64_t Hn = to_duration(H).count();
  std::int64_t k = static_cast<std::int64_t>(std::ceil(H / limit - 1e-9));
  if (k < 1) k = 1;
  while (Hn % k != 0) ++k;
  return to_seconds(duration{Hn / k});
}

void read_subsystem(config_reader& r, const std::string& name, subsystem_config& sc,
                    double H, double default_step, const std::vector<std::string>& integrators) {
  const std::string step_key = name + ".step";
  if (auto step = r.opt_double(step_key)) {
    check_positive(r, step_key, *step);
    const auto hn = to_duration(*step).count();
    const auto Hn = to_duration(H).count();
    if (hn <= 0) r.fail(step_key, "is below the 1 ns time resolution");
    if (hn > Hn) r.fail(step_key, "is larger than the macro step run.macro_step = " + std::to_string(H) + " s");
    if (Hn % hn != 0)
      r.fail(step_key, "does not divide the macro step run.macro_step = " + std::to_string(H) +
                           " s (non-matching grids are not enabled)");
    sc.step = *step;
    sc.step_set = true;
  } else {
    sc.step = default_step;
  }
  sc.integrator = r.opt_string(name + ".integrator").value_or(integrators.front());
  check_choice(r, name + ".integrator", sc.integrator, integrators);
}

scenario read(config_reader& r) {
  scenario sc;
  sc.file = r.file();
  sc.model.name = r.get_string("model.name");
  check_choice(r, "model.name", sc.model.name, {"crane"});
  sc.model.coupling = r.opt_string("model.coupling").value_or(sc.model.coupling);
  check_choice(r, "model.coupling", sc.model.coupling, {"f-s", "p-s"});
  sc.model.manoeuvre = r.opt_string("model.manoeuvre").value_or(sc.model.manoeuvre);
  crane::manoeuvre_kind mk{};
  if (!crane::parse_manoeuvre(sc.model.manoeuvre, mk)) r.fail("model.manoeuvre", "must be M1, M2 or hold");

  sc.run.mode = r.opt_string("run.mode").value_or(sc.run.mode);
  check_choice(r, "run.mode", sc.run.mode, {"offline"});
  sc.run.duration = r.get_double("run.duration");
  check_positive(r, "run.duration", sc.run.duration);
  sc.run.macro_step = r.get_double("run.macro_step");
  check_positive(r, "run.macro_step", sc.run.macro_step);
  if (to_duration(sc.run.macro_step).count() <= 0) r.fail("run.macro_step", "is below 1 ns");
  sc.run.scheme = r.opt_string("run.scheme").value_or(sc.run.scheme);
  if (sc.run.scheme == "gauss_seidel") sc.run.scheme = "gauss-seidel";
  check_choice(r, "run.scheme", sc.run.scheme, {"jacobi", "gauss-seidel"});
  sc.run.order = r.opt_string_list("run.order").value_or(std::vector<std::string>{"multibody", "hydraulics"});
  {
    std::vector<std::string> names{"multibody", "hydraulics"};
    std::vector<std::string> sorted = sc.run.order;
    std::sort(sorted.begin(), sorted.end());
    std::sort(names.begin(), names.end());
    if (sorted != names) r.fail("run.order", "must list each subsystem once: multibody, hydraulics");
  }
  if (auto oi = r.opt_double("run.output_interval")) {
    if (!(*oi >= 0.0) || !std::isfinite(*oi)) r.fail("run.output_interval", "must be >= 0");
    const auto on = to_duration(*oi).count();
    const auto Hn = to_duration(sc.run.macro_step).count();
    if (on != 0 && (on < Hn || on % Hn != 0))
      r.fail("run.output_interval", "must be a whole multiple of run.macro_step");
    sc.run.output_interval = *oi;
  }

  const double H = sc.run.macro_step;
  // 003 Sect. 5: h_M = H unless set, h_H = min(H, 0.2 ms) (here: the largest step
  // <= 0.2 ms that divides H, which equals min(H, 0.2 ms) for the paper's cases).
  read_subsystem(r, "multibody", sc.multibody, H, H, {"semi-implicit-euler", "trapezoidal"});
  read_subsystem(r, "hydraulics", sc.hydraulics, H, dividing_step(H, default_hydraulic_step),
                 {"forward-euler", "heun"});

  if (auto m = r.opt_int("coupling.extrapolation")) {
    if (*m < 0 || *m > max_extrapolation_order) r.fail("coupling.extrapolation", "must be an integer from 0 to 4");
    sc.coupling.extrapolation = static_cast<int>(*m);
  }
  if (auto v = r.opt_double("safety.energy_residual_limit")) {
    check_positive(r, "safety.energy_residual_limit", *v);
    sc.safety.energy_residual_limit = *v;
  }
  if (auto v = r.opt_double("safety.residual_power_limit")) {
    check_positive(r, "safety.residual_power_limit", *v);
    sc.safety.residual_power_limit = *v;
  }
  r.check_all_read();
  return sc;
}

}  // namespace

scenario load_scenario(const std::string& path, const std::vector<std::string>& sets) {
  config_reader r = config_reader::from_file(path);
  r.apply_overrides(sets);
  return read(r);
}

scenario parse_scenario(const std::string& text, const std::string& name,
                        const std::vector<std::string>& sets) {
  config_reader r = config_reader::from_string(text, name);
  r.apply_overrides(sets);
  return read(r);
}

const std::vector<key_doc>& documented_keys() {
  static const std::vector<key_doc> keys{
      {"model.name", "model to build: crane"},
      {"model.coupling", "crane coupling variables: f-s (force-displacement) or p-s (pressure-displacement)"},
      {"model.manoeuvre", "valve command kappa(t): M1 (003 Eq. 19), M2 (003 Eq. 20) or hold"},
      {"run.mode", "executor: offline (one thread, deterministic)"},
      {"run.duration", "simulated time [s]; rounded up to whole macro steps"},
      {"run.macro_step", "communication step H [s]"},
      {"run.scheme", "jacobi or gauss-seidel"},
      {"run.order", "Gauss-Seidel order, e.g. [\"multibody\", \"hydraulics\"]"},
      {"run.output_interval", "time between rows of results.csv [s]; a multiple of H; 0 = every macro step"},
      {"multibody.step", "multibody integration step h_M [s]; divides H; default H"},
      {"multibody.integrator", "semi-implicit-euler (003 Eqs. 6-7) or trapezoidal"},
      {"hydraulics.step", "hydraulics integration step h_H [s]; divides H; default min(H, 0.2 ms)"},
      {"hydraulics.integrator", "forward-euler (003 Eq. 14) or heun"},
      {"coupling.extrapolation", "input extrapolation order 0-4 (0 = ZOH)"},
      {"safety.energy_residual_limit", "safety stop when sum |delta E| exceeds this [J]"},
      {"safety.residual_power_limit", "safety stop when |delta P| exceeds this [W]"},
  };
  return keys;
}

std::unique_ptr<built_scenario> build(const scenario& sc) {
  using namespace cosim::crane;
  auto b = std::make_unique<built_scenario>();
  const mechanical_params mp{};
  const hydraulic_params hp{};
  const equilibrium eq = solve_equilibrium(mp, hp, 3);  // 003 Sect. 1.3
  const coupling cpl = sc.model.coupling == "f-s" ? coupling::force_displacement
                                                  : coupling::pressure_displacement;
  auto mb = std::make_unique<crane_multibody>(
      "multibody", mp, hp, cpl,
      sc.multibody.integrator == "trapezoidal" ? multibody_integrator::trapezoidal
                                               : multibody_integrator::semi_implicit_euler,
      eq);
  auto hy = std::make_unique<hydraulic_cylinder>(
      "hydraulics", hp, cpl,
      sc.hydraulics.integrator == "heun" ? hydraulic_integrator::heun
                                         : hydraulic_integrator::forward_euler,
      eq);
  mb->set_step_size(to_duration(sc.multibody.step));
  hy->set_step_size(to_duration(sc.hydraulics.step));
  crane_multibody* mbp = mb.get();
  hydraulic_cylinder* hyp = hy.get();
  system& sys = b->sys;
  const std::size_t imb = sys.add(std::move(mb));
  const std::size_t ihy = sys.add(std::move(hy));

  manoeuvre_kind mk{};
  parse_manoeuvre(sc.model.manoeuvre, mk);
  b->sources.push_back(std::make_unique<manoeuvre>(mk, eq.kappa0));
  hyp->input(hydraulic_cylinder::in_kappa).bind_source(b->sources.back().get());

  sys.connect("multibody.s", "hydraulics.s");
  const std::size_t c_sd = sys.connect("multibody.sd", "hydraulics.sd");
  if (cpl == coupling::force_displacement) {
    const std::size_t c_fh = sys.connect("hydraulics.fh", "multibody.fh");
    sys.add_bond({"actuator", {{c_fh, c_sd, 1.0}}});
  } else {
    const std::size_t c_p1 = sys.connect("hydraulics.p1", "multibody.p1");
    const std::size_t c_p2 = sys.connect("hydraulics.p2", "multibody.p2");
    // Pressure x volume flow: f_h sd = (p2 - p1) a_p sd.
    sys.add_bond({"actuator", {{c_p2, c_sd, hp.ap}, {c_p1, c_sd, -hp.ap}}});
  }
  for (const connection& c : sys.connections())
    sys.at(c.to).input(c.input).set_order(sc.coupling.extrapolation);

  sys.add_probe({"kappa", "1", [hyp] { return *hyp->find_variable("kappa"); }});
  sys.add_probe({"s", "m", [mbp] { return mbp->s(); }});
  sys.add_probe({"sd", "m/s", [mbp] { return mbp->sd(); }});
  sys.add_probe({"p1", "Pa", [hyp] { return hyp->p1(); }});
  sys.add_probe({"p2", "Pa", [hyp] { return hyp->p2(); }});
  if (cpl == coupling::force_displacement) {
    sys.add_probe({"fh", "N", [hyp] { return hyp->output(hydraulic_cylinder::out_fh); }});
  } else {
    sys.add_probe({"fh", "N", [mbp, hyp, hp] { return actuator_force(hp, hyp->p1(), hyp->p2(), mbp->sd()); }});
  }

  run_plan& plan = b->plan;
  plan.macro_step = to_duration(sc.run.macro_step);
  plan.macro_steps = static_cast<std::int64_t>(std::ceil(sc.run.duration / sc.run.macro_step - 1e-9));
  plan.scheme = sc.run.scheme == "jacobi" ? scheme_kind::jacobi : scheme_kind::gauss_seidel;
  for (const auto& name : sc.run.order) plan.order.push_back(sys.index_of(name));
  plan.output_every = sc.run.output_interval > 0.0
                          ? to_duration(sc.run.output_interval).count() / plan.macro_step.count()
                          : 1;
  b->limits.energy_residual = sc.safety.energy_residual_limit;
  b->limits.residual_power = sc.safety.residual_power_limit;
  (void)imb;
  (void)ihy;
  return b;
}

std::string to_json(const scenario& sc) {
  json_writer j;
  j.begin_object();
  j.key("file").value(sc.file);
  j.key("model").begin_object();
  j.key("name").value(sc.model.name);
  j.key("coupling").value(sc.model.coupling);
  j.key("manoeuvre").value(sc.model.manoeuvre);
  j.end_object();
  j.key("run").begin_object();
  j.key("mode").value(sc.run.mode);
  j.key("duration").value(sc.run.duration);
  j.key("macro_step").value(sc.run.macro_step);
  j.key("scheme").value(sc.run.scheme);
  j.key("order").begin_array();
  for (const auto& o : sc.run.order) j.value(o);
  j.end_array();
  j.key("output_interval").value(sc.run.output_interval > 0 ? sc.run.output_interval : sc.run.macro_step);
  j.end_object();
  j.key("multibody").begin_object();
  j.key("step").value(sc.multibody.step);
  j.key("integrator").value(sc.multibody.integrator);
  j.end_object();
  j.key("hydraulics").begin_object();
  j.key("step").value(sc.hydraulics.step);
  j.key("integrator").value(sc.hydraulics.integrator);
  j.end_object();
  j.key("coupling").begin_object();
  j.key("extrapolation").value(sc.coupling.extrapolation);
  j.end_object();
  j.key("safety").begin_object();
  j.key("energy_residual_limit").value(sc.safety.energy_residual_limit);
  j.key("residual_power_limit").value(sc.safety.residual_power_limit);
  j.end_object();
  j.end_object();
  return j.str();
}

}  // namespace cosim::config
