//! The standard library as libraries use it, against the values real Python computes: each
//! expected string is what `print(rN)` shows for the snippet below under CPython 3, written
//! here by `scripts/expect/gen_stdlib_expectations.py`.

use std::path::Path;
use std::sync::Arc;

use crate::eval::test_support::py_repr;
use crate::eval::Interp;
use crate::semantic::Project;

const SNIPPET: &str = r#"from dataclasses import dataclass, field, replace, asdict, fields
from collections import defaultdict, deque
import copy, itertools, functools, re

@dataclass
class Cfg:
    depth: int = 2
    dims: tuple = (8, 16)
    tags: list = field(default_factory=list)
    total: int = field(default=0, init=False)

    def __post_init__(self):
        self.total = self.depth * 10

@dataclass
class Big(Cfg):
    name: str = "b"

c = Cfg(3)
c2 = replace(c, depth=5)
a = asdict(c2)
names = [f.name for f in fields(Big)]
b = Big(name="x")
r1 = (c.total, c2.total, c2.dims, a["depth"], a["total"], names, b.total, b.name)

registry = {}
def register(fn):
    registry[fn.__name__] = fn
    return fn

@register
def tiny(x=1):
    return x + 1

r2 = (list(registry.keys()), registry["tiny"](4), tiny.__module__ == __name__)

d = defaultdict(list)
d["a"].append(1)
d["a"].append(2)
d["b"].append(3)
q = deque([1])
q.appendleft(0)
r3 = (list(d.items()), list(q), len(d))

src = {"k": [1, 2]}
dc = copy.deepcopy(src)
dc["k"].append(3)
r4 = (src["k"], dc["k"])

r5 = (list(itertools.repeat(7, 3)), list(itertools.chain([1], (2, 3))), list(itertools.accumulate([1, 2, 3])),
      functools.reduce(lambda x, y: x * y, [1, 2, 3, 4]), list(itertools.product([0, 1], repeat=2)))

r6 = (re.split(r'(\d.*)', 'se0.25'), re.split(r'(\d.*)', 'k3'), 'a.b.c'.split('.', 1), 'x**'.strip('*'))
# transformers' tied-weight keys: a lookahead, and compiled patterns
tied = re.compile(r"^[A-Za-z0-9_\.]+(weight)|(bias)$")
names = ["bbox_embed.0.w", "bbox_embed.1.w", "bbox_embed.12.b", "class_embed.1.w"]
r21 = ([n for n in names if re.search(r"^bbox_embed.(?![0])\d+", n)], tied.match("lm_head.weight") is not None,
       tied.match("bbox_embed.(?![0])") is not None, tied.pattern, re.sub(r"(\w+)\.\1", "dup", "ab.ab.c"),
       re.compile(r"\d+").findall("a1b22"), re.fullmatch(r"(?i)layer\d", "LAYER3") is not None)
r22 = (list(zip("abcde", itertools.cycle([1, 2]))), list(zip(itertools.count(5, 2), "xy")),
       list(zip([], itertools.cycle([1]))), list(zip("ab", itertools.cycle([]))), dict(zip(["w", "b"], itertools.count())))

def gen(n):
    for i in range(n):
        yield i * 2
    yield from [100]

r7 = list(gen(3))
import os
from enum import Enum
class Fmt(str, Enum):
    NCHW = 'NCHW'
    NHWC = 'NHWC'
r9 = (Fmt('NHWC') is Fmt.NHWC, Fmt.NCHW == 'NCHW', Fmt.NCHW != Fmt.NHWC, Fmt.NHWC.value, Fmt.NHWC.name, Fmt(Fmt.NCHW) is Fmt.NCHW)
def pf(a=0, b=0, c=0):
    return a * 100 + b * 10 + c
p2 = functools.partial(functools.partial(pf, a=1), b=2)
r10 = (p2.func is pf, sorted(p2.keywords.items()), p2(c=3), isinstance(p2, functools.partial), isinstance(pf, functools.partial))
import math
r23 = (math.prod((1, 2, 2)), 16 * math.prod([1, 2, 2]), math.prod([]), math.prod((2, 0.5)), math.prod([3], start=2))
r8 = ("s{}".format(3), "{0}-{name}".format(1, name="b"), os.environ.get("STATICFX_SURELY_UNSET_VAR", "dflt"), "STATICFX_SURELY_UNSET_VAR" in os.environ)
"#;

