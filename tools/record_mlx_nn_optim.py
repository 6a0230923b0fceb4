#!/usr/bin/env python3
"""Records mlx.optimizers (every optimizer, the schedules, clip_grad_norm)
on the CPU into tests/refs/nn_optim.ref, for tests/nn/optimizers_test.cpp.

Usage: python3 tools/record_mlx_nn_optim.py   (pip install "mlx[cpu]==0.32.4")

Cases (values from numpy Generators seeded by a CRC32 of the case id, so a
rerun with the same versions gives the same bytes):
- opt_<Class>_<variant>: op = the class name; params = the constructor's
  keyword arguments as given (absent ones take MLX's defaults; lists as
  "a,b"; "schedule" names a learning-rate schedule of SCHEDULES instead of
  a number), "slots_w" / "slots_b" = the state slots of each parameter
  (sorted). Inputs: the parameters w, b (float32), then the gradients of
  the 10 steps (g_w, g_b per step). Outputs, after step 1 and again after
  step 10: w, b, the slots of w, the slots of b (sorted by name), the
  optimizer's step and learning_rate.
- opt_<Class>_err_*: invalid constructor arguments (err: MLX's message).
- sched_<name>: a schedule's values at steps 0..N (a uint64 step array
  each, as the optimizer passes) stacked in one output; params = its
  arguments. sched_*_err_*: invalid arguments.
- clip_*: clip_grad_norm of the list [w, b]: outputs the clipped leaves
  and the total norm; param max_norm.
- multi_adam_sgd: MultiOptimizer([Adam(0.01, bias_correction=True),
  SGD(0.1, momentum=0.9)], [ndim >= 2]) over 10 steps as opt_*; outputs
  after steps 1 and 10: w, b, states.0.w.m, states.0.w.v, states.0.step,
  states.0.learning_rate, states.1.b.v, states.1.step,
  states.1.learning_rate.
The file format is tools/record_mlx_refs.py's.
"""
import math
import os
import sys

import numpy as np
import mlx.core as mx
import mlx.optimizers as optim

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import record_mlx_refs as R  # noqa: E402

mx.set_default_device(mx.cpu)
STEPS = 10

# Learning-rate schedules referred to by name (tests/nn/optimizers_test.cpp
# builds the same ones).
SCHEDULES = {
    "cosine": lambda: optim.cosine_decay(0.05, 8, 0.005),
    "warmup_cosine": lambda: optim.join_schedules(
        [optim.linear_schedule(0.0, 0.05, 3), optim.cosine_decay(0.05, 8)], [3]),
    "step": lambda: optim.step_decay(0.1, 0.5, 3),
}

