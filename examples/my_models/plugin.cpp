// libmy_models.so: the plugin a system file loads with plugins = ["libmy_models.so"].
#include <cosim/rt_config/plugin.hpp>

#include "first_order_lag.hpp"

namespace {

void register_my_models(cosim::config::plugin_registrar& r) {
  r.add(my_models::first_order_lag_type());
}

}  // namespace

COSIM_PLUGIN(register_my_models)
