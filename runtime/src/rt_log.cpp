#include "cosim/runtime/rt_log.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

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
      return spdlog::level::err;
  }
  return spdlog::level::warn;  // an unknown code is suspicious
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
  }
  return "unknown";
}

std::string format_rt_event(const rt_event& event, std::string_view channel_name) {
  // Integer split instead of a double so nanoseconds survive for long uptimes.
  const std::int64_t sec = event.wall_ns / 1'000'000'000;
  const std::int64_t nsec = event.wall_ns % 1'000'000'000;
  return fmt::format("[{}] {} tick={} t={}.{:09}s a={} b={} detail={}", channel_name,
                     to_string(event.code), event.sim_tick, sec, nsec < 0 ? -nsec : nsec, event.a,
                     event.b, event.detail);
}

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

std::size_t rt_log_drain::drain_once() {
  const std::lock_guard lock(drain_mutex_);
  const std::shared_ptr<spdlog::logger> logger = logger_ ? logger_ : spdlog::default_logger();
  std::size_t logged = 0;
  for (std::size_t i = 0; i < channels_.size(); ++i) {
    rt_log_channel& channel = *channels_[i];
    rt_event event;
    while (channel.try_pop(event)) {
      if (logger) logger->log(level_of(event.code), "{}", format_rt_event(event, channel.name()));
      ++logged;
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
  if (logger && logged > 0) logger->flush();
  events_logged_ += logged;
  return logged;
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
  drain_once();
}

std::uint64_t rt_log_drain::events_logged() const noexcept {
  const std::lock_guard lock(drain_mutex_);
  return events_logged_;
}

}  // namespace cosim
