#!/usr/bin/env python3
"""Label the staticfx graph-break corpus against the installed torch.

Usage (from the repository root):

    "$VENV"/bin/python scripts/breaks/label_breaks.py            # all cases
    "$VENV"/bin/python scripts/breaks/label_breaks.py if_sum.py  # some cases, print only
    "$VENV"/bin/python scripts/breaks/label_breaks.py --update if_sum.py  # relabel these in labels.json
    "$VENV"/bin/python scripts/breaks/label_breaks.py --table    # README table from labels.json

For every ``tests/fixtures/breaks/*.py`` file this builds ``Model()`` in eval
mode, makes the inputs declared in its ``# staticfx-case:`` header with a
fixed seed, runs ``torch._dynamo.reset()`` and then
``torch._dynamo.explain(model)(*inputs)``, and records each graph break that
Dynamo reports: the line in the corpus file, the gb id / gb_type from Dynamo's
graph break registry, and Dynamo's own explanation.

Each case runs in its own Python process, so no Dynamo state (caches,
duplicate-warning filters, config) leaks from one case into the next.

Where the breaks come from
--------------------------
``ExplainOutput.break_reasons`` is incomplete for our purpose: it only holds
the reason of a graph that was actually compiled (a break before any tensor op
gives no graph and so no reason), its reason text for a data-dependent jump is
just ``generic_jump TensorVariable()`` (no gb_type), and a break that makes
Dynamo skip the whole frame (e.g. a break inside a loop) is not in it at all.

Dynamo however emits one structured-trace artifact named
``dynamo_graph_break_reason`` for every graph break it handles
(``InstructionTranslatorBase.log_graph_break``) and for every frame it skips
because of one (``convert_frame``).  Its payload holds the reason text (whose
gb_type line is exactly the ``Gb_type`` of the registry, formatted by
``torch._dynamo.exc.format_graph_break_message``) and the full user stack,
inlined frames included.  We capture these with a logging handler on the
``torch.__trace`` logger, which is how ``TORCH_TRACE`` / tlparse get them too.
Frames that Dynamo refuses before tracing starts (``Attempt to trace
generator``) produce no artifact; they are taken from convert_frame's
``WON'T CONVERT`` log record, whose exception carries the gb_type.
``break_reasons`` is still read, and used to cross-check line numbers
(``explain_break_lines`` / ``unmatched_explain_lines`` in the labels).

Output
------
``tests/expected/breaks/labels.json`` and
``tests/expected/breaks/registry_subset.json``.  Both are deterministic: no
absolute paths, no addresses, sorted keys/cases.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "fixtures" / "breaks"
EXPECTED = ROOT / "tests" / "expected" / "breaks"

# gb ids always included in registry_subset.json, whether or not a label uses them.
EXTRA_IDS = ["GB0170", "GB0124", "GB0109", "GB0036", "GB0059", "GB0291", "GB9193", "GB0098", "GB0099",
             "GB0075", "GB0156", "GB0179", "GB6297", "GB0038", "GB0208", "GB0014",
             "GB9493"]

HEADER_RE = re.compile(r"^#\s*staticfx-case:\s*(?P<body>.*)$")
NOTE_RE = re.compile(r"^#\s*staticfx-note:\s*(?P<body>.*)$")
INPUT_RE = re.compile(r"^(?P<name>[A-Za-z_]\w*)=\[(?P<dims>[0-9,\s]*)\](?::(?P<dtype>\w+))?$")
FRAME_RE = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>.+)$')
DOC_ID_RE = re.compile(r"/gb/gb(?P<num>\d{4})\.html")
WONT_CONVERT_RE = re.compile(r"^WON'T CONVERT (?P<func>\S+) (?P<file>.+) line (?P<line>\d+)")
ADDR_RE = re.compile(r"0x[0-9a-fA-F]+")

DTYPES = {"f32": "float32", "float32": "float32", "i64": "int64", "int64": "int64", "bool": "bool"}


# --------------------------------------------------------------------------
# header parsing (no torch needed)
# --------------------------------------------------------------------------
def parse_header(path: Path) -> dict:
    """Return {"inputs": [(name, dims, dtype)], "expect": str|None, "note": str}."""
    inputs = None
    expect = None
    notes = []
    for raw in path.read_text().splitlines():
        m = HEADER_RE.match(raw.strip())
        if m:
            toks = m.group("body").split()
            if not toks or toks[0] != "inputs":
                raise ValueError(f"{path.name}: staticfx-case header must start with 'inputs'")
            inputs = []
            for tok in toks[1:]:
                if tok.startswith("expect="):
                    expect = tok.split("=", 1)[1]
                    continue
                im = INPUT_RE.match(tok)
                if not im:
                    raise ValueError(f"{path.name}: bad input spec {tok!r}")
                dims = [int(d) for d in im.group("dims").replace(" ", "").split(",") if d]
                dtype = DTYPES.get(im.group("dtype") or "f32")
                if dtype is None:
                    raise ValueError(f"{path.name}: unknown dtype in {tok!r}")
                inputs.append((im.group("name"), dims, dtype))
            continue
        n = NOTE_RE.match(raw.strip())
        if n:
            notes.append(n.group("body").strip())
    if inputs is None:
        raise ValueError(f"{path.name}: missing '# staticfx-case: inputs ...' header")
    return {"inputs": inputs, "expect": expect, "note": " ".join(notes)}


# --------------------------------------------------------------------------
# registry
# --------------------------------------------------------------------------
def registry_path() -> Path:
    import torch._dynamo

    return Path(torch._dynamo.__file__).resolve().parent / "graph_break_registry.json"


def load_registry() -> dict:
    with open(registry_path()) as f:
        return json.load(f)


def gb_type_map(registry: dict) -> dict:
    """gb_type -> gb id.  An id whose *current* (first) entry carries the
    gb_type wins over one where it is only a historical variant."""
    mapping: dict = {}
    for gid, entries in registry.items():  # current types first
        if entries:
            mapping.setdefault(entries[0]["Gb_type"], gid)
    for gid, entries in registry.items():  # then historical variants
        for e in entries[1:]:
            mapping.setdefault(e["Gb_type"], gid)
    mapping.pop("_gb_type", None)  # placeholder left by the registry generator
    return mapping


# --------------------------------------------------------------------------
# one case, in a fresh interpreter
# --------------------------------------------------------------------------
def make_inputs(torch, spec):
    out = []
    for _name, dims, dtype in spec:
        if dtype == "float32":
            out.append(torch.randn(*dims))
        elif dtype == "int64":
            out.append(torch.randint(0, 8, dims, dtype=torch.int64))
        elif dtype == "bool":
            out.append(torch.rand(*dims) > 0.5)
        else:  # pragma: no cover
            raise ValueError(dtype)
    return out


def split_payload(payload: str):
    """Split a dynamo_graph_break_reason payload into (reason_text, user_frames).

    Two shapes exist:
      1. "Graph break in user code at F:L\\nGraph Break Reason: <reason>\\n...
          User code traceback:\\n<stack>\\n<traceback.format_exc()>"
      2. "Graph break: torch.compile cannot properly resume ... skip.\\n...
          The graph break occurred in the following user code:\\n<stack>\\n
          <traceback.format_exc()>"  (the reason is then only in the exception)
    """
    # cut off the Python traceback of Dynamo's own exception handling; it is
    # only used (for shape 2) to recover the message.
    tb_idx = payload.find("Traceback (most recent call last):")
    head = payload if tb_idx < 0 else payload[:tb_idx]
    tail = "" if tb_idx < 0 else payload[tb_idx:]

    if "Graph Break Reason: " in head:
        after = head.split("Graph Break Reason: ", 1)[1]
        reason, _, stack = after.partition("\nUser code traceback:\n")
        # symbolic_convert logs a break it cannot resume from (e.g. one inside
        # a loop) with this prefix; convert_frame then runs the frame eagerly.
        kind = "frame_skip" if reason.startswith("Failed to handle graph break gracefully.") else "graph_break"
    else:
        stack = head.split("The graph break occurred in the following user code:\n", 1)[-1]
        # message of the Unsupported exception: after the last "Unsupported: " in the traceback
        m = tail.rfind("torch._dynamo.exc.Unsupported: ")
        reason = tail[m + len("torch._dynamo.exc.Unsupported: "):] if m >= 0 else tail
        kind = "frame_skip"
    frames = []
    for line in stack.splitlines():
        fm = FRAME_RE.match(line)
        if fm:
            frames.append((fm.group("file"), int(fm.group("line")), fm.group("func").strip()))
    return kind, reason, frames


def clean(text: str, case_path: Path) -> str:
    text = text.replace(str(case_path.resolve()), case_path.name)
    text = text.replace(str(case_path.parent.resolve()) + os.sep, "")
    return ADDR_RE.sub("0x?", text)


def gb_types_in(reason: str, known: dict) -> list:
    """All registry gb_types that stand alone on a line of the reason text,
    in order (a chained break names the original cause first)."""
    found = []
    for line in reason.splitlines():
        t = line.strip()
        if t in known and t not in found:
            found.append(t)
    return found


def field(reason: str, label: str) -> str:
    for line in reason.splitlines():
        s = line.strip()
        if s.startswith(label):
            return s[len(label):].strip()
    return ""


def capture_breaks(torch, events: list) -> None:
    """Append every graph break Dynamo reports to `events`, through its loggers: the
    dynamo_graph_break_reason artifacts and the frames convert_frame refuses."""
    import logging

    class TraceCapture(logging.Handler):
        def emit(self, record):
            meta = getattr(record, "metadata", None) or {}
            art = meta.get("artifact") if isinstance(meta, dict) else None
            if isinstance(art, dict) and art.get("name") == "dynamo_graph_break_reason":
                events.append(split_payload(getattr(record, "payload", "") or ""))

    class WontConvertCapture(logging.Handler):
        """convert_frame logs every frame it refuses ("WON'T CONVERT ...") at
        INFO with the exception attached.  Most of those were already reported
        as a dynamo_graph_break_reason artifact; the ones raised before
        tracing started (no compile_id, e.g. "Attempt to trace generator")
        were not, and are only seen here."""

        def emit(self, record):
            exc = record.exc_info[1] if record.exc_info else None
            if exc is None or hasattr(exc, "compile_id"):
                return
            if not isinstance(exc, (torch._dynamo.exc.Unsupported, torch._dynamo.exc.UserError)):
                return
            frames = [(f.filename, f.lineno, f.name) for f in (getattr(exc, "real_stack", None) or [])]
            if not frames:
                m = WONT_CONVERT_RE.match(record.getMessage())
                if m:
                    frames = [(m.group("file"), int(m.group("line")), m.group("func"))]
            events.append(("frame_skip", getattr(exc, "msg", str(exc)), frames))

    trace_log = logging.getLogger("torch.__trace")
    trace_log.addHandler(TraceCapture(level=logging.DEBUG))
    # the frame-skip artifact is only emitted while the graph_breaks artifact
    # loggers are enabled; enable them without printing anything.
    for name in ("torch._dynamo.convert_frame.__graph_breaks",
                 "torch._dynamo.symbolic_convert.__graph_breaks"):
        lg = logging.getLogger(name)
        lg.setLevel(logging.DEBUG)
        lg.propagate = False
        lg.addHandler(logging.NullHandler())
    # keep Dynamo's own warnings (e.g. the Tensor.item() hint) off the console
    logging.getLogger("torch._dynamo").setLevel(logging.ERROR)
    cf_log = logging.getLogger("torch._dynamo.convert_frame")
    cf_log.setLevel(logging.INFO)
    cf_log.propagate = False
    cf_log.addHandler(WontConvertCapture(level=logging.INFO))


def run_one(case: Path) -> dict:
    import inspect
    import importlib.util

    import torch
    import torch._dynamo

    known = gb_type_map(load_registry())
    header = parse_header(case)
    case_file = str(case.resolve())

    events = []

    capture_breaks(torch, events)

    spec = importlib.util.spec_from_file_location(f"staticfx_case_{case.stem}", case_file)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)

    torch.manual_seed(0)
    model = mod.Model().eval()
    inputs = make_inputs(torch, header["inputs"])

    # A generator forward is explained like any other: explain(model)(x) is
    # what torch.compile(model)(x) does, and Dynamo refuses to compile the
    # generator frame itself (it is only inlined when consumed by a caller
    # that Dynamo is already tracing, see generator_helper.py).
    target = model
    is_generator = inspect.isgeneratorfunction(type(model).forward)

    result: dict = {"file": case.name}
    torch._dynamo.reset()
    try:
        out = torch._dynamo.explain(target)(*inputs)
    except Exception as e:  # an exception, not a graph break
        msg = clean(f"{type(e).__name__}: {e}", case).splitlines()
        result["error"] = msg[0] if msg else type(e).__name__
        return result

    br_lines = []
    for r in out.break_reasons:
        inner = [f.lineno for f in r.user_stack if f.filename == case_file]
        if inner:
            br_lines.append(inner[-1])

    reports = []
    for kind, reason, frames in events:
        in_case = [(ln, fn) for (f, ln, fn) in frames if f == case_file]
        types = gb_types_in(reason, known)
        doc = DOC_ID_RE.search(reason)
        gb_type = types[0] if types else None
        gb_id = known.get(gb_type) if gb_type else None
        if gb_id is None and doc:
            gb_id = "GB" + doc.group("num")
        reports.append({
            "kind": kind,
            "line": in_case[-1][0] if in_case else None,
            "stack_lines": [ln for ln, _ in in_case],
            "function": in_case[-1][1] if in_case else None,
            "gb_type": gb_type,
            "gb_id": gb_id,
            "chained": [{"gb_type": t, "gb_id": known.get(t)} for t in types[1:]],
            "reason": clean(field(reason, "Explanation:"), case),
            "context": clean(field(reason, "Developer debug context:"), case),
        })

    # one entry per distinct (line, gb_id, kind); count how often Dynamo reported it
    breaks: list = []
    index: dict = {}
    for rep in reports:
        key = (rep["line"], rep["gb_id"], rep["kind"], tuple(c["gb_id"] for c in rep["chained"]))
        if key in index:
            breaks[index[key]]["reports"] += 1
            continue
        index[key] = len(breaks)
        entry = {
            "line": rep["line"],
            "gb_id": rep["gb_id"],
            "gb_type": rep["gb_type"],
            "reason": rep["reason"],
            "context": rep["context"],
            "function": rep["function"],
            "stack_lines": rep["stack_lines"],
            "reports": 1,
        }
        if rep["kind"] != "graph_break":
            entry["frame_skipped"] = True
        if rep["chained"]:
            entry["chained"] = rep["chained"]
        breaks.append(entry)
    breaks.sort(key=lambda b: (b["line"] if b["line"] is not None else -1, b["gb_id"] or ""))

    result.update({
        "breaks": breaks,
        "graph_count": out.graph_count,
        "op_count": out.op_count,
        "explain_break_lines": sorted(set(br_lines)),
    })
    if is_generator:
        result["forward_is_generator"] = True
    # any explain() break whose line we did not see in the trace is suspicious
    missing = sorted(set(br_lines) - {b["line"] for b in breaks})
    if missing:
        result["unmatched_explain_lines"] = missing
    return result


# --------------------------------------------------------------------------
# driver
# --------------------------------------------------------------------------
def run_isolated(case: Path) -> dict:
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--one", str(case)],
        capture_output=True, text=True, cwd=str(ROOT),
        env={**os.environ, "PYTHONHASHSEED": "0", "CUDA_VISIBLE_DEVICES": "", "PYTHONDONTWRITEBYTECODE": "1"},
    )
    marker = "STATICFX-RESULT "
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(marker):
            return json.loads(line[len(marker):])
    tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
    return {"file": case.name, "error": f"label subprocess failed (rc={proc.returncode}): {tail}"}


def finish(result: dict, header: dict) -> dict:
    note = header["note"]
    if note:
        result["note"] = note
    expect = header["expect"]
    if expect:
        result["expected"] = expect
        if "error" not in result:
            broke = bool(result["breaks"])
            result["matches_expectation"] = broke == (expect == "break")
    return result


def markdown_table(labels: dict) -> str:
    rows = ["| file | breaks? | gb ids | lines | graphs / ops | note |",
            "| --- | --- | --- | --- | --- | --- |"]
    for c in labels["cases"]:
        note = c.get("note", "").replace("|", "\\|")
        if "error" in c:
            rows.append(f"| {c['file']} | error | | | | {c['error']} |")
            continue
        bs = c["breaks"]
        if not bs:
            rows.append(f"| {c['file']} | no break | | | {c['graph_count']} / {c['op_count']} | {note} |")
            continue
        ids = []
        for b in bs:
            tag = b["gb_id"]
            if b.get("chained"):
                tag += " (+" + ", ".join(ch["gb_id"] for ch in b["chained"]) + ")"
            if b.get("frame_skipped"):
                tag += " frame skipped"
            if tag not in ids:
                ids.append(tag)
        lines = sorted({b["line"] for b in bs})
        flag = "" if c.get("matches_expectation", True) else " (surprise)"
        rows.append(f"| {c['file']} | break{flag} | {', '.join(ids)} | {', '.join(map(str, lines))} "
                    f"| {c['graph_count']} / {c['op_count']} | {note} |")
    return "\n".join(rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("cases", nargs="*", help="corpus file names; default: all (and write outputs)")
    ap.add_argument("--update", action="store_true",
                    help="replace (or add) the named cases in labels.json, keeping the others; "
                         "the labels must come from the same torch version")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--table", action="store_true",
                    help="print labels.json as the markdown table used in README.md, run nothing")
    args = ap.parse_args()

    if args.table:
        print(markdown_table(json.loads((EXPECTED / "labels.json").read_text())))
        return 0

    if args.one:
        res = run_one(Path(args.one))
        sys.stdout.flush()
        print("STATICFX-RESULT " + json.dumps(res, sort_keys=True))
        return 0

    import torch  # only for the version and the registry path

    files = sorted(CORPUS.glob("*.py"))
    if args.cases:
        files = [CORPUS / Path(c).name for c in args.cases]

    cases = []
    for f in files:
        header = parse_header(f)
        res = finish(run_isolated(f), header)
        cases.append(res)
        if "error" in res:
            desc = "ERROR " + res["error"]
        elif res["breaks"]:
            desc = ", ".join(
                f"L{b['line']} {b['gb_id']}" + (" (frame skipped)" if b.get("frame_skipped") else "")
                for b in res["breaks"])
        else:
            desc = "no break"
        flag = "" if res.get("matches_expectation", True) else "   <-- differs from expectation"
        print(f"{f.name:32s} {desc}{flag}", flush=True)

    if args.cases and not args.update:
        print(json.dumps(cases, indent=2, sort_keys=True))
        return 0

    if args.update:
        old = json.loads((EXPECTED / "labels.json").read_text())
        if old["torch_version"] != torch.__version__:
            print(f"labels.json is from torch {old['torch_version']}, this is {torch.__version__}: "
                  "relabel every case instead", file=sys.stderr)
            return 2
        named = {c["file"] for c in cases}
        cases += [c for c in old["cases"] if c["file"] not in named]

    registry = load_registry()
    labels = {"torch_version": torch.__version__, "cases": sorted(cases, key=lambda c: c["file"])}
    EXPECTED.mkdir(parents=True, exist_ok=True)
    (EXPECTED / "labels.json").write_text(json.dumps(labels, indent=2, sort_keys=True) + "\n")

    ids = set(EXTRA_IDS)
    for c in cases:
        for b in c.get("breaks", []):
            if b["gb_id"]:
                ids.add(b["gb_id"])
            for ch in b.get("chained", []):
                if ch["gb_id"]:
                    ids.add(ch["gb_id"])
    subset = {}
    for gid in sorted(ids):
        entry = registry[gid][0]  # the current variant; later ones are history
        subset[gid] = {
            "gb_type": entry["Gb_type"],
            "context": entry["Context"],
            "explanation": entry["Explanation"],
            "hints": entry["Hints"],
        }
    (EXPECTED / "registry_subset.json").write_text(
        json.dumps({"torch_version": torch.__version__, "ids": subset}, indent=2, sort_keys=True) + "\n")
    print(f"wrote {len(cases)} cases to {EXPECTED.relative_to(ROOT)}/labels.json, "
          f"{len(subset)} ids to registry_subset.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
