#!/usr/bin/env bash
# Compiles the parity cases (tests/parity/cases_*.inc) against MLX's C++
# library from the pip package (pip install "mlx[cpu]==0.32.4") and writes
# MLX's results to tests/refs/parity.ref, which tests/mlx_parity_test.cpp
# replays against nuvec. Never needed by the build or the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
mlx=$(python3 -c "import mlx.core, os; print(os.path.dirname(mlx.core.__file__))")
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
g++ -std=c++20 -O1 -w -I"$mlx/include" -Itests tools/mlx_parity/record.cpp \
  -L"$mlx/lib" -lmlx -Wl,-rpath,"$mlx/lib" -o "$out/record"
"$out/record" > tests/refs/parity.ref
echo "wrote tests/refs/parity.ref ($(grep -vc '^[#@]' tests/refs/parity.ref) values)"
