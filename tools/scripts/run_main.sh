#!/usr/bin/env bash
# The main job: install missing packages, configure, build, and run the default scenario,
# then write the run's report and say where the results and the report are.
#
# Default: rt_config/scenarios/bench_udp.toml, the crane in realtime mode driven over UDP
# on loopback. The two simulated bench devices are started here and stopped afterwards:
#   cosim-device joystick  replays the M1 valve command to 127.0.0.1:5600 (from port 5601)
#   cosim-device valve     listens on 127.0.0.1:5602 and logs every command to valve.csv
# Drivers and devices authenticate every datagram (drivers/PROTOCOL.md, version 2) with the
# shared key results/bench.key, created here once with `cosim-device keygen` (mode 0600).
# COSIM_SCENARIO=path.toml runs another scenario instead (offline scenarios need no
# devices). Extra arguments go to `cosim run` (e.g. --set run.duration=5).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
tools/scripts/install_deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
# The programs, and the FMUs the README's examples run (build/tests/fmus/: the bouncing ball,
# the crane as two FMUs, ...).
cmake --build build --target cosim cosim-device cosim_test_fmus -j"$(nproc)"

# What this machine can promise: a short `cosim doctor` (2 s wake-up test on every online
# CPU at SCHED_FIFO 80, as the default scenario's threads). On a machine that is not set
# up for hard real time, the run below may see deadline overruns; `cosim doctor` alone
# lists what to change.
if doctor="$(build/tools/cosim doctor --seconds 2 2>/dev/null)"; then
  echo "cosim doctor: $(grep '^verdict: ' <<<"$doctor" | sed 's/^verdict: //')"
  echo "  (details: build/tools/cosim doctor)"
fi

scenario="${COSIM_SCENARIO:-rt_config/scenarios/bench_udp.toml}"
out="results/$(basename "$scenario" .toml)"
mkdir -p "$out"
device=build/tools/device/cosim-device
pids=()
stop_devices() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap stop_devices EXIT

auth_sets=()
if grep -q '^kappa_source *= *"driver:joystick' "$scenario"; then
  key=results/bench.key
  [[ -f "$key" ]] || "$device" keygen "$key"
  auth_sets=(--set "drivers.joystick.key_file=\"$key\"" --set "drivers.valve.key_file=\"$key\"")
  # Same ports as bench_udp.toml; the valve outlives the run so it logs the safe values
  # sent at the end, and the joystick starts its replay at the simulation's start heartbeat.
  "$device" valve --key "$key" --listen 127.0.0.1:5602 --log "$out/valve.csv" --duration 60 \
    2>"$out/valve.log" &
  pids+=($!)
  "$device" joystick --key "$key" --to 127.0.0.1:5600 --from-port 5601 --manoeuvre M1 --duration 12 --sync \
    2>"$out/joystick.log" &
  pids+=($!)
  # Wait until both listen: the valve has written its log header, the joystick waits for
  # the session the simulation gives it at its start.
  for _ in $(seq 200); do
    [[ -s "$out/valve.csv" ]] && grep -q waiting "$out/joystick.log" && break
    sleep 0.025
  done
  echo "Started simulated devices: valve on 127.0.0.1:5602, joystick from 127.0.0.1:5601"
fi

set +e
build/tools/cosim run "$scenario" --out "$out" "${auth_sets[@]}" "$@"
rc=$?
set -e
sleep 0.3  # let the valve log the last safe-value datagrams
stop_devices
trap - EXIT
if [[ -f "$out/valve.csv" ]]; then
  echo "Valve device logged $(($(wc -l <"$out/valve.csv") - 1)) datagrams to $root/$out/valve.csv"
fi
echo "Results are in $root/$out (results.csv, summary.json)"
# The run's report (one self-contained HTML page); a run that wrote no summary.json has none.
if [[ -f "$out/summary.json" ]] && build/tools/cosim report "$out" >/dev/null; then
  echo "Report: $root/$out/report.html"
fi
exit $rc
