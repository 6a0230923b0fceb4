#!/usr/bin/env python3
"""Records mlx-lm's samplers and logits processors for tests/lm/sample_test.cpp.

For seeded random logits, each case gives the filtered log-probabilities
(apply_top_k / top_p / min_p as masks of kept positions), 24 tokens drawn
one call at a time after mx.random.seed(seed) from make_sampler(...), and
the outputs of make_logits_processors(...). Writes
tests/refs/lm_samplers/refs.json. Run: python3 tools/record_mlx_lm_samplers.py
"""
import json
import os

import mlx.core as mx
import mlx_lm
import numpy as np
from mlx_lm.sample_utils import (apply_min_p, apply_top_k, apply_top_p,
                                 make_logits_processors, make_sampler)

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "refs", "lm_samplers", "refs.json")


def hexf(a):
    return np.asarray(a, dtype=np.float32).tobytes().hex()


def main():
    rng = np.random.default_rng(7)
    logits = (rng.standard_normal((1, 96)) * 3).astype(np.float32)
    x = mx.array(logits)
    lp = x - mx.logsumexp(x, axis=-1, keepdims=True)
    filters = []
    for name, fn in [("top_k", lambda v: apply_top_k(v, 5)), ("top_p", lambda v: apply_top_p(v, 0.7)),
                     ("min_p", lambda v: apply_min_p(v, 0.1)), ("min_p_keep", lambda v: apply_min_p(v, 0.9, 4))]:
        out = np.array(fn(lp))
        filters.append({"name": name, "kept": [int(i) for i in np.nonzero(np.isfinite(out[0]))[0]]})
    samplers = []
    configs = [
        {"temp": 0.0}, {"temp": 1.0}, {"temp": 0.7, "top_k": 8}, {"temp": 1.0, "top_p": 0.8},
        {"temp": 0.9, "min_p": 0.05}, {"temp": 1.2, "top_p": 0.9, "top_k": 20, "min_p": 0.02},
    ]
    for cfg in configs:
        mx.random.seed(1234)
        s = make_sampler(**cfg)
        toks = [int(s(lp).item()) for _ in range(24)]
        samplers.append({"options": cfg, "seed": 1234, "tokens": toks})
    procs = []
    history = [3, 5, 5, 9, 3, 40, 41, 3]
    for cfg in [{"repetition_penalty": 1.3, "repetition_context_size": 5},
                {"presence_penalty": 0.5}, {"frequency_penalty": 0.25},
                {"logit_bias": {4: 2.0, 10: -1.5}}]:
        ps = make_logits_processors(**cfg)
        out = mx.array(logits)  # processors write into their input
        for p in ps:
            out = p(mx.array(history), out)
        procs.append({"options": cfg, "history": history, "logits_f32_hex": hexf(np.array(out))})
    refs = {
        "generator": "tools/record_mlx_lm_samplers.py",
        "versions": {"mlx": mx.__version__, "mlx_lm": mlx_lm.__version__, "numpy": np.__version__},
        "logits_shape": list(logits.shape), "logits_f32_hex": hexf(logits),
        "filters": filters, "samplers": samplers, "processors": procs,
    }
    with open(OUT, "w") as f:
        json.dump(refs, f, indent=1)


if __name__ == "__main__":
    main()
