#include "batch_runner.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <chrono>
#include <exception>
#include <new>
#include <thread>

namespace cosim::cli {

csv_table row_table::to_csv_table() const {
  csv_table t;
  t.path = path;
  t.columns = columns;
  const std::size_t n = rows(), w = width();
  t.rows.reserve(n);
  for (std::size_t i = 0; i < n; ++i)
    t.rows.emplace_back(values.begin() + static_cast<std::ptrdiff_t>(i * w),
                        values.begin() + static_cast<std::ptrdiff_t>((i + 1) * w));
  return t;
}

memory_sink::memory_sink(std::vector<std::string> columns)
    : all_(false), wanted_(std::move(columns)) {}

void memory_sink::begin(std::span<const std::string> columns) {
  table_.columns.clear();
  table_.values.clear();
  index_.clear();
  missing_.clear();
  if (all_) {
    table_.columns.assign(columns.begin(), columns.end());
    for (std::size_t i = 0; i < columns.size(); ++i) index_.push_back(i);
  } else if (!wanted_.empty()) {  // else nothing kept: no rows either
    table_.columns.push_back(columns.empty() ? "t" : columns[0]);
    index_.push_back(0);
    for (const auto& name : wanted_) {
      const auto it = std::find(columns.begin(), columns.end(), name);
      if (it == columns.end()) {
        missing_.push_back(name);
        continue;
      }
      table_.columns.push_back(name);
      index_.push_back(static_cast<std::size_t>(it - columns.begin()));
    }
  }
  table_.values.reserve(rows_hint_ * index_.size());
}

void memory_sink::write(std::span<const double> row) noexcept {
  if (index_.empty() || failed_) return;
  try {
    for (std::size_t i : index_) table_.values.push_back(row[i]);
  } catch (const std::bad_alloc&) {
    failed_ = true;  // the executor stops the run (output_error) rather than drop rows
  }
}

namespace {

/// Rows the executor writes: the start, every output_every-th macro step and the last one.
std::size_t expected_rows(const run_plan& plan) {
  const std::int64_t every = std::max<std::int64_t>(1, plan.output_every);
  return static_cast<std::size_t>(std::max<std::int64_t>(0, plan.macro_steps) / every + 2);
}

void take_outcome(batch_result& r, const run_outcome& o) {
  r.outcome = o;
  // A run the operator stopped is marked as such, not as a safety stop of the model.
  r.status = o.stop_reason == "operator_signal" ? "interrupted" : to_string(o.status);
  r.stop_reason = o.stop_reason;
  r.message = o.message;
}

}  // namespace

batch_result run_one(const std::string& scenario, const batch_run& run, const stop_source& stop) {
  batch_result r;
  r.started = true;
  const auto w0 = std::chrono::steady_clock::now();
  memory_sink sink = run.all_columns ? memory_sink() : memory_sink(run.columns);
  try {
    if (run.out_dir.empty()) {
      r.sc = config::load_scenario(scenario, run.sets);
      auto built = config::build(*r.sc, &stop);
      sink.reserve_rows(expected_rows(built->plan));
      run_outcome o = run_offline(built->sys, built->plan, built->limits, sink, &stop);
      take_outcome(r, o);
      r.rows = sink.take();
      r.rows.path = "(in memory)";
    } else {
      run_request req;
      req.scenario = scenario;
      req.sets = run.sets;
      req.out_dir = run.out_dir;
      req.quiet = true;
      req.also = &sink;
      run_report rep = run_scenario(req, &stop);
      take_outcome(r, rep.outcome);
      r.sc = std::move(rep.sc);
      r.rows = sink.take();
      r.rows.path = rep.results_csv;  // the same rows, for messages naming the file
    }
    r.missing = sink.missing();
  } catch (const std::exception& e) {
    r.status = "error";
    r.stop_reason = "bad_input";
    r.message = e.what();
  }
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
  return r;
}

void parallel_for(std::size_t n, int jobs, const std::function<void(std::size_t)>& job,
                  const stop_source& stop) {
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i = next.fetch_add(1); i < n && !stop.stop_requested(); i = next.fetch_add(1))
      job(i);
  };
  const std::size_t threads = std::min(static_cast<std::size_t>(std::max(1, jobs)), n);
  std::vector<std::thread> pool;
  pool.reserve(threads);
  for (std::size_t i = 1; i < threads; ++i) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
}

std::vector<batch_result> run_batch(const std::string& scenario, const std::vector<batch_run>& runs,
                                    int jobs, progress* bar, const batch_done& done,
                                    const stop_source& stop) {
  std::vector<batch_result> results(runs.size());
  parallel_for(
      runs.size(), jobs,
      [&](std::size_t i) {
        results[i] = run_one(scenario, runs[i], stop);
        if (done) done(i, results[i]);
        if (bar != nullptr) bar->advance();
      },
      stop);
  return results;
}

void add_jobs_option(CLI::App& cmd, int& jobs) {
  cmd.add_option("--jobs", jobs, "Parallel runs, 0: one per core (default)")
      ->check(CLI::Validator(
          [](const std::string& s) {
            int v = -1;
            const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
            return r.ec == std::errc{} && r.ptr == s.data() + s.size() && v >= 0
                       ? std::string()
                       : "must be a whole number >= 0 (0: one per core), not '" + s + "'";
          },
          "N"));
}

CLI::Option* non_empty(CLI::Option* opt) {
  return opt->check(CLI::Validator(
      [](const std::string& s) {
        return s.empty() ? std::string("must not be empty (leave the option out for the default)")
                         : std::string();
      },
      "PATH"));
}

int default_jobs() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

}  // namespace cosim::cli
