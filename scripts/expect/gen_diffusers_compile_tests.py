"""diffusers' own compile tests, recorded: the reference of `tests/diffusers_compile_tests.rs`
(issue 42, item 2).

diffusers tests `torch.compile` on its models with `TorchCompileTesterMixin`
(tests/models/testing_utils/compile.py in the diffusers repository): each test class mixing it
in names a model class, an init dict (`get_init_dict()`) and dummy inputs
(`get_dummy_inputs()`), and `test_torch_compile_recompilation_and_graph_break` builds
`model_class(**init_dict)`, puts it in eval mode and runs `torch.compile(model, fullgraph=True)`
on `model(**inputs)` under `torch.no_grad()`. This script gets the same three things from the
same methods of every such test class and records, per test class:

- `entry`: the init dict as a constructor expression, `FluxTransformer2DModel(patch_size=1,
  ...)`, with the model's file relative to the `diffusers` package; `entry_not_literal` names the
  init values with no Python-literal spelling (written `<TypeName>`; none so far);
- `inputs`: each forward keyword argument as staticfx `--input` text, in the test's order:
  a tensor as `NAME=D0xD1:DTYPE` (`hidden_states=1x16x4:f32`, a 0-d tensor `NAME=:f32`), anything
  else as `NAME=<Python expression>` (`return_dict=False`, `img_shapes=[(1, 4, 4)]`; a tensor
  inside a list or dict as `torch.randn(2, 3)` / `torch.zeros(2, dtype=torch.int64)`), each with
  `tensor: true|false`; a value with no literal spelling (a flex-attention `BlockMask`) as
  `NAME=<BlockMask>` with `literal: false`;
- `eager`: every call of a torch.nn leaf module (a `torch.nn` class with no children), in call
  order, as `[qualified name, class, output shape]` (a tuple output: the list of its tensors'
  shapes), and `output`: the model output's tensor fields and their shapes (a `BaseOutput`'s
  field names, or a tuple's indices when the test passes `return_dict=False`; a field holding a
  list of tensors as the list of their shapes, a None field left out);
- `dynamo`: `torch._dynamo.explain(model)(**inputs)` on a model never called before, in eval mode
  under `torch.no_grad()` as the test runs it: the graph and graph-break counts, and each break
  Dynamo reports (its structured-trace artifacts, as `scripts/breaks/label_breaks.py` collects
  them) with its gb id, reason and innermost frame inside the diffusers package (`file` relative
  to the package, `line`); and next to it `fullgraph`: whether the test class's
  `test_torch_compile_recompilation_and_graph_break` compiles with `fullgraph=True` (following its
  `super()` calls), and `skip` / `xfail`: the reason when the test class skips it or expects it
  to fail;
- `status`: `ok`, or the step that failed (`import`, `build`, `eager`, `explain`, `timeout`) and
  its message.

Like `gen_hf_recordings.py`, the eager forward runs with `torch.compiler.is_compiling()` answering
True and `PYTORCH_JIT=0`, so the recording takes the branches Dynamo takes. Seeded
(`torch.manual_seed(0)` before the init dict, the build and the inputs), on CPU
(`DIFFUSERS_TEST_DEVICE=cpu`).

Each test class runs in a fresh interpreter with a time limit. Run with a Python that has torch,
diffusers and what diffusers' test modules import (pytest, accelerate, parameterized,
requests-mock), from the repository root:

    python scripts/expect/gen_diffusers_compile_tests.py DIFFUSERS_TESTS_DIR [--tests-rev COMMIT] \
        [--out tests/expected/diffusers/compile_tests.json] [--timeout 900] [TESTCLASS...]

DIFFUSERS_TESTS_DIR is the `tests` folder of a diffusers checkout (e.g. `git archive HEAD tests`
of the diffusers repository, whose commit `--tests-rev` records as `tests_rev`). A test
module that cannot be imported (its model class missing from the installed diffusers) is
recorded by its file with an `import` status. With TESTCLASS names only those are recorded again and the others are kept
from the existing output.
"""

import argparse
import ast
import contextlib
import copy
import importlib
import inspect
import io
import json
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

os.environ["PYTORCH_JIT"] = "0"
os.environ.setdefault("DIFFUSERS_TEST_DEVICE", "cpu")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

sys.path.insert(0, str(Path(__file__).resolve().parent))
from recording import (  # noqa: E402  (shared with gen_open_clip_recordings.py)
    compiling_side, error_text, hooked_copy, output_fields, record_dynamo, rel, run_isolated, summary,
)

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "tests" / "expected" / "diffusers" / "compile_tests.json"
MIXIN = "TorchCompileTesterMixin"

DTYPES = {
    "float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16", "int64": "i64",
    "int32": "i32", "int16": "i16", "int8": "i8", "uint8": "u8", "bool": "bool",
}


