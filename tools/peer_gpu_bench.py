#!/usr/bin/env python3
"""PyTorch's figures for bench/gpu_bench.cpp's table, on the same GPU.

Run beside build/.../bench/gpu_bench by scripts/gpu.sh when torch is
installed there. Never needed by the build or the tests.
"""
import torch


def ms(f, reps=21):
    f()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(reps):
        start.record()
        f()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return sorted(times)[len(times) // 2]


def main():
    torch.backends.cuda.matmul.allow_tf32 = False
    n = 1 << 26
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    mb = n * 4 / 1e6
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}")
    print("| op | ms | GB/s |\n|---|---|---|")
    for name, f, traffic in [
        ("copy (read + write)", lambda: x.clone(), 2),
        ("add (2 reads + write)", lambda: x + y, 3),
        ("x*x+1 (eager, 2 kernels)", lambda: x * x + 1, 4),
        ("exp", lambda: torch.exp(x), 2),
        ("astype bfloat16", lambda: x.to(torch.bfloat16), 1.5),
        ("sum over the last axis [8192, 8192]", lambda: x.view(8192, 8192).sum(1), 1),
    ]:
        t = ms(f)
        print(f"| {name} | {t:.3f} | {traffic * mb / t:.1f} |")
    print("| matmul | ms | TFLOP/s |\n|---|---|---|")
    for dt in (torch.float32, torch.bfloat16):
        for k in (4096, 8192):
            a, b = torch.randn(k, k, device="cuda", dtype=dt), torch.randn(k, k, device="cuda", dtype=dt)
            t = ms(lambda: a @ b, 5)
            print(f"| {dt} {k}^3 | {t:.3f} | {2 * k ** 3 / (t * 1e9):.1f} |")


if __name__ == "__main__":
    main()