# (class, variant, kwargs, shape of w)
W = (3, 4)
OPTS = [
    ("SGD", "plain", {"learning_rate": 0.1}, W),
    ("SGD", "momentum", {"learning_rate": 0.1, "momentum": 0.9}, W),
    ("SGD", "dampening", {"learning_rate": 0.1, "momentum": 0.9, "dampening": 0.3}, W),
    ("SGD", "nesterov", {"learning_rate": 0.05, "momentum": 0.8, "nesterov": True}, W),
    ("SGD", "wd", {"learning_rate": 0.1, "momentum": 0.5, "weight_decay": 0.01}, W),
    ("SGD", "wd_plain", {"learning_rate": 0.1, "weight_decay": 0.1}, W),
    ("SGD", "sched", {"schedule": "step", "momentum": 0.9}, W),
    ("RMSprop", "default", {"learning_rate": 0.01}, W),
    ("RMSprop", "alpha", {"learning_rate": 0.02, "alpha": 0.9, "eps": 1e-6}, W),
    ("Adagrad", "default", {"learning_rate": 0.1}, W),
    ("Adagrad", "eps", {"learning_rate": 0.1, "eps": 1e-3}, W),
    ("AdaDelta", "default", {"learning_rate": 1.0}, W),
    ("AdaDelta", "rho", {"learning_rate": 0.5, "rho": 0.95, "eps": 1e-5}, W),
    ("Adam", "default", {"learning_rate": 0.01}, W),
    ("Adam", "bias", {"learning_rate": 0.01, "bias_correction": True}, W),
    ("Adam", "betas", {"learning_rate": 0.01, "betas": [0.8, 0.99], "eps": 1e-6}, W),
    ("Adam", "sched", {"schedule": "warmup_cosine"}, W),
    ("AdamW", "default", {"learning_rate": 0.01}, W),
    ("AdamW", "bias", {"learning_rate": 0.01, "weight_decay": 0.1, "bias_correction": True}, W),
    ("AdamW", "sched", {"schedule": "cosine", "betas": [0.9, 0.99], "weight_decay": 0.1}, W),
    ("Adamax", "default", {"learning_rate": 0.01}, W),
    ("Adamax", "betas", {"learning_rate": 0.02, "betas": [0.8, 0.9], "eps": 1e-4}, W),
    ("Lion", "default", {"learning_rate": 0.001}, W),
    ("Lion", "wd", {"learning_rate": 0.001, "betas": [0.95, 0.98], "weight_decay": 0.1}, W),
    ("Lion", "sched", {"schedule": "cosine", "weight_decay": 0.05}, W),
    ("Adafactor", "default", {}, W),
    ("Adafactor", "lr", {"learning_rate": 0.01, "relative_step": False}, W),
    ("Adafactor", "beta1", {"beta_1": 0.9, "weight_decay": 0.1}, W),
    ("Adafactor", "warmup", {"warmup_init": True, "scale_parameter": False}, W),
    ("Adafactor", "clip", {"learning_rate": 0.05, "relative_step": False, "clip_threshold": 0.5,
                           "decay_rate": -0.5, "eps": [1e-20, 1e-2]}, W),
    ("Adafactor", "3d", {"beta_1": 0.5}, (2, 3, 4)),
    ("Adafactor", "sched", {"schedule": "cosine", "relative_step": False}, W),
    ("Muon", "default", {"learning_rate": 0.02}, W),
    ("Muon", "plain", {"learning_rate": 0.02, "nesterov": False, "weight_decay": 0.0,
                       "momentum": 0.9, "ns_steps": 3}, W),
    ("Muon", "tall", {"learning_rate": 0.02}, (5, 3)),
    ("Muon", "3d", {"learning_rate": 0.02}, (2, 3, 4)),
]

ERRS = [
    ("SGD", "nesterov", {"learning_rate": 0.1, "nesterov": True}),
    ("SGD", "nesterov_damp", {"learning_rate": 0.1, "momentum": 0.9, "dampening": 0.1,
                              "nesterov": True}),
    ("RMSprop", "alpha", {"learning_rate": 0.1, "alpha": -0.1}),
    ("RMSprop", "eps", {"learning_rate": 0.1, "eps": 0.0}),
    ("Adagrad", "eps", {"learning_rate": 0.1, "eps": -1.0}),
    ("AdaDelta", "rho", {"learning_rate": 0.1, "rho": -0.5}),
    ("AdaDelta", "eps", {"learning_rate": 0.1, "eps": 0.0}),
    ("Adam", "beta1", {"learning_rate": 0.1, "betas": [1.0, 0.999]}),
    ("Adam", "beta2", {"learning_rate": 0.1, "betas": [0.9, -0.1]}),
    ("Adam", "eps", {"learning_rate": 0.1, "eps": -1e-8}),
    ("AdamW", "beta1", {"learning_rate": 0.1, "betas": [1.5, 0.999]}),
    ("Adamax", "beta2", {"learning_rate": 0.1, "betas": [0.9, 1.0]}),
    ("Lion", "beta1", {"learning_rate": 0.1, "betas": [-0.1, 0.99]}),
]


def fmt_kwargs(kw):
    """The constructor's arguments as params (lists as "a,b")."""
    out = {}
    for k, v in kw.items():
        if isinstance(v, (list, tuple)):
            out[k] = ",".join(repr(float(x)) for x in v)
        else:
            out[k] = v
    return out


def make_opt(cls, kw):
    kw = dict(kw)
    if "schedule" in kw:
        kw["learning_rate"] = SCHEDULES[kw.pop("schedule")]()
    return getattr(optim, cls)(**kw)


