#!/usr/bin/env python3
"""Fit the per-kernel-class constants of calibration/roofline.c on the development data: the A100
per-operator tables Vidur publishes (../shared/data/vidur, read in place).

Every operator time is modelled as a smooth maximum of three terms,
    t = (F^p + (flops / (peak x e_c))^p + (bytes / (bw x e_m))^p)^(1/p),
with F the class's floor (the time of a kernel doing nothing useful: launch, ramp and tail),
e_c and e_m the fractions of the datasheet peak and bandwidth the class reaches, and one
exponent p for every class (p -> infinity is max(); p = 2 is the issue's root of squares).
FLOPs and bytes are counted exactly as roofline.c counts them for one GPU's shard (A100-80GB:
312 TFLOP/s bf16, 2039 GB/s). The fit minimises the mean |log(predicted / measured)| over a
class's points by coordinate search on a log grid; it prints the constants and the error table
the C test (tests/test_fidelity_ops.c) then checks on the C implementation.

    tests/fidelity/fit_vidur_ops.py [--data ../shared/data/vidur]
"""
import argparse
import csv
import glob
import math
import os
import statistics
import sys

PEAK = 312e12
LINK = 300e9
# the causal square of a chunk costs its full square (masked tiles are not skipped): 2 is the
# physical reading, the full square computed; 1 and 1.5 fit worse (median |error| of
# attn_prefill about 10% and 7% against 4.3%)
CAUSAL_WEIGHT = 2.0
BW = 2039e9
ACT = 2.0

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT = os.path.join(HERE, "..", "..", "..", "shared", "data", "vidur")

GEMM = {"attn_pre_proj", "attn_post_proj", "mlp_up_proj", "mlp_down_proj"}
ELEM = {"input_layernorm": "norm", "post_attention_layernorm": "norm", "attn_rope": "rope",
        "mlp_act": "act", "add": "add", "emb": "embed"}


