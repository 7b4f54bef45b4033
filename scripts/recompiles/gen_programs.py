#!/usr/bin/env python3
"""Generate small, seeded nn.Module programs for checking the recompile-risk rules (FX2xx).

Usage (from the repository root; plain Python, no torch needed):

    python3 scripts/recompiles/gen_programs.py                  # 1,200 programs, seed 39
    python3 scripts/recompiles/gen_programs.py -n 40 --seed 3 -o /tmp/p.jsonl

Each program is one module file with a class ``Model`` whose ``forward(self, x, ...)`` holds one
*case* and up to two *distractors*:

* cases that make Dynamo recompile on identical calls: an int, float, bool, str, tuple, list or
  dict attribute of ``self`` mutated in forward, a module-level counter behind ``global``;
* cases that recompile when a caller passes another value: float, int, bool, str, ``None``,
  list and dict arguments used in arithmetic, ``range``, ``if`` or iteration;
* shape and mode cases: a branch on a size, ``self.training``;
* look-alikes that never recompile: a tensor buffer updated in place, a tensor instead of the
  number, attributes read but not written, local counters, constant globals, an argument that
  is never read, an attribute set to the value it already has.

Each case is placed directly in forward or wrapped: a method, a module-level function, two
helpers deep, a submodule's forward, each layer of a ``ModuleList``, a loop body, a branch that
is always taken, or a closure defined in forward. Distractors are look-alikes placed in forward.

``calls`` is the call plan the labeller follows: three identical calls (``same``), then calls
that change one argument at a time (``vary:<name>``), the batch size (``vary:batch``) or the
mode (``mode:train``). Every call gives all of forward's arguments as Python expressions over
``torch`` and the batch size ``B``; ``x`` is always ``torch.randn(B, 8)``.

Output: one JSON object per line, keys sorted: ``{"id", "seed", "case", "site",
"distractors", "params", "calls", "source"}``. ``case`` and ``site`` say what was put where
(for reading a failure, not for labelling: labels come from Dynamo). The same seed always
gives the same bytes.
"""

from __future__ import annotations

import argparse
import json
import random
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_OUT = ROOT / "tests" / "fixtures" / "recompiles" / "programs.jsonl"

SITES = ["forward", "method", "function", "nested", "submodule", "layers", "loop", "branch", "closure"]


@dataclass
class Param:
    """A forward argument: its base value and the values the `vary` calls pass, in order."""

    name: str
    base: str
    varied: list


@dataclass
class Case:
    name: str
    body: list
    init: list = field(default_factory=list)
    module_level: list = field(default_factory=list)
    params: list = field(default_factory=list)
    # names declared `global` at the top of the frame that holds the body
    globals_: list = field(default_factory=list)
    # a call in train mode after the identical calls
    mode_call: bool = False
    batch_call: bool = False


