#pragma once
// SSP packages (.ssp, a zip) unpacked into a cache kept for later runs (private to
// rt_config's SSP import; unpack_ssp in ssp_reader.hpp is its entry).
#include <string>

namespace cosim::config::ssp {

/// FNV-1a 64 of the file's bytes, as 16 hex digits: names the unpacked folder by content,
/// so that a changed package never reuses an old folder. Throws cosim::error (io).
[[nodiscard]] std::string content_hash(const std::string& path);

/// ${TMPDIR:-/tmp}/cosim-ssp-UID, created private; throws cosim::error (io) unless it is a
/// folder of this user that nobody else can write.
[[nodiscard]] std::string cache_root();

/// Removes folders of the cache at `root` unused for 30 days, and half-done unpacks older
/// than an hour.
void prune_cache(const std::string& root);

}  // namespace cosim::config::ssp
