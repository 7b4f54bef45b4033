"""Eager recordings of tiny transformers models, the reference of `tests/hf_fidelity.rs`.

torch.fx cannot trace these models, so the reference is what eager PyTorch does for
`model(**inputs)` (eval mode, the config's default attention, sdpa): every call of a torch.nn
leaf module (qualified name, class, output shape) from forward hooks, and every tensor
operation outside those leaves (op name, output shape) from a `TorchFunctionMode`, plus the
model output's tensor fields and their shapes.

The forward runs with `torch.compiler.is_compiling()` answering True (`compiling_side`): the
graph staticfx builds is the one `torch.compile` captures, and Dynamo evaluates that predicate
(and transformers' `is_torchdynamo_compiling()`, which calls it) to True while it traces. So
the reference is eager PyTorch on the path Dynamo takes: e.g. the attention-mask helpers skip
their `torch.all(mask == 1)`-style early exits (data-dependent, Dynamo cannot take them) and
build the 4-d mask. Without the patch eager takes the other branch, which no compiled graph has.
For the same reason `@torch.jit.script` functions run as plain Python (`PYTORCH_JIT=0`): Dynamo
inlines their Python source (`_torchdynamo_inline`), a ScriptFunction hides their ops.

Run with a Python that has torch and transformers (the versions are recorded):

    python scripts/expect/gen_hf_recordings.py [--out DIR] [ID...]

It writes `scripts/expect/hf_cases.json` (every case with its entry expression, as staticfx
evaluates it in the modeling file) and `DIR/<id>.json` (default `tests/expected/hf`), or
`{"error": ...}` for a case transformers itself cannot build or run. Recordings of another
transformers version go to their own directory, e.g. `--out tests/expected/hf-4.57.1`.
"""

import json
import os
import sys
from pathlib import Path

# `@torch.jit.script` functions run as Python, as Dynamo runs them: `torch.jit.script` leaves
# `fn._torchdynamo_inline = fn` on the ScriptFunction ("Allow torch.compile() to inline"), so
# the compiled graph has their operations, which a ScriptFunction hides from the
# TorchFunctionMode. Set before torch is imported (torch.jit reads it once).
os.environ["PYTORCH_JIT"] = "0"

import torch  # noqa: E402
import transformers  # noqa: E402
from torch.overrides import TorchFunctionMode  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from hf_cases import CASES  # noqa: E402
from recording import compiling_side  # noqa: E402  (is_compiling() answers True in forward)

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "tests" / "expected" / "hf"

REFLECTED = {"radd", "rsub", "rmul", "rtruediv", "rfloordiv", "rpow", "rmatmul", "rand", "ror", "rxor"}
INPLACE = {"iadd", "isub", "imul", "itruediv", "ifloordiv", "ipow", "iand", "ior"}


def op_name(func):
    """The name staticfx's node target ends with: `torch.rsqrt` and `Tensor.rsqrt` are
    `rsqrt`, `Tensor.__radd__` is `add` (operator.add), `Tensor.__getitem__` is `getitem`."""
    name = getattr(func, "__name__", None) or str(func)
    if name.startswith("__") and name.endswith("__") and len(name) > 4:
        core = name[2:-2]
        if core in REFLECTED or core in INPLACE:
            core = core[1:]
        return core
    return name


def shape_of(v):
    return list(v.shape) if isinstance(v, torch.Tensor) else None


def first_tensor(v):
    if isinstance(v, torch.Tensor):
        return v
    if isinstance(v, (tuple, list)):
        for x in v:
            t = first_tensor(x)
            if t is not None:
                return t
    return None


class Recorder(TorchFunctionMode):
    def __init__(self):
        super().__init__()
        self.depth = 0
        self.ops = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        name = getattr(func, "__name__", "")
        # Attribute reads (`x.shape`, `x.dtype`) are not operations.
        if self.depth == 0 and name != "__get__":
            t = first_tensor(out)
            if t is not None:
                self.ops.append({"op": op_name(func), "shape": list(t.shape)})
        return out


def is_torch_leaf(m):
    return type(m).__module__.startswith("torch.nn") and not any(True for _ in m.children())


def make_inputs(spec):
    g = torch.Generator().manual_seed(0)
    out = {}
    for name, s in spec.items():
        dtype = getattr(torch, s["dtype"])
        if dtype.is_floating_point:
            out[name] = torch.randn(*s["shape"], generator=g, dtype=dtype)
        else:
            out[name] = torch.randint(s.get("low", 0), s.get("high", 10), s["shape"], generator=g, dtype=dtype)
    return out


def record(case):
    torch.manual_seed(0)
    config = getattr(transformers, case["config"])(**case["kwargs"])
    model = getattr(transformers, case["model"])(config).eval()
    rec = Recorder()
    leaves = []

    def pre(_m, _args):
        rec.depth += 1

    def post_for(qualname):
        def post(m, _args, out):
            rec.depth -= 1
            t = first_tensor(out)
            leaves.append({"name": qualname, "class": type(m).__name__, "shape": shape_of(t)})

        return post

    for qualname, m in model.named_modules():
        if qualname and is_torch_leaf(m):
            m.register_forward_pre_hook(pre)
            m.register_forward_hook(post_for(qualname))
    inputs = make_inputs(case["inputs"])
    with torch.no_grad(), compiling_side(torch), rec:
        out = model(**inputs)
    if isinstance(out, transformers.utils.ModelOutput):
        fields = {k: shape_of(v) for k, v in out.items() if isinstance(v, torch.Tensor)}
    else:
        fields = {str(i): shape_of(v) for i, v in enumerate(out) if isinstance(v, torch.Tensor)}
    return {
        "attn_implementation": config._attn_implementation,
        "leaves": leaves,
        "ops": rec.ops,
        "output": fields,
    }


def entry_of(case):
    args = ", ".join(f"{k}={v!r}" for k, v in case["kwargs"].items())
    return f"{case['model']}({case['config']}({args}))"


def main(args):
    out = OUT
    if args[:1] == ["--out"]:
        out, args = ROOT / args[1], args[2:]
    ids = set(args)
    out.mkdir(parents=True, exist_ok=True)
    cases = [dict(c, entry=entry_of(c)) for c in CASES]
    (Path(__file__).parent / "hf_cases.json").write_text(json.dumps(cases, indent=1) + "\n")
    for case in cases:
        if ids and case["id"] not in ids:
            continue
        try:
            result = record(case)
        except Exception as e:  # recorded, never dropped: the test reports it
            result = {"error": f"{type(e).__name__}: {e}"}
        result = {
            "id": case["id"],
            "torch": torch.__version__,
            "transformers": transformers.__version__,
            "entry": case["entry"],
            **result,
        }
        (out / f"{case['id']}.json").write_text(json.dumps(result, indent=1) + "\n")
        status = result.get("error") or f"{len(result['leaves'])} leaves, {len(result['ops'])} ops"
        print(f"{case['id']}: {status}")


if __name__ == "__main__":
    main(sys.argv[1:])
