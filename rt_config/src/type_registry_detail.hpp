#pragma once
// The registry's storage of types added at run time (plugins.cpp): a deque, so that the
// pointers find_subsystem_type() handed out stay valid while more are added.
#include <deque>

#include "cosim/rt_config/type_registry.hpp"

namespace cosim::config {

std::deque<subsystem_type>& added_subsystem_types();

}  // namespace cosim::config
