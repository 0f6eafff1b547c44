# space_fixture.py — writes a synthetic Kernel Tuner cache of 4 parameters (10 x 10 x 10 x 3 =
# 3000 configurations, some failed) to the path given: the recorded space the reliability
# tests replay-tune into databases.
import json, random, sys
random.seed(7)
keys = ["a", "b", "c", "d"]
dom = {"a": list(range(1, 11)), "b": list(range(1, 11)), "c": list(range(1, 11)), "d": [1, 2, 4]}
cache = {}
for a in dom["a"]:
    for b in dom["b"]:
        for c in dom["c"]:
            for d in dom["d"]:
                t = random.uniform(1, 10) if (a * b + c) % 17 else "RuntimeFailedConfig"
                cache[f"{a},{b},{c},{d}"] = {"a": a, "b": b, "c": c, "d": d, "time": t}
json.dump({"device_name": "Synthetic GPU", "kernel_name": "synthetic", "tune_params_keys": keys,
           "tune_params": dom, "cache": cache}, open(sys.argv[1], "w"))
