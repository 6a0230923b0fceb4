#!/usr/bin/env python3
"""Records MLX's gradients of composite functions into tests/refs/grads.ref,
replayed by tests/transforms_mlx_test.cpp (which holds the same functions
written with nuvec ops, keyed by the case name).

Usage: python3 tools/record_mlx_grads.py

Each case is one scalar function of a few inputs (random float32, plus
integer labels / indices where the function needs them):

    case <name> grad | hvp
    param argnums <the float inputs, differentiated>
    param nargs <number of function inputs>
    in ...            the function's inputs, then (hvp) one tangent per argnum
    out ...           the value, then one gradient per argnum,
                      then (hvp) one Hessian-vector product per argnum

The gradients come from mx.value_and_grad(f, argnums); the Hessian-vector
products from mx.jvp of mx.grad(f, argnums) over the argnum inputs (the
integer inputs held fixed).

Before writing, every case is checked twice so that the file records
mathematics and not an MLX bug: MLX's float32 results against its own
float64 results (the printed ratio is the worst |f32 - f64| over the
replayer's tolerance, which must stay well below 1), and the float64
gradients and Hessian-vector products against central differences.
"""
import math
import os
import sys

import numpy as np
import mlx.core as mx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import record_mlx_refs as R  # noqa: E402

# The replayer's tolerance (tests/transforms_mlx_test.cpp): per output,
# |got - want| <= RTOL * (|want| + max |want|).
RTOL = 1e-5

CASES = []


def case(hvp=False):
    """Registers make(rng) -> (f, inputs) under its own name (the case's)."""
    def deco(make):
        CASES.append((make.__name__, make, hvp))
        return make
    return deco


def U(rng, shape, lo=-2.0, hi=2.0):
    return R.mk(rng.uniform(lo, hi, size=shape), "float32")


def ints(rng, shape, hi):
    return mx.array(rng.integers(0, hi, size=shape).astype(np.int32))


def gelu(h):
    return 0.5 * h * (1 + mx.erf(h * (1 / math.sqrt(2))))


def mlp(x, w1, b1, w2, b2, t, act):
    out = act(x @ w1 + b1) @ w2 + b2
    return mx.mean(mx.square(out - t))


# ---------------------------------------------------------------------------
# the functions: make(rng) -> (f, inputs); an input is an mx array or an In
# (a stored layout, R.make_in)


@case(hvp=True)
def softmax_xent(rng):
    def f(logits, labels):
        picked = mx.take_along_axis(logits, labels[:, None], axis=-1).squeeze(-1)
        return mx.mean(mx.logsumexp(logits, axis=-1) - picked)
    return f, [U(rng, (8, 10), -3, 3), ints(rng, (8,), 10)]


@case(hvp=True)
def log_softmax(rng):
    def f(x, w):
        return mx.sum((x - mx.logsumexp(x, axis=-1, keepdims=True)) * w)
    return f, [U(rng, (4, 7)), U(rng, (4, 7))]


@case()
def softmax_axes(rng):
    def f(x, w):
        return mx.sum(mx.softmax(x, axis=-1) * w) + mx.sum(mx.square(mx.softmax(x, axis=0)))
    return f, [R.make_in(U(rng, (3, 6)), "t"), U(rng, (3, 6))]


@case(hvp=True)
def layer_norm(rng):
    def f(x, gamma, beta, w):
        mu = mx.mean(x, axis=-1, keepdims=True)
        var = mx.var(x, axis=-1, keepdims=True)
        y = (x - mu) * mx.rsqrt(var + 1e-5) * gamma + beta
        return mx.sum(y * w)
    return f, [U(rng, (4, 16)), U(rng, (16,), 0.5, 1.5), U(rng, (16,)), U(rng, (4, 16))]


@case(hvp=True)
def rms_norm(rng):
    def f(x, gamma, w):
        y = x * mx.rsqrt(mx.mean(mx.square(x), axis=-1, keepdims=True) + 1e-6) * gamma
        return mx.sum(y * w)
    return f, [U(rng, (3, 12)), U(rng, (12,), 0.5, 1.5), U(rng, (3, 12))]


