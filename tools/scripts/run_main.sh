#!/usr/bin/env bash
# The main job: install missing packages, configure, build, run the default scenario and
# say where the results are. Extra arguments go to `cosim run` (e.g. --set run.macro_step=0.01).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
tools/scripts/install_deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCOSIM_BUILD_TESTS=OFF -DCOSIM_BUILD_BENCH=OFF >/dev/null
cmake --build build --target cosim -j"$(nproc)"
scenario="${COSIM_SCENARIO:-rt_config/scenarios/crane_m1_fs.toml}"
out="results/$(basename "$scenario" .toml)"
set +e
build/tools/cosim run "$scenario" --out "$out" "$@"
rc=$?
set -e
echo "Results are in $root/$out (results.csv, summary.json)"
exit $rc