def test_modules(tests_dir: Path) -> list:
    """The test modules that mention the mixin, as dotted names under `tests`."""
    found = []
    for path in sorted((tests_dir / "models").rglob("test_*.py")):
        if MIXIN in path.read_text(encoding="utf-8"):
            rel = path.relative_to(tests_dir.parent).with_suffix("")
            found.append(".".join(rel.parts))
    return found


def import_tests(tests_dir: Path, module: str):
    sys.path.insert(0, str(tests_dir.parent))
    return importlib.import_module(module)


def compile_test_classes(mod) -> list:
    from tests.models.testing_utils.compile import TorchCompileTesterMixin

    return [
        name for name, c in vars(mod).items()
        if inspect.isclass(c) and c.__module__ == mod.__name__ and issubclass(c, TorchCompileTesterMixin)
        and c is not TorchCompileTesterMixin
    ]


# ---------------------------------------------------------------------------------------------
# values as text
def is_literal(v) -> bool:
    try:
        return ast.literal_eval(repr(v)) == v
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False


def tensor_expr(torch, t) -> str:
    dims = ", ".join(str(d) for d in t.shape)
    if t.dtype == torch.float32:
        return f"torch.randn({dims})" if dims else "torch.randn(())"
    if t.dtype.is_floating_point:
        return f"torch.randn({dims or '()'}, dtype=torch.{str(t.dtype).split('.')[-1]})"
    return f"torch.zeros({dims or '()'}, dtype=torch.{str(t.dtype).split('.')[-1]})"


def py_text(torch, v) -> str:
    """A Python expression for `v`: a literal, with the tensors inside written as factories."""
    if isinstance(v, torch.Tensor):
        return tensor_expr(torch, v)
    if isinstance(v, list):
        return "[" + ", ".join(py_text(torch, x) for x in v) + "]"
    if isinstance(v, tuple):
        inner = ", ".join(py_text(torch, x) for x in v)
        return f"({inner},)" if len(v) == 1 else f"({inner})"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k!r}: {py_text(torch, x)}" for k, x in v.items()) + "}"
    if isinstance(v, torch.dtype):
        return str(v)
    if not is_literal(v):
        raise NotLiteral(type(v).__name__)
    return repr(v)


class NotLiteral(Exception):
    """A value with no Python-literal spelling (a flex-attention `BlockMask`)."""


def input_text(torch, name, v) -> dict:
    if isinstance(v, torch.Tensor):
        dtype = DTYPES.get(str(v.dtype).split(".")[-1], str(v.dtype))
        dims = "x".join(str(d) for d in v.shape)
        return {"text": f"{name}={dims}:{dtype}", "tensor": True}
    try:
        return {"text": f"{name}={py_text(torch, v)}", "tensor": False}
    except NotLiteral as e:
        return {"text": f"{name}=<{e}>", "tensor": False, "literal": False}


# ---------------------------------------------------------------------------------------------
# one test class, in this interpreter
def is_torch_leaf(m) -> bool:
    return type(m).__module__.startswith("torch.nn") and not any(True for _ in m.children())


TEST = "test_torch_compile_recompilation_and_graph_break"
SKIP_CALL_RE = re.compile(r"pytest\.skip\(\s*(?P<q>[\"'])(?P<reason>.*?)(?P=q)", re.S)


def compile_test(cls) -> dict:
    """How the test class runs the mixin's compile test: `fullgraph` when the method it runs
    (following `super()` calls up the MRO) compiles with `fullgraph=True`, and the reason of a
    pytest `skip` or `xfail` mark on it or a `pytest.skip(...)` in its body."""
    out = {"fullgraph": False}
    fn = getattr(cls, TEST)
    for mark in getattr(fn, "pytestmark", []):
        if mark.name in ("skip", "xfail"):
            out[mark.name] = mark.kwargs.get("reason") or (mark.args[0] if mark.args else "")
    for klass in cls.__mro__:
        if TEST not in vars(klass):
            continue
        src = inspect.getsource(vars(klass)[TEST])
        src = src[src.index("def "):]  # the decorators' reasons may say `fullgraph=True` too
        skipped = SKIP_CALL_RE.search(src)
        if skipped and "skip" not in out:
            out["skip"] = skipped.group("reason")
        if "fullgraph=True" in src:
            out["fullgraph"] = True
        if f"super().{TEST}(" not in src:
            break
    return out


