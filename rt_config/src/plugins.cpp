// Subsystem types registered from outside the tree (plugin.hpp): by an embedding program, or
// by a plugin a system file loads with dlopen.
#include <dlfcn.h>

#include <filesystem>
#include <mutex>
#include <set>

#include "cosim/rt_config/plugin.hpp"
#include "cosim/runtime/error.hpp"
#include "cosim/runtime/version.hpp"
#include "fmu_types.hpp"
#include "type_registry_detail.hpp"

namespace cosim::config {

namespace {

std::string in_quotes(const std::string& s) {
  return "\"" + s + "\"";
}

class registry_registrar final : public plugin_registrar {
 public:
  explicit registry_registrar(std::string where) : where_(std::move(where)) {}
  void add(subsystem_type t) override {
    try {
      register_subsystem_type(std::move(t));
    } catch (const error& e) {
      throw error(e.code(), where_ + ": " + e.what());
    }
  }

 private:
  std::string where_;
};

// Plugins already loaded, by canonical path: a system run twice in one process (a sweep)
// registers its types once.
std::set<std::string>& loaded() {
  static std::set<std::string> s;
  return s;
}

std::mutex& load_mutex() {
  static std::mutex m;
  return m;
}

}  // namespace

void register_subsystem_type(subsystem_type t) {
  COSIM_INPUT_CHECK(!t.name.empty(), errc::config_value, "a subsystem type needs a name");
  COSIM_INPUT_CHECK(!is_fmu_type(t.name), errc::config_value,
                    "type name " + in_quotes(t.name) + ": \"fmu:\" names FMUs");
  COSIM_INPUT_CHECK(static_cast<bool>(t.create), errc::config_value,
                    "type " + in_quotes(t.name) + " has no create()");
  COSIM_INPUT_CHECK(find_subsystem_type(t.name) == nullptr, errc::config_value,
                    "type " + in_quotes(t.name) + " is already registered");
  if (t.integrators.empty()) t.integrators.emplace_back("default");
  added_subsystem_types().push_back(std::move(t));
}

void load_plugin(const std::string& path, const std::string& where) {
  const std::lock_guard<std::mutex> lock(load_mutex());
  std::error_code ec;
  const std::filesystem::path canonical = std::filesystem::canonical(path, ec);
  COSIM_INPUT_CHECK(!ec, errc::config_value,
                    where + ": plugin " + in_quotes(path) + ": " + ec.message());
  if (loaded().count(canonical.string()) != 0) return;
  const std::string at = where + ": plugin " + in_quotes(canonical.string());
  // RTLD_LOCAL: two plugins may use the same names for their own internals.
  void* lib = dlopen(canonical.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = dlerror();  // NOLINT(concurrency-mt-unsafe): under load_mutex
    throw error(errc::config_value,
                at + ": cannot be loaded: " + (why != nullptr ? why : "unknown dlopen error"));
  }
  using abi_fn = const plugin_abi* (*)();
  using register_fn = void (*)(plugin_registrar*);
  const auto abi = reinterpret_cast<abi_fn>(dlsym(lib, "cosim_plugin_abi"));
  const auto reg = reinterpret_cast<register_fn>(dlsym(lib, "cosim_plugin_register"));
  if (abi == nullptr || reg == nullptr) {
    dlclose(lib);
    throw error(errc::config_value,
                at + ": not a cosim plugin (it exports no cosim_plugin_abi and "
                     "cosim_plugin_register; see COSIM_PLUGIN in cosim/rt_config/plugin.hpp)");
  }
  const plugin_abi* a = abi();
  const std::string mine = std::to_string(COSIM_PLUGIN_API_VERSION);
  if (a == nullptr || a->api_version != COSIM_PLUGIN_API_VERSION) {
    const std::string theirs = a != nullptr ? std::to_string(a->api_version) : "unknown";
    dlclose(lib);
    throw error(errc::config_value,
                at + ": built against plugin API version " + theirs + ", but this cosim (" +
                    build().version + ") has plugin API version " + mine +
                    ": rebuild the plugin against this cosim's installed headers");
  }
  if (a->subsystem_size != sizeof(subsystem) || a->subsystem_type_size != sizeof(subsystem_type)) {
    dlclose(lib);
    throw error(errc::config_value,
                at + ": plugin API version " + mine +
                    ", but its cosim::subsystem / subsystem_type have another layout (" +
                    std::to_string(a->subsystem_size) + " / " +
                    std::to_string(a->subsystem_type_size) + " bytes, here " +
                    std::to_string(sizeof(subsystem)) + " / " +
                    std::to_string(sizeof(subsystem_type)) +
                    "): rebuild it with the same compiler and headers as this cosim");
  }
  registry_registrar r(at);
  try {
    reg(&r);
  } catch (const error&) {
    throw;
  } catch (const std::exception& e) {
    throw error(errc::config_value, at + ": registration failed: " + e.what());
  }
  // Never unloaded: the registered types' create() and the instances' code live in it.
  loaded().insert(canonical.string());
}

}  // namespace cosim::config
