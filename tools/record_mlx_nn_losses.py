#!/usr/bin/env python3
"""Records mlx.nn's activations (functions and layer classes) and
mlx.nn.losses on the CPU into tests/refs/nn_losses.ref, for
tests/nn/activations_test.cpp and tests/nn/losses_test.cpp.

Usage: python3 tools/record_mlx_nn_losses.py   (pip install "mlx[cpu]==0.32.4")

Cases (inputs from numpy Generators seeded by a CRC32 of the case id, so a
rerun with the same versions gives the same bytes):
- act_<fn>_*: every activation function of mlx.nn on random float32 inputs
  (and float16 / bfloat16 for the common ones, int32 where MLX accepts it),
  with its options, and on the edge values (nan, +-inf, +-0, huge, tiny).
  op = the function's name; inputs x (and alpha for prelu); params = the
  function's keyword arguments.
- layer_<Class>_*: the layer classes, op "layer", param cls = the class
  name, the constructor's arguments as params; outputs the layer's output
  (PReLU: its weight, then the output).
- loss_<fn>_*: every loss of mlx.nn.losses, op = the loss's name, the array
  arguments as inputs in MLX's positional order (weights last, when the
  param weights is true), the other arguments as params; reductions none,
  mean, sum; edge values; invalid calls (err: MLX's ValueError text).
The file format is tools/record_mlx_refs.py's.
"""
import math
import os
import sys

import numpy as np
import mlx.core as mx
import mlx.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import record_mlx_refs as R  # noqa: E402

mx.set_default_device(mx.cpu)

EDGE = [float("nan"), float("inf"), -float("inf"), -0.0, 0.0, 1.0, -1.0, 0.5, -0.5, 2.5,
        -2.5, 6.0, 1e10, -1e10, 1e-10, -1e-30, 100.0, -100.0, 3.0, -3.0, 0.25, -6.0, 20.0, -20.0]

# (name, options to record: list of kwargs dicts, dtypes)
HALF = ["float32", "float16", "bfloat16"]
ACTS = [
    ("sigmoid", [{}], HALF),
    ("relu", [{}], HALF + ["int32"]),
    ("relu2", [{}], HALF),
    ("relu6", [{}], HALF + ["int32"]),
    ("leaky_relu", [{}, {"negative_slope": 0.2}], ["float32", "bfloat16"]),
    ("log_softmax", [{}, {"axis": 0}], HALF),
    ("elu", [{}, {"alpha": 0.5}], HALF),
    ("softmax", [{}, {"axis": 0}], ["float32"]),
    ("softplus", [{}], HALF),
    ("softsign", [{}], ["float32", "float16"]),
    ("softshrink", [{}, {"lambd": 1.25}], ["float32"]),
    ("celu", [{}, {"alpha": 2.5}], ["float32", "float16"]),
    ("silu", [{}], HALF),
    ("log_sigmoid", [{}], HALF),
    ("gelu", [{}], HALF),
    ("gelu_approx", [{}], HALF),
    ("gelu_fast_approx", [{}], HALF),
    ("glu", [{}, {"axis": 0}], ["float32", "float16"]),
    ("step", [{}, {"threshold": 0.3}], ["float32", "int32"]),
    ("selu", [{}], HALF),
    ("mish", [{}], HALF),
    ("hardswish", [{}], HALF),
    ("hard_tanh", [{}, {"min_val": -0.5, "max_val": 2.0}], ["float32", "float16"]),
    ("hard_shrink", [{}, {"lambd": 1.25}], ["float32"]),
    ("softmin", [{}, {"axis": 0}], ["float32"]),
    ("tanh", [{}], HALF),
]


def act_input(rng, dtype, shape=(6, 34)):
    if dtype == "int32":
        return R.mk(rng.integers(-9, 10, shape), "int32")
    v = rng.uniform(-7.0, 7.0, shape)
    v[0, :8] = rng.uniform(-0.05, 0.05, 8)  # near zero, where the shapes bend
    return R.mk(v, dtype)


