#!/usr/bin/env python3
"""Generate seeded PyTorch programs with one shape mistake each, for checking FX301.

Usage (from the repository root; plain Python, no torch needed):

    python3 scripts/shapes/gen_mistakes.py                      # the committed corpus, seed 301
    python3 scripts/shapes/gen_mistakes.py -n 40 --seed 3 -o /tmp/p.jsonl

Each program is one module file whose class ``Model`` (no-argument constructor) is the model.
Its base is either

* one of the hand-written models in ``scripts/shapes/bases/*.py`` (written in the manner of
  the pytorch/examples programs: mnist, dcgan, vae, super_resolution, word_language_model,
  fast_neural_style, time_sequence_prediction, snli, mnist_hogwild, imagenet), or
* a compositional chain ``chainNNN``: a running tensor ``h`` of known shape threaded through a
  random chain of blocks (conv/pool/norm stages, residual blocks, upsampling, pixel shuffle,
  einops rearranges, MLPs, attention with heads split by view/transpose, RNNs, transformer
  layers, embeddings, ...).

A program with ``kind: null`` is an unmodified base (it must run). Every other program is a
base with one mistake of ``kind``: either a block of code inserted at a point where the
running tensor's shape is known (``kinds.py``; the block is correct apart from the mistake:
a wrong constructor size, a wrong literal or dim in forward, an off-by-one), or a wrong input
given to a correct model (the ``inputs`` differ from the base's). ``site`` says where the
mistaken call sits: ``forward``, ``method``, ``function`` (module level), ``submodule``,
``sequential``, ``modulelist``, ``branch``, or ``input:<site>`` for a wrong input.

Output: one JSON object per line, keys sorted: ``{"id", "seed", "base", "kind", "site",
"inputs", "source"}``. ``inputs`` are forward's positional inputs as ``"name=[dims]"`` with
``:i64`` / ``:bool`` for int64 / bool (float32 otherwise). The same seed gives the same bytes.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
DEFAULT_OUT = ROOT / "tests" / "fixtures" / "shape_mistakes" / "programs.jsonl"
sys.path.insert(0, str(HERE))
from kinds import KINDS, Blk, single  # noqa: E402

SITES = ["forward", "method", "function", "submodule", "sequential", "modulelist", "branch"]
HEADER = ["import torch", "import torch.nn.functional as F", "from torch import nn"]


def indent(lines, n):
    return [(" " * n + l) if l else "" for l in lines]


def camel(tag):
    return "".join(p.capitalize() for p in re.split(r"[_\d]+", tag) if p)


class Template:
    """A model file with markers: ``# @module``, ``# @init CLS``, ``# @methods CLS`` and
    ``# @point CLS VAR d0,d1,...`` (where VAR has that shape). Header lines ``# shapes-...``
    carry the base's name, inputs and wrong inputs."""

    def __init__(self, text: str):
        self.lines = text.rstrip("\n").split("\n")
        self.meta = {"wrong": []}
        body = []
        for l in self.lines:
            if l.startswith("# shapes-base:"):
                self.meta["name"] = l.split(":", 1)[1].strip()
            elif l.startswith("# shapes-inputs:"):
                self.meta["inputs"] = l.split(":", 1)[1].split()
            elif l.startswith("# shapes-wrong-input:"):
                kind, site, *inputs = l.split(":", 1)[1].split()
                self.meta["wrong"].append((kind, site, inputs))
            else:
                body.append(l)
        self.lines = body
        self.points = []
        for i, l in enumerate(self.lines):
            m = re.match(r"(\s*)# @point (\w+) (\w+) ([\d,]+)$", l)
            if m:
                self.points.append({"line": i, "cls": m.group(2), "var": m.group(3),
                                    "shape": [int(d) for d in m.group(4).split(",")], "indent": len(m.group(1))})

    def render(self, inj=None) -> str:
        """The file with the injection (a dict of module/init/methods/forward lines at a point)."""
        out = []
        for i, l in enumerate(self.lines):
            s = l.strip()
            if not s.startswith("# @"):
                out.append(l)
                continue
            ind = len(l) - len(l.lstrip())
            if inj is None:
                continue
            parts = s[2:].split()
            if parts[0] == "@module":
                for d in inj["module"]:
                    out.extend(["", ""] + d)
                if inj["module"]:
                    out.extend(["", ""])
            elif parts[0] == "@init" and parts[1] == inj["cls"]:
                out.extend(indent(inj["init"], ind))
            elif parts[0] == "@methods" and parts[1] == inj["cls"]:
                for m in inj["methods"]:
                    out.extend(indent(m, ind) + [""])
            elif parts[0] == "@point" and i == inj["point"]:
                out.extend(indent(inj["forward"], ind))
        text = "\n".join(out) + "\n"
        text = re.sub(r"\n{4,}", "\n\n\n", text)
        if "rearrange(" in text or "repeat(" in text or "reduce(" in text:
            if "from einops import" not in text:
                text = text.replace("from torch import nn\n", "from torch import nn\nfrom einops import rearrange, reduce, repeat\n", 1)
        return text


