// What an FMU subsystem exchanges with its FMU per communication point (issue 11, speed):
// an input goes to the FMU only when its value changed since the last set (the FMU keeps an
// input's value until it is set again, FMI 2.0 Sect. 4.2.1 / FMI 3.0 Sect. 4.2.2), and a
// local is fetched only once the system records it. The feedthrough test FMU counts the sets
// of its input u in its local u_sets (read by the importer at communication points).
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "cosim/fmi/fmu_file.hpp"
#include "cosim/fmi/fmu_subsystem.hpp"

namespace {

using namespace cosim::fmi;
using cosim::duration;
using cosim::time_point;

const std::string fmus = COSIM_TEST_FMU_DIR;

std::unique_ptr<fmu_subsystem> make(const std::string& fmu) {
  return std::make_unique<fmu_subsystem>(fmu, load_fmu(read_fmu(fmus + "/" + fmu + ".fmu")),
                                         std::vector<parameter_value>{});
}

std::size_t variable_index(const cosim::subsystem& s, const std::string& name) {
  const auto vars = s.variables();
  for (std::size_t i = 0; i < vars.size(); ++i)
    if (vars[i].name == name) return i;
  ADD_FAILURE() << "no variable " << name;
  return 0;
}

double variable(const cosim::subsystem& s, const std::string& name) {
  return *s.variables()[variable_index(s, name)].value;
}

constexpr duration h = cosim::to_duration(0.002);
constexpr std::int64_t k = 5;  // internal steps per macro step
constexpr duration H = k * h;

TEST(FmuExchange, HeldInputsGoToTheFmuOnlyWhenTheyChange) {
  for (const char* fmu : {"feedthrough_fmi2", "feedthrough_fmi3"}) {
    SCOPED_TRACE(fmu);
    auto s = make(fmu);
    s->input(0).mark_connected();  // u, zero-order hold (order 0)
    s->record_variable(variable_index(*s, "u_sets"));
    const time_point t0{};
    s->initialize(t0);
    s->input(0).receive(t0, 1.0);
    s->update_outputs(t0);  // the first set sends every connected input
    EXPECT_EQ(variable(*s, "u_sets"), 1.0);
    EXPECT_EQ(s->output(0), 2.0);  // y = gain u, gain 2

    // Five steps and a communication point with u unchanged: nothing more is set (one set
    // per step and one per communication point would make 7).
    ASSERT_TRUE(s->steps(t0, h, k));
    s->update_outputs(t0 + H);
    EXPECT_EQ(variable(*s, "u_sets"), 1.0);

    // A new value: set once, at the communication point (y is direct feedthrough), and not
    // again in the steps that follow.
    s->input(0).receive(t0 + H, 3.0);
    s->update_outputs(t0 + H);
    EXPECT_EQ(variable(*s, "u_sets"), 2.0);
    EXPECT_EQ(s->output(0), 6.0);
    ASSERT_TRUE(s->steps(t0 + H, h, k));
    s->update_outputs(t0 + 2 * H);
    EXPECT_EQ(variable(*s, "u_sets"), 2.0);

    // The same value again is no change; -0.0 after 0.0 is one (bitwise comparison). No
    // update_outputs at these communication points: the steps set the new values.
    s->input(0).receive(t0 + 2 * H, 3.0);
    ASSERT_TRUE(s->steps(t0 + 2 * H, h, k));
    s->input(0).receive(t0 + 3 * H, 0.0);
    ASSERT_TRUE(s->steps(t0 + 3 * H, h, k));
    s->update_outputs(t0 + 4 * H);
    EXPECT_EQ(variable(*s, "u_sets"), 3.0);
    EXPECT_EQ(s->output(0), 0.0);
    s->input(0).receive(t0 + 4 * H, -0.0);
    ASSERT_TRUE(s->steps(t0 + 4 * H, h, k));
    s->update_outputs(t0 + 5 * H);
    EXPECT_EQ(variable(*s, "u_sets"), 4.0);
    EXPECT_TRUE(std::signbit(s->output(0)));  // y = 2 * -0.0
  }
}

TEST(FmuExchange, ExtrapolatedInputsGoToTheFmuAtEveryStepTheyChange) {
  auto s = make("feedthrough_fmi2");
  s->input(0).mark_connected();
  s->input(0).set_order(1);  // linear extrapolation: a new value at every internal step
  s->record_variable(variable_index(*s, "u_sets"));
  const time_point t0{};
  s->initialize(t0);
  s->input(0).receive(t0, 0.0);
  s->update_outputs(t0);
  EXPECT_EQ(variable(*s, "u_sets"), 1.0);
  // With one sample, order 1 holds it: no change over the first macro step.
  ASSERT_TRUE(s->steps(t0, h, k));
  s->update_outputs(t0 + H);
  EXPECT_EQ(variable(*s, "u_sets"), 1.0);
  // u(t) = 1000 t through (0, 0) and (H, 10): at t0 + H + j h, j = 0..4, five new values
  // (the one at t0 + H once, at the communication point), then 2 H at the next one.
  s->input(0).receive(t0 + H, 10.0);
  s->update_outputs(t0 + H);
  EXPECT_EQ(variable(*s, "u_sets"), 2.0);
  ASSERT_TRUE(s->steps(t0 + H, h, k));
  s->update_outputs(t0 + 2 * H);
  EXPECT_EQ(variable(*s, "u_sets"), 7.0);
  EXPECT_NEAR(s->output(0), 2.0 * 20.0, 1e-12);
}

TEST(FmuExchange, LocalsAreFetchedOnlyWhenRecorded) {
  // linear_ode: x' = -k x, k = x0 = 1; der_x is a local (= -x).
  for (bool record : {false, true}) {
    SCOPED_TRACE(record ? "der_x recorded" : "der_x not recorded");
    auto s = make("linear_ode_fmi3");
    const std::size_t der = variable_index(*s, "der_x");
    if (record) s->record_variable(der);
    const time_point t0{};
    s->initialize(t0);
    s->update_outputs(t0);
    ASSERT_TRUE(s->steps(t0, h, k));
    s->update_outputs(t0 + H);
    const double x = std::exp(-cosim::to_seconds(H));
    EXPECT_NEAR(s->output(0), x, 1e-15);
    if (record)
      EXPECT_NEAR(*s->variables()[der].value, -x, 1e-15);
    else  // never fetched: still the NaN it starts with
      EXPECT_TRUE(std::isnan(*s->variables()[der].value));
  }
}

TEST(FmuExchange, DirectionalDerivativeIsTheFeedthroughPartial) {
  // feedthrough: y = gain u, providesDirectionalDerivative(s): d y / d u = gain at every
  // communication point (the feedthrough correction asks for it there).
  for (const char* fmu : {"feedthrough_fmi2", "feedthrough_fmi3"}) {
    SCOPED_TRACE(fmu);
    const auto loaded = load_fmu(read_fmu(fmus + "/" + fmu + ".fmu"));
    const auto& vars = loaded->file().md.variables;
    std::size_t gain = 0;
    while (gain < vars.size() && vars[gain].name != "gain") ++gain;
    ASSERT_LT(gain, vars.size());
    fmu_subsystem s(fmu, loaded, {{gain, 3.5, std::nullopt}});
    s.input(0).mark_connected();
    ASSERT_TRUE(s.provides_partial(0, 0));
    const time_point t0{};
    s.initialize(t0);
    s.input(0).receive(t0, 1.0);
    s.update_outputs(t0);
    EXPECT_EQ(s.output(0), 3.5);
    EXPECT_EQ(s.output_partial(0, 0), 3.5);
    ASSERT_TRUE(s.steps(t0, h, k));
    s.update_outputs(t0 + H);
    EXPECT_EQ(s.output_partial(0, 0), 3.5);
  }
  // typed: an output with feedthrough, no directional derivatives declared.
  auto typed = make("typed_fmi2");
  bool any = false;
  for (std::size_t o = 0; o < typed->output_count(); ++o)
    for (std::size_t i = 0; i < typed->input_count(); ++i) {
      EXPECT_FALSE(typed->provides_partial(o, i));
      if (!typed->output_depends_on(o, i)) continue;
      any = true;
      const std::string why = typed->partial_refusal(o, i);
      EXPECT_NE(why.find("does not declare providesDirectionalDerivative in its "
                         "modelDescription.xml"),
                std::string::npos)
          << why;
    }
  EXPECT_TRUE(any);
}

}  // namespace
