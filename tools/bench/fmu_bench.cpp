// Master overhead of an FMU subsystem (issue 11): the same FMU stepped per macro step
//   subsystem  through cosim::fmi::fmu_subsystem as the executors call it: the exchange's
//              input samples (input_port::receive), subsystem::steps(t, h, k),
//              update_outputs(t + H)
//   bare       by a hand-written loop on the FMI functions of the same binary, doing the
//              least any master must: set the inputs and doStep for each of the k steps,
//              set the inputs and get the outputs at the communication point
//   dostep     the k doSteps alone (no inputs set, no outputs read)
// and the ratio subsystem / bare per macro step (target <= 1.2), with subsystem / dostep
// for reference.
//
// FMUs (tests/fmus/, built with the tests):
//   crane_hydraulics  the crane cylinder of 003 (FMI 2.0): H = 1 ms, 5 doSteps of 0.2 ms,
//                     inputs s, sd, kappa held at the equilibrium, outputs fh, p1, p2
//   linear_ode_fmi3   x' = -k x (FMI 3.0, k = 1e-3 1/s so x stays normal): one doStep of
//                     1 ms per macro step, output x
// Before timing, main() steps both paths 1000 macro steps from the same start and checks
// they end in the same state.
//
// Options (before Google Benchmark's own flags; environment variables as fallback):
//   --cpu=N           COSIM_BENCH_CPU          CPU to pin to, default 0; -1 = no pinning
//   --repetitions=N   COSIM_BENCH_REPETITIONS  default 5
#include <benchmark/benchmark.h>
#include <dlfcn.h>
#include <sched.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_support.hpp"
#include "cosim/fmi/fmi2.h"
#include "cosim/fmi/fmi3.h"
#include "cosim/fmi/fmu_file.hpp"
#include "cosim/rt_config/type_registry.hpp"
#include "cosim/runtime/subsystem.hpp"
#include "cosim/subsystems/crane_model.hpp"

namespace {

using cosim::duration;
using cosim::time_point;

constexpr duration H = cosim::to_duration(1e-3);

std::string fmu_dir() {
  return COSIM_TEST_FMU_DIR;
}

// ---- One FMU, both ways ------------------------------------------------------------------

struct fmu_case {
  std::string name;  // tests/fmus/NAME.fmu
  int fmi = 2;
  std::vector<std::pair<std::string, double>> params;  // set on both paths
  std::vector<std::pair<std::string, double>> inputs;  // held values
  std::vector<std::string> outputs;
};

// The cylinder at rest: the equilibrium of 003 Sect. 1.3 (the FMU's defaults).
double crane_s0() {
  return cosim::crane::solve_equilibrium({}, {}, 3).s0;
}
double crane_kappa0() {
  return cosim::crane::solve_equilibrium({}, {}, 3).kappa0;
}

const std::vector<fmu_case>& cases() {
  static const std::vector<fmu_case> c{
      {"crane_hydraulics",
       2,
       {},
       {{"s", crane_s0()}, {"sd", 0.0}, {"kappa", crane_kappa0()}},
       {"fh", "p1", "p2"}},
      {"linear_ode_fmi3", 3, {{"k", 1e-3}}, {}, {"x"}},
  };
  return c;
}

// The subsystem path: built from the FMU's registered type like a system file's
// `fmu = "..."`, inputs marked connected (as the builder's connections do) and fed samples.
class subsystem_path {
 public:
  explicit subsystem_path(const fmu_case& c) {
    const std::string path = fmu_dir() + "/" + c.name + ".fmu";
    const cosim::config::subsystem_type* t = cosim::config::fmu_subsystem_type(path);
    cosim::config::param_set given;
    for (const auto& [k, v] : c.params) given[k] = v;
    const cosim::config::param_set p =
        cosim::config::resolve_parameters(*t, given, path, "subsystems." + c.name + ".parameters");
    sub_ = t->create(c.name, p, "fmu");
    const double step = t->default_step(cosim::to_seconds(H), p);
    h_ = cosim::to_duration(step);
    k_ = H.count() / h_.count();
    sub_->set_step_size(h_);
    for (const auto& [name, value] : c.inputs) {
      const std::size_t i = sub_->find_input(name);
      if (i == cosim::subsystem::npos) throw std::runtime_error(c.name + " has no input " + name);
      sub_->input(i).mark_connected();
      inputs_.push_back({i, value});
    }
    // Long enough never to be reached by the benchmark's macro steps.
    if (t->prepare) t->prepare(*sub_, cosim::config::prepare_options{1e6});
    sub_->initialize(time_point{});
    deliver();
    sub_->update_outputs(time_point{});
  }

