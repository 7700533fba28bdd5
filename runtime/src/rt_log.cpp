#include "cosim/runtime/rt_log.hpp"

#include <fmt/format.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <utility>

namespace cosim {

namespace {

spdlog::level::level_enum level_of(rt_event_code code) noexcept {
  switch (code) {
    case rt_event_code::info:
      return spdlog::level::info;
    case rt_event_code::overrun:
    case rt_event_code::deadline_miss:
    case rt_event_code::drop:
      return spdlog::level::warn;
    case rt_event_code::safety_stop:
    case rt_event_code::stall:
      return spdlog::level::err;
  }
  return spdlog::level::warn;  // an unknown code is suspicious
}

spdlog::level::level_enum to_spdlog(log_level level) noexcept {
  switch (level) {
    case log_level::trace:
      return spdlog::level::trace;
    case log_level::debug:
      return spdlog::level::debug;
    case log_level::info:
      return spdlog::level::info;
    case log_level::warn:
      return spdlog::level::warn;
    case log_level::error:
      return spdlog::level::err;
    case log_level::off:
      return spdlog::level::off;
  }
  return spdlog::level::info;
}

std::size_t index_of(rt_event_code code) noexcept {
  const auto i = static_cast<std::size_t>(code);
  return i < rt_event_code_count ? i : 0;
}

// Plural nouns for the summary lines of the rate-limited codes.
std::string_view plural(rt_event_code code) noexcept {
  switch (code) {
    case rt_event_code::overrun:
      return "overruns";
    case rt_event_code::deadline_miss:
      return "deadline misses";
    case rt_event_code::drop:
      return "drops";
    default:
      return "events";
  }
}

}  // namespace

std::string_view to_string(rt_event_code code) noexcept {
  switch (code) {
    case rt_event_code::info:
      return "info";
    case rt_event_code::overrun:
      return "overrun";
    case rt_event_code::deadline_miss:
      return "deadline_miss";
    case rt_event_code::safety_stop:
      return "safety_stop";
    case rt_event_code::drop:
      return "drop";
    case rt_event_code::stall:
      return "stall";
  }
  return "unknown";
}

std::string format_sim_seconds(std::int64_t ticks) {
  // Integer split instead of a double so that 3.275 s does not print as 3.2750000000000004.
  const bool negative = ticks < 0;
  const std::uint64_t magnitude =
      negative ? static_cast<std::uint64_t>(-(ticks + 1)) + 1 : static_cast<std::uint64_t>(ticks);
  std::string text = fmt::format("{}{}", negative ? "-" : "", magnitude / 1'000'000'000);
  const std::uint64_t ns = magnitude % 1'000'000'000;
  if (ns != 0) {
    std::string frac = fmt::format("{:09}", ns);
    frac.erase(frac.find_last_not_of('0') + 1);
    text += "." + frac;
  }
  return text;
}

std::string format_rt_event(const rt_event& event, std::string_view channel_name,
                            std::string_view subject) {
  const std::string head = fmt::format("[{}] ", channel_name);
  const std::string at = "at t_sim=" + format_sim_seconds(event.sim_tick) + " s";
  switch (event.code) {
    case rt_event_code::overrun: {
      std::string line =
          fmt::format("{}overrun {}: step ended {:.0f} us after its release (period {:.0f} us)",
                      head, at, event.a, event.b);
      if (event.detail > 0)
        line += fmt::format("; next release skipped {} period{}", event.detail,
                            event.detail == 1 ? "" : "s");
      return line;
    }
    case rt_event_code::deadline_miss:
      return fmt::format(
          "{}deadline miss {}: result ready {:.0f} us after release, deadline {:.0f} us", head, at,
          event.a, event.b);
    case rt_event_code::safety_stop:
      if (event.detail == 1)
        return fmt::format(
            "{}deadline stop {}: {:.0f} late steps in the leaky bucket reached "
            "watchdog.max_overruns = {:.0f}",
            head, at, event.a, event.b);
      return fmt::format("{}safety stop {}: measured {} reached the limit {}", head, at, event.a,
                         event.b);
    case rt_event_code::drop:
      if (event.a > 0) return fmt::format("{}drop {}: {:.0f} lost", head, at, event.a);
      return fmt::format("{}drop {}: samples or messages lost", head, at);
    case rt_event_code::stall:
      return fmt::format("{}stall {}: {} stayed {:.0f} us in one step (limit {:.0f} us)", head, at,
                         subject.empty() ? std::string_view{"a thread"} : subject, event.a,
                         event.b);
    case rt_event_code::info:
      break;
  }
  return fmt::format("{}{} {}: value {}, value {}, code {}", head, to_string(event.code), at,
                     event.a, event.b, event.detail);
}

std::optional<log_level> parse_log_level(std::string_view name) noexcept {
  for (log_level l : {log_level::trace, log_level::debug, log_level::info, log_level::warn,
                      log_level::error, log_level::off})
    if (name == to_string(l)) return l;
  return std::nullopt;
}

std::string_view to_string(log_level level) noexcept {
  switch (level) {
    case log_level::trace:
      return "trace";
    case log_level::debug:
      return "debug";
    case log_level::info:
      return "info";
    case log_level::warn:
      return "warn";
    case log_level::error:
      return "error";
    case log_level::off:
      return "off";
  }
  return "info";
}

void configure_runtime_log(log_level level) {
  std::shared_ptr<spdlog::logger> logger = spdlog::get("cosim");
  if (!logger) {
    logger = spdlog::stderr_color_mt("cosim");
    logger->set_pattern("[%T.%e] %^%l%$: %v");
  }
  spdlog::set_default_logger(std::move(logger));
  spdlog::set_level(to_spdlog(level));
}

// ---- rt_log_limiter ----

rt_log_limiter::rt_log_limiter(std::int64_t interval_ns) : interval_ns_(interval_ns) {}

bool rt_log_limiter::limited(rt_event_code code) noexcept {
  return code == rt_event_code::overrun || code == rt_event_code::deadline_miss ||
         code == rt_event_code::drop;
}

void rt_log_limiter::add(const rt_event& event, std::string_view channel, std::int64_t now_ns,
                         std::vector<rt_log_line>& out) {
  if (!limited(event.code)) {
    out.push_back({event.code, format_rt_event(event, channel)});
    return;
  }
  code_state& st = codes_[index_of(event.code)];
  if (!st.first_logged) {
    st.first_logged = true;
    st.last_line_ns = now_ns;
    out.push_back(
        {event.code, format_rt_event(event, channel) +
                         fmt::format(" (first of the run; further {} are summarised at most "
                                     "every {} s, all are in summary.json and timing.csv)",
                                     plural(event.code), format_sim_seconds(interval_ns_))});
    return;
  }
  auto it = std::find_if(st.counts.begin(), st.counts.end(),
                         [&](const auto& c) { return c.first == channel; });
  if (it == st.counts.end()) {
    st.counts.emplace_back(std::string(channel), 0);
    it = st.counts.end() - 1;
  }
  ++it->second;
  // Channels are drained one after the other, so their events arrive out of simulated-time
  // order: the span is the earliest to the latest, not the first to the last received.
  if (st.pending == 0) {
    st.first_tick = event.sim_tick;
    st.last_tick = event.sim_tick;
    st.worst = event;
    st.worst_channel = channel;
  } else if (event.a > st.worst.a) {
    st.worst = event;
    st.worst_channel = channel;
  }
  st.first_tick = std::min(st.first_tick, event.sim_tick);
  st.last_tick = std::max(st.last_tick, event.sim_tick);
  ++st.pending;
}

void rt_log_limiter::flush(std::int64_t now_ns, bool final, std::vector<rt_log_line>& out) {
  for (std::size_t i = 0; i < codes_.size(); ++i) {
    code_state& st = codes_[i];
    if (st.pending == 0) continue;
    if (final || now_ns - st.last_line_ns >= interval_ns_)
      summarise(static_cast<rt_event_code>(i), st, now_ns, out);
  }
}

void rt_log_limiter::summarise(rt_event_code code, code_state& st, std::int64_t now_ns,
                               std::vector<rt_log_line>& out) {
  std::string per_channel;
  for (const auto& [name, n] : st.counts) {
    if (n == 0) continue;
    per_channel += fmt::format("{}{} {}", per_channel.empty() ? "" : ", ", name, n);
  }
  std::string worst;
  switch (code) {
    case rt_event_code::overrun:
      worst = fmt::format("longest: {} ended {:.0f} us after its release at t_sim={} s",
                          st.worst_channel, st.worst.a, format_sim_seconds(st.worst.sim_tick));
      break;
    case rt_event_code::deadline_miss:
      worst = fmt::format("latest result: {} {:.0f} us after release at t_sim={} s",
                          st.worst_channel, st.worst.a, format_sim_seconds(st.worst.sim_tick));
      break;
    default:
      break;
  }
  const std::string span = st.first_tick == st.last_tick
                               ? "at t_sim " + format_sim_seconds(st.first_tick) + " s"
                               : "t_sim " + format_sim_seconds(st.first_tick) + " s to " +
                                     format_sim_seconds(st.last_tick) + " s";
  out.push_back({code, fmt::format("{} since the last report: {} ({}{}{})", plural(code),
                                   per_channel, span, worst.empty() ? "" : "; ", worst)});
  for (auto& c : st.counts) c.second = 0;
  st.pending = 0;
  st.last_line_ns = now_ns;
}

// ---- rt_log_drain ----

rt_log_drain::rt_log_drain(std::shared_ptr<spdlog::logger> logger) : logger_(std::move(logger)) {}

rt_log_drain::~rt_log_drain() {
  try {
    stop();
  } catch (...) {
    // A destructor must not throw; losing the last log lines is the lesser evil.
  }
}

rt_log_channel& rt_log_drain::add_channel(std::string name, std::size_t capacity) {
  if (thread_.joinable()) throw std::logic_error("rt_log_drain::add_channel after start()");
  if (channels_.size() > 0xFFFF) throw std::length_error("rt_log_drain: too many channels");
  const std::lock_guard lock(drain_mutex_);
  const auto source = static_cast<std::uint16_t>(channels_.size());
  channels_.push_back(std::make_unique<rt_log_channel>(std::move(name), source, capacity));
  reported_drops_.push_back(0);
  return *channels_.back();
}

void rt_log_drain::write_lines(spdlog::logger* logger) {
  if (logger != nullptr)
    for (const rt_log_line& line : lines_) logger->log(level_of(line.code), "{}", line.text);
  lines_.clear();
}

std::size_t rt_log_drain::drain_once(std::int64_t now_ns) {
  const std::lock_guard lock(drain_mutex_);
  const std::shared_ptr<spdlog::logger> logger = logger_ ? logger_ : spdlog::default_logger();
  std::size_t popped = 0;
  for (std::size_t i = 0; i < channels_.size(); ++i) {
    rt_log_channel& channel = *channels_[i];
    rt_event event;
    while (channel.try_pop(event)) {
      ++popped;
      // Below the level: neither formatted nor counted for a summary nobody will see.
      if (!logger || !logger->should_log(level_of(event.code))) continue;
      if (event.code == rt_event_code::stall) {
        const std::size_t who = event.detail;  // 1 + source id
        const std::string_view subject =
            who >= 1 && who <= channels_.size() ? channels_[who - 1]->name() : std::string_view{};
        lines_.push_back({event.code, format_rt_event(event, channel.name(), subject)});
      } else {
        limiter_.add(event, channel.name(), now_ns, lines_);
      }
    }
    const std::uint64_t drops = channel.drops();
    if (drops != reported_drops_[i]) {
      if (logger) {
        logger->warn("[{}] {} rt_log events dropped (channel full, {} in total)", channel.name(),
                     drops - reported_drops_[i], drops);
      }
      reported_drops_[i] = drops;
    }
  }
  limiter_.flush(now_ns, false, lines_);
  const bool wrote = !lines_.empty();
  write_lines(logger.get());
  if (logger && wrote) logger->flush();
  events_logged_ += popped;
  return popped;
}

void rt_log_drain::start(std::chrono::milliseconds period) {
  if (thread_.joinable()) return;
  {
    const std::lock_guard lock(stop_mutex_);
    stop_requested_ = false;
  }
  thread_ = std::thread([this, period] {
    std::unique_lock lock(stop_mutex_);
    while (!stop_requested_) {
      lock.unlock();
      try {
        drain_once();
      } catch (const std::exception&) {
        // Formatting or sink failure: keep draining so RT producers keep their space.
      }
      lock.lock();
      stop_cv_.wait_for(lock, period, [this] { return stop_requested_; });
    }
  });
}

void rt_log_drain::stop() {
  if (thread_.joinable()) {
    {
      const std::lock_guard lock(stop_mutex_);
      stop_requested_ = true;
    }
    stop_cv_.notify_all();
    thread_.join();
  }
  const std::int64_t now = monotonic_now_ns();
  drain_once(now);
  // The counts since the last summary line are not lost at the end of a run.
  const std::lock_guard lock(drain_mutex_);
  const std::shared_ptr<spdlog::logger> logger = logger_ ? logger_ : spdlog::default_logger();
  limiter_.flush(now, true, lines_);
  const bool wrote = !lines_.empty();
  write_lines(logger.get());
  if (logger && wrote) logger->flush();
}

std::uint64_t rt_log_drain::events_logged() const noexcept {
  const std::lock_guard lock(drain_mutex_);
  return events_logged_;
}

}  // namespace cosim
