#!/usr/bin/env python3
"""Record reference values from MLX into tests/refs/*.ref.

Usage: python3 tools/record_mlx_refs.py [--only unary,binary,...]

The output is deterministic: every random input comes from a numpy Generator
seeded with a CRC32 of a fixed string, so rerunning the script with the same
MLX / numpy versions gives byte-identical files.

File format (one record per line, tokens separated by single spaces):

    # comment
    case <case_id> <op_name>
    param <key> <value>
    in <dtype> <shape> <view> <hex>
    out <dtype> <shape> <hex>
    err <message>
    end

promotion.ref instead holds `promote <a> <b> <result>` and
`weak <array_dtype> <int|float|bool> <result>` lines.

shape: comma separated dims, "-" for 0-d.  hex: raw little-endian bytes of
the C-contiguous data, "-" when empty.  view: c | t | s | b:<shape>.
"""

import argparse
import math
import os
import sys
import zlib

import numpy as np
import mlx.core as mx

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT_DIR = os.path.join(REPO, "tests", "refs")

DTYPES = [
    "bool", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32",
    "int64", "float16", "bfloat16", "float32", "float64", "complex64",
]
MXD = {n: getattr(mx, "bool_" if n == "bool" else n) for n in DTYPES}
UNSIGNED = ["uint8", "uint16", "uint32", "uint64"]
SIGNED = ["int8", "int16", "int32", "int64"]
INTS = UNSIGNED + SIGNED
FLOATS = ["float16", "bfloat16", "float32", "float64"]
NP_INT = {n: getattr(np, n) for n in INTS}
WIDTH = {n: np.dtype(NP_INT[n]).itemsize * 8 for n in INTS}


def dname(d):
    return str(d).split(".")[-1]


def rng_for(*parts):
    return np.random.default_rng(zlib.crc32("/".join(map(str, parts)).encode()))


# ---------------------------------------------------------------------------
# array construction / serialisation


def mk(values, dtype):
    """numpy values (float64 / int / complex / bool) -> mx array of dtype."""
    v = np.asarray(values) if not isinstance(values, list) else np.array(values, dtype=object)
    if v.dtype == object and dtype not in INTS:
        v = v.astype(np.complex128 if dtype == "complex64" else np.float64)
    if dtype == "float64":
        return mx.array(v.astype(np.float64), dtype=mx.float64)
    if dtype == "float32":
        return mx.array(v.astype(np.float32))
    if dtype in ("float16", "bfloat16"):
        return mx.array(v.astype(np.float32)).astype(MXD[dtype])
    if dtype == "complex64":
        return mx.array(v.astype(np.complex64))
    if dtype == "bool":
        return mx.array(v.astype(bool))
    if v.dtype.kind in "iub":
        return mx.array(v.astype(NP_INT[dtype]))
    # lists of Python ints (possibly beyond int64/float64 exactness): convert exactly
    return mx.array(np.array(v.tolist(), dtype=NP_INT[dtype]))


def to_np(a):
    mx.eval(a)
    if a.dtype == mx.bfloat16:
        a = mx.contiguous(a).view(mx.uint16)
    n = np.array(a, copy=True)
    return np.ascontiguousarray(n)


def hex_of(a):
    n = to_np(a)
    if n.size == 0:
        return "-"
    n = n.astype(n.dtype.newbyteorder("<"), copy=False)
    return n.tobytes().hex()


def shape_str(shape):
    shape = tuple(shape)
    return "-" if len(shape) == 0 else ",".join(str(int(d)) for d in shape)


def fmt_param(v):
    if v is None:
        return "none"
    if isinstance(v, (bool, np.bool_)):
        return "true" if v else "false"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        return repr(float(v))
    if isinstance(v, (list, tuple)):
        return "[]" if len(v) == 0 else ",".join(str(int(x)) for x in v)
    s = str(v)
    assert s and " " not in s, s
    return s


class In:
    """An operand: `value` is what the op sees; `view` how it is stored."""

    def __init__(self, value, view="c", stored=None):
        self.value = value
        self.view = view
        self.stored = stored


def make_in(x, view="c", bshape=None):
    """Build an In whose op-visible value is x (for b: x is the small array)."""
    if view == "c":
        return In(x, "c", x)
    if view == "t":
        stored = mx.contiguous(mx.transpose(x))
        return In(mx.transpose(stored), "t", stored)
    if view == "s":
        fill = mx.full(x.shape, 7).astype(x.dtype)
        stored = mx.stack([x, fill], axis=-1).reshape(*x.shape[:-1], 2 * x.shape[-1])
        stored = mx.contiguous(stored)
        return In(stored[..., ::2], "s", stored)
    if view == "b":
        return In(mx.broadcast_to(x, bshape), "b:" + shape_str(bshape), x)
    raise ValueError(view)


def err_text(e):
    s = " ".join(str(e).split())
    return s[:300] if s else type(e).__name__


# Integer floor_divide / remainder / divmod can kill the process with SIGFPE
# (division by zero, INT_MIN / -1).  Such cases are first run in a child
# process; when the child dies the case is recorded as
# "err MLX process crashed ..." (MLX gives no value there).
TRAP_OPS = ("floor_divide", "remainder", "divmod")
CRASH_PREFIX = "MLX process crashed"


class _Crashed(Exception):
    pass


def _is_int_dtype(d):
    return dname(d) in INTS or dname(d) == "bool"


def div_risky(ins, params):
    if any(not _is_int_dtype(i.value.dtype) for i in ins):
        return False
    if "scalar" in params and isinstance(params["scalar"], float):
        return False
    vals = [to_np(i.value) for i in ins]
    if "scalar" in params:
        if params["scalar_side"] == "right":
            return int(params["scalar"]) == 0 or bool(np.any(vals[0] < 0))
        return bool(np.any(vals[0] == 0))
    a, b = vals
    return bool(np.any(b == 0)) or bool(np.any(b.astype(np.int64) < 0))


_PROBE = r"""
import pickle, sys
import numpy as np
import mlx.core as mx
d = pickle.load(sys.stdin.buffer)
xs = [mx.array(v) for v in d["arrays"]]
f = getattr(mx, d["op"])
p = d["params"]
if "scalar" in p:
    r = f(xs[0], p["scalar"]) if p["scalar_side"] == "right" else f(p["scalar"], xs[0])
else:
    r = f(xs[0], xs[1])
mx.eval(r)
"""


