#!/usr/bin/env python3
"""Generate reference torch.fx graphs (with ShapeProp shapes) for staticfx tests.

Run from the repository root with a Python that has torch and torchvision:

    "$VENV"/bin/python scripts/expect/gen_fx_expectations.py

For every case in tests/fixtures/models/manifest.json (our own fixture models)
and scripts/expect/torchvision_cases.json (torchvision models) this script:

  1. imports the module (fixtures by file path, torchvision ones as
     ``torchvision.<path>``),
  2. evaluates the case's ``entry`` expression in the module's namespace,
  3. puts the model in ``.eval()`` mode and runs ``torch.fx.symbolic_trace``,
     with every defaulted forward parameter the case gives no input for passed as
     ``concrete_args`` at its default: the graph of ``model(x)``, which is what
     staticfx builds. Without them torch.fx would trace such a parameter as a tensor
     (``attn_mask is not None`` would be true, as it never is for ``model(x)``),
  4. runs ``torch.fx.passes.shape_prop.ShapeProp(gm).propagate(*inputs)`` with
     inputs drawn from a fixed seed,
  5. writes tests/expected/fx/<id>.json.

It also writes tests/expected/fx/INDEX.json with every case, its node count and
whether it succeeded (failures are recorded with their error, never dropped).

The output depends only on the cases and the torch / torchvision versions:
running it twice produces byte-identical files.

Optional arguments: case ids to (re)generate only those; INDEX.json is then
updated in place for those ids.
"""

import builtins
import importlib
import importlib.util
import inspect
import json
import math
import operator
import os
import re
import sys
import traceback
import warnings
from pathlib import Path

import torch
import torch.fx
from torch.fx.passes.shape_prop import ShapeProp, TensorMetadata

try:
    import torchvision
except ImportError:  # pragma: no cover - torchvision cases will then fail
    torchvision = None

try:
    import timm
except ImportError:  # pragma: no cover - timm cases will then fail
    timm = None

REPO = Path(__file__).resolve().parents[2]
FIXTURE_DIR = REPO / "tests" / "fixtures" / "models"
FIXTURE_MANIFEST = FIXTURE_DIR / "manifest.json"
TV_CASES = Path(__file__).resolve().parent / "torchvision_cases.json"
TIMM_CASES = Path(__file__).resolve().parent / "timm_cases.json"
OUT_DIR = REPO / "tests" / "expected" / "fx"
INDEX_PATH = OUT_DIR / "INDEX.json"

SEED = 0

# Importing fixtures by path must not leave __pycache__ directories in the repo.
sys.dont_write_bytecode = True

# Namespaces searched (in this order) for the canonical dotted path of a
# call_function target.
CANONICAL_NAMESPACES = [
    ("operator", operator),
    ("builtins", builtins),
    ("torch", torch),
    ("torch.nn.functional", torch.nn.functional),
    ("torch.fft", torch.fft),
    ("torch.linalg", torch.linalg),
    ("torch.special", torch.special),
    ("math", math),
]

DTYPES = {
    "float32": torch.float32,
    "float64": torch.float64,
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
    "int64": torch.int64,
    "int32": torch.int32,
    "int16": torch.int16,
    "int8": torch.int8,
    "uint8": torch.uint8,
    "bool": torch.bool,
}


# --------------------------------------------------------------------------
# Encoding
# --------------------------------------------------------------------------

def dtype_name(dt):
    s = str(dt)
    return s[len("torch."):] if s.startswith("torch.") else s


def canonical_target(target):
    """Canonical dotted path of a call_function target."""
    name = getattr(target, "__name__", None)
    if name is not None:
        for prefix, mod in CANONICAL_NAMESPACES:
            if getattr(mod, name, None) is target:
                return f"{prefix}.{name}"
    # The object may be exported under a different name than its __name__.
    for prefix, mod in CANONICAL_NAMESPACES:
        names = sorted(n for n in dir(mod) if not n.startswith("__"))
        for n in names:
            try:
                if getattr(mod, n) is target:
                    return f"{prefix}.{n}"
            except Exception:
                continue
    module = getattr(target, "__module__", None)
    qualname = getattr(target, "__qualname__", None) or name
    return f"{module}.{qualname}"


