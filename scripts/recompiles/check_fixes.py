#!/usr/bin/env python3
"""Runs each fix `staticfx fix --unsafe-fixes --select FX201` makes on the recompile corpus
under torch.compile, and records what Dynamo did (issue 39 item 2).

    STATICFX=target/release/staticfx "$VENV"/bin/python scripts/recompiles/check_fixes.py

For every program of tests/fixtures/recompiles/programs.jsonl the fix changes, it builds the
original and the fixed `Model` with the same weights, calls the original eagerly and the fixed
one through `torch.compile` (a counting backend) with the plan's identical calls (the `same`
phase: one input, three calls, eval mode), and records:

* `compiles`: the backend's compiles after each call (0 recompiles: the count after the last
  call equals the count after the first);
* `outputs_equal`: each call's output equal to the original's eager output;
* `state_equal`: the fixed attribute holds the original's count after the calls.

Writes tests/expected/recompiles/fixes-torch<X.Y>.json (one line per program, sorted), which
tests/recompiles_fixes.rs holds the fixer to without torch. `--only r0000,r0030` prints and
writes nothing.
"""
import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROGRAMS = os.path.join(ROOT, "tests/fixtures/recompiles/programs.jsonl")


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fixed_source(staticfx, source):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "model.py")
        with open(path, "w") as f:
            f.write(source)
        subprocess.run(
            [staticfx, "fix", "--unsafe-fixes", "--select", "FX201", path],
            check=False,
            capture_output=True,
        )
        with open(path) as f:
            return f.read()


def run(program, fixed, torch):
    with tempfile.TemporaryDirectory() as d:
        a, b = os.path.join(d, "orig.py"), os.path.join(d, "fixed.py")
        with open(a, "w") as f:
            f.write(program["source"])
        with open(b, "w") as f:
            f.write(fixed)
        torch.manual_seed(program["seed"])
        original = load(a, "orig_" + program["id"]).Model().eval()
        candidate = load(b, "fixed_" + program["id"]).Model().eval()
        candidate.load_state_dict(original.state_dict(), strict=False)
        compiles = [0]

        def backend(gm, example_inputs):
            compiles[0] += 1
            return gm.forward

        torch._dynamo.reset()
        compiled = torch.compile(candidate, backend=backend)
        batch = next(c["batch"] for c in program["calls"] if c["phase"] == "same")
        x = torch.randn(batch, 8)
        after, equal = [], True
        for _ in range(3):
            with torch.no_grad():
                want = original(x)
                got = compiled(x)
            equal = equal and torch.allclose(want, got)
            after.append(compiles[0])
        # the root's int attributes (the counters) hold the same counts, int or 0-d tensor
        state_equal = all(
            float(getattr(candidate, k)) == float(v)
            for k, v in vars(original).items()
            if not k.startswith("_") and isinstance(v, int) and not isinstance(v, bool)
        )
        return {"compiles": after, "outputs_equal": bool(equal), "state_equal": state_equal}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only")
    args = ap.parse_args()
    import torch

    staticfx = os.environ.get("STATICFX", os.path.join(ROOT, "target/release/staticfx"))
    only = set(args.only.split(",")) if args.only else None
    rows = []
    with open(PROGRAMS) as f:
        programs = [json.loads(line) for line in f]
    for p in programs:
        if only and p["id"] not in only:
            continue
        fixed = fixed_source(staticfx, p["source"])
        if fixed == p["source"]:
            rows.append({"id": p["id"], "case": p["case"], "fixed": False})
            continue
        row = {"id": p["id"], "case": p["case"], "fixed": True}
        try:
            row.update(run(p, fixed, torch))
        except Exception as e:  # a fix that breaks the program is a finding of this script
            row["error"] = f"{type(e).__name__}: {e}"
        rows.append(row)
        if only:
            print(fixed)
            print(json.dumps(row))
    fixed = [r for r in rows if r["fixed"]]
    ok = [
        r
        for r in fixed
        if r.get("outputs_equal") and r.get("state_equal") and r["compiles"][0] == r["compiles"][-1]
    ]
    print(f"{len(rows)} programs, {len(fixed)} fixed, {len(ok)} with 0 recompiles and equal outputs")
    for r in fixed:
        if r not in ok:
            print("  not ok:", json.dumps(r))
    if only:
        return
    version = ".".join(torch.__version__.split("+")[0].split(".")[:2])
    out = os.path.join(ROOT, f"tests/expected/recompiles/fixes-torch{version}.json")
    with open(out, "w") as f:
        f.write("[\n")
        f.write(",\n".join(json.dumps(r, sort_keys=True) for r in sorted(rows, key=lambda r: r["id"])))
        f.write("\n]\n")
    print("wrote", out)


if __name__ == "__main__":
    sys.exit(main())
