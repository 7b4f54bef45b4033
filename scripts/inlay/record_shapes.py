"""Records, with real PyTorch, the shape and dtype of every tensor an assignment binds while a
class's `forward` runs: the reference of `tests/inlay_truth.rs`, which holds staticfx's inlay
hints to it.

Each case is one source file and the classes of it staticfx analyses there. A class is built
the way staticfx's per-class analysis builds it (a required `config` is its config class's
defaults, a required `layer_idx` the first layer's; other constructor arguments torch needs and
staticfx leaves unknown are given in the case), and its `forward` runs on the inputs the case
names. Inputs are of two kinds, and the recording says which:

- `example`: plain tensors; the test hands their shapes to staticfx as the editor's
  `exampleInputs`, so its hints are concrete;
- `convention`: what staticfx's per-class analysis seeds by itself for a config-built class
  (`hidden_states` `[s0, s1, hidden]`, `position_embeddings` the rotary `(cos, sin)`); torch runs
  them with the sizes given here, and the test substitutes those sizes for the symbols.

The model is built and run on the meta device: shapes and dtypes are computed as on the CPU,
with no memory for the weights (a default LlamaConfig is 7B parameters). The forward runs with
`torch.compiler.is_compiling()` answering True, the path Dynamo traces and staticfx follows (see
scripts/expect/gen_hf_recordings.py).

A line tracer follows every frame of the case's file. When a frame moves past an assignment
statement (a line event outside it, or the return), the names it bound (as staticfx notes them:
plain names, in tuples and lists too, not `_`, not starred or attribute targets) are read from
the frame's locals. Per class, per statement (its first line), per name: the distinct values, as
the hint writes them (`[2, 7, 4096]`, `[2, 7] int64`), or `not a tensor`.

    /path/to/venv/bin/python scripts/inlay/record_shapes.py

needs torch, transformers and timm, and the sources staticfx reads: STATICFX_TRANSFORMERS_ROOT
and STATICFX_TIMM_ROOT (the folders holding the `transformers` and `timm` packages). They are put
first on sys.path, so torch runs the very files staticfx reads; each recording keeps the file's
sha256, and the test skips a file whose text differs. Writes tests/expected/inlay/<case>.json.
"""

import ast
import contextlib
import hashlib
import inspect
import json
import os
import sys
from pathlib import Path

# `@torch.jit.script` functions run as Python, as Dynamo runs them (gen_hf_recordings.py).
os.environ["PYTORCH_JIT"] = "0"

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "tests" / "expected" / "inlay"

BATCH, SEQ = 2, 7
NOT_A_TENSOR = "not a tensor"


def tensor(*shape, dtype="float32"):
    return {"shape": list(shape), "dtype": dtype}


# The hidden and rotary sizes of a default LlamaConfig (hidden_size 4096, 32 heads).
LLAMA_HIDDEN, LLAMA_HEAD = 4096, 128
ROTARY = [tensor(BATCH, SEQ, LLAMA_HEAD), tensor(BATCH, SEQ, LLAMA_HEAD)]

CASES = {
    "llama": {
        "root_env": "STATICFX_TRANSFORMERS_ROOT",
        "file": "transformers/models/llama/modeling_llama.py",
        "config": "LlamaConfig",
        "classes": {
            # `hidden_size` is required: staticfx leaves it unknown, torch needs one.
            "LlamaRMSNorm": {
                "init": {"hidden_size": LLAMA_HIDDEN},
                "example": {"hidden_states": tensor(BATCH, SEQ, LLAMA_HIDDEN)},
            },
            "LlamaRotaryEmbedding": {
                "example": {
                    "x": tensor(BATCH, SEQ, LLAMA_HIDDEN),
                    "position_ids": tensor(1, SEQ, dtype="int64"),
                },
            },
            "LlamaMLP": {"example": {"x": tensor(BATCH, SEQ, LLAMA_HIDDEN)}},
            "LlamaAttention": {
                "convention": {
                    "hidden_states": tensor(BATCH, SEQ, LLAMA_HIDDEN),
                    "position_embeddings": ROTARY,
                },
            },
            "LlamaDecoderLayer": {
                "convention": {
                    "hidden_states": tensor(BATCH, SEQ, LLAMA_HIDDEN),
                    "position_embeddings": ROTARY,
                },
            },
            "LlamaModel": {"example": {"input_ids": tensor(BATCH, SEQ, dtype="int64")}},
            "LlamaForCausalLM": {"example": {"input_ids": tensor(BATCH, SEQ, dtype="int64")}},
        },
    },
    "timm_vision_transformer": {
        "root_env": "STATICFX_TIMM_ROOT",
        "file": "timm/models/vision_transformer.py",
        "classes": {
            "VisionTransformer": {"example": {"x": tensor(BATCH, 3, 224, 224)}},
        },
    },
}


def module_name(file):
    return file[: -len(".py")].replace("/", ".")


@contextlib.contextmanager
def compiling_side():
    sys.path.insert(0, str(ROOT / "scripts" / "expect"))
    from gen_hf_recordings import compiling_side as patched

    with patched():
        yield