def risk_cases(rng: random.Random) -> list:
    """Cases Dynamo recompiles on (as far as we expect; the labels are Dynamo's)."""
    k = rng.choice([2, 3])
    return [
        Case("attr_int_counter_branch", ["self.step += 1", f"if self.step % {k} == 0:", "    h = h * 2"],
             init=["self.step = 0"]),
        Case("attr_int_counter_plain", ["self.calls = self.calls + 1", "h = h + 0.5"], init=["self.calls = 0"]),
        Case("attr_int_counter_used", ["self.n += 1", "h = h * self.n"], init=["self.n = 0"]),
        Case("attr_float_accum", ["self.ema = self.ema * 0.9 + 0.1", "h = h * self.ema"], init=["self.ema = 1.0"]),
        Case("attr_bool_warmup", ["if not self.warmed_up:", "    self.warmed_up = True", "    h = h * 1.5"],
             init=["self.warmed_up = False"]),
        Case("attr_str_phase", ["if self.phase == 'first':", "    self.phase = 'rest'", "    h = h - 1"],
             init=["self.phase = 'first'"]),
        Case("attr_tuple_grow", ["self.seen = self.seen + (1,)", "h = h * len(self.seen)"], init=["self.seen = ()"]),
        Case("attr_list_append", ["self.history.append(1)", "h = h + len(self.history)"], init=["self.history = []"]),
        Case("attr_dict_count", ["self.stats['n'] += 1", "h = h * self.stats['n']"], init=["self.stats = {'n': 0}"]),
        Case("global_counter", ["SEEN += 1", "h = h + SEEN"], module_level=["SEEN = 0"], globals_=["SEEN"]),
        Case("global_counter_branch", ["CALLS += 1", "if CALLS > 2:", "    h = h * 2"],
             module_level=["CALLS = 0"], globals_=["CALLS"]),
        Case("float_arg_mul", ["h = h * scale"], params=[Param("scale", "1.0", ["0.5", "2.0", "0.5"])]),
        Case("float_arg_branch", ["if eps > 0.5:", "    h = h + 1"], params=[Param("eps", "1.0", ["0.25", "2.0"])]),
        Case("int_arg_range", ["for _ in range(steps):", "    h = h + 1"], params=[Param("steps", "2", ["3", "4", "3"])]),
        Case("int_arg_arith", ["h = h * k"], params=[Param("k", "2", ["3", "5", "7"])]),
        Case("int_arg_branch", ["if k > 2:", "    h = torch.relu(h)"], params=[Param("k", "2", ["3", "1"])]),
        Case("bool_arg_if", ["if normalize:", "    h = h / (h.norm() + 1)"],
             params=[Param("normalize", "False", ["True", "False"])]),
        Case("str_arg_if", ["h = torch.relu(h) if act == 'relu' else torch.tanh(h)"],
             params=[Param("act", "'relu'", ["'tanh'", "'relu'"])]),
        Case("none_arg", ["if mask is not None:", "    h = h * mask"],
             params=[Param("mask", "None", ["torch.ones(B, 8)", "None"])]),
        Case("list_arg_iter", ["for w in ws:", "    h = h * w"],
             params=[Param("ws", "[torch.ones(1)]", ["[torch.ones(1), torch.ones(1)]", "[torch.ones(1)] * 3"])]),
        Case("list_arg_len", ["h = h + len(dims)"], params=[Param("dims", "[1]", ["[1, 2]", "[1, 2, 3]"])]),
        Case("tuple_arg_index", ["h = h * sizes[0]"], params=[Param("sizes", "(2, 3)", ["(4, 3)", "(2, 5)"])]),
        Case("dict_arg_if", ["if opts['mode'] == 'plain':", "    h = h - 1"],
             params=[Param("opts", "{'mode': 'plain'}", ["{'mode': 'scaled'}", "{'mode': 'plain'}"])]),
        Case("shape_branch", ["if h.shape[0] == 1:", "    h = h * 2"], batch_call=True),
        Case("shape_int_arith", ["h = h * h.shape[0]"], batch_call=True),
        Case("training_branch", ["if self.training:", "    h = h * 0.5"], mode_call=True),
    ]


def quiet_cases(rng: random.Random) -> list:
    """Look-alikes that do not recompile."""
    return [
        Case("buffer_counter", ["self.ticks += 1", "h = h + self.ticks"],
             init=["self.register_buffer('ticks', torch.zeros(()))"]),
        Case("buffer_counter_add_", ["self.count.add_(1)", "h = h * 1.0"],
             init=["self.register_buffer('count', torch.zeros(1))"]),
        Case("tensor_scale_arg", ["h = h * scale_t"],
             params=[Param("scale_t", "torch.tensor(1.0)", ["torch.tensor(0.5)", "torch.tensor(2.0)"])]),
        Case("attr_read_int", ["h = h * self.k"], init=[f"self.k = {rng.choice([2, 3, 4])}"]),
        Case("attr_read_flag", ["if self.use_bias:", "    h = h + 1"], init=["self.use_bias = True"]),
        Case("attr_read_str", ["h = torch.relu(h) if self.act == 'relu' else h"], init=["self.act = 'relu'"]),
        Case("local_counter", ["n = 0", "for _ in range(3):", "    n += 1", "h = h * n"]),
        Case("const_global_read", ["h = h * SCALE"], module_level=["SCALE = 2.0"]),
        Case("unused_arg", ["h = h + 1"], params=[Param("flag", "False", ["True", "False"])]),
        Case("attr_set_same", ["self.ready = True", "h = h * 1.0"], init=["self.ready = True"]),
        Case("shape_view", ["b = h.shape[0]", "h = h.view(b, -1)"]),
        Case("tensor_list_arg_fixed", ["for w in ws:", "    h = h * w"],
             params=[Param("ws", "[torch.ones(1), torch.ones(1)]", ["[torch.full((1,), 2.0), torch.ones(1)]"])]),
        Case("local_list_append", ["acc = []", "for i in range(2):", "    acc.append(h * i)", "h = h + sum(acc)"]),
        Case("eval_only_training_read", ["h = h * (2.0 if self.training else 1.0)"]),
    ]


