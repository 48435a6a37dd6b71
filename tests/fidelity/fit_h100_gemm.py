#!/usr/bin/env python3
"""Fit Hopper's GEMM compute fraction (calibration/roofline.c, K_HBM_HOPPER) on the H100 GEMMs
llmsim measured: profiles/cuda-h100-*.csv (catalog models at TP1) and profiles/shards/ (one
GPU's share of a tensor-parallel layer, its config.json beside it), each taken with
`llmsim calibrate --backend cuda --grid full` on one H100 80GB HBM3 (cuBLAS 13, bf16).

The roofline prices a GEMM of n rows, k inputs and o outputs as the smooth maximum
    t = (F^1.5 + (2nko / (peak x e_c))^1.5 + (bytes / (bw x e_m))^1.5)^(1/1.5)
with bytes = 2ko + 2n(k + o), F the A100 floor scaled to Hopper's clock, e_m the A100 fit's.
Only e_c is fitted, on the points of 1,280 rows or more (where the compute term dominates),
minimising the mean |log(predicted / measured)|; Qwen3-8B and Llama-3.1-405B's TP8 shard are
held out. Prints the fraction and the error by row range for it and for the A100 fit's 0.728.

    tests/fidelity/fit_h100_gemm.py
"""
import csv
import glob
import json
import math
import os
import statistics

PEAK, BW, ACT = 989.4e12, 3.35e12, 2.0
FLOOR = 9930e-9 * 1.41 / 1.83
E_M, E_C_A100 = 0.770, 0.728
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..", "profiles")
CATALOG = {  # hidden, heads, kv heads, head_dim, intermediate (the catalog's config.json)
    "llama-3.1-8b": (4096, 32, 8, 128, 14336),
    "qwen3-8b": (4096, 32, 8, 128, 12288),
    "qwen3-32b": (5120, 64, 8, 128, 25600),
    "llama-3.1-70b": (8192, 64, 8, 128, 28672),
}
HELD = ("qwen3-8b", "llama-3.1-405b-tp8-shard")


def dims(model, folder):
    if model in CATALOG:
        return CATALOG[model]
    c = json.load(open(os.path.join(folder, model, "config.json")))
    return (c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"],
            c["intermediate_size"])


def points():
    pts = []
    for path in sorted(glob.glob(os.path.join(ROOT, "*.csv")) +
                       glob.glob(os.path.join(ROOT, "shards", "*.csv"))):
        lines = open(path).read().splitlines()
        model = next(l.split(": ", 1)[1] for l in lines if l.startswith("# model: "))
        h, nh, nkv, d, inter = dims(model, os.path.dirname(path))
        shapes = {"qkv_proj": (h, (nh + 2 * nkv) * d), "o_proj": (nh * d, h),
                  "mlp_up_gate": (h, 2 * inter), "mlp_down": (inter, h)}
        for r in csv.DictReader(l for l in lines if not l.startswith("#")):
            if r["op"] in shapes:
                k, o = shapes[r["op"]]
                n = float(r["x"])
                pts.append((model, n, 2 * n * k * o, 2 * k * o + ACT * n * (k + o),
                            float(r["t_ns"]) * 1e-9))
    return pts


def predict(ec, flops, byts):
    return (FLOOR ** 1.5 + (flops / (PEAK * ec)) ** 1.5 + (byts / (BW * E_M)) ** 1.5) ** (1 / 1.5)


def summary(ec, sel):
    e = sorted(predict(ec, f, b) / t - 1 for _, _, f, b, t in sel)
    a = sorted(abs(x) for x in e)
    return "%4d points: median |e| %4.1f%%, p90 %4.1f%%, signed median %+5.1f%%" % (
        len(e), 100 * a[len(a) // 2], 100 * a[int(0.9 * len(a))], 100 * e[len(e) // 2])


def main():
    pts = points()
    train = [p for p in pts if p[0] not in HELD and p[1] >= 1280]
    loss = lambda ec: statistics.mean(abs(math.log(predict(ec, f, b) / t))
                                      for _, _, f, b, t in train)
    ec = min((k / 1000 for k in range(600, 950)), key=loss)
    print("GEMM points: %d from %d layers; e_c fitted on %d points: %.3f" % (
        len(pts), len({p[0] for p in pts}), len(train), ec))
    for lo, hi in ((1, 64), (96, 1024), (1280, 8192)):
        sel = [p for p in pts if lo <= p[1] <= hi]
        print("rows %4d-%-4d  e_c %.3f: %s" % (lo, hi, ec, summary(ec, sel)))
        print("               e_c %.3f: %s" % (E_C_A100, summary(E_C_A100, sel)))
    held = [p for p in pts if p[0] in HELD and p[1] >= 1280]
    print("held out, 1,280+ rows: e_c %.3f: %s" % (ec, summary(ec, held)))
    print("                       e_c %.3f: %s" % (E_C_A100, summary(E_C_A100, held)))


if __name__ == "__main__":
    main()