def gen_activations(f):
    for name, options, dtypes in ACTS:
        fn = getattr(nn, name)
        for k, opts in enumerate(options):
            for dtype in dtypes:
                cid = "act_%s_o%d_%s" % (name, k, dtype)
                x = act_input(R.rng_for(cid), dtype)
                f.case(cid, name, [x], lambda v, p, fn=fn, opts=opts: fn(v[0], **opts), opts)
            # edge values: a [4, 6] block (rows of softmax hold inf and nan)
            cid = "act_%s_o%d_edge" % (name, k)
            x = R.mk(np.array(EDGE).reshape(4, 6), "float32")
            f.case(cid, name, [x], lambda v, p, fn=fn, opts=opts: fn(v[0], **opts), opts)
    # a 3-d input, the middle axis
    for name in ["softmax", "log_softmax", "softmin", "glu"]:
        cid = "act_%s_3d_axis1" % name
        x = R.mk(R.rng_for(cid).uniform(-4, 4, (3, 4, 5)), "float32")
        f.case(cid, name, [x], lambda v, p, fn=getattr(nn, name): fn(v[0], axis=1), {"axis": 1})
    # prelu: per-channel, one slope, and float16
    for cid, shape, ashape, dtype in [("act_prelu_channels", (5, 7), (7,), "float32"),
                                      ("act_prelu_one", (5, 7), (1,), "float32"),
                                      ("act_prelu_half", (5, 7), (7,), "float16")]:
        rng = R.rng_for(cid)
        x = R.mk(rng.uniform(-5, 5, shape), dtype)
        a = R.mk(rng.uniform(0, 0.5, ashape), dtype)
        f.case(cid, "prelu", [x, a], lambda v, p: nn.prelu(v[0], v[1]))
    # glu over an odd axis: MLX's split fails
    f.case("act_glu_odd", "glu", [mx.ones((3, 5))], lambda v, p: nn.glu(v[0]), {})


LAYERS = [
    ("Sigmoid", {}), ("Mish", {}), ("ReLU", {}), ("ReLU2", {}), ("ReLU6", {}),
    ("LeakyReLU", {}), ("LeakyReLU", {"negative_slope": 0.3}), ("ELU", {}), ("ELU", {"alpha": 0.7}),
    ("Softmax", {}), ("Softplus", {}), ("Softsign", {}), ("Softshrink", {}),
    ("Softshrink", {"lambd": 0.9}), ("CELU", {}), ("CELU", {"alpha": 1.5}), ("SiLU", {}),
    ("LogSoftmax", {}), ("LogSigmoid", {}), ("PReLU", {}), ("PReLU", {"num_parameters": 10, "init": 0.1}),
    ("GELU", {}), ("GELU", {"approx": "precise"}), ("GELU", {"approx": "tanh"}),
    ("GELU", {"approx": "fast"}), ("Tanh", {}), ("Hardswish", {}), ("Step", {}),
    ("Step", {"threshold": 0.5}), ("SELU", {}), ("HardTanh", {}), ("HardShrink", {}),
    ("HardShrink", {"lambd": 0.2}), ("Softmin", {}), ("GLU", {}), ("GLU", {"axis": 0}),
]


def gen_layers(f):
    for k, (cls, args) in enumerate(LAYERS):
        cid = "layer_%s_%d" % (cls, k)
        x = R.mk(R.rng_for(cid).uniform(-4, 4, (4, 10)), "float32")
        params = dict(cls=cls, **args)

        def fn(v, p, cls=cls, args=args):
            layer = getattr(nn, cls)(**args)
            y = layer(v[0])
            return [layer.weight, y] if cls == "PReLU" else y

        f.case(cid, "layer", [x], fn, params)
    f.case("layer_GELU_bad", "layer", [mx.ones((2,))], lambda v, p: nn.GELU(approx="erf")(v[0]),
           {"cls": "GELU", "approx": "erf"})


REDUCTIONS = ["none", "mean", "sum"]
L = nn.losses


def normal(rng, shape, scale=1.0, dtype="float32"):
    return R.mk(rng.standard_normal(shape) * scale, dtype)


def log_probs(rng, shape, axis=-1):
    return nn.log_softmax(mx.array(rng.standard_normal(shape).astype(np.float32) * 2), axis=axis)


