"""Generates small Python programs that exercise the object model, runs each in CPython and
writes them with what CPython computed to tests/fixtures/python_differential/programs.json,
which `src/eval/differential_tests.rs` runs through staticfx's evaluator.

    python3 scripts/expect/gen_python_differential.py --seed 37 --count 2000
    python3 scripts/expect/gen_python_differential.py --check   # exit 1 if the file differs

Each program is built from one construct's template with randomized structure (depth of
inheritance, which methods are overridden, which probes run, names, values) and ends by
binding `r` to plain data (ints, strs, floats, tuples, lists, dicts, bools, None). The
expected outcome is `repr(r)`, or `raise:<ExceptionType>` when the program raises at top
level. The same seed and count give a byte-identical file.
"""

import argparse
import json
import pathlib
import random
import sys
import types

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "tests/fixtures/python_differential/programs.json"

CLASS_NAMES = ["Node", "Block", "Layer", "Cfg", "Item", "Spec", "Unit", "Stage", "Head", "Cell",
               "Part", "Piece", "Entry", "Slot", "Record", "Holder", "Frame", "Shape"]
ATTRS = ["width", "depth", "size", "scale", "count", "rate", "dim", "heads", "level", "span",
         "gain", "bias", "tag", "limit"]
METHODS = ["run", "build", "compute", "describe", "total", "step", "apply", "render", "score",
           "measure"]
WORDS = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta", "iota", "kappa"]