class Placer:
    """Puts a block at a site: returns forward lines and adds what they need to `self`."""

    def __init__(self, rng, taken_text: str, cls: str = "Model"):
        self.rng = rng
        self.taken = set(re.findall(r"\b\w+\b", taken_text))
        self.module: list = []
        self.init: list = []
        self.methods: list = []
        self.cls = cls

    def fresh(self, *cands):
        for c in cands:
            if c not in self.taken:
                self.taken.add(c)
                return c
        base = cands[-1]
        k = 2
        while f"{base}{k}" in self.taken:
            k += 1
        self.taken.add(f"{base}{k}")
        return f"{base}{k}"

    def attrs(self, blk: Blk, owner: str):
        """Register blk's layers as attributes of `owner` ("self" in Model): name -> ref."""
        refs = {}
        for name, ctor in blk.layers:
            a = self.fresh(name, f"{blk.tag}_{name}")
            self.init.append(f"self.{a} = {ctor}")
            refs[name] = f"{owner}.{a}"
        return refs

    def body(self, blk: Blk, var: str, refs: dict):
        return [l.format(t=var, **refs) for l in blk.body]

    def submodule_class(self, blk: Blk):
        name = self.fresh(camel(blk.tag) + "Block", camel(blk.tag) + "Layer")
        lines = [f"class {name}(nn.Module):", "    def __init__(self):", "        super().__init__()"]
        refs = {}
        for n, ctor in blk.layers:
            lines.append(f"        self.{n} = {ctor}")
            refs[n] = f"self.{n}"
        if not blk.layers:
            lines[-1:] = ["        super().__init__()"]
        lines += ["", "    def forward(self, x):"] + indent(self.body(blk, "x", refs), 8) + ["        return x"]
        self.module.append(lines)
        return name

    def place(self, blk: Blk, var: str, site: str, S):
        rng = self.rng
        if site in ("forward", "branch"):
            refs = self.attrs(blk, "self")
            lines = self.body(blk, var, refs)
            if site == "branch":
                c = rng.choice(["training", "flag", "dim", "last"])
                if c == "training":
                    cond = "not self.training"
                elif c == "flag":
                    f = self.fresh(f"use_{blk.tag}", "use_extra")
                    self.init.append(f"self.{f} = True")
                    cond = f"self.{f}"
                elif c == "dim":
                    cond = f"{var}.dim() == {len(S)}"
                else:
                    cond = f"{var}.shape[-1] == {S[-1]}"
                lines = [f"if {cond}:"] + indent(lines, 4)
            return lines
        if site == "method":
            refs = self.attrs(blk, "self")
            m = self.fresh(f"_{blk.tag}", f"_apply_{blk.tag}")
            self.methods.append([f"def {m}(self, x):"] + indent(self.body(blk, "x", refs), 4) + ["    return x"])
            return [f"{var} = self.{m}({var})"]
        if site == "function":
            fn = self.fresh(f"{blk.tag}_block", f"apply_{blk.tag}")
            if blk.layers:
                refs = self.attrs(blk, "m")
                self.module.append([f"def {fn}(x, m):"] + indent(self.body(blk, "x", refs), 4) + ["    return x"])
                return [f"{var} = {fn}({var}, self)"]
            self.module.append([f"def {fn}(x):"] + indent(self.body(blk, "x", {}), 4) + ["    return x"])
            return [f"{var} = {fn}({var})"]
        if site == "submodule":
            cname = self.submodule_class(blk)
            a = self.fresh(blk.tag, f"{blk.tag}_block")
            self.init.append(f"self.{a} = {cname}()")
            return [f"{var} = self.{a}({var})"]
        elem = blk.layers[0][1] if blk.single else self.submodule_class(blk) + "()"
        if site == "sequential":
            other = rng.choice(["nn.Identity()", "nn.Dropout(0.1)", "nn.Dropout(0.0)"])
            items = [other, elem] if rng.random() < 0.5 else [elem, other]
            a = self.fresh(blk.tag, f"{blk.tag}_seq")
            self.init.append(f"self.{a} = nn.Sequential({items[0]}, {items[1]})")
            return [f"{var} = self.{a}({var})"]
        if site == "modulelist":
            n = rng.choice([1, 2, 2, 3])
            a = self.fresh(f"{blk.tag}_layers", f"{blk.tag}_blocks")
            self.init.append(f"self.{a} = nn.ModuleList([{elem} for _ in range({n})])")
            return [f"for layer in self.{a}:", f"    {var} = layer({var})"]
        raise ValueError(site)

    def injection(self, point, fwd):
        return {"module": self.module, "init": self.init, "methods": self.methods, "cls": self.cls,
                "point": point, "forward": fwd}