def indent(lines, n):
    return [" " * n + l if l else l for l in lines]


def rename_self(lines, to):
    return [l.replace("self.", f"{to}.") for l in lines]


class Program:
    def __init__(self, rng: random.Random, case: Case, site: str, distractors: list):
        self.rng = rng
        self.case = case
        self.site = site
        self.distractors = distractors
        self.module = []  # module-level statements and functions
        self.classes = []  # submodule classes
        self.methods = []
        self.init = []
        self.k = 0

    def uid(self) -> int:
        self.k += 1
        return self.k

    def args(self):
        return [p.name for p in self.case.params]

    def frame(self, header: str, body: list, owner: str) -> list:
        """A function (header) holding body, with the case's globals declared first."""
        g = [f"global {', '.join(self.case.globals_)}"] if self.case.globals_ else []
        return [header] + indent(g + body + ["return h"], 4)

    def place(self) -> list:
        """Forward's lines for the case at its site."""
        c, site = self.case, self.site
        args = self.args()
        call_args = ", ".join(["h"] + args)
        if site in ("forward", "loop", "branch"):
            self.init += c.init
            body = c.body
            if site == "loop":
                body = ["for _ in range(2):"] + indent(body, 4)
            elif site == "branch":
                body = ["if h.dim() == 2:"] + indent(body, 4)
            return body
        if site == "method":
            self.init += c.init
            name = f"_step{self.uid()}"
            self.methods.append(self.frame(f"def {name}(self, {call_args}):", c.body, "self"))
            return [f"h = self.{name}({call_args})"]
        if site == "function":
            self.init += c.init
            name = f"apply_block{self.uid()}"
            self.module.append(self.frame(f"def {name}(m, {call_args}):", rename_self(c.body, "m"), "m"))
            return [f"h = {name}(self, {call_args})"]
        if site == "nested":
            self.init += c.init
            inner, outer = f"inner{self.uid()}", f"outer{self.uid()}"
            self.module.append(self.frame(f"def {inner}(m, {call_args}):", rename_self(c.body, "m"), "m"))
            self.module.append([f"def {outer}(m, {call_args}):", f"    h = {inner}(m, {call_args})", "    return h * 1.0"])
            return [f"h = {outer}(self, {call_args})"]
        if site == "closure":
            self.init += c.init
            name = f"step{self.uid()}"
            g = [f"global {', '.join(c.globals_)}"] if c.globals_ else []
            fn = [f"def {name}(h):"] + indent(g + c.body + ["return h"], 4)
            return fn + [f"h = {name}(h)"]
        if site in ("submodule", "layers"):
            cls = f"Block{self.uid()}"
            fwd_args = ", ".join(["x", "h"] + args)
            lines = [f"class {cls}(nn.Module):", "    def __init__(self):", "        super().__init__()"]
            lines += indent(c.init, 8) + ["        self.fc = nn.Linear(8, 8)", ""]
            lines += indent(self.frame(f"def forward(self, {fwd_args}):", ["h = self.fc(h)"] + c.body, "self"), 4)
            self.classes.append(lines)
            call = ", ".join(["x", "h"] + args)
            if site == "submodule":
                self.init.append(f"self.block = {cls}()")
                return [f"h = self.block({call})"]
            self.init.append(f"self.layers = nn.ModuleList([{cls}() for _ in range(2)])")
            return ["for layer in self.layers:", f"    h = layer({call})"]
        raise ValueError(site)

    def render(self) -> str:
        fwd = ["h = self.fc(x)"]
        for d in self.distractors:
            self.init += d.init
            fwd += d.body
        fwd += self.place()
        fwd += ["return h"]
        module_level = list(dict.fromkeys(
            l for c in [self.case] + self.distractors for l in c.module_level))
        params = ", ".join(["x"] + [f"{p.name}" for p in self.case.params + [q for d in self.distractors for q in d.params]])
        g = [f"global {', '.join(self.case.globals_)}"] if self.case.globals_ and self.site in ("forward", "loop", "branch") else []
        out = ["import torch", "from torch import nn", ""]
        if module_level:
            out += module_level + [""]
        for fn in self.module:
            out += ["", *fn, ""]
        for cls in self.classes:
            out += ["", *cls, ""]
        out += ["", "class Model(nn.Module):", "    def __init__(self):", "        super().__init__()",
                "        self.fc = nn.Linear(8, 8)"]
        out += indent(list(dict.fromkeys(self.init)), 8)
        for m in self.methods:
            out += [""] + indent(m, 4)
        out += ["", f"    def forward(self, {params}):"] + indent(g + fwd, 8)
        return "\n".join(out) + "\n"

    def calls(self) -> list:
        params = self.case.params + [q for d in self.distractors for q in d.params]
        base = {p.name: p.base for p in params}
        plan = [{"phase": "same", "batch": 4, "mode": "eval", "args": dict(base)} for _ in range(3)]
        for p in params:
            for v in p.varied:
                plan.append({"phase": f"vary:{p.name}", "batch": 4, "mode": "eval", "args": {**base, p.name: v}})
        if self.case.batch_call:
            for b in (1, 8, 16):
                plan.append({"phase": "vary:batch", "batch": b, "mode": "eval", "args": dict(base)})
        if self.case.mode_call:
            plan.append({"phase": "mode:train", "batch": 4, "mode": "train", "args": dict(base)})
            plan.append({"phase": "mode:eval", "batch": 4, "mode": "eval", "args": dict(base)})
        return plan