def gen_cross_entropy(f):
    def case(cid, ins, weights=False, axis=-1, ls=0.0, reduction="none"):
        params = {"weights": weights, "axis": axis, "label_smoothing": ls, "reduction": reduction}

        def fn(v, p):
            w = v[2] if weights else None
            return L.cross_entropy(v[0], v[1], weights=w, axis=axis, label_smoothing=ls,
                                   reduction=reduction)

        f.case(cid, "cross_entropy", ins, fn, params)

    for red in REDUCTIONS:
        for ls in [0.0, 0.1, 0.35]:
            for wt in [False, True]:
                cid = "loss_ce_idx_%s_ls%g_w%d" % (red, ls, wt)
                rng = R.rng_for(cid)
                ins = [normal(rng, (8, 11), 3.0), R.mk(rng.integers(0, 11, (8,)), "int32")]
                if wt:
                    ins.append(R.mk(rng.uniform(0, 2, (8,)), "float32"))
                case(cid, ins, wt, -1, ls, red)
                cid = "loss_ce_prob_%s_ls%g_w%d" % (red, ls, wt)
                rng = R.rng_for(cid)
                probs = mx.softmax(mx.array(rng.standard_normal((8, 11)).astype(np.float32)), axis=-1)
                ins = [normal(rng, (8, 11), 3.0), probs]
                if wt:
                    ins.append(R.mk(rng.uniform(0, 2, (8,)), "float32"))
                case(cid, ins, wt, -1, ls, red)
    # the class axis first, a 3-d batch, uint32 / int64 targets, one-hot targets
    rng = R.rng_for("loss_ce_axis0")
    case("loss_ce_axis0", [normal(rng, (11, 8), 2.0), R.mk(rng.integers(0, 11, (8,)), "int32")], axis=0)
    case("loss_ce_axis0_ls", [normal(rng, (11, 8), 2.0), R.mk(rng.integers(0, 11, (8,)), "int32")],
         axis=0, ls=0.2, reduction="mean")
    rng = R.rng_for("loss_ce_3d")
    case("loss_ce_3d", [normal(rng, (2, 3, 7), 2.0), R.mk(rng.integers(0, 7, (2, 3)), "int32")])
    case("loss_ce_3d_axis1", [normal(rng, (2, 7, 3), 2.0), R.mk(rng.integers(0, 7, (2, 3)), "int32")],
         axis=1, ls=0.1)
    case("loss_ce_uint32", [normal(rng, (5, 6)), R.mk(rng.integers(0, 6, (5,)), "uint32")], reduction="sum")
    case("loss_ce_int64", [normal(rng, (5, 6)), R.mk(rng.integers(0, 6, (5,)), "int64")], reduction="mean")
    onehot = R.mk(np.eye(6)[rng.integers(0, 6, (5,))], "float32")
    case("loss_ce_onehot", [normal(rng, (5, 6)), onehot])
    # large logits (the shift keeps them finite), -inf logits off the target
    big = rng.standard_normal((4, 9)) * 1e4
    case("loss_ce_large", [R.mk(big, "float32"), R.mk(rng.integers(0, 9, (4,)), "int32")])
    ninf = rng.standard_normal((3, 5))
    ninf[:, 4] = -np.inf
    case("loss_ce_neginf", [R.mk(ninf, "float32"), R.mk(np.array([0, 1, 2]), "int32")])
    # 16-bit logits: MLX's CPU computes in the logits' dtype
    for dtype in ["float16", "bfloat16"]:
        rng = R.rng_for("loss_ce_" + dtype)
        case("loss_ce_" + dtype, [normal(rng, (6, 10), 2.0, dtype), R.mk(rng.integers(0, 10, (6,)), "int32")],
             reduction="none")
        case("loss_ce_%s_ls" % dtype,
             [normal(rng, (6, 10), 2.0, dtype), R.mk(rng.integers(0, 10, (6,)), "int32")], ls=0.1)
    # invalid calls
    x, t = mx.zeros((4, 5)), mx.zeros((4,), dtype=mx.int32)
    case("loss_ce_err_ls_one", [x, t], ls=1.0)
    case("loss_ce_err_ls_negative", [x, t], ls=-0.1)
    case("loss_ce_err_targets", [x, mx.zeros((5,), dtype=mx.int32)])
    case("loss_ce_err_probs", [x, mx.zeros((4, 6))])
    case("loss_ce_err_weights", [x, t, mx.ones((5,))], weights=True)
    case("loss_ce_err_reduction", [x, t], reduction="avg")


