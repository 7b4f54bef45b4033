#!/usr/bin/env python3
"""Expected outputs of eager PyTorch for the executor's numeric tests (tests/exec_numeric.rs).

Run from the repository root with the venv that has torch and torchvision:

    "$VENV"/bin/python scripts/exec/gen_run_expectations.py

For every case below it builds the model exactly as `staticfx run --entry` does (the
case's constructor expression evaluated in the module's namespace), puts it in eval
mode, fills its state_dict, draws inputs from a fixed seed, runs it, and writes to
tests/fixtures/exec/:

  <id>.inputs.safetensors    inputs keyed by forward parameter name
  <id>.expected.safetensors  outputs as `output` or `output.0`, `output.1`, ...
  <id>.weights.safetensors   the state_dict (small fixture models only)
  cases.json                 every case, with the torch version

Weights are not left at PyTorch's defaults (BatchNorm would be the identity): every
tensor is filled by `det_fill` below, a counter-based generator (splitmix64 of an FNV-1a
hash of the tensor name) that tests/exec_numeric.rs reimplements bit for bit. Large
(torchvision) models therefore commit only inputs and outputs; the test regenerates their
weights, writes them to a temporary safetensors file, and loads that through the
executor's normal path. Some fixtures store their weights as float16 / bfloat16 to cover
conversion; their eager run uses the same rounded weights.

The output depends only on the cases and the torch / torchvision versions.
"""

import importlib
import importlib.util
import json
import math
import sys
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import save_file

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "models"
OUT = REPO / "tests" / "fixtures" / "exec"
sys.dont_write_bytecode = True

SEED = 1234

# (id, source: fixture (tests/fixtures/models) | exec (tests/fixtures/exec) | torchvision, file, entry, inputs {name: (shape, dtype, high)}, weights: "commit-f32" |
# "commit-f16" | "commit-bf16" | "generate")
CASES = [
    ("mlp", "fixture", "mlp.py", "SimpleNet()", {"x": ([2, 784], "float32", None)}, "commit-f32"),
    ("mlp_f16", "fixture", "mlp.py", "SimpleNet()", {"x": ([3, 784], "float32", None)}, "commit-f16"),
    ("cnn", "fixture", "cnn.py", "SmallCNN()", {"x": ([2, 3, 32, 32], "float32", None)}, "commit-f32"),
    ("residual", "fixture", "residual.py", "ResidualNet()", {"x": ([2, 3, 16, 16], "float32", None)}, "commit-f32"),
    ("attention", "fixture", "attention.py", "SelfAttention(n_embd=32, n_head=4)", {"x": ([2, 5, 32], "float32", None)}, "commit-f32"),
    ("transformer_block", "fixture", "transformer_block.py", "TinyTransformer()", {"x": ([2, 6, 32], "float32", None)}, "commit-bf16"),
    ("embedding", "fixture", "embedding.py", "TokenEmbedding()", {"input_ids": ([2, 7], "int64", 100)}, "commit-f32"),
    ("conv1d", "fixture", "conv1d.py", "TemporalConvNet()", {"x": ([2, 4, 32], "float32", None)}, "commit-f32"),
    ("sequential", "fixture", "sequential.py", "MultiHeadRegressor()", {"x": ([4, 16], "float32", None)}, "commit-f32"),
    ("aliases", "fixture", "aliases.py", "AliasNet(dim=8)", {"x": ([3, 8], "float32", None)}, "commit-f32"),
    ("params", "fixture", "params.py", "GatedUnit()", {"x": ([4, 6], "float32", None)}, "commit-f32"),
    ("inheritance", "fixture", "inheritance.py", "ResidualEncoder()", {"x": ([3, 12], "float32", None)}, "commit-f32"),
    ("flags_norm_nobias", "fixture", "flags.py", "ConfigurableMLP(dim=10, depth=2, use_bias=False, use_norm=True, residual=False)", {"x": ([2, 10], "float32", None)}, "commit-f32"),
    ("mha_seq_first", "exec", "mha_model.py", "SeqFirstAttention()", {"x": ([5, 2, 16], "float32", None)}, "commit-f32"),
    ("mha_batch_first", "exec", "mha_model.py", "BatchFirstAttention()", {"x": ([2, 3, 16], "float32", None), "memory": ([2, 4, 16], "float32", None)}, "commit-f32"),
    ("decoder", "exec", "decoder_model.py", "Decoder()", {"z": ([2, 8, 5, 5], "float32", None)}, "commit-f32"),
    ("tv_resnet18", "torchvision", "models/resnet.py", "ResNet(BasicBlock, [2, 2, 2, 2])", {"x": ([1, 3, 64, 64], "float32", None)}, "generate"),
    ("tv_mobilenet_v2", "torchvision", "models/mobilenetv2.py", "MobileNetV2()", {"x": ([1, 3, 64, 64], "float32", None)}, "generate"),
    ("tv_squeezenet1_1", "torchvision", "models/squeezenet.py", 'SqueezeNet("1_1")', {"x": ([1, 3, 64, 64], "float32", None)}, "generate"),
    ("tv_shufflenet_v2_x1_0", "torchvision", "models/shufflenetv2.py", "ShuffleNetV2([4, 8, 4], [24, 116, 232, 464, 1024])", {"x": ([1, 3, 64, 64], "float32", None)}, "generate"),
    ("tv_mnasnet0_5", "torchvision", "models/mnasnet.py", "MNASNet(0.5)", {"x": ([1, 3, 64, 64], "float32", None)}, "generate"),
    ("tv_vit_tiny", "torchvision", "models/vision_transformer.py", "VisionTransformer(image_size=32, patch_size=16, num_layers=2, num_heads=2, hidden_dim=32, mlp_dim=64)", {"x": ([2, 3, 32, 32], "float32", None)}, "generate"),
    ("tv_alexnet", "torchvision", "models/alexnet.py", "AlexNet(num_classes=10)", {"x": ([1, 3, 64, 64], "float32", None)}, "generate"),
]