def encode(value):
    """Encode an fx argument value as JSON-compatible data."""
    if isinstance(value, torch.fx.Node):
        return {"node": value.name}
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        # NaN / +-inf are not valid JSON numbers.
        return {"repr": repr(value)}
    if isinstance(value, (tuple, list)):
        return [encode(v) for v in value]
    if isinstance(value, slice):
        return {"slice": [encode(value.start), encode(value.stop), encode(value.step)]}
    if value is Ellipsis:
        return {"ellipsis": True}
    if isinstance(value, torch.dtype):
        return {"dtype": dtype_name(value)}
    if isinstance(value, torch.device):
        return {"device": str(value)}
    return {"repr": repr(value)}


def encode_kwargs(kwargs):
    return {str(k): encode(v) for k, v in kwargs.items()}


def node_target(node):
    if node.op == "call_function":
        return canonical_target(node.target)
    if node.op == "output":
        return "output"
    return str(node.target)


def node_record(node):
    tm = node.meta.get("tensor_meta")
    if isinstance(tm, TensorMetadata):
        shape = [int(d) for d in tm.shape]
        dtype = dtype_name(tm.dtype)
    else:
        shape = None
        dtype = None
    return {
        "name": node.name,
        "op": node.op,
        "target": node_target(node),
        "args": encode(list(node.args)),
        "kwargs": encode_kwargs(node.kwargs),
        "shape": shape,
        "dtype": dtype,
    }


def dump_case(doc):
    """Deterministic JSON text: header fields indented, one node per line."""
    def dumps(v):
        return json.dumps(v, ensure_ascii=False, allow_nan=False)

    lines = ["{"]
    for key, value in doc.items():
        if key == "nodes":
            continue
        lines.append(f"  {dumps(key)}: {dumps(value)},")
    lines.append('  "nodes": [')
    nodes = doc["nodes"]
    for i, n in enumerate(nodes):
        sep = "," if i + 1 < len(nodes) else ""
        lines.append(f"    {dumps(n)}{sep}")
    lines.append("  ]")
    lines.append("}")
    return "\n".join(lines) + "\n"


def write_text(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)


# --------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------

def load_cases():
    cases = []
    with open(FIXTURE_MANIFEST, encoding="utf-8") as f:
        for c in json.load(f):
            c = dict(c)
            c["kind"] = "fixtures"
            c["source"] = f"fixtures:models/{c['file']}"
            cases.append(c)
    with open(TV_CASES, encoding="utf-8") as f:
        for c in json.load(f):
            c = dict(c)
            c["kind"] = "torchvision"
            c["source"] = f"torchvision:{c['file']}"
            cases.append(c)
    with open(TIMM_CASES, encoding="utf-8") as f:
        for c in json.load(f):
            c = dict(c)
            c["kind"] = "timm"
            c["source"] = f"timm:{c['file']}"
            cases.append(c)
    ids = [c["id"] for c in cases]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise SystemExit(f"duplicate case ids: {dup}")
    return cases


