#!/usr/bin/env python3
"""Label the recompile corpus with what torch.compile does.

Usage (from the repository root, with a venv that has torch):

    "$VENV"/bin/python scripts/recompiles/label_recompiles.py             # all programs, 2 workers
    "$VENV"/bin/python scripts/recompiles/label_recompiles.py --only r0001,r0400   # print, write nothing
    "$VENV"/bin/python scripts/recompiles/label_recompiles.py --table     # per-case table from the labels

Reads ``tests/fixtures/recompiles/programs.jsonl`` (``gen_programs.py``) and writes
``tests/expected/recompiles/labels-torch<major>.<minor>.json``.

Each program is written to a scratch file and imported. ``torch._dynamo.reset()``, then
``torch.manual_seed(0)``, ``Model().eval()`` and ``torch.compile(model, backend=counting)``
with Dynamo's default configuration. The calls of the program's plan run in order under
``torch.no_grad()``; the three ``same`` calls reuse one input tensor. Recompiles are read from
Dynamo's own log (``torch._logging.set_logs(recompiles=True)`` and a handler on
``torch._dynamo``): every "Recompiling function" record is one recompile.

The label, per call: ``recompiles`` (records during the call) and ``failures``: for each
recompile, the guard that failed on the newest cache entry, as Dynamo prints it (``guard``),
and the line of the program that installed it (``line``, from Dynamo's user stack trace, else
from the guard's comment; null for guards without one, such as a tensor size). Per program: ``frames`` (how many frames
the backend compiled in all), ``limit_hit`` (Dynamo reported its recompile limit), and
``raised`` with the message when a call raised.
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PROGRAMS = ROOT / "tests" / "fixtures" / "recompiles" / "programs.jsonl"
EXPECTED = ROOT / "tests" / "expected" / "recompiles"

sys.path.insert(0, str(ROOT / "scripts"))
from corpus_pool import label_all, write_labels  # noqa: E402

# "- 0/2: scale == 1.0      # x = self.fc(x) * scale  # ...t1.py:21 in forward"
FAILURE_RE = re.compile(r"^\s*- (\d+)/(\d+): (.*)$")
STACK_RE = re.compile(r'^\s*-\s+File "(.*)", line (\d+), in (\S+)')
# the guard's comment names the line too, with the path cut short: "# mp/rc/t2.py:15 in forward"
COMMENT_LOC_RE = re.compile(r"#\s*(\S+):(\d+) in (\w+)")


def parse_recompile(message: str, file: str) -> dict:
    """The newest cache entry's failed guard, and the program line that installed it."""
    lines = message.splitlines()
    guard, line = None, None
    for i, l in enumerate(lines):
        m = FAILURE_RE.match(l)
        if not m:
            continue
        # torch 2.8 prints no source comment, only the guard and a hint
        guard = m.group(3).split("  #", 1)[0].split("(HINT:", 1)[0].strip()
        for loc in COMMENT_LOC_RE.finditer(m.group(3)):
            if file.endswith(loc.group(1)):
                line = int(loc.group(2))
        for follow in lines[i + 1:]:
            if FAILURE_RE.match(follow):
                break
            s = STACK_RE.match(follow)
            if s and s.group(1) == file:
                line = int(s.group(2))  # innermost frame in the program wins
        break
    return {"guard": guard, "line": line}


