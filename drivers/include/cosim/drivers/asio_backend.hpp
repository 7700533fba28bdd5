#pragma once
#include <memory>
#include <string>

#include "cosim/drivers/udp_backend.hpp"

namespace cosim::drivers {

/// Boost.Asio backend: async_receive_from on the socket and an eventfd for wake().
std::unique_ptr<udp_backend> make_asio_backend(const sockaddr_in& bind_addr,
                                               const std::string& what);

}  // namespace cosim::drivers
