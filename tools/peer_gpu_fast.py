#!/usr/bin/env python3
"""Peers' figures for bench/gpu_fast_bench.cpp on the same GPU: PyTorch
eager, torch.compile, JAX (jax.jit) and MLX's CUDA backend (when the `mlx`
and `mlx-cuda` wheels are installed), on the same cases and shapes, as
microseconds per call (20 calls back to back between two events, median of
7; MLX and JAX: wall time over 20 calls and one wait). Run by
scripts/gpu.sh beside the benchmark. Never needed by the build or the tests.
`--no-jax`, `--no-mlx`, `--no-compile` leave a peer out."""
import sys
import time

import torch
import torch.nn.functional as F


def us_torch(f, reps=7, calls=20):
    f()
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    t = []
    for _ in range(reps):
        s.record()
        for _ in range(calls):
            f()
        e.record()
        torch.cuda.synchronize()
        t.append(s.elapsed_time(e) / calls * 1e3)
    return sorted(t)[len(t) // 2]


def us_wall(f, sync, reps=7, calls=20):
    sync(f())
    t = []
    for _ in range(reps):
        st = time.perf_counter()
        outs = [f() for _ in range(calls)]
        sync(outs)
        t.append((time.perf_counter() - st) / calls * 1e6)
    return sorted(t)[len(t) // 2]


def cases_torch(dev="cuda"):
    bf = torch.bfloat16
    g = torch.Generator(device=dev).manual_seed(0)
    r = lambda *s: torch.randn(*s, device=dev, generator=g).to(bf)
    x8 = r(8192, 8192)
    x16, w = r(16384, 4096), r(4096)
    res = r(16384, 4096)
    logits = r(8192, 32000)
    tgt = torch.randint(0, 32000, (8192,), device=dev)
    q, k, v = r(8, 16, 2048, 128), r(8, 16, 2048, 128), r(8, 16, 2048, 128)
    dq, dk, dv = r(32, 32, 1, 128), r(32, 32, 4096, 128), r(32, 32, 4096, 128)

    def add_rms(a, b, wt):
        h = a + b
        return h, F.rms_norm(h, (4096,), wt, 1e-5)

    def ce_fb(lg):
        lg = lg.detach().requires_grad_(True)
        F.cross_entropy(lg.float(), tgt).backward()
        return lg.grad

    def sdpa_fb(a, b, c):
        a, b, c = (t.detach().requires_grad_(True) for t in (a, b, c))
        F.scaled_dot_product_attention(a, b, c, is_causal=True).float().sum().backward()
        return a.grad

    return {
        "softmax bf16 [8192, 8192]": (lambda: torch.softmax(x8, -1), 2 * x8.nbytes),
        "rms_norm bf16 [16384, 4096]": (lambda: F.rms_norm(x16, (4096,), w, 1e-5), 2 * x16.nbytes),
        "layer_norm bf16 [16384, 4096]": (lambda: F.layer_norm(x16, (4096,), w, w, 1e-5), 2 * x16.nbytes),
        "add_rms_norm bf16 [16384, 4096]": (lambda: add_rms(x16, res, w), 4 * x16.nbytes),
        "cross_entropy fwd bf16 [8192, 32000]":
            (lambda: F.cross_entropy(logits.float(), tgt, reduction="none"), logits.nbytes),
        "cross_entropy fwd+bwd bf16 [8192, 32000]": (lambda: ce_fb(logits), 2 * logits.nbytes),
        "causal sdpa fwd bf16 B8 H16 L2048 D128 (TFLOP/s)":
            (lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True), None),
        "causal sdpa fwd+bwd (TFLOP/s)": (lambda: sdpa_fb(q, k, v), None),
        "decode sdpa bf16 B32 H32 Lk4096 D128 (TB/s)":
            (lambda: F.scaled_dot_product_attention(dq, dk, dv), 2 * dk.nbytes),
    }


def report(name, us, nbytes):
    flops = 2.0 * 8 * 16 * 2048 * 2048 * 128
    if "fwd+bwd (TFLOP" in name:
        fig = f"{3.5 * flops / (us * 1e6):.1f} TFLOP/s"
    elif "TFLOP" in name:
        fig = f"{flops / (us * 1e6):.1f} TFLOP/s"
    elif "TB/s" in name:
        fig = f"{nbytes / (us * 1e6):.2f} TB/s"
    else:
        fig = f"{nbytes / (us * 1e3):.1f} GB/s"
    print(f"| {name} | {us:.1f} | {fig} |")


def torch_rows(compiled):
    print(f"\n{'torch.compile' if compiled else 'torch eager'} {torch.__version__}\n")
    print("| case | us | figure |\n|---|---|---|")
    for name, (f, nbytes) in cases_torch().items():
        if compiled and "bwd" not in name:
            f = torch.compile(f)
        try:
            report(name, us_torch(f), nbytes)
        except Exception as e:  # a peer that cannot run a case says so
            print(f"| {name} | - | {type(e).__name__} |")


def mlx_rows():
    import mlx.core as mx
    print(f"\nMLX {mx.__version__} (CUDA)\n")
    print("| case | us | figure |\n|---|---|---|")
    k = mx.random.key(0)
    r = lambda *s: mx.random.normal(s, key=k).astype(mx.bfloat16)
    x8, x16, w, res = r(8192, 8192), r(16384, 4096), r(4096), r(16384, 4096)
    logits = r(8192, 32000)
    tgt = mx.random.randint(0, 32000, (8192,), key=k)
    q, kk, v = r(8, 16, 2048, 128), r(8, 16, 2048, 128), r(8, 16, 2048, 128)
    dq, dk, dv = r(32, 32, 1, 128), r(32, 32, 4096, 128), r(32, 32, 4096, 128)
    mx.eval(x8, x16, w, res, logits, tgt, q, kk, v, dq, dk, dv)
    sdpa = mx.fast.scaled_dot_product_attention
    ce_grad = mx.grad(lambda l: mx.fast.cross_entropy(l, tgt).mean())
    sdpa_grad = mx.grad(lambda a, b, c: sdpa(a, b, c, scale=0.088, mask="causal").astype(mx.float32).sum(),
                        argnums=(0, 1, 2))
    cases = {
        "softmax bf16 [8192, 8192]": (lambda: mx.softmax(x8, -1), 2 * x8.nbytes),
        "rms_norm bf16 [16384, 4096]": (lambda: mx.fast.rms_norm(x16, w, 1e-5), 2 * x16.nbytes),
        "layer_norm bf16 [16384, 4096]": (lambda: mx.fast.layer_norm(x16, w, w, 1e-5), 2 * x16.nbytes),
        "cross_entropy fwd bf16 [8192, 32000]": (lambda: mx.fast.cross_entropy(logits, tgt), logits.nbytes),
        "cross_entropy fwd+bwd bf16 [8192, 32000]": (lambda: ce_grad(logits), 2 * logits.nbytes),
        "causal sdpa fwd bf16 B8 H16 L2048 D128 (TFLOP/s)":
            (lambda: sdpa(q, kk, v, scale=0.088, mask="causal"), None),
        "causal sdpa fwd+bwd (TFLOP/s)": (lambda: sdpa_grad(q, kk, v), None),
        "decode sdpa bf16 B32 H32 Lk4096 D128 (TB/s)": (lambda: sdpa(dq, dk, dv, scale=0.088), 2 * dk.nbytes),
    }
    for name, (f, nbytes) in cases.items():
        try:
            report(name, us_wall(f, mx.eval), nbytes)
        except Exception as e:
            print(f"| {name} | - | {type(e).__name__} |")


def jax_rows():
    import jax
    import jax.numpy as jnp
    print(f"\nJAX {jax.__version__} (jax.jit)\n")
    print("| case | us | figure |\n|---|---|---|")
    key = jax.random.PRNGKey(0)
    r = lambda *s: jax.random.normal(key, s).astype(jnp.bfloat16)
    x8, x16, w = r(8192, 8192), r(16384, 4096), r(4096)
    logits = r(8192, 32000)
    tgt = jax.random.randint(key, (8192,), 0, 32000)

    def rms(a, wt):
        af = a.astype(jnp.float32)
        return (af * jax.lax.rsqrt(jnp.mean(af * af, -1, keepdims=True) + 1e-5)).astype(a.dtype) * wt

    def ce(l):
        lf = l.astype(jnp.float32)
        return jax.nn.logsumexp(lf, -1) - jnp.take_along_axis(lf, tgt[:, None], -1)[:, 0]

    cases = {
        "softmax bf16 [8192, 8192]": (jax.jit(lambda a: jax.nn.softmax(a, -1)), (x8,), 2 * x8.nbytes),
        "rms_norm bf16 [16384, 4096]": (jax.jit(rms), (x16, w), 2 * x16.nbytes),
        "cross_entropy fwd bf16 [8192, 32000]": (jax.jit(ce), (logits,), logits.nbytes),
        "cross_entropy fwd+bwd bf16 [8192, 32000]":
            (jax.jit(jax.grad(lambda l: ce(l).mean())), (logits,), 2 * logits.nbytes),
    }
    for name, (f, args, nbytes) in cases.items():
        report(name, us_wall(lambda: f(*args), jax.block_until_ready), nbytes)


def main():
    args = sys.argv[1:]
    torch_rows(False)
    if "--no-compile" not in args:
        torch_rows(True)
    if "--no-jax" not in args:
        try:
            jax_rows()
        except Exception as e:
            print(f"\nJAX: {type(e).__name__}: {e}")
    if "--no-mlx" not in args:
        try:
            mlx_rows()
        except Exception as e:
            print(f"\nMLX: {type(e).__name__}: {e}")


if __name__ == "__main__":
    main()
