#include "trace_writer.hpp"

#include "cosim/runtime/json_writer.hpp"

namespace cosim::detail {

namespace {

// JSON string with the quotes (subsystem names come from the user's files).
std::string quoted(const std::string& s) {
  json_writer j;
  j.value(s);
  return j.str();
}

}  // namespace

bool trace_writer::open(const std::string& path, const std::vector<std::string>& thread_names,
                        std::int64_t origin_ns) {
  (void)close();
  origin_ns_ = origin_ns;
  if (!file_.open(path)) return false;
  std::FILE* const f = file_.get();
  // tid = subsystem + 1; tid 0 carries the process name.
  std::fputs("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n", f);
  std::fputs(
      "{\"ph\":\"M\",\"pid\":1,\"tid\":0,\"name\":\"process_name\",\"args\":{\"name\":"
      "\"cosim\"}}",
      f);
  for (std::size_t i = 0; i < thread_names.size(); ++i) {
    std::fprintf(f,
                 ",\n{\"ph\":\"M\",\"pid\":1,\"tid\":%zu,\"name\":\"thread_name\",\"args\":{"
                 "\"name\":%s}}",
                 i + 1, quoted(thread_names[i]).c_str());
    std::fprintf(f,
                 ",\n{\"ph\":\"M\",\"pid\":1,\"tid\":%zu,\"name\":\"thread_sort_index\","
                 "\"args\":{\"sort_index\":%zu}}",
                 i + 1, i + 1);
  }
  return true;
}

void trace_writer::step(std::size_t thread, std::int64_t n, double t_end_s, std::int64_t begin_ns,
                        std::int64_t exec_ns, std::int64_t wake_latency_ns, bool realtime,
                        bool overrun, std::uint32_t skipped) {
  std::FILE* const f = file_.get();
  if (f == nullptr) return;
  const double ts_us = static_cast<double>(begin_ns - origin_ns_) * 1e-3;
  const double dur_us = static_cast<double>(exec_ns) * 1e-3;
  std::fprintf(f,
               ",\n{\"ph\":\"X\",\"pid\":1,\"tid\":%zu,\"name\":\"step\",\"cat\":\"step\","
               "\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"step\":%lld,\"t\":%s",
               thread + 1, ts_us, dur_us, static_cast<long long>(n),
               format_double(t_end_s).c_str());
  if (realtime)
    std::fprintf(f, ",\"wakeup_latency_us\":%.3f,\"overrun\":%d,\"skipped_periods\":%u",
                 static_cast<double>(wake_latency_ns) * 1e-3, overrun ? 1 : 0, skipped);
  std::fputs("}}", f);
  if (overrun)
    std::fprintf(f,
                 ",\n{\"ph\":\"i\",\"s\":\"t\",\"pid\":1,\"tid\":%zu,\"name\":\"overrun\","
                 "\"cat\":\"overrun\",\"ts\":%.3f,\"args\":{\"step\":%lld,\"skipped_periods\":%u}}",
                 thread + 1, ts_us + dur_us, static_cast<long long>(n), skipped);
}

bool trace_writer::close() {
  if (file_.is_open()) std::fputs("\n]}\n", file_.get());
  return file_.close();
}

}  // namespace cosim::detail