class Names:
    """Distinct identifiers drawn from a pool, suffixed when the pool runs out."""

    def __init__(self, rng, pool):
        self.rng = rng
        self.pool = list(pool)
        rng.shuffle(self.pool)
        self.used = 0

    def take(self):
        name = self.pool[self.used % len(self.pool)]
        if self.used >= len(self.pool):
            name += str(self.used // len(self.pool))
        self.used += 1
        return name


def indent(lines, n=1):
    pad = "    " * n
    return [pad + line if line else line for line in lines]


def small(rng):
    return rng.randint(-3, 12)


def word(rng):
    return rng.choice(WORDS)


def probes(rng, candidates, lo=2, hi=None):
    """A random, ordered selection of probe expressions."""
    hi = hi or len(candidates)
    k = rng.randint(min(lo, len(candidates)), min(hi, len(candidates)))
    picked = rng.sample(range(len(candidates)), k)
    return [candidates[i] for i in sorted(picked)]


def result_of(exprs):
    if len(exprs) == 1:
        return f"r = ({exprs[0]},)"
    return "r = (" + ", ".join(exprs) + ")"


# --- classes inheriting from builtins ---------------------------------------------------------

def gen_subclass_dict(rng):
    base = rng.choice(["dict", "dict", "OrderedDict"])
    cn = Names(rng, CLASS_NAMES)
    a = cn.take()
    attr_access = rng.random() < 0.6
    setattr_override = attr_access and rng.random() < 0.6
    init_extra = rng.random() < 0.4
    lines = ["from collections import OrderedDict", f"class {a}({base}):"]
    body = []
    if init_extra or rng.random() < 0.5:
        body += ["def __init__(self, *args, **kwargs):", "    super().__init__(*args, **kwargs)"]
        if init_extra:
            body.append(f"    self['{word(rng)}'] = {small(rng)}")
    if attr_access:
        body += ["def __getattr__(self, name):", "    try:", "        return self[name]",
                 "    except KeyError:", "        raise AttributeError(name)"]
    if setattr_override:
        if rng.random() < 0.5:
            body += ["def __setattr__(self, name, value):", "    self[name] = value"]
        else:
            body += ["def __setattr__(self, name, value):",
                     "    super().__setattr__(name, value)", "    self[name] = value"]
    meth = rng.choice(METHODS)
    kind = rng.choice(["keys", "sum", "pairs"])
    if kind == "keys":
        body += [f"def {meth}(self):", "    return sorted(self.keys())"]
    elif kind == "sum":
        body += [f"def {meth}(self):",
                 "    return sum(v for v in self.values() if isinstance(v, int))"]
    else:
        body += [f"def {meth}(self):", "    return [(k, v) for k, v in self.items()]"]
    lines += indent(body)
    top = a
    if rng.random() < 0.4:
        b = cn.take()
        lines += [f"class {b}({a}):", f"    def {meth}(self):",
                  f"        return ('sub', super().{meth}())"]
        top = b
    keys = rng.sample(ATTRS, rng.randint(1, 4))
    init = ", ".join(f"{k}={small(rng)}" for k in keys)
    lines.append(f"d = {top}({init})")
    new_key = rng.choice([k for k in ATTRS if k not in keys])
    lines.append(f"d['{new_key}'] = {small(rng)}")
    cands = ["len(d)", "list(d.items())", f"d.{meth}()", f"d.get('missing', {small(rng)})",
             f"'{keys[0]}' in d", "isinstance(d, dict)", f"type(d).__name__",
             f"d.pop('{new_key}')", f"d.setdefault('{keys[0]}', 99)", "sorted(d)"]
    if attr_access:
        cands += [f"d.{keys[0]}", f"hasattr(d, 'nope')", f"getattr(d, 'nope', 'dflt')"]
    pre = []
    if setattr_override:
        v1, v2 = small(rng), small(rng)
        pre += [f"d.extra = {v1}", f"setattr(d, 'other', {v2})"]
        cands += ["d['extra']", "d.get('other')", "d.extra"]
    elif rng.random() < 0.5:
        pre.append(f"d.note = '{word(rng)}'")
        cands += ["d.note", "'note' in d", "len(d)"]
    if rng.random() < 0.3:
        pre.append(f"d.update({{'{word(rng)}': {small(rng)}}})")
    lines += pre
    lines.append(result_of(probes(rng, cands, 3)))
    return lines


def gen_subclass_list_tuple(rng):
    cn = Names(rng, CLASS_NAMES)
    a = cn.take()
    variant = rng.choice(["list", "list", "tuple_new", "namedtuple", "typing_namedtuple"])
    lines = []
    meth = rng.choice(METHODS)
    k = rng.randint(1, 4)
    if variant == "list":
        lines += [f"class {a}(list):"]
        body = [f"def {meth}(self, x):", "    self.append(x)", "    return self",
                "def top(self):", "    return self[-1]"]
        if rng.random() < 0.5:
            body += ["def append(self, x):", f"    super().append(x * {k})"]
        if rng.random() < 0.4:
            body += ["def __init__(self, items=()):", "    super().__init__(items)",
                     f"    self.label = '{word(rng)}'"]
        lines += indent(body)
        items = [small(rng) for _ in range(rng.randint(0, 4))]
        lines.append(f"s = {a}({items!r})")
        lines.append(f"s.{meth}({small(rng)}).{meth}({small(rng)})")
        if rng.random() < 0.5:
            lines.append(f"s.extend([{small(rng)}, {small(rng)}])")
        if rng.random() < 0.4:
            lines.append(f"s.insert(0, {small(rng)})")
        cands = ["list(s)", "len(s)", "s.top()", "isinstance(s, list)", "type(s).__name__",
                 "s[1:]", "sum(s)", "s + [100]", "s.count(s[0])", "sorted(s)",
                 "s.index(s[-1])", "[x * 2 for x in s]", "s == list(s)", "s[::-1]"]
        if "label" in "\n".join(body):
            cands.append("s.label")
        lines.append(result_of(probes(rng, cands, 3)))
    elif variant == "tuple_new":
        n = rng.randint(2, 4)
        fields = rng.sample(ATTRS, n)
        lines += [f"class {a}(tuple):", f"    def __new__(cls, {', '.join(fields)}):",
                  f"        return super().__new__(cls, ({', '.join(fields)},))"]
        for i, f in enumerate(fields):
            lines += ["    @property", f"    def {f}(self):", f"        return self[{i}]"]
        lines += [f"    def {meth}(self):", "        return sum(self)"]
        vals = [small(rng) for _ in fields]
        lines.append(f"t = {a}({', '.join(map(str, vals))})")
        cands = ["tuple(t)", f"t.{fields[0]}", f"t.{fields[-1]}", f"t.{meth}()", "len(t)",
                 "isinstance(t, tuple)", "t[0]", "t[1:]", "t + (9,)", "list(t)",
                 "type(t).__name__", "t == tuple(t)"]
        lines.append(result_of(probes(rng, cands, 3)))
    else:
        n = rng.randint(2, 4)
        fields = rng.sample(ATTRS, n)
        vals = [small(rng) for _ in fields]
        if variant == "namedtuple":
            lines += ["from collections import namedtuple"]
            dflt = rng.random() < 0.4
            if dflt:
                lines.append(f"{a} = namedtuple('{a}', {fields!r}, defaults=({small(rng)},))")
            else:
                lines.append(f"{a} = namedtuple('{a}', '{' '.join(fields)}')")
        else:
            lines += ["from typing import NamedTuple", f"class {a}(NamedTuple):"]
            for i, f in enumerate(fields):
                if i == len(fields) - 1 and rng.random() < 0.5:
                    lines.append(f"    {f}: int = {small(rng)}")
                else:
                    lines.append(f"    {f}: int")
            lines += [f"    def {meth}(self):", f"        return self.{fields[0]} * 2"]
        if rng.random() < 0.5:
            lines.append(f"t = {a}({', '.join(map(str, vals))})")
        else:
            lines.append(f"t = {a}(" + ", ".join(f"{f}={v}" for f, v in zip(fields, vals)) + ")")
        cands = ["tuple(t)", f"t.{fields[0]}", f"t.{fields[-1]}", "len(t)", "t[0]",
                 "list(t._fields)", f"t._replace({fields[0]}=50)", "t._asdict()",
                 "isinstance(t, tuple)", "type(t).__name__", "t == tuple(t)"]
        if variant == "typing_namedtuple":
            cands.append(f"t.{meth}()")
        lines.append("s0, *rest = t")
        cands += ["s0", "rest"]
        lines.append(result_of(probes(rng, cands, 3)))
    return lines


def gen_subclass_scalar(rng):
    cn = Names(rng, CLASS_NAMES)
    lines = []
    cands = []
    if rng.random() < 0.7:
        s = cn.take()
        m = rng.choice(METHODS)
        lines += [f"class {s}(str):", f"    def {m}(self):",
                  f"        return self.upper() + '{rng.choice('!?.')}'"]
        if rng.random() < 0.4:
            lines += ["    def __new__(cls, value):",
                      "        return super().__new__(cls, value.strip())"]
        w = word(rng)
        lines.append(f"sv = {s}(' {w} ')" if "__new__" in lines[-2] else f"sv = {s}('{w}')")
        cands += [f"sv.{m}()", f"sv == '{w}'", "len(sv)", "isinstance(sv, str)", "sv + 'x'",
                  "type(sv).__name__", "sv.startswith(sv[0])", "str(sv)", "sv.split('e')",
                  f"{{sv: 1}}.get('{w}')", "sv.replace('a', 'o')", "'%s!' % sv"]
    if rng.random() < 0.7:
        i = cn.take()
        k = rng.randint(2, 5)
        lines += [f"class {i}(int):", "    def double(self):", f"        return {i}(self * {k})",
                  "    def describe(self):", "        return 'n=' + str(int(self))"]
        v = rng.randint(1, 20)
        lines.append(f"iv = {i}({v})")
        cands += ["iv.double() + 1", "isinstance(iv.double(), int)", "type(iv.double()).__name__",
                  "iv.describe()", f"iv == {v}", "iv * 3", "int(iv)", "iv // 2",
                  "type(iv + 1).__name__", "[0] * iv"]
    if rng.random() < 0.5:
        f = cn.take()
        lines += [f"class {f}(float):", "    def half(self):", "        return self / 2"]
        v = rng.choice([0.5, 1.5, 2.25, 3.0, 10.0, 7.75])
        lines.append(f"fv = {f}({v})")
        cands += ["fv.half()", "fv + 1", "isinstance(fv, float)", "float(fv)", "fv > 1",
                  "type(fv).__name__", "round(fv)", "int(fv)"]
    if not cands:
        lines += [f"class Num(int):", "    pass", "iv = Num(3)"]
        cands += ["iv + 1", "type(iv).__name__"]
    lines.append(result_of(probes(rng, cands, 3, 8)))
    return lines


def gen_enum(rng):
    kind = rng.choice(["Enum", "IntEnum", "str_mixin", "auto", "methods"])
    members = rng.sample([w.upper() for w in WORDS], rng.randint(2, 5))
    e = rng.choice(["Mode", "Kind", "Color", "Phase", "Style"])
    lines = []
    if kind == "IntEnum":
        lines += ["from enum import IntEnum", f"class {e}(IntEnum):"]
        vals = list(range(1, len(members) + 1))
        lines += [f"    {m} = {v}" for m, v in zip(members, vals)]
    elif kind == "str_mixin":
        lines += ["from enum import Enum", f"class {e}(str, Enum):"]
        vals = [m.lower() for m in members]
        lines += [f"    {m} = '{v}'" for m, v in zip(members, vals)]
    elif kind == "auto":
        lines += ["from enum import Enum, auto", f"class {e}(Enum):"]
        vals = list(range(1, len(members) + 1))
        lines += [f"    {m} = auto()" for m in members]
    else:
        lines += ["from enum import Enum", f"class {e}(Enum):"]
        vals = rng.sample(range(1, 30), len(members))
        lines += [f"    {m} = {v}" for m, v in zip(members, vals)]
        if kind == "methods":
            lines += ["    def describe(self):", "        return self.name.lower() + str(self.value)",
                      "    @classmethod", "    def first(cls):", "        return list(cls)[0]",
                      "    @property", "    def big(self):", f"        return self.value > {vals[0]}"]
    m0, m1 = members[0], members[-1]
    v1 = vals[-1]
    cands = [f"[m.name for m in {e}]", f"{e}.{m0}.name", f"{e}.{m1}.value",
             f"{e}({v1!r}).name", f"{e}['{m0}'].value", f"{e}.{m0} is {e}.{m0}",
             f"{e}.{m0} == {e}.{m1}", f"len({e})", f"isinstance({e}.{m0}, {e})",
             f"type({e}.{m0}).__name__", f"{e}.{m1} in list({e})",
             f"{{{e}.{m0}: 'a'}}[{e}.{m0}]", f"[m.value for m in {e}]",
             f"list({e}.__members__)"]
    if kind == "IntEnum":
        cands += [f"{e}.{m1} + 1", f"{e}.{m0} == 1", f"int({e}.{m1})", f"{e}.{m0} < {e}.{m1}"]
    if kind == "str_mixin":
        cands += [f"{e}.{m0} == '{vals[0]}'", f"{e}.{m0}.upper()", f"{e}.{m1}.value + '!'"]
    if kind == "methods":
        cands += [f"{e}.{m1}.describe()", f"{e}.first().name", f"{e}.{m1}.big"]
    if rng.random() < 0.3:
        lines += ["try:", f"    {e}({max(v for v in vals if isinstance(v, int)) + 100 if kind != 'str_mixin' else repr('zz')})",
                  "    bad = 'no'", "except ValueError:", "    bad = 'ValueError'"]
        cands.append("bad")
    lines.append(result_of(probes(rng, cands, 3, 7)))
    return lines


# --- descriptors and properties ---------------------------------------------------------------

def gen_property(rng):
    cn = Names(rng, CLASS_NAMES)
    a = cn.take()
    attr = rng.choice(ATTRS)
    lo, hi = 0, rng.randint(5, 20)
    setter_kind = rng.choice(["clamp", "double", "validate", "none"])
    # a subclass overriding the getter alone has no setter: its __init__ must not assign
    sub = rng.random() < 0.4
    direct = setter_kind == "none" or sub
    lines = [f"class {a}:", f"    def __init__(self, {attr}={rng.randint(1, 4)}):",
             f"        self._{attr} = {attr}" if direct else f"        self.{attr} = {attr}",
             "    @property", f"    def {attr}(self):", f"        return self._{attr}"]
    if setter_kind == "clamp":
        lines += [f"    @{attr}.setter", f"    def {attr}(self, v):",
                  f"        self._{attr} = max({lo}, min({hi}, v))"]
    elif setter_kind == "double":
        lines += [f"    @{attr}.setter", f"    def {attr}(self, v):", f"        self._{attr} = v * 2"]
    elif setter_kind == "validate":
        lines += [f"    @{attr}.setter", f"    def {attr}(self, v):", "        if v < 0:",
                  f"            raise ValueError('negative {attr}')", f"        self._{attr} = v"]
    derived = rng.random() < 0.6
    if derived:
        lines += ["    @property", "    def twice(self):", f"        return self.{attr} * 2"]
    if rng.random() < 0.3:
        lines += [f"    def _get_label(self):", f"        return '{a.lower()}' + str(self._{attr})",
                  "    label = property(_get_label)"]
    top = a
    if sub:
        b = cn.take()
        lines += [f"class {b}({a}):", "    @property", f"    def {attr}(self):",
                  f"        return super().{attr} + 100"]
        top = b
    lines.append(f"o = {top}({rng.randint(1, 9)})")
    cands = [f"o.{attr}", f"o._{attr}", f"type(o).__name__", f"isinstance({top}.{attr}, property)"]
    if derived:
        cands.append("o.twice")
    if "label" in "\n".join(lines):
        cands.append("o.label")
    new = rng.randint(-5, 30)
    if setter_kind != "none" and not sub:
        if setter_kind == "validate" and new < 0:
            lines += ["try:", f"    o.{attr} = {new}", "    err = None", "except ValueError as e:",
                      "    err = str(e)"]
            cands.append("err")
        else:
            lines.append(f"o.{attr} = {new}")
            cands += [f"o.{attr}", f"o._{attr}"]
    elif setter_kind == "none" or sub:
        lines += ["try:", f"    o.{attr} = {new}", "    err = 'set'", "except AttributeError:",
                  "    err = 'AttributeError'"]
        cands.append("err")
    lines.append(result_of(probes(rng, cands, 2, 6)))
    return lines


def gen_descriptor(rng):
    cn = Names(rng, CLASS_NAMES)
    owner = cn.take()
    kind = rng.choice(["data", "data", "nondata", "typed"])
    lines = []
    fields = rng.sample(ATTRS, rng.randint(1, 3))
    if kind in ("data", "typed"):
        transform = rng.choice(["v", "v * 2", "v + 1", "abs(v)"])
        lines += ["class Field:", f"    def __init__(self, default={small(rng)}):",
                  "        self.default = default", "    def __set_name__(self, owner, name):",
                  "        self.name = '_' + name", "        self.owner_name = owner.__name__",
                  "    def __get__(self, obj, objtype=None):", "        if obj is None:",
                  "            return self", "        return getattr(obj, self.name, self.default)",
                  "    def __set__(self, obj, v):"]
        if kind == "typed":
            lines += ["        if not isinstance(v, int):",
                      "            raise TypeError(self.name + ' must be int')"]
        lines += [f"        setattr(obj, self.name, {transform})"]
    else:
        lines += ["class Lazy:", "    def __init__(self, fn):", "        self.fn = fn",
                  "        self.name = fn.__name__", "    def __get__(self, obj, objtype=None):",
                  "        if obj is None:", "            return self", "        v = self.fn(obj)",
                  "        obj.__dict__[self.name] = v", "        return v"]
    lines.append(f"class {owner}:")
    if kind == "nondata":
        lines += ["    calls = 0", f"    def __init__(self, base):", "        self.base = base"]
        for f in fields:
            k = rng.randint(1, 5)
            lines += ["    @Lazy", f"    def {f}(self):", f"        {owner}.calls += 1",
                      f"        return self.base * {k}"]
        lines.append(f"o = {owner}({rng.randint(1, 9)})")
        cands = [f"o.{fields[0]}", f"o.{fields[0]}", f"{owner}.calls", f"'{fields[0]}' in o.__dict__",
                 f"type({owner}.__dict__['{fields[0]}']).__name__", f"{owner}.{fields[0]}.name"]
        if rng.random() < 0.5:
            lines.append(f"o.{fields[-1]} = 'shadow'")
            cands.append(f"o.{fields[-1]}")
        lines.append(result_of(probes(rng, cands, 3)))
        return lines
    for f in fields:
        lines.append(f"    {f} = Field({small(rng)})" if rng.random() < 0.6 else f"    {f} = Field()")
    init_args = fields[: rng.randint(0, len(fields))]
    if init_args:
        lines.append(f"    def __init__(self, {', '.join(init_args)}):")
        lines += [f"        self.{f} = {f}" for f in init_args]
    args = [str(rng.randint(-5, 9)) for _ in init_args]
    lines.append(f"o = {owner}({', '.join(args)})")
    cands = [f"o.{f}" for f in fields] + [f"{owner}.{fields[0]}.name",
                                          f"{owner}.{fields[0]}.owner_name",
                                          f"sorted(vars(o))", f"isinstance({owner}.{fields[-1]}, Field)"]
    if kind == "typed" and rng.random() < 0.5:
        lines += ["try:", f"    o.{fields[0]} = 'x'", "    err = None", "except TypeError as e:",
                  "    err = str(e)"]
        cands.append("err")
    else:
        lines.append(f"o.{fields[-1]} = {rng.randint(-5, 9)}")
        cands.append(f"o.{fields[-1]}")
    if rng.random() < 0.4:
        lines.append(f"o2 = {owner}({', '.join(str(rng.randint(0, 5)) for _ in init_args)})")
        cands.append(f"(o2.{fields[0]}, o.{fields[0]})")
    lines.append(result_of(probes(rng, cands, 3)))
    return lines


def gen_classmethod_staticmethod(rng):
    cn = Names(rng, CLASS_NAMES)
    a = cn.take()
    fields = rng.sample(ATTRS, rng.randint(1, 3))
    lines = [f"class {a}:", "    created = 0", f"    def __init__(self, {', '.join(fields)}):"]
    lines += [f"        self.{f} = {f}" for f in fields]
    lines += ["    @classmethod", "    def from_dict(cls, d):", "        cls.created += 1",
              f"        return cls(**d)", "    @classmethod", "    def kind(cls):",
              "        return cls.__name__.lower()", "    @staticmethod",
              f"    def helper(x, y={rng.randint(1, 4)}):", f"        return x * y + {small(rng)}",
              "    def use_helper(self):", f"        return self.helper(self.{fields[0]})"]
    if rng.random() < 0.5:
        lines += ["    @classmethod", "    def default(cls):",
                  f"        return cls({', '.join(str(small(rng)) for _ in fields)})"]
    sub = rng.random() < 0.6
    top = a
    if sub:
        b = cn.take()
        lines += [f"class {b}({a}):", "    @staticmethod", "    def helper(x, y=10):",
                  "        return x - y"]
        if rng.random() < 0.5:
            lines += ["    @classmethod", "    def kind(cls):", "        return 'sub:' + super().kind()"]
        top = b
    d = {f: small(rng) for f in fields}
    lines.append(f"o = {top}.from_dict({d!r})")
    cands = [f"o.{fields[0]}", "type(o).__name__", f"{top}.kind()", "o.kind()",
             f"{a}.kind()", f"{top}.helper(3)", "o.helper(2, 5)", "o.use_helper()",
             f"{a}.created", f"{top}.created", f"{a}.helper(4)"]
    if "def default" in "\n".join(lines):
        cands.append(f"vars({top}.default())")
    if rng.random() < 0.4:
        lines.append(f"{a}.from_dict({d!r})")
    lines.append(result_of(probes(rng, cands, 3)))
    return lines


# --- metaclasses, dataclasses, decorators, closures -------------------------------------------

def gen_metaclass(rng):
    cn = Names(rng, CLASS_NAMES)
    base = cn.take()
    lines = ["class Meta(type):", "    registry = []",
             "    def __new__(mcs, name, bases, ns, **kwargs):",
             "        cls = super().__new__(mcs, name, bases, ns)",
             "        Meta.registry.append(name)"]
    tag = rng.random() < 0.6
    if tag:
        lines.append("        cls.tag = name.lower() + str(len(bases))")
    count_methods = rng.random() < 0.4
    if count_methods:
        lines.append("        cls.n_methods = len([k for k in ns if not k.startswith('__')])")
    lines.append("        return cls")
    call = rng.random() < 0.5
    if call:
        lines += ["    def __call__(cls, *args, **kwargs):",
                  "        inst = super().__call__(*args, **kwargs)",
                  f"        inst.made_by = '{word(rng)}'", "        return inst"]
    meta_method = rng.random() < 0.3
    if meta_method:
        lines += ["    def describe(cls):", "        return 'class ' + cls.__name__"]
    lines += [f"class {base}(metaclass=Meta):", f"    def __init__(self, v={small(rng)}):",
              "        self.v = v", "    def get(self):", "        return self.v"]
    chain = [base]
    for _ in range(rng.randint(0, 3)):
        c = cn.take()
        lines += [f"class {c}({chain[-1]}):", "    def get(self):",
                  f"        return super().get() + {rng.randint(1, 9)}"]
        chain.append(c)
    top = chain[-1]
    lines.append(f"o = {top}({small(rng)})")
    cands = ["Meta.registry", "o.get()", f"type({top}).__name__", f"isinstance({top}, Meta)",
             f"isinstance(o, {base})", f"type(o).__name__"]
    if tag:
        cands += [f"{top}.tag", f"{base}.tag"]
    if count_methods:
        cands.append(f"{top}.n_methods")
    if call:
        cands.append("o.made_by")
    if meta_method:
        cands.append(f"{top}.describe()")
    if rng.random() < 0.3:
        lines.append("Dyn = Meta('Dyn', (object,), {'x': 5})")
        cands += ["Dyn.x", "Meta.registry[-1]"]
    lines.append(result_of(probes(rng, cands, 3)))
    return lines


def gen_dataclass(rng):
    cn = Names(rng, CLASS_NAMES)
    a = cn.take()
    nf = rng.randint(1, 4)
    fields = rng.sample(ATTRS, nf + 2)
    mine, extra = fields[:nf], fields[nf:]
    lines = ["from dataclasses import dataclass, field, replace, asdict, fields, astuple"]
    frozen = rng.random() < 0.15
    lines.append("@dataclass(frozen=True)" if frozen else "@dataclass")
    lines.append(f"class {a}:")
    required = rng.randint(0, nf)
    defaults = {}
    for i, f in enumerate(mine):
        if i < required:
            lines.append(f"    {f}: int")
        else:
            v = small(rng)
            defaults[f] = v
            lines.append(f"    {f}: int = {v}")
    has_factory = rng.random() < 0.5
    if has_factory:
        lines.append(f"    items: list = field(default_factory=list)")
    post = rng.random() < 0.5 and not frozen
    if post:
        lines.append("    total: int = field(default=0, init=False)")
        lines += ["    def __post_init__(self):",
                  "        self.total = " + " + ".join(f"self.{f}" for f in mine)]
    meth = rng.choice([m for m in METHODS if m != "total"])
    lines += [f"    def {meth}(self):", f"        return self.{mine[0]} * 2"]
    top = a
    sub = rng.random() < 0.4
    if sub:
        b = cn.take()
        lines += ["@dataclass(frozen=True)" if frozen else "@dataclass", f"class {b}({a}):",
                  f"    {extra[0]}: str = '{word(rng)}'"]
        if post and rng.random() < 0.5:
            lines += ["    def __post_init__(self):", "        super().__post_init__()",
                      "        self.total += 1000"]
        top = b
    args = ", ".join(str(small(rng)) for _ in range(required))
    lines.append(f"c = {top}({args})")
    cands = [f"c.{mine[0]}", f"c.{meth}()", f"[f.name for f in fields(c)]", "asdict(c)",
             f"replace(c, {mine[-1]}={small(rng)}).{mine[-1]}", f"c == {top}({args})",
             "astuple(c)", f"type(c).__name__", f"{top}.__name__",
             f"'{mine[-1]}' in {top}.__dataclass_fields__"]
    if has_factory:
        if not frozen:
            lines.append(f"c.items.append({small(rng)})")
        lines.append(f"c2 = {top}({args})")
        cands += ["c.items", "c2.items", "c.items is c2.items"]
    if post:
        cands += ["c.total", f"replace(c, {mine[0]}=100).total"]
    if sub:
        cands.append(f"c.{extra[0]}")
    if frozen:
        lines += ["try:", f"    c.{mine[0]} = 1", "    err = None", "except Exception as e:",
                  "    err = type(e).__name__"]
        cands.append("err")
    if rng.random() < 0.25:
        lines += ["try:", f"    {a}({', '.join(['1'] * (nf + 3))})", "    terr = None",
                  "except TypeError:", "    terr = 'TypeError'"]
        cands.append("terr")
    lines.append(result_of(probes(rng, cands, 3)))
    return lines


def gen_decorator(rng):
    kind = rng.choice(["wraps", "args", "stack", "class_deco", "init_replace", "registry"])
    lines = ["import functools"]
    fn = rng.choice(METHODS)
    k = rng.randint(1, 5)
    if kind == "wraps":
        use_wraps = rng.random() < 0.7
        lines += ["calls = []", "def traced(f):"]
        if use_wraps:
            lines.append("    @functools.wraps(f)")
        lines += ["    def wrapper(*args, **kwargs):", "        calls.append(f.__name__)",
                  "        return f(*args, **kwargs)", "    return wrapper", "@traced",
                  f"def {fn}(x, y={k}):", f"    '''doc of {fn}'''", "    return x * y"]
        lines.append(f"a = {fn}({small(rng)})")
        lines.append(f"b = {fn}({small(rng)}, y={small(rng)})")
        cands = ["a", "b", "calls", f"{fn}.__name__", f"{fn}.__doc__",
                 f"hasattr({fn}, '__wrapped__')"]
        if use_wraps:
            cands.append(f"{fn}.__wrapped__(2)")
    elif kind == "args":
        lines += ["def scale(factor, offset=0):", "    def deco(f):",
                  "        @functools.wraps(f)", "        def inner(*args):",
                  "            return f(*args) * factor + offset", "        return inner",
                  "    return deco", f"@scale({k}, offset={small(rng)})", f"def {fn}(a, b):",
                  "    return a + b", f"@scale({rng.randint(1, 3)})", "def ident(a):", "    return a"]
        cands = [f"{fn}(1, 2)", f"{fn}({small(rng)}, {small(rng)})", "ident(7)", f"{fn}.__name__",
                 "ident.__name__"]
    elif kind == "stack":
        n = rng.randint(2, 4)
        tags = rng.sample(WORDS, n)
        lines.append("order = []")
        for t in tags:
            lines += [f"def deco_{t}(f):", "    @functools.wraps(f)", "    def w(*a):",
                      f"        order.append('{t}')", f"        return '{t[0]}' + f(*a)", "    return w"]
        lines += [f"@deco_{t}" for t in tags]
        lines += [f"def {fn}(s):", "    return s"]
        lines.append(f"out = {fn}('x')")
        cands = ["out", "order", f"{fn}.__name__", f"{fn}('y')"]
    elif kind == "class_deco":
        cn = Names(rng, CLASS_NAMES)
        a = cn.take()
        attr = rng.choice(ATTRS)
        lines += ["def add_describe(cls):", "    def describe(self):",
                  f"        return cls.__name__ + ':' + str(self.{attr})",
                  "    cls.describe = describe", f"    cls.decorated = True", "    return cls",
                  "REG = {}", "def register(name):", "    def deco(cls):",
                  "        REG[name] = cls", "        return cls", "    return deco",
                  f"@register('{word(rng)}')", "@add_describe", f"class {a}:",
                  f"    def __init__(self, {attr}={small(rng)}):", f"        self.{attr} = {attr}"]
        lines.append(f"o = {a}({small(rng)})")
        cands = ["o.describe()", f"{a}.decorated", "list(REG)", "[c.__name__ for c in REG.values()]",
                 f"{a}().describe()", "hasattr(o, 'describe')"]
    elif kind == "init_replace":
        cn = Names(rng, CLASS_NAMES)
        a = cn.take()
        fields = rng.sample(ATTRS, rng.randint(1, 3))
        lines += ["def record_init(cls):", "    orig = cls.__init__",
                  "    @functools.wraps(orig)", "    def __init__(self, *args, **kwargs):",
                  "        self.init_kwargs = dict(kwargs)", "        self.init_args = list(args)",
                  "        orig(self, *args, **kwargs)", "    cls.__init__ = __init__",
                  "    return cls", "@record_init", f"class {a}:",
                  f"    def __init__(self, {', '.join(f + '=' + str(small(rng)) for f in fields)}):"]
        lines += [f"        self.{f} = {f}" for f in fields]
        sub = rng.random() < 0.4
        top = a
        if sub:
            lines += [f"class Sub{a}({a}):", "    pass"]
            top = "Sub" + a
        pos = [str(small(rng)) for _ in range(rng.randint(0, len(fields) - 1))]
        kws = {f: small(rng) for f in fields[len(pos):] if rng.random() < 0.6}
        call_args = pos + [f"{kk}={vv}" for kk, vv in kws.items()]
        lines.append(f"o = {top}({', '.join(call_args)})")
        cands = ["o.init_kwargs", "o.init_args", f"o.{fields[-1]}", f"{a}.__init__.__name__",
                 f"vars(o)", f"type(o).__name__"]
    else:
        lines += ["HANDLERS = {}", "def handles(*names):", "    def deco(f):",
                  "        for n in names:", "            HANDLERS[n] = f", "        return f",
                  "    return deco"]
        ws = rng.sample(WORDS, 4)
        lines += [f"@handles('{ws[0]}', '{ws[1]}')", "def h1(x):", f"    return x + {k}",
                  f"@handles('{ws[2]}')", "def h2(x):", "    return x * 2",
                  f"@handles('{ws[3]}', '{ws[0]}')", "def h3(x):", "    return -x"]
        cands = ["sorted(HANDLERS)", f"HANDLERS['{ws[0]}'](3)", f"HANDLERS['{ws[1]}'](3)",
                 f"[HANDLERS[n].__name__ for n in sorted(HANDLERS)]", "h1(1)",
                 f"HANDLERS.get('{ws[2]}')(5)"]
    lines.append(result_of(probes(rng, cands, 2)))
    return lines


def gen_closure(rng):
    kind = rng.choice(["counter", "late", "default_capture", "nested", "accumulate", "factory"])
    n = rng.randint(2, 5)
    lines = []
    if kind == "counter":
        start, step = small(rng), rng.randint(1, 4)
        lines += ["def make_counter(start):", "    count = start", "    def inc():",
                  "        nonlocal count", f"        count += {step}", "        return count",
                  "    def get():", "        return count", "    return inc, get",
                  f"inc, get = make_counter({start})", f"inc2, get2 = make_counter({start * 2})"]
        lines += ["inc()"] * n
        cands = ["get()", "inc()", "get2()", "inc2()", "get()"]
    elif kind == "late":
        lines += [f"fs = [lambda: i * {rng.randint(1, 3)} for i in range({n})]",
                  f"gs = [lambda i=i: i for i in range({n})]", "hs = []",
                  f"for j in range({n}):", "    def h():", "        return j", "    hs.append(h)"]
        cands = ["[f() for f in fs]", "[g() for g in gs]", "[h() for h in hs]", "len(fs)"]
    elif kind == "default_capture":
        lines += ["x = 1", "def f(a=x):", "    return a", f"x = {small(rng)}", "def g():",
                  "    return x", f"x = {small(rng)}"]
        cands = ["f()", "g()", "f(5)", "x"]
    elif kind == "nested":
        a, b, c = small(rng), small(rng), small(rng)
        lines += [f"def outer(a={a}):", f"    b = {b}", "    def middle():", f"        c = {c}",
                  "        def inner():", "            return (a, b, c)", "        return inner",
                  "    return middle", "fn = outer()()", f"fn2 = outer({small(rng)})()"]
        if rng.random() < 0.5:
            lines += ["def rebinder():", "    v = 1", "    def show():", "        return v",
                      f"    v = {small(rng)}", "    return show()"]
            cands = ["fn()", "fn2()", "rebinder()"]
        else:
            cands = ["fn()", "fn2()", "fn.__name__"]
    elif kind == "accumulate":
        lines += ["def collector():", "    seen = []", "    def add(x):", "        seen.append(x)",
                  "        return len(seen)", "    add.seen = seen", "    return add",
                  "add = collector()"]
        lines += [f"add({small(rng)})" for _ in range(n)]
        cands = ["add.seen", f"add({small(rng)})", "add.seen[-1]", "sum(add.seen)"]
    else:
        lines += ["def power(exp):", "    def f(base):", "        return base ** exp",
                  "    return f", f"fs = {{e: power(e) for e in range(1, {n + 1})}}",
                  f"vals = [fs[e]({rng.randint(2, 4)}) for e in sorted(fs)]"]
        cands = ["vals", "fs[1](9)", "sorted(fs)", "fs[2].__name__",
                 "fs[1].__closure__[0].cell_contents"]
    lines.append(result_of(probes(rng, cands, 2)))
    return lines


# --- modules and exceptions -------------------------------------------------------------------

def gen_module(rng):
    consts = rng.sample([w.upper() for w in WORDS], rng.randint(2, 4))
    vals = [small(rng) for _ in consts]
    lines = [f"{c} = {v}" for c, v in zip(consts, vals)]
    kind = rng.choice(["globals", "global_stmt", "sys_modules", "dunder", "getattr_math"])
    cands = []
    if kind == "globals":
        lines += [f"g = globals()", f"names = [k for k in {consts!r} if k in g]",
                  f"globals()['DYN'] = {small(rng)}",
                  f"lookup = {{k: globals()[k] for k in {consts[:2]!r}}}"]
        cands = ["names", "DYN", "lookup", "globals().get('MISSING', 'none')",
                 f"'{consts[0]}' in globals()"]
    elif kind == "global_stmt":
        lines += ["COUNTER = 0", "def bump(n=1):", "    global COUNTER", "    COUNTER += n",
                  "    return COUNTER", f"def read():", f"    return COUNTER + {consts[0]}"]
        lines += [f"bump({rng.randint(1, 3)})" for _ in range(rng.randint(1, 3))]
        cands = ["COUNTER", "read()", "bump()", f"{consts[-1]}"]
    elif kind == "sys_modules":
        lines += ["import sys", "mod = sys.modules[__name__]",
                  f"def helper():", f"    return {consts[0]} * 2",
                  f"setattr(mod, 'ADDED', {small(rng)})"]
        cands = [f"getattr(mod, '{consts[0]}')", "getattr(mod, 'missing', 'dflt')",
                 "hasattr(mod, 'helper')", "mod.helper()", "ADDED", "mod.ADDED",
                 f"mod.{consts[-1]}"]
    elif kind == "dunder":
        lines += ["class K:", "    pass", "def f():", "    pass"]
        cands = ["__name__", "K.__module__", "f.__module__", "K.__qualname__",
                 "f.__qualname__", "K.__name__"]
    else:
        lines += ["import math", "import operator", "names = ['floor', 'ceil']",
                  f"vals = [getattr(math, n)({rng.choice([1.5, 2.25, -0.5, 7.75])}) for n in names]",
                  f"op = getattr(operator, '{rng.choice(['add', 'mul', 'sub'])}')"]
        cands = ["vals", f"op({small(rng)}, {small(rng)})", "hasattr(math, 'pi')",
                 "getattr(math, 'nope', None)", "math.floor(math.pi)"]
    cands += [f"{consts[0]}", f"{consts[0]} + {consts[1]}"]
    lines.append(result_of(probes(rng, cands, 2)))
    return lines


def gen_exception(rng):
    kind = rng.choice(["flow", "custom", "cause", "builtin_errors", "context_manager",
                       "finally_return", "reraise"])
    lines = ["log = []"]
    cands = ["log"]
    if kind == "flow":
        raise_in = rng.random() < 0.5
        exc = rng.choice(["ValueError", "KeyError", "TypeError", "RuntimeError"])
        caught = exc if rng.random() < 0.7 else rng.choice(["Exception", "LookupError",
                                                             "(ValueError, TypeError)"])
        lines += ["def work(flag):", "    try:", "        log.append('try')",
                  "        if flag:", f"            raise {exc}('boom')", "        log.append('body')",
                  f"    except {caught}:", "        log.append('except')", "    else:",
                  "        log.append('else')", "    finally:", "        log.append('finally')",
                  "    return len(log)"]
        lines.append("try:")
        lines.append(f"    n = work({raise_in})")
        lines += ["except Exception as e:", "    n = type(e).__name__"]
        lines.append(f"m = work({not raise_in})" if rng.random() < 0.5 else "m = None")
        cands += ["n", "m"]
    elif kind == "custom":
        n_levels = rng.randint(1, 3)
        names = ["AppError", "ConfigError", "ShapeError", "DepthError"][: n_levels + 1]
        lines.append(f"class {names[0]}(Exception):")
        with_init = rng.random() < 0.5
        if with_init:
            lines += ["    def __init__(self, msg, code=0):", "        super().__init__(msg)",
                      "        self.code = code"]
        else:
            lines.append("    pass")
        for p, c in zip(names, names[1:]):
            lines += [f"class {c}({p}):", "    pass"]
        raised = rng.choice(names)
        catch = rng.choice(names[: names.index(raised) + 1])
        code = rng.randint(1, 9)
        args = f"'bad {raised.lower()}', {code}" if with_init else f"'bad {raised.lower()}'"
        lines += ["try:", f"    raise {raised}({args})", f"except {catch} as e:",
                  "    log.append(type(e).__name__)", "    log.append(str(e))",
                  "    log.append(e.args)", f"    log.append(isinstance(e, {names[0]}))"]
        if with_init:
            lines.append("    log.append(e.code)")
        if rng.random() < 0.4:
            lines += [f"log.append(issubclass({names[-1]}, {names[0]}))",
                      f"log.append([k.__name__ for k in {names[-1]}.__mro__])"]
    elif kind == "cause":
        lines += ["def parse(s):", "    try:", "        return int(s)", "    except ValueError as e:",
                  "        raise KeyError('bad ' + s) from e",
                  "try:", f"    parse('{word(rng)}')", "except KeyError as e:",
                  "    log.append(type(e.__cause__).__name__)",
                  "    log.append(e.__cause__ is not None)", "    log.append(e.args[0])",
                  f"log.append(parse('{rng.randint(0, 99)}'))"]
        if rng.random() < 0.5:
            lines += ["try:", "    try:", "        1 / 0", "    except ZeroDivisionError:",
                      "        raise ValueError('inner')", "except ValueError as e:",
                      "    log.append(type(e.__context__).__name__)",
                      "    log.append(e.__suppress_context__)"]
    elif kind == "builtin_errors":
        ops = rng.sample([("{}['missing']", "KeyError"), ("[1, 2][5]", "IndexError"),
                          ("1 // 0", "ZeroDivisionError"), ("int('x1')", "ValueError"),
                          ("None.attr", "AttributeError"), ("'a' + 1", "TypeError"),
                          ("undefined_name", "NameError"), ("(1, 2).append", "AttributeError"),
                          ("[].pop()", "IndexError"), ("{'a': 1}['b']", "KeyError")],
                         rng.randint(2, 4))
        for expr, _name in ops:
            catch = rng.choice(["Exception", _name])
            if _name in ("KeyError", "IndexError") and rng.random() < 0.4:
                catch = "LookupError"
            if _name == "ZeroDivisionError" and rng.random() < 0.4:
                catch = "ArithmeticError"
            lines += ["try:", f"    {expr}", "    log.append('no error')", f"except {catch} as e:",
                      "    log.append(type(e).__name__)"]
    elif kind == "context_manager":
        suppress = rng.random() < 0.5
        lines += ["class Guard:", "    def __init__(self, name):", "        self.name = name",
                  "    def __enter__(self):", "        log.append('enter ' + self.name)",
                  "        return self", "    def __exit__(self, et, ev, tb):",
                  "        log.append('exit ' + self.name + ' ' + (et.__name__ if et else 'ok'))",
                  f"        return {suppress}"]
        lines += ["try:", "    with Guard('a') as g:", "        log.append(g.name)",
                  "        raise ValueError('x')", "    log.append('after')", "except ValueError:",
                  "    log.append('escaped')"]
        if rng.random() < 0.5:
            lines += ["import contextlib", "with contextlib.suppress(KeyError):",
                      "    log.append('in suppress')", "    {}['k']", "    log.append('unreached')"]
        if rng.random() < 0.5:
            lines += ["with Guard('b'), Guard('c'):", "    log.append('both')"]
    elif kind == "finally_return":
        lines += ["def f(x):", "    try:", "        if x:", "            return 'try'",
                  "        raise RuntimeError('r')", "    except RuntimeError:",
                  "        log.append('caught')", "        return 'except'", "    finally:",
                  "        log.append('finally')"]
        lines += [f"a = f({rng.choice([True, False])})", f"b = f({rng.choice([True, False])})"]
        if rng.random() < 0.5:
            lines += ["def g():", "    for i in range(5):", "        try:",
                      "            if i == 2:", "                break", "        finally:",
                      "            log.append(i)", "    return i", "c = g()"]
            cands.append("c")
        cands += ["a", "b"]
    else:
        lines += ["def inner():", "    raise LookupError('deep')", "def outer():", "    try:",
                  "        inner()", "    except LookupError:", "        log.append('seen')",
                  "        raise"]
        lines += ["try:", "    outer()", "except Exception as e:",
                  "    log.append((type(e).__name__, str(e)))"]
    if rng.random() < 0.04:
        # an uncaught exception at top level: the program's outcome is its type
        lines.append(rng.choice(["raise RuntimeError('top')", "{}['nokey']", "int('nan?')"]))
    lines.append(result_of(cands))
    return lines


# --- run-time class changes, subclass hooks, MRO, attribute hooks -----------------------------

def gen_monkeypatch(rng):
    cn = Names(rng, CLASS_NAMES)
    a = cn.take()
    attr = rng.choice(ATTRS)
    meth = rng.choice(METHODS)
    v = rng.randint(1, 9)
    lines = [f"class {a}:", f"    kind = '{word(rng)}'", f"    def __init__(self, {attr}={v}):",
             f"        self.{attr} = {attr}", f"    def {meth}(self):", f"        return self.{attr}"]
    sub = rng.random() < 0.4
    if sub:
        lines += [f"class Sub{a}({a}):", "    pass"]
    lines.append(f"old = {a}({rng.randint(1, 9)})")
    if sub:
        lines.append(f"subinst = Sub{a}()")
    kind = rng.choice(["add", "replace_wrap", "setattr", "class_attr", "lambda"])
    cands = [f"old.{meth}()"]
    if kind == "add":
        lines += ["def extra(self, k=2):", f"    return self.{attr} * k", f"{a}.extra = extra"]
        cands += ["old.extra()", "old.extra(3)", f"hasattr({a}(), 'extra')"]
    elif kind == "replace_wrap":
        lines += [f"orig = {a}.{meth}", "def patched(self):",
                  f"    return ('patched', orig(self))", f"{a}.{meth} = patched"]
        cands += [f"old.{meth}()", f"{a}(0).{meth}()"]
    elif kind == "setattr":
        lines += [f"setattr({a}, 'label', lambda self: '{a.lower()}' + str(self.{attr}))",
                  f"setattr({a}, 'LIMIT', {small(rng)})"]
        cands += ["old.label()", f"{a}.LIMIT", "old.LIMIT", f"getattr(old, 'LIMIT')"]
    elif kind == "class_attr":
        new = word(rng)
        lines += [f"other = {a}()", f"other.kind = 'own'", f"{a}.kind = '{new}'"]
        cands += ["old.kind", "other.kind", f"{a}.kind", "'kind' in vars(other)", "'kind' in vars(old)"]
    else:
        lines += [f"{a}.{meth} = lambda self: self.{attr} + 100"]
        cands += [f"old.{meth}()"]
    if sub:
        cands += [f"subinst.{meth}()", f"type(subinst).__name__"]
        if kind == "add":
            cands.append("subinst.extra()")
    if rng.random() < 0.3:
        lines.append(f"old.{meth} = lambda: 'instance-level'")
        cands.append(f"old.{meth}()")
    lines.append(result_of(probes(rng, cands, 2)))
    return lines


def gen_init_subclass(rng):
    cn = Names(rng, CLASS_NAMES)
    base = cn.take()
    lines = ["REGISTRY = {}", f"class {base}:",
             "    def __init_subclass__(cls, key=None, **kwargs):",
             "        super().__init_subclass__(**kwargs)",
             "        REGISTRY[key or cls.__name__.lower()] = cls"]
    extra = rng.random() < 0.5
    if extra:
        lines.append("        cls.registered_as = key")
    lines += ["    def name(self):", "        return type(self).__name__"]
    classes = []
    parents = [base]
    for i in range(rng.randint(1, 4)):
        c = cn.take()
        parent = rng.choice(parents)
        key = f"'{word(rng)}{i}'" if rng.random() < 0.6 else None
        head = f"class {c}({parent}, key={key}):" if key else f"class {c}({parent}):"
        lines += [head, "    pass" if rng.random() < 0.5 else f"    level = {i}"]
        classes.append(c)
        parents.append(c)
    chained = rng.random() < 0.3
    if chained:
        mid = cn.take()
        lines += [f"class {mid}({base}, key='mid'):",
                  "    def __init_subclass__(cls, **kwargs):",
                  "        cls.from_mid = True", "        super().__init_subclass__(**kwargs)",
                  f"class Leaf({mid}, key='leaf'):", "    pass"]
    cands = ["sorted(REGISTRY)", "[c.__name__ for c in REGISTRY.values()]",
             f"REGISTRY.get('{classes[0].lower()}') is {classes[0]}", f"{classes[-1]}().name()",
             f"'{base.lower()}' in REGISTRY"]
    if extra:
        cands.append(f"{classes[-1]}.registered_as")
    if chained:
        cands += ["Leaf.from_mid", "REGISTRY['leaf'].__name__"]
    lines.append(result_of(probes(rng, cands, 2)))
    return lines


def gen_mro(rng):
    shape = rng.choice(["diamond", "linear", "wide", "cooperative_init"])
    meth = rng.choice(METHODS)
    lines = ["trail = []"]
    if shape == "cooperative_init":
        lines += ["class Base:", "    def __init__(self, **kwargs):", "        trail.append('Base')",
                  "        self.rest = sorted(kwargs)"]
        mixins = rng.sample(["Sized", "Named", "Scaled", "Tagged"], rng.randint(2, 3))
        for m in mixins:
            arg = m.lower()
            lines += [f"class {m}(Base):", f"    def __init__(self, {arg}=0, **kwargs):",
                      f"        trail.append('{m}')", f"        self.{arg} = {arg}",
                      "        super().__init__(**kwargs)"]
        lines += [f"class Combo({', '.join(mixins)}):", "    def __init__(self, **kwargs):",
                  "        trail.append('Combo')", "        super().__init__(**kwargs)"]
        kws = {m.lower(): small(rng) for m in mixins if rng.random() < 0.7}
        kws["unused"] = 1
        lines.append("o = Combo(" + ", ".join(f"{k}={v}" for k, v in kws.items()) + ")")
        cands = ["trail", "o.rest", "[k.__name__ for k in Combo.__mro__]",
                 f"o.{mixins[0].lower()}"]
    else:
        if shape == "diamond":
            classes = [("A", []), ("B", ["A"]), ("C", ["A"]), ("D", ["B", "C"])]
        elif shape == "linear":
            n = rng.randint(2, 5)
            names = ["A", "B", "C", "D", "E"][:n]
            classes = [(names[0], [])] + [(names[i], [names[i - 1]]) for i in range(1, n)]
        else:
            classes = [("A", []), ("B", ["A"]), ("C", ["A"]), ("E", ["A"]),
                       ("D", rng.sample(["B", "C", "E"], 3))]
        for name, bases in classes:
            head = f"class {name}({', '.join(bases)}):" if bases else f"class {name}:"
            lines.append(head)
            override = not bases or rng.random() < 0.75
            if override:
                lines += [f"    def {meth}(self):", f"        trail.append('{name}')"]
                if bases:
                    lines.append(f"        return '{name.lower()}' + super().{meth}()")
                else:
                    lines.append(f"        return '{name.lower()}'")
            else:
                lines.append(f"    x_{name.lower()} = 1")
            if rng.random() < 0.3:
                lines.append(f"    shared = '{name}'")
        last = classes[-1][0]
        lines.append(f"out = {last}().{meth}()")
        cands = ["out", "trail", f"[k.__name__ for k in {last}.__mro__]",
                 f"getattr({last}, 'shared', None)", f"issubclass({last}, A)",
                 f"isinstance({last}(), A)", f"{last}.__bases__[0].__name__",
                 f"[b.__name__ for b in {last}.__bases__]"]
    lines.append(result_of(probes(rng, cands, 2)))
    return lines


def gen_attribute_hooks(rng):
    cn = Names(rng, CLASS_NAMES)
    a = cn.take()
    kind = rng.choice(["getattr_fallback", "setattr_record", "getattribute", "delattr", "vars"])
    attr = rng.choice(ATTRS)
    lines = []
    if kind == "getattr_fallback":
        lines += [f"class {a}:", "    def __init__(self):", f"        self.{attr} = {small(rng)}",
                  "    def __getattr__(self, name):", "        if name.startswith('get_'):",
                  "            return lambda: name[4:]", "        raise AttributeError(name)"]
        lines.append(f"o = {a}()")
        cands = [f"o.{attr}", "o.get_thing()", "hasattr(o, 'missing')", "getattr(o, 'nope', 'dflt')",
                 f"hasattr(o, '{attr}')", "getattr(o, 'get_x')()"]
    elif kind == "setattr_record":
        lines += ["seen = []", f"class {a}:", "    def __init__(self):",
                  f"        self.{attr} = {small(rng)}", "    def __setattr__(self, name, value):",
                  "        seen.append(name)"]
        if rng.random() < 0.5:
            lines.append("        object.__setattr__(self, name, value * 2 if isinstance(value, int) else value)")
        else:
            lines.append("        super().__setattr__(name, value)")
        lines.append(f"o = {a}()")
        lines += [f"o.other = {small(rng)}", f"setattr(o, 'third', '{word(rng)}')"]
        cands = ["seen", f"o.{attr}", "o.other", "o.third", "sorted(vars(o))"]
    elif kind == "getattribute":
        lines += ["reads = []", f"class {a}:", "    def __init__(self):",
                  f"        self.{attr} = {small(rng)}", "    def __getattribute__(self, name):",
                  "        if not name.startswith('_'):", "            reads.append(name)",
                  "        return super().__getattribute__(name)"]
        lines.append(f"o = {a}()")
        lines.append(f"v = o.{attr}")
        cands = ["v", "reads", f"getattr(o, '{attr}')"]
    elif kind == "delattr":
        lines += [f"class {a}:", f"    {attr} = 'class-level'", "    def __init__(self):",
                  f"        self.{attr} = 'instance'"]
        lines.append(f"o = {a}()")
        lines += [f"before = o.{attr}", f"del o.{attr}", f"after = o.{attr}"]
        if rng.random() < 0.5:
            lines += ["try:", f"    del o.{attr}", "    err = None", "except AttributeError:",
                      "    err = 'AttributeError'"]
        else:
            lines += [f"delattr({a}, '{attr}')", f"err = hasattr(o, '{attr}')"]
        cands = ["before", "after", "err"]
    else:
        fields = rng.sample(ATTRS, rng.randint(1, 4))
        lines += [f"class {a}:", f"    cls_attr = {small(rng)}", "    def __init__(self):"]
        lines += [f"        self.{f} = {small(rng)}" for f in fields]
        lines.append(f"o = {a}()")
        lines.append(f"o.__dict__['{word(rng)}'] = 1")
        cands = ["vars(o)", "sorted(o.__dict__)", "'cls_attr' in vars(o)", "o.cls_attr",
                 f"[k for k in vars({a}) if not k.startswith('__')]", f"len(vars(o))"]
    lines.append(result_of(probes(rng, cands, 2)))
    return lines


def gen_class_getitem(rng):
    cn = Names(rng, CLASS_NAMES)
    a = cn.take()
    kind = rng.choice(["custom", "generic"])
    if kind == "custom":
        lines = [f"class {a}:", "    def __class_getitem__(cls, item):",
                 "        return (cls.__name__, item)",
                 f"class Sub{a}({a}):", "    pass"]
        cands = [f"{a}[{small(rng)}]", f"{a}['{word(rng)}']", f"Sub{a}[{small(rng)}, 'x']",
                 f"{a}[int][0]", f"type({a}[1]).__name__"]
    else:
        lines = ["from typing import Generic, TypeVar", "T = TypeVar('T')",
                 f"class {a}(Generic[T]):", "    def __init__(self, v):", "        self.v = v",
                 "    def get(self):", "        return self.v"]
        v = small(rng)
        cands = [f"{a}[int]({v}).get()", f"{a}({v}).get()", f"isinstance({a}[str]('s'), {a})",
                 f"type({a}[int]({v})).__name__", f"{a}.__name__"]
    lines.append(result_of(probes(rng, cands, 2)))
    return lines


CONSTRUCTS = {
    "subclass_dict": gen_subclass_dict,
    "subclass_list_tuple": gen_subclass_list_tuple,
    "subclass_scalar": gen_subclass_scalar,
    "enum": gen_enum,
    "property": gen_property,
    "descriptor": gen_descriptor,
    "classmethod_staticmethod": gen_classmethod_staticmethod,
    "metaclass": gen_metaclass,
    "dataclass": gen_dataclass,
    "decorator": gen_decorator,
    "closure": gen_closure,
    "module": gen_module,
    "exception": gen_exception,
    "monkeypatch": gen_monkeypatch,
    "init_subclass": gen_init_subclass,
    "mro": gen_mro,
    "attribute_hooks": gen_attribute_hooks,
    "class_getitem": gen_class_getitem,
}

# The name the Rust test gives the program's module (`/virtual/prog.py`).
MODULE_NAME = "prog"


def run(source):
    """What CPython computes: `repr(r)`, or `raise:<type>` for an uncaught exception."""
    module = types.ModuleType(MODULE_NAME)
    sys.modules[MODULE_NAME] = module
    try:
        exec(compile(source, f"{MODULE_NAME}.py", "exec"), module.__dict__)
    except Exception as e:  # the program's own outcome
        return f"raise:{type(e).__name__}"
    finally:
        del sys.modules[MODULE_NAME]
    return repr(module.__dict__["r"])


def generate(seed, count):
    programs = []
    names = list(CONSTRUCTS)
    per_construct = {n: 0 for n in names}
    for i in range(count):
        construct = names[i % len(names)]
        rng = random.Random(f"{seed}:{i}")
        source = "\n".join(CONSTRUCTS[construct](rng)) + "\n"
        n = per_construct[construct]
        per_construct[construct] += 1
        programs.append({"id": f"{construct}_{n:03d}", "construct": construct,
                         "expected": run(source), "source": source})
    return programs


def render(programs, seed):
    body = ",\n".join(json.dumps(p, ensure_ascii=False) for p in programs)
    header = json.dumps({"seed": seed, "python": "%d.%d" % sys.version_info[:2]})
    return '{"meta": ' + header + ',\n"programs": [\n' + body + "\n]}\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=37)
    ap.add_argument("--count", type=int, default=2000)
    ap.add_argument("--check", action="store_true", help="exit 1 if the committed file differs")
    args = ap.parse_args()
    text = render(generate(args.seed, args.count), args.seed)
    if args.check:
        same = OUT.exists() and OUT.read_text() == text
        print("up to date" if same else f"{OUT} differs")
        sys.exit(0 if same else 1)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text)
    print(f"wrote {args.count} programs to {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
