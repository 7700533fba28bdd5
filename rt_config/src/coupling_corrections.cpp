// The coupling corrections of a built system from the scenario's keys: energy-based
// (energy_correction.hpp) and feedthrough (feedthrough_correction.hpp), from [coupling],
// [[bonds]] and [[connections]].
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "cosim/runtime/energy_correction.hpp"
#include "cosim/runtime/feedthrough_correction.hpp"
#include "system_file.hpp"

namespace cosim::config {

namespace {

// The connections whose own `key` = false opts them out of the [coupling] (and bond) switch.
std::vector<std::size_t> opted_out_of(const scenario& sc, const system& sys,
                                      std::optional<bool> connection_decl::*key) {
  std::vector<std::size_t> out;
  for (const connection_decl& c : sc.system.connections)
    if (!(c.*key).value_or(true)) out.push_back(sys.connection_to(c.to));
  return out;
}

// Why connection c's input cannot be feedthrough-corrected in this run; "" if it can.
std::string feedthrough_refusal(const scenario& sc, const system& sys, const connection& c) {
  if (sc.run.scheme != scheme_kind::jacobi || sc.run.sync)
    return "it works with run.scheme = \"jacobi\" only (in Gauss-Seidel the later subsystem "
           "already sees its inputs at the new time)";
  if (sc.run.iteration.enabled())
    return "not with run.iterations: the iteration itself converges to the new inputs";
  if (sc.run.fast_step) return "not with run.delivery = \"fast-step\"";
  for (const std::size_t s : {c.from, c.to}) {
    const std::string& name = sys.at(s).name();
    const auto it = sc.subsystems.find(name);
    if (it == sc.subsystems.end()) continue;
    const subsystem_config& cfg = it->second;
    if (cfg.smoothing) return "not with " + name + ".smoothing (its samples are averages)";
    if (cfg.non_matching) return "not with " + name + ".non_matching (samples off the grid)";
    if (cfg.remote) return "not for a remote subsystem ('" + name + "')";
  }
  return {};
}

// The producer's output depends directly on an input that the consumer feeds.
bool feedthrough_applies(const system& sys, const connection& c) {
  const subsystem& producer = sys.at(c.from);
  if (!producer.output_desc(c.output).feedthrough) return false;
  for (const connection& back : sys.connections())
    if (back.to == c.from && back.from == c.to && producer.output_depends_on(c.output, back.input))
      return true;
  return false;
}

}  // namespace

void apply_energy_correction(const scenario& sc, built_scenario& b) {
  system& sys = b.sys;
  const correction_method method = sc.coupling.energy_correction_method == "balance"
                                       ? correction_method::balance
                                       : correction_method::remove;
  const std::vector<std::size_t> opted_out =
      opted_out_of(sc, sys, &connection_decl::energy_correction);
  const auto enable_bond = [&](const power_bond& bond) {
    for (const bond_term& t : bond.terms)
      for (const std::size_t c : {t.effort, t.flow})
        if (std::find(opted_out.begin(), opted_out.end(), c) == opted_out.end())
          correction::enable(sys, c, method);
  };
  if (sc.coupling.energy_correction) {
    COSIM_INPUT_CHECK(!sys.bonds().empty(), errc::config_value,
                      sc.file +
                          ": coupling.energy_correction = true: the system declares no "
                          "[[bonds]] (the correction works on power bonds)");
    for (const power_bond& bond : sys.bonds()) enable_bond(bond);
  }
  for (const auto& d : sc.system.bonds) {
    if (!d.energy_correction) continue;
    for (const power_bond& bond : sys.bonds())
      if (bond.name == d.name) enable_bond(bond);
  }
  for (const auto& c : sc.system.connections) {
    if (!c.energy_correction.value_or(false)) continue;
    try {
      correction::enable(sys, sys.connection_to(c.to), method);
    } catch (const error& e) {
      fail(c.at, c.at.key + ".energy_correction", std::string("true: ") + e.what());
    }
  }
}

void apply_feedthrough_correction(const scenario& sc, built_scenario& b) {
  system& sys = b.sys;
  if (sc.coupling.feedthrough_correction) {
    const std::string where = sc.file + ": coupling.feedthrough_correction = true: ";
    const std::vector<std::size_t> opted_out =
        opted_out_of(sc, sys, &connection_decl::feedthrough_correction);
    std::size_t applicable = 0;
    for (std::size_t k = 0; k < sys.connections().size(); ++k) {
      const connection& c = sys.connections()[k];
      if (!feedthrough_applies(sys, c)) continue;
      ++applicable;
      if (std::find(opted_out.begin(), opted_out.end(), k) != opted_out.end()) continue;
      const std::string no = feedthrough_refusal(sc, sys, c);
      if (!no.empty()) throw error(errc::config_value, where + no);
      try {
        feedthrough::enable(sys, k);
      } catch (const error& e) {
        throw error(errc::config_value, where + e.what());
      }
    }
    COSIM_INPUT_CHECK(applicable > 0, errc::config_value,
                      where +
                          "no output has direct feedthrough from an input its own consumer "
                          "feeds (nothing to correct)");
  }
  for (const auto& d : sc.system.connections) {
    if (!d.feedthrough_correction.value_or(false)) continue;
    const std::size_t k = sys.connection_to(d.to);
    const std::string no = feedthrough_refusal(sc, sys, sys.connections()[k]);
    if (!no.empty()) fail(d.at, d.at.key + ".feedthrough_correction", "true: " + no);
    try {
      feedthrough::enable(sys, k);
    } catch (const error& e) {
      fail(d.at, d.at.key + ".feedthrough_correction", std::string("true: ") + e.what());
    }
  }
}

}  // namespace cosim::config
