#pragma once
#include <memory>
#include <string>

#include "cosim/drivers/udp_backend.hpp"

namespace cosim::drivers {

/// io_uring backend (liburing): one multishot recvmsg with a provided-buffer ring, and a
/// read on an eventfd for wake(). Only when COSIM_HAVE_URING; otherwise throws a
/// configuration error naming `what`. Also throws (naming `what`) when the kernel refuses
/// io_uring, e.g. kernel.io_uring_disabled.
std::unique_ptr<udp_backend> make_uring_backend(const sockaddr_in& bind_addr,
                                                const std::string& what);

}  // namespace cosim::drivers
