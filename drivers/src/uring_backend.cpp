// io_uring backend: placeholder until the liburing implementation lands.
#include "cosim/drivers/uring_backend.hpp"

#include "cosim/runtime/error.hpp"

namespace cosim::drivers {

std::unique_ptr<udp_backend> make_uring_backend(const sockaddr_in& /*bind_addr*/,
                                                const std::string& what) {
#if COSIM_HAVE_URING
  throw error(errc::config_value, what + ": backend io_uring is not implemented yet in this build");
#else
  throw error(errc::config_value,
              what + ": backend io_uring is not available: cosim was built without liburing");
#endif
}

}  // namespace cosim::drivers
