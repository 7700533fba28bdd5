#include "cosim/runtime/rt_thread.hpp"

#include <alloca.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <fstream>
#include <limits>
#include <string>
#include <system_error>
#include <utility>

namespace cosim {

namespace {

std::string error_text(int err) {
  return std::system_category().message(err);
}

void append_warning(std::string& warning, const std::string& text) {
  if (!warning.empty()) warning += "; ";
  warning += text;
}

std::size_t page_size() noexcept {
  const long page = sysconf(_SC_PAGESIZE);
  return page > 0 ? static_cast<std::size_t>(page) : 4096;
}

/// pthread_attr_setstacksize rejects sizes below PTHREAD_STACK_MIN; rounding to whole
/// pages keeps glibc from rounding differently than we report.
std::size_t usable_stack_size(std::size_t requested) noexcept {
  const long min_stack = sysconf(_SC_THREAD_STACK_MIN);
  std::size_t size = requested;
  if (min_stack > 0 && size < static_cast<std::size_t>(min_stack)) {
    size = static_cast<std::size_t>(min_stack);
  }
  const std::size_t page = page_size();
  return (size + page - 1) / page * page;
}

/// Parses a kernel CPU list such as "0-3,6,8-9".
bool cpu_in_list(const std::string& list, int cpu) {
  std::size_t pos = 0;
  while (pos < list.size()) {
    std::size_t end = list.find(',', pos);
    if (end == std::string::npos) end = list.size();
    const std::string item = list.substr(pos, end - pos);
    pos = end + 1;
    if (item.empty()) continue;
    const std::size_t dash = item.find('-');
    try {
      const int lo = std::stoi(item.substr(0, dash));
      const int hi = dash == std::string::npos ? lo : std::stoi(item.substr(dash + 1));
      if (cpu >= lo && cpu <= hi) return true;
    } catch (const std::exception&) {
      return false;
    }
  }
  return false;
}

// Never inlined, so the alloca'd block is released when it returns instead of growing
// the caller's frame.
[[gnu::noinline]] void touch_stack(std::size_t bytes) noexcept {
  if (bytes == 0) return;
  auto* block = static_cast<volatile unsigned char*>(alloca(bytes));
  const std::size_t page = page_size();
  // From the top (nearest the current frame) downwards, the order in which a growing
  // stack is normally touched.
  for (std::size_t offset = bytes; offset > page; offset -= page) block[offset - 1] = 0;
  block[0] = 0;
}

}  // namespace

// ---- rt_thread ----

struct rt_thread::state {
  enum start_signal : int { waiting, run, abandon };

  std::function<void()> body;
  rt_thread_grant grant;
  pthread_t handle{};
  bool joinable = false;
  std::atomic<int> start{waiting};
  std::exception_ptr error;

  static void* entry(void* arg) noexcept {
    auto* self = static_cast<state*>(arg);
    // acquire: pairs with the creator's release so the grant and body are fully set up.
    self->start.wait(waiting, std::memory_order_acquire);
    if (self->start.load(std::memory_order_acquire) == run) {
      // A SCHED_FIFO thread gets no timer slack anyway; this keeps a degraded
      // (refused) RT thread's deadlines from being smeared by the default 50 µs.
      if (self->grant.priority_requested > 0) prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
      try {
        self->body();
      } catch (...) {
        self->error = std::current_exception();  // read by join() after pthread_join
      }
    }
    return nullptr;
  }

  int create(std::size_t stack, int priority) noexcept {
    pthread_attr_t attr;
    int rc = pthread_attr_init(&attr);
    if (rc != 0) return rc;
    rc = pthread_attr_setstacksize(&attr, stack);
    // Explicit scheduling even for priority 0, so a thread created from a SCHED_FIFO
    // thread does not silently inherit FIFO.
    if (rc == 0) rc = pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
    if (rc == 0) rc = pthread_attr_setschedpolicy(&attr, priority > 0 ? SCHED_FIFO : SCHED_OTHER);
    if (rc == 0) {
      sched_param param{};
      param.sched_priority = priority;
      rc = pthread_attr_setschedparam(&attr, &param);
    }
    if (rc == 0) rc = pthread_create(&handle, &attr, &state::entry, this);
    pthread_attr_destroy(&attr);
    return rc;
  }

