// The oscillator subsystem type of 000 Sect. 2.4 / App. A and 004 Sect. 3: one point mass
// with its ground spring and damper, the coupling elements it holds and the coupling forces
// it receives (oscillator_subsystem.hpp).
//
// A coupling element between masses a and b is written in the file of both sides:
//  - f-d (000 Eq. (12)): a lists it in `links` with coupling = "f-d" and sends its force on
//    output f; b lists the tag of a in `forces` and returns x and v.
//  - d-d (000 Eqs. (40)-(41)): a and b each list it in `links` (coupling = "d-d").
// The partner's start values (x0, v0 of the partner, the element's force at t0 of 000 Eq.
// (13)) are start-value parameters of the subsystem that needs them. They are written
// explicitly (a preset computes them in its expansion), so no oscillator initialisation
// step spans subsystems.
#include <algorithm>
#include <limits>

#include "cosim/rt_config/type_registry.hpp"
#include "cosim/runtime/error.hpp"
#include "cosim/subsystems/oscillator_subsystem.hpp"

namespace cosim::config {

namespace {

constexpr double inf = std::numeric_limits<double>::infinity();

param_decl real(std::string name, std::string unit, double def, double min, bool min_exclusive,
                std::string doc) {
  param_decl d;
  d.name = std::move(name);
  d.kind = param_kind::real;
  d.unit = std::move(unit);
  d.def = def;
  d.min = min;
  d.min_exclusive = min_exclusive;
  d.doc = std::move(doc);
  return d;
}

param_decl reals(std::string name, std::string unit, double min, bool start_value,
                 std::string doc) {
  param_decl d;
  d.name = std::move(name);
  d.kind = param_kind::reals;
  d.unit = std::move(unit);
  d.def = std::vector<double>{};
  d.min = min;
  d.start_value = start_value;
  d.doc = std::move(doc);
  return d;
}

param_decl texts(std::string name, std::string doc) {
  param_decl d;
  d.name = std::move(name);
  d.kind = param_kind::texts;
  d.def = std::vector<std::string>{};
  d.doc = std::move(doc);
  return d;
}

[[noreturn]] void bad(const std::string& name, const std::string& why) {
  throw error(errc::config_value, "parameters." + name + ": " + why);
}

// Tags name ports ("x" + tag, ...): non-empty, without '.', each once.
void check_tags(const std::vector<std::string>& tags, const std::string& name) {
  for (std::size_t i = 0; i < tags.size(); ++i) {
    if (tags[i].empty() || tags[i].find('.') != std::string::npos)
      bad(name, "tag \"" + tags[i] + "\" must be non-empty and contain no '.'");
    if (std::find(tags.begin(), tags.begin() + static_cast<std::ptrdiff_t>(i), tags[i]) !=
        tags.begin() + static_cast<std::ptrdiff_t>(i))
      bad(name, "tag \"" + tags[i] + "\" appears twice");
  }
}

const std::vector<double>& same_size(const param_set& p, const std::string& name,
                                     const std::string& of, std::size_t n) {
  const std::vector<double>& v = reals_param(p, name);
  if (v.size() != n)
    bad(name, "has " + std::to_string(v.size()) + " value" + (v.size() == 1 ? "" : "s") +
                  ", but parameters." + of + " names " + std::to_string(n) + " (one per entry)");
  return v;
}

/// Like same_size, but an empty list means 0 for every entry: a start value left out is a
/// partner at rest at its origin (as x0 = v0 = 0 for the mass itself).
std::vector<double> same_size_or_zeros(const param_set& p, const std::string& name,
                                       const std::string& of, std::size_t n) {
  if (reals_param(p, name).empty()) return std::vector<double>(n, 0.0);
  return same_size(p, name, of, n);
}

std::unique_ptr<subsystem> create_mass(const std::string& name, const param_set& p,
                                       const std::string& integrator_name) {
  osc::integrator integ{};
  COSIM_INPUT_CHECK(
      osc::parse_integrator(integrator_name, integ), errc::config_value,
      "unknown integrator \"" + integrator_name + "\" (trapezoidal, semi-implicit-euler, rk4)");
  const osc::mass_spec spec{real_param(p, "m"),
                            real_param(p, "k"),
                            real_param(p, "c"),
                            real_param(p, "spring_exponent"),
                            real_param(p, "damper_exponent"),
                            real_param(p, "x0"),
                            real_param(p, "v0")};
  const std::vector<std::string>& links = texts_param(p, "links");
  check_tags(links, "links");
  const std::vector<double>& lk = same_size(p, "link_k", "links", links.size());
  const std::vector<double>& lc = same_size(p, "link_c", "links", links.size());
  const std::vector<double> lx0 = same_size_or_zeros(p, "link_x0", "links", links.size());
  const std::vector<double> lv0 = same_size_or_zeros(p, "link_v0", "links", links.size());
  const bool fd = text_param(p, "coupling") == "f-d";
  // One output f carries the force of the element this mass holds (000 Eq. (13)).
  if (fd && links.size() > 1)
    bad("coupling",
        "\"f-d\" sends the force of one coupling element on output f, but "
        "parameters.links names " +
            std::to_string(links.size()) +
            "; split the mass's elements over their partners or use \"d-d\"");
  const std::vector<std::string>& forces = texts_param(p, "forces");
  check_tags(forces, "forces");
  const std::vector<double> f0 = same_size_or_zeros(p, "force_f0", "forces", forces.size());

  auto m = std::make_unique<osc::oscillator_mass>(name, spec, integ);
  for (std::size_t i = 0; i < links.size(); ++i)
    m->add_link(links[i], lk[i], lc[i], lx0[i], lv0[i], fd);
  for (std::size_t i = 0; i < forces.size(); ++i) m->add_force(forces[i], f0[i]);
  return m;
}

}  // namespace

std::vector<subsystem_type> oscillator_subsystem_types() {
  subsystem_type t;
  t.name = "oscillator.mass";
  t.description =
      "point mass with ground spring and damper and coupling spring-dampers (000 Sect. 2.4, "
      "App. A; 004 Sect. 3); outputs x [m], v [m/s], f [N] (f-d owner), inputs x<tag>, "
      "v<tag> per link, f<tag> per received force";
  t.parameters = {
      real("m", "kg", 1.0, 0.0, true, "mass (> 0: the mass matrix of 000 Eq. (10) is regular)"),
      real("k", "N/m", 0.0, 0.0, false,
           "ground spring (N/m^n for spring_exponent n, 000 Eq. (55))"),
      real("c", "N s/m", 0.0, 0.0, false,
           "ground damper ((N s/m)^p for damper_exponent p, 000 Eq. (56))"),
      real("spring_exponent", "", 1.0, 1.0, false,
           "n of 000 Eq. (55), every spring of this mass: F = k |d|^(n-1) d"),
      real("damper_exponent", "", 1.0, 1.0, false,
           "m of 000 Eq. (56), every damper of this mass: F = c |d'|^(m-1) d'"),
      real("x0", "m", 0.0, -inf, false, "initial displacement"),
      real("v0", "m/s", 0.0, -inf, false, "initial velocity"),
      texts("links",
            "tags of the coupling elements this mass holds (000 Eq. (12)); each adds inputs "
            "x<tag> [m] and v<tag> [m/s], the partner's displacement and velocity"),
      reals("link_k", "N/m", 0.0, false, "coupling spring of each link"),
      reals("link_c", "N s/m", 0.0, false, "coupling damper of each link"),
      reals("link_x0", "m", -inf, true,
            "the partner's initial displacement, per link ([]: 0 for every link)"),
      reals("link_v0", "m/s", -inf, true,
            "the partner's initial velocity, per link ([]: 0 for every link)"),
      [] {
        param_decl d;
        d.name = "coupling";
        d.kind = param_kind::text;
        d.def = std::string("f-d");
        d.choices = {"f-d", "d-d"};
        d.doc =
            "f-d: the (single) link's force on the partner is output f, direct feedthrough "
            "(000 Eqs. (13), (24)); d-d: the partner holds its own copy (000 Eqs. (40)-(41))";
        return d;
      }(),
      texts("forces",
            "tags of the coupling forces this mass receives from a partner's f-d link (000 "
            "Eq. (14)); each adds input f<tag> [N]"),
      reals("force_f0", "N", -inf, true,
            "each received force at t0 (000 Eq. (13) with both masses' start values; []: 0 for "
            "every force)"),
  };
  t.integrators = {"trapezoidal", "semi-implicit-euler", "rk4"};
  t.default_step = [](double H, const param_set& /*p*/) { return H; };
  t.create = create_mass;
  return {t};
}

std::vector<init_type> oscillator_init_types() {
  // The partners' start values are explicit parameters (link_x0, link_v0, force_f0).
  return {};
}

}  // namespace cosim::config