def record_one(tests_dir: Path, module: str, test_class: str) -> dict:
    import torch
    import torch._dynamo
    import diffusers

    pkg = os.path.realpath(os.path.dirname(diffusers.__file__))
    result = {"test": f"{module.split('.', 1)[1].replace('.', '/')}.py::{test_class}", "status": "ok"}
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            cls = getattr(import_tests(tests_dir, module), test_class)
            test = cls()
            model_class = test.model_class
            result.update(compile_test(cls))
            result["model"] = model_class.__name__
            result["file"] = rel(inspect.getsourcefile(model_class), pkg)
            torch.manual_seed(0)
            init = test.get_init_dict()
            torch.manual_seed(0)
            inputs = test.get_dummy_inputs()
        except Exception as e:  # noqa: BLE001 - recorded, not raised
            return dict(result, status=f"import: {error_text(e)}")
        args, not_literal = [], []
        for k, v in init.items():
            try:
                args.append(f"{k}={py_text(torch, v)}")
            except NotLiteral as e:
                args.append(f"{k}=<{e}>")
                not_literal.append(k)
        result["entry"] = f"{model_class.__name__}({', '.join(args)})"
        if not_literal:
            result["entry_not_literal"] = not_literal
        result["inputs"] = [dict(name=k, **input_text(torch, k, v)) for k, v in inputs.items()]
        try:
            torch.manual_seed(0)
            model = model_class(**init).eval()
        except Exception as e:  # noqa: BLE001
            return dict(result, status=f"build: {error_text(e)}")

        # eager, on a copy with hooks: Dynamo must see the model as a user compiles it
        eager_model, leaves = hooked_copy(
            torch, model, lambda m: ((q, x) for q, x in m.named_modules() if q and is_torch_leaf(x)))
        try:
            with torch.no_grad(), compiling_side(torch):
                out = eager_model(**copy.deepcopy(inputs))
        except Exception as e:  # noqa: BLE001
            return dict(result, status=f"eager: {error_text(e)}")
        result["eager"] = {"leaves": leaves, "output": output_fields(torch, out)}
        del eager_model

        return record_dynamo(result, torch, pkg, model, **inputs)


# ---------------------------------------------------------------------------------------------
# the driver
def list_classes(tests_dir: Path) -> list:
    """(module, test class) pairs, each module imported in a fresh interpreter."""
    cmd = [sys.executable, __file__, "--list", str(tests_dir)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return [tuple(p) for p in json.loads(proc.stdout.splitlines()[-1])]


def main() -> None:
    if sys.argv[1:2] == ["--one"]:
        module, test_class, tests_dir = sys.argv[2:5]
        result = record_one(Path(tests_dir), module, test_class)
        print(json.dumps(result))
        return
    if sys.argv[1:2] == ["--list"]:
        tests_dir = Path(sys.argv[2])
        pairs = []
        with contextlib.redirect_stdout(io.StringIO()):
            for module in test_modules(tests_dir):
                try:
                    mod = import_tests(tests_dir, module)
                except Exception as e:  # noqa: BLE001 - listed with the error
                    pairs.append([module, f"<import failed: {error_text(e)}>"])
                    continue
                pairs.extend([module, c] for c in compile_test_classes(mod))
        print(json.dumps(pairs))
        return

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tests_dir", type=Path, help="the tests folder of a diffusers checkout")
    ap.add_argument("only", nargs="*", help="record only these test classes")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--timeout", type=int, default=900, help="seconds per test class")
    ap.add_argument("--tests-rev", help="the diffusers commit the tests folder is from (recorded)")
    a = ap.parse_intermixed_args()
    tests_dir = a.tests_dir.resolve()

    import torch
    import diffusers

    old = json.loads(a.out.read_text()) if a.out.exists() and a.only else {"models": []}
    rev = a.tests_rev or old.get("tests_rev")
    kept = {m["test"]: m for m in old["models"]}
    models = []
    for module, test_class in list_classes(tests_dir):
        test = f"{module.split('.', 1)[1].replace('.', '/')}.py::{test_class}"
        if test_class.startswith("<import failed"):
            models.append({"test": test.split("::")[0], "status": f"import: {test_class[17:-1]}"})
            continue
        if a.only and test_class not in a.only:
            if test in kept:
                models.append(kept[test])
            continue
        res = run_isolated([__file__, "--one", module, test_class, str(tests_dir)], {"test": test},
                           a.timeout)
        models.append(res)
        print(f"{test}: {res.get('model')} {res['status']} {summary(res)}", flush=True)
        write(a.out, torch, diffusers, rev, models)
    write(a.out, torch, diffusers, rev, models)


def write(out: Path, torch, diffusers, rev, models: list) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    doc = {
        "diffusers": diffusers.__version__,
        "tests_rev": rev,
        "torch": torch.__version__.split("+")[0],
        "eager_is_compiling": True,
        "models": sorted(models, key=lambda m: m["test"]),
    }
    out.write_text(json.dumps(doc, indent=1) + "\n")


if __name__ == "__main__":
    main()