def import_case_module(case):
    if case["kind"] == "fixtures":
        path = FIXTURE_DIR / case["file"]
        stem = Path(case["file"]).with_suffix("").as_posix().replace("/", "_")
        mod_name = f"staticfx_fixture_{stem}"
        if mod_name in sys.modules:
            return sys.modules[mod_name]
        spec = importlib.util.spec_from_file_location(mod_name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[mod_name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[mod_name]
            raise
        return module
    package = case["kind"]
    if (torchvision if package == "torchvision" else timm) is None:
        raise ImportError(f"{package} is not installed")
    rel = Path(case["file"]).with_suffix("").as_posix().replace("/", ".")
    return importlib.import_module(f"{package}.{rel}")


def defaults_left_alone(model, inputs):
    """The forward parameters `model(**inputs)` leaves at their defaults, with those defaults."""
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    params = inspect.signature(model.forward).parameters.items()
    concrete = {
        name: p.default
        for name, p in params
        if name not in inputs and p.kind in kinds and p.default is not inspect.Parameter.empty
    }
    return concrete or None


def make_inputs(spec):
    """Inputs in forward-parameter order, drawn from the fixed seed."""
    gen = torch.Generator().manual_seed(SEED)
    values = []
    for name, s in spec.items():
        shape = list(s["shape"])
        dt = DTYPES[s.get("dtype", "float32")]
        if dt == torch.bool:
            values.append(torch.randint(0, 2, shape, generator=gen).bool())
        elif dt.is_floating_point:
            values.append(torch.randn(shape, generator=gen).to(dt))
        else:
            low = int(s.get("low", 0))
            high = int(s.get("high", 10))
            values.append(torch.randint(low, high, shape, generator=gen, dtype=dt))
    return values


_ADDR = re.compile(r"0x[0-9a-fA-F]+")


def describe_error(stage, exc):
    msg = f"{type(exc).__name__}: {exc}"
    msg = _ADDR.sub("0x?", msg)
    # Keep the error compact and free of absolute paths of this machine.
    msg = msg.replace(str(REPO) + os.sep, "")
    if len(msg) > 2000:
        msg = msg[:2000] + "..."
    return f"{stage}: {msg}"


def run_case(case):
    """Returns (doc, None) on success or (None, error string)."""
    stage = "import"
    try:
        module = import_case_module(case)
        stage = "construct"
        torch.manual_seed(SEED)
        model = eval(case["entry"], module.__dict__)
        model.eval()
        stage = "symbolic_trace"
        gm = torch.fx.symbolic_trace(model, concrete_args=defaults_left_alone(model, case["inputs"]))
        stage = "shape_prop"
        inputs = make_inputs(case["inputs"])
        with torch.no_grad():
            ShapeProp(gm).propagate(*inputs)
        stage = "encode"
        nodes = [node_record(n) for n in gm.graph.nodes]
    except Exception as exc:  # record, never drop
        if os.environ.get("STATICFX_EXPECT_DEBUG"):
            traceback.print_exc()
        return None, describe_error(stage, exc)

    doc = {
        "id": case["id"],
        "source": case["source"],
        "entry": case["entry"],
        "inputs": case["inputs"],
        "torch_version": torch.__version__,
        "torchvision_version": torchvision.__version__ if torchvision is not None else None,
        **({"timm_version": timm.__version__} if case["kind"] == "timm" else {}),
        "nodes": nodes,
    }
    return doc, None


def main(argv):
    warnings.simplefilter("ignore")
    torch.set_num_threads(1)
    cases = load_cases()
    selected = set(argv)
    unknown = selected - {c["id"] for c in cases}
    if unknown:
        raise SystemExit(f"unknown case ids: {sorted(unknown)}")

    previous = {}
    if selected and INDEX_PATH.exists():
        with open(INDEX_PATH, encoding="utf-8") as f:
            for e in json.load(f)["cases"]:
                previous[e["id"]] = e

    OUT_DIR.mkdir(parents=True, exist_ok=True)
    index = []
    failed_required = []
    for case in cases:
        cid = case["id"]
        optional = bool(case.get("optional", False))
        if selected and cid not in selected:
            if cid in previous:
                index.append(previous[cid])
            continue
        doc, err = run_case(case)
        out = OUT_DIR / f"{cid}.json"
        entry = {
            "id": cid,
            "source": case["source"],
            "optional": optional,
            "ok": err is None,
            "node_count": len(doc["nodes"]) if doc else None,
            "error": err,
        }
        if err is None:
            write_text(out, dump_case(doc))
            print(f"ok    {cid:28s} {entry['node_count']:5d} nodes")
        else:
            # Do not leave a stale expectation behind for a failing case.
            if out.exists():
                out.unlink()
            print(f"FAIL  {cid:28s} {'(optional) ' if optional else ''}{err.splitlines()[0]}")
            if not optional:
                failed_required.append(cid)
        index.append(entry)

    index_doc = {
        "torch_version": torch.__version__,
        "torchvision_version": torchvision.__version__ if torchvision is not None else None,
        "timm_version": timm.__version__ if timm is not None else None,
        "cases": index,
    }
    write_text(INDEX_PATH, json.dumps(index_doc, indent=2, ensure_ascii=False) + "\n")
    if failed_required:
        print(f"required cases failed: {', '.join(failed_required)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