  // One macro step as an executor takes it.
  bool macro_step() noexcept {
    const bool ok = sub_->steps(t_, h_, k_);
    t_ += H;
    deliver();
    sub_->update_outputs(t_);
    return ok;
  }

  [[nodiscard]] double output(const std::string& name) const {
    return sub_->output(sub_->find_output(name));
  }
  [[nodiscard]] std::int64_t k() const noexcept { return k_; }
  [[nodiscard]] duration h() const noexcept { return h_; }

 private:
  // The exchange: every input gets its sample for t_ (held values here).
  void deliver() noexcept {
    for (const auto& [i, v] : inputs_) sub_->input(i).receive(t_, v);
  }

  std::unique_ptr<cosim::subsystem> sub_;
  std::vector<std::pair<std::size_t, double>> inputs_;
  duration h_{0};
  std::int64_t k_ = 1;
  time_point t_{};
};

void log2(fmi2ComponentEnvironment, fmi2String, fmi2Status, fmi2String, fmi2String, ...) {}
void log3(fmi3InstanceEnvironment, fmi3Status, fmi3String, fmi3String) {}
const fmi2CallbackFunctions callbacks2{log2, nullptr, nullptr, nullptr, nullptr};

// The bare path: the FMU's binary as built (tests/fmus/NAME/binaries/...), its functions
// called directly with the value references and token of its modelDescription.xml.
class bare_path {
 public:
  bare_path(const fmu_case& c, duration h, std::int64_t k)
      : fmi_(c.fmi), hs_(cosim::to_seconds(h)), h_(h), k_(k) {
    const auto file = cosim::fmi::read_fmu(fmu_dir() + "/" + c.name + ".fmu");
    const cosim::fmi::model_description& md = file->md;
    auto vr = [&](const std::string& name) {
      const std::size_t i = md.find(name);
      if (i == cosim::fmi::model_description::npos)
        throw std::runtime_error(c.name + " has no variable " + name);
      return md.variables[i].value_reference;
    };
    std::vector<std::uint32_t> param_vrs;
    std::vector<double> param_values;
    for (const auto& [name, v] : c.params) {
      param_vrs.push_back(vr(name));
      param_values.push_back(v);
    }
    for (const auto& [name, v] : c.inputs) {
      in_vrs_.push_back(vr(name));
      in_.push_back(v);
    }
    for (const std::string& name : c.outputs) out_vrs_.push_back(vr(name));
    out_.resize(out_vrs_.size());

    const std::string so =
        file->path.substr(0, file->path.size() - 4) + "/" + cosim::fmi::binary_path_in_fmu(md);
    lib_ = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib_ == nullptr) throw std::runtime_error("dlopen " + so + ": " + dlerror());
    if (fmi_ == 2) {
      set2_ = fn<fmi2SetRealTYPE>("fmi2SetReal");
      get2_ = fn<fmi2GetRealTYPE>("fmi2GetReal");
      step2_ = fn<fmi2DoStepTYPE>("fmi2DoStep");
      inst_ = fn<fmi2InstantiateTYPE>("fmi2Instantiate")(c.name.c_str(), fmi2CoSimulation,
                                                         md.token.c_str(), "", &callbacks2,
                                                         fmi2False, fmi2False);
      check(inst_ != nullptr, "fmi2Instantiate");
      check(param_vrs.empty() ||
                set2_(inst_, param_vrs.data(), param_vrs.size(), param_values.data()) == fmi2OK,
            "fmi2SetReal (parameters)");
      check(fn<fmi2SetupExperimentTYPE>("fmi2SetupExperiment")(inst_, fmi2False, 0.0, 0.0, fmi2True,
                                                               1e6) == fmi2OK,
            "fmi2SetupExperiment");
      check(fn<fmi2EnterInitializationModeTYPE>("fmi2EnterInitializationMode")(inst_) == fmi2OK,
            "fmi2EnterInitializationMode");
      check(fn<fmi2ExitInitializationModeTYPE>("fmi2ExitInitializationMode")(inst_) == fmi2OK,
            "fmi2ExitInitializationMode");
    } else {
      set3_ = fn<fmi3SetFloat64TYPE>("fmi3SetFloat64");
      get3_ = fn<fmi3GetFloat64TYPE>("fmi3GetFloat64");
      step3_ = fn<fmi3DoStepTYPE>("fmi3DoStep");
      inst_ = fn<fmi3InstantiateCoSimulationTYPE>("fmi3InstantiateCoSimulation")(
          c.name.c_str(), md.token.c_str(), "", false, false, false, false, nullptr, 0, nullptr,
          log3, nullptr);
      check(inst_ != nullptr, "fmi3InstantiateCoSimulation");
      check(param_vrs.empty() || set3_(inst_, param_vrs.data(), param_vrs.size(),
                                       param_values.data(), param_values.size()) == fmi3OK,
            "fmi3SetFloat64 (parameters)");
      check(fn<fmi3EnterInitializationModeTYPE>("fmi3EnterInitializationMode")(
                inst_, false, 0.0, 0.0, true, 1e6) == fmi3OK,
            "fmi3EnterInitializationMode");
      check(fn<fmi3ExitInitializationModeTYPE>("fmi3ExitInitializationMode")(inst_) == fmi3OK,
            "fmi3ExitInitializationMode");
    }
    check(set_inputs() && get_outputs(), "the start-up exchange");
  }
  ~bare_path() {
    if (fmi_ == 2) {
      fn<fmi2TerminateTYPE>("fmi2Terminate")(inst_);
      fn<fmi2FreeInstanceTYPE>("fmi2FreeInstance")(inst_);
    } else {
      fn<fmi3TerminateTYPE>("fmi3Terminate")(inst_);
      fn<fmi3FreeInstanceTYPE>("fmi3FreeInstance")(inst_);
    }
    dlclose(lib_);
  }
  bare_path(const bare_path&) = delete;
  bare_path& operator=(const bare_path&) = delete;

