#!/usr/bin/env bash
# Builds nuvec with the CUDA backend and runs the whole test suite (the GPU
# is then the default device: the GPU tests first, in groups, then the rest)
# and the GPU benchmarks, on a machine with an NVIDIA GPU (docs/gpu-status.md records the
# latest result). Usage: scripts/gpu.sh [build dir] [matmul|fast]: with
# `matmul`, only the matmul table (bench/gpu_matmul_bench, and torch's
# figures for the same products); with `fast`, only the fast operations'
# tests (GPU against the CPU, row independence) and their tables
# (bench/gpu_fast_bench, bench/fast_bench on the host's CPUs, and the peers'
# figures from tools/peer_gpu_fast.py); with `lm`, nuvec_lm's tests on the
# GPU and `nuvec-lm bench` on Llama-3.2-1B- and 4B-shaped checkpoints with
# random weights (tools/make_random_llama.py; bfloat16 and 4-bit) against
# transformers with a static cache (tools/peer_lm_bench.py); with `dist`,
# the distributed tests (the nccl backend on this GPU); with `profile`, the
# few-row product table, a 1B decode, and ncu's kernel times of its last
# decode steps (tools/ncu_summary.py; NUVEC_PROFILE_OUT gets the files).
#
# A machine without Debian's packages and without a network (the H200 of
# docs/gpu-status.md) can be given .deb files of the build's dependencies
# (OpenBLAS, GoogleTest, and for nuvec_lm nlohmann-json, PCRE2 and ICU:
# `apt-get download libopenblas0-pthread libopenblas-pthread-dev
# libopenblas-dev libgtest-dev libgfortran5 nlohmann-json3-dev libpcre2-dev
# libpcre2-8-0 libicu-dev libicu72` on a Debian 12 machine) in NUVEC_DEBS; they are unpacked under /tmp.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build/gpu}
only=${2:-}
extra=()
if [ -n "${NUVEC_DEBS:-}" ]; then
  root=/tmp/nuvec-deps
  mkdir -p "$root"
  for f in "$NUVEC_DEBS"/*.deb; do dpkg -x "$f" "$root"; done
  lib=$root/usr/lib/x86_64-linux-gnu
  extra=(-DCMAKE_LIBRARY_PATH="$lib/openblas-pthread;$lib"
         -DNUVEC_CBLAS_INCLUDE="$root/usr/include/x86_64-linux-gnu/openblas-pthread"
         -DGTest_DIR="$lib/cmake/GTest")
  export LD_LIBRARY_PATH="$lib/openblas-pthread:$lib:${LD_LIBRARY_PATH:-}"
  # PCRE2's and ICU's .pc files name /usr: read them under the root.
  export PKG_CONFIG_PATH="$lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$root"
fi
# The nccl backend: NCCL's header and library from PyTorch's NCCL package
# where it is installed (the library is loaded at run time).
if nccl=$(python3 -c 'import nvidia.nccl as m; print(list(m.__path__)[0])' 2>/dev/null); then
  [ -f "$nccl/include/nccl.h" ] && extra+=(-DNUVEC_NCCL_INCLUDE="$nccl/include")
  export LD_LIBRARY_PATH="$nccl/lib:${LD_LIBRARY_PATH:-}"
fi
export NCCL_NVLS_ENABLE=0  # never NVLink multicast on a shared host
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DNUVEC_BUILD_EXAMPLES=OFF \
  -DNUVEC_BUILD_FUZZ=OFF "${extra[@]}"
if [ "$only" = matmul ]; then
  cmake --build "$dir" --target gpu_matmul_bench gpu_matmul_rows_bench -j "$(nproc)"
  status=0
  "$dir/bench/gpu_matmul_bench" || status=$?
  "$dir/bench/gpu_matmul_rows_bench" || status=$?
  python3 tools/peer_gpu_bench.py --matmul || status=$?
  exit $status
fi
lm_run() {  # nuvec_lm on the GPU: tests, then the decode / prefill tables
  local st=0 models=${NUVEC_LM_MODELS:-/tmp/nuvec-lm-models}
  cmake --build "$dir" --target nuvec_lm_tests nuvec-lm -j "$(nproc)"
  "$dir/tests/nuvec_lm_tests" --gtest_brief=1 || st=$?
  for shape in 1b 4b; do
    [ -d "$models/$shape" ] || python3 tools/make_random_llama.py --shape $shape --out "$models/$shape" || st=$?
  done
  "$dir/lm/nuvec-lm" bench --model "$models/1b" --device gpu --prompts 128,2048 --decode-tokens 128 --batch 8,32 || st=$?
  "$dir/lm/nuvec-lm" bench --model "$models/1b" --device gpu --quantize --bits 4 --group-size 64 --prompts 128 || st=$?
  "$dir/lm/nuvec-lm" bench --model "$models/4b" --device gpu --prompts 128 --decode-tokens 64 || st=$?
  python3 tools/peer_lm_bench.py --model "$models/1b" --prompts 128,2048 --decode 256 || st=$?
  return $st
}
if [ "$only" = lm ]; then
  status=0
  lm_run || status=$?
  exit $status
fi
if [ "$only" = profile ]; then  # where a decode step's GPU time goes
  status=0 models=${NUVEC_LM_MODELS:-/tmp/nuvec-lm-models} pdir=${NUVEC_PROFILE_OUT:-/tmp/nuvec-profile}
  mkdir -p "$pdir"
  cmake --build "$dir" --target nuvec-lm gpu_matmul_rows_bench -j "$(nproc)"
  [ -d "$models/1b" ] || python3 tools/make_random_llama.py --shape 1b --out "$models/1b" || status=$?
  "$dir/lm/nuvec-lm" bench --model "$models/1b" --device gpu --prompts 128 --decode-tokens 128 || status=$?
  # Every kernel of a short run; the last launches are the final decode steps.
  ncu --csv --print-units base --clock-control none --metrics gpu__time_duration.sum \
    "$dir/lm/nuvec-lm" bench --model "$models/1b" --device gpu --prompts 16 --decode-tokens 6 >"$pdir/decode.csv" || status=$?
  python3 tools/ncu_summary.py "$pdir/decode.csv" --last "${NUVEC_PROFILE_LAST:-1200}" --steps 4 --sequence \
    >"$pdir/summary.md" || status=$?
  head -60 "$pdir/summary.md"
  "$dir/bench/gpu_matmul_rows_bench" || status=$?
  exit $status
fi
if [ "$only" = dist ]; then
  cmake --build "$dir" --target nuvec_tests -j "$(nproc)"
  exec "$dir/tests/nuvec_tests" --gtest_filter='GpuNccl*:Distributed*' --gtest_brief=1
fi
if [ "$only" = fast ]; then
  cmake --build "$dir" --target nuvec_tests gpu_fast_bench fast_bench -j "$(nproc)"
  status=0
  "$dir/tests/nuvec_tests" --gtest_filter='GpuRegistry*RMSNorm*:GpuRegistry*LayerNorm*:GpuRegistry*AddRMSNorm*:GpuRegistry*RoPE*:GpuRegistry*Softmax*:GpuRegistry*LogSumExp*:GpuRegistry*CrossEntropy*:GpuRegistry*Attention*:Fast*' --gtest_brief=1 || status=$?
  "$dir/bench/gpu_fast_bench" || status=$?
  taskset -c 0,1 "$dir/bench/fast_bench" || status=$?
  if python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
    python3 tools/peer_gpu_fast.py || status=$?
    taskset -c 0,1 python3 tools/peer_cpu_fast.py --threads 2 || status=$?
  fi
  exit $status
fi
cmake --build "$dir" --target nuvec_tests gpu_bench gpu_compile_bench gpu_matmul_bench gpu_matmul_rows_bench \
  gpu_quant_bench nn_train_bench -j "$(nproc)"
status=0
# In groups, so that a crash in one leaves the others' results.
for group in 'Gpu.*:GpuMemory*' 'GpuRegistry*:GpuOpsRegistry*' 'GpuSortScan*' 'GpuCompile*:GpuTable*' 'GpuCudaKernel*:CudaKernel*' 'GpuNccl*' '-Gpu*:CudaKernel*'; do
  "$dir/tests/nuvec_tests" --gtest_filter="$group" --gtest_brief=1 || status=$?
done
# The tensor-core few-row quantized product, opt-in until it has run here
# (docs/quantization.md): its tests, then the quantized table with and without it.
NUVEC_GPU_QMMA=1 "$dir/tests/nuvec_tests" --gtest_filter='GpuRegistry*Quantiz*:GpuRegistry*GatherQMM*:Quantized*:GpuHeld*' \
  --gtest_brief=1 || status=$?
"$dir/bench/gpu_quant_bench" || status=$?
NUVEC_GPU_QMMA=1 "$dir/bench/gpu_quant_bench" || status=$?
"$dir/bench/gpu_bench" || status=$?
"$dir/bench/gpu_compile_bench" || status=$?
"$dir/bench/gpu_matmul_bench" || status=$?
"$dir/bench/gpu_matmul_rows_bench" || status=$?
tools/bench_train.sh "$dir" gpu || status=$?
lm_run || status=$?
if python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
  python3 tools/peer_gpu_bench.py || status=$?
  python3 tools/peer_gpu_bench.py --matmul || status=$?
  [ -n "${NUVEC_PEERS_COMPILE:-}" ] && { python3 tools/peer_gpu_bench.py --compile || status=$?; }
  [ -n "${NUVEC_PEERS_COMPILE:-}" ] && { python3 tools/peer_gpu_bench.py --step || status=$?; }
fi
exit $status
