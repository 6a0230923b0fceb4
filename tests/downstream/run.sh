#!/usr/bin/env bash
# Installs the build tree into a scratch prefix and builds and runs the
# downstream project against it. Arguments: build dir, source dir.
set -euo pipefail
build=$1
src=$2
prefix="$build/downstream/prefix"
rm -rf "$build/downstream"
cmake --install "$build" --prefix "$prefix" >/dev/null
cmake -S "$src/tests/downstream" -B "$build/downstream/build" -G Ninja \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build/downstream/build" >/dev/null
"$build/downstream/build/downstream"
