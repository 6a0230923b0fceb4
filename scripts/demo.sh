#!/usr/bin/env bash
# Builds nuvec and trains a character-level GPT on Debian's fortunes
# (examples/gpt/); arguments go to the trainer (--steps N, --device cpu|gpu,
# --resume, --out DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
# ccache hits across clones: paths under the checkout are hashed relative.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
scripts/deps.sh
# The same compiler flags as scripts/test.sh's Release build (warnings as
# errors included), so that each of the two commands finds the other's
# objects in ccache (a cold build with CUDA is most of an hour on 2 cores).
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DNUVEC_WERROR=ON \
  -DNUVEC_BUILD_TESTS=OFF -DNUVEC_BUILD_BENCH=OFF >/dev/null
cmake --build build/release --target train_gpt nuvec_tour
build/release/examples/train_gpt "$@"