class Worker:
    def __init__(self, scratch: Path):
        import logging

        import torch

        torch.set_num_threads(1)
        self.torch = torch
        self.scratch = scratch
        self.records = []
        self.limit = []
        outer = self

        class Capture(logging.Handler):
            def emit(self, record):
                msg = record.getMessage()
                if "Recompiling function" in msg:
                    outer.records.append(msg)
                elif "recompile_limit" in msg or "cache_size_limit" in msg:
                    outer.limit.append(msg)

        torch._logging.set_logs(recompiles=True)
        logging.getLogger("torch._dynamo").addHandler(Capture())
        # Dynamo's records are for us, not for the terminal
        logging.getLogger("torch._dynamo").propagate = False
        for h in list(logging.getLogger("torch._dynamo").handlers):
            if not isinstance(h, Capture):
                logging.getLogger("torch._dynamo").removeHandler(h)

    def label(self, prog: dict) -> dict:
        import contextlib
        import importlib.util
        import io
        import warnings

        torch = self.torch
        path = self.scratch / f"{prog['id']}.py"
        path.write_text(prog["source"])
        file = str(path.resolve())
        res = {"id": prog["id"], "calls": [], "frames": 0, "limit_hit": False, "raised": None}
        spec = importlib.util.spec_from_file_location(f"staticfx_recompile_{prog['id']}", file)
        mod = importlib.util.module_from_spec(spec)
        torch._dynamo.reset()
        frames = [0]

        def counting(gm, example_inputs):
            frames[0] += 1
            return gm.forward

        self.records.clear()
        self.limit.clear()
        with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                spec.loader.exec_module(mod)
                torch.manual_seed(0)
                model = mod.Model().eval()
                compiled = torch.compile(model, backend=counting)
                same_x = None
                for call in prog["calls"]:
                    B = call["batch"]
                    if call["phase"] == "same":
                        same_x = same_x if same_x is not None else torch.randn(B, 8)
                        x = same_x
                    else:
                        x = torch.randn(B, 8)
                    env = {"torch": torch, "B": B}
                    kwargs = {k: eval(v, env) for k, v in call["args"].items()}
                    model.train(call["mode"] == "train")
                    before = len(self.records)
                    with torch.no_grad():
                        compiled(x, **kwargs)
                    new = self.records[before:]
                    res["calls"].append({
                        "recompiles": len(new),
                        "failures": [parse_recompile(m, file) for m in new],
                    })
            except Exception as e:  # the label is what was raised
                msg = str(e).strip().splitlines()
                res["raised"] = f"{type(e).__name__}: {msg[0] if msg else ''}"[:300].replace(file, "<program>")
        res["frames"] = frames[0]
        res["limit_hit"] = bool(self.limit)
        return res


def table(programs: list, labels: list) -> str:
    """Per case: programs, recompiling on identical calls, recompiling on varied calls."""
    by_id = {l["id"]: l for l in labels}
    rows = collections.OrderedDict()
    for p in programs:
        r = rows.setdefault(p["case"], [0, 0, 0, 0])
        l = by_id.get(p["id"], {})
        r[0] += 1
        if l.get("raised") or "calls" not in l:
            r[3] += 1
            continue
        phases = [c["phase"] for c in p["calls"]]
        same = sum(c["recompiles"] for ph, c in zip(phases, l["calls"]) if ph == "same")
        varied = sum(c["recompiles"] for ph, c in zip(phases, l["calls"]) if ph != "same")
        r[1] += same > 0
        r[2] += varied > 0
    out = ["| case | programs | recompile on identical calls | recompile on varied calls | raised / unlabelled |",
           "|---|---:|---:|---:|---:|"]
    for k, r in rows.items():
        out.append(f"| {k} | " + " | ".join(str(x) for x in r) + " |")
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--programs", type=Path, default=PROGRAMS)
    ap.add_argument("--only", help="comma-separated program ids: print their labels, write nothing")
    ap.add_argument("--table", action="store_true", help="print the per-case table from the written labels")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per program")
    ap.add_argument("-o", "--out", type=Path, help="default: tests/expected/recompiles/labels-torchX.Y.json")
    args = ap.parse_args()

    import torch

    programs = [json.loads(l) for l in args.programs.read_text().splitlines() if l.strip()]
    version = torch.__version__
    major_minor = ".".join(version.split("+")[0].split(".")[:2])
    out = args.out or EXPECTED / f"labels-torch{major_minor}.json"
    if args.table:
        data = json.loads(out.read_text())
        print(f"torch {data['torch_version']}\n")
        print(table(programs, data["programs"]))
        return 0
    if args.only:
        want = set(args.only.split(","))
        programs = [p for p in programs if p["id"] in want]

    ordered = label_all(programs, __file__, args.workers, args.timeout, bool(args.only), 50)
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
