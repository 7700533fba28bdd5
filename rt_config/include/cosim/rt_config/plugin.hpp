#pragma once
// Subsystem types from outside this repository: the plugin API (version
// COSIM_PLUGIN_API_VERSION).
//
// A type is a cosim::subsystem subclass (subsystem.hpp: ports, variables, step, update_outputs,
// optional save/restore state, declared feedthrough and partials) plus a
// cosim::config::subsystem_type (type_registry.hpp: name, parameters with units, defaults and
// ranges, integrators, default step, create()). It reaches the registry in one of two ways:
//
//  - an embedding program (linked with cosim::rt_config) calls register_subsystem_type()
//    before it reads a system file;
//  - a shared library (a plugin) names its types in COSIM_PLUGIN(fn); a system file loads it
//    with the top-level key `plugins = ["path/libmy_models.so"]` (relative to the file),
//    before its subsystems are read. The plugin is built against the installed headers only
//    (CMake target cosim::plugin_api) and links no cosim library: the cosim program exports
//    its symbols to it.
//
// The loader refuses a plugin built against another API version, or whose view of the types
// it shares with cosim has another layout, naming the file and both versions. The real-time
// rules hold as for built-in types: step() and update_outputs() are noexcept, allocate
// nothing and do not block (tests run the allocation probe over a plugin's step). A type
// whose step cannot promise that overrides subsystem::realtime_safe() to return false.
//
// Call order of a plugin: dlopen -> cosim_plugin_abi() checked -> cosim_plugin_register(r)
// -> r.add(type) per type. The library is never unloaded (its code backs the types).
#include <cstddef>
#include <string>

#include "cosim/rt_config/type_registry.hpp"
#include "cosim/runtime/subsystem.hpp"

/// Raised on any incompatible change to subsystem.hpp, type_registry.hpp or this header.
#define COSIM_PLUGIN_API_VERSION 1

namespace cosim::config {

/// What a plugin was built against: checked before anything else of it is called.
struct plugin_abi {
  int api_version = 0;
  std::size_t subsystem_size = 0;       // sizeof(cosim::subsystem)
  std::size_t subsystem_type_size = 0;  // sizeof(cosim::config::subsystem_type)
};

/// The registry as a plugin sees it (virtual: a plugin resolves no symbol to call it).
class plugin_registrar {
 public:
  plugin_registrar() = default;
  plugin_registrar(const plugin_registrar&) = delete;
  plugin_registrar& operator=(const plugin_registrar&) = delete;
  virtual ~plugin_registrar() = default;
  /// Registers `t`; throws cosim::error when its name is taken or empty.
  virtual void add(subsystem_type t) = 0;
};

/// Adds a type to the registry (an embedding program's own type). Throws cosim::error
/// (config_value) when the name is empty, starts with "fmu:" or is already registered.
void register_subsystem_type(subsystem_type t);

/// Loads the plugin at `path` once per process (later calls with the same file do nothing)
/// and registers its types. `where` (file:line: key) prefixes every message. Throws
/// cosim::error (config_value) when it cannot be loaded, is no cosim plugin, was built against
/// another API version, or its registration fails.
void load_plugin(const std::string& path, const std::string& where);

}  // namespace cosim::config

/// In exactly one source file of a plugin: COSIM_PLUGIN(my_register), where
/// `void my_register(cosim::config::plugin_registrar& r)` calls r.add() per type.
#define COSIM_PLUGIN(register_fn)                                                          \
  extern "C" __attribute__((visibility("default"))) const ::cosim::config::plugin_abi*     \
  cosim_plugin_abi() {                                                                     \
    static const ::cosim::config::plugin_abi abi{COSIM_PLUGIN_API_VERSION,                 \
                                                 sizeof(::cosim::subsystem),               \
                                                 sizeof(::cosim::config::subsystem_type)}; \
    return &abi;                                                                           \
  }                                                                                        \
  extern "C" __attribute__((visibility("default"))) void cosim_plugin_register(            \
      ::cosim::config::plugin_registrar* r) {                                              \
    register_fn(*r);                                                                       \
  }
