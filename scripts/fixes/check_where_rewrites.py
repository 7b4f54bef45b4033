#!/usr/bin/env python3
"""Check staticfx's fixes against real torch.

Usage (from the repository root, after ``cargo build``):

    "$VENV"/bin/python scripts/fixes/check_where_rewrites.py            # all cases, writes JSON
    "$VENV"/bin/python scripts/fixes/check_where_rewrites.py if_sum.py  # some cases, print only

For every fixture of ``tests/fixtures/breaks`` and ``tests/fixtures/fixes`` this
copies the file to a temporary directory and runs ``staticfx fix --unsafe-fixes``
on the copy.  Every file the fix changed is a case.  Each case then runs in its
own Python process:

* the original and the fixed file are imported as two modules; ``Model()`` of
  the original is built with a fixed seed, its parameters get seeded noise
  (different noise for each input scale, so that a branch the weights
  alone decide, e.g. on a LayerNorm output's mean, still goes both ways), and its
  ``state_dict`` is loaded into the fixed ``Model()``: both compute with the
  same weights (eval mode);
* both run eagerly on the same random inputs (the shapes of the file's
  ``# staticfx-case:`` header), at several input scales, all-positive and
  all-negative variants, and with biases shifted both ways, so that
  data-dependent branches go both ways; ``outputs_match`` is whether every
  output agrees (same shape and dtype, ``torch.allclose``, NaNs equal);
  ``paths_seen`` is how many different sets of executed bytecode positions
  the *original* forward went through over the trials (``sys.settrace`` with
  opcode events, so the two sides of ``a if c else b`` count apart), i.e.
  whether the branches the fix merged were really taken both ways;
* the graph breaks of both files are collected the way the corpus labels are
  (``scripts/breaks/label_breaks.py``: ``torch._dynamo.explain`` plus Dynamo's
  structured graph-break artifacts, which also see a break before the first
  graph or one that skips the frame), each file in its own process:
  ``breaks_before`` / ``breaks_after`` are their counts, ``gb_before`` the
  (line, gb id) pairs of the original.

Output: ``tests/expected/fixes/where_rewrites.json`` with the fixed text of
every case, which ``tests/fixes_corpus.rs`` compares with what the Rust fixes
produce, so CI needs no torch.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DIRS = [ROOT / "tests" / "fixtures" / "breaks", ROOT / "tests" / "fixtures" / "fixes"]
OUT = ROOT / "tests" / "expected" / "fixes" / "where_rewrites.json"
sys.path.insert(0, str(ROOT / "scripts" / "breaks"))
import label_breaks  # noqa: E402
from label_breaks import make_inputs, parse_header  # noqa: E402

SCALES = [1.0, -1.0, 0.05, -0.05, 4.0, -4.0, 0.5, 2.0]
TRIALS_PER_SCALE = 4
# Input variants: as drawn, all positive, all negative (a test like `torch.all(x > 0)` then goes
# both ways).
VARIANTS = {"raw": lambda x: x, "abs": lambda x: x.abs(), "negabs": lambda x: -x.abs()}
# Extra weight sets with every 1-d parameter shifted (activations pushed to one sign).
SHIFTS = [-6.0, 6.0]


def staticfx_bin() -> Path:
    env = os.environ.get("STATICFX_BIN")
    if env:
        return Path(env)
    for p in [ROOT / "target" / "debug" / "staticfx", ROOT / "target" / "release" / "staticfx"]:
        if p.exists():
            return p
    raise SystemExit("build staticfx first (cargo build) or set STATICFX_BIN")


def fixed_text(case: Path) -> str:
    with tempfile.TemporaryDirectory() as d:
        copy = Path(d) / case.name
        shutil.copyfile(case, copy)
        subprocess.run(
            [str(staticfx_bin()), "fix", "--unsafe-fixes", str(copy)],
            check=False,
            capture_output=True,
        )
        return copy.read_bytes().decode("utf-8")


def load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def flatten(torch, out):
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in flatten(torch, o)]
    if isinstance(out, dict):
        return [t for k in sorted(out) for t in flatten(torch, out[k])]
    return [torch.as_tensor(out)]


def run_one(original: Path, fixed: Path) -> dict:
    """In a child process: compare eager outputs and count graph breaks."""
    import contextlib
    import io

    import torch

    header = parse_header(original)
    a = load(original, "staticfx_fix_original")
    b = load(fixed, "staticfx_fix_fixed")
    torch.manual_seed(0)
    m_a = a.Model().eval()
    m_b = b.Model().eval()
    base = {k: v.clone() for k, v in m_a.state_dict().items()}

    def perturb(seed, shift=0.0):
        # Each weight set gets its own noise: a branch decided by the weights alone (e.g. the
        # mean of a LayerNorm output is its bias' mean) then still goes both ways. `shift`
        # moves every 1-d parameter (biases, norm weights), pushing activations to one sign.
        g = torch.Generator().manual_seed(seed)
        state = {}
        for k, v in base.items():
            if v.is_floating_point():
                v = v + torch.randn(v.shape, generator=g, dtype=v.dtype) * 0.3
                if v.dim() == 1:
                    v = v + shift
            state[k] = v
        m_a.load_state_dict(state)
        m_b.load_state_dict(state)
    match = True
    max_diff = 0.0
    paths = set()
    trials = 0
    orig_file = str(original.resolve())

    def tracer(lines):
        def local(frame, event, arg):
            if event in ("line", "opcode"):
                lines.add((frame.f_code.co_name, frame.f_lineno, frame.f_lasti))
            return local

        def glob(frame, event, arg):
            if frame.f_code.co_filename == orig_file:
                frame.f_trace_opcodes = True
                return local
            return None

        return glob
    with contextlib.redirect_stdout(io.StringIO()):
        plans = [(si, scale, 0.0, v) for si, scale in enumerate(SCALES) for v in VARIANTS]
        plans += [(100 + i, 1.0, shift, "raw") for i, shift in enumerate(SHIFTS)]
        for si, scale, shift, variant in plans:
            perturb(si, shift)
            for t in range(TRIALS_PER_SCALE):
                torch.manual_seed(1000 * si + t)
                inputs = [
                    VARIANTS[variant](x) * scale if x.is_floating_point() else x
                    for x in make_inputs(torch, header["inputs"])
                ]
                lines = set()
                with torch.no_grad():
                    sys.settrace(tracer(lines))
                    try:
                        oa = flatten(torch, m_a(*[x.clone() for x in inputs]))
                    finally:
                        sys.settrace(None)
                    ob = flatten(torch, m_b(*[x.clone() for x in inputs]))
                paths.add(frozenset(lines))
                trials += 1
                if len(oa) != len(ob):
                    match = False
                    continue
                for ta, tb in zip(oa, ob):
                    ta, tb = torch.as_tensor(ta), torch.as_tensor(tb)
                    if ta.shape != tb.shape or ta.dtype != tb.dtype:
                        match = False
                        continue
                    if not torch.allclose(ta.double(), tb.double(), rtol=1e-5, atol=1e-6, equal_nan=True):
                        match = False
                    d = (ta.double() - tb.double()).abs().nan_to_num(0.0)
                    max_diff = max(max_diff, float(d.max()) if d.numel() else 0.0)
    return {
        "outputs_match": match,
        "max_abs_diff": max_diff,
        "trials": trials,
        "paths_seen": len(paths),
        "torch": torch.__version__.split("+")[0],
    }


def run_isolated(original: Path, text: str) -> dict:
    with tempfile.TemporaryDirectory() as d:
        fixed = Path(d) / ("fixed_" + original.name)
        fixed.write_bytes(text.encode("utf-8"))
        p = subprocess.run(
            [sys.executable, __file__, "--child", str(original), str(fixed)],
            capture_output=True,
            text=True,
        )
        if p.returncode != 0:
            return {"error": p.stderr.strip().splitlines()[-1] if p.stderr.strip() else "failed"}
        r = json.loads(p.stdout.strip().splitlines()[-1])
        before = label_breaks.run_isolated(original)
        after = label_breaks.run_isolated(fixed)
        for k, v in (("before", before), ("after", after)):
            if "error" in v:
                r["error"] = f"labelling the {k} file: {v['error']}"
        r["breaks_before"] = len(before.get("breaks", []))
        r["breaks_after"] = len(after.get("breaks", []))
        r["gb_before"] = sorted([b["line"], b["gb_id"]] for b in before.get("breaks", []))
        r["gb_after"] = sorted([b["line"], b["gb_id"]] for b in after.get("breaks", []))
        return r


def main() -> int:
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        print(json.dumps(run_one(Path(sys.argv[2]), Path(sys.argv[3]))))
        return 0
    only = set(sys.argv[1:])
    cases = []
    for d in DIRS:
        for case in sorted(d.glob("*.py")):
            if only and case.name not in only:
                continue
            original = case.read_bytes().decode("utf-8")
            text = fixed_text(case)
            if text == original:
                continue
            r = run_isolated(case, text)
            r.update(
                {
                    "file": str(case.relative_to(ROOT)),
                    "fixed_text": text,
                    "fixed_sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
                    "uses_where": ".where(" in text and ".where(" not in original,
                }
            )
            print(
                f"{r['file']}: match={r.get('outputs_match')} breaks {r.get('breaks_before')} -> "
                f"{r.get('breaks_after')} paths_seen={r.get('paths_seen')} {r.get('error', '')}",
                file=sys.stderr,
            )
            cases.append(r)
    cases.sort(key=lambda c: c["file"])
    if only:
        return 0
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps({"cases": cases}, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