# ---------------------------------------------------------------- compositional chains
def shape_str(S):
    return ",".join(str(d) for d in S)


def struct_image(rng, S):
    B, C, H, W = S
    opts = ["stage", "res", "stage"]
    if H >= 4 and H % 2 == 0 and W % 2 == 0:
        opts += ["pool", "s2d"]
    if H <= 16:
        opts += ["up", "shuffle"]
    if H * W <= 64:
        opts += ["to_seq", "head", "head"]
    if H * W <= 16:
        opts += ["head", "head"]
    v = rng.choice(opts)
    C2 = rng.choice([8, 12, 16, 24, 32])
    if v == "stage":
        s = 2 if H >= 8 and rng.random() < 0.5 else 1
        H2, W2 = (H - 1) // s + 1, (W - 1) // s + 1
        return single("stage", "stage", f"nn.Sequential(nn.Conv2d({C}, {C2}, 3, stride={s}, padding=1), nn.BatchNorm2d({C2}), nn.ReLU(inplace=True))"), [B, C2, H2, W2]
    if v == "res":
        return Blk("res", [("conv1", f"nn.Conv2d({C}, {C}, 3, padding=1, bias=False)"), ("bn1", f"nn.BatchNorm2d({C})"),
                           ("conv2", f"nn.Conv2d({C}, {C}, 3, padding=1, bias=False)"), ("bn2", f"nn.BatchNorm2d({C})")],
                   ["s = F.relu({bn1}({conv1}({t})))", "{t} = F.relu({t} + {bn2}({conv2}(s)))"]), S
    if v == "pool":
        op = rng.choice(["F.max_pool2d({t}, 2)", "F.avg_pool2d({t}, 2)", "F.max_pool2d({t}, kernel_size=2, stride=2)"])
        return Blk("down", [], ["{t} = " + op]), [B, C, H // 2, W // 2]
    if v == "s2d":
        return Blk("s2d", [("mix", f"nn.Conv2d({4 * C}, {C2}, 1)")],
                   ["{t} = {mix}(rearrange({t}, 'b c (h p) (w q) -> b (c p q) h w', p=2, q=2))"], einops=True), [B, C2, H // 2, W // 2]
    if v == "up":
        mode = rng.choice(["'nearest'", "'bilinear', align_corners=False"])
        return Blk("up", [("conv", f"nn.Conv2d({C}, {C2}, 3, padding=1)")],
                   [f"{{t}} = {{conv}}(F.interpolate({{t}}, scale_factor=2, mode={mode}))"]), [B, C2, 2 * H, 2 * W]
    if v == "shuffle":
        return Blk("shuffle", [("conv", f"nn.Conv2d({C}, {4 * C2}, 3, padding=1)")],
                   ["{t} = F.pixel_shuffle({conv}({t}), 2)"]), [B, C2, 2 * H, 2 * W]
    if v == "to_seq":
        if rng.random() < 0.5:
            return Blk("tokens", [], ["{t} = {t}.flatten(2).transpose(1, 2)"]), [B, H * W, C]
        return Blk("tokens", [], ["{t} = rearrange({t}, 'b c h w -> b (h w) c')"], einops=True), [B, H * W, C]
    op = rng.choice(["F.adaptive_avg_pool2d({t}, 1).flatten(1)", "{t}.mean(dim=(2, 3))", "reduce({t}, 'b c h w -> b c', 'max')"])
    return Blk("pool", [], ["{t} = " + op], einops="reduce(" in op), [B, C]


def struct_seq(rng, S):
    B, N, D = S
    opts = ["proj", "block", "encoder", "rnn", "conv1d"]
    if N >= 4 and N % 2 == 0:
        opts.append("seqpool")
    opts += ["pool", "pool"]
    v = rng.choice(opts)
    D2 = rng.choice([16, 24, 32, 48, 64])
    hs = [h for h in (2, 4, 8) if D % h == 0]
    if v in ("block", "encoder") and not hs:
        v = "proj"
    if v == "proj":
        return single("proj", "proj", f"nn.Linear({D}, {D2})"), [B, N, D2]
    if v == "block":
        h = rng.choice(hs)
        return Blk("attn", [("ln1", f"nn.LayerNorm({D})"), ("qkv", f"nn.Linear({D}, {3 * D})"), ("proj", f"nn.Linear({D}, {D})"),
                            ("ln2", f"nn.LayerNorm({D})"), ("mlp", f"nn.Sequential(nn.Linear({D}, {2 * D}), nn.GELU(), nn.Linear({2 * D}, {D}))")],
                   ["b, n, _ = {t}.shape",
                    f"q, kk, vv = {{qkv}}({{ln1}}({{t}})).reshape(b, n, 3, {h}, {D // h}).permute(2, 0, 3, 1, 4)",
                    f"a = torch.softmax(q @ kk.transpose(-2, -1) / {D // h} ** 0.5, dim=-1)",
                    "{t} = {t} + {proj}((a @ vv).transpose(1, 2).reshape(b, n, -1))",
                    "{t} = {t} + {mlp}({ln2}({t}))"]), S
    if v == "encoder":
        h = rng.choice(hs)
        return single("encoder", "encoder", f"nn.TransformerEncoderLayer({D}, {h}, dim_feedforward={2 * D}, dropout=0.0, batch_first=True)"), S
    if v == "rnn":
        cell = rng.choice(["LSTM", "GRU"])
        bi = rng.random() < 0.3
        out = 2 * (D2 // 2) if bi else D2
        hid = D2 // 2 if bi else D2
        return Blk("rnn", [("rnn", f"nn.{cell}({D}, {hid}, batch_first=True" + (", bidirectional=True)" if bi else ")"))],
                   ["{t}, _ = {rnn}({t})"]), [B, N, out]
    if v == "conv1d":
        return Blk("tconv", [("conv", f"nn.Conv1d({D}, {D2}, 3, padding=1)")],
                   ["{t} = F.relu({conv}({t}.transpose(1, 2))).transpose(1, 2)"]), [B, N, D2]
    if v == "seqpool":
        return Blk("seqpool", [], ["{t} = F.avg_pool1d({t}.transpose(1, 2), 2).transpose(1, 2)"]), [B, N // 2, D]
    op = rng.choice(["{t}.mean(1)", "{t}[:, 0]", "{t}[:, -1]", "{t}.amax(dim=1)", "reduce({t}, 'b n d -> b d', 'mean')"])
    return Blk("pool", [], ["{t} = " + op], einops="reduce(" in op), [B, D]


def struct_vec(rng, S):
    B, D = S
    D2 = rng.choice([16, 32, 64, 10])
    if rng.random() < 0.5:
        return single("mlp", "mlp", f"nn.Sequential(nn.Linear({D}, {D2}), nn.ReLU(), nn.Dropout(0.1))"), [B, D2]
    return single("fc", "fc", f"nn.Linear({D}, {D2})"), [B, D2]


def chain_template(idx: int, seed: int):
    """A compositional base: returns (template text, inputs, wrong-input list)."""
    rng = random.Random(seed)
    fam = rng.choice(["image", "image", "seq", "tokens"])
    B = rng.choice([2, 3, 4])
    pl = Placer(rng, " ".join(HEADER) + " Model forward x tokens h layer self")
    wrong = []
    fwd: list = []
    stem_site = rng.choice(SITES[:5])
    if fam == "image":
        C0 = rng.choice([1, 3])
        H0 = rng.choice([8, 12, 16, 32])
        C1 = rng.choice([8, 16, 24])
        inputs = [f"x=[{B},{C0},{H0},{H0}]"]
        v = rng.random()
        if v < 0.5:
            stem = single("stem", "stem", f"nn.Sequential(nn.Conv2d({C0}, {C1}, 3, padding=1), nn.BatchNorm2d({C1}), nn.ReLU())")
        else:
            stem = single("stem", "stem", f"nn.Conv2d({C0}, {C1}, 3, padding=1)")
        fwd += pl.place(stem, "x", stem_site, [B, C0, H0, H0])
        fwd.append("h = x")
        S = [B, C1, H0, H0]
        wrong.append(("conv_in_channels", stem_site, [f"x=[{B},{C0 + rng.choice([1, 2])},{H0},{H0}]"]))
        wrong.append(("conv_rank", stem_site, [rng.choice([f"x=[{B},1,{C0},{H0},{H0}]", f"x=[{B},{C0 * H0 * H0}]"])]))
    elif fam == "seq":
        N = rng.choice([5, 8, 12, 16])
        Din = rng.choice([6, 10, 12, 20])
        D = rng.choice([16, 24, 32])
        inputs = [f"x=[{B},{N},{Din}]"]
        v = rng.choice(["linear", "norm", "rnn"])
        if v == "linear":
            stem = single("embed", "embed", f"nn.Linear({Din}, {D})")
            wrong.append(("linear_in", stem_site, [f"x=[{B},{N},{Din + rng.choice([1, 2, 4])}]"]))
            fwd += pl.place(stem, "x", stem_site, [B, N, Din])
        elif v == "norm":
            stem = single("embed", "embed", f"nn.Sequential(nn.LayerNorm({Din}), nn.Linear({Din}, {D}))")
            wrong.append(("layernorm_shape", stem_site, [f"x=[{B},{N},{Din + rng.choice([1, 2, 4])}]"]))
            fwd += pl.place(stem, "x", stem_site, [B, N, Din])
        else:
            stem = Blk("encoder", [("rnn", f"nn.{rng.choice(['LSTM', 'GRU'])}({Din}, {D}, batch_first=True)")], ["{t}, _ = {rnn}({t})"])
            wrong.append(("rnn_input_size", stem_site, [f"x=[{B},{N},{Din + rng.choice([1, 2])}]"]))
            wrong.append(("rnn_rank", stem_site, [f"x=[{B},{N},{Din},1]"]))
            fwd += pl.place(stem, "x", stem_site if stem_site not in ("sequential", "modulelist") else "forward", [B, N, Din])
        fwd.append("h = x")
        S = [B, N, D]
    else:
        N = rng.choice([6, 8, 12, 16])
        V = rng.choice([32, 50, 100, 1000])
        D = rng.choice([16, 32, 48])
        inputs = [f"tokens=[{B},{N}]:i64"]
        pl.init.append(f"self.tok = nn.Embedding({V}, {D})")
        pl.init.append(f"self.pos = nn.Parameter(torch.zeros(1, {N}, {D}))")
        fwd += ["h = self.tok(tokens) + self.pos"]
        wrong.append(("embedding_float_index", "input:forward", [f"tokens=[{B},{N}]"]))
        wrong.append(("broadcast", "input:forward", [f"tokens=[{B},{N + rng.choice([1, 2, 4])}]:i64"]))
        S = [B, N, D]
        stem_site = "forward"
    wrong = [(k, s if s.startswith("input:") else f"input:{s}", i) for k, s, i in wrong]
    steps = rng.randint(3, 7)
    kinds = sorted(KINDS)
    fwd.append(f"# @point Model h {shape_str(S)}")
    for i in range(steps):
        blk = None
        if rng.random() < 0.45:
            blk = KINDS[rng.choice(kinds)](rng, S, False)
            S2 = S
        if blk is None:
            if len(S) == 4:
                blk, S2 = struct_image(rng, S)
            elif len(S) == 3:
                blk, S2 = struct_seq(rng, S)
            else:
                blk, S2 = struct_vec(rng, S)
        site = rng.choice(SITES)
        if site in ("modulelist",) and S2 != S:
            site = "forward"
        fwd += pl.place(blk, "h", site, S)
        S = S2
        fwd.append(f"# @point Model h {shape_str(S)}")
    if len(S) == 2 and rng.random() < 0.7:
        pl.init.append(f"self.head = nn.Linear({S[1]}, {rng.choice([2, 5, 10])})")
        fwd.append("h = self.head(h)")
    fwd.append("return h")
    arg = inputs[0].split("=")[0]
    lines = list(HEADER) + ["", "# @module"]
    for d in pl.module:
        lines += ["", ""] + d
    lines += ["", "", "class Model(nn.Module):", "    def __init__(self):", "        super().__init__()"]
    lines += indent(pl.init, 8) + ["        # @init Model", ""]
    for m in pl.methods:
        lines += indent(m, 4) + [""]
    lines += ["    # @methods Model", f"    def forward(self, {arg}):"] + indent(fwd, 8)
    text = "\n".join(lines) + "\n"
    if "rearrange(" in text or "reduce(" in text or "repeat(" in text:
        text = text.replace("from torch import nn\n", "from torch import nn\nfrom einops import rearrange, reduce, repeat\n", 1)
    return text, inputs, wrong


# ---------------------------------------------------------------- corpus
def load_bases():
    out = []
    for p in sorted((HERE / "bases").glob("*.py")):
        t = Template(p.read_text())
        out.append(t)
    return out


def inject(tpl: Template, kind: str, rng, site=None, point=None):
    """Try to insert a wrong `kind` block at a point of tpl: (source, site) or None."""
    pts = list(range(len(tpl.points))) if point is None else [point]
    rng.shuffle(pts)
    for pi in pts:
        p = tpl.points[pi]
        blk = KINDS[kind](rng, list(p["shape"]), True)
        if blk is None:
            continue
        s = site or rng.choice(SITES)
        pl = Placer(rng, "\n".join(tpl.lines), p["cls"])
        fwd = pl.place(blk, p["var"], s, p["shape"])
        return tpl.render(pl.injection(p["line"], fwd)), s
    return None


def build(seed: int, n_chains: int = 300, per_kind: int = 40):
    rng = random.Random(seed)
    bases = [(t.meta["name"], t, t.meta["inputs"]) for t in load_bases()]
    chains = []
    for i in range(n_chains):
        text, inputs, wrong = chain_template(i, seed * 1000 + i)
        t = Template(text)
        t.meta.update({"name": f"chain{i:03d}", "inputs": inputs, "wrong": wrong})
        chains.append((f"chain{i:03d}", t, inputs))
    progs = []
    for name, t, inputs in bases + chains:
        progs.append({"base": name, "kind": None, "site": None, "inputs": inputs, "source": t.render(None), "seed": 0})
    kinds = sorted(KINDS)
    count = {k: 0 for k in kinds}
    muts = []

    def add(name, t, inputs, kind, pseed, point=None):
        r = random.Random(pseed)
        res = inject(t, kind, r, point=point)
        if res is None:
            return False
        src, site = res
        muts.append({"base": name, "kind": kind, "site": site, "inputs": inputs, "source": src, "seed": pseed})
        count[kind] += 1
        return True

    k = 0
    # every hand-written base: every applicable kind at least once, wrong inputs as declared
    for name, t, inputs in bases:
        for kind in kinds:
            k += 1
            add(name, t, inputs, kind, seed * 100000 + k)
        for kind, site, winputs in t.meta["wrong"]:
            muts.append({"base": name, "kind": kind, "site": site, "inputs": winputs, "source": t.render(None), "seed": 0})
            count[kind] += 1
    # chains' wrong inputs: a few per stem kind
    for name, t, inputs in chains:
        for kind, site, winputs in t.meta["wrong"]:
            if count[kind] < per_kind // 2 and rng.random() < 0.12:
                muts.append({"base": name, "kind": kind, "site": site, "inputs": winputs, "source": t.render(None), "seed": 0})
                count[kind] += 1
    # fill every kind up to per_kind with injections into chains (and sometimes bases)
    for kind in kinds:
        tries = 0
        while count[kind] < per_kind and tries < 2000:
            tries += 1
            k += 1
            name, t, inputs = rng.choice(chains) if rng.random() < 0.85 or not bases else rng.choice(bases)
            add(name, t, inputs, kind, seed * 100000 + k)
    out = []
    for i, p in enumerate(progs + muts):
        out.append({"id": f"s{i:04d}", **p})
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", type=int, default=40, help="mistaken programs per kind, at least (default 40)")
    ap.add_argument("--chains", type=int, default=300, help="compositional bases (default 300)")
    ap.add_argument("--seed", type=int, default=301)
    ap.add_argument("-o", "--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args()
    progs = build(args.seed, args.chains, args.n)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w", newline="\n") as f:
        for p in progs:
            f.write(json.dumps(p, sort_keys=True) + "\n")
    nk = sum(1 for p in progs if p["kind"])
    print(f"wrote {len(progs)} programs ({len(progs) - nk} originals, {nk} with a mistake) to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
