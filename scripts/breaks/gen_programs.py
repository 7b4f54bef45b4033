#!/usr/bin/env python3
"""Generate small, seeded nn.Module programs for checking the graph-break rules at scale.

Usage (from the repository root; plain Python, no torch needed):

    python3 scripts/breaks/gen_programs.py                     # 2,000 programs, seed 18
    python3 scripts/breaks/gen_programs.py -n 50 --seed 3 -o /tmp/p.jsonl

Each program is one module file with a class ``Model`` whose ``forward`` strings together a
few *constructs*: the sites every rule in ``src/breaks`` covers (tensor conditions,
``.item()`` / ``.tolist()`` / ``int(t)``, data-dependent shape ops, print / logging / clocks,
``copy.deepcopy``, ``requires_grad_``, ...) and their look-alikes that must not break
(shape-derived and constant conditions, ``is None``, ``isinstance``, ``self.training``, casts
of shapes, masked writes, ``torch.where``, deepcopy of a dict, ...). Each construct is placed
directly in forward or wrapped: in a method, in a module-level function, two or three helpers
deep, in a ``for`` loop, in a closure defined in forward, or in a branch. Around them go
loops over layers, comprehensions, generator helpers, in-place ops, mutation of ``self``
attributes, an ``autograd.Function`` and ``torch.compiler.disable``d helpers.

The running tensor is always ``h`` of shape [4, 8] (float32, requires grad through
``self.fc``), so constructs compose. Programs must run in eager PyTorch; the labeller
(``label_generated.py``) records the ones that raise instead of breaking.

Output: one JSON object per line, ``{"id", "seed", "inputs", "constructs", "source"}``, where
``inputs`` is forward's positional inputs as ``"name=[dims]"`` or ``"name=[dims]:i64"``
(the format of the hand-written corpus's ``staticfx-case`` header) and ``constructs`` names
what was put where (for reading a failure, not for labelling: labels come from Dynamo).
The same seed always gives the same bytes.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_OUT = ROOT / "tests" / "fixtures" / "breaks_generated" / "programs.jsonl"


@dataclass
class Snippet:
    """One construct: statements over `h` (and `x`, `labels`, `mask`), plus what it needs
    around it."""

    name: str
    body: list
    needs_self: bool = False
    module_level: list = field(default_factory=list)
    init: list = field(default_factory=list)
    needs_labels: bool = False
    # a statement that returns early; only valid as the last statement of a frame body
    returns: bool = False
    # must stay in forward itself (e.g. a `yield` makes the frame a generator)
    forward_only: bool = False


class Gen:
    def __init__(self, rng: random.Random):
        self.rng = rng
        self.k = 0  # unique suffix for names

    def uid(self) -> int:
        self.k += 1
        return self.k

    def pick(self, xs):
        return self.rng.choice(xs)

    # ---------------------------------------------------------------- conditions
    def tensor_cond(self) -> str:
        return self.pick([
            "h.sum() > 0",
            "h.mean() > 0.1",
            "(h > 0).any()",
            "torch.all(h > -10)",
            "h.max() > 1",
            "h.norm() < 100",
            "not (h > 5).any()",
            "h.sum() > 0 and h.min() < 1",
            "self.flag and h.mean() > 0",
            "x.sum() > 0",
        ])

    def static_cond(self) -> str:
        return self.pick([
            "h.shape[0] > 2",
            "x.dim() == 2",
            "h.size(-1) == 8",
            "x.numel() > 0",
            "len(x) == 4",
            "self.flag",
            "not self.flag",
            "self.mode == 'a'",
            "self.training",
            "mask is None",
            "mask is not None",
            "isinstance(x, torch.Tensor)",
            "isinstance(self.fc, nn.Linear)",
            "h.dtype == torch.float32",
            "x.shape[0] > 2 and self.flag",
            "h.is_floating_point()",
            "self.count >= 0",
        ])

    def cond(self) -> Snippet:
        data = self.rng.random() < 0.5
        c = self.tensor_cond() if data else self.static_cond()
        needs_self = "self." in c
        form = self.pick(["if", "if_else", "ternary", "while"] if data else ["if", "if_else", "ternary"])
        if form == "if":
            body = [f"if {c}:", "    h = h * 2"]
        elif form == "if_else":
            body = [f"if {c}:", "    h = torch.relu(h)", "else:", "    h = torch.tanh(h)"]
        elif form == "ternary":
            body = [f"h = h + 1 if {c} else h - 1"]
        else:
            body = ["while h.norm() > 1:", "    h = h / 2"]
        if "mask is not None" in c:
            body = [f"if {c}:", "    h = h * mask"]
        return Snippet(f"cond_{'data' if data else 'static'}_{form}", body, needs_self=needs_self)

    def early_return(self) -> Snippet:
        c = self.pick(["x.numel() == 0", "h.shape[0] == 0", "h.sum() > 1000", "(h > 100).all()"])
        return Snippet("early_return", [f"if {c}:", "    return h"], returns=True)

    # ---------------------------------------------------------------- scalars
    def scalar(self) -> Snippet:
        v = self.pick([
            ("item", ["s = h.sum().item()", "h = h * s"]),
            ("item_max", ["s = h.max().item()", "h = h / (abs(s) + 1)"]),
            ("int", ["n = int(h.argmax())", "h = h + n"]),
            ("float", ["s = float(h.std())", "h = h * s"]),
            ("bool", ["b = bool((h > 0).any())", "h = h + 1 if b else h"]),
            ("math", ["s = math.sqrt(h.var())", "h = h * s"]),
            ("item_cond", ["if h.mean().item() > 0:", "    h = h - 1"]),
            ("range_item", ["for _ in range(int(x.abs().sum().item()) % 2 + 1):", "    h = torch.tanh(h)"]),
            ("int_shape", ["n = int(x.shape[0])", "h = h * n"]),
            ("float_size", ["s = float(h.size(-1))", "h = h / s"]),
            ("len", ["h = h * len(x)"]),
            ("math_shape", ["h = h / math.sqrt(h.shape[-1])"]),
            ("tensor_scalar", ["s = h.sum() * 2", "h = h + s"]),
            ("bool_flag", ["h = h * int(bool(self.flag))"]),
        ])
        return Snippet(f"scalar_{v[0]}", v[1], needs_self="self." in "".join(v[1]))

    def tolist(self) -> Snippet:
        v = self.pick([
            ("float", ["vals = h.mean(0).tolist()", "h = h * len(vals)"]),
            ("int", ["ids = h.argmax(-1).tolist()", "h = h + len(ids)"]),
            ("labels", ["ls = labels.tolist()", "h = h * len(ls)"]),
            ("shape_list", ["dims = list(h.shape)", "h = h.view(dims[0], dims[1])"]),
            ("shape_comp", ["dims = [int(d) for d in h.shape]", "h = h.reshape(dims)"]),
        ])
        return Snippet(f"tolist_{v[0]}", v[1], needs_labels=v[0] == "labels")

    # ---------------------------------------------------------------- dynamic shapes
    def dynamic(self) -> Snippet:
        v = self.pick([
            ("nonzero", ["nz = torch.nonzero(h > 0)", "h = h + nz.shape[0]"]),
            ("nonzero_m", ["h = h + h.nonzero().float().sum()"]),
            ("mask_read", ["h = h + h[h > 0].sum()"]),
            ("masked_select", ["h = h + h.masked_select(h > 0.5).sum()"]),
            ("unique", ["u = torch.unique(h.argmax(-1))", "h = h + u.sum()"]),
            ("unique_labels", ["u = torch.unique(labels)", "h = h * u.numel()"]),
            ("argwhere", ["h = h + torch.argwhere(h > 0).sum()"]),
            ("masked_write", ["h[h < 0] = 0"]),
            ("where", ["h = torch.where(h > 0, h, torch.zeros_like(h))"]),
            ("masked_fill", ["h = h.masked_fill(h < 0, 0.0)"]),
            ("slice", ["h = h + h[:, 0:1]"]),
            ("index", ["h = h + h[0]"]),
        ])
        return Snippet(f"dyn_{v[0]}", v[1], needs_labels="labels" in "".join(v[1]))

    # ---------------------------------------------------------------- side effects
    def effect(self) -> Snippet:
        v = self.pick([
            ("print", ["print(h.shape)"]),
            ("print_str", ["print('forward')"]),
            ("print_guarded", ["if not torch.compiler.is_compiling():", "    print(h.shape)"]),
            ("logger_warning", ["logger.warning('shape %s', h.shape)"]),
            ("logger_debug", ["logger.debug('step')"]),
            ("logging_info", ["logging.info('step')"]),
            ("logging_guarded", ["if not torch.compiler.is_compiling():", "    logger.info('step')"]),
            ("time", ["t0 = time.time()", "h = h * 1.0"]),
            ("perf_counter", ["t0 = time.perf_counter()", "h = h + 0.0"]),
            ("monotonic", ["t0 = time.monotonic()", "h = h + 0.0"]),
        ])
        return Snippet(f"effect_{v[0]}", v[1])

    def deepcopy(self) -> Snippet:
        v = self.pick([
            ("input", ["r = copy.deepcopy(x)", "h = h + r"]),
            ("input_detached", ["r = copy.deepcopy(x.detach())", "h = h + r"]),
            ("intermediate", ["r = copy.deepcopy(x * 2)", "h = h + r"]),
            ("detached", ["r = copy.deepcopy(h.detach())", "h = h + r"]),
            ("dict", ["cfg = copy.deepcopy(self.cfg)", "h = h * cfg['scale']"]),
            ("list", ["sizes = copy.deepcopy([1, 2])", "h = h * len(sizes)"]),
            ("clone", ["r = x.clone()", "h = h + r"]),
            ("copy", ["r = copy.copy(self.cfg)", "h = h * r['scale']"]),
        ])
        return Snippet(f"deepcopy_{v[0]}", v[1], needs_self="self." in "".join(v[1]))

    def requires_grad(self) -> Snippet:
        v = self.pick([
            ("param", ["self.fc.weight.requires_grad_(True)"]),
            ("input", ["x.requires_grad_()"]),
            ("created", ["z = torch.zeros(4, 8).requires_grad_()", "h = h + z"]),
            ("created_unused", ["z = torch.ones(4, 8).requires_grad_(True)"]),
            ("ones_like", ["z = torch.ones_like(x).requires_grad_(True)", "h = h * z"]),
            ("detached", ["z = h.detach().requires_grad_()", "h = h + z"]),
            ("clone_input", ["z = x.detach().clone().requires_grad_(True)", "h = h + z"]),
            ("nonleaf", ["h = h.requires_grad_()"]),
            ("read", ["h = h * 2 if x.requires_grad else h"]),
            ("detach", ["h = h + h.detach()"]),
            ("ctor_false", ["z = torch.zeros(4, 8, requires_grad=False)", "h = h + z"]),
        ])
        return Snippet(f"requires_grad_{v[0]}", v[1], needs_self="self." in "".join(v[1]))

    # ---------------------------------------------------------------- other breaks
    def other(self) -> Snippet:
        u = self.uid()
        v = self.pick([
            ("graph_break", ["torch._dynamo.graph_break()"], [], []),
            ("class", [f"class _Out{u}:", "    scale = 2.0", f"h = h * _Out{u}.scale"], [], []),
            ("backward", ["t = x.detach().clone().requires_grad_(True)", "(t * 2).sum().backward()", "h = h + t.grad"], [], []),
            ("numpy_ok", ["a = np.clip(h.detach().numpy(), -1, 1)", "h = h + torch.from_numpy(a)"], [], []),
            ("numpy_unravel", ["i = np.unravel_index(3, (4, 8))", "h = h * (i[0] + 1)"], [], []),
            ("crc", ["k = zlib.crc32(x.numpy().tobytes())", "h = h + (k % 2)"], [], []),
            ("autograd_fn", [f"h = _Scale{u}.apply(h)"], [
                f"class _Scale{u}(torch.autograd.Function):",
                "    @staticmethod",
                "    def forward(ctx, t):",
                "        return t * 2",
                "",
                "    @staticmethod",
                "    def backward(ctx, g):",
                "        return g * 2",
            ], []),
            ("disabled", [f"h = _eager{u}(h)"], [
                "@torch.compiler.disable",
                f"def _eager{u}(t):",
                "    return t * 2",
            ], []),
            ("disabled_method", [f"h = self._eager_m{u}(h)"], [], []),
            ("inplace", [self.pick(["h.add_(1)", "h.mul_(0.5)", "h.clamp_(min=-1.0)", "h.relu_()"])], [], []),
            ("attr_count", ["self.count += 1", "h = h + self.count"], [], []),
            ("attr_tensor", ["self.last = h.detach()", "h = h + self.last"], [], []),
            ("attr_flag", ["self.seen = True"], [], []),
            ("layers_loop", ["for layer in self.layers:", "    h = h + layer(h)"], [], []),
            ("enumerate", ["for i, layer in enumerate(self.layers):", "    if i % 2 == 0:", "        h = layer(h)"], [], []),
            ("comprehension", ["h = torch.stack([h * i for i in range(3)]).sum(0)"], [], []),
            ("genexpr", ["h = sum(t * 0.5 for t in (h, h))"], [], []),
            ("gen_helper", [f"h = sum(self._steps{u}(h))"], [], []),
            ("closure", ["def scale(t):", "    return t * self.k", "h = scale(h)"], [], []),
            ("lambda", ["act = lambda t: torch.tanh(t) * self.k", "h = act(h)"], [], []),
            ("dict_out", ["out = {'a': h, 'b': h * 2}", "h = out['a'] + out['b']"], [], []),
            ("is_compiling", ["if torch.compiler.is_compiling():", "    h = h * 1.0"], [], []),
        ])
        name, body, module_level, init = v
        s = Snippet(f"other_{name}", body, module_level=module_level, init=init)
        s.needs_self = "self." in "".join(body)
        if name == "disabled_method":
            s.init = []
            s.module_level = []
            s.method = [
                "@torch.compiler.disable",
                f"def _eager_m{u}(self, t):",
                "    return t + 1",
            ]
        if name == "gen_helper":
            s.method = [
                f"def _steps{u}(self, t):",
                "    yield t",
                "    yield t * 2",
            ]
        return s

    def construct(self) -> Snippet:
        kind = self.rng.choices(
            ["cond", "early_return", "scalar", "tolist", "dynamic", "effect", "deepcopy", "requires_grad", "other"],
            weights=[16, 2, 12, 7, 10, 10, 9, 10, 24],
        )[0]
        return getattr(self, kind)()


def indent(lines, n):
    pad = " " * n
    return [pad + l if l else l for l in lines]


def program(seed: int) -> dict:
    rng = random.Random(seed)
    g = Gen(rng)
    n_constructs = rng.choices([1, 2, 3, 4, 5], weights=[20, 30, 25, 15, 10])[0]
    snippets = [g.construct() for _ in range(n_constructs)]
    with_labels = any(s.needs_labels for s in snippets) or rng.random() < 0.15
    with_mask = rng.random() < 0.3 or any("mask" in " ".join(s.body) for s in snippets)

    module_fns: list = []
    methods: list = []
    forward: list = ["h = self.fc(x)"]
    constructs: list = []

    for i, s in enumerate(snippets):
        if getattr(s, "method", None):
            methods.append(s.method)
        if s.module_level:
            module_fns.append(s.module_level)
        body = list(s.body)
        last = i == len(snippets) - 1
        if s.returns and not last:
            # an early return must not cut the rest off: make it a plain branch
            body = [body[0], "    h = h * 1.0"]
        places = ["forward", "forward", "method", "function", "depth2", "depth3", "loop", "closure", "branch", "loop_method"]
        place = rng.choice(places)
        if s.needs_self and place in ("function", "depth2", "depth3"):
            place = rng.choice(["method", "forward", "loop"])
        if s.returns and place in ("loop", "loop_method", "branch"):
            place = "forward"
        args = "h, x, labels, mask"
        u = g.uid()
        if place == "forward":
            forward.extend(body)
        elif place == "branch":
            c = g.pick(["self.flag", "x.shape[0] > 2", "mask is None", "h.sum() > 0"])
            forward.append(f"if {c}:")
            forward.extend(indent(body, 4))
        elif place == "loop":
            forward.append(f"for _i{u} in range(2):")
            forward.extend(indent(body, 4))
        elif place in ("method", "loop_method"):
            name = f"_part{u}"
            inner = body if place == "method" else [f"for _j in range(2):"] + indent(body, 4)
            methods.append([f"def {name}(self, {args}):"] + indent(inner + ["return h"], 4))
            forward.append(f"h = self.{name}({args})")
        elif place == "function":
            name = f"_fn{u}"
            module_fns.append([f"def {name}({args}):"] + indent(body + ["return h"], 4))
            forward.append(f"h = {name}({args})")
        elif place in ("depth2", "depth3"):
            depth = 2 if place == "depth2" else 3
            names = [f"_d{u}_{d}" for d in range(depth)]
            # the innermost holds the construct; each outer one calls the next
            module_fns.append([f"def {names[-1]}({args}):"] + indent(body + ["return h"], 4))
            for d in range(depth - 2, 0, -1):
                module_fns.append([f"def {names[d]}({args}):", f"    h = h + 0.5", f"    return {names[d + 1]}({args})"])
            methods.append([f"def {names[0]}(self, {args}):", f"    return {names[1]}({args})"])
            forward.append(f"h = self.{names[0]}({args})")
        elif place == "closure":
            name = f"_inner{u}"
            forward.append(f"def {name}(h):")
            forward.extend(indent(body + ["return h"], 4))
            forward.append(f"h = {name}(h)")
        constructs.append(f"{s.name}@{place}")

    generator_forward = rng.random() < 0.02
    if generator_forward:
        forward.append("yield h")
        constructs.append("generator_forward")
    forward.append("return h" if not generator_forward else "yield h * 2")

    flag = rng.choice(["True", "False"])
    mode = rng.choice(["'a'", "'b'"])
    params = "self, x, labels" if with_labels else "self, x"
    if with_mask:
        params += ", mask=None"
    lines = [
        "import copy",
        "import logging",
        "import math",
        "import time",
        "import zlib",
        "",
        "import numpy as np",
        "import torch",
        "from torch import nn",
        "",
        "logger = logging.getLogger(__name__)",
        "",
    ]
    for fn in module_fns:
        lines.extend(["", *fn, ""])
    lines.extend([
        "",
        "class Model(nn.Module):",
        "    def __init__(self):",
        "        super().__init__()",
        "        self.fc = nn.Linear(8, 8)",
        "        self.layers = nn.ModuleList([nn.Linear(8, 8) for _ in range(2)])",
        f"        self.flag = {flag}",
        f"        self.mode = {mode}",
        "        self.count = 0",
        "        self.k = 0.5",
        "        self.cfg = {'scale': 2.0}",
        "",
    ])
    for m in methods:
        lines.extend(indent(m, 4))
        lines.append("")
    lines.append(f"    def forward({params}):")
    lines.extend(indent(forward, 8))
    # helpers take labels and mask even when forward does not: give them a value there
    src = "\n".join(lines) + "\n"
    if not with_labels:
        src = src.replace(f"    def forward({params}):", f"    def forward({params}):\n        labels = None", 1)
    if not with_mask:
        src = src.replace(f"    def forward({params}):", f"    def forward({params}):\n        mask = None", 1)
    inputs = ["x=[4,8]"] + (["labels=[4]:i64"] if with_labels else [])
    return {"seed": seed, "inputs": inputs, "constructs": constructs, "source": src}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", type=int, default=2000, help="number of programs (default 2000)")
    ap.add_argument("--seed", type=int, default=18, help="base seed (program i uses seed*100000+i)")
    ap.add_argument("-o", "--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w", newline="\n") as f:
        for i in range(args.n):
            p = program(args.seed * 100000 + i)
            p = {"id": f"g{i:04d}", **p}
            f.write(json.dumps(p, sort_keys=True) + "\n")
    print(f"wrote {args.n} programs to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
