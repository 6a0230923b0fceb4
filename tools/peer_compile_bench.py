#!/usr/bin/env python3
"""compile's standard set (bench/compile_bench.cpp) in NumPy and PyTorch.

Runs each function at 2^24 float32 and prints the median time in ms, so
docs/performance.md can set nuvec's figures beside them. NumPy runs on one
thread (as it does); PyTorch eager on the same number of threads as nuvec
(NUVEC_NUM_THREADS or all cores). Either library is skipped when it is not
installed. Never needed by the build or the tests.

    python3 tools/peer_compile_bench.py
"""
import math
import os
import time

N = 1 << 24
B1, B2, LR, EPS = 0.9, 0.999, 1e-3, 1e-8
C = math.sqrt(2 / math.pi)


def median_ms(f, reps=7):
    f()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        f()
        times.append((time.perf_counter() - t) * 1e3)
    return sorted(times)[len(times) // 2]


def cases(lib, erf, tanh, exp, sin, cos, sqrt, absf, maximum):
    def gelu_erf(x):
        return x * (erf(x * 0.70710678) + 1.0) * 0.5

    def gelu_tanh(x):
        return x * (tanh((x + x * x * x * 0.044715) * C) + 1.0) * 0.5

    def adam(p, g, m, v):
        m = m * B1 + g * (1 - B1)
        v = v * B2 + g * g * (1 - B2)
        return p - m * LR / (sqrt(v) + EPS), m, v

    return [
        ("x*x+1", 1, lambda x: x * x + 1.0),
        ("GELU (erf)", 1, gelu_erf),
        ("GELU (tanh)", 1, gelu_tanh),
        ("SwiGLU silu(g) * u", 2, lambda g, u: g * (1 / (1 + exp(-g))) * u),
        ("Adam update (4 in, 3 out)", 4, adam),
        ("exp(sin(x)*2+cos(x))/(1+abs(x))", 1, lambda x: exp(sin(x) * 2 + cos(x)) / (absf(x) + 1)),
        ("scale-bias-relu [4096,4096]", 3, lambda x, s, b: maximum(x * s + b, 0)),
    ]


def run_numpy():
    import numpy as np
    from math import erf as _erf

    try:
        from scipy.special import erf as erf_v
    except ImportError:
        erf_v = np.vectorize(_erf, otypes=[np.float32])
    rng = np.random.default_rng(0)
    print(f"numpy {np.__version__} (one thread)")
    for name, n_in, f in cases(np, erf_v, np.tanh, np.exp, np.sin, np.cos, np.sqrt, np.abs, np.maximum):
        if name.startswith("scale-bias"):
            args = [rng.random((4096, 4096), dtype=np.float32)] + [rng.random(4096, dtype=np.float32)] * 2
        else:
            args = [rng.random(N, dtype=np.float32) + 0.1 for _ in range(n_in)]
        print(f"  {name:34s} {median_ms(lambda: f(*args), 3 if 'erf' in name else 7):9.2f} ms")


def run_torch():
    import torch

    threads = int(os.environ.get("NUVEC_NUM_THREADS", os.cpu_count()))
    torch.set_num_threads(threads)
    print(f"torch {torch.__version__} eager, {threads} threads")
    for name, n_in, f in cases(torch, torch.erf, torch.tanh, torch.exp, torch.sin, torch.cos, torch.sqrt,
                               torch.abs, lambda a, b: torch.clamp_min(a, b)):
        if name.startswith("scale-bias"):
            args = [torch.rand(4096, 4096), torch.rand(4096), torch.rand(4096)]
        else:
            args = [torch.rand(N) + 0.1 for _ in range(n_in)]
        with torch.no_grad():
            print(f"  {name:34s} {median_ms(lambda: f(*args)):9.2f} ms")


if __name__ == "__main__":
    for runner in (run_numpy, run_torch):
        try:
            runner()
        except ImportError as e:
            print(f"skipped: {e}")
