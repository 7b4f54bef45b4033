#!/usr/bin/env python3
"""Label the generated graph-break corpus with the installed torch's Dynamo.

Usage (from the repository root):

    "$VENV"/bin/python scripts/breaks/label_generated.py            # all programs, 2 workers
    "$VENV"/bin/python scripts/breaks/label_generated.py --only g0012,g0040   # print, write nothing
    "$VENV"/bin/python scripts/breaks/label_generated.py --workers 1 --timeout 60

Reads ``tests/fixtures/breaks_generated/programs.jsonl`` (``gen_programs.py``) and writes
``tests/expected/breaks_generated/labels-torch<major>.<minor>.json``.

Every program is written to a file in a scratch directory, imported, built with
``torch.manual_seed(0)``, put in eval mode and run once eagerly (a program that raises is
labelled ``eager_error`` and left out of the scores); then ``torch._dynamo.reset()`` and
``torch._dynamo.explain(model)(*inputs)``. The breaks are taken the way ``label_breaks.py``
takes them for the hand-written corpus (the ``dynamo_graph_break_reason`` structured-trace
artifact plus convert_frame's ``WON'T CONVERT`` record; see its docstring and
scripts/breaks/README.md), and mapped to gb ids through the installed
``torch/_dynamo/graph_break_registry.json``. Where a version's registry has no gb_type for a
break (torch 2.8 reports a data-dependent jump as ``generic_jump TensorVariable()``), ``gb_id``
is null and ``reason`` carries Dynamo's text.

Workers are long-lived processes (importing torch per program would cost more than the
labelling), each labelling one program at a time; ``torch._dynamo.reset()`` clears Dynamo's
caches and its duplicate-report filter between programs. A program that takes longer than
``--timeout`` seconds is labelled ``timeout`` and its worker replaced.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PROGRAMS = ROOT / "tests" / "fixtures" / "breaks_generated" / "programs.jsonl"
EXPECTED = ROOT / "tests" / "expected" / "breaks_generated"

sys.path.insert(0, str(HERE))
import label_breaks as lb  # noqa: E402  (shared trace parsing)


def parse_inputs(specs):
    out = []
    for s in specs:
        name, rest = s.split("=", 1)
        dims, _, dtype = rest.partition(":")
        dims = [int(d) for d in dims.strip("[]").split(",") if d]
        out.append((name, dims, lb.DTYPES[dtype or "f32"]))
    return out


class Worker:
    """State of one labelling process: the log handlers are installed once, and collect into
    `events` for the program being labelled."""

    def __init__(self, scratch: Path):
        import logging

        import torch
        import torch._dynamo

        self.torch = torch
        self.scratch = scratch
        self.known = lb.gb_type_map(lb.load_registry())
        self.events: list = []
        events = self.events

        lb.capture_breaks(torch, events)
        # the programs' own print/logging output is noise here
        logging.getLogger().setLevel(logging.CRITICAL)

    def label(self, prog: dict) -> dict:
        import contextlib
        import importlib.util
        import io
        import warnings

        torch = self.torch
        path = self.scratch / f"{prog['id']}.py"
        path.write_text(prog["source"])
        result: dict = {"id": prog["id"]}
        spec = importlib.util.spec_from_file_location(f"staticfx_gen_{prog['id']}", str(path))
        mod = importlib.util.module_from_spec(spec)
        sink = io.StringIO()
        with contextlib.redirect_stdout(sink), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                spec.loader.exec_module(mod)
                torch.manual_seed(0)
                model = mod.Model().eval()
                inputs = lb.make_inputs(torch, parse_inputs(prog["inputs"]))
                model(*inputs)  # a generator forward is not consumed, as torch.compile(model)(x)
            except Exception as e:
                result["eager_error"] = f"{type(e).__name__}: {e}".splitlines()[0][:200]
                return result
            torch.manual_seed(0)
            model = mod.Model().eval()
            inputs = lb.make_inputs(torch, parse_inputs(prog["inputs"]))
            self.events.clear()
            torch._dynamo.reset()
            try:
                ex = torch._dynamo.explain(model)(*inputs)
            except Exception as e:
                result["error"] = lb.clean(f"{type(e).__name__}: {e}", path).splitlines()[0][:200]
                return result
        result.update(self.breaks(path, ex))
        return result

    def breaks(self, path: Path, ex) -> dict:
        file = str(path.resolve())
        entries: list = []
        index: dict = {}
        for kind, reason, frames in self.events:
            in_prog = [ln for (f, ln, _fn) in frames if f == file]
            types = lb.gb_types_in(reason, self.known)
            gb_type = types[0] if types else None
            gb_id = self.known.get(gb_type) if gb_type else None
            doc = lb.DOC_ID_RE.search(reason)
            if gb_id is None and doc:
                gb_id = "GB" + doc.group("num")
            chained = [self.known.get(t) or t for t in types[1:]]
            line = in_prog[-1] if in_prog else None
            key = (line, gb_id, kind, tuple(chained))
            if key in index:
                entries[index[key]]["reports"] += 1
                continue
            index[key] = len(entries)
            e = {"line": line, "gb_id": gb_id, "gb_type": gb_type, "stack_lines": in_prog, "reports": 1}
            if gb_type is None:
                first = lb.clean(reason, path).strip().splitlines()
                e["reason"] = (first[0] if first else "")[:160]
            if kind != "graph_break":
                e["frame_skipped"] = True
            if chained:
                e["chained"] = chained
            entries.append(e)
        entries.sort(key=lambda b: (b["line"] if b["line"] is not None else -1, b["gb_id"] or ""))
        return {"breaks": entries, "graph_count": ex.graph_count}


def worker_main(conn, scratch: str):
    os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
    w = Worker(Path(scratch))
    conn.send("ready")
    while True:
        prog = conn.recv()
        if prog is None:
            return
        try:
            res = w.label(prog)
        except BaseException as e:  # a crash in the labeller itself, not a break
            res = {"id": prog["id"], "error": f"labeller: {type(e).__name__}: {e}"[:200]}
        conn.send(res)


class Pool:
    def __init__(self, n: int, scratch: Path):
        self.ctx = mp.get_context("spawn")
        self.scratch = scratch
        self.slots = [self.start() for _ in range(n)]

    def start(self):
        parent, child = self.ctx.Pipe()
        p = self.ctx.Process(target=worker_main, args=(child, str(self.scratch)), daemon=True)
        p.start()
        assert parent.recv() == "ready"
        return {"proc": p, "conn": parent, "job": None, "since": 0.0}

    def run(self, programs, timeout: float, on_result):
        todo = list(programs)
        busy = 0
        while todo or busy:
            for i, s in enumerate(self.slots):
                if s["job"] is None and todo:
                    s["job"] = todo.pop(0)
                    s["since"] = time.monotonic()
                    s["conn"].send(s["job"])
                    busy += 1
            ready = mp.connection.wait([s["conn"] for s in self.slots if s["job"]], timeout=1.0)
            for i, s in enumerate(self.slots):
                if s["job"] is None:
                    continue
                if s["conn"] in ready:
                    try:
                        res = s["conn"].recv()
                    except EOFError:
                        res = {"id": s["job"]["id"], "error": "labeller process died"}
                        s["proc"].join()
                        self.slots[i] = self.start()
                        s = self.slots[i]
                    on_result(res)
                    s["job"] = None
                    busy -= 1
                elif time.monotonic() - s["since"] > timeout:
                    on_result({"id": s["job"]["id"], "timeout": True})
                    s["proc"].kill()
                    s["proc"].join()
                    self.slots[i] = self.start()
                    busy -= 1

    def close(self):
        for s in self.slots:
            s["conn"].send(None)
            s["proc"].join(timeout=10)


def write_labels(path: Path, version: str, results: list):
    """One program per line, so a relabel's git diff shows which programs changed."""
    lines = [json.dumps(r, sort_keys=True, separators=(",", ":")) for r in results]
    text = '{"torch_version":' + json.dumps(version) + ',"programs":[\n' + ",\n".join(lines) + "\n]}\n"
    path.write_text(text)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--programs", type=Path, default=PROGRAMS)
    ap.add_argument("--only", help="comma-separated program ids: print their labels, write nothing")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per program")
    ap.add_argument("-o", "--out", type=Path, help="default: tests/expected/breaks_generated/labels-torchX.Y.json")
    args = ap.parse_args()

    import torch

    programs = [json.loads(l) for l in args.programs.read_text().splitlines() if l.strip()]
    if args.only:
        want = set(args.only.split(","))
        programs = [p for p in programs if p["id"] in want]
    version = torch.__version__
    major_minor = ".".join(version.split("+")[0].split(".")[:2])
    out = args.out or EXPECTED / f"labels-torch{major_minor}.json"

    results: dict = {}
    t0 = time.monotonic()

    def on_result(res):
        results[res["id"]] = res
        if args.only:
            print(json.dumps(res, indent=1, sort_keys=True), flush=True)
        elif len(results) % 100 == 0:
            print(f"{len(results)}/{len(programs)} in {time.monotonic() - t0:.0f}s", file=sys.stderr, flush=True)

    with tempfile.TemporaryDirectory(prefix="staticfx-gen-") as scratch:
        pool = Pool(args.workers, Path(scratch))
        pool.run(programs, args.timeout, on_result)
        pool.close()
    elapsed = time.monotonic() - t0
    ordered = [results[p["id"]] for p in programs]
    broken = sum(1 for r in ordered if r.get("breaks"))
    bad = [r["id"] for r in ordered if "breaks" not in r]
    print(f"torch {version}: {len(ordered)} programs in {elapsed:.0f}s with {args.workers} workers; "
          f"{broken} break, {len(bad)} not labelled (eager error / error / timeout)", file=sys.stderr)
    if args.only:
        return 0
    EXPECTED.mkdir(parents=True, exist_ok=True)
    write_labels(out, version, ordered)
    print(f"wrote {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
