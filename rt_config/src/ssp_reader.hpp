#pragma once
// SSP import (System Structure and Parameterization 1.0, ssp-standard.org): a package
// (.ssp, a zip holding SystemStructure.ssd and its resources) or a bare description (.ssd)
// read as the system file it stands for, so that `cosim run X.ssp` builds the same scenario
// as the equivalent [subsystems.*] file. Internal to rt_config (ssp_reader.cpp).
#include <string>
#include <vector>

#include "cosim/rt_config/config_reader.hpp"

namespace cosim::config {

/// True when `path` ends in ".ssp" or ".ssd" (any case).
[[nodiscard]] bool is_ssp_path(const std::string& path);

/// The system file an .ssp / .ssd stands for, with `sets` (--set KEY=VALUE) applied:
///   [run] duration = stopTime - startTime of ssd:DefaultExperiment; macro_step from the
///     DefaultExperiment's annotation <ssc:Annotation type="cosim.run"><Run macroStep="H"/>,
///     else the smallest DefaultExperiment stepSize of the FMUs; order = the components in
///     the order of the SSD;
///   [subsystems.NAME] type = "fmu:" + absolute path of the component's FMU, parameters =
///     the parameter bindings (component level, overridden by the system's);
///   [[connections]] from the output connector to the input connector;
///   [[sources]] constant:V for a system input connector bound to a value V;
///   [output] record = every output connector of every component, then each system output
///     connector as a column of that name.
/// Messages name `path` (`path`!/entry for a file inside an .ssp) and keys have no line;
/// SSD errors throw cosim::error naming the file, line, element and attribute.
[[nodiscard]] config_reader read_ssp(const std::string& path, const std::vector<std::string>& sets);

/// Unpacks the .ssp at `path` (entries checked to stay inside) into a folder kept for later
/// runs, named by the archive's content: ${TMPDIR:-/tmp}/cosim-ssp-UID/HASH, private to the
/// user. Returns that folder. Throws cosim::error (io: unreadable, model: not a usable SSP).
[[nodiscard]] std::string unpack_ssp(const std::string& path);

}  // namespace cosim::config
