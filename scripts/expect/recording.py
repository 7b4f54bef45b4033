"""What the recorders of a library's models in eager PyTorch and under Dynamo share
(`gen_diffusers_compile_tests.py`, `gen_open_clip_recordings.py`; the references of the replay
suites `tests/diffusers_compile_tests.rs` and `tests/open_clip_models.rs`): shapes as a recording
writes them, the eager forward on Dynamo's side of `torch.compiler.is_compiling()` with its leaf
calls hooked, `torch._dynamo.explain`'s breaks by their innermost frame inside the library's
package, and each model's run in a fresh interpreter with a time limit.

Nothing here imports torch: the scripts pass it in, so their parent process (which only runs the
children) does not need to load it before it must.
"""

import copy
import json
import os
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "breaks"))
import label_breaks as lb  # noqa: E402  (trace capture, registry)


def shapes_of(torch, v):
    """A tensor's shape; for a tuple or list output, the list of its items' (None for a
    non-tensor item); None otherwise."""
    if isinstance(v, torch.Tensor):
        return list(v.shape)
    if isinstance(v, (tuple, list)):
        return [shapes_of(torch, x) for x in v]
    return None


def output_fields(torch, out, keep_0d: bool = False) -> dict:
    """The output's tensor fields and their shapes: a tuple's indices or a dict's keys (diffusers'
    `BaseOutput` is an OrderedDict); a field holding a list of tensors (Cosmos3's per-modality
    predictions) keeps its list, a None or empty field is left out, and so is a 0-d tensor
    (shape `[]`) unless `keep_0d` (CLIP's `logit_scale.exp()`)."""
    if isinstance(out, torch.Tensor):
        return {"0": list(out.shape)}
    if isinstance(out, dict):
        fields = out.items()
    elif isinstance(out, (tuple, list)):
        fields = ((str(i), v) for i, v in enumerate(out))
    else:
        return {}
    return {k: s for k, v in fields
            if (s := shapes_of(torch, v)) is not None
            and (s != [] or (keep_0d and isinstance(v, torch.Tensor)))}


@contextmanager
def compiling_side(torch):
    """`torch.compiler.is_compiling()` and its aliases answer True, as under Dynamo's tracing."""
    import torch._dynamo.external_utils
    import torch._utils

    spots = [(torch.compiler, "is_compiling"), (torch.compiler, "is_dynamo_compiling"),
             (torch._dynamo, "is_compiling"), (torch._dynamo.external_utils, "is_compiling"),
             (torch._utils, "is_compiling")]
    saved = [(m, n, getattr(m, n)) for m, n in spots if hasattr(m, n)]
    for m, n, _ in saved:
        setattr(m, n, lambda: True)
    try:
        yield
    finally:
        for m, n, f in saved:
            setattr(m, n, f)


def hooked_copy(torch, model, leaves_of):
    """A deep copy of `model` for the eager run (Dynamo must then see the model as a user
    compiles it, without hooks), and the list its leaf modules (`leaves_of(copy)`, (qualified
    name, module) pairs) append `[qualified name, class, output shape]` to at each call."""
    leaves = []
    eager_model = copy.deepcopy(model)
    for qualname, m in leaves_of(eager_model):
        m.register_forward_hook(
            lambda mod, _a, out, q=qualname: leaves.append([q, type(mod).__name__, shapes_of(torch, out)]))
    return eager_model, leaves


def rel(path: str, pkg: str):
    """`path` relative to the package directory `pkg` (posix), None outside it."""
    path = os.path.realpath(path)
    return Path(path[len(pkg) + 1:]).as_posix() if path.startswith(pkg + os.sep) else None


def error_text(e: BaseException) -> str:
    return (f"{type(e).__name__}: {e}".splitlines() or [""])[0][:300]


def record_dynamo(result: dict, torch, pkg: str, model, *args, **kwargs) -> dict:
    """`torch._dynamo.explain(model)(*args, **kwargs)` under `torch.no_grad()`, on a Dynamo
    reset first, into `result["dynamo"]`: the graph and graph-break counts and the breaks (see
    `breaks_of`); `result` with status `explain: ...` when explain raises."""
    events: list = []
    lb.capture_breaks(torch, events)
    known = lb.gb_type_map(lb.load_registry())
    torch._dynamo.reset()
    try:
        with torch.no_grad():
            ex = torch._dynamo.explain(model)(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - recorded, not raised
        return dict(result, status=f"explain: {error_text(e)}")
    result["dynamo"] = {
        "graph_count": ex.graph_count,
        "graph_break_count": ex.graph_break_count,
        "breaks": breaks_of(events, pkg, known),
    }
    return result


def breaks_of(events: list, pkg: str, known: dict) -> list:
    """One entry per (gb id, innermost frame inside the package `pkg`), in the order Dynamo
    reported them (the structured-trace artifacts `label_breaks.capture_breaks` collects)."""
    seen = {}
    breaks = []
    for kind, reason, frames in events:
        stack = [{"file": r, "line": ln, "function": fn.strip()}
                 for (f, ln, fn) in frames if (r := rel(f, pkg)) is not None]
        types = lb.gb_types_in(reason, known)
        gb_id = known.get(types[0]) if types else None
        doc = lb.DOC_ID_RE.search(reason)
        if gb_id is None and doc:
            gb_id = "GB" + doc.group("num")
        site = stack[-1] if stack else None
        key = (gb_id, None if site is None else (site["file"], site["line"]))
        if key in seen:
            breaks[seen[key]]["reports"] += 1
            continue
        seen[key] = len(breaks)
        text = lb.field(reason, "Explanation:") or (reason.strip().splitlines() or [""])[0]
        entry = {
            "gb_id": gb_id,
            "gb_type": types[0] if types else None,
            "reason": lb.ADDR_RE.sub("0x?", text)[:240],
            "file": None if site is None else site["file"],
            "line": None if site is None else site["line"],
            "stack": stack,
            "reports": 1,
        }
        if kind != "graph_break":
            entry["frame_skipped"] = True
        breaks.append(entry)
    return breaks


def run_isolated(args: list, stub: dict, timeout: int) -> dict:
    """The result of `python *args` (a script's `--one` run, which prints it as its last JSON
    line) in a fresh interpreter; `stub` (the entry's key) with a `timeout` or `crashed` status
    when it takes more than `timeout` seconds or prints none."""
    cmd = [sys.executable, *args]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return dict(stub, status=f"timeout: more than {timeout} s")
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1][:300]
        return dict(stub, status=f"crashed (rc={proc.returncode}): {tail}")
    return json.loads(lines[-1])


def summary(res: dict) -> str:
    """A recorded entry in a few words: its leaf calls, graphs and breaks (empty when failed)."""
    dyn = res.get("dynamo")
    return (f"{len(res['eager']['leaves'])} leaf calls, {dyn['graph_count']} graphs, "
            f"{dyn['graph_break_count']} breaks") if dyn else ""
