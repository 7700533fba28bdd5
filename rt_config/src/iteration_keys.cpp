#include "iteration_keys.hpp"

#include <cmath>

#include "cosim/rt_config/model_registry.hpp"
#include "cosim/runtime/error.hpp"

namespace cosim::config::iteration_keys {

namespace {

constexpr std::int64_t max_iterations = 1000;
constexpr std::int64_t max_reuse = 100;
// Aitken's and quasi-Newton's first omega (quasi-Newton's only until it has a secant).
constexpr double initial_omega = 0.5;

const char* to_string(relaxation_kind k) {
  return k == relaxation_kind::aitken ? "aitken" : "iqn";
}

double tolerance(config_reader& r, const std::string& key, double fallback) {
  const std::optional<double> v = r.opt_double(key);
  if (!v) return fallback;
  if (!(*v >= 0.0) || !std::isfinite(*v)) r.fail(key, "must be a finite number >= 0");
  return *v;
}

}  // namespace

void read(config_reader& r, scenario& sc) {
  iteration_options& o = sc.run.iteration;
  if (auto n = r.opt_int("run.iterations")) {
    if (*n < 1 || *n > max_iterations)
      r.fail("run.iterations",
             "must be an integer from 1 (non-iterative) to " + std::to_string(max_iterations));
    o.max_iterations = static_cast<int>(*n);
  }
  o.rel_tol = tolerance(r, "run.iteration_tolerance.rel", o.rel_tol);
  o.abs_tol = tolerance(r, "run.iteration_tolerance.abs", o.abs_tol);
  if (r.has("run.iteration_tolerance")) (void)r.table_keys("run.iteration_tolerance");
  if (!(o.rel_tol > 0.0 || o.abs_tol > 0.0))
    r.fail("run.iteration_tolerance", "rel and abs cannot both be 0 (nothing would converge)");
  // Without run.relaxation, quasi-Newton: it converges without tuning wherever a constant
  // or Aitken omega does on the shipped scenarios (docs/coupling.md).
  o.relaxation = relaxation_kind::iqn;
  const char* choice = "must be a number in (0, 1], \"aitken\" or \"iqn\"";
  if (r.has("run.relaxation")) {
    const toml::node* node = r.table().at_path("run.relaxation").node();
    if (node != nullptr && node->is_string()) {
      const std::string v = r.get_string("run.relaxation");
      if (v != "aitken" && v != "iqn") r.fail("run.relaxation", choice);
      o.relaxation = v == "aitken" ? relaxation_kind::aitken : relaxation_kind::iqn;
    } else {
      o.relaxation = relaxation_kind::constant;
      o.omega = r.get_double("run.relaxation");
      if (!(o.omega > 0.0 && o.omega <= 1.0)) r.fail("run.relaxation", choice);
    }
  }
  if (auto w = r.opt_double("run.relaxation_initial")) {
    if (o.relaxation == relaxation_kind::constant)
      r.fail("run.relaxation_initial",
             "is the first omega of \"aitken\" or \"iqn\"; a constant run.relaxation has "
             "no other");
    if (!(*w > 0.0 && *w <= 1.0)) r.fail("run.relaxation_initial", "must be in (0, 1]");
    o.omega = *w;
  } else if (o.relaxation != relaxation_kind::constant) {
    o.omega = initial_omega;
  }
  if (auto n = r.opt_int("run.iqn_reuse")) {
    if (o.relaxation != relaxation_kind::iqn)
      r.fail("run.iqn_reuse", "is a quasi-Newton setting; run.relaxation is not \"iqn\"");
    if (*n < 0 || *n > max_reuse)
      r.fail("run.iqn_reuse", "must be an integer from 0 to " + std::to_string(max_reuse) +
                                  " (past macro steps whose secants are kept)");
    o.iqn_reuse = static_cast<int>(*n);
  }
  if (auto s = r.opt_string("run.on_no_convergence")) {
    check_choice(r, "run.on_no_convergence", *s, {"continue", "stop"});
    o.stop_on_no_convergence = *s == "stop";
  }
  if (!o.enabled()) return;
  if (sc.run.mode != run_mode::offline)
    r.fail("run.iterations",
           std::string("iterative coupling runs offline only: a ") + to_string(sc.run.mode) +
               " run cannot roll a macro step back (set run.mode = \"offline\" or "
               "run.iterations = 1)");
  if (sc.run.fast_step)
    r.fail("run.iterations",
           "iterative coupling is not available with run.delivery = \"fast-step\" (its slower "
           "subsystems run on their own grids across macro steps); use run.delivery = "
           "\"macro-step\" or run.iterations = 1");
  if (!sc.drivers.empty())
    r.fail("run.iterations", "iterative coupling rolls every subsystem back, but driver '" +
                                 sc.drivers.front().name +
                                 "' talks to hardware, which cannot roll back (remove "
                                 "[drivers." +
                                 sc.drivers.front().name + "] or set run.iterations = 1)");
}

void write_json(json_writer& j, const iteration_options& o) {
  if (!o.enabled()) return;
  j.key("iterations").value(static_cast<std::int64_t>(o.max_iterations));
  j.key("iteration_tolerance").begin_object();
  j.key("rel").value(o.rel_tol).key("abs").value(o.abs_tol);
  j.end_object();
  if (o.relaxation == relaxation_kind::constant) {
    j.key("relaxation").value(o.omega);
  } else {
    j.key("relaxation").value(to_string(o.relaxation));
    j.key("relaxation_initial").value(o.omega);
    if (o.relaxation == relaxation_kind::iqn)
      j.key("iqn_reuse").value(static_cast<std::int64_t>(o.iqn_reuse));
  }
  j.key("on_no_convergence").value(o.stop_on_no_convergence ? "stop" : "continue");
}

std::string toml(const iteration_options& o) {
  if (!o.enabled()) return "";
  std::string s = "iterations = " + std::to_string(o.max_iterations) + "\n";
  s += "iteration_tolerance = { rel = " + format_double(o.rel_tol) +
       ", abs = " + format_double(o.abs_tol) + " }\n";
  if (o.relaxation == relaxation_kind::constant) {
    s += "relaxation = " + format_double(o.omega) + "\n";
  } else {
    s += "relaxation = \"" + std::string(to_string(o.relaxation)) +
         "\"\nrelaxation_initial = " + format_double(o.omega) + "\n";
    if (o.relaxation == relaxation_kind::iqn)
      s += "iqn_reuse = " + std::to_string(o.iqn_reuse) + "\n";
  }
  if (o.stop_on_no_convergence) s += "on_no_convergence = \"stop\"\n";
  return s;
}

std::vector<key_doc> docs() {
  return {
      {"run.iterations",
       "offline: at most N fixed-point iterations per macro step, with rollback (000 Sect. "
       "2.3); 1 = non-iterative (default)"},
      {"run.iteration_tolerance.rel, .abs",
       "converged when |y - u| <= abs + rel |y| on every coupling variable (default 1e-6, "
       "1e-9)"},
      {"run.relaxation",
       "iteration update: \"iqn\" (default: interface quasi-Newton, IQN-ILS), a constant "
       "omega in (0, 1] (u + omega (y - u)) or \"aitken\" (dynamic omega)"},
      {"run.relaxation_initial",
       "Aitken's first omega of each macro step; quasi-Newton's omega before its first secant "
       "(default 0.5)"},
      {"run.iqn_reuse",
       "quasi-Newton: past macro steps whose secants are reused, 0 to 100 (default 8)"},
      {"run.on_no_convergence",
       "continue (default: warn, count in summary.json) or stop (stop_reason no_convergence)"},
  };
}

}  // namespace cosim::config::iteration_keys