def gen_bce(f):
    def case(cid, ins, weights=False, with_logits=True, reduction="mean"):
        params = {"weights": weights, "with_logits": with_logits, "reduction": reduction}

        def fn(v, p):
            w = v[2] if weights else None
            return L.binary_cross_entropy(v[0], v[1], weights=w, with_logits=with_logits,
                                          reduction=reduction)

        f.case(cid, "binary_cross_entropy", ins, fn, params)

    for red in REDUCTIONS:
        for logits in [True, False]:
            for wt in [False, True]:
                cid = "loss_bce_%s_l%d_w%d" % (red, logits, wt)
                rng = R.rng_for(cid)
                x = normal(rng, (4, 7), 3.0) if logits else R.mk(rng.uniform(0.01, 0.99, (4, 7)), "float32")
                ins = [x, R.mk(rng.integers(0, 2, (4, 7)), "float32")]
                if wt:
                    ins.append(R.mk(rng.uniform(0, 2, (4, 7)), "float32"))
                case(cid, ins, wt, logits, red)
    rng = R.rng_for("loss_bce_int_targets")
    case("loss_bce_int_targets", [normal(rng, (9,)), R.mk(rng.integers(0, 2, (9,)), "int32")], reduction="none")
    # probabilities of exactly 0 and 1: the logs clip at -100
    p = R.mk(np.array([0.0, 1.0, 0.0, 1.0, 0.5, 1e-30]), "float32")
    t = R.mk(np.array([0.0, 1.0, 1.0, 0.0, 1.0, 1.0]), "float32")
    case("loss_bce_prob_edges", [p, t], with_logits=False, reduction="none")
    xl = R.mk(np.array([-100.0, 100.0, 0.0, -1e4, 1e4, -0.0]), "float32")
    case("loss_bce_logit_edges", [xl, t], reduction="none")
    case("loss_bce_err_shape", [mx.zeros((3,)), mx.zeros((4,))])
    case("loss_bce_err_weights", [mx.zeros((3,)), mx.zeros((3,)), mx.ones((2,))], weights=True)
    case("loss_bce_err_reduction", [mx.zeros((3,)), mx.zeros((3,))], reduction="max")


def gen_simple(f):
    """Losses of (a, b) plus scalar options."""

    def case(cid, op, ins, kw):
        f.case(cid, op, ins, lambda v, p: getattr(L, op)(*v, **kw), kw)

    for red in REDUCTIONS:
        for op, default_opts in [("l1_loss", [{}]), ("mse_loss", [{}]),
                                 ("smooth_l1_loss", [{}, {"beta": 0.4}, {"beta": 2.5}]),
                                 ("huber_loss", [{}, {"delta": 0.3}, {"delta": 2.0}]),
                                 ("log_cosh_loss", [{}]), ("hinge_loss", [{}])]:
            for k, opts in enumerate(default_opts):
                cid = "loss_%s_%s_o%d" % (op, red, k)
                rng = R.rng_for(cid)
                a = normal(rng, (5, 6), 1.5)
                if op == "hinge_loss":
                    b = R.mk(rng.choice([-1.0, 1.0], (5, 6)), "float32")
                else:
                    b = normal(rng, (5, 6), 1.5)
                case(cid, op, [a, b], dict(opts, reduction=red))
    rng = R.rng_for("loss_edges")
    big = R.mk(np.array([100.0, -100.0, 1e-4, 0.0, 50.0, -0.0]), "float32")
    zero = R.mk(np.zeros(6), "float32")
    for op in ["l1_loss", "mse_loss", "smooth_l1_loss", "huber_loss", "log_cosh_loss", "hinge_loss"]:
        case("loss_%s_edges" % op, op, [big, zero], {"reduction": "none"})
    # broadcasting where MLX's formula broadcasts, int targets for hinge
    case("loss_hinge_loss_int_targets", "hinge_loss",
         [normal(rng, (4, 3)), R.mk(rng.choice([-1, 1], (4, 3)), "int32")], {"reduction": "none"})
    case("loss_huber_loss_broadcast", "huber_loss", [normal(rng, (4, 3)), normal(rng, (3,))],
         {"reduction": "none"})
    case("loss_log_cosh_loss_broadcast", "log_cosh_loss", [normal(rng, (4, 3)), normal(rng, (4, 1))],
         {"reduction": "mean"})
    # 16-bit
    for op in ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"]:
        case("loss_%s_float16" % op, op, [normal(rng, (8,), 1.0, "float16"), normal(rng, (8,), 1.0, "float16")],
             {"reduction": "none"})
    # invalid calls
    for op in ["l1_loss", "mse_loss", "smooth_l1_loss"]:
        case("loss_%s_err_shape" % op, op, [mx.zeros((2, 3)), mx.zeros((3, 2))], {})
    for op in ["l1_loss", "hinge_loss", "huber_loss", "log_cosh_loss"]:
        case("loss_%s_err_reduction" % op, op, [mx.zeros((2,)), mx.zeros((2,))], {"reduction": "median"})


