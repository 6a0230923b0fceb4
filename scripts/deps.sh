#!/usr/bin/env bash
# Installs the Debian 12 packages nuvec needs when run as root, or prints the
# apt-get line otherwise. Safe to run repeatedly.
set -euo pipefail
packages=(cmake ninja-build g++ ccache libopenblas-dev libgtest-dev libbenchmark-dev fortunes
  nlohmann-json3-dev libpcre2-dev libicu-dev libopenmpi-dev openmpi-bin libjemalloc-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -eq 0 ]; then
  echo "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}" >/dev/null
else
  echo "missing packages; run: sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
