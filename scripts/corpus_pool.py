"""Long-lived labelling workers for the generated corpora (shape mistakes, recompiles).

Importing torch per program would cost more than the labelling, so each worker process imports
it once and labels one program at a time. A worker is a class in a labeller script, built with
the scratch directory, with a ``label(program) -> dict`` method. A program that takes longer
than the timeout is labelled ``{"id", "timeout": true}`` and its worker replaced; a worker that
dies is replaced and its program labelled with an ``error``.

Results are written one program per line, so a relabel's git diff shows which programs changed.
"""

from __future__ import annotations

import importlib.util
import json
import multiprocessing as mp
import multiprocessing.connection
import os
import sys
import tempfile
import time
from pathlib import Path


def _load_worker(script: str, class_name: str, scratch: str):
    spec = importlib.util.spec_from_file_location("staticfx_labeller", script)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return getattr(mod, class_name)(Path(scratch))


def _worker_main(conn, script: str, class_name: str, scratch: str):
    os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
    worker = _load_worker(script, class_name, scratch)
    conn.send("ready")
    while True:
        prog = conn.recv()
        if prog is None:
            return
        try:
            res = worker.label(prog)
        except BaseException as e:  # a crash in the labeller itself
            res = {"id": prog["id"], "error": f"labeller: {type(e).__name__}: {e}"[:300]}
        conn.send(res)


class Pool:
    """`n` workers of `class_name` from the labeller file `script`."""

    def __init__(self, n: int, scratch: Path, script: str, class_name: str = "Worker"):
        self.ctx = mp.get_context("spawn")
        self.args = (str(Path(script).resolve()), class_name, str(scratch))
        self.slots = [self.start() for _ in range(n)]

    def start(self):
        parent, child = self.ctx.Pipe()
        p = self.ctx.Process(target=_worker_main, args=(child, *self.args), daemon=True)
        p.start()
        assert parent.recv() == "ready"
        return {"proc": p, "conn": parent, "job": None, "since": 0.0}

    def run(self, programs, timeout: float, on_result):
        todo = list(programs)
        todo.reverse()
        busy = 0
        while todo or busy:
            for s in self.slots:
                if s["job"] is None and todo:
                    s["job"] = todo.pop()
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
                    on_result(res)
                    self.slots[i]["job"] = None
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


def label_all(programs: list, script: str, workers: int, timeout: float, echo: bool, every: int) -> list:
    """Labels `programs` with `workers` workers of `script`'s `Worker`, in a scratch directory;
    the labels in id order. `echo` prints each label as it comes (`--only`), else progress goes
    to stderr every `every` programs."""
    results: dict = {}
    t0 = time.monotonic()

    def on_result(res):
        results[res["id"]] = res
        if echo:
            print(json.dumps(res, indent=1, sort_keys=True), flush=True)
        elif len(results) % every == 0:
            print(f"{len(results)}/{len(programs)} in {time.monotonic() - t0:.0f}s", file=sys.stderr, flush=True)

    with tempfile.TemporaryDirectory(prefix="staticfx-labels-") as scratch:
        pool = Pool(workers, Path(scratch), script)
        pool.run(programs, timeout, on_result)
        pool.close()
    print(f"{len(results)} programs in {time.monotonic() - t0:.0f}s with {workers} workers", file=sys.stderr)
    return [results[p["id"]] for p in sorted(programs, key=lambda p: p["id"])]


def write_labels(path: Path, version: str, results: list):
    """`{"torch_version", "programs": [...]}`, one program per line."""
    lines = [json.dumps(r, sort_keys=True, separators=(",", ":")) for r in results]
    text = '{"torch_version":' + json.dumps(version) + ',"programs":[\n' + ",\n".join(lines) + "\n]}\n"
    path.write_text(text)