@case(hvp=True)
def attention(rng):
    def f(q, k, v, w):
        s = (q @ mx.swapaxes(k, -1, -2)) * (1 / math.sqrt(8))
        causal = mx.arange(5)[:, None] >= mx.arange(5)[None, :]
        p = mx.softmax(mx.where(causal, s, -math.inf), axis=-1)
        return mx.sum((p @ v) * w)
    return f, [U(rng, (2, 5, 8)), U(rng, (2, 5, 8)), U(rng, (2, 5, 8)), U(rng, (2, 5, 8))]


def mlp_inputs(rng):
    return [U(rng, (6, 5)), U(rng, (5, 8), -1, 1), U(rng, (8,), -0.5, 0.5),
            U(rng, (8, 3), -1, 1), U(rng, (3,), -0.5, 0.5), U(rng, (6, 3))]


@case(hvp=True)
def mlp_relu(rng):
    return (lambda *a: mlp(*a, act=lambda h: mx.maximum(h, 0.0))), mlp_inputs(rng)


@case(hvp=True)
def mlp_gelu(rng):
    return (lambda *a: mlp(*a, act=gelu)), mlp_inputs(rng)


@case()
def logsumexp_axes(rng):
    def f(x, w):
        return (mx.sum(mx.square(mx.logsumexp(x, axis=(0, 2))))
                + mx.sum(mx.logsumexp(x, axis=1, keepdims=True) * w))
    return f, [U(rng, (3, 4, 5)), U(rng, (3, 1, 5))]


@case(hvp=True)
def var_std(rng):
    def f(x):
        return (mx.sum(mx.var(x, axis=1)) + mx.sum(mx.std(x, axis=(0, 2), ddof=1))
                + mx.std(x))
    return f, [U(rng, (4, 5, 3))]


@case()
def cumsum_loss(rng):
    def f(x, w):
        return (mx.sum(mx.square(mx.cumsum(x, axis=1)))
                + mx.sum(mx.cumsum(x, axis=0, reverse=True) * w)
                + mx.sum(mx.cumsum(x, axis=1, inclusive=False) * w))
    return f, [U(rng, (4, 6)), U(rng, (4, 6))]


@case()
def cumprod_loss(rng):
    def f(x, w):
        return (mx.sum(mx.cumprod(x, axis=1))
                + mx.sum(mx.cumprod(x, axis=0, reverse=True, inclusive=False) * w))
    return f, [U(rng, (3, 6), 0.5, 1.5), U(rng, (3, 6))]


@case()
def scan_minmax(rng):
    def f(x, w):
        return (mx.sum(mx.cummax(x, axis=1) * w)
                + mx.sum(mx.cummin(x, axis=0, reverse=True) * w))
    return f, [U(rng, (4, 6)), U(rng, (4, 6))]


@case()
def logcumsumexp_loss(rng):
    def f(x, w):
        return mx.sum(mx.logcumsumexp(x, axis=1) * w)
    return f, [U(rng, (3, 5)), U(rng, (3, 5))]


@case()
def sort_topk(rng):
    def f(x, w):
        top3 = mx.sort(x, axis=-1)[:, -3:]
        # topk's order is unspecified: only an order-free function of it
        return mx.sum(top3 * w) + mx.sum(mx.square(mx.topk(x, 2, axis=-1)))
    return f, [U(rng, (3, 7)), U(rng, (3, 3))]


@case()
def embedding(rng):
    def f(table, ids, w):
        return mx.sum(mx.tanh(mx.take(table, ids, axis=0)) * w)
    ids = mx.array(np.array([[1, 4, 1], [9, 0, 4], [4, 4, 2], [7, 1, 3]], dtype=np.int32))
    return f, [U(rng, (10, 6)), ids, U(rng, (4, 3, 6))]


