"""open_clip models recorded in eager PyTorch and under Dynamo: the reference of
`tests/open_clip_models.rs` (issue 42, item 4: a held-out library).

open_clip (PyPI `open_clip_torch`) builds each model from a JSON config in
`open_clip/model_configs/NAME.json`: `create_model(NAME)` picks the class (`CoCa` when the config
has a `multimodal_cfg` and `custom_text`, `CustomTextCLIP` with `custom_text` alone, else `CLIP`)
and calls it with the config's other keys. This script does the same without a download and
without `create_model`: it reads the config, builds `Class(**config)` with random weights
(seeded) in eval mode, and records per model:

- `entry`: the constructor call as an expression staticfx can evaluate in the class's file
  (`CLIP(embed_dim=512, vision_cfg={...}, text_cfg={...})`), and `file`, that file relative to
  the `open_clip` package;
- `inputs`: forward's arguments as `--input` text: `image=1x3xHxW:f32` (H, W the config's
  `image_size`) and `text=1xL:i64` (L the text config's `context_length`);
- `eager`: every call of a leaf module as torch.fx counts them (a `torch.nn` class other than
  `Sequential`, `nn.MultiheadAttention` included, none inside another), in call order, as
  `[qualified name, class, output shape]` (a tuple output: the list of its items' shapes, None
  for an item that is not a tensor), and `output`: the output's tensor fields and their shapes (a tuple's indices or a
  dict's keys; a None field left out, a 0-d tensor as `[]`);
- `dynamo`: `torch._dynamo.explain(model)(image, text)` on a model never called before, under
  `torch.no_grad()`: graph and break counts, and each break Dynamo reports (structured-trace
  artifacts, collected as `scripts/breaks/label_breaks.py` collects them) with its gb id, reason
  and innermost frame inside the open_clip package (`file` relative to the package, `line`);
- `status`: `ok`, or the step that failed (`build`, `eager`, `explain`, `timeout`) and its message.

As `gen_diffusers_compile_tests.py` does, the eager forward runs with
`torch.compiler.is_compiling()` answering True and `PYTORCH_JIT=0`, so the recording takes the
branches Dynamo takes. Each model runs in a fresh interpreter with a time limit. Run with a
Python that has torch, timm and open_clip_torch (`pip install --no-deps open_clip_torch ftfy
regex wcwidth`), from the repository root:

    python scripts/expect/gen_open_clip_recordings.py [--out FILE] [--timeout 900] [MODEL...]

With MODEL names only those are recorded again and the others are kept from the existing output.
"""

import argparse
import contextlib
import copy
import io
import json
import os
import sys
import warnings
from pathlib import Path

os.environ["PYTORCH_JIT"] = "0"
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

sys.path.insert(0, str(Path(__file__).resolve().parent))
from recording import (  # noqa: E402  (shared with gen_diffusers_compile_tests.py)
    compiling_side, error_text, hooked_copy, output_fields, record_dynamo, rel, run_isolated, summary,
)

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "tests" / "expected" / "open_clip" / "models.json"

# config names: a ViT CLIP, its QuickGELU variant, the ModifiedResNet CLIP, CoCa, a timm tower
# (ConvNeXt) with open_clip's text tower, and SigLIP (timm ViT + CustomTextCLIP)
MODELS = [
    "ViT-B-32",
    "ViT-B-32-quickgelu",
    "RN50",
    "coca_ViT-B-32",
    "convnext_tiny",
    "ViT-B-16-SigLIP",
]


def is_fx_leaf(torch, m) -> bool:
    """torch.fx's leaf rule (`Tracer.is_leaf_module`): a module of `torch.nn` (or `torch.ao.nn`)
    other than `Sequential`. `nn.MultiheadAttention` is one though it has a child (`out_proj`,
    whose forward it never calls), and an empty `Sequential` is not. `ModuleList` and
    `ModuleDict` are never called, and their items are."""
    containers = (torch.nn.Sequential, torch.nn.ModuleList, torch.nn.ModuleDict)
    return type(m).__module__.startswith(("torch.nn", "torch.ao.nn")) and not isinstance(m, containers)


