#!/usr/bin/env python3
"""Records MLX's linear algebra (mx.linalg, on the CPU stream) into
tests/refs/linalg.ref, replayed by tests/linalg_test.cpp.

norm cases carry `param ord` (none, a number, inf, -inf, fro, nuc), `param
axes` (none or a list) and `param keepdims`. Decompositions use random
well-conditioned float32 matrices (plus float64 and batched / transposed
inputs); results that are not unique (signs of Q, U, V and eigenvectors)
are checked by invariants on the C++ side.
"""
import math
import os
import sys

import numpy as np
import mlx.core as mx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import record_mlx_refs as R  # noqa: E402

C = mx.cpu


def well_conditioned(rng, shape, dtype="float32"):
    """Random matrices with a dominant diagonal (square trailing axes) or plain."""
    v = rng.uniform(-1, 1, size=shape)
    m, n = shape[-2], shape[-1]
    if m == n:
        v = v + n * np.eye(n)
    return R.mk(v, dtype)


def spd(rng, shape, dtype="float32"):
    v = rng.uniform(-1, 1, size=shape)
    n = shape[-1]
    v = v @ np.swapaxes(v, -1, -2) + n * np.eye(n)
    return R.mk(v, dtype)


def ord_text(o):
    if o is None:
        return "none"
    if isinstance(o, str):
        return o
    if math.isinf(o):
        return "inf" if o > 0 else "-inf"
    return repr(float(o))


