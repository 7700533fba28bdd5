#include "cosim/runtime/feedthrough_correction.hpp"

#include <string>

#include "cosim/runtime/error.hpp"
#include "cosim/runtime/system.hpp"

namespace cosim::feedthrough {

void enable(system& sys, std::size_t c) {
  const std::vector<connection>& conns = sys.connections();
  const connection& cn = conns.at(c);
  subsystem& producer = sys.at(cn.from);
  subsystem& consumer = sys.at(cn.to);
  input_port& port = consumer.input(cn.input);
  if (port.feedthrough().count > 0) return;  // asked for twice
  const std::string out = producer.name() + "." + producer.output_desc(cn.output).name;
  const std::string where = "feedthrough correction of input '" + consumer.name() + "." +
                            port.desc().name + "' (fed by '" + out + "')";
  COSIM_INPUT_CHECK(producer.output_desc(cn.output).feedthrough, errc::model,
                    where + ": '" + out + "' has no direct feedthrough, nothing to correct");
  input_port::feedthrough_terms terms;
  for (std::size_t i = 0; i < producer.input_count(); ++i) {
    if (!producer.output_depends_on(cn.output, i)) continue;
    const connection* back = nullptr;
    for (const connection& k : conns)
      if (k.to == cn.from && k.input == i) back = &k;
    if (back == nullptr || back->from != cn.to) continue;  // not fed by this consumer
    const std::string in = producer.name() + "." + producer.input(i).desc().name;
    if (!producer.provides_partial(cn.output, i)) {
      const std::string why = producer.partial_refusal(cn.output, i);
      throw error(errc::model,
                  where + ": '" + producer.name() + "' does not give the derivative of '" + out +
                      "' with respect to '" + in + "'" + (why.empty() ? "" : ": " + why));
    }
    COSIM_INPUT_CHECK(terms.count < input_port::max_feedthrough_terms, errc::model,
                      where + ": more than 4 inputs of '" + producer.name() + "' fed by '" +
                          consumer.name() + "'");
    terms.capture[terms.count] = producer.add_partial_capture(cn.output, i);
    terms.own[terms.count] = back->output;
    ++terms.count;
  }
  COSIM_INPUT_CHECK(
      terms.count > 0, errc::model,
      where + ": '" + out + "' depends on no input that '" + consumer.name() + "' feeds");
  port.set_feedthrough(terms);
  consumer.add_feedthrough_input(cn.input);
}

void fill(const subsystem& producer, const input_port& port, double* d, double* u) noexcept {
  const input_port::feedthrough_terms& f = port.feedthrough();
  const auto captures = producer.partial_captures();
  for (std::size_t k = 0; k < f.count; ++k) {
    d[k] = captures[f.capture[k]].d;
    u[k] = captures[f.capture[k]].u;
  }
}

}  // namespace cosim::feedthrough
