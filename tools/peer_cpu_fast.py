#!/usr/bin/env python3
"""PyTorch CPU on the cases of bench/fast_bench.cpp (same shapes, float32,
medians in ms), for docs/performance.md. Run it on the machine and with the
thread count of the nuvec run it is compared with, e.g.
`taskset -c 0,1 python3 tools/peer_cpu_fast.py --threads 2` beside
`taskset -c 0,1 build/.../bench/fast_bench`. Never needed by the build or
the tests."""
import argparse
import time

import torch
import torch.nn.functional as F


def median_ms(f, reps=9):
    f()
    t = []
    for _ in range(reps):
        s = time.perf_counter()
        f()
        t.append((time.perf_counter() - s) * 1e3)
    t.sort()
    return t[len(t) // 2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    g = torch.Generator().manual_seed(0)
    rows = []
    x = torch.randn(4096, 4096, generator=g)
    rows.append(("softmax f32 [4096, 4096]", median_ms(lambda: torch.softmax(x, -1))))
    x = torch.randn(8192, 1024, generator=g)
    w = torch.randn(1024, generator=g)
    rows.append(("rms_norm f32 [8192, 1024]", median_ms(lambda: F.rms_norm(x, (1024,), w, 1e-5))))
    rows.append(("layer_norm f32 [8192, 1024]", median_ms(lambda: F.layer_norm(x, (1024,), w, w, 1e-5))))
    logits = torch.randn(1024, 32000, generator=g)
    t = torch.randint(0, 32000, (1024,), generator=g)
    rows.append(("cross_entropy fwd f32 [1024, 32000]",
                 median_ms(lambda: F.cross_entropy(logits, t, reduction="none"))))
    lg = logits.clone().requires_grad_(True)

    def fwd_bwd():
        lg.grad = None
        F.cross_entropy(lg, t).backward()

    rows.append(("cross_entropy fwd+bwd f32 [1024, 32000]", median_ms(fwd_bwd)))
    q = torch.randn(1, 8, 1024, 64, generator=g)
    k = torch.randn(1, 8, 1024, 64, generator=g)
    v = torch.randn(1, 8, 1024, 64, generator=g)
    rows.append(("causal sdpa f32 [1, 8, 1024, 64]",
                 median_ms(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True), 5)))
    print("| case | torch ms |\n|---|---|")
    for name, ms in rows:
        print(f"| {name} | {ms:.3f} |")


if __name__ == "__main__":
    main()
