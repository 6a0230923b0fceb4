#!/usr/bin/env bash
# Runs nuvec's training-step benchmark and PyTorch's (torch.compile) on the
# same device in one go and prints the table of docs/performance.md.
# Usage: tools/bench_train.sh BUILD_DIR cpu|gpu
set -euo pipefail
build=$1
dev=${2:-cpu}
here=$(dirname "$0")
ours=$("$build/bench/nn_train_bench" "$dev" | grep '^RESULT')
theirs=$(python3 "$here/torch_train_bench.py" "$dev" 2>/dev/null | grep '^RESULT' || true)
torch_version=$(python3 -c 'import torch; print(torch.__version__)' 2>/dev/null || echo "absent")
echo "device: $dev; PyTorch $torch_version (torch.compile)"
printf '| %-28s | %12s | %12s | %6s | %8s | %8s | %9s | %9s |\n' workload "nuvec /s" "torch /s" ratio \
  "1st s" "torch 1st" "peak MiB" "torch MiB"
echo "|------------------------------|--------------|--------------|--------|----------|----------|-----------|-----------|"
while read -r _ name rate first peak; do
  t=$(echo "$theirs" | awk -v n="$name" '$2 == n {print $3, $4, $5}')
  read -r trate tfirst tpeak <<< "${t:-- - -}"
  ratio=$( [ "$trate" != "-" ] && awk -v a="$rate" -v b="$trate" 'BEGIN {printf "%.2f", a / b}' || echo "-")
  printf '| %-28s | %12s | %12s | %6s | %8s | %8s | %9s | %9s |\n' "$name" "$rate" "$trate" "$ratio" "$first" \
    "$tfirst" "$peak" "$tpeak"
done <<< "$ours"
