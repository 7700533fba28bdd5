// The crash guard: signal handlers that name the FMU that crashed, then _exit(2).
#include "cosim/fmi/crash_guard.hpp"

#include <signal.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstring>

namespace cosim::fmi {

namespace {

constexpr std::array<int, 5> guarded = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

// The handler reads these; written only while no guarded signal can be handled halfway
// (a crash during the write just prints the older text).
char g_text[512];
std::atomic<int> g_depth{0};
std::atomic<const char*> g_aftermath{"nothing was written"};
std::array<struct sigaction, guarded.size()> g_previous{};
// A stack overflow in the FMU leaves no stack for the handler: it runs on this one.
alignas(16) char g_alt_stack[64 * 1024];
stack_t g_previous_alt{};

void put(const char* s) noexcept {
  std::size_t n = std::strlen(s);
  while (n > 0) {
    const ssize_t w = ::write(STDERR_FILENO, s, n);
    if (w <= 0) return;
    s += w;
    n -= static_cast<std::size_t>(w);
  }
}

const char* signal_name(int sig) noexcept {
  switch (sig) {
    case SIGSEGV:
      return "SIGSEGV, invalid memory access";
    case SIGBUS:
      return "SIGBUS, bus error";
    case SIGFPE:
      return "SIGFPE, arithmetic exception";
    case SIGILL:
      return "SIGILL, illegal instruction";
    case SIGABRT:
      return "SIGABRT, abort";
    default:
      return "signal";
  }
}

// Async-signal-safe: write(2) and _exit(2) only.
void on_crash(int sig) noexcept {
  put("cosim: error: FMU ");
  put(g_text);
  put(" (");
  put(signal_name(sig));
  put("); the process cannot trust its memory after that and exits 2; ");
  put(g_aftermath.load());
  put("\n");
  ::_exit(2);
}

void copy(char* dst, const char* a, const char* b) noexcept {
  std::size_t n = 0;
  for (const char* s : {a, " crashed in ", b})
    for (; *s != '\0' && n + 1 < sizeof g_text; ++s) dst[n++] = *s;
  dst[n] = '\0';
}

}  // namespace

crash_guard::crash_guard(const char* fmu, const char* call, const char* aftermath) noexcept
    : saved_{}, saved_aftermath_(g_aftermath.load()) {
  outer_ = g_depth.fetch_add(1) == 0;
  std::memcpy(saved_, g_text, sizeof saved_);
  copy(g_text, fmu, call);
  g_aftermath.store(aftermath);
  if (!outer_) return;
  stack_t alt{};
  alt.ss_sp = g_alt_stack;
  alt.ss_size = sizeof g_alt_stack;
  ::sigaltstack(&alt, &g_previous_alt);
  struct sigaction sa {};
  sa.sa_handler = on_crash;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_ONSTACK | SA_RESETHAND;
  for (std::size_t i = 0; i < guarded.size(); ++i) ::sigaction(guarded[i], &sa, &g_previous[i]);
}

crash_guard::~crash_guard() {
  if (outer_) {
    for (std::size_t i = 0; i < guarded.size(); ++i)
      ::sigaction(guarded[i], &g_previous[i], nullptr);
    ::sigaltstack(&g_previous_alt, nullptr);
  }
  std::memcpy(g_text, saved_, sizeof saved_);
  g_aftermath.store(saved_aftermath_);
  g_depth.fetch_sub(1);
}

}  // namespace cosim::fmi
