#!/usr/bin/env bash
# Installs the Debian 12 packages the project needs, only those missing.
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config git
  libeigen3-dev libboost1.81-dev libspdlog-dev liburing-dev
  libgtest-dev libgmock-dev libbenchmark-dev libtomlplusplus-dev libcli11-dev
  libzip-dev libpugixml-dev libsodium-dev libssl-dev openssl
  cyclonedds-dev cyclonedds-tools iceoryx nftables iproute2 iptables libnetfilter-queue-dev
  chromium
  rt-tests clang libclang-rt-14-dev clang-tidy lld
  strace
  libcap2-bin help2man lintian
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install_deps: all ${#packages[@]} packages present"
  exit 0
fi
echo "install_deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install_deps: run as root (or install sudo)" >&2; exit 1; }
  SUDO=sudo
fi
$SUDO apt-get update
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
