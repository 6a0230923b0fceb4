#!/usr/bin/env python3
"""Writes a Llama checkpoint of a published shape with random weights (the
benchmarks' models; nothing is downloaded): config.json and safetensors in
bfloat16, made with transformers' LlamaForCausalLM on the GPU when there is
one. Usage: python3 tools/make_random_llama.py --shape 1b|3b|8b --out DIR"""
import argparse
import json
import os

import torch
import transformers

SHAPES = {
    # Llama-3.2-1B and -3B, Llama-3.1-8B (hidden, layers, heads, kv heads, intermediate, tied)
    "1b": (2048, 16, 32, 8, 8192, True),
    "3b": (3072, 28, 24, 8, 8192, True),
    "4b": (3072, 36, 24, 8, 9216, True),
    "8b": (4096, 32, 32, 8, 14336, False),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", default="1b", choices=sorted(SHAPES))
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    h, layers, heads, kv, inter, tied = SHAPES[a.shape]
    cfg = transformers.LlamaConfig(
        vocab_size=128256, hidden_size=h, num_hidden_layers=layers, num_attention_heads=heads,
        num_key_value_heads=kv, intermediate_size=inter, tie_word_embeddings=tied,
        rope_theta=500000.0, max_position_embeddings=8192, rms_norm_eps=1e-5,
        rope_scaling={"rope_type": "llama3", "factor": 32.0, "low_freq_factor": 1.0,
                      "high_freq_factor": 4.0, "original_max_position_embeddings": 8192},
        torch_dtype="bfloat16")
    torch.manual_seed(0)
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    with torch.device(dev):
        model = transformers.LlamaForCausalLM(cfg).to(torch.bfloat16)
    model.save_pretrained(a.out, safe_serialization=True)
    with open(os.path.join(a.out, "config.json")) as f:
        c = json.load(f)
    print(f"wrote {a.out}: {a.shape}, {sum(p.numel() for p in model.parameters()) / 1e9:.2f} B parameters, "
          f"transformers {transformers.__version__}, model_type {c['model_type']}")


if __name__ == "__main__":
    main()
