// SSP 1.0 units (ssp_units.hpp).
#include "ssp/ssp_units.hpp"

namespace cosim::config::ssp {

void read_units(const xml_file& f, const pugi::xml_node& units, unit_table& out) {
  for (const pugi::xml_node& u : elements(units)) {
    if (!is(u, ns_ssc, "Unit")) {
      if (is_presentation(u)) continue;
      f.unsupported(u, "expected <ssc:Unit>");
    }
    const std::string name = f.required(u, "name");
    unit_def d;
    bool base = false;
    for (const pugi::xml_node& b : elements(u)) {
      if (!is(b, ns_ssc, "BaseUnit")) {
        if (is_presentation(b)) continue;
        f.unsupported(b, "expected <ssc:BaseUnit>");
      }
      static constexpr std::array<const char*, 8> names{"kg", "m",   "s",  "A",
                                                        "K",  "mol", "cd", "rad"};
      for (std::size_t i = 0; i < names.size(); ++i)
        if (b.attribute(names[i])) d.exponents[i] = static_cast<int>(f.to_int(b, names[i]));
      d.factor = f.opt_double(b, "factor").value_or(1.0);
      d.offset = f.opt_double(b, "offset").value_or(0.0);
      if (d.factor == 0.0) f.fail(b, "factor", "must be non-zero");
      base = true;
    }
    if (!base) f.fail(u, "name", "a unit needs its <ssc:BaseUnit>");
    if (out.count(name) != 0) f.fail(u, "name", "unit defined twice");
    out[name] = d;
  }
}

const unit_def* find_unit(const unit_table* own, const unit_table& shared,
                          const std::string& name) {
  if (own != nullptr)
    if (const auto it = own->find(name); it != own->end()) return &it->second;
  if (const auto it = shared.find(name); it != shared.end()) return &it->second;
  return nullptr;
}

bool convertible(const unit_def& from, const unit_def& to) noexcept {
  return from.exponents == to.exponents;
}

double convert(double v, const unit_def& from, const unit_def& to) noexcept {
  // SI = factor * value + offset (SSP 1.0 ssc:BaseUnit).
  const double si = from.factor * v + from.offset;
  return (si - to.offset) / to.factor;
}

}  // namespace cosim::config::ssp
