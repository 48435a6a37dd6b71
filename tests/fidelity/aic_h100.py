#!/usr/bin/env python3
"""Compare llmsim's predicted mean TTFT and TPOT with the measured H100 serving runs of
../shared/data/validation/aic-silicon-h100.csv (development data: AIConfigurator's silicon
rows of vLLM, SGLang and TensorRT-LLM; see its SOURCE.md).

Each aggregated row becomes a closed loop of `batch_size` clients sending fixed isl/osl
requests, the row's model, precision and layout on h100-sxm, the
scheduler closest to the row's engine (vLLM V1 and TensorRT-LLM: chunked prefill mixed with
decodes in a budget of 8192 tokens; SGLang: prefill-first batches of up to 8192 tokens) and
cost_model.engine set to the row's backend. Rows llmsim cannot express are counted and listed
with the reason, never dropped silently.

Clients: llmsim's closed loop starts every client at t = 0 and, with fixed lengths, keeps them
in lock-step (every request arrives with all the others: the engines issue), which measured
clients do not. By default the harness therefore runs the desynchronised equivalent: requests
arriving at a constant rate lambda with lambda = clients / E2E(lambda) (Little's law at the
closed loop's steady state), found by fixed-point iteration from the lock-step run's E2E; it
uses only predictions, never the measured latencies. --lockstep reports the closed loop as
llmsim runs it today.

Until `llmsim validate` lands this is how the cost model is measured:
    tests/fidelity/aic_h100.py [--llmsim build/llmsim] [--jobs 2] [--csv out.csv]
prints per-group error tables (median |error|, p90, worst, signed median) for TTFT and TPOT.
"""
import argparse
import csv
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DATA = os.environ.get("LLMSIM_SHARED_DIR", os.path.join(ROOT, "..", "shared")) + "/data"

MODELS = {
    "meta-llama/Llama-3.1-8B-Instruct": "llama-3.1-8b",
    "meta-llama/Llama-3.1-70B": "llama-3.1-70b",
    "Qwen/Qwen3-32B": "qwen3-32b",
    "Qwen/Qwen3-235B-A22B-FP8": DATA + "/models/qwen3-235b-a22b-fp8/config.json",
    "MiniMaxAI/MiniMax-M2.5": DATA + "/models/minimax-m2.5/config.json",
    "openai/gpt-oss-120b": "gpt-oss-120b",
}


def num(v, default=0):
    try:
        return int(float(v))
    except (TypeError, ValueError):
        return default


def scenario(row, cost_key=True, rate=None):
    """The scenario text of a row, or (None, reason) when llmsim cannot express it."""
    if row["mode"] != "agg":
        return None, "disaggregated serving (prefill and decode pools) is not modelled"
    model = MODELS.get(row["model_path"])
    if not model:
        return None, "model %s is not in the catalog or the shared configs" % row["model_path"]
    tp = num(row["tp_size"], 1)
    dp = max(1, num(row["attention_dp_size"], 1))
    mtp, mep = num(row["moe_tp_size"], 0), num(row["moe_ep_size"], 0)
    is_moe = "235B" in row["model_path"] or "MiniMax" in row["model_path"] or "gpt-oss" in row["model_path"]
    ep = 1
    if is_moe:
        if mep > 1 and mtp > 1:
            return None, "experts split both ways (moe_tp %d x moe_ep %d): llmsim spreads them one way" % (mtp, mep)
        ep = mep if mep > 1 else 1
    prec = row["precision"]
    dtype = {"": "bf16", "fp8": "fp8", "fp4": "mxfp4"}.get(prec)
    if dtype is None:
        return None, "precision %s" % prec
    if row["model_path"].endswith("-FP8") or row["model_path"].endswith("gpt-oss-120b"):
        dtype = None  # the checkpoint's own
    conc, isl, osl = num(row["batch_size"]), num(row["isl"]), num(row["osl"])
    backend = row["backend"]
    if backend == "sglang":
        sched = "{name: vllm, max_num_seqs: %d, max_num_batched_tokens: 8192}" % max(256, conc)
    else:
        sched = "{name: chunked, token_budget: 8192, max_num_seqs: %d}" % max(256, conc)
    lines = [
        "name: aic-%s" % row["id"][:40],
        "seed: 1",
        "model: %s" % model,
        "gpu: h100-sxm",
        "tensor_parallel: %d" % tp,
    ]
    if dtype:
        lines.append("dtype: %s" % dtype)
    if dp > 1:
        lines.append("data_parallel_attention: %d" % dp)
    if ep > 1:
        lines.append("expert_parallel: %d" % ep)
    lines += [
        "scheduler: %s" % sched,
        "cost_model: {engine: %s}" % backend if cost_key else "",
        "memory: {max_model_len: %d}" % (isl + osl + 16),
        "workload:",
        "  num_requests: %d" % (8 * conc if rate is None else 8 * conc + 16),
        ("  arrival: {process: closed, concurrency: %d, think_time_ms: 0}" % conc if rate is None
         else "  arrival: {process: constant, rate: %.9g}" % rate),
        "  prompt_tokens: %d" % isl,
        "  output_tokens: %d" % osl,
    ]
    return "\n".join(lines) + "\n", None


