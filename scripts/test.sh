#!/usr/bin/env bash
# Builds nuvec with warnings as errors and runs the whole test suite; with
# NUVEC_SANITIZE=1 also the AddressSanitizer + UndefinedBehaviorSanitizer build.
set -euo pipefail
cd "$(dirname "$0")/.."
# ccache hits across clones: paths under the checkout are hashed relative.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
scripts/deps.sh
jobs=$(nproc)
run_suite() {  # build dir, extra cmake args...
  local dir=$1
  shift
  cmake -S . -B "$dir" -G Ninja -DNUVEC_WERROR=ON "$@" >/dev/null
  cmake --build "$dir" -j "$jobs"
  ctest --test-dir "$dir" -j "$jobs" --output-on-failure --timeout 120
}
run_suite build/test -DCMAKE_BUILD_TYPE=Release
if [ "${NUVEC_SANITIZE:-0}" = "1" ]; then
  run_suite build/asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNUVEC_SANITIZE=address,undefined -DNUVEC_CUDA=OFF \
    -DNUVEC_BUILD_BENCH=OFF -DNUVEC_BUILD_EXAMPLES=OFF
fi