#[test]
fn stdlib_snippet_matches_cpython() {
    let mut project = Project::new("/virtual");
    project.add_overlay("/virtual/snippet.py", Arc::from(SNIPPET), None);
    let file = project.load_path(Path::new("/virtual/snippet.py")).unwrap();
    let mut interp = Interp::new(Arc::new(project));
    let ns = interp.load_module(file).unwrap();
    let expected = [
        (
            "r1",
            r#"(30, 50, (8, 16), 5, 50, ['depth', 'dims', 'tags', 'total', 'name'], 20, 'x')"#,
        ),
        ("r2", r#"(['tiny'], 5, True)"#),
        ("r3", r#"([('a', [1, 2]), ('b', [3])], [0, 1], 2)"#),
        ("r4", r#"([1, 2], [1, 2, 3])"#),
        (
            "r5",
            r#"([7, 7, 7], [1, 2, 3], [1, 3, 6], 24, [(0, 0), (0, 1), (1, 0), (1, 1)])"#,
        ),
        (
            "r6",
            r#"(['se', '0.25', ''], ['k', '3', ''], ['a', 'b.c'], 'x')"#,
        ),
        ("r7", r#"[0, 2, 4, 100]"#),
        ("r9", r#"(True, True, True, 'NHWC', 'NHWC', True)"#),
        ("r10", r#"(True, [('a', 1), ('b', 2)], 123, True, False)"#),
        ("r8", r#"('s3', '1-b', 'dflt', False)"#),
        ("r23", r#"(4, 64, 1, 1.0, 6)"#),
        (
            "r21",
            r#"(['bbox_embed.1.w', 'bbox_embed.12.b'], True, False, '^[A-Za-z0-9_\\.]+(weight)|(bias)$', 'dup.c', ['1', '22'], True)"#,
        ),
        (
            "r22",
            r#"([('a', 1), ('b', 2), ('c', 1), ('d', 2), ('e', 1)], [(5, 'x'), (7, 'y')], [], [], {'w': 0, 'b': 1})"#,
        ),
    ];
    let mut failures = Vec::new();
    for (name, want) in expected {
        let got = ns.vars.borrow().get(name).map(py_repr).unwrap_or_default();
        if got != want {
            failures.push(format!("{name}: got {got}, CPython {want}"));
        }
    }
    let notes: Vec<String> = interp
        .diagnostics
        .iter()
        .map(|d| d.message.clone())
        .collect();
    assert!(
        failures.is_empty(),
        "{}\nnotes: {notes:?}",
        failures.join("\n")
    );
}

/// Version checks as libraries write them, against the `packaging` package itself.
#[test]
fn packaging_versions_match_cpython() {
    const PACKAGING_SNIPPET: &str = r#"from packaging import version
from packaging.version import Version, parse, InvalidVersion

vs = ["2.15.0", "2.5", "2.7.0.dev20250320", "2.5rc1", "2.5.0a1", "2.5.post1", "1!0.1", "2.15.0+cu132", "2.6.0b2.dev3"]
r11 = [(str(parse(v)), parse(v).base_version, parse(v).is_prerelease) for v in vs]
r12 = [[version.parse(a) >= version.parse(b) for b in vs] for a in vs]
r13 = (Version("2.5.0") == Version("2.5"), parse("2.15.0").major, parse("2.15.0").minor, parse("2.1").micro, parse(parse("2.7.0.dev1").base_version) >= parse("2.7"))
try:
    parse("not a version")
    r14 = "parsed"
except InvalidVersion:
    r14 = "InvalidVersion"
"#;
    let mut project = Project::new("/virtual");
    project.add_overlay("/virtual/versions.py", Arc::from(PACKAGING_SNIPPET), None);
    let file = project
        .load_path(Path::new("/virtual/versions.py"))
        .unwrap();
    let mut interp = Interp::new(Arc::new(project));
    let ns = interp.load_module(file).unwrap();
    let expected = [
        (
            "r11",
            r#"[('2.15.0', '2.15.0', False), ('2.5', '2.5', False), ('2.7.0.dev20250320', '2.7.0', True), ('2.5rc1', '2.5', True), ('2.5.0a1', '2.5.0', True), ('2.5.post1', '2.5', False), ('1!0.1', '1!0.1', False), ('2.15.0+cu132', '2.15.0', False), ('2.6.0b2.dev3', '2.6.0', True)]"#,
        ),
        (
            "r12",
            r#"[[True, True, True, True, True, True, False, False, True], [False, True, False, True, True, False, False, False, False], [False, True, True, True, True, True, False, False, True], [False, False, False, True, True, False, False, False, False], [False, False, False, False, True, False, False, False, False], [False, True, False, True, True, True, False, False, False], [True, True, True, True, True, True, True, True, True], [True, True, True, True, True, True, False, True, True], [False, True, False, True, True, True, False, False, True]]"#,
        ),
        ("r13", r#"(True, 2, 15, 0, True)"#),
        ("r14", r#"'InvalidVersion'"#),
    ];
    let mut failures = Vec::new();
    for (name, want) in expected {
        let got = ns.vars.borrow().get(name).map(py_repr).unwrap_or_default();
        if got != want {
            failures.push(format!("{name}: got {got}, CPython {want}"));
        }
    }
    let notes: Vec<String> = interp
        .diagnostics
        .iter()
        .map(|d| d.message.clone())
        .collect();
    assert!(
        failures.is_empty(),
        "{}\nnotes: {notes:?}",
        failures.join("\n")
    );
}

/// Constructor arithmetic on constant tensors (timm's RegNet widths and drop-path rates),
/// against torch 2.15: each expected string is what the snippet prints in real torch.
#[test]
fn constant_tensors_match_torch() {
    const TORCH_SNIPPET: &str = r#"import math
import torch
widths_cont = torch.arange(13, device='cpu', dtype=torch.float32) * 36.44 + 24
width_exps = torch.round(torch.log(widths_cont / 24) / math.log(2.49))
widths = torch.round((24 * torch.pow(2.49, width_exps)) / 8) * 8
num_stages, max_stage = len(torch.unique(widths)), int(width_exps.max().item()) + 1
t1 = (widths.int().tolist(), num_stages, max_stage)
t2 = [x.item() for x in torch.linspace(0, 0.1, 5)]
t3 = [x.tolist() for x in torch.linspace(0, 0.3, 4).split([1, 3])]
v, c = torch.unique(torch.tensor([3, 1, 3, 2]), return_counts=True)
t4 = (v.tolist(), c.tolist())
blocks = (4 ** torch.arange(3, device='cpu', dtype=torch.long)).flip(0)
t6 = (blocks.tolist(), torch.flip(torch.arange(4) * 2, [0]).tolist(), int(blocks[0].item()))
"#;
    let mut project = Project::new("/virtual");
    project.add_overlay("/virtual/consts.py", Arc::from(TORCH_SNIPPET), None);
    let file = project.load_path(Path::new("/virtual/consts.py")).unwrap();
    let mut interp = Interp::new(Arc::new(project));
    let ns = interp.load_module(file).unwrap();
    let expected = [
        ("t1", "([24, 56, 152, 152, 152, 152, 368, 368, 368, 368, 368, 368, 368], 4, 4)"),
        ("t2", "[0.0, 0.02500000037252903, 0.05000000074505806, 0.07500000298023224, 0.10000000149011612]"),
        ("t3", "[[0.0], [0.10000000149011612, 0.20000001788139343, 0.30000001192092896]]"),
        ("t4", "([1, 2, 3], [1, 1, 2])"),
        ("t6", r#"([16, 4, 1], [6, 4, 2, 0], 16)"#),
    ];
    let mut failures = Vec::new();
    for (name, want) in expected {
        let got = ns.vars.borrow().get(name).map(py_repr).unwrap_or_default();
        if got != want {
            failures.push(format!("{name}: got {got}, torch {want}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// numpy on Python numbers, as constructors use it for constants (open_clip's default
/// `init_logit_scale = np.log(1 / 0.07)`): a float ufunc's `np.float64` is a `float` with the
/// value numpy prints, a domain error nan or -inf (numpy warns, `math` raises), and numpy's
/// constants are floats; `str` of such a float is Python's. Each expected string is what
/// numpy 2 prints for the snippet (names `nN`, which `gen_stdlib_expectations.py` leaves alone:
/// its `tN` are the torch snippet's).
#[test]
fn numpy_on_python_numbers_matches_numpy() {
    const NUMPY_SNIPPET: &str = r#"import numpy as np
n1 = (float(np.log(1 / 0.07)), float(np.sqrt(2)), float(np.exp(1)), float(np.log2(8)), float(np.log10(1000)))
n2 = (isinstance(np.log(2.0), float), float(np.pi), float(np.e), np.inf > 1e308)
n3 = (float(np.log(0.0)), str(float(np.sqrt(-1.0))))
n4 = (str(1e20), str(1.5e-07), str(float('-inf')))
"#;
    let mut project = Project::new("/virtual");
    project.add_overlay("/virtual/np_consts.py", Arc::from(NUMPY_SNIPPET), None);
    let file = project
        .load_path(Path::new("/virtual/np_consts.py"))
        .unwrap();
    let mut interp = Interp::new(Arc::new(project));
    let ns = interp.load_module(file).unwrap();
    let expected = [
        (
            "n1",
            "(2.659260036932778, 1.4142135623730951, 2.718281828459045, 3.0, 3.0)",
        ),
        ("n2", "(True, 3.141592653589793, 2.718281828459045, True)"),
        ("n3", "(-inf, 'nan')"),
        // `str` of a float is Python's repr, not Rust's formatting (`NaN`, `1e20`)
        ("n4", "('1e+20', '1.5e-07', '-inf')"),
    ];
    let mut failures = Vec::new();
    for (name, want) in expected {
        let got = ns.vars.borrow().get(name).map(py_repr).unwrap_or_default();
        if got != want {
            failures.push(format!("{name}: got {got}, numpy {want}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// What timm's constructors ask of torch.nn layers: which have `reset_parameters` (a subclass
/// of one included), and calling it leaves the parameters' shapes; the output shape of a
/// backbone run on `torch.zeros(...)` (hybrid ViTs size their patch embedding so). Each
/// expected string is what torch 2.15 prints, written by
/// `scripts/expect/gen_stdlib_expectations.py`.
#[test]
fn layer_methods_match_torch() {
    const LAYERS_SNIPPET: &str = r#"import torch
from torch import nn


class LayerNorm2d(nn.LayerNorm):
    def forward(self, x):
        return x


mods = [nn.Linear(2, 3), nn.ReLU(), LayerNorm2d(4), nn.Conv2d(1, 2, 3), nn.Dropout(), nn.Sequential()]
for m in mods:
    if hasattr(m, "reset_parameters"):
        m.reset_parameters()
t5 = ([hasattr(m, "reset_parameters") for m in mods], mods[0].weight.shape[0], mods[2].normalized_shape)


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, stride=2, padding=1)

    def forward(self, x):
        return [x, self.conv(x)]


class Embed(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = Backbone()
        with torch.no_grad():
            o = self.backbone(torch.zeros(1, 3, 32, 32))[-1]
        self.feature_size = o.shape[-2:]
        self.proj = nn.Linear(o.shape[1], 4)


e = Embed()
t7 = (tuple(e.feature_size), e.proj.in_features, e.proj.weight.shape[1])
"#;
    let (mut interp, file) = crate::eval::test_support::interp_over("layers", LAYERS_SNIPPET);
    let ns = interp.load_module(file).unwrap();
    let expected = [
        (
            "t5",
            r#"([True, False, True, True, False, False], 3, (4,))"#,
        ),
        ("t7", r#"((16, 16), 8, 8)"#),
    ];
    for (name, want) in expected {
        let got = ns.vars.borrow().get(name).map(py_repr).unwrap_or_default();
        let notes = crate::eval::test_support::notes(&interp);
        assert_eq!(got, want, "{name}; notes: {notes:?}");
    }
}

/// Python's object model as libraries use it (`__init_subclass__`, metaclasses, property
/// setters, `__getattr__`/`__setattr__`, descriptors, `inspect.signature`, `namedtuple`,
/// runtime `typing`, `importlib.import_module`, `lru_cache`/`cached_property`, `contextlib`):
/// each expected string is what CPython 3 prints for `repr(mN)`, written into the table by
/// `scripts/expect/gen_stdlib_expectations.py`.
const MACHINERY: &str = r#"import functools, inspect, contextlib, importlib, typing
from collections import namedtuple
from typing import Optional, List

class Base:
    registry = []
    def __init_subclass__(cls, tag="none", **kwargs):
        super().__init_subclass__(**kwargs)
        Base.registry.append((cls.__name__, tag))
class A(Base, tag="a"):
    pass
class B(A):
    pass
m1 = (Base.registry,)

class Meta(type):
    def __new__(mcs, name, bases, ns):
        ns["made_by"] = "Meta"
        return super().__new__(mcs, name, bases, ns)
class WithMeta(metaclass=Meta):
    pass
m2 = (WithMeta.made_by, WithMeta().made_by)

class P:
    def __init__(self):
        self._w = 1
    @property
    def w(self):
        return self._w * 10
    @w.setter
    def w(self, v):
        self._w = v + 1
p = P()
p.w = 4
m3 = (p.w, p._w)

class G:
    def __init__(self):
        self.real = 1
    def __getattr__(self, name):
        return "dyn_" + name
class S:
    def __init__(self):
        object.__setattr__(self, "log", [])
    def __setattr__(self, name, value):
        self.log.append(name)
        object.__setattr__(self, name, value * 2)
g = G()
s = S()
s.a = 3
m4 = (g.real, g.missing, s.a, s.log)

class Desc:
    def __set_name__(self, owner, name):
        self.name = name
    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return obj.base + 100
class HasDesc:
    d = Desc()
    def __init__(self):
        self.base = 5
m5 = (HasDesc().d, HasDesc.d.name)

def fn(a, b=2, *args, c=3, **kw):
    return a
sig = inspect.signature(fn)
params = list(sig.parameters)
kinds = [str(p.kind) for p in sig.parameters.values()]
m6 = (params, sig.parameters["b"].default, sig.parameters["a"].default is inspect.Parameter.empty,
      [k for k in {"a": 1, "zz": 2, "c": 3} if k in sig.parameters], kinds)

Pt = namedtuple("Pt", ["x", "y"])
pt = Pt(1, y=2)
Pt2 = namedtuple("Pt2", "u v", defaults=(9,))
m7 = (pt.x + pt.y, pt[1], tuple(pt), pt._replace(x=5).x, Pt2(1).v, Pt._fields)

m8 = (typing.Optional[int] == Optional[int], typing.get_origin(List[int]) is list,
      typing.get_args(Optional[int]) == (int, type(None)))

mod = importlib.import_module("math")
m9 = (mod.floor(2.5),)

calls = []
@functools.lru_cache(maxsize=None)
def sq(n):
    calls.append(n)
    return n * n
class CP:
    def __init__(self):
        self.n = 0
    @functools.cached_property
    def val(self):
        self.n += 1
        return 42
cp = CP()
m10 = (sq(3), sq(3), calls, cp.val, cp.val, cp.n)

@contextlib.contextmanager
def ctx(log):
    log.append("enter")
    yield 7
    log.append("exit")
log = []
with ctx(log) as v:
    log.append(v)
with contextlib.suppress(KeyError):
    {}["x"]
    log.append("unreached")
with contextlib.nullcontext(5) as n5:
    log.append(n5)
m11 = (log,)

class Registry(type):
    classes = []
    @classmethod
    def __prepare__(mcs, name, bases, **kw):
        return {"prepared": name.lower()}
    def __new__(mcs, name, bases, ns, **kw):
        cls = super().__new__(mcs, name, bases, ns)
        cls.flavour = kw.get("flavour", "plain")
        return cls
    def __init__(cls, name, bases, ns, **kw):
        super().__init__(name, bases, ns)
        Registry.classes.append(name)
    def __call__(cls, *args, **kwargs):
        inst = super().__call__(*args, **kwargs)
        inst.via_meta = True
        return inst
    def describe(cls):
        return cls.__name__ + ":" + cls.flavour
class Layer(metaclass=Registry, flavour="conv"):
    def __init__(self, w):
        self.w = w
class SubLayer(Layer):
    pass
layer = SubLayer(3)
Dyn = type("Dyn", (Layer,), {"extra": 1})
Plain = type("Plain", (), {"k": 2})
m12 = (Registry.classes, Layer.prepared, SubLayer.prepared, Layer.flavour, SubLayer.flavour, layer.w,
       layer.via_meta, Layer.describe(), type(Layer) is Registry, isinstance(SubLayer, Registry),
       Dyn.extra, Dyn.flavour, Dyn.__name__, Plain().k, type(Plain) is type)

@contextlib.contextmanager
def guard(log, name):
    log.append("open " + name)
    try:
        yield name.upper()
    except ValueError:
        log.append("caught in " + name)
    finally:
        log.append("close " + name)
log2 = []
with guard(log2, "a") as x, guard(log2, "b") as y:
    log2.append(x + y)
with guard(log2, "c"):
    raise ValueError("boom")
def early(log):
    with guard(log, "d"):
        return "ret"
    log.append("unreached")
log2.append(early(log2))
try:
    with guard(log2, "e"):
        raise KeyError("k")
except KeyError:
    log2.append("outer caught")
m13 = (log2,)

class Tracker:
    def __init__(self, log, swallow):
        self.log = log
        self.swallow = swallow
    def __enter__(self):
        self.log.append("in")
        return self
    def __exit__(self, exc_type, exc, tb):
        self.log.append("out")
        return self.swallow
log3 = []
with Tracker(log3, True) as t:
    log3.append(t.swallow)
    raise RuntimeError("x")
with contextlib.ExitStack() as stack:
    t1 = stack.enter_context(Tracker(log3, False))
    stack.callback(log3.append, "cb")
    log3.append(t1.swallow)
with contextlib.suppress(LookupError):
    [][1]
    log3.append("unreached")
try:
    with contextlib.suppress(KeyError):
        raise ValueError("v")
except ValueError:
    log3.append("not suppressed")
m14 = (log3,)

@functools.lru_cache(maxsize=None)
def make(n):
    return [n]
a1 = make(2)
a2 = make(2)
make.cache_clear()
a3 = make(2)
class K:
    @functools.lru_cache()
    def m(self, x):
        return [x]
k = K()
try:
    make([1])
    unhashable = "no error"
except TypeError:
    unhashable = "TypeError"
twice_calls = []
@functools.cache
def twice(x):
    twice_calls.append(x)
    return x * 2
m15 = (a1 is a2, a1 is a3, a1 == a3, make.__wrapped__(2) is a1, k.m(1) is k.m(1), k.m(1) is k.m(2),
       unhashable, twice(4), twice(4), twice(5), twice_calls)

from typing import NamedTuple
class Cov(NamedTuple):
    name: str
    count: int = 0
    def label(self):
        return self.name + str(self.count)
cv = Cov("a")
cv2 = Cov("b", count=3)
first, second = cv2
try:
    cv.count = 5
    frozen = "set"
except AttributeError:
    frozen = "AttributeError"
class Pt3(namedtuple("Pt3", "a b")):
    def total(self):
        return self.a + self.b
m16 = (cv.count, cv2.label(), len(cv2), first, second, Cov._fields, Cov._field_defaults, cv2._asdict(),
       isinstance(cv2, tuple), cv2 == ("b", 3), Cov._make(["z", 1]).count, cv2[-1], list(cv2[0:1]),
       frozen, Pt3(1, 2).total(), Pt3._fields)

from typing import Union, Literal, Dict, Callable, Mapping
Mode = Literal["a", "b"]
m17 = (typing.get_args(Mode), typing.get_origin(Mode) is Literal,
       typing.get_args(Union[int, Union[str, None], int]) == (int, str, type(None)),
       Union[int] is int, Optional[Optional[int]] == Optional[int], typing.get_origin(Dict[str, int]) is dict,
       typing.get_args(Dict[str, int]) == (str, int), typing.get_origin(int) is None, typing.get_args(int),
       typing.get_args(int | None) == (int, type(None)), typing.TYPE_CHECKING, isinstance(None, type(None)),
       typing.get_args(Callable[[int], str])[1] is str, Optional[int] != Optional[str])
class Table(Mapping[str, int]):
    def __init__(self):
        self.d = {"k": 1}
    def __getitem__(self, key):
        return self.d[key]
    def __iter__(self):
        return iter(self.d)
    def __len__(self):
        return len(self.d)
m18 = (Table()["k"], list(Table().keys()), Table().get("zz", 5))
class Renamed:
    def __init__(self):
        self.encoder_width = 4
        self.depth = 2
        self.log = []
    def __delattr__(self, name):
        self.log.append(name)
        object.__delattr__(self, name)
rn = Renamed()
width = getattr(rn, "encoder_width")
delattr(rn, "encoder_width")
setattr(rn, "width", width)
del rn.depth
try:
    del rn.depth
    twice = "deleted twice"
except AttributeError:
    twice = "AttributeError"
table = {"a": 1, "b": 2, "c": 3}
del table["b"]
items = [1, 2, 3, 4]
del items[0], items[-1]
m19 = (hasattr(rn, "encoder_width"), rn.width, hasattr(rn, "depth"), rn.log, twice, table, items)
decorated = []
@contextlib.contextmanager
def tagged(name):
    decorated.append("enter " + name)
    yield
    decorated.append("exit " + name)
@tagged("w")
def work(x):
    decorated.append("work")
    return x * 2
m20 = (work(3), work(4), decorated)
# diffusers' FrozenDict: a dict subclass without __iter__ iterates its keys, and is a mapping
# to dict() and **.
from collections import OrderedDict
class Frozen(OrderedDict):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for key, value in self.items():
            setattr(self, key, value)
        self.__frozen = True
    def __setattr__(self, name, value):
        if hasattr(self, "__frozen") and self.__frozen:
            raise Exception("frozen")
        super().__setattr__(name, value)
    def __setitem__(self, name, value):
        if hasattr(self, "__frozen") and self.__frozen:
            raise Exception("frozen")
        super().__setitem__(name, value)
fz = Frozen({"a": 1, "b": 2})
def spread(**kw):
    return sorted(kw.items())
m21 = ([k for k in fz], list(fz), len(fz), list(fz.items()), dict(fz), spread(**fz), fz.b, "a" in fz,
       {**fz, "c": 3}, sorted(fz), list(zip(fz, "xy")))
# diffusers' `@register_to_config`: a wrapper made with functools.wraps has the signature of
# the function it wraps, as inspect.signature follows __wrapped__.
def config_init(init):
    @functools.wraps(init)
    def inner_init(self, *args, **kwargs):
        init(self, *args, **kwargs)
    return inner_init
class Cfg:
    @config_init
    def __init__(self, width, depth=2):
        self.width = width
sig = inspect.signature(Cfg.__init__)
m22 = (list(sig.parameters), sig.parameters["depth"].default, Cfg.__init__.__name__, Cfg(3).width)

def build_bias(x, heads, dtype):
    return (x, heads, dtype)

class UsesModuleHelper:
    scale = 10
    def build_bias(self, x, heads, dtype):
        return build_bias(x, heads, dtype)

def make_local_class():
    local_value = 7
    class Inner:
        seen = local_value
        def get(self):
            return local_value
    return Inner

m23 = (UsesModuleHelper().build_bias(1, 2, "f32"), make_local_class().seen, make_local_class()().get())

# transformers' `@staticmethod` over `@compile_compatible_method_lru_cache(...)`: the binding
# decorator applies to the wrapper the inner decorator returned, which then takes no `self`.
def wrapping(*deco_args):
    def decorator(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            return func(*args, **kwargs)
        return wrapper
    return decorator
def area(height, width, scale=1):
    return height * width * scale
class Embed:
    scale = 3
    @staticmethod
    @wrapping(32)
    def cached_area(*args, **kwargs):
        return area(*args, **kwargs)
    @classmethod
    @wrapping(32)
    def scaled_area(cls, height, width):
        return area(height, width, cls.scale)
    def use(self):
        return (self.cached_area(height=2, width=5), self.scaled_area(2, 5), Embed.cached_area(1, 4))
m24 = Embed().use()
"#;

#[test]
fn object_model_matches_cpython() {
    let mut project = Project::new("/virtual");
    project.add_overlay("/virtual/machinery.py", Arc::from(MACHINERY), None);
    let file = project
        .load_path(Path::new("/virtual/machinery.py"))
        .unwrap();
    let mut interp = Interp::new(Arc::new(project));
    let ns = interp.load_module(file).unwrap();
    let expected = [
        ("m1", r#"([('A', 'a'), ('B', 'none')],)"#),
        ("m2", r#"('Meta', 'Meta')"#),
        ("m3", r#"(50, 5)"#),
        ("m4", r#"(1, 'dyn_missing', 6, ['a'])"#),
        ("m5", r#"(105, 'd')"#),
        (
            "m6",
            r#"(['a', 'b', 'args', 'c', 'kw'], 2, True, ['a', 'c'], ['POSITIONAL_OR_KEYWORD', 'POSITIONAL_OR_KEYWORD', 'VAR_POSITIONAL', 'KEYWORD_ONLY', 'VAR_KEYWORD'])"#,
        ),
        ("m7", r#"(3, 2, (1, 2), 5, 9, ('x', 'y'))"#),
        ("m8", r#"(True, True, True)"#),
        ("m9", r#"(2,)"#),
        ("m10", r#"(9, 9, [3], 42, 42, 1)"#),
        ("m11", r#"(['enter', 7, 'exit', 5],)"#),
        (
            "m12",
            r#"(['Layer', 'SubLayer', 'Dyn'], 'layer', 'sublayer', 'conv', 'plain', 3, True, 'Layer:conv', True, True, 1, 'plain', 'Dyn', 2, True)"#,
        ),
        (
            "m13",
            r#"(['open a', 'open b', 'AB', 'close b', 'close a', 'open c', 'caught in c', 'close c', 'open d', 'close d', 'ret', 'open e', 'close e', 'outer caught'],)"#,
        ),
        (
            "m14",
            r#"(['in', True, 'out', 'in', False, 'cb', 'out', 'not suppressed'],)"#,
        ),
        (
            "m15",
            r#"(True, False, True, False, True, False, 'TypeError', 8, 8, 10, [4, 5])"#,
        ),
        (
            "m16",
            r#"(0, 'b3', 2, 'b', 3, ('name', 'count'), {'count': 0}, {'name': 'b', 'count': 3}, True, True, 1, 3, ['b'], 'AttributeError', 3, ('a', 'b'))"#,
        ),
        (
            "m17",
            r#"(('a', 'b'), True, True, True, True, True, True, True, (), True, False, True, True, True)"#,
        ),
        ("m18", r#"(1, ['k'], 5)"#),
        (
            "m19",
            r#"(False, 4, False, ['encoder_width', 'depth', 'depth'], 'AttributeError', {'a': 1, 'c': 3}, [2, 3])"#,
        ),
        (
            "m20",
            r#"(6, 8, ['enter w', 'work', 'exit w', 'enter w', 'work', 'exit w'])"#,
        ),
        (
            "m21",
            r#"(['a', 'b'], ['a', 'b'], 2, [('a', 1), ('b', 2)], {'a': 1, 'b': 2}, [('a', 1), ('b', 2)], 2, True, {'a': 1, 'b': 2, 'c': 3}, ['a', 'b'], [('a', 'x'), ('b', 'y')])"#,
        ),
        ("m22", r#"(['self', 'width', 'depth'], 2, '__init__', 3)"#),
        ("m23", r#"((1, 2, 'f32'), 7, 7)"#),
        ("m24", r#"(10, 30, 4)"#),
    ];
    let mut failures = Vec::new();
    for (name, want) in expected {
        let got = ns.vars.borrow().get(name).map(py_repr).unwrap_or_default();
        let modelled = !OBJECT_MODEL_NOT_YET.contains(&name);
        if (got == want) != modelled {
            failures.push(if modelled {
                format!("{name}: got {got}, CPython {want}")
            } else {
                format!("{name} now matches CPython: take it off OBJECT_MODEL_NOT_YET")
            });
        }
    }
    let notes: Vec<String> = interp
        .diagnostics
        .iter()
        .map(|d| d.message.clone())
        .collect();
    assert!(
        failures.is_empty(),
        "{}\nnotes: {notes:?}",
        failures.join("\n")
    );
}

/// Snippet names whose values still differ from CPython's, for what the evaluator does not
/// model yet (the test fails when one starts to match); none now.
const OBJECT_MODEL_NOT_YET: &[&str] = &[];
