// Subsystem types from outside the tree (cosim/rt_config/plugin.hpp): the example plugin of
// examples/my_models, loaded with dlopen, against the closed form of its first-order lag,
// with the allocation probe of the built-in types over its step; and the registry's refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "alloc_counter.hpp"
#include "cosim/rt_config/plugin.hpp"
#include "cosim/rt_config/scenario.hpp"
#include "cosim/runtime/error.hpp"
#include "cosim/runtime/port.hpp"

namespace {

using namespace cosim;
using namespace cosim::config;

const std::string plugin = COSIM_MY_MODELS_PLUGIN;

const subsystem_type& lag_type() {
  load_plugin(plugin, "test");
  const subsystem_type* t = find_subsystem_type("my.first_order_lag");
  EXPECT_NE(t, nullptr);
  return *t;
}

TEST(Plugin, LagStepsAllocationFreeToTheClosedForm) {
  const subsystem_type& t = lag_type();
  // tau y' + y = K u, u held at 1.5: y = K u + (y0 - K u) exp(-t / tau).
  const double tau = 0.5, K = 2.0, y0 = -1.0, u = 1.5;
  const param_set p = resolve_parameters(t, {{"tau", tau}, {"K", K}, {"y0", y0}}, "test",
                                         "subsystems.lag.parameters");
  std::unique_ptr<subsystem> s = t.create("lag", p, "exact");
  ASSERT_EQ(s->input_count(), 1U);
  ASSERT_EQ(s->output_count(), 1U);
  EXPECT_EQ(s->output_desc(0).name, "y");
  EXPECT_FALSE(s->output_desc(0).feedthrough);
  EXPECT_TRUE(s->realtime_safe());
  const duration h = to_duration(0.01);
  s->set_step_size(h);
  s->input(0).set_initial(time_point{}, u);
  s->initialize(time_point{});
  s->update_outputs(time_point{});
  EXPECT_EQ(s->output(0), y0);
  const cosim::test::alloc_window window;
  double max_err = 0.0;
  for (int n = 0; n < 300; ++n) {
    const time_point tn{n * h};
    ASSERT_TRUE(s->step(tn, h));
    s->update_outputs(tn + h);
    const double tt = to_seconds((n + 1) * h);
    max_err =
        std::max(max_err, std::abs(s->output(0) - (K * u + (y0 - K * u) * std::exp(-tt / tau))));
  }
  EXPECT_EQ(window.allocations(), 0U) << "the plugin's step allocated";
  EXPECT_LT(max_err, 1e-12);

  // Forward Euler, the other integrator: an O(h) error, the plugin gets the choice.
  std::unique_ptr<subsystem> e = t.create("lag", p, "euler");
  e->set_step_size(h);
  e->input(0).set_initial(time_point{}, u);
  e->initialize(time_point{});
  double euler_err = 0.0;
  for (int n = 0; n < 300; ++n) {
    ASSERT_TRUE(e->step(time_point{n * h}, h));
    e->update_outputs(time_point{(n + 1) * h});
    const double tt = to_seconds((n + 1) * h);
    euler_err =
        std::max(euler_err, std::abs(e->output(0) - (K * u + (y0 - K * u) * std::exp(-tt / tau))));
  }
  // Global error of Euler on y' = -y / tau: about |y0 - K u| h / (2 tau) e^-1 = 0.0147.
  EXPECT_GT(euler_err, 0.01);
  EXPECT_LT(euler_err, 0.02);
}

TEST(Plugin, LoadingTwiceRegistersOnce) {
  (void)lag_type();
  EXPECT_NO_THROW(load_plugin(plugin, "again"));
  int n = 0;
  for (const subsystem_type* t : all_subsystem_types()) n += t->name == "my.first_order_lag";
  EXPECT_EQ(n, 1);
}

TEST(Plugin, RegistryRefusesTakenAndReservedNames) {
  (void)lag_type();
  subsystem_type t = lag_type();
  try {
    register_subsystem_type(t);
    FAIL() << "a second my.first_order_lag was accepted";
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find("\"my.first_order_lag\" is already registered"),
              std::string::npos)
        << e.what();
  }
  t.name = "oscillator.mass";  // a built-in's name
  EXPECT_THROW(register_subsystem_type(t), error);
  t.name = "fmu:x";
  EXPECT_THROW(register_subsystem_type(t), error);
}

TEST(Plugin, MissingOrForeignLibraryIsRefusedNamingIt) {
  try {
    load_plugin("/nonexistent/libnothing.so", "sys.toml:1:1: plugins");
    FAIL();
  } catch (const error& e) {
    EXPECT_NE(
        std::string(e.what()).find("sys.toml:1:1: plugins: plugin \"/nonexistent/libnothing.so\""),
        std::string::npos)
        << e.what();
  }
  // A shared library that is no cosim plugin (the C library).
  try {
    load_plugin("/lib/x86_64-linux-gnu/libm.so.6", "w");
    FAIL();
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find("not a cosim plugin"), std::string::npos) << e.what();
  }
}

}  // namespace
