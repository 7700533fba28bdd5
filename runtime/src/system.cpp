#include "cosim/runtime/system.hpp"

#include "cosim/runtime/error.hpp"

namespace cosim {

namespace {

struct port_ref {
  std::string subsystem;
  std::string port;
};

port_ref split(const std::string& ref) {
  const auto dot = ref.find('.');
  COSIM_INPUT_CHECK(dot != std::string::npos && dot > 0 && dot + 1 < ref.size(), errc::model,
                    "port reference '" + ref + "' must look like 'subsystem.port'");
  return {ref.substr(0, dot), ref.substr(dot + 1)};
}

}  // namespace

std::size_t system::add(std::unique_ptr<subsystem> s) {
  for (const auto& existing : subsystems_)
    COSIM_INPUT_CHECK(existing->name() != s->name(), errc::model,
                      "duplicate subsystem name '" + s->name() + "'");
  subsystems_.push_back(std::move(s));
  return subsystems_.size() - 1;
}

std::size_t system::index_of(const std::string& name) const {
  for (std::size_t i = 0; i < subsystems_.size(); ++i)
    if (subsystems_[i]->name() == name) return i;
  throw error(errc::model, "unknown subsystem '" + name + "'");
}

std::size_t system::connect(const std::string& from, const std::string& to) {
  const port_ref a = split(from);
  const port_ref b = split(to);
  connection c;
  c.from = index_of(a.subsystem);
  c.to = index_of(b.subsystem);
  c.output = subsystems_[c.from]->find_output(a.port);
  c.input = subsystems_[c.to]->find_input(b.port);
  COSIM_INPUT_CHECK(c.output != subsystem::npos, errc::model,
                    "subsystem '" + a.subsystem + "' has no output '" + a.port + "'");
  COSIM_INPUT_CHECK(c.input != subsystem::npos, errc::model,
                    "subsystem '" + b.subsystem + "' has no input '" + b.port + "'");
  const port_desc& out = subsystems_[c.from]->output_desc(c.output);
  input_port& in = subsystems_[c.to]->input(c.input);
  COSIM_INPUT_CHECK(units_compatible(out.unit, in.desc().unit), errc::model,
                    "cannot connect " + from + " [" + out.unit + "] to " + to + " [" +
                        in.desc().unit + "]: units differ");
  COSIM_INPUT_CHECK(!in.connected(), errc::model, "input " + to + " already has a producer");
  in.mark_connected();
  connections_.push_back(c);
  if (outgoing_.size() <= c.from) outgoing_.resize(c.from + 1);
  outgoing_[c.from].push_back(c);
  routes_.clear();  // resolved again by the next run (resolve_routes)
  routes_resolved_ = false;
  return connections_.size() - 1;
}

void system::resolve_routes() {
  routes_.assign(outgoing_.size(), {});
  for (std::size_t p = 0; p < outgoing_.size(); ++p) {
    subsystem& producer = *subsystems_[p];
    for (const connection& c : outgoing_[p])
      routes_[p].push_back({&subsystems_[c.to]->input(c.input), &producer.outputs()[c.output],
                            c.output, producer.output_desc(c.output).derivative_order > 0});
  }
  routes_resolved_ = true;
}

std::size_t system::connection_to(const std::string& to) const {
  const port_ref b = split(to);
  const std::size_t s = index_of(b.subsystem);
  const std::size_t in = subsystems_[s]->find_input(b.port);
  for (std::size_t i = 0; i < connections_.size(); ++i)
    if (connections_[i].to == s && connections_[i].input == in) return i;
  throw error(errc::model, "input " + to + " is not connected");
}

void system::add_probe(const std::string& column, const std::string& ref) {
  const port_ref r = split(ref);
  probe p;
  p.column = column;
  p.subsystem = index_of(r.subsystem);
  subsystem& s = *subsystems_[p.subsystem];
  const auto vars = s.variables();
  for (std::size_t i = 0; i < vars.size(); ++i)
    if (vars[i].name == r.port) {
      p.value = vars[i].value;
      p.unit = vars[i].unit;
      s.record_variable(i);
    }
  if (p.value == nullptr) {
    const std::size_t o = s.find_output(r.port);
    const std::size_t in = s.find_input(r.port);
    if (o != subsystem::npos) {
      p.value = &s.outputs()[o];
      p.unit = s.output_desc(o).unit;
    } else if (in != subsystem::npos) {
      p.value = s.record_input(in);  // the value the subsystem sees at each row's time
      p.unit = s.input(in).desc().unit;
      p.input = true;
    } else {
      const std::string why = s.not_exchanged(r.port);
      throw error(errc::model, "subsystem '" + r.subsystem +
                                   "' has no variable, output or input '" + r.port + "'" +
                                   (why.empty() ? "" : ": " + why));
    }
  }
  probes_.push_back(std::move(p));
}

void system::check_complete() const {
  for (const auto& s : subsystems_)
    for (std::size_t i = 0; i < s->input_count(); ++i)
      COSIM_INPUT_CHECK(s->input(i).connected() || s->input(i).keeps_start(), errc::model,
                        "input " + s->name() + "." + s->input(i).desc().name +
                            " is neither connected nor bound to a source");
}

}  // namespace cosim
