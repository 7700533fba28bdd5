// Polynomial input extrapolation (000 Sect. 4, 002 Sect. 2.2, 004 interpolation orders 0-4)
// and the input_port semantics built on it.
//
// Expected values come from the polynomials themselves (closed form), never from the
// extrapolator: a Lagrange polynomial of order m through m+1 samples of a polynomial of
// degree <= m reproduces it exactly, and for the monic degree m+1 polynomial the
// interpolation error is exactly prod_j (x - x_j) (the nodal polynomial).
#include "cosim/runtime/extrapolation.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include "cosim/runtime/port.hpp"
#include "cosim/runtime/time.hpp"

namespace {

using cosim::duration;
using cosim::input_port;
using cosim::lagrange_eval;
using cosim::port_desc;
using cosim::sample_history;
using cosim::signal_source;
using cosim::time_point;

constexpr std::int64_t ms = 1'000'000;  // ns
// Uneven sample offsets [ns]: 0, 0.7, 1.9, 2.4, 4.0 ms (spacings 0.7, 1.2, 0.5, 1.6 ms).
constexpr std::array<std::int64_t, 5> offsets{0, 700'000, 1'900'000, 2'400'000, 4'000'000};

/// p(t) = sum_k c_k u^k with u = (t - origin) / 1 ms, i.e. the polynomial varies by O(1)
/// over one sample spacing (coefficients with mixed signs, none zero).
struct poly {
  std::vector<double> c;
  std::int64_t origin = 0;  // [ns]
  [[nodiscard]] double operator()(std::int64_t t_ns) const {
    const double u = static_cast<double>(t_ns - origin) / static_cast<double>(ms);
    double v = 0.0;
    for (auto it = c.rbegin(); it != c.rend(); ++it) v = v * u + *it;
    return v;
  }
};

poly poly_of_degree(int degree, std::int64_t origin) {
  static constexpr std::array<double, 6> coeff{1.25, -0.8, 0.45, -0.12, 0.031, -0.0067};
  poly p;
  p.origin = origin;
  for (int k = 0; k <= degree; ++k) p.c.push_back(coeff[static_cast<std::size_t>(k)]);
  return p;
}

// Evaluation points relative to the first sample [ns]: inside the range (between uneven
// nodes), at a node, and beyond the newest sample (the extrapolation case the co-simulation
// uses: up to one macro step ahead, here up to 2 ms past the newest sample).
constexpr std::array<std::int64_t, 6> eval_offsets{300'000,   1'500'000, 2'400'000,
                                                   4'000'000, 4'900'000, 6'000'000};

// Absolute times [ns]: 0, 1 s and 1e4 s (a long bench session; 1e13 ns).
constexpr std::array<std::int64_t, 3> bases{0, 1'000'000'000, 10'000'000'000'000};

// Rounding: the values are O(1) to O(10) and the Lagrange weights for evaluation up to
// 2 ms past the nodes stay below ~1e2 in magnitude, so the sum is exact to ~1e-13; 1e-11
// (relative to max(1, |p|)) is rounding, while a single ns of node error at 1e4 s
// (what absolute double seconds would give: ulp(1e4) ~ 1.8e-12 s) is already ~1e-9 here.
constexpr double tol = 1e-11;

TEST(Lagrange, ExactOnPolynomialsUpToItsOrderUnevenSpacingAnyAbsoluteTime) {
  for (const std::int64_t base : bases) {
    for (int order = 0; order <= cosim::max_extrapolation_order; ++order) {
      const int n = order + 1;
      // The newest n of the uneven nodes.
      std::array<std::int64_t, 5> t{};
      std::array<double, 5> v{};
      for (int degree = 0; degree <= order; ++degree) {
        // Origin away from the nodes so that no coefficient is trivially isolated.
        const poly p = poly_of_degree(degree, base + 1'300'000);
        for (int j = 0; j < n; ++j) {
          t[static_cast<std::size_t>(j)] =
              base + offsets[static_cast<std::size_t>(5 - n) + static_cast<std::size_t>(j)];
          v[static_cast<std::size_t>(j)] = p(t[static_cast<std::size_t>(j)]);
        }
        for (const std::int64_t e : eval_offsets) {
          const std::int64_t te = base + e;
          const double expected = p(te);
          EXPECT_NEAR(lagrange_eval(t.data(), v.data(), n, te), expected,
                      tol * std::max(1.0, std::abs(expected)))
              << "base " << base << " ns, order " << order << ", degree " << degree
              << ", t - base = " << e << " ns";
        }
      }
    }
  }
}

TEST(Lagrange, OrderMIsNotExactOnDegreeMPlusOne) {
  // For the monic polynomial x^(m+1) (x in ms) through m+1 nodes x_j, the interpolation
  // error is exactly the nodal polynomial prod_j (x - x_j), which is nonzero off the nodes.
  for (const std::int64_t base : bases) {
    for (int order = 0; order <= cosim::max_extrapolation_order; ++order) {
      const int n = order + 1;
      std::array<std::int64_t, 5> t{};
      std::array<double, 5> v{};
      std::array<double, 5> x{};
      for (int j = 0; j < n; ++j) {
        const auto js = static_cast<std::size_t>(j);
        t[js] = base + offsets[static_cast<std::size_t>(5 - n) + static_cast<std::size_t>(j)];
        x[js] = static_cast<double>(t[js] - base) / static_cast<double>(ms);
        v[js] = std::pow(x[js], n);
      }
      for (const std::int64_t e : {std::int64_t{4'900'000}, std::int64_t{6'000'000}}) {
        const double xe = static_cast<double>(e) / static_cast<double>(ms);
        double nodal = 1.0;
        for (int j = 0; j < n; ++j) nodal *= xe - x[static_cast<std::size_t>(j)];
        const double exact = std::pow(xe, n);
        const double got = lagrange_eval(t.data(), v.data(), n, base + e);
        ASSERT_GT(std::abs(nodal), 0.1);
        EXPECT_GT(std::abs(got - exact), 0.1)
            << "order " << order << " looks exact on degree " << n;
        EXPECT_NEAR(exact - got, nodal, 1e-9 * std::max(1.0, std::abs(exact)))
            << "base " << base << ", order " << order;
      }
    }
  }
}

TEST(SampleHistory, UsesTheNewestOrderPlusOneSamplesAndKeepsAtMostFive) {
  sample_history h;
  EXPECT_EQ(h.size(), 0);
  // Two junk samples first, then four samples of the quadratic q(u) = 2 - u + 0.5 u^2 at
  // u = 2, 3, 4, 5 (u in ms). Order 2 must use only the newest three and be exact.
  auto q = [](double u) { return 2.0 - u + 0.5 * u * u; };
  h.push(time_point{duration{0}}, 1e6);
  h.push(time_point{duration{1 * ms}}, -1e6);
  for (int k = 2; k <= 5; ++k) h.push(time_point{duration{k * ms}}, q(k));
  EXPECT_EQ(h.size(), sample_history::capacity);
  EXPECT_EQ(sample_history::capacity, 5);
  EXPECT_EQ(h.newest(), q(5));
  EXPECT_EQ(h.newest_time(), time_point{duration{5 * ms}});
  EXPECT_NEAR(h.value_at(time_point{duration{6 * ms}}, 2), q(6), 1e-12);
  EXPECT_NEAR(h.value_at(time_point{duration{6 * ms}}, 3), q(6), 1e-12);
  // Order 1 through u = 4, 5: the secant, q(5) + (q(5) - q(4)) at u = 6.
  EXPECT_NEAR(h.value_at(time_point{duration{6 * ms}}, 1), q(5) + (q(5) - q(4)), 1e-12);
  EXPECT_EQ(h.value_at(time_point{duration{6 * ms}}, 0), q(5));
  // Order 4 uses five samples; the oldest junk sample (u = 0) has been dropped, but the
  // second (u = 1, -1e6) is still inside the window: the result is far from q.
  EXPECT_GT(std::abs(h.value_at(time_point{duration{6 * ms}}, 4) - q(6)), 1.0);
  h.push(time_point{duration{6 * ms}}, q(6));  // now u = 2..6, all on q
  EXPECT_NEAR(h.value_at(time_point{duration{7 * ms}}, 4), q(7), 1e-10);
  h.reset();
  EXPECT_EQ(h.size(), 0);
}

TEST(SampleHistory, StaysExactOverManyWrapsOfItsRing) {
  // The history is a ring: after every push, order 3 through the newest four samples of a
  // cubic is exact (to rounding), however often the ring has wrapped; a replaced newest
  // sample (re-delivery at the same time) is the one the polynomial goes through.
  auto c = [](double u) { return 1.0 - 2.0 * u + 0.25 * u * u - 0.01 * u * u * u; };
  sample_history h;
  for (int k = 0; k < 23; ++k) {
    h.push(time_point{duration{k * ms}}, k % 3 == 0 ? 1e9 : c(k));
    if (k % 3 == 0) h.replace_newest(c(k));
    EXPECT_EQ(h.newest(), c(k));
    EXPECT_EQ(h.newest_time(), time_point{duration{k * ms}});
    EXPECT_EQ(h.size(), std::min(k + 1, sample_history::capacity));
    if (k >= 3) {
      EXPECT_NEAR(h.value_at(time_point{duration{(k + 1) * ms}}, 3), c(k + 1), 1e-9) << k;
      EXPECT_NEAR(h.value_at(time_point{duration{(k + 1) * ms}}, 4), c(k + 1), 1e-9) << k;
      // Order 1: the secant through the newest two.
      EXPECT_NEAR(h.value_at(time_point{duration{(k + 1) * ms}}, 1), 2.0 * c(k) - c(k - 1), 1e-9);
    }
  }
}

TEST(SampleHistory, FewerSamplesThanOrderUsesWhatExists) {
  sample_history h;
  h.push(time_point{duration{10 * ms}}, 3.0);
  // One sample: any order is ZOH.
  for (int order = 0; order <= 4; ++order)
    EXPECT_EQ(h.value_at(time_point{duration{12 * ms}}, order), 3.0);
  h.push(time_point{duration{11 * ms}}, 5.0);
  // Two samples: orders >= 1 are linear, slope 2 per ms.
  for (int order = 1; order <= 4; ++order)
    EXPECT_NEAR(h.value_at(time_point{duration{13 * ms}}, order), 9.0, 1e-12);
  EXPECT_EQ(h.value_at(time_point{duration{13 * ms}}, 0), 5.0);
}

class constant_plus_time final : public signal_source {
 public:
  [[nodiscard]] double value(time_point t) const noexcept override {
    return 100.0 + cosim::to_seconds(t);
  }
};

TEST(InputPort, DescribesItselfAndStartsUnconnected) {
  input_port p({"fh", "N", cosim::port_role::effort});
  EXPECT_EQ(p.desc().name, "fh");
  EXPECT_EQ(p.desc().unit, "N");
  EXPECT_EQ(p.desc().role, cosim::port_role::effort);
  EXPECT_FALSE(p.connected());
  EXPECT_EQ(p.order(), 0);
  p.mark_connected();
  EXPECT_TRUE(p.connected());
  p.set_order(3);
  EXPECT_EQ(p.order(), 3);
}

TEST(InputPort, SetInitialGivesTheStartValueAndResetsHistory) {
  input_port p(port_desc{"s", "m", cosim::port_role::signal});
  p.set_order(2);
  const time_point t0{duration{0}};
  p.receive(time_point{duration{1 * ms}}, 7.0);
  p.receive(time_point{duration{2 * ms}}, 9.0);
  p.set_initial(t0, 0.5);
  EXPECT_EQ(p.history().size(), 1);
  // A single sample: held whatever the order.
  EXPECT_EQ(p.value_at(t0), 0.5);
  EXPECT_EQ(p.value_at(time_point{duration{5 * ms}}), 0.5);
}

TEST(InputPort, ReceiveExtrapolatesWithTheConfiguredOrder) {
  input_port p(port_desc{"sd", "m/s", cosim::port_role::flow});
  p.set_initial(time_point{duration{0}}, 1.0);
  p.receive(time_point{duration{1 * ms}}, 3.0);
  p.receive(time_point{duration{2 * ms}}, 7.0);  // 1 + u + u^2 at u = 0, 1, 2 (ms)
  const time_point t3{duration{3 * ms}};
  p.set_order(0);
  EXPECT_EQ(p.value_at(t3), 7.0);  // ZOH: newest sample
  p.set_order(1);
  EXPECT_NEAR(p.value_at(t3), 11.0, 1e-12);  // line through (1, 3), (2, 7)
  p.set_order(2);
  EXPECT_NEAR(p.value_at(t3), 13.0, 1e-12);  // 1 + 3 + 9
}

TEST(InputPort, RedeliveryAtTheSameTimeReplacesTheSample) {
  // The start-up exchange delivers at t0 on top of set_initial(t0): that must replace
  // the initial value, not add a second sample at the same time (which would make the
  // Lagrange weights divide by zero).
  input_port p(port_desc{"fh", "N", cosim::port_role::effort});
  p.set_order(1);
  const time_point t0{duration{0}};
  p.set_initial(t0, 8000.0);
  p.receive(t0, 8829.0);
  EXPECT_EQ(p.history().size(), 1);
  EXPECT_EQ(p.value_at(t0), 8829.0);
  p.receive(time_point{duration{1 * ms}}, 8830.0);
  p.receive(time_point{duration{1 * ms}}, 8831.0);
  EXPECT_EQ(p.history().size(), 2);
  EXPECT_EQ(p.history().newest(), 8831.0);
  // Linear through (0, 8829) and (1 ms, 8831): value 8833 at 2 ms, finite.
  EXPECT_NEAR(p.value_at(time_point{duration{2 * ms}}), 8833.0, 1e-9);
}

TEST(InputPort, BoundSignalSourceIsEvaluatedExactlyAndOverridesSamples) {
  input_port p(port_desc{"kappa", "1", cosim::port_role::signal});
  const constant_plus_time src;
  p.set_initial(time_point{duration{0}}, -1.0);
  p.bind_source(&src);
  EXPECT_EQ(p.source(), &src);
  EXPECT_TRUE(p.connected());  // a source counts as a producer
  // Evaluated at the exact sub-step time, not held at the last sample.
  EXPECT_DOUBLE_EQ(p.value_at(time_point{duration{1'234'567}}), 100.0 + 1.234567e-3);
  EXPECT_DOUBLE_EQ(p.value_at(time_point{duration{2'000'000'000}}), 102.0);
  p.bind_source(nullptr);
  EXPECT_FALSE(p.connected());
  EXPECT_EQ(p.value_at(time_point{duration{5 * ms}}), -1.0);
}

TEST(Time, SecondsRoundTripToNanoseconds) {
  EXPECT_EQ(cosim::to_duration(1e-3).count(), 1'000'000);
  EXPECT_EQ(cosim::to_duration(0.2e-3).count(), 200'000);
  EXPECT_EQ(cosim::to_duration(0.014).count(), 14'000'000);
  EXPECT_EQ(cosim::to_duration(-1e-3).count(), -1'000'000);
  EXPECT_EQ(cosim::to_duration(1e4).count(), 10'000'000'000'000);
  EXPECT_DOUBLE_EQ(cosim::to_seconds(cosim::at_seconds(2.5)), 2.5);
}

}  // namespace
