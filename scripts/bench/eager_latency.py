#!/usr/bin/env python3
"""Eager PyTorch latency per forward, for benches/run_vs_eager.rs.

    eager_latency.py CASES.json THREADS

CASES.json: [{"id", "source": "fixture"|"torchvision", "path", "entry",
"inputs": {name: {"shape": [...], "dtype": "float32"|"int64", "high": int}}, "runs": N}]
("path" is the model's source file). Prints one JSON object: {id: {"median_ms", "min_ms"}}.
Models are in eval mode under torch.inference_mode(); each is warmed up before timing.
"""
import importlib
import importlib.util
import json
import sys
import time

import torch

sys.dont_write_bytecode = True


def load(case):
    if case["source"] == "torchvision":
        mod = importlib.import_module("torchvision." + case["module"])
    else:
        spec = importlib.util.spec_from_file_location("bench_" + case["id"], case["path"])
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    return eval(case["entry"], vars(mod))


def main():
    cases = json.load(open(sys.argv[1]))
    torch.set_num_threads(int(sys.argv[2]))
    torch.manual_seed(0)
    out = {}
    for case in cases:
        model = load(case).eval()
        xs = {}
        for name, spec in case["inputs"].items():
            if spec["dtype"] == "int64":
                xs[name] = torch.randint(0, spec.get("high", 10), spec["shape"])
            else:
                xs[name] = torch.randn(spec["shape"])
        times = []
        with torch.inference_mode():
            for _ in range(max(3, case["runs"] // 10)):
                model(**xs)
            for _ in range(case["runs"]):
                t0 = time.perf_counter()
                model(**xs)
                times.append(time.perf_counter() - t0)
        times.sort()
        out[case["id"]] = {"median_ms": times[len(times) // 2] * 1e3, "min_ms": times[0] * 1e3}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