  void release(start_signal signal) noexcept {
    // release: publishes grant/body set-up to the waiting thread.
    start.store(signal, std::memory_order_release);
    start.notify_one();
  }
};

rt_thread::rt_thread(const rt_thread_config& config, std::function<void()> body)
    : state_(std::make_unique<state>()) {
  state& st = *state_;
  st.body = std::move(body);
  rt_thread_grant& grant = st.grant;
  grant.cpu_requested = config.cpu;
  grant.priority_requested = config.priority;

  int priority = config.priority;
  if (priority < 0) {
    append_warning(grant.warning, "priority " + std::to_string(priority) + " invalid; using 0");
    priority = 0;
  }
  const int max_priority = sched_get_priority_max(SCHED_FIFO);
  if (max_priority > 0 && priority > max_priority) {
    append_warning(grant.warning, "priority " + std::to_string(priority) + " above maximum " +
                                      std::to_string(max_priority) + "; clamped");
    priority = max_priority;
  }

  const std::size_t stack = usable_stack_size(config.stack_size);
  int rc = st.create(stack, priority);
  const bool fifo_refused = rc == EPERM && priority > 0;
  if (fifo_refused) {
    append_warning(grant.warning, "SCHED_FIFO priority " + std::to_string(priority) + " refused (" +
                                      error_text(rc) +
                                      "); running SCHED_OTHER. Run as root, with CAP_SYS_NICE "
                                      "or a sufficient RLIMIT_RTPRIO");
    rc = st.create(stack, 0);
  }
  if (rc != 0) throw std::system_error(rc, std::system_category(), "pthread_create");
  st.joinable = true;

  try {
    int policy = SCHED_OTHER;
    sched_param param{};
    if (pthread_getschedparam(st.handle, &policy, &param) == 0 && policy == SCHED_FIFO) {
      grant.priority_granted = param.sched_priority;
    }
    if (priority > 0 && !fifo_refused && grant.priority_granted != priority) {
      append_warning(grant.warning, "SCHED_FIFO priority " + std::to_string(priority) +
                                        " not in effect (got " +
                                        std::to_string(grant.priority_granted) + ")");
    }

    if (config.cpu >= 0) {
      if (!cpu_exists(config.cpu)) {
        append_warning(grant.warning,
                       "CPU " + std::to_string(config.cpu) + " is not online; thread not pinned");
      } else {
        const auto count = static_cast<std::size_t>(config.cpu) + 1;
        cpu_set_t* set = CPU_ALLOC(count);
        if (set == nullptr) throw std::bad_alloc();
        const std::size_t bytes = CPU_ALLOC_SIZE(count);
        CPU_ZERO_S(bytes, set);
        CPU_SET_S(static_cast<std::size_t>(config.cpu), bytes, set);
        const int aff = pthread_setaffinity_np(st.handle, bytes, set);
        CPU_FREE(set);
        if (aff == 0) {
          grant.cpu_granted = config.cpu;
        } else {
          append_warning(grant.warning, "pinning to CPU " + std::to_string(config.cpu) +
                                            " refused (" + error_text(aff) + ")");
        }
      }
    } else if (config.cpu != -1) {
      append_warning(grant.warning, "CPU " + std::to_string(config.cpu) + " invalid; not pinned");
    }

    if (!config.name.empty()) {
      // The kernel limit is 16 bytes including the terminator.
      const std::string name = config.name.substr(0, 15);
      const int nrc = pthread_setname_np(st.handle, name.c_str());
      if (nrc != 0)
        append_warning(grant.warning, "naming thread refused (" + error_text(nrc) + ")");
    }
  } catch (...) {
    // The thread exists: let it exit without running the body, then report the failure.
    st.release(state::abandon);
    pthread_join(st.handle, nullptr);
    throw;
  }
  st.release(state::run);
}

rt_thread::rt_thread(rt_thread&& other) noexcept = default;

rt_thread& rt_thread::operator=(rt_thread&& other) noexcept {
  if (this != &other) {
    if (joinable()) pthread_join(state_->handle, nullptr);
    state_ = std::move(other.state_);
  }
  return *this;
}

rt_thread::~rt_thread() {
  if (joinable()) pthread_join(state_->handle, nullptr);
}

const rt_thread_grant& rt_thread::grant() const noexcept {
  static const rt_thread_grant none{};  // for a moved-from object
  return state_ ? state_->grant : none;
}

bool rt_thread::joinable() const noexcept {
  return state_ && state_->joinable;
}

void rt_thread::join() {
  if (!joinable()) throw std::system_error(EINVAL, std::system_category(), "rt_thread::join");
  const int rc = pthread_join(state_->handle, nullptr);
  if (rc != 0) throw std::system_error(rc, std::system_category(), "pthread_join");
  state_->joinable = false;
  if (state_->error) std::rethrow_exception(std::exchange(state_->error, nullptr));
}

bool rt_thread::join_until(std::int64_t deadline_ns) noexcept {
  if (!joinable()) return true;
  // pthread_timedjoin_np in slices of at most 10 ms against CLOCK_REALTIME, not
  // pthread_clockjoin_np on the monotonic deadline: ThreadSanitizer does not intercept the
  // latter, so it would not see the join and would report the joined thread's last reads as
  // races with whatever reuses their memory. The deadline itself stays monotonic; a jump of
  // the wall clock can only shorten or lengthen one slice.
  int rc = ETIMEDOUT;
  for (;;) {
    const std::int64_t left = deadline_ns - monotonic_now_ns();
    if (left <= 0) {
      rc = pthread_tryjoin_np(state_->handle, nullptr);
      break;
    }
    timespec now{};
    clock_gettime(CLOCK_REALTIME, &now);
    const std::int64_t until = static_cast<std::int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec +
                               std::min<std::int64_t>(left, 10'000'000);
    timespec ts{};
    ts.tv_sec = static_cast<time_t>(until / 1'000'000'000);
    ts.tv_nsec = static_cast<long>(until % 1'000'000'000);
    rc = pthread_timedjoin_np(state_->handle, nullptr, &ts);
    if (rc != ETIMEDOUT && rc != EINTR) break;
  }
  if (rc != 0) return false;
  state_->joinable = false;
  state_->error = nullptr;  // as the destructor: an escaped exception is discarded
  return true;
}

// ---- free functions ----

bool lock_memory(std::string& why) noexcept {
  if (mlockall(MCL_CURRENT | MCL_FUTURE) == 0) {
    why.clear();
    return true;
  }
  const int err = errno;
  try {
    why = "mlockall(MCL_CURRENT|MCL_FUTURE) failed: " + error_text(err) +
          " (needs CAP_IPC_LOCK or a large enough RLIMIT_MEMLOCK, see ulimit -l)";
  } catch (...) {
    // Out of memory while describing the failure: the false return still says it.
  }
  return false;
}

cpu_latency_guard::cpu_latency_guard() noexcept {
  fd_ = ::open("/dev/cpu_dma_latency", O_WRONLY | O_CLOEXEC);
  if (fd_ < 0) return;
  // The PM QoS request lasts while the file stays open.
  const std::int32_t zero = 0;
  if (::write(fd_, &zero, sizeof(zero)) != static_cast<ssize_t>(sizeof(zero))) {
    ::close(fd_);
    fd_ = -1;
  }
}

cpu_latency_guard::~cpu_latency_guard() {
  if (fd_ >= 0) ::close(fd_);
}

int online_cpu_count() {
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 && n < std::numeric_limits<int>::max() ? static_cast<int>(n) : 1;
}

bool cpu_exists(int cpu) {
  if (cpu < 0) return false;
  std::ifstream file("/sys/devices/system/cpu/online");
  std::string list;
  if (file && std::getline(file, list)) return cpu_in_list(list, cpu);
  return cpu < online_cpu_count();  // no sysfs (unusual container): assume 0..n-1
}

void prefault_stack(std::size_t bytes) noexcept {
  touch_stack(bytes);
}

void sleep_until_ns(std::int64_t abs_ns) noexcept {
  if (abs_ns < 0) abs_ns = 0;
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(abs_ns / 1'000'000'000);
  ts.tv_nsec = static_cast<long>(abs_ns % 1'000'000'000);
  // clock_nanosleep returns the error instead of setting errno; with TIMER_ABSTIME the
  // same deadline is simply requested again after a signal.
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

}  // namespace cosim
