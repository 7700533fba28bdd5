#include "rim_options.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "cosim/rt_config/model_registry.hpp"
#include "cosim/subsystems/test_input.hpp"

namespace cosim::config::crane_keys {

void read_interface(config_reader& r, scenario& sc, const std::string& rim_unavailable) {
  sc.options["interface"] = r.opt_string("model.interface").value_or("direct");
  check_choice(r, "model.interface", sc.options["interface"], {"direct", "rim"});
  const bool rim = sc.options["interface"] == "rim";
  if (rim && !rim_unavailable.empty()) r.fail("model.interface", rim_unavailable);
  if (auto fo = r.opt_string("model.force_output")) {
    check_choice(r, "model.force_output", *fo, {"sample", "mean"});
    if (!rim && *fo != "sample")
      r.fail("model.force_output", "\"mean\" needs model.interface = \"rim\"");
    if (rim) sc.options["force_output"] = *fo;
  } else if (rim) {
    sc.options["force_output"] = "sample";
  }
  if (auto sync = r.opt_string("model.rim_sync")) {
    check_choice(r, "model.rim_sync", *sync, {"reset", "project"});
    if (!rim && *sync != "reset")
      r.fail("model.rim_sync", "\"project\" needs model.interface = \"rim\"");
    if (rim) sc.options["rim_sync"] = *sync;
  } else if (rim) {
    sc.options["rim_sync"] = "reset";
  }
}

bool rim_follows(const scenario& sc) {
  const auto it = sc.options.find("rim_sync");
  if (it == sc.options.end() || it->second != "project") return false;
  // The multibody can only take the RIM's state at t_{n+1} if the RIM+hydraulics unit
  // has already stepped: Gauss-Seidel with it first (fastest-first, 004).
  const auto h = std::find(sc.run.order.begin(), sc.run.order.end(), "hydraulics");
  const auto m = std::find(sc.run.order.begin(), sc.run.order.end(), "multibody");
  COSIM_INPUT_CHECK(sc.run.scheme == scheme_kind::gauss_seidel && h < m, errc::config_value,
                    sc.file +
                        ": model.rim_sync = \"project\" needs run.scheme = \"gauss-seidel\" "
                        "with run.order = [\"hydraulics\", \"multibody\"] (the RIM steps first)");
  return true;
}

void read_manoeuvre(config_reader& r, scenario& sc, const std::vector<std::string>& named) {
  const std::string m = r.opt_string("model.manoeuvre").value_or(named.front());
  crane::test_input_kind kind{};
  const bool test = crane::parse_test_input(m, kind);
  std::string lower = m;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  bool known = test;
  for (const auto& n : named) {
    std::string ln = n;
    std::transform(ln.begin(), ln.end(), ln.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    known = known || ln == lower;
  }
  if (!known) {
    std::string list;
    for (const auto& n : named) list += n + ", ";
    r.fail("model.manoeuvre",
           "must be " + list + "or a test input of 002 Eqs. (12)-(15): step, ramp, impulse, sine");
  }
  sc.options["manoeuvre"] = m;
  const bool any_test_key = r.has("model.test_amplitude") || r.has("model.test_time") ||
                            r.has("model.test_width") || r.has("model.test_frequency");
  if (!test) {
    if (any_test_key) {
      const std::string key = r.has("model.test_amplitude") ? "model.test_amplitude"
                              : r.has("model.test_time")    ? "model.test_time"
                              : r.has("model.test_width")   ? "model.test_width"
                                                            : "model.test_frequency";
      r.fail(key, "only applies when model.manoeuvre is step, ramp, impulse or sine");
    }
    return;
  }
  const double a = r.opt_double("model.test_amplitude").value_or(0.01);
  if (!std::isfinite(a) || !(std::abs(a) < 0.5))
    r.fail("model.test_amplitude", "must be a valve-command increment with |a| < 0.5");
  const double t0 = r.opt_double("model.test_time").value_or(0.5);
  if (!std::isfinite(t0) || t0 < 0.0) r.fail("model.test_time", "must be >= 0 [s]");
  const double d = r.opt_double("model.test_width").value_or(0.1);
  check_positive(r, "model.test_width", d);
  const double f = r.opt_double("model.test_frequency").value_or(2.0);
  check_positive(r, "model.test_frequency", f);
  sc.params["test_amplitude"] = a;
  sc.params["test_time"] = t0;
  sc.params["test_width"] = d;
  sc.params["test_frequency"] = f;
}

bool is_test_input(const scenario& sc) {
  crane::test_input_kind kind{};
  return crane::parse_test_input(sc.option("manoeuvre"), kind);
}

rim::interface_kind interface_of(const scenario& sc) {
  rim::interface_kind k = rim::interface_kind::direct;
  rim::parse_interface(sc.option("interface"), k);
  return k;
}

std::vector<key_doc> docs(const std::string& named_manoeuvres) {
  return {
      {"model.manoeuvre",
       named_manoeuvres + ", or a test input of 002 Eqs. (12)-(15): step, ramp, impulse, sine"},
      {"model.test_amplitude", "test input: valve-command increment a over kappa0 (default 0.01)"},
      {"model.test_time", "test input: step/ramp/impulse time t0 [s] (default 0.5)"},
      {"model.test_width", "test input: impulse width d [s] (default 0.1)"},
      {"model.test_frequency", "test input: sine frequency [Hz] (default 2)"},
      {"model.interface",
       "direct (ZOH co-simulation, 001 Alg. 1) or rim (reduced interface model, 001 Alg. 2)"},
      {"model.rim_sync",
       "rim only: reset (001 Alg. 2: the RIM restarts from the multibody's state every H) or "
       "project (the multibody takes the RIM's interface state by a mass-orthogonal projection; "
       "gauss-seidel, hydraulics first)"},
      {"model.force_output",
       "rim only: sample (f_h at the communication point) or mean (mean f_h over the macro "
       "step, 004 smoothing; use with gauss-seidel, hydraulics first)"},
  };
}

}  // namespace cosim::config::crane_keys
