#!/usr/bin/env python3
"""Generate catalog/torch_catalog.json from the installed torch package.

Run from the repository root:

    "$VENV"/bin/python scripts/catalog/gen_catalog.py

The catalogue describes
  * every nn.Module subclass exported by torch.nn ("modules"): constructor
    signature, instance attributes, parameters, buffers and submodules, with
    shapes / conditions written as small Python expressions over the
    constructor arguments;
  * the public functions of torch, torch.nn.functional, torch.fft,
    torch.linalg, torch.special, the public methods of torch.Tensor, the
    operator functions and the Python builtins models use ("functions"),
    keyed by canonical dotted path, plus "aliases" for other spellings of the
    same object.

Nothing in the module section is trusted: every module is instantiated with
the sample argument sets below, every expression is evaluated against the
bound arguments and compared with the real module (parameter / buffer names,
order, shapes and dtypes, attribute values, submodule names and types).  Any
mismatch aborts the script with a non-zero exit status.

See scripts/catalog/README.md for the format of the output.
"""

from __future__ import annotations

import ast
import builtins
import collections
import copy
import inspect
import json
import math
import operator
import os
import re
import sys
import types
import typing
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(REPO, "catalog", "torch_catalog.json")
README = os.path.join(HERE, "README.md")

warnings.simplefilter("ignore")
torch.manual_seed(0)


class CatalogError(Exception):
    pass


def fail(msg):
    raise CatalogError(msg)


# ---------------------------------------------------------------------------
# Expression language
# ---------------------------------------------------------------------------
# Expressions in the catalogue are Python expressions restricted to the
# grammar checked by `check_expr`.  They may call only these helpers.


def _ntuple_impl(n, x):
    # Same semantics as torch.nn.modules.utils._ntuple: any iterable is turned
    # into a tuple, anything else is repeated n times.
    if isinstance(x, collections.abc.Iterable):
        return tuple(x)
    return tuple(x for _ in range(n))


def _tuple_impl(x):
    # int -> (int,), any other sequence -> tuple(sequence)
    if isinstance(x, int):
        return (x,)
    return tuple(x)


def _prod_impl(x):
    r = 1
    for v in x:
        r *= v
    return r


UNINITIALIZED = object()

HELPERS = {
    "_uninitialized": lambda: UNINITIALIZED,
    "_shape": lambda x: tuple(x.shape),
    "_single": lambda x: _ntuple_impl(1, x),
    "_pair": lambda x: _ntuple_impl(2, x),
    "_triple": lambda x: _ntuple_impl(3, x),
    "_quadruple": lambda x: _ntuple_impl(4, x),
    "_ntuple": _ntuple_impl,
    "_tuple": _tuple_impl,
    "tuple": tuple,
    "list": list,
    "len": len,
    "float": float,
    "_prod": _prod_impl,
    "_is_tuple": lambda x: isinstance(x, tuple),
    "_map_float": lambda x: tuple(float(v) for v in x),
    "_is_module": lambda x: isinstance(x, nn.Module),
}

# Documentation of the helpers, written into the catalogue.
HELPER_DOCS = {
    "_uninitialized": "_uninitialized(): the whole shape is unknown until the first forward (lazy modules: "
                      "UninitializedParameter / UninitializedBuffer)",
    "_shape": "_shape(t): the shape (tuple) of a tensor passed as a constructor argument",
    "_single": "_ntuple(1, x)",
    "_pair": "_ntuple(2, x)",
    "_triple": "_ntuple(3, x)",
    "_quadruple": "_ntuple(4, x)",
    "_ntuple": "_ntuple(n, x): tuple(x) if x is a tuple/list, else (x,) * n (torch.nn.modules.utils._ntuple)",
    "_tuple": "int -> (x,), sequence -> tuple(x)",
    "tuple": "Python tuple(x)",
    "list": "Python list(x)",
    "len": "Python len(x)",
    "float": "Python float(x)",
    "_prod": "product of the elements of a sequence (1 for an empty one)",
    "_is_tuple": "True iff x is a tuple",
    "_map_float": "tuple(float(v) for v in x)",
    "_is_module": "True iff x is an nn.Module instance (an object, not a plain function)",
}

_BINOPS = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod)
_CMPOPS = (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Is, ast.IsNot)
USED_HELPERS = set()


def check_expr(src, names, where):
    """Validate that `src` uses only the restricted grammar; return the AST."""
    try:
        tree = ast.parse(src, mode="eval")
    except SyntaxError as e:
        fail(f"{where}: syntax error in {src!r}: {e}")

    def visit(node):
        if isinstance(node, ast.Expression):
            return visit(node.body)
        if isinstance(node, ast.Name):
            if node.id in HELPERS:
                fail(f"{where}: helper {node.id} used as a value in {src!r}")
            if node.id not in names:
                fail(f"{where}: unknown name {node.id!r} in {src!r} (known: {sorted(names)})")
            return
        if isinstance(node, ast.Constant):
            if not isinstance(node.value, (int, float, str, bool, type(None))):
                fail(f"{where}: bad constant in {src!r}")
            return
        if isinstance(node, ast.Tuple):
            for e in node.elts:
                visit(e)
            return
        if isinstance(node, ast.BinOp):
            if not isinstance(node.op, _BINOPS):
                fail(f"{where}: operator {type(node.op).__name__} not allowed in {src!r}")
            visit(node.left)
            visit(node.right)
            return
        if isinstance(node, ast.UnaryOp):
            if not isinstance(node.op, (ast.Not, ast.USub)):
                fail(f"{where}: unary operator not allowed in {src!r}")
            visit(node.operand)
            return
        if isinstance(node, ast.BoolOp):
            for v in node.values:
                visit(v)
            return
        if isinstance(node, ast.Compare):
            visit(node.left)
            for op, right in zip(node.ops, node.comparators):
                if not isinstance(op, _CMPOPS):
                    fail(f"{where}: comparison {type(op).__name__} not allowed in {src!r}")
                if isinstance(op, (ast.Is, ast.IsNot)) and not (
                    isinstance(right, ast.Constant) and right.value is None
                ):
                    fail(f"{where}: 'is' only with None in {src!r}")
                visit(right)
            return
        if isinstance(node, ast.IfExp):
            visit(node.test)
            visit(node.body)
            visit(node.orelse)
            return
        if isinstance(node, ast.Subscript):
            visit(node.value)
            idx = node.slice
            if isinstance(idx, ast.UnaryOp) and isinstance(idx.op, ast.USub):
                idx = idx.operand
            if not (isinstance(idx, ast.Constant) and type(idx.value) is int):
                fail(f"{where}: only integer-literal indexing allowed in {src!r}")
            return
        if isinstance(node, ast.Call):
            if not (isinstance(node.func, ast.Name) and node.func.id in HELPERS):
                fail(f"{where}: call not allowed in {src!r}")
            if node.keywords:
                fail(f"{where}: keyword arguments not allowed in {src!r}")
            USED_HELPERS.add(node.func.id)
            for a in node.args:
                visit(a)
            return
        fail(f"{where}: construct {type(node).__name__} not allowed in {src!r}")

    visit(tree)
    return tree


def ev(src, env, where):
    check_expr(src, set(env), where)
    try:
        return eval(compile(src, where, "eval"), {"__builtins__": {}, **HELPERS}, dict(env))
    except Exception as e:  # noqa: BLE001
        fail(f"{where}: evaluating {src!r} failed: {e!r}")


def ev_shape(shape, env, where):
    """Evaluate a shape; None means 'uninitialized (lazy)'."""
    if isinstance(shape, str):
        v = ev(shape, env, where)
        return None if v is UNINITIALIZED else tuple(v)
    dims = []
    for d in shape:
        if d.startswith("*"):
            dims.extend(ev(d[1:], env, where))
        else:
            dims.append(ev(d, env, where))
    return tuple(dims)