@case()
def gather_rows(rng):
    def f(x, idx, idx2):
        rows = mx.take(x, idx, axis=0)
        cols = mx.take_along_axis(x, idx2, axis=1)
        return mx.sum(mx.square(rows)) + mx.sum(mx.exp(cols))
    return f, [U(rng, (6, 4)), ints(rng, (5,), 6), ints(rng, (6, 3), 4)]


@case()
def conv1d(rng):
    def f(x, w):
        return 0.1 * mx.sum(mx.square(mx.conv1d(x, w, stride=2, padding=1)))
    return f, [U(rng, (2, 9, 3)), U(rng, (4, 3, 3), -1, 1)]


@case()
def conv2d(rng):
    def f(x, w, t):
        return mx.sum(mx.tanh(mx.conv2d(x, w, stride=(2, 1), padding=1)) * t)
    return f, [U(rng, (1, 6, 6, 2)), U(rng, (3, 3, 3, 2), -1, 1), U(rng, (1, 3, 6, 3))]


@case()
def concat_split(rng):
    def f(a, b):
        c = mx.concatenate([a, b * 2.0], axis=1)
        p0, p1, p2 = mx.split(c, 3, axis=1)
        q0, q1, q2 = mx.split(c, [1, 4], axis=1)
        return (mx.sum(p0 * p1) + mx.sum(mx.square(p2)) + mx.sum(mx.sin(q1))
                + mx.sum(q0 * q2[:, :1]))
    return f, [U(rng, (3, 4)), U(rng, (3, 2))]


@case()
def huber(rng):
    def f(pred, target):
        d = pred - target
        ad = mx.abs(d)
        return mx.mean(mx.where(ad < 1.0, 0.5 * mx.square(d), ad - 0.5))
    return f, [U(rng, (5, 4)), U(rng, (5, 4))]


@case()
def bce_sigmoid(rng):
    def f(z, y):
        p = mx.sigmoid(z)
        return -mx.mean(y * mx.log(p) + (1 - y) * mx.log(1 - p))
    return f, [U(rng, (6,), -3, 3), U(rng, (6,), 0, 1)]


@case(hvp=True)
def softplus(rng):
    def f(x, w):
        return mx.sum(mx.logaddexp(x, 0.0) * w)
    return f, [U(rng, (5, 5), -4, 4), U(rng, (5, 5))]


@case(hvp=True)
def cosine_similarity(rng):
    def f(a, b):
        num = mx.sum(a * b, axis=-1)
        den = mx.sqrt(mx.sum(a * a, axis=-1)) * mx.sqrt(mx.sum(b * b, axis=-1))
        return mx.mean(num / mx.maximum(den, 1e-8))
    return f, [U(rng, (4, 8)), U(rng, (4, 8))]


@case()
def linalg_norm(rng):
    def f(x):
        L = mx.linalg
        return (L.norm(x) + mx.sum(L.norm(x, axis=-1)) + mx.sum(L.norm(x, ord=1, axis=0))
                + mx.sum(L.norm(x, ord=math.inf, axis=1)) + L.norm(x, ord=1))
    return f, [U(rng, (3, 4))]


@case(hvp=True)
def power_chain(rng):
    def f(x, y):
        return (mx.sum(mx.power(x, 3.0) * mx.power(y, 2.5)) + mx.sum(mx.power(x, y))
                + mx.sum(mx.sqrt(x) * mx.rsqrt(y)) + mx.sum(mx.reciprocal(x + y)))
    return f, [U(rng, (4,), 0.5, 2), U(rng, (4,), 0.5, 2)]


@case(hvp=True)
def trig_chain(rng):
    def f(x, y):
        return mx.sum(mx.arctan2(x, y) + mx.tanh(x) * mx.cosh(y) + mx.log1p(mx.exp(x))
                      + mx.expm1(y) * mx.sin(x * y) + mx.exp(-mx.square(x)))
    return f, [U(rng, (6,), -1.5, 1.5), U(rng, (6,), 0.3, 1.5)]


@case()
def strided_slices(rng):
    def f(x):
        a = x[::2, 1::3]
        b = x[::-1, ::-2][1:4, :3]
        return mx.sum(a * b) + mx.sum(mx.square(x.T[2:5, ::3]))
    return f, [U(rng, (6, 8))]