  // One macro step: the k doSteps with their inputs, then the communication point.
  bool macro_step() noexcept {
    bool ok = true;
    for (std::int64_t j = 0; j < k_; ++j) ok = set_inputs() && do_step() && ok;
    return set_inputs() && get_outputs() && ok;
  }
  // The k doSteps alone, inputs and outputs left as they are.
  bool steps_only() noexcept {
    bool ok = true;
    for (std::int64_t j = 0; j < k_; ++j) ok = do_step() && ok;
    return ok;
  }

  [[nodiscard]] double output(std::size_t i) const { return out_[i]; }

 private:
  template <typename F>
  F* fn(const char* name) const {
    void* p = dlsym(lib_, name);
    if (p == nullptr) throw std::runtime_error(std::string("missing export ") + name);
    return reinterpret_cast<F*>(p);
  }
  static void check(bool ok, const char* call) {
    if (!ok) throw std::runtime_error(std::string("bare path: ") + call + " failed");
  }
  bool set_inputs() noexcept {
    if (in_vrs_.empty()) return true;
    return fmi_ == 2
               ? set2_(inst_, in_vrs_.data(), in_vrs_.size(), in_.data()) == fmi2OK
               : set3_(inst_, in_vrs_.data(), in_vrs_.size(), in_.data(), in_.size()) == fmi3OK;
  }
  // The same communication points as the subsystem's (its clock in integer nanoseconds).
  bool do_step() noexcept {
    const double t = cosim::to_seconds(t_);
    t_ += h_;
    if (fmi_ == 2) return step2_(inst_, t, hs_, fmi2True) == fmi2OK;
    fmi3Boolean event = false, terminate = false, early = false;
    double last = 0.0;
    return step3_(inst_, t, hs_, true, &event, &terminate, &early, &last) == fmi3OK;
  }
  bool get_outputs() noexcept {
    return fmi_ == 2
               ? get2_(inst_, out_vrs_.data(), out_vrs_.size(), out_.data()) == fmi2OK
               : get3_(inst_, out_vrs_.data(), out_vrs_.size(), out_.data(), out_.size()) == fmi3OK;
  }

