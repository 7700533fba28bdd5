// cosim tune's options: the arguments and --help of the subcommand, the [tune] table of the
// scenario under them, and their validation (tune_options.hpp).
#include "tune_options.hpp"
#include <CLI/CLI.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>

#include "batch_runner.hpp"
#include "cosim/rt_config/config_reader.hpp"
#include "cosim/rt_config/model_registry.hpp"
#include "cosim/runtime/error.hpp"

namespace cosim::cli::tune {

namespace fs = std::filesystem;

std::string num(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return {buf, r.ptr};
}

std::string toml_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out + "\"";
}

std::string set(const std::string& key, const std::string& value) {
  return key + "=" + value;
}

void refuse(const std::string& what) {
  throw error(errc::config_value, what);
}

std::vector<double> h_grid(const tune_options& o) {
  std::vector<double> g;
  for (std::int64_t k = 0;; ++k) {
    // Whole nanoseconds, printed without binary noise (0.009, not 0.009000000000000001).
    const double H =
        static_cast<double>(to_duration(o.H_ini + static_cast<double>(k) * o.H_inc).count()) / 1e9;
    if (H > o.H_max * (1.0 + 1e-9)) break;
    g.push_back(H);
    if (k > 100000) break;
  }
  return g;
}

bool same_h(double a, double b) {
  return std::abs(a - b) <= 1e-9 * std::max(std::abs(a), std::abs(b));
}

void write_bound(json_writer& j, const bound_note& b) {
  j.key("at_bound");
  if (b.at.empty()) {
    j.null();
  } else {
    j.value(b.at);
  }
  j.key("bound_message").value(b.message);
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  COSIM_INPUT_CHECK(out.good(), errc::io, "cannot write " + path.string());
  out << text;
  out.flush();
  COSIM_INPUT_CHECK(out.good(), errc::io, "error writing " + path.string());
}

