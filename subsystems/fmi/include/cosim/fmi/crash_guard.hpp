#pragma once
// An FMU is foreign code: it can crash (a null pointer, a stack overflow, abort()) while it
// is loaded, instantiated or initialised. Its memory is then the process's memory, so the
// process cannot go on trusting it; what it can do is say which FMU crashed in which call
// and exit 2 instead of dying silently with a core. Initialisation happens before the
// results folder is touched (rt_config/src/run.cpp), so nothing is half-written; the
// FMU's unpack folder is left unheld and removed by the next run (zip_archive.hpp).
// Termination happens before summary.json is written, so a crash there leaves the rows
// without a summary claiming the run finished.
namespace cosim::fmi {

/// While one is alive, SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT on any thread print
/// "cosim: FMU <fmu> crashed in <call> (<signal>); ...; <aftermath>" to stderr and end the
/// process with exit status 2. `aftermath` (a string literal) says what the crash leaves
/// behind, "nothing was written" by default. Nested guards: the innermost names the call.
/// Not for real-time threads (installing handlers is a system call); the runtime does not
/// use it there.
class crash_guard {
 public:
  crash_guard(const char* fmu, const char* call,
              const char* aftermath = "nothing was written") noexcept;
  ~crash_guard();
  crash_guard(const crash_guard&) = delete;
  crash_guard& operator=(const crash_guard&) = delete;

 private:
  char saved_[512];  // the outer guard's text, restored when this one ends
  const char* saved_aftermath_;
  bool outer_;
};

}  // namespace cosim::fmi
