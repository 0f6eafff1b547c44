#!/usr/bin/env python3
"""kt_compare.py — Kernel Tuner's own strategies replayed on the same brute-forced spaces, scored
like `rooftune replay`: evaluations (unique configurations, failures included) until one within
EPS of the file's optimum, median and p90 over seeds, misses counting as 2x the budget.

Needs `pip install kernel_tuner` (not a rooftune dependency).  Kernel Tuner reads plain JSON, so
each .json.gz is decompressed to a temporary folder first.

usage: kt_compare.py [--seeds N] [--budget B] [--strategies a,b,...] FILE.json.gz ...
"""
import argparse, gzip, json, os, random, statistics, sys, tempfile, time

import numpy as np
from kernel_tuner.interface import tune_cache


def percentile(v, q):
    v = sorted(v)
    pos = q / 100 * (len(v) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--budget", type=int, default=1000)
    ap.add_argument("--eps", type=float, default=0.05)
    ap.add_argument("--strategies", default="random_sample,genetic_algorithm,greedy_ils,"
                    "simulated_annealing,dual_annealing,basinhopping,diff_evo,pso,mls")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp()
    for f in a.files:
        d = json.load(gzip.open(f) if f.endswith(".gz") else open(f))
        if "cache" not in d:
            print(f"{os.path.basename(f)}: not a Kernel Tuner cache file, skipped")
            continue
        times = {k: v["time"] for k, v in d["cache"].items() if isinstance(v["time"], (int, float))}
        opt = min(times.values())
        target = opt * (1 + a.eps)
        plain = os.path.join(tmp, os.path.basename(f).replace(".gz", ""))
        with open(plain, "w") as out:
            json.dump(d, out)
        name = os.path.basename(f).split(".json")[0]
        for s in a.strategies.split(","):
            needs = []
            t0 = time.time()
            for seed in range(a.seeds):
                random.seed(seed)
                np.random.seed(seed)
                try:
                    res, _ = tune_cache(plain, strategy=s, verbose=False, quiet=True,
                                        strategy_options={"max_fevals": a.budget},
                                        objective="time", objective_higher_is_better=False)
                except Exception as e:  # a strategy that cannot run here is reported, not fatal
                    print(f"{name} {s}: {type(e).__name__}: {e}")
                    needs = None
                    break
                seen, hit = [], None
                keys = d["tune_params_keys"]
                for r in res:
                    key = ",".join(str(r[k]) for k in keys)
                    if key in seen:
                        continue
                    seen.append(key)
                    t = r.get("time")
                    if isinstance(t, (int, float)) and t <= target:
                        hit = len(seen)
                        break
                needs.append(hit if hit is not None and hit <= a.budget else 2 * a.budget)
            if needs is None:
                continue
            reached = sum(1 for n in needs if n <= a.budget) / len(needs)
            print(f"{name:26s} {s:20s} median {statistics.median(needs):8.1f} p90 "
                  f"{percentile(needs, 90):8.1f} reached {100 * reached:4.0f}%  ({time.time() - t0:.0f}s)",
                  flush=True)


if __name__ == "__main__":
    main()