tune_options read_options(const tune_request& req, const config::scenario& sc) {
  config::config_reader r = config::config_reader::from_file(req.scenario);
  r.apply_overrides(req.sets);
  tune_options o;
  // The search varies a preset's model keys (model.manoeuvre for the 002 test inputs,
  // model.interface); a system file has its signals in [[sources]] instead.
  if (!sc.preset)
    refuse(sc.file +
           ": cosim tune searches the step of a [model] preset (it sets "
           "model.manoeuvre and model.interface); this is a system file. Use "
           "`cosim sweep --key run.macro_step` on it, or tune the [model] preset it was "
           "written from");
  const config::model_entry* model = config::find_model(sc.model);
  // Every run of the search and of --largest-step sets model.manoeuvre (a 002 test input, or
  // the manoeuvre): a model without it would give only failed runs.
  auto has_manoeuvre = [](const config::model_entry& m) {
    return std::any_of(m.keys.begin(), m.keys.end(),
                       [](const config::key_doc& k) { return k.key == "model.manoeuvre"; });
  };
  if (model == nullptr || !has_manoeuvre(*model)) {
    std::string with;
    for (const auto& m : config::models())
      if (has_manoeuvre(m)) with += (with.empty() ? "" : ", ") + m.name;
    refuse(sc.file +
           ": cosim tune replaces the valve command model.manoeuvre by the test inputs "
           "of 002 Eqs. (12)-(15) (--largest-step: by the manoeuvres); model '" +
           sc.model + "' has no model.manoeuvre. Models that have it: " + with +
           ". Use `cosim sweep --key run.macro_step` on this scenario");
  }
  auto pos = [&](const std::string& key, double& v) {
    if (auto x = r.opt_double(key)) {
      if (!(*x > 0.0) || !std::isfinite(*x)) r.fail(key, "must be a positive, finite number");
      v = *x;
    }
  };
  pos("tune.H_ini", o.H_ini);
  if (auto x = r.opt_double("tune.H_inc")) {
    if (!(*x > 0.0) || !std::isfinite(*x))
      r.fail("tune.H_inc", "must be > 0: H grows from H_ini by H_inc (002 Sect. 2.4.1)");
    o.H_inc = *x;
  }
  pos("tune.H_max", o.H_max);
  pos("tune.test_amplitude", o.amplitude);
  pos("tune.test_width", o.width);
  pos("tune.duration", o.duration);
  pos("tune.fine_step", o.fine_step);
  pos("tune.tolerance", o.tolerance);
  if (auto x = r.opt_double("tune.linear_factor")) {
    if (!(*x > 1.0) || !std::isfinite(*x)) r.fail("tune.linear_factor", "must be > 1");
    o.linear_factor = *x;
  }
  if (auto v = r.opt_string_list("tune.test_inputs")) o.test_inputs = *v;
  if (auto v = r.opt_double_list("tune.sine_frequencies")) o.sine_frequencies = *v;
  if (auto v = r.opt_double_list("tune.orders")) {
    o.orders.clear();
    for (double d : *v) {
      if (d != std::floor(d) || d < 0 || d > 4) r.fail("tune.orders", "orders are integers 0-4");
      o.orders.push_back(static_cast<int>(d));
    }
  }
  if (auto v = r.opt_string_list("tune.interfaces")) o.interfaces = *v;
  if (auto v = r.opt_string_list("tune.schemes")) o.schemes = *v;
  if (auto v = r.opt_string_list("tune.force_outputs")) o.force_outputs = *v;
  if (auto v = r.opt_string_list("tune.corrections")) o.corrections = *v;
  if (auto v = r.opt_string_list("tune.manoeuvres")) o.manoeuvres = *v;
  if (auto v = r.opt_string("tune.column")) o.column = *v;
  for (const auto& sub : r.table_keys("tune.integrators")) {
    const std::string key = "tune.integrators." + sub;
    if (sc.subsystems.count(sub) == 0) r.fail(key, "no subsystem '" + sub + "' in this model");
    o.integrators[sub] = r.opt_string_list(key).value_or(std::vector<std::string>{});
  }
  for (const auto& f : o.sine_frequencies)
    if (!(f > 0.0) || !std::isfinite(f))
      r.fail("tune.sine_frequencies", "frequencies must be > 0 [Hz]");
  // Unknown [tune] keys are errors; the rest of the file is the scenario's.
  for (const auto& [k, v] : r.table())
    if (k.str() != "tune") r.ignore(std::string(k.str()));
  r.check_all_read();

  // Command-line options override the file.
  const cli_overrides& c = req.cli;
  if (c.H_ini) o.H_ini = *c.H_ini;
  if (c.H_inc) o.H_inc = *c.H_inc;
  if (c.H_max) o.H_max = *c.H_max;
  if (c.factor) o.linear_factor = *c.factor;
  if (c.tolerance) o.tolerance = *c.tolerance;
  if (!c.orders.empty()) o.orders = c.orders;
  if (!c.interfaces.empty()) o.interfaces = c.interfaces;
  if (!c.test_inputs.empty()) o.test_inputs = c.test_inputs;
  if (!c.schemes.empty()) o.schemes = c.schemes;
  if (!c.manoeuvres.empty()) o.manoeuvres = c.manoeuvres;
  if (!c.corrections.empty()) o.corrections = c.corrections;

  if (!(o.H_inc > 0.0) || !std::isfinite(o.H_inc))
    refuse("tune.H_inc = " + num(o.H_inc) +
           ": must be > 0: H grows from H_ini by H_inc (002 Sect. 2.4.1)");
  if (!(o.H_ini > 0.0) || !std::isfinite(o.H_ini))
    refuse("tune.H_ini = " + num(o.H_ini) + ": must be > 0");
  if (!(o.H_max >= o.H_ini) || !std::isfinite(o.H_max))
    refuse("tune.H_max = " + num(o.H_max) + ": must be finite and >= tune.H_ini = " + num(o.H_ini));
  if (!(o.linear_factor > 1.0) || !std::isfinite(o.linear_factor))
    refuse("tune.linear_factor = " + num(o.linear_factor) + ": must be finite and > 1");
  if (!(o.tolerance > 0.0) || !std::isfinite(o.tolerance))
    refuse("tune.tolerance = " + num(o.tolerance) + ": must be finite and > 0");
  const std::string orders = c.orders.empty() ? "tune.orders" : "--orders";
  for (int m : o.orders)
    if (m < 0 || m > 4) refuse(orders + ": extrapolation orders are 0-4, got " + std::to_string(m));
  if (req.largest_step) {
    // Each manoeuvre as the model reads it, before any run: an unknown one would only give a
    // failed fine reference. The model's message lists the manoeuvres it has.
    const std::string from = !c.manoeuvres.empty()      ? "--manoeuvres "
                             : r.has("tune.manoeuvres") ? "tune.manoeuvres "
                                                        : "tune.manoeuvres (default) ";
    for (const auto& m : o.manoeuvres) {
      std::vector<std::string> probe = req.sets;
      probe.push_back(set("model.manoeuvre", m));
      try {
        (void)config::load_scenario(req.scenario, probe);
      } catch (const error& e) {
        std::string why = e.what();
        const std::string ours = "--set model.manoeuvre: ";  // the probe's, not the user's
        if (why.rfind(ours, 0) == 0) why.erase(0, ours.size());
        refuse(from + "'" + m + "': " + why);
      }
    }
  }

  // Defaults that depend on the scenario.
  if (o.interfaces.empty() && !r.has("tune.interfaces") && c.interfaces.empty()) {
    const auto it = sc.options.find("interface");
    o.interfaces.push_back(it != sc.options.end() ? it->second : "direct");
    if (model != nullptr && model->reduced_interface && o.interfaces.front() != "rim") {
      // Only where this scenario accepts it (e.g. not with p-s coupling).
      std::vector<std::string> probe = req.sets;
      probe.push_back("model.interface=rim");
      try {
        (void)config::load_scenario(req.scenario, probe);
        o.interfaces.push_back("rim");
      } catch (const error&) {
      }
    }
  }
  if (o.schemes.empty() && !r.has("tune.schemes") && c.schemes.empty())
    o.schemes.emplace_back(to_string(sc.run.scheme));
  if (o.force_outputs.empty() && !r.has("tune.force_outputs")) {
    const auto it = sc.options.find("force_output");
    o.force_outputs.push_back(it != sc.options.end() ? it->second : "sample");
  }
  if (o.corrections.empty() && !r.has("tune.corrections") && c.corrections.empty())
    o.corrections.emplace_back(sc.coupling.feedthrough_correction ? "feedthrough" : "none");
  for (const auto& [name, cfg] : sc.subsystems)
    if (o.integrators.count(name) == 0) o.integrators[name] = {cfg.integrator};

  for (const auto& s : o.schemes)
    if (s != "jacobi" && s != "gauss-seidel" && s != "gauss-seidel-reversed")
      refuse("tune.schemes: '" + s + "' is not one of jacobi, gauss-seidel, gauss-seidel-reversed");
  for (const auto& s : o.interfaces)
    if (s != "direct" && s != "rim")
      refuse("tune.interfaces: '" + s + "' is not one of direct, rim");
  for (const auto& s : o.force_outputs)
    if (s != "sample" && s != "mean")
      refuse("tune.force_outputs: '" + s + "' is not one of sample, mean");
  for (const auto& s : o.corrections)
    if (s != "none" && s != "feedthrough")
      refuse("tune.corrections: '" + s + "' is not one of none, feedthrough");
  if (req.largest_step && !c.corrections.empty())
    refuse(
        "--corrections: --largest-step runs the scenario as configured; set the correction "
        "with --set coupling.feedthrough_correction=true");
  if (std::find(o.corrections.begin(), o.corrections.end(), "feedthrough") != o.corrections.end()) {
    // Only where this scenario has something to correct (not p-s coupling, say): built once,
    // direct and Jacobi, before any run.
    std::vector<std::string> probe = req.sets;
    probe.push_back("coupling.feedthrough_correction=true");
    probe.push_back("run.scheme=jacobi");
    if (sc.options.count("interface") != 0) probe.push_back("model.interface=direct");
    try {
      (void)config::build(config::load_scenario(req.scenario, probe));
    } catch (const error& e) {
      refuse("tune.corrections: 'feedthrough' does not apply to this scenario: " +
             std::string(e.what()));
    }
  }
  for (const auto& t : o.test_inputs)
    if (t != "step" && t != "ramp" && t != "impulse" && t != "sine")
      refuse("tune.test_inputs: '" + t +
             "' is not a test input of 002 Eqs. (12)-(15) (step, ramp, impulse, sine)");
  return o;
}