def leaf_names(torch, model) -> list:
    """The fx leaves of `model` that are not inside another leaf, in `named_modules()` order."""
    found = []
    for qualname, m in model.named_modules():
        if qualname and is_fx_leaf(torch, m) and not any(qualname.startswith(q + ".") for q, _ in found):
            found.append((qualname, m))
    return found


def py_text(v) -> str:
    """A Python expression for a JSON value (dicts keep their key order)."""
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k!r}: {py_text(x)}" for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(py_text(x) for x in v) + "]"
    return repr(v)


def model_class(open_clip, cfg: dict):
    """The class `create_model` picks for a config, and the config without `custom_text`."""
    cfg = dict(cfg)
    custom_text = cfg.pop("custom_text", False)
    if custom_text and "multimodal_cfg" in cfg:
        return open_clip.coca_model.CoCa, cfg
    if custom_text:
        return open_clip.model.CustomTextCLIP, cfg
    return open_clip.model.CLIP, cfg


def image_size(cfg: dict):
    size = cfg["vision_cfg"].get("image_size", 224)
    return (size, size) if isinstance(size, int) else tuple(size)


def record_one(name: str) -> dict:
    import torch
    import torch._dynamo
    import open_clip
    import open_clip.coca_model
    import open_clip.model

    pkg = os.path.realpath(os.path.dirname(open_clip.__file__))
    result = {"model": name, "status": "ok"}
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cfg = json.loads((Path(pkg) / "model_configs" / f"{name}.json").read_text())
        cls, kwargs = model_class(open_clip, cfg)
        result["class"] = cls.__name__
        result["file"] = rel(sys.modules[cls.__module__].__file__, pkg)
        result["entry"] = f"{cls.__name__}({', '.join(f'{k}={py_text(v)}' for k, v in kwargs.items())})"
        h, w = image_size(cfg)
        length = cfg["text_cfg"].get("context_length", 77)
        vocab = cfg["text_cfg"].get("vocab_size", 49408)
        result["inputs"] = [f"image=1x3x{h}x{w}:f32", f"text=1x{length}:i64"]
        try:
            torch.manual_seed(0)
            model = cls(**copy.deepcopy(kwargs)).eval()
        except Exception as e:  # noqa: BLE001 - recorded, not raised
            return dict(result, status=f"build: {error_text(e)}")
        torch.manual_seed(0)
        image = torch.randn(1, 3, h, w)
        text = torch.randint(1, vocab, (1, length))
        eager_model, leaves = hooked_copy(torch, model, lambda m: leaf_names(torch, m))
        try:
            with torch.no_grad(), compiling_side(torch):
                out = eager_model(image, text)
        except Exception as e:  # noqa: BLE001
            return dict(result, status=f"eager: {error_text(e)}")
        # a 0-d tensor (CLIP's `logit_scale.exp()`) keeps its shape `[]`
        result["eager"] = {"leaves": leaves, "output": output_fields(torch, out, keep_0d=True)}
        del eager_model
        return record_dynamo(result, torch, pkg, model, image, text)


def main() -> None:
    if sys.argv[1:2] == ["--one"]:
        print(json.dumps(record_one(sys.argv[2])))
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("only", nargs="*", help="record only these models")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--timeout", type=int, default=900, help="seconds per model")
    a = ap.parse_args()
    import torch
    import open_clip

    old = json.loads(a.out.read_text()) if a.out.exists() and a.only else {"models": []}
    kept = {m["model"]: m for m in old["models"]}
    models = []
    for name in MODELS:
        if a.only and name not in a.only:
            if name in kept:
                models.append(kept[name])
            continue
        res = run_isolated([__file__, "--one", name], {"model": name}, a.timeout)
        models.append(res)
        print(f"{name}: {res.get('class')} {res['status']} {summary(res)}", flush=True)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    doc = {
        "open_clip": open_clip.__version__,
        "torch": torch.__version__.split("+")[0],
        "eager_is_compiling": True,
        "models": models,
    }
    a.out.write_text(json.dumps(doc, indent=1) + "\n")


if __name__ == "__main__":
    main()