M64 = (1 << 64) - 1


def fnv1a64(s: str) -> int:
    h = 0xCBF29CE484222325
    for b in s.encode():
        h ^= b
        h = (h * 0x100000001B3) & M64
    return h


def splitmix64(x):
    """Vectorised splitmix64 finaliser of x + golden ratio (uint64 arithmetic wraps)."""
    with np.errstate(over="ignore"):
        z = x + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def det_uniform(name: str, n: int, lo: float, hi: float, seed: int) -> np.ndarray:
    key = np.uint64(fnv1a64(name) ^ seed)
    with np.errstate(over="ignore"):
        idx = key + np.arange(n, dtype=np.uint64)
    u = (splitmix64(idx) >> np.uint64(11)).astype(np.float64) * (2.0 ** -53)
    return (lo + (hi - lo) * u).astype(np.float32)


def det_range(name: str, shape) -> tuple:
    """The range `det_fill` draws a tensor from (mirrored in tests/exec_numeric.rs)."""
    local = name.rsplit(".", 1)[-1]
    if len(shape) >= 2:
        fan_in = int(np.prod(shape[1:]))
        b = math.sqrt(6.0 / max(fan_in, 1))
        return (-b, b)
    if local == "running_var":
        return (0.5, 1.5)
    if local == "weight":
        return (0.5, 1.5)
    return (-0.1, 0.1)


def det_fill(model: torch.nn.Module, seed: int) -> None:
    with torch.no_grad():
        for name, t in model.state_dict().items():
            if not t.dtype.is_floating_point:
                t.zero_()
                continue
            lo, hi = det_range(name, list(t.shape))
            v = det_uniform(name, t.numel(), lo, hi, seed)
            t.copy_(torch.from_numpy(v).reshape(t.shape))


def load_module(source: str, file: str):
    if source in ("fixture", "exec"):
        path = (FIXTURES if source == "fixture" else OUT) / file
        spec = importlib.util.spec_from_file_location(f"fixture_{path.stem}", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod
    return importlib.import_module("torchvision." + file[:-3].replace("/", "."))


def make_inputs(spec: dict, seed: int) -> dict:
    g = torch.Generator().manual_seed(seed)
    out = {}
    for name, (shape, dtype, high) in spec.items():
        if dtype == "int64":
            out[name] = torch.randint(0, high, shape, generator=g, dtype=torch.int64)
        else:
            out[name] = torch.randn(shape, generator=g, dtype=torch.float32)
    return out


def flatten(out, prefix="output"):
    if isinstance(out, (tuple, list)):
        res = {}
        for i, o in enumerate(out):
            res.update(flatten(o, f"{prefix}.{i}"))
        return res
    return {prefix: out.detach().contiguous()}


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    index = []
    for cid, source, file, entry, inputs, weights in CASES:
        mod = load_module(source, file)
        model = eval(entry, vars(mod))
        model.eval()
        det_fill(model, SEED)
        state = {k: v.detach().contiguous() for k, v in model.state_dict().items()}
        if weights in ("commit-f16", "commit-bf16"):
            dt = torch.float16 if weights == "commit-f16" else torch.bfloat16
            stored = {k: (v.to(dt) if v.is_floating_point() else v) for k, v in state.items()}
            # The eager model runs on exactly the weights the file holds.
            model.load_state_dict({k: v.to(torch.float32) if v.is_floating_point() else v for k, v in stored.items()})
            save_file(stored, OUT / f"{cid}.weights.safetensors")
        elif weights == "commit-f32":
            save_file(state, OUT / f"{cid}.weights.safetensors")
        xs = make_inputs(inputs, SEED)
        with torch.no_grad():
            out = model(**xs)
        outs = flatten(out)
        save_file(xs, OUT / f"{cid}.inputs.safetensors")
        save_file(outs, OUT / f"{cid}.expected.safetensors")
        index.append({
            "id": cid,
            "source": source,
            "file": file,
            "entry": entry,
            "inputs": {k: {"shape": v[0], "dtype": v[1]} for k, v in inputs.items()},
            "weights": "generate" if weights == "generate" else f"{cid}.weights.safetensors",
            "weight_seed": SEED,
            "outputs": {k: list(v.shape) for k, v in outs.items()},
            "parameters": sum(v.numel() for v in state.values()),
        })
        print(f"{cid}: {sum(v.numel() for v in state.values())} state values, outputs {[list(v.shape) for v in outs.values()]}")
    meta = {
        "torch_version": torch.__version__,
        "torchvision_version": importlib.import_module("torchvision").__version__,
        "threads": torch.get_num_threads(),
        "cases": index,
    }
    (OUT / "cases.json").write_text(json.dumps(meta, indent=1) + "\n")


if __name__ == "__main__":
    main()