CLI::App* add_tune_arguments(CLI::App& app, tune_request& req) {
  auto* tune = app.add_subcommand(
      "tune",
      "Automated configuration search of paper 002 Sect. 2.4: replaces the valve command by the\n"
      "test inputs of 002 Eqs. (12)-(15), raises H from H_ini by H_inc for every configuration\n"
      "(interface, scheme, extrapolation order, correction, integrators) until sum|dE| vs H\n"
      "leaves the linear region, and writes DIR/tune.csv (every run), DIR/tune.json (the search\n"
      "state and result) and DIR/recommended.toml (the most conservative H over the test inputs\n"
      "of the best configuration). An answer at an end of the grid says so (printed, \"at_bound\" "
      "in\n"
      "tune.json, a NOTE in recommended.toml): at H_max the true limit may be higher, at H_ini\n"
      "lower. With --largest-step: the largest H at which s1 stays within tune.tolerance of a\n"
      "fine reference, for M1 and M2 (DIR/largest_step.csv, DIR/largest_step.json).\n"
      "The search space and grid come from the scenario's [tune] table, --set tune.KEY=VALUE and\n"
      "the options below. Progress (grid points or runs done/total, elapsed, ETA) goes to stderr\n"
      "when it is a terminal. SIGINT/SIGTERM/SIGHUP: no further run starts, running runs stop,\n"
      "and the files are written with the search state so far, marked \"interrupted\" (no\n"
      "recommendation, an earlier recommended.toml is removed); exit code 1.");
  tune->add_option("scenario", req.scenario, "Scenario TOML file")
      ->required()
      ->check(CLI::ExistingFile);
  non_empty(tune->add_option("--out", req.out,
                             "Output directory (default: results/tune_<scenario name>)"));
  add_jobs_option(*tune, req.jobs);
  tune->add_option("--set", req.sets, "Override a scenario or [tune] key (repeatable)")
      ->type_name("KEY=VALUE");
  tune->add_flag(
      "--largest-step", req.largest_step,
      "Report the largest H keeping s1 within tune.tolerance (2 mm) of a fine reference");
  tune->add_option("--H-ini", req.cli.H_ini, "First macro step [s] (tune.H_ini, default 0.001)");
  tune->add_option("--H-inc", req.cli.H_inc, "Increment of H [s] (tune.H_inc, default 0.001)");
  tune->add_option("--H-max", req.cli.H_max, "Largest H tried [s] (tune.H_max, default 0.03)");
  tune->add_option("--factor", req.cli.factor,
                   "Linear-region factor F (tune.linear_factor, default 2)");
  tune->add_option("--tolerance", req.cli.tolerance,
                   "--largest-step tolerance [m] (default 0.002)");
  // CLI11 converts an empty item to 0: `--orders ''` would search order 0 unasked.
  tune->add_option("--orders", req.cli.orders, "Extrapolation orders, e.g. 0,1,2 (tune.orders)")
      ->delimiter(',')
      ->check(CLI::Validator(
          [](const std::string& s) {
            return s.empty() ? std::string("'' is not an extrapolation order (0-4)")
                             : std::string();
          },
          "ORDER"));
  tune->add_option("--interfaces", req.cli.interfaces, "direct,rim (tune.interfaces)")
      ->delimiter(',');
  tune->add_option("--schemes", req.cli.schemes,
                   "jacobi,gauss-seidel,gauss-seidel-reversed (tune.schemes)")
      ->delimiter(',');
  tune->add_option("--test-inputs", req.cli.test_inputs,
                   "step,ramp,impulse,sine (tune.test_inputs)")
      ->delimiter(',');
  tune->add_option("--manoeuvres", req.cli.manoeuvres, "--largest-step manoeuvres (default M1,M2)")
      ->delimiter(',');
  tune->add_option("--corrections", req.cli.corrections,
                   "none,feedthrough: coupling corrections to try (tune.corrections; feedthrough "
                   "only with direct Jacobi)")
      ->delimiter(',');
  tune->footer(
      "[tune] keys: H_ini, H_inc, H_max [s]; test_inputs; sine_frequencies [Hz]; test_amplitude;\n"
      "test_width [s]; duration [s]; orders; interfaces; schemes; force_outputs; corrections;\n"
      "integrators.<subsystem>; linear_factor; fine_step [s]; tolerance [m]; manoeuvres; column.");
  add_progress_flags(*tune, req.progress);
  return tune;
}

}  // namespace cosim::cli::tune