def simulate(llmsim, text):
    """(summary dict, None) or (None, the reason llmsim gave)."""
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write(text)
        path = f.name
    try:
        p = subprocess.run([llmsim, "run", path, "--no-db", "--json", "--quiet"],
                           capture_output=True, text=True, timeout=600)
    finally:
        os.unlink(path)
    if p.returncode != 0:
        msg = (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1]
        msg = re.sub(r"^(llmsim: )?\S*\.yaml(:\d+)?: ", "", msg)
        msg = re.sub(r"\d+", "N", msg)
        return None, "llmsim refused: " + msg[:160]
    return json.loads(p.stdout), None


def run(llmsim, row, cost_key, lockstep):
    text, why = scenario(row, cost_key)
    if text is None:
        return row, None, why
    out, why = simulate(llmsim, text)
    if out is None:
        return row, None, why
    if not lockstep:
        conc = num(row["batch_size"])
        rate = conc / (out["mean_e2el_ms"] / 1e3)
        for _ in range(6):
            nxt, why = simulate(llmsim, scenario(row, cost_key, rate)[0])
            if nxt is None:
                return row, None, why
            out = nxt
            target = conc / (out["mean_e2el_ms"] / 1e3)
            if abs(target / rate - 1) < 0.01:
                break
            rate = (rate * target) ** 0.5
    return row, (out["mean_ttft_ms"], out["mean_tpot_ms"]), None


def stats(errs):
    a = sorted(abs(e) for e in errs)
    p90 = a[min(len(a) - 1, int(round(0.9 * len(a))) - 1)] if a else float("nan")
    return (len(errs), statistics.median(a), p90, a[-1], statistics.median(errs))


def table(title, groups):
    print("\n%s" % title)
    print("%-44s %5s %9s %9s %9s %9s" % ("group", "rows", "med|e|%", "p90|e|%", "worst%", "signed%"))
    allv = []
    for g in sorted(groups):
        e = groups[g]
        allv += e
        n, med, p90, worst, signed = stats(e)
        print("%-44s %5d %9.1f %9.1f %9.1f %+9.1f" % (g, n, 100 * med, 100 * p90, 100 * worst, 100 * signed))
    if allv:
        n, med, p90, worst, signed = stats(allv)
        print("%-44s %5d %9.1f %9.1f %9.1f %+9.1f" % ("all", n, 100 * med, 100 * p90, 100 * worst, 100 * signed))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--llmsim", default=os.path.join(ROOT, "build", "llmsim"))
    ap.add_argument("--data", default=DATA + "/validation/aic-silicon-h100.csv")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--csv", help="write per-row predictions here")
    ap.add_argument("--only", help="substring of the row id to keep")
    ap.add_argument("--check-tpot", type=float, metavar="PCT",
                    help="exit 1 when the median |TPOT error| over every row exceeds PCT")
    ap.add_argument("--lockstep", action="store_true",
                    help="the closed loop as llmsim runs it (clients in lock-step)")
    ap.add_argument("--no-cost-model", action="store_true",
                    help="leave out the cost_model key (for a binary older than it)")
    a = ap.parse_args()
    if not os.path.exists(a.data):
        print("skipped: %s is absent" % a.data)
        return 77
    rows = list(csv.DictReader(open(a.data)))
    if a.only:
        rows = [r for r in rows if a.only in r["id"]]
    with ThreadPoolExecutor(a.jobs) as ex:
        results = list(ex.map(lambda r: run(a.llmsim, r, not a.no_cost_model, a.lockstep), rows))
    ttft, tpot, skipped = {}, {}, {}
    w = csv.writer(open(a.csv, "w")) if a.csv else None
    if w:
        w.writerow(["id", "backend", "model", "tp", "dp", "ep", "conc", "isl", "osl",
                    "ttft_meas", "ttft_pred", "tpot_meas", "tpot_pred"])
    for row, pred, why in results:
        if pred is None:
            skipped.setdefault(why, []).append(row["id"])
            continue
        g = "%s %s %s" % (row["backend"], row["model_path"].split("/")[-1], row["precision"] or "bf16")
        mt, mp = float(row["silicon_ttft_ms"]), float(row["silicon_tpot_ms"])
        ttft.setdefault(g, []).append((pred[0] - mt) / mt)
        tpot.setdefault(g, []).append((pred[1] - mp) / mp)
        if w:
            w.writerow([row["id"], row["backend"], row["model_path"], row["tp_size"],
                        row["attention_dp_size"], row["moe_ep_size"], row["batch_size"], row["isl"],
                        row["osl"], mt, "%.3f" % pred[0], mp, "%.4f" % pred[1]])
    table("TPOT (mean), error = predicted / measured - 1", tpot)
    table("TTFT (mean), error = predicted / measured - 1", ttft)
    print("\nrows not expressed: %d of %d" % (sum(len(v) for v in skipped.values()), len(rows)))
    for why in sorted(skipped, key=lambda k: -len(skipped[k])):
        print("  %4d  %s" % (len(skipped[why]), why))
    if a.check_tpot is not None:
        errs = [e for v in tpot.values() for e in v]
        med = 100 * stats(errs)[1] if errs else float("inf")
        if not med <= a.check_tpot:
            print("FAILED: median |TPOT error| %.1f%% > %.1f%%" % (med, a.check_tpot))
            return 1
        print("median |TPOT error| %.1f%% <= %.1f%%" % (med, a.check_tpot))
    return 0


if __name__ == "__main__":
    sys.exit(main())