def crash_probe(op, ins, params):
    import pickle
    import signal
    import subprocess
    payload = pickle.dumps({"op": op, "arrays": [to_np(i.value) for i in ins],
                            "params": params})
    r = subprocess.run([sys.executable, "-c", _PROBE], input=payload,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if r.returncode < 0:
        return "%s with %s (no value exists)" % (CRASH_PREFIX, signal.Signals(-r.returncode).name)
    return None


class RefFile:
    def __init__(self, name, description):
        self.name = name
        self.lines = [
            "# recorded with mlx %s, numpy %s" % (mx.__version__, np.__version__),
            "# " + description,
            "# generated by tools/record_mlx_refs.py; do not edit",
        ]
        self.ids = set()
        self.ncases = 0
        self.nerr = 0
        self.skipped = 0
        self.ncrash = 0

    def case(self, cid, op, ins, fn, params=None):
        """ins: list of In (or mx arrays, view c). fn(values, params) -> array(s)."""
        params = params or {}
        assert cid not in self.ids, cid
        ins = [i if isinstance(i, In) else make_in(i) for i in ins]
        crash = None
        if op in TRAP_OPS and div_risky(ins, params):
            crash = crash_probe(op, ins, params)
        if crash is not None:
            res = None
            self.ncrash += 1
            err, outs = crash, []
        else:
            res = True
        try:
            if res is None:
                raise _Crashed()
            res = fn([i.value for i in ins], params)
            if not isinstance(res, (list, tuple)):
                res = [res]
            for r in res:
                assert isinstance(r, mx.array), type(r)
            mx.eval(*res)
            outs = res
            err = None
        except _Crashed:
            pass
        except (ValueError, RuntimeError, TypeError, IndexError) as e:
            if "incompatible function arguments" in str(e):
                # a Python-binding signature problem, not MLX semantics
                self.skipped += 1
                return
            err = err_text(e)
            outs = []
        self.ids.add(cid)
        L = self.lines
        L.append("case %s %s" % (cid, op))
        for k, v in params.items():
            L.append("param %s %s" % (k, fmt_param(v)))
        for i in ins:
            L.append("in %s %s %s %s" % (dname(i.stored.dtype), shape_str(i.stored.shape),
                                         i.view, hex_of(i.stored)))
        if err is not None:
            L.append("err " + err)
            self.nerr += 1
        for o in outs:
            L.append("out %s %s %s" % (dname(o.dtype), shape_str(o.shape), hex_of(o)))
        L.append("end")
        self.ncases += 1

    def write(self):
        os.makedirs(OUT_DIR, exist_ok=True)
        path = os.path.join(OUT_DIR, self.name)
        with open(path, "w", newline="\n") as f:
            f.write("\n".join(self.lines) + "\n")
        size = os.path.getsize(path)
        print("%-16s %5d cases (%d err of which %d crash, %d skipped) %8d bytes"
              % (self.name, self.ncases, self.nerr, self.ncrash, self.skipped, size))
        return size


# ---------------------------------------------------------------------------
# value generation

FLOAT_DOM = {
    "any": (-3.0, 3.0), "pos": (0.1, 5.0), "unit": (-0.95, 0.95), "ge1": (1.0, 5.0),
    "nonzero": (0.5, 4.0), "exp": (-2.0, 2.0), "shift": (0.0, 5.0), "small": (-2.0, 2.0),
    "wide": (-20.0, 20.0), "near1": (0.5, 1.5), "u01": (0.0, 1.0),
}


def rand_vals(rng, dtype, shape, dom="any"):
    """Random numpy values suited for dtype and domain."""
    shape = tuple(shape)
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype in INTS:
        uns = dtype in UNSIGNED
        ranges = {
            "any": (0, 20) if uns else (-10, 10), "pos": (1, 20), "ge1": (1, 10),
            "unit": (0, 1) if uns else (-1, 1), "exp": (0, 4), "shift": (0, 5),
            "small": (0, 3) if uns else (-3, 3), "wide": (0, 100) if uns else (-100, 100),
            "near1": (1, 2), "u01": (0, 1), "nonzero": (1, 20) if uns else (1, 10),
        }
        lo, hi = ranges[dom]
        v = rng.integers(lo, hi + 1, shape)
        if dom == "nonzero" and not uns:
            v = v * rng.choice([-1, 1], shape)
        return v.astype(NP_INT[dtype])
    lo, hi = FLOAT_DOM[dom]
    if dom == "nonzero":
        v = rng.uniform(lo, hi, shape) * rng.choice([-1.0, 1.0], shape)
    else:
        v = rng.uniform(lo, hi, shape)
    if dtype == "float64":
        return v
    v = v.astype(np.float32)
    if dtype == "complex64":
        w = rng.uniform(lo, hi, shape).astype(np.float32)
        return (v + 1j * w).astype(np.complex64)
    return v


def rand_arr(rng, dtype, shape, dom="any"):
    return mk(rand_vals(rng, dtype, shape, dom), dtype)


NAN, INF = float("nan"), float("inf")
FLOAT_EDGE = [NAN, INF, -INF, -0.0, 0.0, 1.0, -1.0, 0.5, -0.5, 2.5, -2.5, 3.5,
              1e10, -1e10, 1e-10, 100.0]


def int_edge(dtype):
    ii = np.iinfo(NP_INT[dtype])
    if dtype in UNSIGNED:
        return [0, 1, 2, 3, 7, 100, int(ii.max) - 1, int(ii.max)]
    return [int(ii.min), int(ii.min) + 1, -100, -2, -1, 0, 1, 2, 3, 100,
            int(ii.max) - 1, int(ii.max)]


COMPLEX_EDGE = [complex(NAN, 0), complex(INF, 1), complex(-INF, 0), complex(0, 0),
                complex(-0.0, -0.0), complex(1, 1), complex(-1, -2), complex(0, 0.5),
                complex(3, -4), complex(0, INF), complex(2.5, 0), complex(-0.5, 0.25)]


def edge_arr(dtype):
    if dtype == "bool":
        return mk(np.array([True, False]), "bool")
    if dtype in INTS:
        v = np.array(int_edge(dtype), dtype=NP_INT[dtype])
        return mk(v.reshape(-1, 4), dtype)
    if dtype == "complex64":
        return mk(np.array(COMPLEX_EDGE, dtype=np.complex64).reshape(3, 4), dtype)
    return mk(np.array(FLOAT_EDGE).reshape(4, 4), dtype)


def scalar_ops_zero_d(dtype, value):
    return mk(np.array(value), dtype)


# ---------------------------------------------------------------------------
# 1. promotion


def gen_promotion():
    lines = [
        "# recorded with mlx %s, numpy %s" % (mx.__version__, np.__version__),
        "# type promotion: promote <a> <b> <result> from the dtype of array(a) + array(b);",
        "# weak <array_dtype> <int|float|bool> <result> from the dtype of x + 2 / x + 2.5 / x + True",
        "# generated by tools/record_mlx_refs.py; do not edit",
    ]
    for a in DTYPES:
        for b in DTYPES:
            r = mx.add(mx.zeros((1,), MXD[a]), mx.zeros((1,), MXD[b]))
            lines.append("promote %s %s %s" % (a, b, dname(r.dtype)))
    for a in DTYPES:
        for kind, s in (("int", 2), ("float", 2.5), ("bool", True)):
            x = mx.zeros((1,), MXD[a])
            r1 = mx.add(x, s)
            r2 = mx.add(s, x)
            assert r1.dtype == r2.dtype
            lines.append("weak %s %s %s" % (a, kind, dname(r1.dtype)))
    path = os.path.join(OUT_DIR, "promotion.ref")
    os.makedirs(OUT_DIR, exist_ok=True)
    with open(path, "w", newline="\n") as f:
        f.write("\n".join(lines) + "\n")
    print("%-16s %5d records %8d bytes" % ("promotion.ref", len(lines) - 4, os.path.getsize(path)))
    return os.path.getsize(path)


# ---------------------------------------------------------------------------
# 2. unary

UNARY = [
    ("abs", "any"), ("negative", "any"), ("sign", "any"), ("exp", "any"),
    ("expm1", "any"), ("log", "pos"), ("log1p", "pos"), ("log2", "pos"),
    ("log10", "pos"), ("sqrt", "pos"), ("rsqrt", "pos"), ("square", "any"),
    ("reciprocal", "nonzero"), ("sin", "any"), ("cos", "any"), ("tan", "unit"),
    ("arcsin", "unit"), ("arccos", "unit"), ("arctan", "any"), ("sinh", "any"),
    ("cosh", "any"), ("tanh", "any"), ("arcsinh", "any"), ("arccosh", "ge1"),
    ("arctanh", "unit"), ("sigmoid", "any"), ("erf", "any"), ("erfinv", "unit"),
    ("floor", "wide"), ("ceil", "wide"), ("round", "wide"), ("logical_not", "any"),
    ("bitwise_invert", "any"), ("isnan", "any"), ("isinf", "any"),
    ("isposinf", "any"), ("isneginf", "any"), ("isfinite", "any"),
    ("conjugate", "any"), ("real", "any"), ("imag", "any"), ("degrees", "any"),
    ("radians", "any"), ("stop_gradient", "any"),
]


def unary_fn(op):
    if op == "round":
        return lambda xs, p: mx.round(xs[0], decimals=p["decimals"])
    f = getattr(mx, op)
    return lambda xs, p: f(xs[0])


def gen_unary():
    rf = RefFile("unary.ref", "elementwise unary ops; params: decimals (round)")
    for op, dom in UNARY:
        fn = unary_fn(op)
        variants = [{"decimals": 0}, {"decimals": 2}] if op == "round" else [{}]
        for params in variants:
            tag = op if not params else "%s_d%d" % (op, params["decimals"])
            rng = rng_for("unary", tag)
            for dt in DTYPES:
                rf.case("%s_%s_rand" % (tag, dt), op, [rand_arr(rng, dt, (2, 3), dom)], fn, params)
                rf.case("%s_%s_edge" % (tag, dt), op, [edge_arr(dt)], fn, params)
            for dt in ("float32", "int32"):
                rf.case("%s_%s_view_t" % (tag, dt), op,
                        [make_in(rand_arr(rng, dt, (2, 3), dom), "t")], fn, params)
                rf.case("%s_%s_view_s" % (tag, dt), op,
                        [make_in(rand_arr(rng, dt, (2, 3), dom), "s")], fn, params)
                rf.case("%s_%s_view_b" % (tag, dt), op,
                        [make_in(rand_arr(rng, dt, (1, 3), dom), "b", (4, 2, 3))], fn, params)
                rf.case("%s_%s_empty0" % (tag, dt), op, [mk(np.zeros((0,)), dt)], fn, params)
                rf.case("%s_%s_empty03" % (tag, dt), op, [mk(np.zeros((0, 3)), dt)], fn, params)
                rf.case("%s_%s_0d" % (tag, dt), op, [rand_arr(rng, dt, (), dom)], fn, params)
    return rf.write()


# ---------------------------------------------------------------------------
# 3. binary

BINARY = ["add", "subtract", "multiply", "divide", "floor_divide", "remainder",
          "divmod", "power", "maximum", "minimum", "equal", "not_equal", "less",
          "less_equal", "greater", "greater_equal", "logical_and", "logical_or",
          "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift",
          "arctan2", "logaddexp", "isclose", "allclose", "array_equal"]

BIN_DOM = {
    "divide": ("any", "nonzero"), "floor_divide": ("wide", "nonzero"),
    "remainder": ("wide", "nonzero"), "divmod": ("wide", "nonzero"),
    "power": ("small", "exp"), "left_shift": ("any", "shift"),
    "right_shift": ("wide", "shift"),
}

CLOSE_DEFAULT = {"rtol": 1e-05, "atol": 1e-08, "equal_nan": False}


def binary_fn(op):
    if op in ("isclose", "allclose"):
        f = getattr(mx, op)
        return lambda xs, p: f(xs[0], xs[1], rtol=p["rtol"], atol=p["atol"],
                               equal_nan=p["equal_nan"])
    if op == "array_equal":
        return lambda xs, p: mx.array_equal(xs[0], xs[1], equal_nan=p["equal_nan"])
    f = getattr(mx, op)
    return lambda xs, p: f(xs[0], xs[1])


def binary_default_params(op):
    if op in ("isclose", "allclose"):
        return dict(CLOSE_DEFAULT)
    if op == "array_equal":
        return {"equal_nan": False}
    return {}


def rand_pair(rng, op, dta, dtb, shape_a, shape_b):
    da, db = BIN_DOM.get(op, ("any", "any"))
    a = rand_vals(rng, dta, shape_a, da)
    if op in ("isclose", "allclose", "array_equal") and dta == dtb and shape_a == shape_b:
        # make b close to / equal to a in places
        if dta in INTS or dta == "bool":
            b = a.copy()
            flat = b.reshape(-1)
            if flat.size:
                i = rng.integers(0, flat.size)
                flat[i] = not flat[i] if dta == "bool" else flat[i] + 1
        else:
            rel = rng.choice([0.0, 1e-7, 1e-6, 1e-3, 0.5], shape_a)
            b = (a * (1 + rel)).astype(a.dtype)
            if op == "array_equal" and rng.integers(0, 2) == 0:
                b = a.copy()
        return mk(a, dta), mk(b, dtb)
    b = rand_vals(rng, dtb, shape_b, db)
    return mk(a, dta), mk(b, dtb)


MIXED_PAIRS = [
    ("int8", "uint8"), ("uint8", "int8"), ("int32", "float32"), ("uint64", "int64"),
    ("int64", "float16"), ("bool", "int32"), ("uint32", "int32"), ("float16", "bfloat16"),
    ("bfloat16", "float32"), ("float32", "float64"), ("int32", "complex64"),
    ("uint8", "float16"), ("bool", "float32"), ("int16", "uint32"), ("int64", "float32"),
    ("uint16", "bfloat16"), ("bool", "bool"),
]

WEAK_DTYPES = ["bool", "uint8", "int32", "int64", "float16", "bfloat16", "float32",
               "float64", "complex64"]


def gen_binary():
    rf = RefFile("binary.ref", "elementwise binary ops; weak scalars as params "
                 "scalar/scalar_type/scalar_side; isclose/allclose: rtol atol equal_nan")
    for op in BINARY:
        fn = binary_fn(op)
        base = binary_default_params(op)
        rng = rng_for("binary", op)
        # same-dtype pairs
        for dt in DTYPES:
            a, b = rand_pair(rng, op, dt, dt, (2, 3), (2, 3))
            rf.case("%s_%s_%s" % (op, dt, dt), op, [a, b], fn, dict(base))
        # mixed dtype pairs: all unordered pairs for add, a selection otherwise
        if op == "add":
            pairs = [(a, b) for i, a in enumerate(DTYPES) for b in DTYPES[i + 1:]]
        else:
            pairs = [p for p in MIXED_PAIRS if p[0] != p[1]]
        for dta, dtb in pairs:
            a, b = rand_pair(rng, op, dta, dtb, (2, 3), (2, 3))
            rf.case("%s_mix_%s_%s" % (op, dta, dtb), op, [a, b], fn, dict(base))
        # broadcasting / views
        for dt in ("float32", "int32"):
            for sa, sb, tag in (((2, 3), (3,), "b23_3"), ((2, 1), (1, 3), "b21_13"),
                                ((2, 3), (), "b23_0d"), ((), (2, 3), "b0d_23"),
                                ((), (), "b0d_0d"), ((0, 3), (3,), "b03_3"),
                                ((2, 1, 3), (4, 1), "b213_41")):
                a, b = rand_pair(rng, op, dt, dt, sa, sb)
                rf.case("%s_%s_%s" % (op, dt, tag), op, [a, b], fn, dict(base))
            a, b = rand_pair(rng, op, dt, dt, (2, 3), (2, 3))
            rf.case("%s_%s_view_t" % (op, dt), op, [make_in(a, "t"), b], fn, dict(base))
            a, b = rand_pair(rng, op, dt, dt, (2, 3), (2, 3))
            rf.case("%s_%s_view_s" % (op, dt), op, [a, make_in(b, "s")], fn, dict(base))
            a, b = rand_pair(rng, op, dt, dt, (3,), (2, 1, 3))
            rf.case("%s_%s_view_b" % (op, dt), op,
                    [make_in(a, "b", (2, 4, 3)), make_in(b, "b", (2, 4, 3))], fn, dict(base))
        if op in ("isclose", "allclose"):
            for dt in ("float32", "float16", "float64"):
                a, b = rand_pair(rng, op, dt, dt, (2, 3), (2, 3))
                p = {"rtol": 0.1, "atol": 0.0, "equal_nan": False}
                rf.case("%s_%s_rtol01" % (op, dt), op, [a, b], fn, p)
                p = {"rtol": 0.0, "atol": 0.01, "equal_nan": True}
                rf.case("%s_%s_atol001_eqnan" % (op, dt), op, [a, b], fn, p)
        if op == "array_equal":
            for dta, dtb, sa, sb in (("float32", "float32", (2, 3), (3, 2)),
                                     ("float32", "float32", (2, 3), (3,)),
                                     ("int32", "float32", (2, 3), (2, 3)),
                                     ("float32", "float32", (0,), (0,))):
                a = rand_arr(rng, dta, sa, "small")
                b = mk(np.array(to_np(a), dtype=np.float64).reshape(-1)[:int(np.prod(sb))]
                       .reshape(sb) if int(np.prod(sb)) <= a.size else np.zeros(sb), dtb)
                rf.case("%s_shape_%s_%s_%s_%s" % (op, dta, dtb, shape_str(sa), shape_str(sb)),
                        op, [a, b], fn, dict(base))
            rf.case("array_equal_int_float_equal", op,
                    [mk(np.array([1, 2, 3]), "int32"), mk(np.array([1.0, 2.0, 3.0]), "float32")],
                    fn, dict(base))
            for en in (False, True):
                nanv = mk(np.array([1.0, NAN, 3.0]), "float32")
                rf.case("array_equal_nan_%s" % ("t" if en else "f"), op, [nanv, nanv], fn,
                        {"equal_nan": en})
        # weak scalars
        for dt in WEAK_DTYPES:
            for kind, s in (("int", 2), ("float", 2.5), ("bool", True), ("int", -3),
                            ("int", 300)):
                for side in ("right", "left"):
                    if kind == "bool" and side == "left":
                        continue
                    if kind == "int" and s != 2 and (side == "left" or dt not in ("uint8", "int32", "float16")):
                        continue
                    x = rand_arr(rng, dt, (2, 3), BIN_DOM.get(op, ("any", "any"))[0 if side == "right" else 1])
                    p = dict(base)
                    p.update({"scalar": s, "scalar_type": kind, "scalar_side": side})
                    f = getattr(mx, op)
                    if side == "right":
                        sf = (lambda s_: lambda xs, pp: f(xs[0], s_))(s)
                    else:
                        sf = (lambda s_: lambda xs, pp: f(s_, xs[0]))(s)
                    sname = str(s).replace("-", "m").replace(".", "p")
                    rf.case("%s_%s_weak_%s_%s_%s" % (op, dt, kind, sname, side), op, [x], sf, p)
    # integer edge cases
    for dt in INTS:
        ii = np.iinfo(NP_INT[dt])
        mn, mxv, w = int(ii.min), int(ii.max), WIDTH[dt]
        uns = dt in UNSIGNED
        divs = ["divide", "floor_divide", "remainder", "divmod"]
        if not uns:
            a = [7, -7, 7, -7, 6, -6, 0, 1, -1, 5]
            b = [2, 2, -2, -2, 3, -4, 5, -3, 3, -5]
            for op in divs:
                rf.case("%s_%s_signs" % (op, dt), op, [mk(list(a), dt), mk(list(b), dt)],
                        binary_fn(op), {})
            for op in divs:
                rf.case("%s_%s_min_neg1" % (op, dt), op,
                        [mk(list([mn, mn, mxv, mn]), dt), mk(list([-1, 1, -1, mn]), dt)],
                        binary_fn(op), {})
        za = [1, 0, mxv, 7] + ([] if uns else [-1, mn, -7])
        for op in divs:
            rf.case("%s_%s_divzero" % (op, dt), op,
                    [mk(list(za), dt), mk(np.zeros(len(za)), dt)], binary_fn(op), {})
        if uns:
            sa = [1, 1, 1, 1, 1, 1, mxv, 5, 5, 5]
            sb = [0, 1, w - 1, w, w + 1, 2 * w, 1, 3, min(100, mxv), mxv]
        else:
            sa = [1, 1, 1, 1, 1, -1, -8, mxv, mn, 5, 5, 5, 5]
            sb = [0, 1, w - 1, w, w + 1, 1, 1, 1, 1, -1, -2, min(100, mxv), mn]
        for op in ("left_shift", "right_shift"):
            rf.case("%s_%s_edge" % (op, dt), op, [mk(list(sa), dt), mk(list(sb), dt)],
                    binary_fn(op), {})
        if uns:
            pa, pb = [2, 0, 0, 3, 1, 2, 7], [0, 0, 1, 3, 50, w - 2, 1]
        else:
            pa, pb = [2, -2, 0, 0, 3, 1, -1, -1, 2, -2], [-1, -1, 0, -1, 3, -5, 3, 4, w - 2, w - 3]
        rf.case("power_%s_edge" % dt, "power", [mk(list(pa), dt), mk(list(pb), dt)],
                binary_fn("power"), {})
        # overflow wrap of add/sub/mul
        for op in ("add", "subtract", "multiply"):
            rf.case("%s_%s_wrap" % (op, dt), op,
                    [mk(list([mxv, mn, mxv, mn]), dt), mk(list([1, 1, 2, mxv]), dt)],
                    binary_fn(op), {})
    # float sign cases for floor_divide / remainder
    fa = [7.0, -7.0, 7.0, -7.0, 5.5, -5.5, -0.0, 0.0, 1e-30, -1e-30]
    fb = [2.0, 2.0, -2.0, -2.0, -2.5, 2.5, 3.0, -3.0, 3.0, 3.0]
    for dt in FLOATS:
        for op in ("divide", "floor_divide", "remainder", "divmod"):
            rf.case("%s_%s_signs" % (op, dt), op, [mk(list(fa), dt), mk(list(fb), dt)],
                    binary_fn(op), {})
    # float edge cross product
    e8 = np.array([NAN, INF, -INF, -0.0, 0.0, 1.0, -2.5, 3.0])
    ea, eb = np.repeat(e8, 8).reshape(8, 8), np.tile(e8, 8).reshape(8, 8)
    for op in BINARY:
        p = binary_default_params(op)
        for dt in FLOATS:
            rf.case("%s_%s_edge" % (op, dt), op, [mk(ea, dt), mk(eb, dt)], binary_fn(op), dict(p))
        if op in ("isclose", "allclose"):
            rf.case("%s_float32_edge_eqnan" % op, op, [mk(ea, "float32"), mk(eb, "float32")],
                    binary_fn(op), {"rtol": 1e-05, "atol": 1e-08, "equal_nan": True})
    # complex edge values
    ce = np.array(COMPLEX_EDGE[:6], dtype=np.complex64)
    ca, cb = np.repeat(ce, 6).reshape(6, 6), np.tile(ce, 6).reshape(6, 6)
    for op in ("add", "subtract", "multiply", "divide", "power", "maximum", "minimum",
               "equal", "less", "logaddexp"):
        rf.case("%s_complex64_edge" % op, op, [mk(ca, "complex64"), mk(cb, "complex64")],
                binary_fn(op), {})
    return rf.write()


# ---------------------------------------------------------------------------
# 4. other: where, clip, astype, view


def astype_src(dt):
    if dt == "bool":
        return mk(np.array([True, False, True, False]), dt)
    if dt in INTS:
        return edge_arr(dt)
    if dt == "complex64":
        return mk(np.array([1.5 + 2j, -3.7 - 1j, complex(NAN, 1), complex(INF, -INF),
                            0j, complex(-0.0, 0.0), 300.25 + 0j, -1e10 + 5j],
                           dtype=np.complex64), dt)
    v = [NAN, INF, -INF, -0.0, 0.0, 1.5, -1.5, 2.5, -2.7, 127.9, -128.9, 255.5, 256.0,
         -129.0, 300.0, -300.0, 65504.0, 70000.0, -70000.0, 1e10, -1e10, 3e9, 5e9, 1e20,
         -1e20, 1e-8, 0.1, 0.999]
    return mk(np.array(v), dt)


def gen_other():
    rf = RefFile("other.ref", "where, clip (params a_min/a_max + *_type int|float|none|array), "
                 "astype (param dtype), view (param dtype)")
    rng = rng_for("other", "where")
    wfn = lambda xs, p: mx.where(xs[0], xs[1], xs[2])
    for dt in DTYPES:
        c = rand_arr(rng, "bool", (2, 3))
        rf.case("where_%s" % dt, "where",
                [c, rand_arr(rng, dt, (2, 3)), rand_arr(rng, dt, (2, 3))], wfn)
    for dta, dtb in MIXED_PAIRS:
        if dta == dtb:
            continue
        c = rand_arr(rng, "bool", (2, 3))
        rf.case("where_mix_%s_%s" % (dta, dtb), "where",
                [c, rand_arr(rng, dta, (2, 3)), rand_arr(rng, dtb, (2, 3))], wfn)
    for dt in ("float32", "int32"):
        rf.case("where_%s_bcast1" % dt, "where",
                [rand_arr(rng, "bool", (2, 1)), rand_arr(rng, dt, (3,)), rand_arr(rng, dt, ())], wfn)
        rf.case("where_%s_bcast2" % dt, "where",
                [rand_arr(rng, "bool", (3,)), rand_arr(rng, dt, (2, 1)), rand_arr(rng, dt, (4, 1, 1))], wfn)
        rf.case("where_%s_bcast0d" % dt, "where",
                [rand_arr(rng, "bool", ()), rand_arr(rng, dt, (2, 3)), rand_arr(rng, dt, (2, 3))], wfn)
        rf.case("where_%s_views" % dt, "where",
                [make_in(rand_arr(rng, "bool", (2, 3)), "t"), make_in(rand_arr(rng, dt, (2, 3)), "s"),
                 make_in(rand_arr(rng, dt, (3,)), "b", (2, 3))], wfn)
        rf.case("where_%s_empty" % dt, "where",
                [rand_arr(rng, "bool", (0, 3)), rand_arr(rng, dt, (0, 3)), rand_arr(rng, dt, (3,))], wfn)
        rf.case("where_%s_badshape" % dt, "where",
                [rand_arr(rng, "bool", (2, 3)), rand_arr(rng, dt, (2,)), rand_arr(rng, dt, (3,))], wfn)
    for cdt in ("int32", "float32", "uint8"):
        rf.case("where_cond_%s" % cdt, "where",
                [rand_arr(rng, cdt, (2, 3), "small"), rand_arr(rng, "float32", (2, 3)),
                 rand_arr(rng, "float32", (2, 3))], wfn)
    # where with weak scalars
    for dt in ("uint8", "int32", "float16", "float32"):
        for s, kind in ((2, "int"), (2.5, "float")):
            rf.case("where_%s_weak_%s" % (dt, kind), "where",
                    [rand_arr(rng, "bool", (2, 3)), rand_arr(rng, dt, (2, 3))],
                    (lambda s_: lambda xs, p: mx.where(xs[0], s_, xs[1]))(s),
                    {"scalar": s, "scalar_type": kind, "scalar_side": "left"})

    # clip
    rng = rng_for("other", "clip")

    def clip_fn(lo, hi):
        return lambda xs, p: mx.clip(xs[0], lo, hi)

    for dt in DTYPES:
        x = rand_arr(rng, dt, (2, 4), "wide") if dt != "bool" else rand_arr(rng, dt, (2, 4))
        for lo, hi in ((-2, 5), (-1.5, 2.5), (None, 3), (1, None), (None, None), (5, -2), (True, True)):
            p = {}
            for name, v in (("a_min", lo), ("a_max", hi)):
                p[name] = v
                p[name + "_type"] = ("none" if v is None else "bool" if isinstance(v, bool)
                                     else "int" if isinstance(v, int) else "float")
            tag = "%s_%s" % (str(lo).replace("-", "m").replace(".", "p"),
                             str(hi).replace("-", "m").replace(".", "p"))
            if isinstance(lo, bool) and dt not in ("bool", "int32", "float32"):
                continue
            rf.case("clip_%s_%s" % (dt, tag), "clip", [x], clip_fn(lo, hi), p)
    for dt in ("float32", "int32"):
        x = rand_arr(rng, dt, (2, 3), "wide")
        lo = rand_arr(rng, dt, (3,), "small")
        hi = rand_arr(rng, dt, (2, 1), "wide")
        rf.case("clip_%s_arrays" % dt, "clip", [x, lo, hi],
                lambda xs, p: mx.clip(xs[0], xs[1], xs[2]),
                {"a_min": "array", "a_min_type": "array", "a_max": "array", "a_max_type": "array"})
    x = mk(np.array([NAN, -INF, INF, -0.0, 0.0, 1.0]), "float32")
    rf.case("clip_float32_nan", "clip", [x], clip_fn(-0.5, 0.5),
            {"a_min": -0.5, "a_min_type": "float", "a_max": 0.5, "a_max_type": "float"})

    # astype
    afn = lambda xs, p: xs[0].astype(MXD[p["dtype"]])
    for src in DTYPES:
        x = astype_src(src)
        for dst in DTYPES:
            rf.case("astype_%s_%s" % (src, dst), "astype", [x], afn, {"dtype": dst})
    for dst in ("int32", "float16", "bfloat16"):
        rng = rng_for("other", "astype_views", dst)
        rf.case("astype_float32_%s_view_t" % dst, "astype",
                [make_in(rand_arr(rng, "float32", (2, 3), "wide"), "t")], afn, {"dtype": dst})
        rf.case("astype_float32_%s_view_b" % dst, "astype",
                [make_in(rand_arr(rng, "float32", (3,), "wide"), "b", (2, 3))], afn, {"dtype": dst})
        rf.case("astype_float32_%s_0d" % dst, "astype", [mk(np.array(-2.75), "float32")], afn,
                {"dtype": dst})
        rf.case("astype_float32_%s_empty" % dst, "astype", [mk(np.zeros((0, 2)), "float32")], afn,
                {"dtype": dst})

    # view
    vfn = lambda xs, p: xs[0].view(MXD[p["dtype"]])
    for src in DTYPES:
        rng = rng_for("other", "view", src)
        x = rand_arr(rng, src, (2, 8), "wide")
        for dst in DTYPES:
            rf.case("view_%s_%s" % (src, dst), "view", [x], vfn, {"dtype": dst})
    rng = rng_for("other", "view_extra")
    for dst in ("uint8", "int16", "float64", "int32"):
        rf.case("view_float32_%s_0d" % dst, "view", [mk(np.array(1.5), "float32")], vfn, {"dtype": dst})
        rf.case("view_float32_%s_odd" % dst, "view", [rand_arr(rng, "float32", (2, 3))], vfn, {"dtype": dst})
        rf.case("view_float32_%s_view_t" % dst, "view",
                [make_in(rand_arr(rng, "float32", (4, 2)), "t")], vfn, {"dtype": dst})
        rf.case("view_float32_%s_view_s" % dst, "view",
                [make_in(rand_arr(rng, "float32", (2, 4)), "s")], vfn, {"dtype": dst})
        rf.case("view_float32_%s_empty" % dst, "view", [mk(np.zeros((3, 0)), "float32")], vfn,
                {"dtype": dst})
    return rf.write()


# ---------------------------------------------------------------------------
# 5. reductions

REDUCE = [("sum", {}), ("prod", {}), ("max", {}), ("min", {}), ("mean", {}),
          ("var", {"ddof": 0}), ("var", {"ddof": 1}), ("std", {"ddof": 0}),
          ("std", {"ddof": 1}), ("all", {}), ("any", {}), ("argmax", {}),
          ("argmin", {}), ("logsumexp", {})]


def reduce_fn(op):
    f = getattr(mx, op)

    def fn(xs, p):
        axes = p["axes"]
        kw = {"keepdims": p["keepdims"]}
        if "ddof" in p:
            kw["ddof"] = p["ddof"]
        if op in ("argmax", "argmin"):
            if axes == "all":
                return f(xs[0], **kw)
            assert len(axes) == 1
            return f(xs[0], axis=axes[0], **kw)
        if axes == "all":
            return f(xs[0], **kw)
        return f(xs[0], axis=list(axes), **kw)
    return fn


def gen_reduce():
    rf = RefFile("reduce.ref", "reductions; params: axes (list or 'all'), keepdims, ddof (var/std)")
    for op, extra in REDUCE:
        tag = op + ("_ddof%d" % extra["ddof"] if "ddof" in extra else "")
        fn = reduce_fn(op)
        rng = rng_for("reduce", tag)
        dom = "near1" if op == "prod" else "any"
        arg = op in ("argmax", "argmin")
        axsets = ([([1], False), ([0], True), ([-1], False), ("all", False), ("all", True)] if arg else
                  [([1], False), ([0, 2], False), ([0, 2], True), ([-1], False), ("all", False),
                   ("all", True)])

        def P(axes, kd):
            p = {"axes": axes, "keepdims": kd}
            p.update(extra)
            return p

        def axtag(axes, kd):
            s = "all" if axes == "all" else "ax" + "_".join(str(a).replace("-", "m") for a in axes)
            return s + ("_kd" if kd else "")

        for dt in DTYPES:
            if op == "prod" and dt in INTS:
                x = rand_arr(rng, dt, (2, 3, 4), "small")
            else:
                x = rand_arr(rng, dt, (2, 3, 4), dom)
            for axes, kd in axsets:
                rf.case("%s_%s_%s" % (tag, dt, axtag(axes, kd)), op, [x], fn, P(axes, kd))
        for dt in ("float32", "int32", "bool", "float16"):
            x0 = rand_arr(rng, dt, (), dom)
            rf.case("%s_%s_0d_all" % (tag, dt), op, [x0], fn, P("all", False))
            if not arg:
                rf.case("%s_%s_0d_ax_empty" % (tag, dt), op, [x0], fn, P([], False))
            rf.case("%s_%s_0d_ax0" % (tag, dt), op, [x0], fn, P([0], False))
            rf.case("%s_%s_empty0_all" % (tag, dt), op, [mk(np.zeros((0,)), dt)], fn, P("all", False))
            e = mk(np.zeros((2, 0, 3)), dt)
            rf.case("%s_%s_empty203_ax1" % (tag, dt), op, [e], fn, P([1], False))
            rf.case("%s_%s_empty203_ax0" % (tag, dt), op, [e], fn, P([0], True))
            rf.case("%s_%s_bad_axis" % (tag, dt), op, [rand_arr(rng, dt, (2, 3), dom)], fn, P([2], False))
        for dt in ("float32", "int32"):
            for axes, kd in (([1], False), ("all", False), ([0], False)):
                x = make_in(rand_arr(rng, dt, (2, 3, 4), dom), "t")
                rf.case("%s_%s_view_t_%s" % (tag, dt, axtag(axes, kd)), op, [x], fn, P(axes, kd))
            x = make_in(rand_arr(rng, dt, (3, 4), dom), "s")
            rf.case("%s_%s_view_s_ax1" % (tag, dt), op, [x], fn, P([1], False))
            x = make_in(rand_arr(rng, dt, (4,), dom), "b", (3, 4))
            rf.case("%s_%s_view_b_ax0" % (tag, dt), op, [x], fn, P([0], False))
            rf.case("%s_%s_view_b_all" % (tag, dt), op, [x], fn, P("all", False))
        # longer reduction (accumulation order / precision)
        for dt in ("float32", "float16", "bfloat16", "int32"):
            x = rand_arr(rng, dt, (4, 64), "near1" if op == "prod" else "u01")
            rf.case("%s_%s_long_ax1" % (tag, dt), op, [x], fn, P([1], False))
        # NaN / inf inputs
        for dt in ("float32", "float16", "float64"):
            x = mk(np.array([[1.0, NAN, 3.0, -1.0], [INF, -INF, 2.0, 0.5], [-INF, 0.0, -0.0, 7.0]]), dt)
            rf.case("%s_%s_nan_ax1" % (tag, dt), op, [x], fn, P([1], False))
            rf.case("%s_%s_nan_ax0" % (tag, dt), op, [x], fn, P([0], False))
            rf.case("%s_%s_nan_all" % (tag, dt), op, [x], fn, P("all", False))
        x = mk(np.array([[1 + 1j, 2 - 1j, complex(NAN, 0)], [3j, -1 + 0j, 0j]]), "complex64")
        rf.case("%s_complex64_nan_ax1" % tag, op, [x], fn, P([1], False))
        # extreme integers
        for dt in ("int8", "uint8", "int64", "uint64"):
            x = mk(int_edge(dt)[:8], dt).reshape(2, 4)
            rf.case("%s_%s_extreme_ax1" % (tag, dt), op, [x], fn, P([1], False))
    return rf.write()


# ---------------------------------------------------------------------------
# 6. matmul


def gen_matmul():
    rf = RefFile("matmul.ref", "matmul, inner, outer, addmm (params alpha beta)")
    mfn = lambda xs, p: mx.matmul(xs[0], xs[1])
    rng = rng_for("matmul")
    for dt in DTYPES:
        rf.case("matmul_%s_23_34" % dt, "matmul",
                [rand_arr(rng, dt, (2, 3), "small"), rand_arr(rng, dt, (3, 4), "small")], mfn)
    for dt in ("float32", "float64", "float16", "bfloat16", "int32", "complex64"):
        shapes = [((3,), (3, 4), "1d_2d"), ((2, 3), (3,), "2d_1d"), ((3,), (3,), "1d_1d"),
                  ((2, 1, 3, 4), (5, 4, 2), "batch_bcast"), ((2, 0), (0, 3), "k0"),
                  ((0, 3), (3, 2), "m0"), ((2, 3), (4, 2), "bad_inner"),
                  ((1, 5), (5, 1), "dot"), ((3, 2, 4), (3, 4, 5), "batch"),
                  ((4,), (2, 4, 3), "1d_batch"), ((8, 16), (16, 8), "8x16x8")]
        for sa, sb, tag in shapes:
            rf.case("matmul_%s_%s" % (dt, tag), "matmul",
                    [rand_arr(rng, dt, sa, "small"), rand_arr(rng, dt, sb, "small")], mfn)
        rf.case("matmul_%s_view_t_a" % dt, "matmul",
                [make_in(rand_arr(rng, dt, (2, 3), "small"), "t"), rand_arr(rng, dt, (3, 4), "small")], mfn)
        rf.case("matmul_%s_view_t_b" % dt, "matmul",
                [rand_arr(rng, dt, (2, 3), "small"), make_in(rand_arr(rng, dt, (3, 4), "small"), "t")], mfn)
        rf.case("matmul_%s_view_t_ab" % dt, "matmul",
                [make_in(rand_arr(rng, dt, (4, 3), "small"), "t"),
                 make_in(rand_arr(rng, dt, (3, 5), "small"), "t")], mfn)
        rf.case("matmul_%s_view_s_b" % dt, "matmul",
                [rand_arr(rng, dt, (2, 3), "small"), make_in(rand_arr(rng, dt, (3, 2), "small"), "s")], mfn)
        rf.case("matmul_%s_view_b" % dt, "matmul",
                [make_in(rand_arr(rng, dt, (2, 3), "small"), "b", (4, 2, 3)),
                 rand_arr(rng, dt, (3, 2), "small")], mfn)
    for dta, dtb in (("float32", "float16"), ("int32", "float32"), ("bfloat16", "float16"),
                     ("int8", "int8"), ("float32", "float64")):
        rf.case("matmul_mix_%s_%s" % (dta, dtb), "matmul",
                [rand_arr(rng, dta, (2, 3), "small"), rand_arr(rng, dtb, (3, 2), "small")], mfn)
    x = mk(np.array([[1.0, NAN, 0.0], [INF, 1.0, 0.0]]), "float32")
    y = mk(np.array([[0.0, 1.0], [0.0, 0.0], [1.0, INF]]), "float32")
    rf.case("matmul_float32_nan_inf", "matmul", [x, y], mfn)
    rf.case("matmul_float32_0d", "matmul", [mk(np.array(2.0), "float32"), mk(np.array(3.0), "float32")], mfn)

    ifn = lambda xs, p: mx.inner(xs[0], xs[1])
    ofn = lambda xs, p: mx.outer(xs[0], xs[1])
    for dt in ("float32", "int32", "float16", "bool", "complex64"):
        rf.case("inner_%s_1d" % dt, "inner", [rand_arr(rng, dt, (3,), "small"), rand_arr(rng, dt, (3,), "small")], ifn)
        rf.case("inner_%s_2d" % dt, "inner", [rand_arr(rng, dt, (2, 3), "small"), rand_arr(rng, dt, (4, 3), "small")], ifn)
        rf.case("inner_%s_0d" % dt, "inner", [rand_arr(rng, dt, (), "small"), rand_arr(rng, dt, (2, 3), "small")], ifn)
        rf.case("inner_%s_bad" % dt, "inner", [rand_arr(rng, dt, (2, 3), "small"), rand_arr(rng, dt, (2,), "small")], ifn)
        rf.case("outer_%s_1d" % dt, "outer", [rand_arr(rng, dt, (3,), "small"), rand_arr(rng, dt, (4,), "small")], ofn)
        rf.case("outer_%s_2d" % dt, "outer", [rand_arr(rng, dt, (2, 2), "small"), rand_arr(rng, dt, (3,), "small")], ofn)
        rf.case("outer_%s_empty" % dt, "outer", [rand_arr(rng, dt, (0,), "small"), rand_arr(rng, dt, (3,), "small")], ofn)
    rf.case("outer_mix_int32_float16", "outer", [rand_arr(rng, "int32", (3,), "small"),
                                                 rand_arr(rng, "float16", (2,), "small")], ofn)

    afn = lambda xs, p: mx.addmm(xs[0], xs[1], xs[2], alpha=p["alpha"], beta=p["beta"])
    for dt in ("float32", "float64", "float16", "bfloat16", "int32"):
        for alpha, beta in ((1.0, 1.0), (0.5, 2.0), (2.0, 0.0), (-1.0, 0.25)):
            p = {"alpha": alpha, "beta": beta}
            tag = "a%s_b%s" % (repr(alpha).replace("-", "m").replace(".", "p"),
                               repr(beta).replace(".", "p"))
            rf.case("addmm_%s_%s" % (dt, tag), "addmm",
                    [rand_arr(rng, dt, (2, 4), "small"), rand_arr(rng, dt, (2, 3), "small"),
                     rand_arr(rng, dt, (3, 4), "small")], afn, p)
        rf.case("addmm_%s_bcast_c" % dt, "addmm",
                [rand_arr(rng, dt, (4,), "small"), rand_arr(rng, dt, (2, 3), "small"),
                 rand_arr(rng, dt, (3, 4), "small")], afn, {"alpha": 1.0, "beta": 1.0})
        rf.case("addmm_%s_batched" % dt, "addmm",
                [rand_arr(rng, dt, (2, 2, 4), "small"), rand_arr(rng, dt, (2, 2, 3), "small"),
                 rand_arr(rng, dt, (3, 4), "small")], afn, {"alpha": 1.5, "beta": 0.5})
        rf.case("addmm_%s_view_t" % dt, "addmm",
                [rand_arr(rng, dt, (2, 4), "small"), make_in(rand_arr(rng, dt, (2, 3), "small"), "t"),
                 rand_arr(rng, dt, (3, 4), "small")], afn, {"alpha": 1.0, "beta": 1.0})
        rf.case("addmm_%s_k0" % dt, "addmm",
                [rand_arr(rng, dt, (2, 4), "small"), rand_arr(rng, dt, (2, 0), "small"),
                 rand_arr(rng, dt, (0, 4), "small")], afn, {"alpha": 1.0, "beta": 2.0})
    c = mk(np.array([[NAN, 1.0], [INF, 2.0]]), "float32")
    rf.case("addmm_float32_nan_c_beta0", "addmm",
            [c, rand_arr(rng, "float32", (2, 3), "small"), rand_arr(rng, "float32", (3, 2), "small")],
            afn, {"alpha": 1.0, "beta": 0.0})
    rf.case("addmm_mix_float16_float32", "addmm",
            [rand_arr(rng, "float32", (2, 2), "small"), rand_arr(rng, "float16", (2, 3), "small"),
             rand_arr(rng, "float16", (3, 2), "small")], afn, {"alpha": 1.0, "beta": 1.0})
    return rf.write()


# ---------------------------------------------------------------------------
# 7. shape ops


def gen_shape():
    rf = RefFile("shape.ref", "shape ops; slice params start/stop/step are per-axis lists "
                 "(Python slice semantics, every axis given)")
    rng = rng_for("shape")
    dts = ("float32", "int8", "bfloat16", "bool", "complex64", "int64")

    def arr(dt, shape):
        return rand_arr(rng, dt, shape, "wide")

    rs = lambda xs, p: mx.reshape(xs[0], p["shape"])
    for dt in dts:
        x = arr(dt, (2, 3, 4))
        for shp in ((6, 4), (-1,), (4, -1, 2), (24, 1), (1, 2, 1, 12), (3, 5), (-1, -1), (-1, 5), (0, -1)):
            rf.case("reshape_%s_%s" % (dt, "_".join(str(s).replace("-", "m") for s in shp)),
                    "reshape", [x], rs, {"shape": list(shp)})
    rf.case("reshape_float32_0d_to_1", "reshape", [arr("float32", ())], rs, {"shape": [1]})
    rf.case("reshape_float32_11_to_0d", "reshape", [arr("float32", (1, 1))], rs, {"shape": []})
    rf.case("reshape_float32_empty", "reshape", [arr("float32", (0, 4))], rs, {"shape": [2, 0, -1]})
    rf.case("reshape_float32_empty_m1", "reshape", [arr("float32", (0, 4))], rs, {"shape": [-1, 0]})
    rf.case("reshape_float32_view_t", "reshape", [make_in(arr("float32", (2, 3, 4)), "t")], rs,
            {"shape": [4, 6]})
    rf.case("reshape_int32_view_s", "reshape", [make_in(arr("int32", (2, 3)), "s")], rs, {"shape": [-1]})
    rf.case("reshape_int32_view_b", "reshape", [make_in(arr("int32", (3,)), "b", (2, 3))], rs, {"shape": [3, 2]})

    fl = lambda xs, p: mx.flatten(xs[0], start_axis=p["start_axis"], end_axis=p["end_axis"])
    for dt in ("float32", "int16"):
        x = arr(dt, (2, 3, 4))
        for s, e in ((0, -1), (1, 2), (0, 0), (-2, -1), (0, 1), (2, 1), (0, 3), (-4, 0)):
            rf.case("flatten_%s_%s_%s" % (dt, str(s).replace("-", "m"), str(e).replace("-", "m")),
                    "flatten", [x], fl, {"start_axis": s, "end_axis": e})
    rf.case("flatten_float32_0d", "flatten", [arr("float32", ())], fl, {"start_axis": 0, "end_axis": -1})
    rf.case("flatten_float32_view_t", "flatten", [make_in(arr("float32", (2, 3)), "t")], fl,
            {"start_axis": 0, "end_axis": -1})

    def sq(xs, p):
        return mx.squeeze(xs[0]) if p["axes"] == "all" else mx.squeeze(xs[0], axis=p["axes"])
    for dt in ("float32", "uint16"):
        x = arr(dt, (1, 3, 1, 2))
        for ax in ("all", [0], [0, 2], [-2], [1], [4]):
            rf.case("squeeze_%s_%s" % (dt, "all" if ax == "all" else "_".join(str(a).replace("-", "m") for a in ax)),
                    "squeeze", [x], sq, {"axes": ax})
    rf.case("squeeze_float32_0d", "squeeze", [arr("float32", ())], sq, {"axes": "all"})
    rf.case("squeeze_float32_111", "squeeze", [arr("float32", (1, 1, 1))], sq, {"axes": "all"})

    ed = lambda xs, p: mx.expand_dims(xs[0], p["axes"])
    for dt in ("float32", "bool"):
        x = arr(dt, (2, 3))
        for ax in ([0], [-1], [0, 2], [1, 1], [3], [-4], [0, 1, 2, 3], [-1, 0]):
            rf.case("expand_dims_%s_%s" % (dt, "_".join(str(a).replace("-", "m") for a in ax)),
                    "expand_dims", [x], ed, {"axes": ax})
    rf.case("expand_dims_float32_0d", "expand_dims", [arr("float32", ())], ed, {"axes": [0]})

    def tr(xs, p):
        return mx.transpose(xs[0]) if p["axes"] == "none" else mx.transpose(xs[0], p["axes"])
    for dt in dts:
        x = arr(dt, (2, 3, 4))
        for ax in ("none", [1, 0, 2], [2, 0, 1], [0, 0, 1], [0, 1], [-1, 0, 1], [0, 1, 3]):
            rf.case("transpose_%s_%s" % (dt, ax if ax == "none" else "_".join(str(a).replace("-", "m") for a in ax)),
                    "transpose", [x], tr, {"axes": ax})
    rf.case("transpose_float32_view_t", "transpose", [make_in(arr("float32", (2, 3, 4)), "t")], tr,
            {"axes": [1, 2, 0]})
    rf.case("transpose_float32_view_s", "transpose", [make_in(arr("float32", (2, 3)), "s")], tr,
            {"axes": "none"})

    sw = lambda xs, p: mx.swapaxes(xs[0], p["axis1"], p["axis2"])
    mv = lambda xs, p: mx.moveaxis(xs[0], p["source"], p["destination"])
    for dt in ("float32", "int32", "float16"):
        x = arr(dt, (2, 3, 4))
        for a1, a2 in ((0, 2), (-1, 0), (1, 1), (0, 3)):
            rf.case(("swapaxes_%s_%d_%d" % (dt, a1, a2)).replace("-", "m"), "swapaxes", [x], sw,
                    {"axis1": a1, "axis2": a2})
        for s, d in ((0, -1), (2, 0), (1, 1), (-3, 2), (3, 0)):
            rf.case(("moveaxis_%s_%d_%d" % (dt, s, d)).replace("-", "m"), "moveaxis", [x], mv,
                    {"source": s, "destination": d})

    bt = lambda xs, p: mx.broadcast_to(xs[0], p["shape"])
    for dt in ("float32", "uint8", "complex64"):
        for sin, sout in (((3,), (2, 3)), ((2, 1), (2, 4)), ((1,), (0,)), ((2,), (3,)),
                          ((), (2, 2)), ((1, 3), (2, 1, 3)), ((2, 3), (3,)), ((2, 1), (0, 2, 5))):
            rf.case("broadcast_to_%s_%s_to_%s" % (dt, shape_str(sin).replace(",", "x"),
                                                   shape_str(sout).replace(",", "x")),
                    "broadcast_to", [arr(dt, sin)], bt, {"shape": list(sout)})

    def sl(xs, p):
        idx = tuple(slice(a, b, c) for a, b, c in zip(p["start"], p["stop"], p["step"]))
        return xs[0][idx]
    for dt in dts:
        x = arr(dt, (5, 6))
        specs = [([0, 0], [5, 6], [1, 1]), ([0, 1], [5, 6], [2, 2]), ([4, 5], [-6, -7], [-1, -1]),
                 ([4, 5], [-6, -7], [-2, -3]), ([-1, -2], [0, 1], [-1, -2]), ([1, 2], [1, 2], [1, 1]),
                 ([3, 0], [1, 6], [1, 1]), ([-100, 2], [100, 4], [1, 1]), ([100, -100], [-100, 100], [-1, 3]),
                 ([2, 5], [3, 0], [1, -2])]
        # NB: a step of 0 is not recorded: MLX 0.32 loops forever on x[0:5:0].
        for i, (a, b, c) in enumerate(specs):
            rf.case("slice_%s_%d" % (dt, i), "slice", [x], sl, {"start": a, "stop": b, "step": c})
    x3 = arr("int32", (3, 4, 5))
    rf.case("slice_int32_3d", "slice", [x3], sl, {"start": [2, 0, 4], "stop": [-4, 4, -6], "step": [-1, 3, -2]})
    rf.case("slice_int32_3d_view_t", "slice", [make_in(arr("int32", (3, 4, 5)), "t")], sl,
            {"start": [0, 3, 1], "stop": [3, -5, 5], "step": [2, -1, 2]})
    rf.case("slice_float32_1d_view_s", "slice", [make_in(arr("float32", (7,)), "s")], sl,
            {"start": [5], "stop": [-8], "step": [-2]})
    return rf.write()


# ---------------------------------------------------------------------------
# 8. creation


def gen_creation():
    rf = RefFile("creation.ref", "creation ops (no inputs). arange/linspace params: start stop "
                 "step/num and dtype (the word 'none' = default); a float param is written with "
                 "a '.' or exponent (Python repr), an int param without")

    def ar(xs, p):
        kw = {} if p["dtype"] == "none" else {"dtype": MXD[p["dtype"]]}
        return mx.arange(p["start"], p["stop"], p["step"], **kw)
    specs = [(0, 10, 1), (0, 10, 3), (10, 0, -2), (0, 1, 0.1), (1.5, -2, -0.5), (0, 5, 1),
             (5, 0, 1), (0, 5, 0), (0.0, 5.0, 1.0), (-3, 3, 0.75), (0, 1, 0.3), (1, 2, 0.1),
             (0, 100, 7), (-5, -20, -3), (0.5, 0.5, 0.1), (0, -1.0, -0.25)]
    for dt in ("none", "int32", "float32", "float16", "bfloat16", "float64", "int8", "uint8",
               "int64", "uint32", "bool", "complex64"):
        for i, (a, b, c) in enumerate(specs):
            if dt not in ("none", "int32", "float32", "float64") and i > 8:
                continue
            rf.case("arange_%s_%d" % (dt, i), "arange", [], ar,
                    {"start": a, "stop": b, "step": c, "dtype": dt})

    def ls(xs, p):
        kw = {} if p["dtype"] == "none" else {"dtype": MXD[p["dtype"]]}
        return mx.linspace(p["start"], p["stop"], p["num"], **kw)
    for dt in ("none", "float32", "float16", "bfloat16", "float64", "int32", "uint8", "bool"):
        for i, (a, b, n) in enumerate(((0, 1, 5), (0, 1, 1), (0, 1, 0), (-1, 1, 7), (0, 10, 5),
                                       (10.0, -3.5, 6), (0, 1, -1), (0.1, 0.9, 9), (0, 255, 4))):
            rf.case("linspace_%s_%d" % (dt, i), "linspace", [], ls,
                    {"start": a, "stop": b, "num": n, "dtype": dt})

    def ey(xs, p):
        kw = {} if p["dtype"] == "none" else {"dtype": MXD[p["dtype"]]}
        m = None if p["m"] == "none" else p["m"]
        return mx.eye(p["n"], m, p["k"], **kw)
    for dt in ["none"] + DTYPES:
        rf.case("eye_%s_3" % dt, "eye", [], ey, {"n": 3, "m": "none", "k": 0, "dtype": dt})
    for n, m, k in ((3, 4, 1), (4, 3, -1), (3, 3, 5), (3, 3, -3), (0, 0, 0), (2, 5, 2), (1, 1, 0), (0, 3, 0)):
        for dt in ("float32", "int32", "bool"):
            rf.case("eye_%s_%d_%d_%s" % (dt, n, m, str(k).replace("-", "m")), "eye", [], ey,
                    {"n": n, "m": m, "k": k, "dtype": dt})
    rf.case("eye_float32_neg", "eye", [], ey, {"n": -1, "m": "none", "k": 0, "dtype": "float32"})

    def ide(xs, p):
        kw = {} if p["dtype"] == "none" else {"dtype": MXD[p["dtype"]]}
        return mx.identity(p["n"], **kw)
    for dt in ["none"] + DTYPES:
        rf.case("identity_%s_3" % dt, "identity", [], ide, {"n": 3, "dtype": dt})
    rf.case("identity_float32_0", "identity", [], ide, {"n": 0, "dtype": "float32"})

    def fu(xs, p):
        kw = {} if p["dtype"] == "none" else {"dtype": MXD[p["dtype"]]}
        return mx.full(p["shape"], p["value"], **kw)
    for dt in ["none"] + DTYPES:
        for v in (2, 2.5, True, -1, 300, NAN):
            rf.case("full_%s_%s" % (dt, str(v).replace("-", "m").replace(".", "p")), "full", [], fu,
                    {"shape": [2, 3], "value": v,
                     "value_type": "bool" if isinstance(v, bool) else "int" if isinstance(v, int) else "float",
                     "dtype": dt})
    for shp in ([], [0], [2, 0, 3], [4]):
        rf.case("full_float32_shape_%s" % ("x".join(map(str, shp)) or "0d"), "full", [], fu,
                {"shape": shp, "value": 1.25, "value_type": "float", "dtype": "float32"})
    rf.case("full_float32_negshape", "full", [], fu,
            {"shape": [2, -1], "value": 1.0, "value_type": "float", "dtype": "float32"})

    for name in ("zeros", "ones"):
        f = getattr(mx, name)

        def zo(xs, p, f=f):
            kw = {} if p["dtype"] == "none" else {"dtype": MXD[p["dtype"]]}
            return f(p["shape"], **kw)
        for dt in ["none"] + DTYPES:
            rf.case("%s_%s" % (name, dt), name, [], zo, {"shape": [2, 3], "dtype": dt})
        for shp in ([], [0], [3, 0], [5]):
            rf.case("%s_float32_shape_%s" % (name, "x".join(map(str, shp)) or "0d"), name, [], zo,
                    {"shape": shp, "dtype": "float32"})
    return rf.write()


GENERATORS = {
    "promotion": gen_promotion, "unary": gen_unary, "binary": gen_binary, "other": gen_other,
    "reduce": gen_reduce, "matmul": gen_matmul, "shape": gen_shape, "creation": gen_creation,
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", default="", help="comma-separated subset of: " + ",".join(GENERATORS))
    args = ap.parse_args()
    names = [n for n in args.only.split(",") if n] or list(GENERATORS)
    mx.set_default_device(mx.cpu)
    total = 0
    for n in names:
        total += GENERATORS[n]()
    print("total %d bytes" % total)


if __name__ == "__main__":
    main()