def gen_norm(f):
    rng = R.rng_for("linalg", "norm")
    n = 0
    vec_ords = [None, 0, 1, 2, math.inf, -math.inf, 3, 0.5, -1]
    mat_ords = [None, "fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf]
    for dtype in ["float32", "float64", "float16", "int32"]:
        x2 = R.mk(rng.uniform(-3, 3, size=(3, 4)), dtype) if dtype != "int32" else \
            R.mk(rng.integers(-5, 6, size=(3, 4)), dtype)
        x3 = R.mk(rng.uniform(-3, 3, size=(2, 3, 4)), dtype) if dtype != "int32" else \
            R.mk(rng.integers(-5, 6, size=(2, 3, 4)), dtype)
        cases = []
        for o in vec_ords:
            for axes in ([1], [-1], [0]):
                cases.append((x3, o, axes))
        for o in mat_ords:
            for axes in ([0, 1], [1, 0], [-1, -3], [2, 1]):
                cases.append((x3, o, axes))
            cases.append((x2, o, None))
        cases += [(x3, None, None), (x2[0], 2, None), (x2[0], math.inf, None)]
        for x, o, axes in cases:
            if dtype == "float16" and isinstance(o, (int, float)) and abs(o) == 2 and axes and len(axes) == 2:
                continue  # svd of float16: an error in MLX, covered once below
            kd = n % 2 == 1
            view = "t" if n % 3 == 1 and x.ndim >= 2 else "c"

            def fn(v, p, o=o, axes=axes, kd=kd):
                return mx.linalg.norm(v[0], ord=o, axis=axes, keepdims=kd, stream=C)
            f.case("norm_%d" % n, "norm", [R.make_in(x, view)], fn,
                   {"ord": ord_text(o), "axes": "none" if axes is None else axes,
                    "keepdims": kd})
            n += 1
    # errors: 3 axes, bad matrix ord, string ord on a vector, 0-d with ord, svd of ints
    x3 = mx.ones((2, 3, 4))
    errs = [(x3, None, [0, 1, 2]), (x3, 3, [0, 1]), (x3, "abc", [0, 1]), (x3, "nuc", [1]),
            (x3, 1, None), (mx.array(2.0), 1, None), (mx.ones((3, 3), dtype=mx.int32), 2, None),
            (x3, 1, [5])]
    for x, o, axes in errs:
        f.case("norm_err_%d" % n, "norm", [x],
               lambda v, p, o=o, axes=axes: mx.linalg.norm(v[0], ord=o, axis=axes, stream=C),
               {"ord": ord_text(o), "axes": "none" if axes is None else axes, "keepdims": False})
        n += 1


def gen_decomp(f):
    rng = R.rng_for("linalg", "decomp")
    L = mx.linalg
    ops = {
        "inv": (lambda v: L.inv(v[0], stream=C), "sq"),
        "cholesky": (lambda v: L.cholesky(v[0], stream=C), "spd"),
        "cholesky_upper": (lambda v: L.cholesky(v[0], upper=True, stream=C), "spd"),
        "qr": (lambda v: list(L.qr(v[0], stream=C)), "any"),
        "svd": (lambda v: list(L.svd(v[0], stream=C)), "any"),
        "svdvals": (lambda v: L.svd(v[0], compute_uv=False, stream=C), "any"),
        "eigh": (lambda v: list(L.eigh(v[0], stream=C)), "spd"),
        "eigh_upper": (lambda v: list(L.eigh(v[0], UPLO="U", stream=C)), "spd"),
        "eigvalsh": (lambda v: L.eigvalsh(v[0], stream=C), "spd"),
        "pinv": (lambda v: L.pinv(v[0], stream=C), "any"),
        "cholesky_inv": (lambda v: L.cholesky_inv(L.cholesky(v[0], stream=C), stream=C), "spd"),
    }
    n = 0
    for name, (fn, kind) in ops.items():
        shapes = [(4, 4), (1, 1), (2, 3, 3), (6, 6)] if kind != "any" else \
            [(4, 4), (5, 3), (3, 5), (2, 4, 3), (1, 1)]
        for dtype in ("float32", "float64"):
            for shape in shapes:
                if dtype == "float64" and shape not in ((4, 4), (5, 3)):
                    continue
                x = spd(rng, shape, dtype) if kind == "spd" else well_conditioned(rng, shape, dtype)
                for view in ("c", "t"):
                    f.case("%s_%s_%d_%s" % (name, dtype, n, view), name, [R.make_in(x, view)],
                           lambda v, p, fn=fn: fn(v))
                    n += 1
    # solve: vector and matrix right-hand sides, batched a, transposed a
    for dtype in ("float32", "float64"):
        for sa, sb in [((4, 4), (4,)), ((4, 4), (4, 2)), ((3, 3), (3, 5)), ((2, 3, 3), (2, 3, 2)),
                       ((1, 1), (1, 1))]:
            a = well_conditioned(rng, sa, dtype)
            b = R.mk(rng.uniform(-2, 2, size=sb), dtype)
            for view in ("c", "t"):
                ia = R.make_in(a, view)
                f.case("solve_%s_%d_%s" % (dtype, n, view), "solve", [ia, b],
                       lambda v, p: L.solve(v[0], v[1], stream=C))
                n += 1
    # errors: not square, wrong dtype, too few dims, mismatched shapes
    errs = [("inv", mx.ones((3, 4))), ("inv", mx.ones((3, 3), dtype=mx.int32)),
            ("inv", mx.ones((3, 3), dtype=mx.float16)), ("inv", mx.ones((3,))),
            ("cholesky", mx.ones((3, 2))), ("eigh", mx.ones((2, 3))), ("eigvalsh", mx.ones((2, 3))),
            ("qr", mx.ones((3,))), ("qr", mx.ones((3, 3), dtype=mx.int32)),
            ("svd", mx.ones((3, 3), dtype=mx.float16)), ("svd", mx.ones((4,)))]
    for name, x in errs:
        fn = ops[name][0]
        f.case("%s_err_%d" % (name, n), name, [x], lambda v, p, fn=fn: fn(v))
        n += 1
    f.case("solve_err_%d" % n, "solve", [mx.eye(3), mx.ones((4,))],
           lambda v, p: L.solve(v[0], v[1], stream=C))
    n += 1
    f.case("inv_singular_%d" % n, "inv", [mx.ones((3, 3))], lambda v, p: L.inv(v[0], stream=C))


def gen_mvn(f):
    rng = R.rng_for("linalg", "mvn")
    n = 0
    for shape, mshape, cshape in [([], (3,), (3, 3)), ([5], (2,), (2, 2)), ([4, 2], (3,), (3, 3)),
                                  ([], (2, 4), (4, 4)), ([3], (1, 3), (2, 3, 3))]:
        mean = R.mk(rng.uniform(-2, 2, size=mshape), "float32")
        cov = spd(rng, cshape)
        seed = 7 + n
        f.case("multivariate_normal_%d" % n, "multivariate_normal", [mean, cov],
               lambda v, p, shape=shape, seed=seed: mx.random.multivariate_normal(
                   v[0], v[1], shape=shape, key=mx.random.key(seed), stream=C),
               {"seed": seed, "shape": shape})
        n += 1
    f.case("multivariate_normal_err_%d" % n, "multivariate_normal",
           [mx.zeros((3,)), mx.eye(4)],
           lambda v, p: mx.random.multivariate_normal(v[0], v[1], key=mx.random.key(0), stream=C),
           {"seed": 0, "shape": []})


def main():
    mx.set_default_device(mx.cpu)
    f = R.RefFile("linalg.ref", "mx.linalg (norm, inv, cholesky, qr, svd, eigh, solve, pinv)")
    gen_norm(f)
    gen_decomp(f)
    gen_mvn(f)
    size = f.write()
    assert size < 200_000, size


if __name__ == "__main__":
    main()