def strict_equal(a, b):
    """Equality that also requires equal types (1 != 1.0 != True, (1,) != [1])."""
    if type(a) is not type(b):
        return False
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(strict_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(strict_equal(a[k], b[k]) for k in a)
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    if isinstance(a, (int, float, str, bool, type(None))):
        return a == b
    return a is b or a == b


# ---------------------------------------------------------------------------
# JSON encoding of signatures
# ---------------------------------------------------------------------------

KIND_NAMES = {
    inspect.Parameter.POSITIONAL_ONLY: "positional_only",
    inspect.Parameter.POSITIONAL_OR_KEYWORD: "positional_or_keyword",
    inspect.Parameter.VAR_POSITIONAL: "var_positional",
    inspect.Parameter.KEYWORD_ONLY: "keyword_only",
    inspect.Parameter.VAR_KEYWORD: "var_keyword",
}

_ADDR = re.compile(r" at 0x[0-9a-fA-F]+")


def stable_repr(v):
    if isinstance(v, (types.FunctionType, types.BuiltinFunctionType, type)):
        mod = getattr(v, "__module__", None) or ""
        qual = getattr(v, "__qualname__", None) or getattr(v, "__name__", repr(v))
        return f"{mod}.{qual}" if mod else qual
    if isinstance(v, types.ModuleType):
        # repr(module) names the file it was loaded from: a path of the generating machine.
        return f"<module '{v.__name__}'>"
    return _ADDR.sub("", repr(v))


def encode_default(v):
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        if math.isfinite(v):
            return v
        return {"repr": repr(v)}
    if isinstance(v, (tuple, list)) and type(v) in (tuple, list):
        return [encode_default(x) for x in v]
    return {"repr": stable_repr(v)}


def encode_param(p):
    has_default = p.default is not inspect.Parameter.empty
    return {
        "name": p.name,
        "kind": KIND_NAMES[p.kind],
        "default": encode_default(p.default) if has_default else None,
        "has_default": has_default,
    }


def encode_signature(sig, drop_first=False):
    params = list(sig.parameters.values())
    if drop_first:
        params = params[1:]
    return [encode_param(p) for p in params]


# ---------------------------------------------------------------------------
# Module specifications
# ---------------------------------------------------------------------------
# Each spec: samples (list of kwargs dicts), attributes {name: expr},
# parameters [(name, shape, when)], buffers [(name, shape, when, dtype)],
# submodules [dict], skip_attrs {name: reason} for real instance attributes
# that are deliberately not catalogued (not expressible / internal).

SPECS = {}
CONTAINERS = ["Module", "Container", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"]
NOTES = {}  # module -> note about limits of the description


def spec(name, samples, attrs=None, params=(), buffers=(), subs=(), skip=None, params_from=None, note=None):
    if name in SPECS:
        fail(f"duplicate spec {name}")
    SPECS[name] = dict(
        samples=samples,
        attrs=attrs or {},
        params=list(params),
        buffers=list(buffers),
        subs=list(subs),
        skip=skip or {},
        params_from=params_from,
    )
    if note:
        NOTES[name] = note


def sub(name, module, args=None, when=None, source=None, note=None):
    # module "Module" + source: the child is the argument object itself (any
    # nn.Module subclass); args omitted: not expressible (see note)
    d = {"name": name, "module": module, "when": when}
    if args is not None:
        d["args"] = args
    if source is not None:
        d["source"] = source
    if note is not None:
        d["note"] = note
    return d


# -- linear -----------------------------------------------------------------
spec("Identity", [{}, {"a": 1, "b": 2}])
for _n in ["Linear", "NonDynamicallyQuantizableLinear"]:
    spec(
        _n,
        [dict(in_features=3, out_features=4), dict(in_features=5, out_features=2, bias=False)],
        attrs={"in_features": "in_features", "out_features": "out_features"},
        params=[("weight", ["out_features", "in_features"], None), ("bias", ["out_features"], "bias")],
    )
spec(
    "Bilinear",
    [dict(in1_features=3, in2_features=4, out_features=5), dict(in1_features=2, in2_features=6, out_features=3, bias=False)],
    attrs={"in1_features": "in1_features", "in2_features": "in2_features", "out_features": "out_features"},
    params=[("weight", ["out_features", "in1_features", "in2_features"], None), ("bias", ["out_features"], "bias")],
)
_LAZY_SKIP = {
    "_load_hook": "hook handle of lazy modules (internal)",
    "_initialize_hook": "hook handle of lazy modules (internal)",
}
spec(
    "LazyLinear",
    [dict(out_features=4), dict(out_features=2, bias=False)],
    attrs={"in_features": "0", "out_features": "out_features"},
    params=[("weight", "_uninitialized()", None), ("bias", "_uninitialized()", "bias")],
    skip=_LAZY_SKIP,
)

# -- convolutions -------------------------------------------------------------
_NT = {1: "_single", 2: "_pair", 3: "_triple"}
_CONV_SKIP = {
    "_reversed_padding_repeated_twice": "internal padding for non-'zeros' padding_mode (F.pad order), derivable from padding",
}
for _d in (1, 2, 3):
    t = _NT[_d]
    base_samples = [
        dict(in_channels=4, out_channels=6, kernel_size=3),
        dict(in_channels=4, out_channels=8, kernel_size=(3, 1, 2)[:_d] if _d > 1 else 2, stride=2, padding=1, dilation=2, groups=2, bias=False, padding_mode="reflect"),
        dict(in_channels=6, out_channels=6, kernel_size=3, padding="same", groups=3, dilation=(2,) * _d),
        dict(in_channels=2, out_channels=4, kernel_size=3, padding="valid", padding_mode="circular"),
    ]
    spec(
        f"Conv{_d}d",
        base_samples,
        attrs={
            "in_channels": "in_channels",
            "out_channels": "out_channels",
            "kernel_size": f"{t}(kernel_size)",
            "stride": f"{t}(stride)",
            "padding": f'padding if padding == "same" or padding == "valid" else {t}(padding)',
            "dilation": f"{t}(dilation)",
            "transposed": "False",
            "output_padding": f"{t}(0)",
            "groups": "groups",
            "padding_mode": "padding_mode",
        },
        params=[
            ("weight", ["out_channels", "in_channels // groups", f"*{t}(kernel_size)"], None),
            ("bias", ["out_channels"], "bias"),
        ],
        skip=_CONV_SKIP,
    )
    spec(
        f"ConvTranspose{_d}d",
        [
            dict(in_channels=4, out_channels=6, kernel_size=3),
            dict(in_channels=4, out_channels=8, kernel_size=(3, 1, 2)[:_d] if _d > 1 else 2, stride=2, padding=1, output_padding=1, groups=2, bias=False, dilation=2),
        ],
        attrs={
            "in_channels": "in_channels",
            "out_channels": "out_channels",
            "kernel_size": f"{t}(kernel_size)",
            "stride": f"{t}(stride)",
            "padding": f"{t}(padding)",
            "dilation": f"{t}(dilation)",
            "transposed": "True",
            "output_padding": f"{t}(output_padding)",
            "groups": "groups",
            "padding_mode": "padding_mode",
        },
        params=[
            ("weight", ["in_channels", "out_channels // groups", f"*{t}(kernel_size)"], None),
            ("bias", ["out_channels"], "bias"),
        ],
        skip=_CONV_SKIP,
    )
    spec(
        f"LazyConv{_d}d",
        [dict(out_channels=6, kernel_size=3), dict(out_channels=4, kernel_size=2, stride=2, padding=1, groups=2, bias=False)],
        attrs={
            "in_channels": "0",
            "out_channels": "out_channels",
            "kernel_size": f"{t}(kernel_size)",
            "stride": f"{t}(stride)",
            "padding": f'padding if padding == "same" or padding == "valid" else {t}(padding)',
            "dilation": f"{t}(dilation)",
            "transposed": "False",
            "output_padding": f"{t}(0)",
            "groups": "groups",
            "padding_mode": "padding_mode",
        },
        params=[("weight", "_uninitialized()", None), ("bias", "_uninitialized()", "bias")],
        skip={**_CONV_SKIP, **_LAZY_SKIP},
    )
    spec(
        f"LazyConvTranspose{_d}d",
        [dict(out_channels=6, kernel_size=3), dict(out_channels=4, kernel_size=2, stride=2, padding=1, output_padding=1, groups=2, bias=False)],
        attrs={
            "in_channels": "0",
            "out_channels": "out_channels",
            "kernel_size": f"{t}(kernel_size)",
            "stride": f"{t}(stride)",
            "padding": f"{t}(padding)",
            "dilation": f"{t}(dilation)",
            "transposed": "True",
            "output_padding": f"{t}(output_padding)",
            "groups": "groups",
            "padding_mode": "padding_mode",
        },
        params=[("weight", "_uninitialized()", None), ("bias", "_uninitialized()", "bias")],
        skip={**_CONV_SKIP, **_LAZY_SKIP},
    )

# -- normalization ----------------------------------------------------------
_NORM_ATTRS = {
    "num_features": "num_features",
    "eps": "eps",
    "momentum": "momentum",
    "affine": "affine",
    "track_running_stats": "track_running_stats",
}
_NORM_PARAMS = [("weight", ["num_features"], "affine"), ("bias", ["num_features"], "affine and bias")]
_NORM_BUFFERS = [
    ("running_mean", ["num_features"], "track_running_stats", "float32"),
    ("running_var", ["num_features"], "track_running_stats", "float32"),
    ("num_batches_tracked", [], "track_running_stats", "int64"),
]
_NORM_SAMPLES = [
    dict(num_features=4),
    dict(num_features=3, eps=1e-3, momentum=None, affine=False, track_running_stats=False),
    dict(num_features=5, affine=True, track_running_stats=False, bias=False),
    dict(num_features=2, affine=False, track_running_stats=True),
]
for _d in (1, 2, 3):
    spec(f"BatchNorm{_d}d", _NORM_SAMPLES, attrs=_NORM_ATTRS, params=_NORM_PARAMS, buffers=_NORM_BUFFERS)
    spec(f"InstanceNorm{_d}d", _NORM_SAMPLES + [dict(num_features=3, affine=True, track_running_stats=True)],
         attrs=_NORM_ATTRS, params=_NORM_PARAMS, buffers=_NORM_BUFFERS)
    _lazy_samples = [{k: v for k, v in s.items() if k != "num_features"} for s in _NORM_SAMPLES]
    for _kind in ("BatchNorm", "InstanceNorm"):
        spec(
            f"Lazy{_kind}{_d}d",
            _lazy_samples,
            attrs={**_NORM_ATTRS, "num_features": "0"},
            params=[("weight", "_uninitialized()", "affine"), ("bias", "_uninitialized()", "affine and bias")],
            buffers=[
                ("running_mean", "_uninitialized()", "track_running_stats", "float32"),
                ("running_var", "_uninitialized()", "track_running_stats", "float32"),
                ("num_batches_tracked", [], "track_running_stats", "int64"),
            ],
            skip=_LAZY_SKIP,
        )
spec("SyncBatchNorm", _NORM_SAMPLES, attrs={**_NORM_ATTRS, "process_group": "process_group"},
     params=_NORM_PARAMS, buffers=_NORM_BUFFERS)
spec(
    "LayerNorm",
    [dict(normalized_shape=4), dict(normalized_shape=(3, 4), eps=1e-6, elementwise_affine=False),
     dict(normalized_shape=[5], bias=False), dict(normalized_shape=torch.Size([2, 3]))],
    attrs={"normalized_shape": "_tuple(normalized_shape)", "eps": "eps", "elementwise_affine": "elementwise_affine"},
    params=[("weight", "_tuple(normalized_shape)", "elementwise_affine"),
            ("bias", "_tuple(normalized_shape)", "elementwise_affine and bias")],
)
spec(
    "RMSNorm",
    [dict(normalized_shape=4), dict(normalized_shape=(3, 4), eps=1e-6, elementwise_affine=False), dict(normalized_shape=[5])],
    attrs={"normalized_shape": "_tuple(normalized_shape)", "eps": "eps", "elementwise_affine": "elementwise_affine"},
    params=[("weight", "_tuple(normalized_shape)", "elementwise_affine")],
)
spec(
    "GroupNorm",
    [dict(num_groups=2, num_channels=4), dict(num_groups=3, num_channels=6, eps=1e-6, affine=False),
     dict(num_groups=1, num_channels=5, bias=False)],
    attrs={"num_groups": "num_groups", "num_channels": "num_channels", "eps": "eps", "affine": "affine"},
    params=[("weight", ["num_channels"], "affine"), ("bias", ["num_channels"], "affine and bias")],
)
for _n in ("LocalResponseNorm", "CrossMapLRN2d"):
    spec(_n, [dict(size=3), dict(size=5, alpha=1e-3, beta=0.5, k=2.0)],
         attrs={"size": "size", "alpha": "alpha", "beta": "beta", "k": "k"})

# -- embeddings ---------------------------------------------------------------
_PAD_IDX = "padding_idx if padding_idx is None or padding_idx >= 0 else num_embeddings + padding_idx"
spec(
    "Embedding",
    [dict(num_embeddings=10, embedding_dim=4), dict(num_embeddings=7, embedding_dim=3, padding_idx=-1, max_norm=1.0,
                                                    norm_type=1.0, scale_grad_by_freq=True, sparse=True),
     dict(num_embeddings=5, embedding_dim=2, padding_idx=2, _weight=torch.zeros(5, 2), _freeze=True)],
    attrs={"num_embeddings": "num_embeddings", "embedding_dim": "embedding_dim", "padding_idx": _PAD_IDX,
           "max_norm": "max_norm", "norm_type": "norm_type", "scale_grad_by_freq": "scale_grad_by_freq", "sparse": "sparse"},
    params=[("weight", ["num_embeddings", "embedding_dim"], None)],
)
spec(
    "EmbeddingBag",
    [dict(num_embeddings=10, embedding_dim=4), dict(num_embeddings=7, embedding_dim=3, padding_idx=-2, max_norm=1.0,
                                                    mode="sum", include_last_offset=True, sparse=True)],
    attrs={"num_embeddings": "num_embeddings", "embedding_dim": "embedding_dim", "padding_idx": _PAD_IDX,
           "max_norm": "max_norm", "norm_type": "norm_type", "scale_grad_by_freq": "scale_grad_by_freq", "sparse": "sparse",
           "mode": "mode", "include_last_offset": "include_last_offset"},
    params=[("weight", ["num_embeddings", "embedding_dim"], None)],
)

# -- activations ------------------------------------------------------------
for _n in ("Sigmoid", "Tanh", "LogSigmoid", "Softsign", "Tanhshrink", "Softmax2d"):
    spec(_n, [{}])
for _n in ("ReLU", "SELU", "SiLU", "Mish", "Hardswish", "Hardsigmoid"):
    spec(_n, [{}, dict(inplace=True)], attrs={"inplace": "inplace"})
for _n in ("ELU", "CELU"):
    spec(_n, [{}, dict(alpha=0.5, inplace=True)], attrs={"alpha": "alpha", "inplace": "inplace"})
spec("GELU", [{}, dict(approximate="tanh")], attrs={"approximate": "approximate"})
spec("GLU", [{}, dict(dim=1)], attrs={"dim": "dim"})
for _n in ("Hardshrink", "Softshrink"):
    spec(_n, [{}, dict(lambd=0.3)], attrs={"lambd": "lambd"})
spec(
    "Hardtanh",
    [{}, dict(min_val=-2.0, max_val=3.0, inplace=True), dict(min_value=-0.5, max_value=0.5)],
    attrs={"min_val": "min_val if min_value is None else min_value",
           "max_val": "max_val if max_value is None else max_value", "inplace": "inplace"},
)
spec("ReLU6", [{}, dict(inplace=True)], attrs={"min_val": "0.0", "max_val": "6.0", "inplace": "inplace"})
spec("LeakyReLU", [{}, dict(negative_slope=0.2, inplace=True)], attrs={"negative_slope": "negative_slope", "inplace": "inplace"})
for _n in ("Softmax", "LogSoftmax", "Softmin"):
    spec(_n, [{}, dict(dim=1)], attrs={"dim": "dim"})
spec("PReLU", [{}, dict(num_parameters=8, init=0.1)], attrs={"num_parameters": "num_parameters", "init": "init"},
     params=[("weight", ["num_parameters"], None)])
spec("RReLU", [{}, dict(lower=0.1, upper=0.2, inplace=True)], attrs={"lower": "lower", "upper": "upper", "inplace": "inplace"})
spec("Softplus", [{}, dict(beta=2.0, threshold=10.0)], attrs={"beta": "beta", "threshold": "threshold"})
spec("Threshold", [dict(threshold=0.1, value=0.0), dict(threshold=1.0, value=2.0, inplace=True)],
     attrs={"threshold": "threshold", "value": "value", "inplace": "inplace"})

_KDIM = "(kdim if kdim is not None else embed_dim)"
_VDIM = "(vdim if vdim is not None else embed_dim)"
_SAME = f"{_KDIM} == embed_dim and {_VDIM} == embed_dim"
spec(
    "MultiheadAttention",
    [
        dict(embed_dim=8, num_heads=2),
        dict(embed_dim=8, num_heads=4, dropout=0.1, bias=False, add_bias_kv=True, add_zero_attn=True, batch_first=True),
        dict(embed_dim=6, num_heads=3, kdim=4, vdim=5),
        dict(embed_dim=6, num_heads=2, kdim=6, vdim=6, bias=False),
        dict(embed_dim=4, num_heads=1, kdim=3, add_bias_kv=True),
    ],
    attrs={
        "embed_dim": "embed_dim",
        "kdim": _KDIM,
        "vdim": _VDIM,
        "_qkv_same_embed_dim": _SAME,
        "num_heads": "num_heads",
        "dropout": "dropout",
        "batch_first": "batch_first",
        "head_dim": "embed_dim // num_heads",
        "add_zero_attn": "add_zero_attn",
    },
    params=[
        ("in_proj_weight", ["3 * embed_dim", "embed_dim"], _SAME),
        ("q_proj_weight", ["embed_dim", "embed_dim"], f"not ({_SAME})"),
        ("k_proj_weight", ["embed_dim", _KDIM], f"not ({_SAME})"),
        ("v_proj_weight", ["embed_dim", _VDIM], f"not ({_SAME})"),
        ("in_proj_bias", ["3 * embed_dim"], "bias"),
        ("bias_k", ["1", "1", "embed_dim"], "add_bias_kv"),
        ("bias_v", ["1", "1", "embed_dim"], "add_bias_kv"),
    ],
    subs=[sub("out_proj", "NonDynamicallyQuantizableLinear",
              {"in_features": "embed_dim", "out_features": "embed_dim", "bias": "bias"})],
)

# -- pooling ------------------------------------------------------------------
for _d in (1, 2, 3):
    t = _NT[_d]
    spec(
        f"MaxPool{_d}d",
        [dict(kernel_size=3), dict(kernel_size=(2,) * _d, stride=1, padding=1, dilation=2, return_indices=True, ceil_mode=True)],
        attrs={"kernel_size": "kernel_size", "stride": "stride if stride is not None else kernel_size", "padding": "padding",
               "dilation": "dilation", "return_indices": "return_indices", "ceil_mode": "ceil_mode"},
    )
    avg_attrs = {"kernel_size": "kernel_size", "stride": "stride if stride is not None else kernel_size",
                 "padding": "padding", "ceil_mode": "ceil_mode", "count_include_pad": "count_include_pad"}
    if _d == 1:
        avg_attrs = {"kernel_size": "_single(kernel_size)", "stride": "_single(stride if stride is not None else kernel_size)",
                     "padding": "_single(padding)", "ceil_mode": "ceil_mode", "count_include_pad": "count_include_pad"}
    avg_samples = [dict(kernel_size=3), dict(kernel_size=2, stride=1, padding=1, ceil_mode=True, count_include_pad=False)]
    if _d > 1:
        avg_attrs["divisor_override"] = "divisor_override"
        avg_samples.append(dict(kernel_size=(2,) * _d, divisor_override=3))
    spec(f"AvgPool{_d}d", avg_samples, attrs=avg_attrs)
    spec(f"AdaptiveAvgPool{_d}d", [dict(output_size=3), dict(output_size=(2, None, 4)[:_d] if _d > 1 else None)],
         attrs={"output_size": "output_size"})
    spec(f"AdaptiveMaxPool{_d}d", [dict(output_size=3), dict(output_size=(2,) * _d, return_indices=True)],
         attrs={"output_size": "output_size", "return_indices": "return_indices"})
    spec(f"LPPool{_d}d", [dict(norm_type=2, kernel_size=3), dict(norm_type=1.5, kernel_size=(2,) * _d, stride=1, ceil_mode=True)],
         attrs={"norm_type": "norm_type", "kernel_size": "kernel_size", "stride": "stride", "ceil_mode": "ceil_mode"})
    spec(f"MaxUnpool{_d}d", [dict(kernel_size=3), dict(kernel_size=(2,) * _d, stride=1, padding=1)],
         attrs={"kernel_size": f"{t}(kernel_size)", "stride": f"{t}(stride if stride is not None else kernel_size)",
                "padding": f"{t}(padding)"})
for _d in (2, 3):
    t = _NT[_d]
    spec(
        f"FractionalMaxPool{_d}d",
        [dict(kernel_size=2, output_size=3), dict(kernel_size=3, output_ratio=0.5, return_indices=True),
         dict(kernel_size=2, output_size=4, _random_samples=torch.rand(1, 3, _d))],
        attrs={"kernel_size": f"{t}(kernel_size)", "return_indices": "return_indices",
               "output_size": f"{t}(output_size) if output_size is not None else None",
               "output_ratio": f"{t}(output_ratio) if output_ratio is not None else None"},
        buffers=[("_random_samples", "_shape(_random_samples)", "_random_samples is not None", None)],
    )
spec("Fold", [dict(output_size=4, kernel_size=2), dict(output_size=(4, 5), kernel_size=(2, 3), dilation=2, padding=1, stride=2)],
     attrs={"output_size": "output_size", "kernel_size": "kernel_size", "dilation": "dilation", "padding": "padding", "stride": "stride"})
spec("Unfold", [dict(kernel_size=2), dict(kernel_size=(2, 3), dilation=2, padding=1, stride=2)],
     attrs={"kernel_size": "kernel_size", "dilation": "dilation", "padding": "padding", "stride": "stride"})

# -- dropout / shape / misc ----------------------------------------------------
for _n in ("Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"):
    spec(_n, [{}, dict(p=0.1, inplace=True)], attrs={"p": "p", "inplace": "inplace"})
spec("Flatten", [{}, dict(start_dim=0, end_dim=2)], attrs={"start_dim": "start_dim", "end_dim": "end_dim"})
spec("Unflatten", [dict(dim=1, unflattened_size=(2, 3)), dict(dim=-1, unflattened_size=[4, -1])],
     attrs={"dim": "dim", "unflattened_size": "unflattened_size"})
_UPS_SF = "_map_float(scale_factor) if _is_tuple(scale_factor) else (float(scale_factor) if scale_factor else None)"
spec(
    "Upsample",
    [{}, dict(scale_factor=2), dict(size=(4, 5), mode="bilinear", align_corners=True),
     dict(scale_factor=(2, 3), mode="nearest", recompute_scale_factor=True), dict(scale_factor=1.5, mode="bicubic", align_corners=False)],
    attrs={"name": '"Upsample"', "size": "size", "scale_factor": _UPS_SF, "mode": "mode",
           "align_corners": "align_corners", "recompute_scale_factor": "recompute_scale_factor"},
)
spec(
    "UpsamplingNearest2d",
    [{}, dict(scale_factor=2), dict(size=(4, 5))],
    attrs={"name": '"UpsamplingNearest2d"', "size": "size", "scale_factor": _UPS_SF, "mode": '"nearest"',
           "align_corners": "None", "recompute_scale_factor": "None"},
)
spec(
    "UpsamplingBilinear2d",
    [{}, dict(scale_factor=2), dict(size=(4, 5))],
    attrs={"name": '"UpsamplingBilinear2d"', "size": "size", "scale_factor": _UPS_SF, "mode": '"bilinear"',
           "align_corners": "True", "recompute_scale_factor": "None"},
)
spec("PixelShuffle", [dict(upscale_factor=2), dict(upscale_factor=3)], attrs={"upscale_factor": "upscale_factor"})
spec("PixelUnshuffle", [dict(downscale_factor=2), dict(downscale_factor=3)], attrs={"downscale_factor": "downscale_factor"})
spec("ChannelShuffle", [dict(groups=2), dict(groups=4)], attrs={"groups": "groups"})
spec("CosineSimilarity", [{}, dict(dim=0, eps=1e-6)], attrs={"dim": "dim", "eps": "eps"})
spec("PairwiseDistance", [{}, dict(p=1.0, eps=1e-3, keepdim=True)], attrs={"norm": "p", "eps": "eps", "keepdim": "keepdim"})

# -- padding --------------------------------------------------------------------
_PADT = {1: "_pair", 2: "_quadruple", 3: None}
for _d in (1, 2, 3):
    t = _PADT[_d]
    pexpr = f"{t}(padding)" if t else "_ntuple(6, padding)"
    samples = [dict(padding=1), dict(padding=tuple(range(1, 2 * _d + 1)))]
    for _n in ("ReflectionPad", "ReplicationPad", "CircularPad"):
        spec(f"{_n}{_d}d", samples, attrs={"padding": pexpr})
    spec(f"ZeroPad{_d}d", samples, attrs={"padding": pexpr, "value": "0.0"})
    spec(f"ConstantPad{_d}d", [dict(s, value=v) for s, v in zip(samples, (0.0, 2.5))], attrs={"padding": pexpr, "value": "value"})

# -- recurrent --------------------------------------------------------------------
_RNN_ATTRS = {
    "input_size": "input_size",
    "hidden_size": "hidden_size",
    "num_layers": "num_layers",
    "bias": "bias",
    "batch_first": "batch_first",
    "dropout": "float(dropout)",
    "bidirectional": "bidirectional",
    "proj_size": "proj_size",
}
_RNN_SKIP = {
    "_flat_weight_refs": "weak references to the flat weights (internal)",
    "_flat_weights_names": "internal list of parameter names (see parameters_from)",
    "_all_weights": "internal list of parameter names per layer (see parameters_from)",
    "_flat_weights": "internal list of the parameter tensors",
}
_REAL_H = "(proj_size if proj_size > 0 else hidden_size)"


def _rnn_params(gate, proj=True):
    # parameters for a module with num_layers == 1 (both directions)
    real_h = _REAL_H if proj else "hidden_size"
    out = []
    for sfx, when_dir in (("", None), ("_reverse", "bidirectional")):
        def w(c):
            if when_dir and c:
                return f"{when_dir} and {c}"
            return when_dir or c

        out += [
            (f"weight_ih_l0{sfx}", [gate, "input_size"], w(None)),
            (f"weight_hh_l0{sfx}", [gate, real_h], w(None)),
            (f"bias_ih_l0{sfx}", [gate], w("bias")),
            (f"bias_hh_l0{sfx}", [gate], w("bias")),
        ]
        if proj:
            out.append((f"weight_hr_l0{sfx}", ["proj_size", "hidden_size"], w("proj_size > 0")))
    return out


def _rnn_params_from(gate, proj=True):
    real_h = _REAL_H if proj else "hidden_size"
    tmpl = [
        {"name": "weight_ih_l{layer}{suffix}",
         "shape": [gate, f"input_size if layer == 0 else {real_h} * (2 if bidirectional else 1)"], "when": None},
        {"name": "weight_hh_l{layer}{suffix}", "shape": [gate, real_h], "when": None},
        {"name": "bias_ih_l{layer}{suffix}", "shape": [gate], "when": "bias"},
        {"name": "bias_hh_l{layer}{suffix}", "shape": [gate], "when": "bias"},
    ]
    if proj:
        tmpl.append({"name": "weight_hr_l{layer}{suffix}", "shape": ["proj_size", "hidden_size"], "when": "proj_size > 0"})
    return {
        "for_each": [["layer", "num_layers"], ["direction", "2 if bidirectional else 1"]],
        "vars": {"suffix": '"_reverse" if direction == 1 else ""'},
        "template": tmpl,
    }


_RNN_NOTE = ("parameters lists the parameters for num_layers == 1 only; parameters_from describes all layers "
             "(parameters absent when their condition is false are not registered at all, getattr raises)")
_RNN_SAMPLES = [
    dict(input_size=3, hidden_size=4),
    dict(input_size=3, hidden_size=4, num_layers=2, bias=False, batch_first=True, dropout=0.5, bidirectional=True),
    dict(input_size=5, hidden_size=6, num_layers=3, bidirectional=False, dropout=0),
    dict(input_size=2, hidden_size=3, bidirectional=True),
]
for _n, gate, extra_samples, extra_attrs in (
    ("LSTM", "4 * hidden_size", [dict(input_size=3, hidden_size=6, proj_size=2), dict(input_size=3, hidden_size=6, proj_size=2, num_layers=2, bidirectional=True, bias=False)], {"mode": '"LSTM"'}),
    ("GRU", "3 * hidden_size", [], {"mode": '"GRU"', "proj_size": "0"}),
    ("RNN", "hidden_size", [dict(input_size=3, hidden_size=4, nonlinearity="relu", num_layers=2)],
     {"mode": '"RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU"', "nonlinearity": "nonlinearity", "proj_size": "0"}),
):
    proj = _n == "LSTM"
    spec(_n, _RNN_SAMPLES + extra_samples, attrs={**_RNN_ATTRS, **extra_attrs}, params=_rnn_params(gate, proj),
         params_from=_rnn_params_from(gate, proj), skip=_RNN_SKIP, note=_RNN_NOTE)
_RNNBASE_GATE = '(4 if mode == "LSTM" else (3 if mode == "GRU" else 1)) * hidden_size'
spec("RNNBase", [dict(s, mode=m) for s, m in zip(_RNN_SAMPLES + [dict(input_size=3, hidden_size=6, proj_size=2)],
                                                ("LSTM", "GRU", "RNN_TANH", "RNN_RELU", "LSTM"))],
     attrs={**_RNN_ATTRS, "mode": "mode"}, params=_rnn_params(_RNNBASE_GATE), params_from=_rnn_params_from(_RNNBASE_GATE),
     skip=_RNN_SKIP, note=_RNN_NOTE)


def _cell_params(gate):
    return [("weight_ih", [gate, "input_size"], None), ("weight_hh", [gate, "hidden_size"], None),
            ("bias_ih", [gate], "bias"), ("bias_hh", [gate], "bias")]


_CELL_ATTRS = {"input_size": "input_size", "hidden_size": "hidden_size", "bias": "bias"}
spec("RNNCellBase", [dict(input_size=3, hidden_size=4, bias=True, num_chunks=2), dict(input_size=2, hidden_size=5, bias=False, num_chunks=3)],
     attrs=_CELL_ATTRS, params=_cell_params("num_chunks * hidden_size"))
spec("RNNCell", [dict(input_size=3, hidden_size=4), dict(input_size=2, hidden_size=5, bias=False, nonlinearity="relu")],
     attrs={**_CELL_ATTRS, "nonlinearity": "nonlinearity"}, params=_cell_params("hidden_size"))
spec("LSTMCell", [dict(input_size=3, hidden_size=4), dict(input_size=2, hidden_size=5, bias=False)],
     attrs=_CELL_ATTRS, params=_cell_params("4 * hidden_size"))
spec("GRUCell", [dict(input_size=3, hidden_size=4), dict(input_size=2, hidden_size=5, bias=False)],
     attrs=_CELL_ATTRS, params=_cell_params("3 * hidden_size"))

# -- transformer ------------------------------------------------------------
_ACT_SKIP = {
    "activation": "the activation callable (F.relu / F.gelu for the strings 'relu' / 'gelu', else the argument itself); "
                  "a submodule instead when an nn.Module is passed",
}
_ACT_CODE_SKIP = {
    "activation_relu_or_gelu": "1 if the activation is F.relu or an nn.ReLU, 2 if F.gelu or an nn.GELU, else 0 "
                               "(needs function identity, not expressible)",
}
_TL_SAMPLES = [
    dict(d_model=8, nhead=2, dim_feedforward=16),
    dict(d_model=8, nhead=4, dim_feedforward=12, dropout=0.0, activation="gelu", layer_norm_eps=1e-6,
         batch_first=True, norm_first=True, bias=False),
    dict(d_model=6, nhead=3, dim_feedforward=10, activation=nn.GELU()),
]


def _tl_subs(decoder):
    mha = {"embed_dim": "d_model", "num_heads": "nhead", "dropout": "dropout", "bias": "bias", "batch_first": "batch_first"}
    ln = {"normalized_shape": "d_model", "eps": "layer_norm_eps", "bias": "bias"}
    subs_ = [sub("self_attn", "MultiheadAttention", mha)]
    if decoder:
        subs_.append(sub("multihead_attn", "MultiheadAttention", mha))
    subs_ += [
        sub("linear1", "Linear", {"in_features": "d_model", "out_features": "dim_feedforward", "bias": "bias"}),
        sub("dropout", "Dropout", {"p": "dropout"}),
        sub("linear2", "Linear", {"in_features": "dim_feedforward", "out_features": "d_model", "bias": "bias"}),
        sub("norm1", "LayerNorm", ln),
        sub("norm2", "LayerNorm", ln),
    ]
    if decoder:
        subs_.append(sub("norm3", "LayerNorm", ln))
    subs_ += [sub("dropout1", "Dropout", {"p": "dropout"}), sub("dropout2", "Dropout", {"p": "dropout"})]
    if decoder:
        subs_.append(sub("dropout3", "Dropout", {"p": "dropout"}))
    subs_.append(sub("activation", "Module", None, when="_is_module(activation)", source="activation"))
    return subs_


spec("TransformerEncoderLayer", _TL_SAMPLES, attrs={"norm_first": "norm_first"}, subs=_tl_subs(False),
     skip={**_ACT_SKIP, **_ACT_CODE_SKIP})
spec("TransformerDecoderLayer", _TL_SAMPLES, attrs={"norm_first": "norm_first"}, subs=_tl_subs(True), skip=_ACT_SKIP)
_ENC_SKIP = {
    "use_nested_tensor": "enable_nested_tensor and the fast-path conditions on encoder_layer hold (depends on the layer object)",
}
spec(
    "TransformerEncoder",
    [dict(encoder_layer=nn.TransformerEncoderLayer(8, 2, 16), num_layers=2),
     dict(encoder_layer=nn.TransformerEncoderLayer(8, 2, 16, batch_first=True), num_layers=1, norm=nn.LayerNorm(8),
          enable_nested_tensor=False, mask_check=False)],
    attrs={"num_layers": "num_layers", "enable_nested_tensor": "enable_nested_tensor", "mask_check": "mask_check"},
    subs=[sub("layers", "ModuleList", None, note="num_layers deep copies of encoder_layer"),
          sub("norm", "Module", None, when="norm is not None", source="norm")],
    skip=_ENC_SKIP,
)
spec(
    "TransformerDecoder",
    [dict(decoder_layer=nn.TransformerDecoderLayer(8, 2, 16), num_layers=2),
     dict(decoder_layer=nn.TransformerDecoderLayer(8, 2, 16), num_layers=1, norm=nn.LayerNorm(8))],
    attrs={"num_layers": "num_layers"},
    subs=[sub("layers", "ModuleList", None, note="num_layers deep copies of decoder_layer"),
          sub("norm", "Module", None, when="norm is not None", source="norm")],
)
spec(
    "Transformer",
    [dict(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=2, dim_feedforward=16),
     dict(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=16, batch_first=True,
          custom_encoder=nn.Identity(), custom_decoder=nn.Linear(8, 8))],
    attrs={"d_model": "d_model", "nhead": "nhead", "batch_first": "batch_first"},
    subs=[
        sub("encoder", "TransformerEncoder", None, when="custom_encoder is None",
            note="TransformerEncoder(TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout, activation, "
                 "layer_norm_eps, batch_first, norm_first, bias), num_encoder_layers, LayerNorm(d_model, eps=layer_norm_eps, bias=bias))"),
        sub("encoder", "Module", None, when="custom_encoder is not None", source="custom_encoder"),
        sub("decoder", "TransformerDecoder", None, when="custom_decoder is None",
            note="TransformerDecoder(TransformerDecoderLayer(d_model, nhead, dim_feedforward, dropout, activation, "
                 "layer_norm_eps, batch_first, norm_first, bias), num_decoder_layers, LayerNorm(d_model, eps=layer_norm_eps, bias=bias))"),
        sub("decoder", "Module", None, when="custom_decoder is not None", source="custom_decoder"),
    ],
)

# -- losses ---------------------------------------------------------------------
_RED = ('reduction if size_average is None and reduce is None else '
        '("none" if reduce is not None and not reduce else ("sum" if size_average is not None and not size_average else "mean"))')
_LEGACY_SAMPLES = [dict(size_average=False), dict(reduce=False), dict(size_average=True, reduce=True)]
_W = [("weight", "_shape(weight)", "weight is not None", None)]


def loss(name, samples, attrs=None, buffers=(), legacy=True, subs=()):
    a = {"reduction": _RED if legacy else "reduction"}
    a.update(attrs or {})
    s = [{}] + samples + (_LEGACY_SAMPLES if legacy else []) + [dict(reduction="sum"), dict(reduction="none")]
    spec(name, s, attrs=a, buffers=buffers, subs=subs)


loss("L1Loss", [])
loss("MSELoss", [])
loss("SoftMarginLoss", [])
loss("MultiLabelMarginLoss", [])
loss("KLDivLoss", [dict(log_target=True)], attrs={"log_target": "log_target"})
loss("BCELoss", [dict(weight=torch.ones(3))], buffers=_W)
loss("BCEWithLogitsLoss", [dict(weight=torch.ones(3), pos_weight=torch.ones(3))], buffers=_W + [("pos_weight", "_shape(pos_weight)", "pos_weight is not None", None)])
loss("MultiLabelSoftMarginLoss", [dict(weight=torch.ones(3))], buffers=_W)
loss("NLLLoss", [dict(weight=torch.ones(3), ignore_index=1)], attrs={"ignore_index": "ignore_index"}, buffers=_W)
loss("NLLLoss2d", [dict(weight=torch.ones(3), ignore_index=1)], attrs={"ignore_index": "ignore_index"}, buffers=_W)
loss("CrossEntropyLoss", [dict(weight=torch.ones(3), ignore_index=1, label_smoothing=0.1)],
     attrs={"ignore_index": "ignore_index", "label_smoothing": "label_smoothing"}, buffers=_W)
loss("MultiMarginLoss", [dict(p=2, margin=0.5, weight=torch.ones(3))], attrs={"p": "p", "margin": "margin"}, buffers=_W)
loss("PoissonNLLLoss", [dict(log_input=False, full=True, eps=1e-6)], attrs={"log_input": "log_input", "full": "full", "eps": "eps"})
loss("GaussianNLLLoss", [dict(full=True, eps=1e-3)], attrs={"full": "full", "eps": "eps"}, legacy=False)
for _n in ("CosineEmbeddingLoss", "MarginRankingLoss", "HingeEmbeddingLoss"):
    loss(_n, [dict(margin=0.5)], attrs={"margin": "margin"})
loss("SmoothL1Loss", [dict(beta=0.5)], attrs={"beta": "beta"})
loss("HuberLoss", [dict(delta=0.5)], attrs={"delta": "delta"}, legacy=False)
loss("CTCLoss", [dict(blank=1, zero_infinity=True)], attrs={"blank": "blank", "zero_infinity": "zero_infinity"}, legacy=False)
loss("TripletMarginLoss", [dict(margin=0.5, p=1.0, eps=1e-3, swap=True)],
     attrs={"margin": "margin", "p": "p", "eps": "eps", "swap": "swap"})
spec(
    "TripletMarginWithDistanceLoss",
    [{}, dict(margin=0.5, swap=True, reduction="sum"), dict(distance_function=nn.CosineSimilarity())],
    attrs={"reduction": "reduction", "margin": "margin", "swap": "swap"},
    subs=[sub("distance_function", "PairwiseDistance", {}, when="distance_function is None"),
          sub("distance_function", "Module", None, when="_is_module(distance_function)", source="distance_function")],
    skip={"distance_function": "plain attribute when a non-Module callable is passed"},
)
spec(
    "LinearCrossEntropyLoss",
    [dict(in_features=4, num_classes=10), dict(in_features=3, num_classes=5, out_features=(2, 3), bias=True, reduction="sum",
                                               weight=torch.ones(5), ignore_index=1, label_smoothing=0.1)],
    attrs={"reduction": "reduction", "num_classes": "num_classes", "out_features": "out_features",
           "ignore_index": "ignore_index", "label_smoothing": "label_smoothing", "options": "options"},
    buffers=_W,
    subs=[sub("linear", "Linear", {"in_features": "in_features", "out_features": "num_classes * _prod(out_features)", "bias": "bias"})],
)
spec(
    "AdaptiveLogSoftmaxWithLoss",
    [dict(in_features=16, n_classes=20, cutoffs=[5, 10]), dict(in_features=8, n_classes=12, cutoffs=[4], div_value=2.0, head_bias=True)],
    attrs={"in_features": "in_features", "n_classes": "n_classes", "cutoffs": "list(cutoffs) + list((n_classes,))",
           "div_value": "div_value", "head_bias": "head_bias", "shortlist_size": "cutoffs[0]", "n_clusters": "len(cutoffs)",
           "head_size": "cutoffs[0] + len(cutoffs)"},
    subs=[sub("head", "Linear", {"in_features": "in_features", "out_features": "cutoffs[0] + len(cutoffs)", "bias": "head_bias"}),
          sub("tail", "ModuleList", None,
              note="one Sequential(Linear(in_features, in_features // div_value ** (i + 1), bias=False), "
                   "Linear(that, cutoffs[i + 1] - cutoffs[i], bias=False)) per cluster")],
)
spec(
    "DataParallel",
    [dict(module=nn.Linear(2, 2))],
    subs=[sub("module", "Module", None, source="module")],
    skip={"device_ids": "depends on the CUDA devices present at construction",
          "dim": "only set when CUDA is available", "output_device": "only set when CUDA is available",
          "src_device_obj": "only set when CUDA is available"},
    note="attributes depend on the accelerators present at construction and are not catalogued",
)

spec("Module", [{}])
spec("Container", [{}, dict(a=nn.ReLU())])
spec("Sequential", [{}])
spec("ModuleList", [{}, dict(modules=[nn.ReLU(), nn.Linear(2, 2)])])
spec("ModuleDict", [{}, dict(modules={"a": nn.ReLU()})])
spec("ParameterList", [{}, dict(values=[nn.Parameter(torch.zeros(2))])])
spec("ParameterDict", [{}, dict(parameters={"a": nn.Parameter(torch.zeros(2))})])

EXTRA_MODULES = {"NonDynamicallyQuantizableLinear": torch.nn.modules.linear.NonDynamicallyQuantizableLinear}


# ---------------------------------------------------------------------------
# Module verification
# ---------------------------------------------------------------------------


def module_signature(cls):
    """The constructor signature (without self)."""
    init = cls.__init__
    if init is nn.Module.__init__ and cls is not nn.Module:
        # nn.Module.__init__(*args, **kwargs) rejects any argument unless
        # call_super_init is set, so the real constructor takes nothing.
        if getattr(cls, "call_super_init", False):
            fail(f"{cls.__name__}: call_super_init set")
        return inspect.Signature([])
    sig = inspect.signature(init)
    overloads = typing.get_overloads(init)
    generic = [p.kind for p in list(sig.parameters.values())[1:]] == [
        inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD]
    if overloads and generic:
        # e.g. LSTM: pick the explicit overload (the other is *args, **kwargs)
        cands = [o for o in overloads if not any(
            p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in inspect.signature(o).parameters.values())]
        if len(cands) != 1:
            fail(f"{cls.__name__}: cannot choose among overloads")
        sig = inspect.signature(cands[0])
    params = list(sig.parameters.values())
    if not params or params[0].name != "self":
        fail(f"{cls.__name__}: __init__ without self")
    return sig.replace(parameters=params[1:], return_annotation=inspect.Signature.empty)


def bind_env(cls_name, sig, kwargs):
    try:
        b = sig.bind(**kwargs)
    except TypeError as e:
        fail(f"{cls_name}: sample {kwargs} does not bind to the catalogued signature: {e}")
    b.apply_defaults()
    return dict(b.arguments)


MISSING = object()
COVERAGE = collections.defaultdict(set)  # (module, kind, name) -> set of when values seen


def dtype_name(dt):
    return str(dt).replace("torch.", "")


def check_instance(name, sp, m, env, where, depth=0):
    """Compare module instance `m` with spec `sp` evaluated under `env`."""
    real_params = [(k, v) for k, v in m._parameters.items() if v is not None]
    real_buffers = [(k, v) for k, v in m._buffers.items() if v is not None]
    if [k for k, _ in real_params] != [k for k, _ in m.named_parameters(recurse=False)]:
        fail(f"{where}: named_parameters differs from _parameters")
    # -- parameters
    if sp["params_from"] is not None:
        expected = expand_params_from(sp["params_from"], env, where)
        if sp["params"] and env.get("num_layers") == 1:
            exp1 = [(n, ev_shape(s, env, f"{where}.{n}")) for n, s, w in sp["params"]
                    if w is None or ev(w, env, f"{where}.{n}.when")]
            if exp1 != expected:
                fail(f"{where}: parameters (num_layers == 1) {exp1} != parameters_from {expected}")
    else:
        expected = []
        for pn, shape, when in sp["params"]:
            present = True if when is None else ev(when, env, f"{where}.{pn}.when")
            if not isinstance(present, bool):
                fail(f"{where}: when of {pn} is not a bool: {present!r}")
            if depth == 0 and when is not None:
                COVERAGE[(name, "param", pn)].add(present)
            if present:
                expected.append((pn, ev_shape(shape, env, f"{where}.{pn}.shape")))
            else:
                got = getattr(m, pn, MISSING)
                if got is not None:
                    fail(f"{where}: parameter {pn} absent but getattr gives {type(got).__name__}")
    got_names = [k for k, _ in real_params]
    if got_names != [n for n, _ in expected]:
        fail(f"{where}: parameters {got_names} != catalogue {[n for n, _ in expected]}")
    for (pn, shape), (_, t) in zip(expected, real_params):
        if shape is None:
            if not isinstance(t, nn.parameter.UninitializedParameter):
                fail(f"{where}: parameter {pn} has no shape in catalogue but is initialized")
            continue
        if isinstance(t, nn.parameter.UninitializedParameter):
            fail(f"{where}: parameter {pn} is uninitialized")
        if tuple(t.shape) != shape:
            fail(f"{where}: parameter {pn} shape {tuple(t.shape)} != catalogue {shape}")
        if t.dtype != torch.get_default_dtype():
            fail(f"{where}: parameter {pn} dtype {t.dtype}")
    # -- buffers
    expected_b = []
    for bn, shape, when, dt in sp["buffers"]:
        present = True if when is None else ev(when, env, f"{where}.{bn}.when")
        if depth == 0 and when is not None:
            COVERAGE[(name, "buffer", bn)].add(present)
        if present:
            expected_b.append((bn, ev_shape(shape, env, f"{where}.{bn}.shape"), dt))
        else:
            got = getattr(m, bn, MISSING)
            if got is not None:
                fail(f"{where}: buffer {bn} absent but getattr gives {type(got).__name__}")
    if [k for k, _ in real_buffers] != [n for n, _, _ in expected_b]:
        fail(f"{where}: buffers {[k for k, _ in real_buffers]} != catalogue {[n for n, _, _ in expected_b]}")
    for (bn, shape, dt), (_, t) in zip(expected_b, real_buffers):
        unin = isinstance(t, nn.parameter.UninitializedBuffer)
        if shape is None:
            if not unin:
                fail(f"{where}: buffer {bn} is catalogued uninitialized but is initialized")
        elif unin or tuple(t.shape) != shape:
            fail(f"{where}: buffer {bn} shape {None if unin else tuple(t.shape)} != catalogue {shape}")
        if dt is not None and dtype_name(t.dtype) != dt:
            fail(f"{where}: buffer {bn} dtype {t.dtype} != {dt}")
    # -- submodules
    exp_subs = []
    for s in sp["subs"]:
        present = True if s["when"] is None else ev(s["when"], env, f"{where}.{s['name']}.when")
        if depth == 0:
            COVERAGE[(name, "submodule", s["name"] + "#" + str(s["when"]))].add(present)
        if present:
            exp_subs.append(s)
    real_subs = [(k, v) for k, v in m._modules.items() if v is not None]
    if [k for k, _ in real_subs] != [s["name"] for s in exp_subs]:
        fail(f"{where}: submodules {[k for k, _ in real_subs]} != catalogue {[s['name'] for s in exp_subs]}")
    for s, (_, sm) in zip(exp_subs, real_subs):
        w = f"{where}.{s['name']}"
        if s.get("source") is not None:
            src = ev(s["source"], env, w + ".source")
            if s["module"] != "Module" or not isinstance(src, nn.Module):
                fail(f"{w}: a source submodule must be catalogued as Module")
            if type(sm) is not type(src):
                fail(f"{w}: submodule type {type(sm).__name__} is not that of the argument {type(src).__name__}")
            continue
        if type(sm).__name__ != s["module"] or type(sm) is not module_class(s["module"]):
            fail(f"{w}: submodule type {type(sm).__name__} != {s['module']}")
        if s.get("args") is not None:
            sub_cls = module_class(s["module"])
            sub_sig = module_signature(sub_cls)
            sub_kwargs = {k: ev(v, env, f"{w}.args.{k}") for k, v in s["args"].items()}
            sub_env = bind_env(s["module"], sub_sig, sub_kwargs)
            check_instance(s["module"], SPECS[s["module"]], sm, sub_env, w, depth + 1)
    # -- absent submodules must read as None (or be missing)
    for s in sp["subs"]:
        if s["name"] not in [x["name"] for x in exp_subs]:
            got = getattr(m, s["name"], MISSING)
            if got is not MISSING and got is not None and isinstance(got, nn.Module):
                fail(f"{where}: submodule {s['name']} should be absent")
    # -- attributes
    structural = {n for n, *_ in sp["params"]} | {n for n, *_ in sp["buffers"]} | {s["name"] for s in sp["subs"]}
    real_attrs = {k for k in vars(m) if k not in BASE_ATTRS and k not in structural}
    catalogued = set(sp["attrs"])
    extra = real_attrs - catalogued - set(sp["skip"])
    if extra:
        fail(f"{where}: attributes not catalogued: {sorted(extra)} = {[vars(m)[k] for k in sorted(extra)]}")
    missing = catalogued - real_attrs
    if missing:
        fail(f"{where}: catalogued attributes missing on the instance: {sorted(missing)}")
    for an, expr in sp["attrs"].items():
        want = ev(expr, env, f"{where}.attr.{an}")
        got = vars(m)[an]
        if not strict_equal(got, want):
            fail(f"{where}: attribute {an}: real {got!r} ({type(got).__name__}) != catalogue {want!r} ({type(want).__name__})")


def expand_params_from(pf, env, where):
    out = []

    def loop(i, e):
        if i == len(pf["for_each"]):
            e2 = dict(e)
            for vn, vx in pf["vars"].items():
                e2[vn] = ev(vx, e, f"{where}.vars.{vn}")
            for t in pf["template"]:
                if t["when"] is None or ev(t["when"], e2, f"{where}.{t['name']}.when"):
                    out.append((t["name"].format(**e2), ev_shape(t["shape"], e2, f"{where}.{t['name']}.shape")))
            return
        var, count = pf["for_each"][i]
        n = ev(count, e, f"{where}.for_each.{var}")
        for k in range(n):
            loop(i + 1, {**e, var: k})

    loop(0, env)
    return out


BASE_ATTRS = set(vars(nn.Module()))


def module_class(name):
    if name in EXTRA_MODULES:
        return EXTRA_MODULES[name]
    return getattr(nn, name)


def nn_module_names():
    return sorted(n for n in dir(nn) if not n.startswith("_") and inspect.isclass(getattr(nn, n))
                  and issubclass(getattr(nn, n), nn.Module))


def build_modules():
    names = nn_module_names()
    all_names = names + sorted(EXTRA_MODULES)
    missing = [n for n in all_names if n not in SPECS]
    unknown = [n for n in SPECS if n not in all_names]
    if missing or unknown:
        fail(f"module specs missing for {missing}; specs for unknown modules {unknown}")
    out = {}
    for name in all_names:
        cls = module_class(name)
        sp = SPECS[name]
        sig = module_signature(cls)
        entry = {
            "path": f"torch.nn.{name}" if name not in EXTRA_MODULES else f"{cls.__module__}.{cls.__qualname__}",
            "signature": encode_signature(sig),
            "container": name in CONTAINERS,
        }
        for i, kwargs in enumerate(sp["samples"]):
            where = f"{name}[sample {i}]"
            env = bind_env(name, sig, kwargs)
            try:
                m = cls(**kwargs)
            except Exception as e:  # noqa: BLE001
                fail(f"{where}: constructing {name}(**{kwargs}) failed: {e!r}")
            if name in CONTAINERS:
                continue
            check_instance(name, sp, m, env, where)
            # the same arguments passed positionally wherever the catalogued
            # signature allows it: checks the catalogued parameter order
            b = sig.bind(**kwargs)
            if b.args:
                try:
                    m2 = cls(*copy.deepcopy(b.args), **b.kwargs)
                except Exception as e:  # noqa: BLE001
                    fail(f"{where}: positional construction {name}(*{b.args}, **{b.kwargs}) failed: {e!r}")
                check_instance(name, sp, m2, env, where + " (positional)", depth=1)
        if not sig.parameters and name not in CONTAINERS:
            # the real constructor must reject arguments
            try:
                cls(1)
            except TypeError:
                pass
            else:
                fail(f"{name}: accepts an argument although its signature is empty")
        if name in CONTAINERS:
            out[name] = entry
            continue
        # check every expression once more against the grammar with the
        # constructor names only (also for branches never evaluated)
        argnames = set(sig.parameters)
        for an, expr in sp["attrs"].items():
            check_expr(expr, argnames, f"{name}.attr.{an}")
        entry["attributes"] = dict(sp["attrs"])
        entry["parameters"] = []
        for pn, shape, when in sp["params"]:
            for d in ([shape] if isinstance(shape, str) else shape):
                check_expr(d.lstrip("*"), argnames, f"{name}.{pn}.shape")
            if when:
                check_expr(when, argnames, f"{name}.{pn}.when")
            entry["parameters"].append({"name": pn, "shape": shape, "when": when})
        entry["buffers"] = []
        for bn, shape, when, dt in sp["buffers"]:
            for d in ([shape] if isinstance(shape, str) else shape):
                check_expr(d.lstrip("*"), argnames, f"{name}.{bn}.shape")
            if when:
                check_expr(when, argnames, f"{name}.{bn}.when")
            entry["buffers"].append({"name": bn, "shape": shape, "when": when, "dtype": dt})
        entry["submodules"] = [dict(s) for s in sp["subs"]]
        if sp["params_from"] is not None:
            entry["parameters_from"] = sp["params_from"]
        if name in NOTES:
            entry["note"] = NOTES[name]
        out[name] = entry
    # every condition must have been seen both true and false, otherwise the
    # samples do not exercise it
    constant = sorted(f"{m}.{kind}.{n}" for (m, kind, n), seen in COVERAGE.items()
                      if len(seen) < 2 and not n.endswith("#None"))
    if constant:
        fail("conditions not exercised both ways by the samples: " + ", ".join(constant))
    return out


# ---------------------------------------------------------------------------
# Functions
# ---------------------------------------------------------------------------

NAMESPACES = [
    ("torch", torch),
    ("torch.nn.functional", F),
    ("torch.fft", torch.fft),
    ("torch.linalg", torch.linalg),
    ("torch.special", torch.special),
]
# private names that models use and fx records
EXTRA_TORCH_NAMES = ["_assert", "_check"]
# classes that model code calls like functions (return kind by hand);
# other classes (torch.Tensor, torch.FloatTensor, dtypes, ...) are not listed
TORCH_CLASSES_AS_FUNCTIONS = {
    "torch.Size": "unknown",
    "torch.device": "unknown",
    "torch.finfo": "unknown",
    "torch.iinfo": "unknown",
    "torch.Generator": "unknown",
    "torch.no_grad": "unknown",
    "torch.enable_grad": "unknown",
    "torch.inference_mode": "unknown",
    "torch.set_grad_enabled": "unknown",
    "torch.autocast": "unknown",
    "torch.nn.Parameter": "tensor",
    "torch.nn.Buffer": "tensor",
}

OVERRIDES = torch.overrides.get_testing_overrides()


def is_function_like(obj):
    if isinstance(obj, (types.ModuleType, type)) or not callable(obj):
        return False
    mod = getattr(obj, "__module__", None) or ""
    return mod.split(".")[0] == "torch"


def parse_doc_signature(doc, name):
    """Parse the first line of a torch docstring, e.g.
    'arange(start=0, end, step=1, *, out=None, dtype=None) -> Tensor'.
    Returns (params, returns_text) or None."""
    if not doc:
        return None
    text = doc.strip().replace("\\*", "*")
    m = re.match(r"(?:[\w.]+\.)?" + re.escape(name) + r"\(", text)
    if not m:
        return None
    # find the matching parenthesis (the signature may span several lines)
    depth, i = 1, m.end()
    while i < len(text) and depth:
        if text[i] in "([{":
            depth += 1
        elif text[i] in ")]}":
            depth -= 1
        i += 1
    if depth:
        return None
    body = " ".join(text[m.end():i - 1].split())
    rest = text[i:].split("\n", 1)[0].strip()
    ret = None
    if rest.startswith("->"):
        ret = rest[2:].strip()
    elif rest:
        return None
    parts, depth, cur = [], 0, ""
    for ch in body:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    params, kw_only, seen = [], False, set()
    for part in parts:
        if part == "*":
            kw_only = True
            continue
        if part == "/":
            for q in params:
                q["kind"] = "positional_only"
            continue
        kind = "keyword_only" if kw_only else "positional_or_keyword"
        if part.startswith("**"):
            kind, part = "var_keyword", part[2:]
        elif part.startswith("*"):
            kind, part = "var_positional", part[1:]
            kw_only = True
        default_txt = None
        if "=" in part:
            part, default_txt = part.split("=", 1)
            default_txt = default_txt.strip()
        pname = part.split(":", 1)[0].strip()
        if not re.fullmatch(r"[A-Za-z_]\w*", pname) or pname in seen:
            return None
        seen.add(pname)
        entry = {"name": pname, "kind": kind, "default": None, "has_default": default_txt is not None}
        if default_txt is not None:
            try:
                entry["default"] = encode_default(ast.literal_eval(default_txt))
            except (ValueError, SyntaxError):
                entry["default"] = {"repr": default_txt}
        params.append(entry)
    return params, ret


def sig_of(obj):
    try:
        return inspect.signature(obj)
    except (ValueError, TypeError):
        return None


def P(name, kind="positional_or_keyword", default=inspect.Parameter.empty):  # noqa: N802
    return {"name": name, "kind": kind, "default": encode_default(default) if default is not inspect.Parameter.empty else None,
            "has_default": default is not inspect.Parameter.empty}


PO, PK, VP, KO, VK = "positional_only", "positional_or_keyword", "var_positional", "keyword_only", "var_keyword"


def boolean_dispatch_impl(obj):
    """torch._jit_internal.boolean_dispatch wrappers (F.max_pool2d, ...)
    have a (*args, **kwargs) signature; return the wrapped if_false function."""
    if not isinstance(obj, types.FunctionType) or obj.__closure__ is None:
        return None
    nl = inspect.getclosurevars(obj).nonlocals
    if "if_true" in nl and "if_false" in nl and "arg_name" in nl:
        return nl["if_false"]
    return None


HAND_SIGNATURES = {
    "torch.Size": [P("sizes", PO, ())],
    "torch.device": [P("type", PO), P("index", PO, None)],
    "torch.finfo": [P("type", PO, None)],
    "torch.iinfo": [P("type", PO)],
    "torch.Generator": [P("device", PK, "cpu")],
    "math.log": [P("x", PO), P("base", PO, math.e)],
}


def function_signature(obj, name, method=False, path=None):
    """-> (signature list or None, source)"""
    if path in HAND_SIGNATURES:
        return HAND_SIGNATURES[path], "hand"
    impl = boolean_dispatch_impl(obj)
    if impl is not None:
        return encode_signature(inspect.signature(impl)), "inspect"
    sig = sig_of(obj)
    if sig is not None:
        return encode_signature(sig), "inspect"
    doc = parse_doc_signature(getattr(obj, "__doc__", None), name)
    if doc is not None and method:
        doc = ([{"name": "self", "kind": "positional_or_keyword", "default": None, "has_default": False}] + doc[0], doc[1])
    ov = OVERRIDES.get(obj)
    if ov is not None:
        osig = encode_signature(inspect.signature(ov))
        if method and osig and osig[0]["kind"] in (PO, PK) and osig[0]["name"] != "self":
            osig = [dict(osig[0], name="self")] + osig[1:]
        if method:
            # the lambdas are shared with the torch.* function and list its
            # out= parameter, which Tensor methods do not accept
            osig = [q for q in osig if q["name"] != "out"]
        if doc is not None:
            # The override lambdas are often partial (torch.max(input, out=None),
            # Tensor.size(self), F.scaled_dot_product_attention without
            # is_causal) and spell variadic sizes as one parameter
            # (view(self, shape)); the documented first-line signature is
            # usually complete.  Take the docstring when it is variadic where
            # the lambda is not, or when it names more parameters.
            d = doc[0]
            d_var = any(p["kind"] == "var_positional" for p in d)
            o_var = any(p["kind"] == "var_positional" for p in osig)
            if (d_var and not o_var) or len(d) > len(osig):
                return d, "docstring"
        return osig, "overrides"
    if doc is not None:
        return doc[0], "docstring"
    return None, "unknown"


# -- return kinds --------------------------------------------------------------

HAND_RETURNS = {
    "torch.is_tensor": "bool",
    "torch.is_storage": "bool",
    "torch.numel": "int",
    "torch.Tensor.dim": "int",
    "torch.Tensor.ndimension": "int",
    "torch.Tensor.numel": "int",
    "torch.Tensor.nelement": "int",
    "torch.Tensor.element_size": "int",
    "torch.Tensor.get_device": "int",
    "torch.Tensor.data_ptr": "int",
    "torch.Tensor.size": "unknown",
    "torch.Tensor.item": "unknown",
    "torch.Tensor.tolist": "unknown",
    "torch.Tensor.type": "unknown",
    "torch.Tensor.to": "tensor",
    "torch.Tensor.cpu": "tensor",
    "torch.Tensor.cuda": "tensor",
    "torch.Tensor.float": "tensor",
    "torch.Tensor.half": "tensor",
    "torch.Tensor.double": "tensor",
    "torch.Tensor.int": "tensor",
    "torch.Tensor.long": "tensor",
    "torch.Tensor.bool": "tensor",
    "torch.Tensor.type_as": "tensor",
    "torch.Tensor.contiguous": "tensor",
    "torch.Tensor.backward": "none",
    "torch.Tensor.register_hook": "unknown",
    "torch.Tensor.split": "tensors",
    "torch.Tensor.chunk": "tensors",
    "torch.Tensor.unbind": "tensors",
    "torch.Tensor.tensor_split": "tensors",
    "torch.split": "tensors",
    "torch.chunk": "tensors",
    "torch.unbind": "tensors",
    "torch.meshgrid": "tensors",
    "torch.broadcast_tensors": "tensors",
    "torch.atleast_1d": "unknown",
    "torch.atleast_2d": "unknown",
    "torch.atleast_3d": "unknown",
    "torch._assert": "none",
    "torch._check": "none",
}

RETURN_KINDS = ("tensor", "tensors", "bool", "int", "none", "unknown")


def kind_from_annotation(ann):
    if ann is inspect.Signature.empty:
        return None
    if ann is None or ann is type(None) or ann == "None":
        return "none"
    if isinstance(ann, str):
        a = ann.replace("torch.", "").replace(" ", "")
        table = {"Tensor": "tensor", "bool": "bool", "int": "int", "None": "none"}
        if a in table:
            return table[a]
        m = re.fullmatch(r"(?:tuple|Tuple|list|List)\[(.*)\]", a)
        if m and all(x in ("Tensor", "...") for x in m.group(1).split(",")):
            return "tensors"
        return "unknown"
    if ann is torch.Tensor:
        return "tensor"
    if ann is bool:
        return "bool"
    if ann is int:
        return "int"
    origin = typing.get_origin(ann)
    if origin in (tuple, list):
        args = typing.get_args(ann)
        if args and all(a is torch.Tensor or a is Ellipsis for a in args):
            return "tensors"
    return "unknown"


def kind_from_schema_type(t):
    t = str(t)
    if t == "Tensor":
        return "tensor"
    if t == "Tensor[]":
        return "tensors"
    if t == "bool":
        return "bool"
    if t in ("int", "SymInt"):
        return "int"
    return "unknown"


def kind_from_schemas(opname):
    try:
        schemas = torch._C._jit_get_schemas_for_operator("aten::" + opname)
    except Exception:  # noqa: BLE001
        return None
    kinds = set()
    for sch in schemas:
        types_ = [str(a.type) for a in sch.arguments] + [str(r.type) for r in sch.returns]
        if not any("Tensor" in t for t in types_):
            continue  # TorchScript-only scalar / list overloads (aten::add.int, ...)
        if any(re.search(r"\bt\b", t) for t in types_):
            continue  # generic TorchScript list overloads (aten::add_.t)
        if sch.overload_name == "out" or sch.overload_name.endswith("_out") or any(
                a.kwarg_only and a.name == "out" for a in sch.arguments):
            continue
        rets = list(sch.returns)
        if not rets:
            kinds.add("none")
        elif len(rets) == 1:
            kinds.add(kind_from_schema_type(rets[0].type))
        else:
            kinds.add("tensors" if all(kind_from_schema_type(r.type) == "tensor" for r in rets) else "unknown")
    if not kinds:
        return None
    return kinds.pop() if len(kinds) == 1 else "unknown"


def kind_from_doc_return(txt):
    if not txt:
        return None
    t = txt.strip().rstrip(".").replace("torch.", "")
    if re.fullmatch(r"\w*Tensor", t):
        return "tensor"
    if re.fullmatch(r"\(\s*\w*Tensor(\s*,\s*\w*Tensor)*\s*,?\s*\)", t) or re.fullmatch(
            r"(tuple|list|Tuple|List)\s*\[?\s*(of\s+)?\w*Tensors?\s*\]?", t):
        return "tensors"
    if re.fullmatch(r"\w*Tensor\[\]", t):
        return "tensors"
    if t in ("bool", "int", "None"):
        return {"bool": "bool", "int": "int", "None": "none"}[t]
    return "unknown"


def return_kind(path, obj, opname):
    if path in HAND_RETURNS:
        return HAND_RETURNS[path]
    sig = sig_of(obj)
    if sig is not None:
        k = kind_from_annotation(sig.return_annotation)
        if k is not None:
            return k
    if opname:
        k = kind_from_schemas(opname)
        if k is not None:
            return k
    doc = parse_doc_signature(getattr(obj, "__doc__", None), opname or getattr(obj, "__name__", ""))
    if doc is not None:
        k = kind_from_doc_return(doc[1])
        if k is not None:
            return k
    return "unknown"


def aten_name(obj, public_name):
    n = getattr(obj, "__name__", None) or public_name
    return n


# -- python-level functions --------------------------------------------------------



BUILTINS_HAND = {
    # name: (signature, returns); signature None -> use inspect
    "getattr": ([P("object", PO), P("name", PO), P("default", PO, None)], "unknown"),
    "setattr": (None, "none"),
    "hasattr": (None, "bool"),
    "delattr": (None, "none"),
    "len": (None, "int"),
    "isinstance": (None, "bool"),
    "issubclass": (None, "bool"),
    "callable": (None, "bool"),
    "int": ([P("x", PO, 0), P("base", PK, 10)], "int"),
    "float": (None, "unknown"),
    "bool": ([P("x", PO, False)], "bool"),
    "str": ([P("object", PK, ""), P("encoding", PK, "utf-8"), P("errors", PK, "strict")], "unknown"),
    "min": ([P("args", VP), P("key", KO, None), P("default", KO, None)], "unknown"),
    "max": ([P("args", VP), P("key", KO, None), P("default", KO, None)], "unknown"),
    "abs": (None, "unknown"),
    "round": (None, "unknown"),
    "pow": (None, "unknown"),
    "divmod": (None, "unknown"),
    "sum": (None, "unknown"),
    "all": (None, "bool"),
    "any": (None, "bool"),
    "range": ([P("start_or_stop", PO), P("stop", PO, None), P("step", PO, None)], "unknown"),
    "zip": ([P("iterables", VP), P("strict", KO, False)], "unknown"),
    "enumerate": (None, "unknown"),
    "map": ([P("func", PO), P("iterables", VP)], "unknown"),
    "filter": ([P("function", PO), P("iterable", PO)], "unknown"),
    "sorted": (None, "unknown"),
    "reversed": ([P("sequence", PO)], "unknown"),
    "list": ([P("iterable", PO, ())], "unknown"),
    "tuple": ([P("iterable", PO, ())], "unknown"),
    "dict": ([P("args", VP), P("kwargs", VK)], "unknown"),
    "set": ([P("iterable", PO, ())], "unknown"),
    "slice": ([P("start_or_stop", PO), P("stop", PO, None), P("step", PO, None)], "unknown"),
    "iter": ([P("object", PO), P("sentinel", PO, None)], "unknown"),
    "next": ([P("iterator", PO), P("default", PO, None)], "unknown"),
    "type": ([P("object", PO)], "unknown"),
    "print": (None, "none"),
    "id": (None, "int"),
    "hash": (None, "int"),
    "ord": (None, "int"),
    "repr": (None, "unknown"),
    "super": ([P("type", PO, None), P("object_or_type", PO, None)], "unknown"),
}

OPERATOR_NAMES = [
    "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "neg", "pos", "abs", "invert", "inv",
    "lshift", "rshift", "and_", "or_", "xor", "not_", "truth", "eq", "ne", "lt", "le", "gt", "ge", "is_", "is_not",
    "contains", "getitem", "setitem", "delitem", "concat", "index",
    "iadd", "isub", "imul", "itruediv", "ifloordiv", "imod", "ipow", "imatmul", "iand", "ior", "ixor", "ilshift", "irshift",
]
OPERATOR_RETURNS = {"not_": "bool", "truth": "bool", "is_": "bool", "is_not": "bool", "contains": "bool",
                    "setitem": "none", "delitem": "none", "index": "int"}
MATH_INT = {"ceil", "floor", "trunc", "gcd", "lcm", "isqrt", "comb", "perm", "factorial"}
MATH_BOOL = {"isclose", "isfinite", "isinf", "isnan"}

TENSOR_ATTR_KINDS = {
    "T": "tensor", "H": "tensor", "mT": "tensor", "mH": "tensor", "real": "tensor", "imag": "tensor",
    "data": "tensor", "grad": "tensor", "ndim": "int", "itemsize": "int", "nbytes": "int", "output_nr": "int",
    "requires_grad": "bool", "retains_grad": "bool", "volatile": "bool",
}


def build_functions():
    functions = {}
    aliases = {}
    stats = collections.Counter()

    # spellings per object, in namespace order
    spellings = collections.OrderedDict()
    objects = {}
    for ns_index, (ns_name, ns) in enumerate(NAMESPACES):
        names = sorted(n for n in dir(ns) if not n.startswith("_"))
        if ns is torch:
            names += EXTRA_TORCH_NAMES
        for n in names:
            obj = getattr(ns, n)
            if not is_function_like(obj):
                continue
            objects[id(obj)] = obj
            spellings.setdefault(id(obj), []).append((ns_index, n, f"{ns_name}.{n}"))

    def add(path, obj, sig, src, returns):
        if path in functions:
            fail(f"duplicate function {path}")
        if returns not in RETURN_KINDS:
            fail(f"{path}: bad return kind {returns}")
        e = {"signature": sig if sig is not None else [], "returns": returns}
        if sig is None:
            e["signature_unknown"] = True
        functions[path] = e
        stats["sig_" + src] += 1
        stats["returns_" + returns] += 1

    for oid, sp in spellings.items():
        obj = objects[oid]
        own = getattr(obj, "__name__", None)
        first_ns = min(i for i, _, _ in sp)
        cands = [x for x in sp if x[0] == first_ns]
        cands.sort(key=lambda x: (x[1] != own, x[1]))
        canon = cands[0]
        path = canon[2]
        sig, src = function_signature(obj, canon[1], path=path)
        ret = "unknown" if boolean_dispatch_impl(obj) is not None else return_kind(path, obj, aten_name(obj, canon[1]))
        add(path, obj, sig, src, ret)
        stats["ns_" + NAMESPACES[canon[0]][0]] += 1
        for x in sp:
            if x is not canon:
                aliases[x[2]] = path
                if eval_path(x[2]) is not obj:
                    fail(f"alias {x[2]} is not {path}")

    for path, ret in TORCH_CLASSES_AS_FUNCTIONS.items():
        obj = eval_path(path)
        if not isinstance(obj, type):
            fail(f"{path} is not a class")
        sig, src = function_signature(obj, path.split(".")[-1], path=path)
        add(path, obj, sig, src, ret)
        stats["classes"] += 1

    # Tensor methods
    tensor_attrs = {}
    for n in sorted(dir(torch.Tensor)):
        if n.startswith("_"):
            continue
        raw = inspect.getattr_static(torch.Tensor, n)
        if type(raw).__name__ == "getset_descriptor" or isinstance(raw, property):
            tensor_attrs[n] = TENSOR_ATTR_KINDS.get(n, "bool" if n.startswith("is_") else "unknown")
            continue
        obj = getattr(torch.Tensor, n)
        if not callable(obj):
            continue
        path = f"torch.Tensor.{n}"
        sig, src = function_signature(obj, n, method=True, path=path)
        if sig is not None and (not sig or sig[0]["name"] != "self"):
            fail(f"{path}: signature does not start with self: {sig}")
        add(path, obj, sig, src, return_kind(path, obj, n))
        stats["tensor_methods"] += 1

    # operator
    for n in OPERATOR_NAMES:
        obj = getattr(operator, n)
        sig, src = function_signature(obj, n)
        add(f"operator.{n}", obj, sig, src, OPERATOR_RETURNS.get(n, "unknown"))
        stats["operator"] += 1
    # builtins
    for n, (hand_sig, ret) in sorted(BUILTINS_HAND.items()):
        obj = getattr(builtins, n)
        if hand_sig is None:
            sig, src = encode_signature(inspect.signature(obj)), "inspect"
        else:
            sig, src = hand_sig, "hand"
        add(f"builtins.{n}", obj, sig, src, ret)
        stats["builtins"] += 1
    # math
    for n in sorted(dir(math)):
        obj = getattr(math, n)
        if n.startswith("_") or not callable(obj):
            continue
        sig, src = function_signature(obj, n, path=f"math.{n}")
        add(f"math.{n}", obj, sig, src, "int" if n in MATH_INT else "bool" if n in MATH_BOOL else "unknown")
        stats["math"] += 1
    return functions, aliases, tensor_attrs, stats


def eval_path(path):
    parts = path.split(".")
    obj = {"torch": torch, "operator": operator, "builtins": builtins, "math": math}[parts[0]]
    for p in parts[1:]:
        obj = getattr(obj, p)
    return obj


# ---------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------


def main():
    try:
        modules = build_modules()
        functions, aliases, tensor_attrs, stats = build_functions()
    except CatalogError as e:
        print(f"CATALOG ERROR: {e}", file=sys.stderr)
        sys.exit(1)
    for k, v in sorted(stats.items()):
        print(f"  {k}: {v}")
    catalog = {
        "torch_version": torch.__version__,
        "modules": modules,
        "functions": functions,
        "aliases": aliases,
        "tensor_attributes": tensor_attrs,
        "expression_helpers": {k: HELPER_DOCS[k] for k in sorted(USED_HELPERS)},
    }
    text = json.dumps(catalog, indent=1, sort_keys=True, allow_nan=False, ensure_ascii=True) + "\n"
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        f.write(text)
    print(f"wrote {OUT} ({len(text)} bytes)")
    summary = make_summary(modules, functions, aliases, stats, len(text))
    print()
    print(summary)
    update_readme(summary)


def make_summary(modules, functions, aliases, stats, size):
    leaf = [n for n, e in modules.items() if not e["container"]]
    cont = [n for n, e in modules.items() if e["container"]]
    n_samples = sum(len(SPECS[n]["samples"]) for n in leaf)
    lazy = sorted(n for n in leaf if any(p["shape"] == "_uninitialized()" for p in modules[n]["parameters"]))
    argshape = sorted(n for n in leaf if any(isinstance(b["shape"], str) and b["shape"].startswith("_shape(")
                                             for b in modules[n]["buffers"]))
    opaque_subs = sorted(n for n in leaf if any("args" not in s and s.get("source") is None
                                                 for s in modules[n]["submodules"]))
    skipped = sorted({a for n in leaf for a in SPECS[n]["skip"]})
    unknown = sorted(k for k, v in functions.items() if v.get("signature_unknown"))
    methods = stats["tensor_methods"]
    return (
        f"Catalogue for torch {torch.__version__} ({size} bytes): {len(modules)} modules "
        f"({len(leaf)} leaf modules, all {len(leaf)} instantiated with {n_samples} sample argument sets and checked "
        f"against the real parameters, buffers, submodules and attributes; {len(cont)} containers "
        f"({', '.join(cont)}) only instantiated), including NonDynamicallyQuantizableLinear, which is not exported "
        f"by torch.nn but is the type of MultiheadAttention.out_proj. "
        f"{len(functions)} functions: {stats['ns_torch']} torch, {stats['ns_torch.nn.functional']} torch.nn.functional, "
        f"{stats['ns_torch.fft']} torch.fft, {stats['ns_torch.linalg']} torch.linalg, {stats['ns_torch.special']} "
        f"torch.special, {methods} torch.Tensor methods, {stats['operator']} operator, {stats['builtins']} builtins, "
        f"{stats['math']} math, {stats['classes']} classes called like functions; {len(aliases)} aliases. "
        f"Signatures: {stats['sig_inspect']} from inspect, {stats['sig_overrides']} from "
        f"torch.overrides.get_testing_overrides(), {stats['sig_docstring']} from the documented first docstring line, "
        f"{stats['sig_hand']} by hand, {len(unknown)} unknown (signature_unknown: mostly autocast/cudnn/mkldnn/"
        f"anomaly internals). Returns: {stats['returns_tensor']} tensor, {stats['returns_tensors']} tensors, "
        f"{stats['returns_bool']} bool, {stats['returns_int']} int, {stats['returns_none']} none, "
        f"{stats['returns_unknown']} unknown. "
        f"Not fully verifiable: {len(lazy)} lazy modules ({', '.join(lazy)}) whose parameter / buffer shapes are "
        f"unknown until the first forward (shape \"_uninitialized()\"; names, order, conditions and buffer dtypes "
        f"checked); {', '.join(argshape)} register buffers that are tensors passed to the constructor "
        f"(shape \"_shape(arg)\", dtype null); "
        f"{', '.join(opaque_subs)} own submodules built in ways the expression language cannot state "
        f"(args omitted, only name and type checked); DataParallel's attributes depend on the CUDA devices present and "
        f"are left out. Attributes deliberately not catalogued: {', '.join(skipped)}."
    )


def update_readme(summary):
    start, end = "<!-- summary:start -->", "<!-- summary:end -->"
    if not os.path.exists(README):
        return
    text = open(README).read()
    if start not in text or end not in text:
        return
    i, j = text.index(start) + len(start), text.index(end)
    new = text[:i] + "\n" + summary + "\n" + text[j:]
    if new != text:
        with open(README, "w") as f:
            f.write(new)


if __name__ == "__main__":
    main()