@case()
def broadcast_transpose(rng):
    def f(a, b):
        c = a * b
        e = mx.reshape(mx.transpose(c, (2, 0, 1)), (12, 5))
        return (mx.sum(mx.sin(e) * e[0:1, :])
                + mx.sum(mx.broadcast_to(b, (2, 5, 3)) * c[:2, :, :3]))
    return f, [U(rng, (3, 1, 4)), R.make_in(U(rng, (1,)), "b", (5, 1))]


@case()
def maximum_minimum(rng):
    def f(a, b, c):
        return (mx.sum(mx.maximum(a, b) * mx.minimum(b, c)) + mx.sum(mx.max(a, axis=1))
                + mx.sum(mx.min(c, axis=0)))
    return f, [U(rng, (4, 5)), U(rng, (4, 5)), U(rng, (4, 5))]


@case()
def reshape_chain(rng):
    def f(x, w):
        y = mx.reshape(x, (6, 4)) @ w
        z = mx.squeeze(mx.expand_dims(mx.flatten(y), 0), 0)
        return mx.sum(mx.tanh(z) * (mx.arange(36) / 36.0))
    return f, [U(rng, (2, 3, 4)), U(rng, (4, 6), -1, 1)]


@case()
def prod_mean(rng):
    def f(x):
        return (mx.sum(mx.prod(x, axis=1)) + mx.square(mx.sum(mx.mean(x, axis=0)))
                + mx.prod(x))
    return f, [U(rng, (3, 4), 0.5, 1.5)]


@case()
def where_clip(rng):
    def f(x, y):
        return (mx.sum(mx.where(x > 0, mx.square(x), mx.sin(y)))
                + mx.sum(mx.clip(y, -0.5, 0.5) * x))
    return f, [U(rng, (5, 5)), U(rng, (5, 5))]


@case()
def matmul_chain(rng):
    def f(a, b, c):
        return mx.sum(mx.tanh(a @ b @ c)) + mx.sum(mx.square(mx.swapaxes(a, 1, 2) @ a))
    return f, [R.make_in(U(rng, (2, 3, 4)), "t"), R.make_in(U(rng, (4, 5), -1, 1), "s"),
               U(rng, (5, 2), -1, 1)]


@case()
def einsum(rng):
    def f(a, b, c):
        return (mx.sum(mx.einsum("ij,jk->ik", a, b) * c) + mx.einsum("ij,ij->", c, c)
                + mx.sum(mx.square(mx.einsum("ij->j", a))))
    return f, [U(rng, (3, 4)), U(rng, (4, 5)), U(rng, (3, 5))]


@case()
def pad_loss(rng):
    def f(x, w):
        return mx.sum(mx.square(mx.pad(x, [(1, 1), (0, 2)]) * w))
    return f, [U(rng, (3, 5)), U(rng, (5, 7))]


# ---------------------------------------------------------------------------
# recording and checks


def float_argnums(values):
    return [i for i, v in enumerate(values) if v.dtype in (mx.float32, mx.float64)]


def compute(f, values, argnums, tangents):
    """[value, grads..., (hvps...)] of f at `values`."""
    value, grads = mx.value_and_grad(f, argnums=argnums)(*values)
    grads = list(grads) if isinstance(grads, (list, tuple)) else [grads]
    outs = [value] + grads
    if tangents:
        def grad_of_floats(*xs):
            full = list(values)
            for i, x in zip(argnums, xs):
                full[i] = x
            g = mx.grad(f, argnums=argnums)(*full)
            return list(g) if isinstance(g, (list, tuple)) else [g]
        _, hvps = mx.jvp(grad_of_floats, [values[i] for i in argnums], tangents)
        outs += list(hvps)
    return outs


def to64(values):
    return [v.astype(mx.float64) if v.dtype == mx.float32 else v for v in values]


