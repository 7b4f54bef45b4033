#!/usr/bin/env python3
"""Eager PyTorch latency per forward, served to benches/run_vs_eager.rs.

    eager_latency.py CASES.json THREADS

CASES.json: [{"id", "source": "fixture"|"torchvision"|"timm", "path", "module", "entry",
"inputs": {name: {"shape": [...], "dtype": "float32"|"int64", "high": int}}, "runs": N}]
("path" is the model's source file, "module" its dotted name for library sources).
Every model is loaded and warmed up first, in eval mode under torch.inference_mode(); then
`ready` is printed. Each line `ID RUNS` read from stdin times RUNS forwards of that case and
answers one JSON line {"median_ms", "min_ms"}, so the bench can interleave these runs with its
own and both sides see the same machine load.
"""
import importlib
import importlib.util
import json
import sys
import time

import torch

sys.dont_write_bytecode = True


def load(case):
    if case["source"] == "fixture":
        spec = importlib.util.spec_from_file_location("bench_" + case["id"], case["path"])
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    else:
        mod = importlib.import_module(case["module"])
    return eval(case["entry"], vars(mod))


def inputs(case):
    xs = {}
    for name, spec in case["inputs"].items():
        if spec["dtype"] == "int64":
            xs[name] = torch.randint(0, spec.get("high", 10), spec["shape"])
        else:
            xs[name] = torch.randn(spec["shape"])
    return xs


def main():
    cases = json.load(open(sys.argv[1]))
    torch.set_num_threads(int(sys.argv[2]))
    torch.manual_seed(0)
    models = {}
    with torch.inference_mode():
        for case in cases:
            model = load(case).eval()
            xs = inputs(case)
            for _ in range(max(3, case["runs"] // 10)):
                model(**xs)
            models[case["id"]] = (model, xs)
    print("ready", flush=True)
    for line in sys.stdin:
        case_id, runs = line.split()
        model, xs = models[case_id]
        times = []
        with torch.inference_mode():
            for _ in range(int(runs)):
                t0 = time.perf_counter()
                model(**xs)
                times.append(time.perf_counter() - t0)
        times.sort()
        print(
            json.dumps({"median_ms": times[len(times) // 2] * 1e3, "min_ms": times[0] * 1e3}),
            flush=True,
        )


if __name__ == "__main__":
    main()
