#!/usr/bin/env python3
"""Label the shape-mistake corpus with what eager PyTorch does.

Usage (from the repository root):

    "$VENV"/bin/python scripts/shapes/label_mistakes.py            # all programs, 2 workers
    "$VENV"/bin/python scripts/shapes/label_mistakes.py --only s0012,s0400   # print, write nothing
    "$VENV"/bin/python scripts/shapes/label_mistakes.py --table    # print the README table from the labels

Reads ``tests/fixtures/shape_mistakes/programs.jsonl`` (``gen_mistakes.py``) and writes
``tests/expected/shape_mistakes/labels-torch<major>.<minor>.json``.

Every program is written to a file in a scratch directory and imported; then
``torch.manual_seed(0)``, ``Model()``, ``.eval()``, its inputs are built (float32: randn,
int64: randint(0, 10), bool: random) and forward runs once under ``torch.no_grad()``.
The label: ``raised``; ``phase`` ("import", "init", "forward" or null); ``line``, the 1-based
line in the program file of the innermost traceback frame that lies in that file; the
exception's type and the first line of its message (at most 300 characters, with the scratch
path and memory addresses taken out).

Workers are long-lived processes (``scripts/corpus_pool.py``), each labelling one program at
a time. A program that takes longer than ``--timeout`` seconds is labelled ``timeout`` and its
worker replaced.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PROGRAMS = ROOT / "tests" / "fixtures" / "shape_mistakes" / "programs.jsonl"
EXPECTED = ROOT / "tests" / "expected" / "shape_mistakes"
sys.path.insert(0, str(ROOT / "scripts"))
from corpus_pool import label_all, write_labels  # noqa: E402

ADDR_RE = re.compile(r"0x[0-9a-fA-F]{6,}")


def parse_inputs(specs):
    out = []
    for s in specs:
        name, rest = s.split("=", 1)
        dims, _, dtype = rest.partition(":")
        out.append((name, [int(d) for d in dims.strip("[]").split(",") if d], dtype or "f32"))
    return out


def make_inputs(torch, specs):
    xs = []
    for _name, dims, dtype in specs:
        if dtype == "i64":
            xs.append(torch.randint(0, 10, dims, dtype=torch.int64))
        elif dtype == "bool":
            xs.append(torch.rand(dims) > 0.5)
        else:
            xs.append(torch.randn(dims))
    return xs


def clean(msg: str, path: Path) -> str:
    msg = msg.replace(str(path.resolve()), "<program>").replace(str(path), "<program>")
    msg = msg.replace(str(path.parent), "<scratch>")
    return ADDR_RE.sub("0x?", msg)


class Worker:
    def __init__(self, scratch: Path):
        import torch

        torch.set_num_threads(1)
        self.torch = torch
        self.scratch = scratch

    def label(self, prog: dict) -> dict:
        import contextlib
        import importlib.util
        import io
        import traceback
        import warnings

        torch = self.torch
        path = self.scratch / f"{prog['id']}.py"
        path.write_text(prog["source"])
        file = str(path.resolve())
        res = {"id": prog["id"], "raised": False, "phase": None, "line": None, "exc_type": None, "message": None}
        spec = importlib.util.spec_from_file_location(f"staticfx_shape_{prog['id']}", file)
        mod = importlib.util.module_from_spec(spec)
        phase = "import"
        with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                spec.loader.exec_module(mod)
                phase = "init"
                torch.manual_seed(0)
                model = mod.Model().eval()
                inputs = make_inputs(torch, parse_inputs(prog["inputs"]))
                phase = "forward"
                with torch.no_grad():
                    model(*inputs)
            except Exception as e:  # the label is what was raised
                frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename == file]
                msg = str(e).strip().splitlines()
                msg = msg[0] if msg else ""
                res.update({"raised": True, "phase": phase, "line": frames[-1].lineno if frames else None,
                            "exc_type": type(e).__name__, "message": clean(msg, path).strip()[:300]})
        return res


def table(programs: list, labels: list) -> str:
    """Markdown table per kind: count, raised in forward, raised in init, did not raise."""
    by_id = {l["id"]: l for l in labels}
    rows = {}
    for p in programs:
        k = p["kind"] or "(original)"
        r = rows.setdefault(k, [0, 0, 0, 0, 0])
        l = by_id.get(p["id"], {})
        r[0] += 1
        if l.get("raised") and l.get("phase") == "forward":
            r[1] += 1
        elif l.get("raised") and l.get("phase") in ("init", "import"):
            r[2] += 1
        elif l.get("raised") is False:
            r[3] += 1
        else:
            r[4] += 1
    out = ["| kind | programs | raised in forward | raised in init | did not raise | not labelled |",
           "|---|---:|---:|---:|---:|---:|"]
    tot = [0] * 5
    for k in sorted(rows, key=lambda k: (k == "(original)", k)):
        r = rows[k]
        tot = [a + b for a, b in zip(tot, r)]
        out.append(f"| {k} | " + " | ".join(str(x) for x in r) + " |")
    out.append("| **total** | " + " | ".join(str(x) for x in tot) + " |")
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--programs", type=Path, default=PROGRAMS)
    ap.add_argument("--only", help="comma-separated program ids: print their labels, write nothing")
    ap.add_argument("--table", action="store_true", help="print the per-kind table from the written labels")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per program")
    ap.add_argument("-o", "--out", type=Path, help="default: tests/expected/shape_mistakes/labels-torchX.Y.json")
    args = ap.parse_args()

    import torch

    programs = [json.loads(l) for l in args.programs.read_text().splitlines() if l.strip()]
    version = torch.__version__
    major_minor = ".".join(version.split("+")[0].split(".")[:2])
    out = args.out or EXPECTED / f"labels-torch{major_minor}.json"
    if args.table:
        labels = json.loads(out.read_text())["programs"]
        print(f"torch {json.loads(out.read_text())['torch_version']}\n")
        print(table(programs, labels))
        return 0
    if args.only:
        want = set(args.only.split(","))
        programs = [p for p in programs if p["id"] in want]

    ordered = label_all(programs, __file__, args.workers, args.timeout, bool(args.only), 100)
    print(f"torch {version}", file=sys.stderr)
    print(table(programs, ordered), file=sys.stderr)
    if args.only:
        return 0
    EXPECTED.mkdir(parents=True, exist_ok=True)
    write_labels(out, version, ordered)
    print(f"wrote {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