def worst_ratio(outs32, outs64):
    """max over outputs of max |f32 - f64| / (RTOL (|f64| + max |f64|))."""
    worst = 0.0
    for a, b in zip(outs32, outs64):
        a, b = np.array(a, dtype=np.float64), np.array(b, dtype=np.float64)
        bound = RTOL * (np.abs(b) + np.abs(b).max())
        worst = max(worst, float(np.max(np.abs(a - b) / np.maximum(bound, 1e-300))))
    return worst


def check_finite_differences(name, f, values, argnums, hvp, wide):
    """Central differences along random directions, in float64 (wide) or,
    where MLX has no float64 kernel (convolutions), in float32. MLX's
    float64 exp, sin, ... on the CPU are only float32-accurate (about 1e-7
    relative), so the step is large and the bound loose: this catches a
    wrong rule (errors of order one), not roundings."""
    rng = R.rng_for("grads", "fd", name)
    v = to64(values) if wide else values
    h, rel = (1e-3, 3e-4) if wide else (1e-2, 3e-3)
    dirs = [mx.array(rng.uniform(-1, 1, size=v[i].shape)).astype(v[i].dtype) for i in argnums]

    def shifted(h):
        s = list(v)
        for i, d in zip(argnums, dirs):
            s[i] = v[i] + h * d
        return s
    outs = compute(f, v, argnums, dirs if hvp else None)
    grads = outs[1:1 + len(argnums)]
    fd = (f(*shifted(h)).item() - f(*shifted(-h)).item()) / (2 * h)
    dot = sum(mx.sum(g * d).item() for g, d in zip(grads, dirs))
    bound = rel * (1 + abs(dot) + abs(outs[0].item()))
    assert abs(fd - dot) <= bound, (name, "grad", fd, dot)
    if hvp:
        gp = compute(f, shifted(h), argnums, None)[1:]
        gm = compute(f, shifted(-h), argnums, None)[1:]
        for k, (a, b) in enumerate(zip(gp, gm)):
            fdk = np.array((a - b) / (2 * h))
            hv = np.array(outs[1 + len(argnums) + k])
            err = np.max(np.abs(fdk - hv))
            bound = rel * (1 + np.max(np.abs(hv)) + np.max(np.abs(np.array(a))))
            assert err <= bound, (name, "hvp", k, err)


def record(f, name, make, hvp):
    rng = R.rng_for("grads", name)
    fn, ins = make(rng)
    ins = [i if isinstance(i, R.In) else R.make_in(i) for i in ins]
    values = [i.value for i in ins]
    argnums = float_argnums(values)
    tangents = [U(rng, values[i].shape) for i in argnums] if hvp else None
    outs = compute(fn, values, argnums, tangents)
    mx.eval(outs)
    try:
        outs64 = compute(fn, to64(values), argnums, to64(tangents) if hvp else None)
        worst = worst_ratio(outs, outs64)
        # room left for nuvec's own roundings, which add to MLX's
        assert worst < 0.25, (name, worst)
        ratio = "%.3f" % worst
    except (ValueError, RuntimeError) as e:
        ratio = "- (%s)" % R.err_text(e)[:50]
    try:
        check_finite_differences(name, fn, values, argnums, hvp, True)
        fd = "ok"
    except (ValueError, RuntimeError):
        check_finite_differences(name, fn, values, argnums, hvp, False)
        fd = "ok (float32)"
    print("  %-20s %-4s f32 vs f64 / tolerance %s, finite differences %s"
          % (name, "hvp" if hvp else "", ratio, fd))
    f.case(name, "hvp" if hvp else "grad", ins + [R.make_in(t) for t in tangents or []],
           lambda v, p: outs, {"argnums": argnums, "nargs": len(values)})


def main():
    mx.set_default_device(mx.cpu)
    f = R.RefFile("grads.ref", "gradients and Hessian-vector products of composite functions "
                  "(tools/record_mlx_grads.py)")
    for name, make, hvp in CASES:
        record(f, name, make, hvp)
    assert f.nerr == 0 and f.skipped == 0
    size = f.write()
    assert size < 200_000, size


if __name__ == "__main__":
    main()