def gen_axis_losses(f):
    def case(cid, op, ins, kw):
        f.case(cid, op, ins, lambda v, p: getattr(L, op)(*v, **kw), kw)

    for red in REDUCTIONS:
        cid = "loss_nll_%s" % red
        rng = R.rng_for(cid)
        case(cid, "nll_loss", [log_probs(rng, (7, 5)), R.mk(rng.integers(0, 5, (7,)), "int32")],
             {"reduction": red})
        cid = "loss_kl_%s" % red
        rng = R.rng_for(cid)
        case(cid, "kl_div_loss", [log_probs(rng, (6, 4)), log_probs(rng, (6, 4))], {"reduction": red})
        for k, opts in enumerate([{}, {"p": 1}, {"p": 3, "margin": 0.5}, {"margin": 4.0, "eps": 1e-3}]):
            cid = "loss_triplet_%s_o%d" % (red, k)
            rng = R.rng_for(cid)
            ins = [normal(rng, (5, 8)), normal(rng, (5, 8)), normal(rng, (5, 8))]
            case(cid, "triplet_loss", ins, dict(opts, reduction=red))
        for k, opts in enumerate([{}, {"eps": 0.5}]):
            cid = "loss_cosine_%s_o%d" % (red, k)
            rng = R.rng_for(cid)
            case(cid, "cosine_similarity_loss", [normal(rng, (4, 6)), normal(rng, (4, 6))],
                 dict(opts, reduction=red))
        for k, opts in enumerate([{}, {"margin": 0.5}]):
            cid = "loss_margin_%s_o%d" % (red, k)
            rng = R.rng_for(cid)
            ins = [normal(rng, (9,)), normal(rng, (9,)), R.mk(rng.choice([-1.0, 1.0], (9,)), "float32")]
            case(cid, "margin_ranking_loss", ins, dict(opts, reduction=red))
        for k, opts in enumerate([{}, {"full": True}, {"eps": 0.3}]):
            cid = "loss_gaussian_%s_o%d" % (red, k)
            rng = R.rng_for(cid)
            v = rng.uniform(0.05, 2.0, (4, 5))
            v[0, :3] = [0.0, 1e-9, 1e-7]
            ins = [normal(rng, (4, 5)), normal(rng, (4, 5)), R.mk(v, "float32")]
            case(cid, "gaussian_nll_loss", ins, dict(opts, reduction=red))
    rng = R.rng_for("loss_axis0")
    case("loss_nll_axis0", "nll_loss", [log_probs(rng, (5, 7), 0), R.mk(rng.integers(0, 5, (7,)), "int32")],
         {"axis": 0})
    case("loss_nll_3d", "nll_loss", [log_probs(rng, (2, 3, 5)), R.mk(rng.integers(0, 5, (2, 3)), "int32")], {})
    case("loss_kl_axis0", "kl_div_loss", [log_probs(rng, (4, 6), 0), log_probs(rng, (4, 6), 0)], {"axis": 0})
    case("loss_triplet_axis0", "triplet_loss", [normal(rng, (8, 5)), normal(rng, (8, 5)), normal(rng, (8, 5))],
         {"axis": 0})
    case("loss_cosine_axis0", "cosine_similarity_loss", [normal(rng, (6, 4)), normal(rng, (6, 4))],
         {"axis": 0})
    case("loss_cosine_axis_last", "cosine_similarity_loss", [normal(rng, (2, 3, 4)), normal(rng, (2, 3, 4))],
         {"axis": -1})
    zeros = R.mk(np.zeros((3, 4)), "float32")
    case("loss_cosine_zero", "cosine_similarity_loss", [zeros, normal(rng, (3, 4))], {})
    case("loss_margin_int_targets", "margin_ranking_loss",
         [normal(rng, (6,)), normal(rng, (6,)), R.mk(rng.choice([-1, 1], (6,)), "int32")], {})
    case("loss_margin_err_shape", "margin_ranking_loss", [mx.zeros((3,)), mx.zeros((3,)), mx.zeros((4,))], {})
    case("loss_gaussian_err_targets", "gaussian_nll_loss", [mx.zeros((3,)), mx.zeros((4,)), mx.ones((3,))], {})
    case("loss_gaussian_err_vars", "gaussian_nll_loss", [mx.zeros((3,)), mx.zeros((3,)), mx.ones((2,))], {})
    case("loss_kl_err_reduction", "kl_div_loss", [mx.zeros((2, 3)), mx.zeros((2, 3))], {"reduction": "all"})
    case("loss_triplet_err_reduction", "triplet_loss", [mx.zeros((2, 3))] * 3, {"reduction": "x"})


def main():
    f = R.RefFile("nn_losses.ref", "mlx.nn activations (functions and layers) and mlx.nn.losses on the CPU")
    f.lines[2] = "# generated by tools/record_mlx_nn_losses.py; do not edit"
    gen_activations(f)
    gen_layers(f)
    gen_cross_entropy(f)
    gen_bce(f)
    gen_simple(f)
    gen_axis_losses(f)
    f.write()


if __name__ == "__main__":
    main()