def shard(row, tp):
    h = int(row["n_embd"])
    nh = int(row["n_head"]) // tp
    nkv = max(1, int(row["n_kv_head"]) // tp)
    d = h // int(row["n_head"])
    inter = int(row["n_expanded_embd"]) // tp
    gated = row["use_gated_mlp"] == "True"
    return h, nh, nkv, d, inter, gated


def mlp_points(data, gpu="a100"):
    """(class, flops, bytes, measured seconds) of every mlp.csv operator point."""
    pts = []
    for path in glob.glob(os.path.join(data, "data/profiling/compute/%s/*/*/mlp.csv" % gpu)):
        seen = {}
        for row in csv.DictReader(open(path)):
            tp = int(row["num_tensor_parallel_workers"])
            n = int(row["num_tokens"])
            h, nh, nkv, d, inter, gated = shard(row, tp)
            g = 2 if gated else 1
            shapes = {
                "attn_pre_proj": (h, (nh + 2 * nkv) * d),
                "attn_post_proj": (nh * d, h),
                "mlp_up_proj": (h, g * inter),
                "mlp_down_proj": (inter, h),
            }
            for op in list(GEMM) + list(ELEM):
                v = row.get("time_stats.%s.median" % op)
                if not v:
                    continue
                t = float(v) * 1e-3
                if t <= 0:
                    continue
                if op in GEMM:
                    k, o = shapes[op]
                    f, b, cls = 2.0 * n * k * o, 2.0 * k * o + ACT * n * (k + o), "gemm"
                else:
                    cls = ELEM[op]
                    f = 0.0
                    if cls == "norm":
                        b = ACT * (2 * n * h + h)
                    elif cls == "rope":
                        b = ACT * 2 * n * (nh + nkv) * d
                    elif cls == "act":
                        b = ACT * n * (g * inter + inter)
                    elif cls == "add":
                        b = ACT * 3 * n * h
                    else:
                        b = ACT * 2 * n * h
                key = (op, tp, n)
                seen.setdefault(key, []).append((cls, f, b, t))
        model = os.path.basename(os.path.dirname(path))
        for vals in seen.values():  # repeated shapes averaged, as the C import does
            cls, f, b = vals[0][:3]
            pts.append((cls, f, b, sum(x[3] for x in vals) / len(vals), model))
    return pts


def attention_points(data):
    path = os.path.join(data, "history/commit-acb95f6_2024-05-08/data/profiling/a100/attention.csv")
    pts, seen = [], {}
    if not os.path.exists(path):
        return pts
    for row in csv.DictReader(open(path)):
        tp = int(row["num_tensor_parallel_workers"])
        h = int(row["n_embd"])
        nh, nkv = int(row["n_q_head"]) // tp, max(1, int(row["n_kv_head"]) // tp)
        d = h // int(row["n_q_head"])
        c = int(row["kv_cache_size"])
        if row["is_prefill"] == "True":
            v = row["time_stats.attn_prefill.median"]
            if not v or row["batch_size"] != "1":
                continue
            q = int(row["prefill_chunk_size"])
            # the causal square of the chunk and its rectangle over the cached context run
            # at different efficiencies: FLOPs of the square weighted by CAUSAL_WEIGHT; each
            # query row costs ROW_KEYS keys more (fitted, the `em` slot of this class), and the
            # bytes through HBM (Q, O, keys and values once) run at the GEMM class's e_m,
            # overlapped with the compute (the larger of the two, not a smooth sum)
            causal, ctx = q * (q + 1) / 2, q * c
            f = 4.0 * nh * d * (ctx + CAUSAL_WEIGHT * causal)
            b = ACT * 2 * q * nh * d + ACT * 2 * nkv * d * (c + q) + ACT * 2 * nkv * d * q
            key = ("prefill", q, c)
            cls = "attn_prefill"
            f = (f, 4.0 * nh * d * q, b)
            b = 0.0
        else:
            v = row["time_stats.attn_decode.median"]
            if not v:
                continue
            s = int(row["batch_size"])
            pairs = s * c
            f = 4.0 * nh * d * pairs
            b = ACT * 2 * s * nh * d + ACT * 2 * nkv * d * pairs + ACT * 2 * nkv * d * s
            key = ("decode", s, c)
            cls = "attn_decode"
        t = float(v) * 1e-3
        if t > 0:
            seen.setdefault(key, []).append((cls, f, b, t))
    for vals in seen.values():
        pts.append((vals[0][0], vals[0][1], vals[0][2], sum(x[3] for x in vals) / len(vals)))
    return pts


def network_points(data):
    """NCCL all-reduce on a DGX A100 (NVLink 300 GB/s per direction), rows within one node:
    bytes on the ring 2 (T - 1) / T x size, scaled by the A100's bandwidth ratio so the bytes
    term reads as a fraction of the link (BW / LINK)."""
    path = os.path.join(data, "data/profiling/network/a100_dgx/all_reduce.csv")
    pts = []
    if not os.path.exists(path):
        return pts
    for row in csv.DictReader(open(path)):
        w = int(row["num_workers"])
        if w != int(row["devices_per_node"]) or w < 2:
            continue
        size = float(row["size"])
        ring = 2.0 * (w - 1) / w * size * BW / LINK
        pts.append(("allreduce", 0.0, ring, float(row["time_stats.all_reduce.median"]) * 1e-3))
    return pts


# the GEMM class's e_m, at which prefill attention's bytes run (set by main once fitted)
GEMM_EM = [0.770]


def model(pt, F, ec, em, p):
    f, b = pt[1], pt[2]
    if isinstance(f, tuple):  # attn_prefill: em is its row overhead in keys (see above)
        f, b = f[0] + em * f[1], f[2]
        return max((F ** p + (f / (PEAK * ec)) ** p) ** (1.0 / p), b / (BW * GEMM_EM[0]))
    terms = [F]
    if f > 0:
        terms.append(f / (PEAK * ec))
    terms.append(b / (BW * em))
    return sum(x ** p for x in terms) ** (1.0 / p)


def loss(pts, F, ec, em, p):
    return sum(abs(math.log(model(x, F, ec, em, p) / x[3])) for x in pts) / len(pts)


def fit(pts, p, fit_ec, start):
    """Coordinate search of (F, e_c, e_m) on log grids, p fixed."""
    F, ec, em = start
    best = loss(pts, F, ec, em, p)
    for step in (1.5, 1.2, 1.05, 1.01):
        improved = True
        while improved:
            improved = False
            for which in ("F", "ec", "em") if fit_ec else ("F", "em"):
                for mult in (step, 1 / step):
                    cand = {"F": F, "ec": ec, "em": em}
                    cand[which] *= mult
                    row_keys = isinstance(pts[0][1], tuple)
                    if cand["ec"] > 1 or (cand["em"] > 1 and not row_keys):
                        continue
                    l = loss(pts, cand["F"], cand["ec"], cand["em"], p)
                    if l < best - 1e-12:
                        best, F, ec, em = l, cand["F"], cand["ec"], cand["em"]
                        improved = True
    return F, ec, em, best


def table(name, pts, F, ec, em, p):
    e = [model(x, F, ec, em, p) / x[3] - 1 for x in pts]
    a = sorted(abs(x) for x in e)
    return "%-13s %6d  F %6.2f us  e_c %.3f  e_m %.3f   med|e| %5.1f%%  p90 %5.1f%%  signed %+5.1f%%" % (
        name, len(pts), F * 1e6, ec, em, 100 * a[len(a) // 2], 100 * a[int(0.9 * len(a)) - 1],
        100 * statistics.median(e))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=DEFAULT)
    ap.add_argument("--p", type=float, nargs="*", default=[1.5, 2, 3, 4, 6])
    ap.add_argument("--holdout", action="store_true",
                    help="fit the mlp.csv classes on the Llama models, report on the others")
    ap.add_argument("--gpu", default="a100", choices=("a100", "a40"),
                    help="a40: the GDDR6 tables (NVIDIA A40 datasheet: 149.7 TFLOPS bf16 "
                         "dense, 696 GB/s), mlp.csv only, for roofline.c's GDDR classes")
    a = ap.parse_args()
    if not os.path.isdir(a.data):
        print("skipped: %s is absent" % a.data)
        return 77
    global PEAK, BW
    if a.gpu == "a40":
        PEAK, BW = 149.7e12, 696e9
        pts = mlp_points(a.data, "a40")
    else:
        pts = mlp_points(a.data) + attention_points(a.data) + network_points(a.data)
    if a.holdout:
        train = [x for x in pts if len(x) > 4 and "lama" in x[4] and "Code" not in x[4]]
        test = [x for x in pts if len(x) > 4 and not ("lama" in x[4] and "Code" not in x[4])]
        for p in a.p:
            print("\np = %g: fitted on %s, held out: %s" % (
                p, sorted(set(x[4] for x in train)), sorted(set(x[4] for x in test))))
            every = []
            for c in sorted(set(x[0] for x in train)):
                tr = [x for x in train if x[0] == c]
                te = [x for x in test if x[0] == c]
                F, ec, em, l = fit(tr, p, c == "gemm", (3e-6, 0.7, 0.8))
                every += [abs(model(x, F, ec, em, p) / x[3] - 1) for x in te]
                print("  held out " + table(c, te, F, ec, em, p))
            every.sort()
            print("  held-out median |error| over %d points %.1f%%" % (
                len(every), 100 * every[len(every) // 2]))
        return 0
    classes = sorted(set(x[0] for x in pts), key=lambda c: c != "gemm")  # gemm first
    by = {c: [x for x in pts if x[0] == c] for c in classes}
    for p in a.p:
        print("\np = %g" % p)
        total, every = 0, []
        for c in classes:
            fit_ec = c in ("gemm", "attn_prefill", "attn_decode")
            F, ec, em, l = fit(by[c], p, fit_ec, (3e-6, 0.7, 300 if c == "attn_prefill" else 0.8))
            if c == "gemm":
                GEMM_EM[0] = em
            total += l * len(by[c])
            every += [abs(model(x, F, ec, em, p) / x[3] - 1) for x in by[c]]
            print("  " + table(c, by[c], F, ec, em, p))
        every.sort()
        print("  mean |log error| %.4f, median |error| over all %d points %.1f%%" % (
            total / len(pts), len(every), 100 * every[len(every) // 2]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