  int fmi_;
  double hs_;
  duration h_;
  std::int64_t k_;
  void* lib_ = nullptr;
  void* inst_ = nullptr;
  time_point t_{};
  std::vector<std::uint32_t> in_vrs_, out_vrs_;
  std::vector<double> in_, out_;
  fmi2SetRealTYPE* set2_ = nullptr;
  fmi2GetRealTYPE* get2_ = nullptr;
  fmi2DoStepTYPE* step2_ = nullptr;
  fmi3SetFloat64TYPE* set3_ = nullptr;
  fmi3GetFloat64TYPE* get3_ = nullptr;
  fmi3DoStepTYPE* step3_ = nullptr;
};

// ---- Benchmarks ----------------------------------------------------------------------------

struct bench_options {
  int cpu = 0;
  int repetitions = 5;
};
bench_options options;  // set once in main() before any benchmark runs

constexpr std::int64_t check_steps = 1000;

// Both paths from the same start for check_steps macro steps: the same outputs, else the
// comparison would time different work.
bool check_equivalence(const fmu_case& c) {
  subsystem_path sub(c);
  bare_path bare(c, sub.h(), sub.k());
  bool ok = true;
  for (std::int64_t n = 0; n < check_steps; ++n) ok = sub.macro_step() && bare.macro_step() && ok;
  double worst = 0.0;
  for (std::size_t i = 0; i < c.outputs.size(); ++i) {
    const double a = sub.output(c.outputs[i]), b = bare.output(i);
    worst = std::max(worst, a == b ? 0.0 : std::abs(a - b) / std::max(std::abs(a), 1e-300));
  }
  std::printf(
      "  %-17s h = %g ms, %lld doStep(s) per macro step: after %lld macro steps the "
      "outputs agree to %.3g (relative)%s\n",
      c.name.c_str(), cosim::to_seconds(sub.h()) * 1e3, static_cast<long long>(sub.k()),
      static_cast<long long>(check_steps), worst, ok ? "" : "; a step FAILED");
  return ok && worst == 0.0;
}

void bm_subsystem(benchmark::State& state, const fmu_case* c) {
  subsystem_path sub(*c);
  bool ok = true;
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): benchmark idiom
    ok = sub.macro_step() && ok;
    benchmark::ClobberMemory();
  }
  if (!ok) state.SkipWithError("a step failed");
  state.counters["doSteps"] = static_cast<double>(sub.k());
}

void bm_bare(benchmark::State& state, const fmu_case* c) {
  subsystem_path probe(*c);  // the same step the subsystem path takes
  bare_path bare(*c, probe.h(), probe.k());
  bool ok = true;
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): benchmark idiom
    ok = bare.macro_step() && ok;
    benchmark::ClobberMemory();
  }
  if (!ok) state.SkipWithError("a step failed");
  state.counters["doSteps"] = static_cast<double>(probe.k());
}

void bm_dostep(benchmark::State& state, const fmu_case* c) {
  subsystem_path probe(*c);
  bare_path bare(*c, probe.h(), probe.k());
  bool ok = true;
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): benchmark idiom
    ok = bare.steps_only() && ok;
    benchmark::ClobberMemory();
  }
  if (!ok) state.SkipWithError("a step failed");
  state.counters["doSteps"] = static_cast<double>(probe.k());
}

bool pin_to(int cpu) {
  if (cpu < 0) return true;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof(set), &set) != 0) {
    std::fprintf(stderr, "fmu_bench: cannot pin to CPU %d; running unpinned\n", cpu);
    return false;
  }
  return true;
}