def make(spec, torch):
    if isinstance(spec, list):
        return tuple(make(s, torch) for s in spec)
    dtype = getattr(torch, spec["dtype"])
    return torch.zeros(spec["shape"], dtype=dtype)


def hint_text(value, torch):
    if not isinstance(value, torch.Tensor):
        return NOT_A_TENSOR
    shape = "[" + ", ".join(str(d) for d in value.shape) + "]"
    dtype = str(value.dtype).removeprefix("torch.")
    return shape if dtype == "float32" else f"{shape} {dtype}"


def bound_names(target, out):
    """The names staticfx notes for an assignment target."""
    if isinstance(target, ast.Name):
        if target.id != "_":
            out.append(target.id)
    elif isinstance(target, (ast.Tuple, ast.List)):
        for t in target.elts:
            bound_names(t, out)


class Assignments:
    """The assignment statements of a file, for the line a frame is on."""

    def __init__(self, text):
        self.at_line = {}
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, ast.AugAssign) or (isinstance(node, ast.AnnAssign) and node.value):
                targets = [node.target]
            else:
                continue
            names = []
            for t in targets:
                bound_names(t, names)
            if names:
                statement = (node.lineno, node.end_lineno, names)
                for line in range(node.lineno, node.end_lineno + 1):
                    self.at_line[line] = statement


class Recorder:
    """A line tracer over the frames of one file: after each assignment statement, the values
    of the names it bound."""

    def __init__(self, path, assignments, torch):
        self.path = path
        self.assignments = assignments
        self.torch = torch
        self.lines = {}
        # frame → the assignment statement it is inside of, if any
        self.pending = {}

    def global_trace(self, frame, event, arg):
        if os.path.realpath(frame.f_code.co_filename) != self.path:
            return None
        return self.local_trace

    def local_trace(self, frame, event, arg):
        if event not in ("line", "return"):
            return self.local_trace
        statement = self.pending.get(frame)
        if statement is not None:
            first, last, names = statement
            if event == "return" or not (first <= frame.f_lineno <= last):
                del self.pending[frame]
                self.note(first, names, frame.f_locals)
        if event == "line" and frame not in self.pending:
            statement = self.assignments.at_line.get(frame.f_lineno)
            if statement is not None:
                self.pending[frame] = statement
        return self.local_trace

    def note(self, line, names, local_vars):
        at = self.lines.setdefault(str(line), {})
        for name in names:
            if name not in local_vars:
                # The statement raised before binding (caught further up): nothing bound.
                continue
            seen = at.setdefault(name, [])
            shown = hint_text(local_vars[name], self.torch)
            if shown not in seen:
                seen.append(shown)


def build(cls, case_spec, class_spec, module):
    kwargs = dict(class_spec.get("init", {}))
    params = list(inspect.signature(cls.__init__).parameters.values())[1:]
    required = [p for p in params if p.default is inspect.Parameter.empty
                and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    for p in required:
        if p.name == "config" and "config" not in kwargs:
            kwargs["config"] = getattr(module, case_spec["config"])()
        elif p.name == "layer_idx" and "config" in kwargs:
            kwargs["layer_idx"] = 0
    return cls(**kwargs)


def record_case(name, case):
    root = os.environ[case["root_env"]]
    import importlib

    import torch

    path = os.path.realpath(os.path.join(root, case["file"]))
    text = Path(path).read_text()
    module = importlib.import_module(module_name(case["file"]))
    if os.path.realpath(module.__file__) != path:
        sys.exit(f"{module.__name__} imported from {module.__file__}, not {path}")
    assignments = Assignments(text)
    classes = {}
    for class_name, class_spec in case["classes"].items():
        kind = "example" if "example" in class_spec else "convention"
        inputs = class_spec[kind]
        with torch.device("meta"):
            model = build(getattr(module, class_name), case, class_spec, module)
            args = {k: make(v, torch) for k, v in inputs.items()}
        recorder = Recorder(path, assignments, torch)
        with compiling_side(), torch.no_grad():
            sys.settrace(recorder.global_trace)
            try:
                model(**args)
            finally:
                sys.settrace(None)
        classes[class_name] = {"inputs_kind": kind, "inputs": inputs, "lines": recorder.lines}
        print(f"{name}: {class_name}: {len(recorder.lines)} statements", file=sys.stderr)
    import timm
    import transformers

    recording = {
        "file": case["file"],
        "root_env": case["root_env"],
        "sha256": hashlib.sha256(text.encode()).hexdigest(),
        "torch": torch.__version__.split("+")[0],
        "transformers": transformers.__version__,
        "timm": timm.__version__,
        "classes": classes,
    }
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / f"{name}.json").write_text(json.dumps(recording, indent=1, sort_keys=True) + "\n")


def main(names):
    names = names or list(CASES)
    # Every root first on sys.path before anything imports: a case's file imports the others'
    # packages (transformers imports timm), which must come from the roots too.
    for name in names:
        env = CASES[name]["root_env"]
        if not os.environ.get(env):
            sys.exit(f"set {env} to the folder holding the package of {CASES[name]['file']}")
        sys.path.insert(0, os.environ[env])
    for name in names:
        record_case(name, CASES[name])


if __name__ == "__main__":
    main(sys.argv[1:])
