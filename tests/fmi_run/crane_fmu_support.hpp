#pragma once
// Running the FMU crane (rt_config/systems/crane_m1_{fs,ps}_fmu.toml, the FMUs of
// tests/fmus/crane/) and the built-in crane side by side, in memory, in any run mode.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cosim/rt_config/scenario.hpp"
#include "cosim/runtime/threaded_executor.hpp"
#include "temp_dir.hpp"

namespace cosim::test {

struct memory_sink final : row_sink {
  std::vector<std::string> columns;
  std::vector<double> data;
  std::size_t width = 0;
  void begin(std::span<const std::string> c) override {
    columns.assign(c.begin(), c.end());
    width = c.size();
    data.clear();
    data.reserve(20'001 * width);
  }
  void write(std::span<const double> row) noexcept override {
    if (data.size() + row.size() <= data.capacity())
      data.insert(data.end(), row.begin(), row.end());
  }
  void end() override {}
  [[nodiscard]] std::size_t rows() const { return width == 0 ? 0 : data.size() / width; }
  [[nodiscard]] double at(std::size_t r, const std::string& col) const {
    const auto c = std::find(columns.begin(), columns.end(), col);
    if (c == columns.end()) throw std::runtime_error("no column " + col);
    return data[r * width + static_cast<std::size_t>(c - columns.begin())];
  }
};

/// The shipped FMU crane system file, its FMU paths pointed at this build's tests/fmus/
/// (the file names them as built into build/), written into `dir`.
inline std::string fmu_crane_file(const temp_dir& dir, const std::string& coupling) {
  const std::string name = "crane_m1_" + coupling + "_fmu.toml";
  std::ifstream in(COSIM_SOURCE_DIR "/rt_config/systems/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  const std::string shipped = "../../build/tests/fmus/";
  for (std::size_t p = text.find(shipped); p != std::string::npos; p = text.find(shipped, p))
    text.replace(p, shipped.size(), COSIM_BINARY_DIR "/tests/fmus/");
  return dir.file(name, text);
}

/// The built-in crane of the same case: the system file crane_m1_fs.toml, the preset
/// scenario crane_m1_ps.toml (p-s has no hand-written system file).
inline std::string builtin_crane_file(const std::string& coupling) {
  return coupling == "fs" ? COSIM_SOURCE_DIR "/rt_config/systems/crane_m1_fs.toml"
                          : COSIM_SOURCE_DIR "/rt_config/scenarios/crane_m1_ps.toml";
}

inline run_outcome run_mode(const std::string& file, const std::vector<std::string>& sets,
                            const std::string& mode, memory_sink& sink) {
  const config::scenario sc = config::load_scenario(file, sets);
  auto b = config::build(sc);
  if (mode == "offline") return run_offline(b->sys, b->plan, b->limits, sink);
  threaded_options opt = config::make_threaded_options(sc, *b);
  opt.realtime = mode == "realtime";
  opt.lock_memory = false;
  opt.watchdog.max_overruns = 1'000'000;  // a noisy CI machine must not stop the run
  return run_threaded(b->sys, b->plan, b->limits, sink, opt);
}

/// max |a - b| of column `col` over the rows both have (same times asserted by the caller).
inline double max_diff(const memory_sink& a, const memory_sink& b, const std::string& col) {
  double worst = 0.0;
  for (std::size_t r = 0; r < std::min(a.rows(), b.rows()); ++r) {
    const double d = std::abs(a.at(r, col) - b.at(r, col));
    worst = std::isnan(d) ? INFINITY : std::max(worst, d);
  }
  return worst;
}

}  // namespace cosim::test
