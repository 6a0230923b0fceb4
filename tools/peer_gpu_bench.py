#!/usr/bin/env python3
"""PyTorch's and JAX's figures for bench/gpu_bench.cpp and
bench/gpu_compile_bench.cpp, on the same GPU.

Run beside those benchmarks by scripts/gpu.sh when torch (and jax) are
installed there. Never needed by the build or the tests. `--compile` adds
the compile standard set (torch eager, torch.compile, jax.jit at 2^26
float32 and bfloat16, the host time of a call on 16 elements); `--step`
the optimizer step of `gpu_compile_bench step` (Adam over 32 parameters).
`--only PREFIX` limits `--compile` to the functions whose names start so;
`--accuracy` measures the float32 sin/cos chain's error against float64
(torch eager and torch.compile) and prints the math torch.compile emits.
`--matmul` prints torch.matmul's TFLOP/s for bench/gpu_matmul_bench.cpp's
rows (the same products, layouts and per-call method: 60 less 20 calls
back to back, median of 5).
`--rounds K` measures each back-to-back figure K times (printed as a
range), `--no-jax` leaves jax.jit out.
"""
import sys
import time

import torch


def ms(f, reps=21, calls=1):
    """Median CUDA-event time per call of `calls` calls issued back to back."""
    f()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(reps):
        start.record()
        for _ in range(calls):
            f()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) / calls)
    return sorted(times)[len(times) // 2]


def ms_b2b(f):
    """Per call, 20 calls issued back to back between two events."""
    return ms(f, reps=11, calls=20)


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


K_RSQRT2, K_C = 0.70710678118654752, 0.7978845608028654
B1, B2, LR, EPS = 0.9, 0.999, 1e-3, 1e-8


def standard_set(ops):
    """The functions of bench/standard_set.h, written with `ops` (torch or jax.numpy)."""
    def adam(p, g, m, v):
        m = m * B1 + g * (1 - B1)
        v = v * B2 + g * g * (1 - B2)
        return p - m * LR / (ops.sqrt(v) + EPS), m, v
    erf = ops.special.erf if hasattr(ops, "special") else None
    return [
        ("x*x+1", 1, lambda x: x * x + 1),
        ("GELU (erf)", 1, lambda x: x * (erf(x * K_RSQRT2) + 1) * 0.5),
        ("GELU (tanh)", 1, lambda x: x * (ops.tanh((x + x * x * x * 0.044715) * K_C) + 1) * 0.5),
        ("SwiGLU silu(g) * u", 2, lambda g, u: g * (1 / (1 + ops.exp(-g))) * u),
        ("Adam update (4 in, 3 out)", 4, adam),
        ("exp(sin(x)*2+cos(x))/(1+abs(x))", 1, lambda x: ops.exp(ops.sin(x) * 2 + ops.cos(x)) / (ops.abs(x) + 1)),
        ("scale-bias-relu [8192,8192]", 3, lambda x, s, b: ops.maximum(x * s + b, 0 * b)),
    ]


def inputs_for(name, k, dtype, make):
    n = 1 << 26
    if name.startswith("scale-bias"):
        return [make((8192, 8192), dtype)] + [make((8192,), dtype) for _ in range(k - 1)]
    return [make((n,), dtype) for _ in range(k)]


def traffic(args, outs):
    outs = outs if isinstance(outs, tuple) else (outs,)
    return sum(a.nbytes for a in list(args) + list(outs))


def rounds():
    """How many times each back-to-back figure is measured (--rounds K)."""
    return int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 1


def only():
    """The prefix given with --only ("" for every function)."""
    return sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else ""


def ulps(got, ref):
    """|got - ref| in units of the float32 ulp at ref (float64 tensors)."""
    e = torch.floor(torch.log2(ref.abs())).clamp(min=-126)
    return ((got.double() - ref).abs() / torch.pow(2.0, e - 23)).max().item()


def torch_accuracy():
    """The float32 sin/cos chain on 2^26 arguments uniform in [0.1, 2] (as
    gpu_compile_bench): the largest error of torch eager and torch.compile
    against float64, and the Triton lines of torch.compile's kernel that do
    the math."""
    from torch._inductor.utils import run_and_get_code
    name = "exp(sin(x)*2+cos(x))/(1+abs(x))"
    f = dict((n, g) for n, _, g in standard_set(torch))[name]
    x = torch.rand(1 << 26, device="cuda") * 1.9 + 0.1
    ref = f(x.double())
    print(f"\ntorch {torch.__version__}: {name}, float32 against float64, max ULP")
    print(f"  eager: {ulps(f(x), ref):.3f}")
    cf = torch.compile(f)
    out, codes = run_and_get_code(cf, x)
    print(f"  torch.compile: {ulps(out, ref):.3f}")
    for code in codes:
        for line in code.splitlines():
            if any(w in line for w in ("sin", "cos", "exp", "/ ", "div", "abs")) and "tmp" in line:
                print("   ", line.strip())


def torch_set():
    import torch.special  # noqa: F401
    for dtype in (torch.float32, torch.bfloat16):
        x = torch.rand(1 << 26, device="cuda", dtype=dtype)
        copy = ms(lambda: x.clone())
        bw = 2 * x.numel() * x.element_size() / (copy * 1e6)
        print(f"\ntorch {dtype}: copy {copy:.3f} ms = {bw:.0f} GB/s; back to back {ms_b2b(lambda: x.clone()):.3f} ms")
        print("| function | eager ms | torch.compile ms | GB/s | % copy | back to back ms | cold compile s |\n"
              "|---|---|---|---|---|---|---|")
        for name, k, f in standard_set(torch):
            if not name.startswith(only()):
                continue
            args = inputs_for(name, k, dtype, lambda s, d: torch.rand(s, device="cuda", dtype=d) + 0.1)
            eager = ms(lambda: f(*args), 11)
            t0 = time.time()
            cf = torch.compile(f)
            cf(*args)
            torch.cuda.synchronize()
            cold = time.time() - t0
            tc = ms(lambda: cf(*args))
            b2b = sorted(ms_b2b(lambda: cf(*args)) for _ in range(rounds()))
            b2b = f"{b2b[0]:.3f}" + (f"-{b2b[-1]:.3f}" if len(b2b) > 1 else "")
            gbs = traffic(args, f(*args)) / (tc * 1e6)
            print(f"| {name} | {eager:.3f} | {tc:.3f} | {gbs:.0f} | {100 * gbs / bw:.1f}% | {b2b} | {cold:.1f} |")
    if only():
        return
    x = torch.rand(16, device="cuda")
    print("\ntorch host time per call on 16 elements (us, synchronizing each call):")
    for name, f in [("x*x+1 eager", lambda a: a * a + 1), ("x*x+1 torch.compile", torch.compile(lambda a: a * a + 1))]:
        f(x)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(2000):
            f(x)
            torch.cuda.synchronize()
        print(f"  {name}: {(time.perf_counter() - t0) / 2000 * 1e6:.1f}")


def jax_set():
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        print("\njax not installed")
        return
    from jax.scipy.special import erf as jerf
    jnp.special = type("S", (), {"erf": staticmethod(jerf)})

    def jms(f, args, reps=21):
        jax.block_until_ready(f(*args))
        times = []
        for _ in range(reps):
            t0 = time.perf_counter()
            jax.block_until_ready(f(*args))
            times.append((time.perf_counter() - t0) * 1e3)
        return sorted(times)[len(times) // 2]

    key = jax.random.PRNGKey(0)
    for dtype in (jnp.float32, jnp.bfloat16):
        print(f"\njax.jit {jnp.dtype(dtype).name} (wall time per call, block_until_ready)")
        print("| function | jit ms | GB/s |\n|---|---|---|")
        for name, k, f in standard_set(jnp):
            if not name.startswith(only()):
                continue
            args = inputs_for(name, k, dtype, lambda s, d: jax.random.uniform(key, s, dtype=d) + 0.1)
            jf = jax.jit(f)
            tc = jms(jf, args)
            gbs = traffic(args, jf(*args)) / (tc * 1e6)
            print(f"| {name} | {tc:.3f} | {gbs:.0f} |")


def torch_step():
    """Adam over 32 parameters (16 of [256, 256], 16 of [256]), float32: host
    time per step, synchronizing each step and issuing steps back to back."""
    adam = dict((name, f) for name, _, f in standard_set(torch))["Adam update (4 in, 3 out)"]
    k = 32

    def step(p, g, m, v):
        out = [adam(*a) for a in zip(p, g, m, v)]
        return [o[0] for o in out], [o[1] for o in out], [o[2] for o in out]

    def make(j):
        return torch.rand((256, 256) if j % 2 == 0 else (256,), device="cuda") * 1.9 + 0.1
    p, m, v, g = ([make(j) for j in range(k)] for _ in range(4))
    print(f"\ntorch {torch.__version__}: Adam over {k} parameters, float32, host time per step (us)")
    print("| step | sync each | back to back |\n|---|---|---|")
    for name, f in [("eager", step), ("torch.compile", torch.compile(step))]:
        def run(each, steps=200):
            s = (p, m, v)
            for _ in range(steps):
                s = f(s[0], g, s[1], s[2])
                if each:
                    torch.cuda.synchronize()
            torch.cuda.synchronize()
        run(True, 5)
        times = {}
        for each in (True, False):
            ts = []
            for _ in range(5):
                t0 = time.perf_counter()
                run(each)
                ts.append((time.perf_counter() - t0) / 200 * 1e6)
            times[each] = sorted(ts)[2]
        print(f"| {name} | {times[True]:.1f} | {times[False]:.1f} |")

    # The same update in place, captured once in a CUDA graph and replayed
    # (how a PyTorch user removes a small step's launch overhead by hand).
    def inplace():
        for pk, gk, mk, vk in zip(p, g, m, v):
            mk.mul_(B1).add_(gk * (1 - B1))
            vk.mul_(B2).add_(gk * gk * (1 - B2))
            pk.sub_(mk * LR / (torch.sqrt(vk) + EPS))
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        inplace()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        inplace()
    times = {}
    for each in (True, False):
        ts = []
        for _ in range(5):
            t0 = time.perf_counter()
            for _ in range(200):
                graph.replay()
                if each:
                    torch.cuda.synchronize()
            torch.cuda.synchronize()
            ts.append((time.perf_counter() - t0) / 200 * 1e6)
        times[each] = sorted(ts)[2]
    print(f"| eager in place, one CUDA graph | {times[True]:.1f} | {times[False]:.1f} |")


MATMUL_PRODUCTS = [  # bench/gpu_matmul_bench.cpp's kProducts: name, m, k, n, ta, tb
    ("square 1024", 1024, 1024, 1024, False, False),
    ("square 2048", 2048, 2048, 2048, False, False),
    ("square 4096", 4096, 4096, 4096, False, False),
    ("square 8192", 8192, 8192, 8192, False, False),
    ("gpt qkv x W (16384x384x1152)", 16384, 384, 1152, False, False),
    ("gpt proj (16384x384x384)", 16384, 384, 384, False, False),
    ("gpt up (16384x384x1536)", 16384, 384, 1536, False, False),
    ("gpt down (16384x1536x384)", 16384, 1536, 384, False, False),
    ("gpt head (16384x384x96)", 16384, 384, 96, False, False),
    ("gpt dX = dY W^T (16384x1536x384)", 16384, 1536, 384, False, True),
    ("gpt dW = X^T dY (384x16384x1536)", 384, 16384, 1536, True, False),
    ("gpt dW = X^T dY (1536x16384x384)", 1536, 16384, 384, True, False),
]


def torch_matmul():
    torch.backends.cuda.matmul.allow_tf32 = False
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}: matmul TFLOP/s per call")
    print("| product | dtype | torch |\n|---|---|---|")

    def per_call(f):
        def run(calls):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(calls):
                f()
            torch.cuda.synchronize()
            return (time.perf_counter() - t0) * 1e3
        run(20)
        return sorted((run(60) - run(20)) / 40 for _ in range(5))[2]

    for dt in (torch.bfloat16, torch.float16, torch.float32):
        for name, m, k, n, ta, tb in MATMUL_PRODUCTS:
            if dt == torch.float32 and m * k * n > 4096 ** 3:
                continue
            a = torch.randn((k, m) if ta else (m, k), device="cuda", dtype=dt)
            b = torch.randn((n, k) if tb else (k, n), device="cuda", dtype=dt)
            a = a.t() if ta else a
            b = b.t() if tb else b
            t = per_call(lambda: a @ b)
            print(f"| {name} | {str(dt).replace('torch.', '')} | {2 * m * k * n / (t * 1e9):.1f} |")


if __name__ == "__main__":
    if "--matmul" in sys.argv:
        torch_matmul()
        sys.exit(0)
    if "--step" in sys.argv:
        torch_step()
        sys.exit(0)
    if "--accuracy" in sys.argv:
        torch_accuracy()
        sys.exit(0)
    if "--compile" in sys.argv:
        torch_set()
        if "--no-jax" not in sys.argv:
            jax_set()
    else:
        main()