// Keeps the wall and CPU time per iteration of every repetition.
class summary_reporter : public cosim::bench::counter_reporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    counter_reporter::ReportRuns(runs);
    for (const Run& run : runs) {
      if (run.run_type != Run::RT_Iteration || run.error_occurred || run.iterations == 0) continue;
      const double n = static_cast<double>(run.iterations);
      real_[run.run_name.function_name].push_back(run.real_accumulated_time / n);
      cpu_[run.run_name.function_name].push_back(run.cpu_accumulated_time / n);
    }
  }
  [[nodiscard]] double median_real(const std::string& b) const { return median(real_, b); }
  [[nodiscard]] double median_cpu(const std::string& b) const { return median(cpu_, b); }

 private:
  using table = std::map<std::string, std::vector<double>>;
  static double median(const table& t, const std::string& b) {
    const auto it = t.find(b);
    if (it == t.end() || it->second.empty()) return 0.0;
    std::vector<double> v = it->second;
    std::sort(v.begin(), v.end());
    return v.size() % 2 == 1 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
  }
  table real_, cpu_;
};

int run(int argc, char** argv) {
  options.cpu =
      static_cast<int>(cosim::bench::option_value(argc, argv, "--cpu", "COSIM_BENCH_CPU", 0));
  options.repetitions = static_cast<int>(std::max(
      1LL, cosim::bench::option_value(argc, argv, "--repetitions", "COSIM_BENCH_REPETITIONS", 5)));
  const bool pinned = pin_to(options.cpu) && options.cpu >= 0;
  std::printf("fmu_bench: FMUs of %s, H = %g ms; CPU %s, %d repetitions\n", fmu_dir().c_str(),
              cosim::to_seconds(H) * 1e3, pinned ? std::to_string(options.cpu).c_str() : "unpinned",
              options.repetitions);
  bool same = true;
  for (const fmu_case& c : cases()) same = check_equivalence(c) && same;
  if (!same) {
    std::fprintf(stderr, "fmu_bench: the two paths disagree; not timing them\n");
    return 1;
  }
  std::fflush(stdout);  // before Google Benchmark's context lines on stderr
  for (const fmu_case& c : cases()) {
    benchmark::RegisterBenchmark(("subsystem/" + c.name).c_str(), bm_subsystem, &c)
        ->Unit(benchmark::kNanosecond);
    benchmark::RegisterBenchmark(("bare/" + c.name).c_str(), bm_bare, &c)
        ->Unit(benchmark::kNanosecond);
    benchmark::RegisterBenchmark(("dostep/" + c.name).c_str(), bm_dostep, &c)
        ->Unit(benchmark::kNanosecond);
  }
  summary_reporter reporter;
  if (cosim::bench::run_benchmarks(argc, argv, options.repetitions, reporter) != 0) return 2;

  std::printf("\nfmu_bench summary (median over repetitions, per macro step of %g ms):\n",
              cosim::to_seconds(H) * 1e3);
  for (const fmu_case& c : cases()) {
    const double ts = reporter.median_real("subsystem/" + c.name);
    const double tb = reporter.median_real("bare/" + c.name);
    const double td = reporter.median_real("dostep/" + c.name);
    const double cs = reporter.median_cpu("subsystem/" + c.name);
    const double cb = reporter.median_cpu("bare/" + c.name);
    if (ts <= 0.0 || tb <= 0.0) continue;
    std::printf(
        "  %-17s subsystem %8.1f ns  bare %8.1f ns  overhead %+7.1f ns  ratio %.3f "
        "(CPU time: %.3f)  target <= 1.2: %s\n"
        "  %-17s doSteps alone %8.1f ns: subsystem / doSteps alone %.3f\n",
        c.name.c_str(), ts * 1e9, tb * 1e9, (ts - tb) * 1e9, ts / tb, cosim::bench::ratio(cs, cb),
        ts / tb <= 1.2 ? "met" : "NOT met", "", td * 1e9, cosim::bench::ratio(ts, td));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return cosim::bench::guarded_main(argc, argv, run);
}