def build(n_per_case: int, seed: int) -> list:
    rng = random.Random(seed)
    names = [c.name for c in risk_cases(rng) + quiet_cases(rng)]
    progs = []
    for name in names:
        for i in range(n_per_case):
            pseed = rng.randrange(1 << 30)
            r = random.Random(pseed)
            case = next(c for c in risk_cases(r) + quiet_cases(r) if c.name == name)
            site = SITES[i % len(SITES)] if i < len(SITES) else r.choice(SITES)
            pool = [d for d in quiet_cases(r) if d.name != name and not d.params]
            distractors = r.sample(pool, r.choice([0, 0, 1, 2]))
            p = Program(r, case, site, distractors)
            progs.append({
                "seed": pseed, "case": name, "site": site,
                "distractors": [d.name for d in distractors],
                "source": p.render(), "calls": p.calls(),
                "params": [q.name for q in case.params + [q for d in distractors for q in d.params]],
            })
    for i, p in enumerate(progs):
        p["id"] = f"r{i:04d}"
    return progs


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=30, help="programs per case (default 30)")
    ap.add_argument("--seed", type=int, default=39)
    ap.add_argument("-o", type=Path, default=DEFAULT_OUT)
    a = ap.parse_args()
    progs = build(a.n, a.seed)
    a.o.parent.mkdir(parents=True, exist_ok=True)
    with open(a.o, "w") as f:
        for p in progs:
            f.write(json.dumps(p, sort_keys=True) + "\n")
    print(f"wrote {len(progs)} programs to {a.o}")


if __name__ == "__main__":
    main()