def slot_arrays(opt):
    out = []
    for p in ("w", "b"):
        st = opt.state[p]
        out += [st[k] for k in sorted(st)]
    return out


def gen_opts(f):
    for cls, variant, kw, wshape in OPTS:
        cid = "opt_%s_%s" % (cls, variant)
        rng = R.rng_for(cid)
        w = R.mk(rng.standard_normal(wshape), "float32")
        b = R.mk(rng.standard_normal((4,)), "float32")
        grads = []
        for _ in range(STEPS):
            grads.append(R.mk(rng.standard_normal(wshape), "float32"))
            grads.append(R.mk(0.5 * rng.standard_normal((4,)), "float32"))
        probe = make_opt(cls, kw)
        probe.init({"w": w, "b": b})
        params = fmt_kwargs(kw)
        params["slots_w"] = ",".join(sorted(probe.state["w"]))
        params["slots_b"] = ",".join(sorted(probe.state["b"]))

        def fn(vals, p, cls=cls, kw=kw):
            opt = make_opt(cls, kw)
            tree = {"w": vals[0], "b": vals[1]}
            outs = []
            for i in range(STEPS):
                g = {"w": vals[2 + 2 * i], "b": vals[3 + 2 * i]}
                tree = opt.apply_gradients(g, tree)
                mx.eval(tree, opt.state)
                if i == 0 or i == STEPS - 1:
                    outs += [tree["w"], tree["b"]] + slot_arrays(opt)
                    outs += [opt.state["step"], opt.state["learning_rate"]
                             if "learning_rate" in opt.state else mx.array(0.0)]
            return outs

        f.case(cid, cls, [w, b] + grads, fn, params)
    for cls, variant, kw in ERRS:
        cid = "opt_%s_err_%s" % (cls, variant)
        f.case(cid, cls, [], lambda vals, p, cls=cls, kw=kw: [make_opt(cls, kw).state["step"]],
               fmt_kwargs(kw))


SCHED_CASES = [
    ("exponential_decay", "a", {"init": 0.1, "decay_rate": 0.9}, 30),
    ("exponential_decay", "b", {"init": 2.5, "decay_rate": 0.5}, 30),
    ("step_decay", "a", {"init": 0.1, "decay_rate": 0.9, "step_size": 10}, 40),
    ("step_decay", "b", {"init": 1.0, "decay_rate": 0.3, "step_size": 1}, 20),
    ("cosine_decay", "a", {"init": 0.1, "decay_steps": 1000}, 30),
    ("cosine_decay", "b", {"init": 0.05, "decay_steps": 8, "end": 0.005}, 20),
    ("cosine_decay", "c", {"init": 1e-3, "decay_steps": 7, "end": 1e-4}, 12),
    ("linear_schedule", "a", {"init": 0.0, "end": 0.1, "steps": 100}, 120),
    ("linear_schedule", "b", {"init": 1.0, "end": 0.25, "steps": 7}, 12),
    ("join_schedules", "warmup_cosine", {}, 20),
    ("join_schedules", "three", {}, 20),
]

SCHED_ERRS = [
    ("step_decay", {"init": 0.1, "decay_rate": 0.9, "step_size": 0}),
    ("cosine_decay", {"init": 0.1, "decay_steps": 0}),
    ("linear_schedule", {"init": 0.1, "end": 0.0, "steps": 0}),
]


def make_sched(name, variant, kw):
    if name != "join_schedules":
        return getattr(optim, name)(**kw)
    if variant == "warmup_cosine":
        return SCHEDULES["warmup_cosine"]()
    return optim.join_schedules(
        [optim.linear_schedule(0.0, 1.0, 4), optim.exponential_decay(1.0, 0.8),
         optim.cosine_decay(0.5, 5, 0.1)], [4, 9])


