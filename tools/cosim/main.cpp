// cosim: run co-simulation scenarios and work with their results.
#include <csignal>
#include <cstdio>
#include <exception>

#include "commands.hpp"
#include "cosim/rt_config/worker.hpp"

int main(int argc, char** argv) {
  // Setting up the commands can throw too (std::bad_alloc): end with a message and exit 2.
  try {
    // host = "process" subsystems: the master starts this very program as `cosim worker`
    // (the link names the running binary even if the file was replaced since). Here, not in
    // main_entry: in-process CLI tests call that, and their program is no cosim.
    cosim::config::set_worker_program("/proc/self/exe");
    // A file size limit (ulimit -f) is a write error like a full disk (write(2) fails with
    // EFBIG): the run stops in order, naming the file, instead of being killed without a
    // word and losing its buffered rows.
    (void)std::signal(SIGXFSZ, SIG_IGN);
    return cosim::cli::main_entry(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cosim: error: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "cosim: error: unknown exception\n");
  }
  return 2;
}
