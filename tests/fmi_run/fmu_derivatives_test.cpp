// Output derivatives of an FMU (maxOutputDerivativeOrder, issue 11): a connection that
// extrapolates from such an output evaluates the Taylor polynomial of the FMU's own
// derivatives at the communication point, not finite differences of past samples; from an
// output without derivatives the extrapolation stays the Lagrange polynomial through the
// past samples, value for value.
//
// linear_ode (x' = -k x, x(0) = 1, exact per step) gives x' = -k x and x'' = k^2 x
// (maxOutputDerivativeOrder 2, FMI 2 and FMI 3). It feeds a feedthrough FMU (y = u) over a
// connection of extrapolation order m; Jacobi: the consumer's y at t_{n+1} is its input
// extrapolated from the sample at t_n, so with x_n = e^(-k t_n) and a = -k H
//   Taylor order 1:  y_{n+1} = x_n (1 + a)              (FD: 2 x_n - x_{n-1})
//   Taylor order 2:  y_{n+1} = x_n (1 + a + a^2 / 2)    (FD: 3 x_n - 3 x_{n-1} + x_{n-2})
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "cosim/rt_config/run.hpp"
#include "cosim/runtime/extrapolation.hpp"
#include "fmu_binary.hpp"
#include "row_table.hpp"
#include "temp_dir.hpp"

namespace {

using cosim::test::fmu_path;

using table = cosim::test::row_table;

void run_system(const std::string& text, table& rows, cosim::run_outcome& out,
                const std::string& mode = "offline") {
  const cosim::test::temp_dir dir;
  cosim::config::run_request req;
  req.scenario = dir.file("system.toml", text);
  req.sets = {"run.mode=" + mode};
  req.out_dir = dir / "out";
  req.quiet = true;
  req.also = &rows;
  out = cosim::config::run_scenario(req, nullptr).outcome;
}

constexpr double k = 3.0;                  // 1/s
constexpr double H = 0.01;                 // s
constexpr std::size_t rows_expected = 21;  // 0 .. 0.2 s

std::string ode_to_consumer(const std::string& ode, int order) {
  return "[run]\nduration = 0.2\nmacro_step = 0.01\n\n[subsystems.ode]\nfmu = \"" + fmu_path(ode) +
         "\"\nparameters = { k = 3.0 }\n\n[subsystems.c]\nfmu = \"" + fmu_path("feedthrough_fmi2") +
         "\"\nparameters = { gain = 1.0 }\n\n[[connections]]\nfrom = \"ode.x\"\nto = "
         "\"c.u\"\nextrapolation = " +
         std::to_string(order) + "\n\n[output]\nrecord = [\"ode.x\", \"c.y\"]\n";
}

TEST(FmuOutputDerivatives, ExtrapolationIsTheTaylorPolynomialOfTheFmusDerivatives) {
  const double a = -k * H;
  // Threaded: the samples carry the derivatives through the rings (threaded_executor.cpp).
  for (const char* mode : {"offline", "threaded"})
    for (const char* ode : {"linear_ode_fmi2", "linear_ode_fmi3"}) {
      for (int order : {1, 2}) {
        SCOPED_TRACE(std::string(mode) + ", " + ode + ", extrapolation " + std::to_string(order));
        table r;
        cosim::run_outcome out;
        run_system(ode_to_consumer(ode, order), r, out, mode);
        ASSERT_EQ(out.status, cosim::run_status::completed) << out.message;
        ASSERT_EQ(r.rows(), rows_expected);
        EXPECT_EQ(r.at(0, "c.y"), 1.0);  // the start-up exchange: x(0) itself
        const double taylor = order == 1 ? 1.0 + a : 1.0 + a + a * a / 2.0;
        for (std::size_t n = 0; n + 1 < r.rows(); ++n) {
          const double xn = std::exp(-k * H * static_cast<double>(n));  // closed form
          const double y = r.at(n + 1, "c.y");
          ASSERT_NEAR(y, xn * taylor, 1e-12) << "row " << n + 1;
          if (n < 2) continue;
          // What finite differences of the past samples would give: far from it.
          const double x1 = std::exp(-k * H * static_cast<double>(n - 1));
          const double x2 = std::exp(-k * H * static_cast<double>(n - 2));
          const double fd = order == 1 ? 2.0 * xn - x1 : 3.0 * xn - 3.0 * x1 + x2;
          ASSERT_GT(std::abs(y - fd), 1e-6) << "row " << n + 1;
        }
      }
    }
}

TEST(FmuOutputDerivatives, WithoutDerivativesTheExtrapolationStaysLagrange) {
  // A feedthrough FMU (no derivatives) passes u(t) = 1 + 2 t + 40 t^2 (a csv source,
  // linearly interpolated: a polyline through the quadratic's values every 0.01 s) to the
  // consumer over an extrapolation of order 2.
  const cosim::test::temp_dir dir;
  std::string csv = "t,u\n";
  for (int i = 0; i <= 20; ++i) {
    const double t = 0.01 * i;
    char line[64];
    std::snprintf(line, sizeof line, "%.17g,%.17g\n", t, 1.0 + 2.0 * t + 40.0 * t * t);
    csv += line;
  }
  const std::string csv_path = dir.file("u.csv", csv);
  const std::string text =
      "[run]\nduration = 0.2\nmacro_step = 0.01\n\n[subsystems.p]\nfmu = \"" +
      fmu_path("feedthrough_fmi3") + "\"\nparameters = { gain = 1.0 }\n\n[subsystems.c]\nfmu = \"" +
      fmu_path("feedthrough_fmi2") +
      "\"\nparameters = { gain = 1.0 }\n\n[[sources]]\nto = \"p.u\"\nsignal = \"csv:" + csv_path +
      ":u\"\n\n[[connections]]\nfrom = \"p.y\"\nto = \"c.u\"\nextrapolation = 2\n\n[output]\n"
      "record = [\"p.y\", \"c.y\"]\n";
  table r;
  cosim::run_outcome out;
  run_system(text, r, out);
  ASSERT_EQ(out.status, cosim::run_status::completed) << out.message;
  ASSERT_EQ(r.rows(), rows_expected);
  cosim::sample_history past;  // the samples the consumer got: p.y at t_0 .. t_n
  const cosim::duration step = cosim::to_duration(H);
  for (std::size_t n = 0; n + 1 < r.rows(); ++n) {
    const cosim::time_point tn = cosim::time_point{} + static_cast<std::int64_t>(n) * step;
    const cosim::time_point t1 = tn + step;
    past.push(tn, r.at(n, "p.y"));
    const double y = r.at(n + 1, "c.y");
    // The Lagrange polynomial through the last three samples, value for value.
    ASSERT_EQ(y, past.value_at(t1, 2)) << "row " << n + 1;
    if (n < 2) continue;
    // Equal spacing: 3 y_n - 3 y_{n-1} + y_{n-2}, exact for the quadratic's grid values.
    const double yn = r.at(n, "p.y"), y1 = r.at(n - 1, "p.y"), y2 = r.at(n - 2, "p.y");
    ASSERT_NEAR(y, 3.0 * yn - 3.0 * y1 + y2, 1e-12) << "row " << n + 1;
    const double t = H * static_cast<double>(n + 1);
    ASSERT_NEAR(y, 1.0 + 2.0 * t + 40.0 * t * t, 1e-12) << "row " << n + 1;
  }
}

}  // namespace
