// SSP 1.0 import (ssp_reader.hpp): an .ssp package is unpacked into the cache
// (ssp/ssp_package.cpp), its SystemStructure.ssd read into the system file it stands for
// (ssp/ssd_reader.hpp: description, parameters, connections; ssp/ssp_xml.hpp: namespaces and
// XML files with lines; ssp/ssp_units.hpp: unit algebra), and that file read like any other.
#include "ssp_reader.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>

#include "cosim/runtime/error.hpp"
#include "ssp/ssd_reader.hpp"
#include "ssp/ssp_xml.hpp"

namespace cosim::config {

namespace fs = std::filesystem;

bool is_ssp_path(const std::string& path) {
  const std::string ext = ssp::lower(fs::path(path).extension().string());
  return ext == ".ssp" || ext == ".ssd";
}

config_reader read_ssp(const std::string& path, const std::vector<std::string>& sets) {
  toml::table t;
  std::string step_origin;
  if (ssp::lower(fs::path(path).extension().string()) == ".ssp") {
    const std::string dir = unpack_ssp(path);
    ssp::ssd_reader r(dir + "/" + ssp::default_ssd, path + "!/" + ssp::default_ssd, dir, path);
    t = r.read();
    step_origin = r.macro_step_origin();
  } else {
    ssp::ssd_reader r(path, path, "", "");
    t = r.read();
    step_origin = r.macro_step_origin();
  }
  config_reader cr = config_reader::from_table(std::move(t), path);
  cr.apply_overrides(sets);
  const bool step_set = std::any_of(sets.begin(), sets.end(), [](const std::string& s) {
    return s.rfind("run.macro_step=", 0) == 0;
  });
  if (!step_set && !step_origin.empty() && cr.has("run.macro_step"))
    spdlog::info("{}: macro step {} s from {}", path,
                 ssp::shortest(cr.get_double("run.macro_step")), step_origin);
  if (!cr.has("run.duration"))
    throw error(errc::config_key,
                path +
                    ": no run duration: the description has no <ssd:DefaultExperiment "
                    "stopTime=\"...\">; give --set run.duration=SECONDS");
  if (!cr.has("run.macro_step"))
    throw error(errc::config_key,
                path + ": no macro step: neither a <ssc:Annotation type=\"" + ssp::run_annotation +
                    "\"><Run macroStep=\"H\"/></ssc:Annotation> in <ssd:DefaultExperiment> nor "
                    "a DefaultExperiment stepSize of its FMUs gives one; give --set "
                    "run.macro_step=SECONDS");
  return cr;
}

}  // namespace cosim::config