def gen_scheds(f):
    for name, variant, kw, n in SCHED_CASES:
        cid = "sched_%s_%s" % (name, variant)

        def fn(vals, p, name=name, variant=variant, kw=kw, n=n):
            s = make_sched(name, variant, kw)
            return [mx.stack([s(mx.array(i, mx.uint64)) for i in range(n + 1)])]

        params = dict(kw)
        params["steps_recorded"] = n + 1
        f.case(cid, name, [], fn, params)
    for name, kw in SCHED_ERRS:
        f.case("sched_%s_err" % name, name, [], lambda v, p, name=name, kw=kw: [
            make_sched(name, "", kw)(mx.array(0, mx.uint64))], kw)
    # join_schedules' checks
    f.case("sched_join_schedules_err_empty", "join_schedules", [],
           lambda v, p: [optim.join_schedules([], [])(mx.array(0, mx.uint64))])
    f.case("sched_join_schedules_err_count", "join_schedules", [],
           lambda v, p: [optim.join_schedules([optim.exponential_decay(0.1, 0.9)], [3])(
               mx.array(0, mx.uint64))])


CLIPS = [
    ("clip_big", 1.0, 3.0, "float32"),    # norm above max_norm: scaled
    ("clip_small", 100.0, 0.5, "float32"),  # norm below: unchanged
    ("clip_zero", 0.0, 1.0, "float32"),
    ("clip_equalish", 2.0, 0.35, "float32"),
    ("clip_half", 1.0, 50.0, "float16"),  # squares summed in float32
    ("clip_bf16", 0.5, 4.0, "bfloat16"),
]


def gen_clip(f):
    for cid, max_norm, scale, dtype in CLIPS:
        rng = R.rng_for(cid)
        w = R.mk(scale * rng.standard_normal((3, 4)), dtype)
        b = R.mk(scale * rng.standard_normal((4,)), dtype)

        def fn(vals, p, max_norm=max_norm):
            clipped, norm = optim.clip_grad_norm(list(vals), max_norm)
            return clipped + [norm]

        f.case(cid, "clip_grad_norm", [w, b], fn, {"max_norm": max_norm})
    f.case("clip_err_negative", "clip_grad_norm", [R.mk(np.ones(3), "float32")],
           lambda v, p: list(optim.clip_grad_norm(list(v), -1.0)[0]), {"max_norm": -1.0})


def gen_multi(f):
    """MultiOptimizer([Adam, SGD], [ndim >= 2]): Adam takes w, SGD b."""
    cid = "multi_adam_sgd"
    rng = R.rng_for(cid)
    w = R.mk(rng.standard_normal(W), "float32")
    b = R.mk(rng.standard_normal((4,)), "float32")
    grads = []
    for _ in range(STEPS):
        grads.append(R.mk(rng.standard_normal(W), "float32"))
        grads.append(R.mk(0.5 * rng.standard_normal((4,)), "float32"))

    def fn(vals, p):
        opt = optim.MultiOptimizer(
            [optim.Adam(0.01, bias_correction=True), optim.SGD(0.1, momentum=0.9)],
            [lambda path, g: g.ndim >= 2])
        tree = {"w": vals[0], "b": vals[1]}
        outs = []
        for i in range(STEPS):
            tree = opt.apply_gradients({"w": vals[2 + 2 * i], "b": vals[3 + 2 * i]}, tree)
            mx.eval(tree, opt.state)
            if i == 0 or i == STEPS - 1:
                s0, s1 = opt.state["states"]
                assert sorted(k for k in s0 if k not in ("step", "learning_rate")) == ["w"]
                assert sorted(k for k in s1 if k not in ("step", "learning_rate")) == ["b"]
                outs += [tree["w"], tree["b"], s0["w"]["m"], s0["w"]["v"], s0["step"],
                         s0["learning_rate"], s1["b"]["v"], s1["step"], s1["learning_rate"]]
        return outs

    f.case(cid, "MultiOptimizer", [w, b] + grads, fn, {"optimizers": "Adam,SGD"})


def main():
    f = R.RefFile("nn_optim.ref", "mlx.optimizers: optimizers over 10 steps, schedules, "
                  "clip_grad_norm (tools/record_mlx_nn_optim.py)")
    gen_opts(f)
    gen_scheds(f)
    gen_clip(f)
    gen_multi(f)
    f.write()


if __name__ == "__main__":
    main()
