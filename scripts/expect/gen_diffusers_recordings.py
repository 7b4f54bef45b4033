"""What real diffusers builds for each model class from its defaults, the reference of
`tests/diffusers_classes.rs`.

Per-class analysis (what `staticfx check` and the editor do without an entry) builds a class
with its constructor's defaults; for a diffusers model those go through `@register_to_config`
into `self.config`. This script builds the same classes the same way, `Cls()`, on the meta
device (the defaults are full-size models: Flux's is 12B parameters, which the meta device
holds without memory), and records for each:

- `params`: the number of parameter elements (buffers not counted);
- `leaves`: every torch.nn leaf module (a `torch.nn` class with no children), as
  `[qualified name, class name]` in `named_modules()` order.

Run with a Python that has torch and diffusers (the versions are recorded):

    python scripts/expect/gen_diffusers_recordings.py [CLASS...]

It writes `tests/expected/diffusers/classes.json`: the diffusers and torch versions and one
entry per class with its file (relative to the `diffusers` package directory), or `error`
when diffusers itself cannot build the class.
"""

import inspect
import json
import sys
from pathlib import Path

import torch
import diffusers

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "tests" / "expected" / "diffusers" / "classes.json"

CLASSES = [
    "FluxTransformer2DModel",
    "SD3Transformer2DModel",
    "UNet2DConditionModel",
    "WanTransformer3DModel",
    "AutoencoderKL",
    "UNet2DModel",
    "PixArtTransformer2DModel",
    "DiTTransformer2DModel",
    "QwenImageTransformer2DModel",
    "HunyuanVideoTransformer3DModel",
    "LTXVideoTransformer3DModel",
    "CogVideoXTransformer3DModel",
    "AutoencoderKLWan",
    "SanaTransformer2DModel",
    "ControlNetModel",
]


def is_torch_leaf(m):
    return type(m).__module__.startswith("torch.nn") and not any(True for _ in m.children())


def record(name):
    cls = getattr(diffusers, name)
    package = Path(diffusers.__file__).parent
    entry = {"class": name, "file": str(Path(inspect.getfile(cls)).relative_to(package))}
    try:
        with torch.device("meta"):
            model = cls()
    except Exception as e:  # noqa: BLE001 - recorded, not raised
        entry["error"] = f"{type(e).__name__}: {e}"
        return entry
    entry["params"] = sum(p.numel() for p in model.parameters())
    entry["leaves"] = [[n, type(m).__name__] for n, m in model.named_modules() if n and is_torch_leaf(m)]
    return entry


def main():
    names = sys.argv[1:] or CLASSES
    old = json.loads(OUT.read_text()) if OUT.exists() and sys.argv[1:] else {"classes": []}
    kept = [c for c in old["classes"] if c["class"] not in names]
    recorded = kept + [record(n) for n in names]
    recorded.sort(key=lambda c: CLASSES.index(c["class"]) if c["class"] in CLASSES else len(CLASSES))
    OUT.parent.mkdir(parents=True, exist_ok=True)
    out = {"diffusers": diffusers.__version__, "torch": torch.__version__.split("+")[0], "classes": recorded}
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    for c in recorded:
        print(c["class"], c.get("error") or f"{c['params']} params, {len(c['leaves'])} leaves")


if __name__ == "__main__":
    main()
