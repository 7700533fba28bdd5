// cosim: run co-simulation scenarios and work with their results.
#include <cstdio>
#include <exception>

#include "commands.hpp"

int main(int argc, char** argv) {
  // Setting up the commands can throw too (std::bad_alloc): end with a message and exit 2.
  try {
    return cosim::cli::main_entry(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cosim: error: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "cosim: error: unknown exception\n");
  }
  return 2;
}
