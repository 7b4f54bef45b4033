#!/usr/bin/env python3
"""Writes PyTorch reference cases for the executor's kernels.

Run with a Python that has torch:

    "$VENV"/bin/python scripts/kernels/gen_kernel_refs.py

Each family gets tests/fixtures/kernels/<family>.json holding a list of
cases: named inputs, op parameters and the expected output. Inputs are f32
values written in their shortest round-tripping form; expected outputs are
computed by torch in float64 from those same f32 values, so the Rust tests
measure the f32 error of our kernels alone, not the sum of two f32 errors.

The output is deterministic (fixed seed), so re-running it must not change
the committed files unless the cases change.
"""

import json
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

OUT_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "fixtures", "kernels")

GEN = torch.Generator().manual_seed(20240611)


def rnd(*shape, scale=1.0, offset=0.0):
    """Random f32 tensor, rounded to 4 significant-ish decimals so the JSON stays small."""
    t = torch.randn(*shape, generator=GEN, dtype=torch.float64) * scale + offset
    return torch.round(t * 1000) / 1000


def f32_text(v):
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    s = str(np.float32(v))  # numpy prints the shortest string that round-trips the f32
    # The reader parses to f64 then rounds to f32; make sure that lands on
    # the same f32 (double rounding could in principle differ).
    if np.float32(float(s)) != np.float32(v):
        return float(np.float32(v))
    return float(s)


def f64_text(v):
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if float(np.float32(v)) == v:
        return f32_text(v)  # exactly an f32 (copies, max, comparisons): keep it exact
    return float(f"{v:.12g}")


def enc_input(t):
    t = t.detach().to(torch.float32)
    return {"shape": list(t.shape), "data": [f32_text(v) for v in t.flatten().tolist()]}


def enc_index(t):
    return {"shape": list(t.shape), "data": [int(v) for v in t.flatten().tolist()]}


def enc_expected(t):
    t = t.detach()
    if t.dtype in (torch.int64, torch.int32, torch.bool):
        return enc_index(t.to(torch.int64))
    return {"shape": list(t.shape), "data": [f64_text(v) for v in t.to(torch.float64).flatten().tolist()]}


def as_ref(t):
    """The f32 value of an input, widened to f64 for the reference computation."""
    return t.to(torch.float32).to(torch.float64)


class Family:
    def __init__(self, name):
        self.name = name
        self.cases = []

    def add(self, name, inputs, expected, params=None, expected_list=None):
        case = {"name": name, "inputs": {}, "params": params or {}}
        for k, v in inputs.items():
            if v is None:
                continue
            case["inputs"][k] = enc_index(v) if v.dtype == torch.int64 else enc_input(v)
        if expected is not None:
            case["expected"] = enc_expected(expected)
        if expected_list is not None:
            case["expected_list"] = [enc_expected(e) for e in expected_list]
        self.cases.append(case)

    def write(self):
        os.makedirs(OUT_DIR, exist_ok=True)
        path = os.path.join(OUT_DIR, f"{self.name}.json")
        with open(path, "w") as f:
            json.dump({"generator": "scripts/kernels/gen_kernel_refs.py", "torch": torch.__version__.split("+")[0], "cases": self.cases}, f, separators=(",", ":"))
            f.write("\n")
        return path, os.path.getsize(path)


def r(t):
    return as_ref(t)


def elementwise():
    fam = Family("elementwise")
    x = torch.cat([
        torch.linspace(-10, 10, 81, dtype=torch.float64),
        torch.tensor([0.0, -0.0, 1e-3, -1e-3, 0.5, 1.5, 2.5, -0.5, -2.5, 30.0, -30.0, 3.0, -3.0, 6.0, 1e-6, -1e-6], dtype=torch.float64),
    ]).reshape(97)
    x = r(x)
    unary = {
        "relu": F.relu,
        "relu6": F.relu6,
        "leaky_relu_0.2": lambda v: F.leaky_relu(v, 0.2),
        "gelu": lambda v: F.gelu(v, approximate="none"),
        "gelu_tanh": lambda v: F.gelu(v, approximate="tanh"),
        "silu": F.silu,
        "sigmoid": torch.sigmoid,
        "logsigmoid": F.logsigmoid,
        "tanh": torch.tanh,
        "hardswish": F.hardswish,
        "hardsigmoid": F.hardsigmoid,
        "hardtanh": F.hardtanh,
        "elu": F.elu,
        "elu_0.5": lambda v: F.elu(v, 0.5),
        "selu": F.selu,
        "celu_2": lambda v: F.celu(v, 2.0),
        "softplus": F.softplus,
        "softplus_b2_t5": lambda v: F.softplus(v, beta=2.0, threshold=5.0),
        "mish": F.mish,
        "exp": torch.exp,
        "expm1": torch.expm1,
        "log": torch.log,
        "log1p": torch.log1p,
        "sqrt": torch.sqrt,
        "rsqrt": torch.rsqrt,
        "neg": torch.neg,
        "abs": torch.abs,
        "erf": torch.erf,
        "sin": torch.sin,
        "round": torch.round,
        "reciprocal": torch.reciprocal,
        "clamp": lambda v: torch.clamp(v, -0.5, 0.75),
        "clamp_min": lambda v: torch.clamp(v, min=0.1),
    }
    for name, fn in unary.items():
        fam.add(f"unary/{name}", {"x": x}, fn(x))
    # torch evaluates gelu as 0.5·x·(1 + erf(x/√2)) (resp. 1 + tanh(u)) even
    # in float64, which cancels to garbage below about x = -5.5. The kernels
    # use erfc / sigmoid forms that stay accurate there, so the torch-formula
    # cases stop at -5.5 and the tail cases use the algebraically identical
    # forms, still evaluated by torch in float64.
    main = x[x >= -5.5]
    fam.cases = [c for c in fam.cases if c["name"] not in ("unary/gelu", "unary/gelu_tanh")]
    fam.add("unary/gelu", {"x": main}, F.gelu(main, approximate="none"))
    fam.add("unary/gelu_tanh", {"x": main}, F.gelu(main, approximate="tanh"))
    fam.add("unary/gelu_tail", {"x": x}, 0.5 * x * torch.special.erfc(-x / math.sqrt(2.0)))
    u = math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)
    fam.add("unary/gelu_tanh_tail", {"x": x}, x * torch.sigmoid(2.0 * u))

    a = rnd(3, 1, 4, scale=2)
    b = rnd(2, 4, scale=2)
    ints_a = torch.randint(-3, 4, (3, 1, 4), generator=GEN).double()
    ints_b = torch.randint(-3, 4, (2, 4), generator=GEN).double()
    away_from_zero = b.sign() * (b.abs() + 0.5)
    away_from_zero[away_from_zero == 0] = 1.0
    binary = {
        "add": (a, b, torch.add),
        "sub": (a, b, torch.sub),
        "mul": (a, b, torch.mul),
        "div": (a, away_from_zero, torch.div),
        "pow": (a.abs() + 0.1, b, torch.pow),
        "maximum": (ints_a, b.round(), torch.maximum),
        "minimum": (ints_a, b.round(), torch.minimum),
        "eq": (ints_a, ints_b, torch.eq),
        "ne": (ints_a, ints_b, torch.ne),
        "lt": (ints_a, ints_b, torch.lt),
        "le": (ints_a, ints_b, torch.le),
        "gt": (ints_a, ints_b, torch.gt),
        "ge": (ints_a, ints_b, torch.ge),
        "floor_divide": (a * 4, away_from_zero, torch.floor_divide),
        "remainder": (a * 4, away_from_zero, torch.remainder),
    }
    for name, (u, v, fn) in binary.items():
        u, v = r(u), r(v)
        fam.add(f"binary/{name}", {"a": u, "b": v}, fn(u, v).double())
    cond = (torch.rand(2, 1, 3, generator=GEN) > 0.5).double()
    wa = rnd(4, 3)
    wb = rnd(1)
    fam.add("where", {"cond": cond, "a": wa, "b": wb}, torch.where(cond != 0, r(wa), r(wb)))
    return fam


def linear():
    fam = Family("linear")
    mm_cases = {
        "2d": ((5, 7), (7, 3)),
        "1d_1d": ((6,), (6,)),
        "1d_2d": ((4,), (4, 3)),
        "2d_1d": ((3, 4), (4,)),
        "bcast_b1mk_nkp": ((2, 1, 3, 4), (5, 4, 6)),
        "1d_3d": ((4,), (2, 4, 3)),
        "3d_1d": ((2, 3, 4), (4,)),
        "4d_2d": ((2, 3, 4, 5), (5, 2)),
        "2d_3d": ((3, 4), (2, 4, 5)),
        "3d_3d_bcast": ((1, 3, 4), (2, 4, 5)),
    }
    for name, (sa, sb) in mm_cases.items():
        a, b = rnd(*sa), rnd(*sb)
        fam.add(f"matmul/{name}", {"a": a, "b": b}, torch.matmul(r(a), r(b)))
    a, b = rnd(3, 4, 5), rnd(3, 5, 2)
    fam.add("bmm", {"a": a, "b": b}, torch.bmm(r(a), r(b)))
    inp, a, b = rnd(3), rnd(2, 4), rnd(4, 3)
    fam.add("addmm", {"input": inp, "a": a, "b": b}, torch.addmm(r(inp), r(a), r(b), beta=0.5, alpha=2.0), {"beta": 0.5, "alpha": 2.0})
    x, w, bias = rnd(2, 3, 8), rnd(5, 8), rnd(5)
    fam.add("linear/3d_bias", {"x": x, "weight": w, "bias": bias}, F.linear(r(x), r(w), r(bias)))
    x, w = rnd(8), rnd(4, 8)
    fam.add("linear/1d_nobias", {"x": x, "weight": w}, F.linear(r(x), r(w)))
    x, w, bias = rnd(4, 8), rnd(6, 8), rnd(6)
    fam.add("linear_gelu", {"x": x, "weight": w, "bias": bias}, F.gelu(F.linear(r(x), r(w), r(bias))))
    return fam


def conv():
    fam = Family("conv")

    def c2(name, xs, ws, bias=True, stride=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1):
        x, w = rnd(*xs), rnd(*ws)
        b = rnd(ws[0]) if bias else None
        y = F.conv2d(r(x), r(w), None if b is None else r(b), stride=stride, padding=padding, dilation=dilation, groups=groups)
        pad_param = padding if isinstance(padding, str) else list(padding)
        fam.add(f"conv2d/{name}", {"x": x, "weight": w, "bias": b}, y,
                {"stride": list(stride), "padding": pad_param, "dilation": list(dilation), "groups": groups})

    c2("basic", (2, 3, 8, 8), (4, 3, 3, 3))
    c2("groups3", (1, 6, 7, 7), (9, 2, 3, 3), padding=(1, 1), groups=3)
    c2("depthwise", (2, 4, 9, 9), (4, 1, 3, 3), padding=(1, 1), groups=4)
    c2("depthwise_mult2_stride2", (1, 3, 10, 10), (6, 1, 3, 3), stride=(2, 2), padding=(1, 1), groups=3, bias=False)
    c2("stride2_pad1", (1, 3, 9, 9), (5, 3, 3, 3), stride=(2, 2), padding=(1, 1))
    c2("dilation2", (1, 2, 11, 11), (3, 2, 3, 3), padding=(2, 2), dilation=(2, 2))
    c2("asymmetric", (2, 2, 9, 8), (4, 2, 3, 2), stride=(2, 1), padding=(0, 2), dilation=(1, 2))
    c2("same_even_kernel", (1, 2, 6, 7), (3, 2, 4, 2), padding="same")
    c2("same_dilated", (1, 2, 8, 8), (2, 2, 3, 3), padding="same", dilation=(2, 1))
    c2("valid", (1, 2, 6, 6), (2, 2, 3, 3), padding="valid", bias=False)
    c2("pointwise", (2, 5, 4, 6), (3, 5, 1, 1))
    c2("pointwise_grouped", (1, 4, 3, 3), (6, 2, 1, 1), groups=2)

    def c1(name, xs, ws, stride=1, padding=0, dilation=1, groups=1):
        x, w, b = rnd(*xs), rnd(*ws), rnd(ws[0])
        y = F.conv1d(r(x), r(w), r(b), stride=stride, padding=padding, dilation=dilation, groups=groups)
        fam.add(f"conv1d/{name}", {"x": x, "weight": w, "bias": b}, y,
                {"stride": stride, "padding": padding, "dilation": dilation, "groups": groups})

    c1("grouped_strided_dilated", (2, 4, 15), (6, 2, 3), stride=2, padding=1, dilation=2, groups=2)
    c1("same", (1, 3, 10), (2, 3, 4), padding="same")

    def ct2(name, xs, ws, stride, padding, output_padding, dilation, groups):
        x, w, b = rnd(*xs), rnd(*ws), rnd(ws[1] * groups)
        y = F.conv_transpose2d(r(x), r(w), r(b), stride=stride, padding=padding, output_padding=output_padding,
                               groups=groups, dilation=dilation)
        fam.add(f"conv_transpose2d/{name}", {"x": x, "weight": w, "bias": b}, y,
                {"stride": list(stride), "padding": list(padding), "output_padding": list(output_padding),
                 "dilation": list(dilation), "groups": groups})

    ct2("stride2_outpad1", (1, 4, 5, 5), (4, 3, 3, 3), (2, 2), (1, 1), (1, 1), (1, 1), 1)
    ct2("groups_dilation", (2, 4, 4, 4), (4, 2, 3, 3), (1, 1), (0, 0), (0, 0), (2, 2), 2)
    ct2("asymmetric", (1, 2, 3, 4), (2, 3, 2, 3), (3, 2), (1, 0), (2, 1), (1, 1), 1)

    x, w, b = rnd(2, 4, 6), rnd(4, 3, 3), rnd(3)
    y = F.conv_transpose1d(r(x), r(w), r(b), stride=2, padding=1, output_padding=1, groups=1, dilation=1)
    fam.add("conv_transpose1d", {"x": x, "weight": w, "bias": b}, y,
            {"stride": 2, "padding": 1, "output_padding": 1, "groups": 1, "dilation": 1})
    return fam


def norm():
    fam = Family("norm")
    x = rnd(2, 3, 4, 5, scale=2, offset=1)
    m, v = rnd(3), rnd(3).abs() + 0.5
    w, b = rnd(3), rnd(3)
    fam.add("batch_norm/4d", {"x": x, "running_mean": m, "running_var": v, "weight": w, "bias": b},
            F.batch_norm(r(x), r(m), r(v), r(w), r(b), training=False, eps=1e-5), {"eps": 1e-5})
    x = rnd(4, 3)
    fam.add("batch_norm/2d_no_affine", {"x": x, "running_mean": m, "running_var": v},
            F.batch_norm(r(x), r(m), r(v), None, None, training=False, eps=1e-3), {"eps": 1e-3})
    x, w, b = rnd(2, 5, 8), rnd(8), rnd(8)
    fam.add("layer_norm/last_dim", {"x": x, "weight": w, "bias": b}, F.layer_norm(r(x), [8], r(w), r(b), 1e-5),
            {"normalized_shape": [8], "eps": 1e-5})
    fam.add("layer_norm/two_dims_no_affine", {"x": x}, F.layer_norm(r(x), [5, 8], None, None, 1e-5),
            {"normalized_shape": [5, 8], "eps": 1e-5})
    # A large common offset is where one-pass f32 variance falls apart.
    xo = rnd(3, 16, scale=0.1, offset=300.0)
    fam.add("layer_norm/large_offset", {"x": xo}, F.layer_norm(r(xo), [16], None, None, 1e-5),
            {"normalized_shape": [16], "eps": 1e-5})
    x, w, b = rnd(2, 6, 4, 4), rnd(6), rnd(6)
    fam.add("group_norm/4d", {"x": x, "weight": w, "bias": b}, F.group_norm(r(x), 3, r(w), r(b), 1e-5),
            {"num_groups": 3, "eps": 1e-5})
    x = rnd(3, 4, 7)
    fam.add("group_norm/3d_no_affine", {"x": x}, F.group_norm(r(x), 2, None, None, 1e-5), {"num_groups": 2, "eps": 1e-5})
    x, w = rnd(2, 3, 8), rnd(8)
    fam.add("rms_norm/weight", {"x": x, "weight": w}, F.rms_norm(r(x), [8], r(w), 1e-6), {"normalized_shape": [8], "eps": 1e-6})
    # eps=None means finfo(dtype).eps; the reference runs in f64, so pass
    # float32's eps explicitly to describe what an f32 model computes.
    fam.add("rms_norm/default_eps", {"x": x}, F.rms_norm(r(x), [3, 8], None, float(torch.finfo(torch.float32).eps)),
            {"normalized_shape": [3, 8]})
    x, w, b = rnd(2, 3, 5, 5), rnd(3), rnd(3)
    fam.add("instance_norm", {"x": x, "weight": w, "bias": b}, F.instance_norm(r(x), weight=r(w), bias=r(b), eps=1e-5),
            {"eps": 1e-5})
    return fam


def pool():
    fam = Family("pool")

    def mp(name, xs, kernel, stride, padding=(0, 0), dilation=(1, 1), ceil_mode=False):
        x = rnd(*xs)
        y = F.max_pool2d(r(x), kernel, stride, padding, dilation, ceil_mode=ceil_mode)
        fam.add(f"max_pool2d/{name}", {"x": x}, y, {"kernel": list(kernel), "stride": list(stride), "padding": list(padding),
                                                    "dilation": list(dilation), "ceil_mode": ceil_mode})

    mp("k2s2", (2, 3, 8, 8), (2, 2), (2, 2))
    mp("k3s2p1_ceil", (1, 2, 8, 8), (3, 3), (2, 2), (1, 1), ceil_mode=True)
    mp("k3s2p1_ceil_odd", (1, 2, 7, 7), (3, 3), (2, 2), (1, 1), ceil_mode=True)
    mp("k2s2_ceil_odd", (1, 1, 5, 7), (2, 2), (2, 2), ceil_mode=True)
    mp("k2s3p1_ceil_drop_last", (1, 1, 5, 5), (2, 2), (3, 3), (1, 1), ceil_mode=True)
    mp("dilation2", (1, 2, 9, 9), (3, 3), (1, 1), (1, 1), (2, 2))
    mp("rect_dilated_ceil", (2, 1, 10, 9), (3, 2), (2, 3), (1, 1), (2, 1), ceil_mode=True)
    mp("unbatched", (3, 6, 6), (3, 3), (3, 3))

    def ap(name, xs, kernel, stride, padding=(0, 0), ceil_mode=False, count_include_pad=True, divisor_override=None):
        x = rnd(*xs)
        y = F.avg_pool2d(r(x), kernel, stride, padding, ceil_mode=ceil_mode, count_include_pad=count_include_pad,
                         divisor_override=divisor_override)
        params = {"kernel": list(kernel), "stride": list(stride), "padding": list(padding), "ceil_mode": ceil_mode,
                  "count_include_pad": count_include_pad}
        if divisor_override is not None:
            params["divisor_override"] = divisor_override
        fam.add(f"avg_pool2d/{name}", {"x": x}, y, params)

    ap("k2s2", (2, 3, 8, 8), (2, 2), (2, 2))
    ap("k3s2p1_ceil_incl", (1, 2, 8, 8), (3, 3), (2, 2), (1, 1), ceil_mode=True, count_include_pad=True)
    ap("k3s2p1_ceil_excl", (1, 2, 8, 8), (3, 3), (2, 2), (1, 1), ceil_mode=True, count_include_pad=False)
    ap("k3s2p1_incl", (1, 2, 7, 7), (3, 3), (2, 2), (1, 1))
    ap("k2s2_ceil_odd", (1, 1, 5, 7), (2, 2), (2, 2), ceil_mode=True)
    ap("k3s3p1_ceil_overhang_incl", (1, 1, 7, 8), (3, 3), (3, 3), (1, 1), ceil_mode=True)
    ap("divisor_override", (1, 2, 6, 6), (3, 3), (2, 2), (1, 1), divisor_override=5)
    ap("rect", (2, 1, 9, 10), (2, 3), (1, 2), (1, 1), count_include_pad=False)

    for name, xs, out in [("7x9_to_3x4", (2, 3, 7, 9), (3, 4)), ("5x5_to_2x2", (1, 2, 5, 5), (2, 2)),
                          ("10x7_to_4x3", (1, 1, 10, 7), (4, 3)), ("3x3_to_5x4_upsample", (1, 2, 3, 3), (5, 4)),
                          ("to_1x1", (2, 2, 6, 5), (1, 1))]:
        x = rnd(*xs)
        fam.add(f"adaptive_avg_pool2d/{name}", {"x": x}, F.adaptive_avg_pool2d(r(x), out), {"output_size": list(out)})
        fam.add(f"adaptive_max_pool2d/{name}", {"x": x}, F.adaptive_max_pool2d(r(x), out), {"output_size": list(out)})
    for name, xs, out in [("10_to_3", (2, 3, 10), 3), ("7_to_4", (1, 2, 7), 4), ("unbatched_5_to_5", (2, 5), 5)]:
        x = rnd(*xs)
        fam.add(f"adaptive_avg_pool1d/{name}", {"x": x}, F.adaptive_avg_pool1d(r(x), out), {"output_size": out})
    x = rnd(2, 2, 11)
    fam.add("adaptive_max_pool1d", {"x": x}, F.adaptive_max_pool1d(r(x), 4), {"output_size": 4})
    x = rnd(2, 3, 11)
    fam.add("max_pool1d", {"x": x}, F.max_pool1d(r(x), 3, 2, 1, 2, ceil_mode=True),
            {"kernel": 3, "stride": 2, "padding": 1, "dilation": 2, "ceil_mode": True})
    fam.add("avg_pool1d", {"x": x}, F.avg_pool1d(r(x), 4, 3, 2, ceil_mode=True, count_include_pad=False),
            {"kernel": 4, "stride": 3, "padding": 2, "ceil_mode": True, "count_include_pad": False})
    return fam


def softmax():
    fam = Family("softmax")
    x = rnd(2, 5, 3, 4, scale=3)
    for dim in [1, -1, 0]:
        fam.add(f"softmax/4d_dim{dim}", {"x": x}, torch.softmax(r(x), dim), {"dim": dim})
        fam.add(f"log_softmax/4d_dim{dim}", {"x": x}, torch.log_softmax(r(x), dim), {"dim": dim})
    big = rnd(3, 7, scale=40, offset=500)
    fam.add("softmax/large_logits", {"x": big}, torch.softmax(r(big), 1), {"dim": 1})
    fam.add("log_softmax/large_logits", {"x": big}, torch.log_softmax(r(big), 1), {"dim": 1})
    return fam


def reduce():
    fam = Family("reduce")
    x = rnd(2, 3, 4, 5, scale=2, offset=0.5)
    ops = {
        "sum": lambda t, d, k: torch.sum(t, d, keepdim=k),
        "mean": lambda t, d, k: torch.mean(t, d, keepdim=k),
        "amax": lambda t, d, k: torch.amax(t, d, keepdim=k),
        "amin": lambda t, d, k: torch.amin(t, d, keepdim=k),
        "var_unbiased": lambda t, d, k: torch.var(t, d, unbiased=True, keepdim=k),
        "var_biased": lambda t, d, k: torch.var(t, d, unbiased=False, keepdim=k),
        "std": lambda t, d, k: torch.std(t, d, unbiased=True, keepdim=k),
    }
    for op, fn in ops.items():
        for dims, keep in [([1, 3], True), ([0], False), ([-1], False), ([0, 2], True), ([0, 1, 2, 3], False)]:
            fam.add(f"reduce/{op}_{'_'.join(map(str, dims))}_{int(keep)}", {"x": x}, fn(r(x), dims, keep),
                    {"op": op, "dims": dims, "keepdim": keep})
    y = torch.randint(0, 5, (3, 4, 5), generator=GEN).double()  # ties on purpose
    for dim, keep in [(1, False), (-1, True), (None, False), (None, True)]:
        params = {"keepdim": keep}
        if dim is not None:
            params["dim"] = dim
        fam.add(f"argmax/{dim}_{int(keep)}", {"x": y}, torch.argmax(y, dim=dim, keepdim=keep), params)
    return fam


def shape_ops():
    fam = Family("shape_ops")
    x = rnd(2, 3, 4)
    fam.add("permute", {"x": x}, r(x).permute(2, 0, 1), {"dims": [2, 0, 1]})
    x = rnd(4, 5, 6)
    fam.add("slice", {"x": x}, r(x)[-3:, ::2, 1:-1:3], {"specs": [[-3, None, 1], [None, None, 2], [1, -1, 3]]})
    x = rnd(2, 3, 4)
    fam.add("pad", {"x": x}, F.pad(r(x), (1, -2, 2, 0), value=0.5), {"pads": [1, -2, 2, 0], "value": 0.5})
    x = rnd(2, 3)
    fam.add("repeat", {"x": x}, r(x).repeat(2, 1, 3), {"repeats": [2, 1, 3]})
    x = rnd(3, 1)
    fam.add("expand", {"x": x}, r(x).expand(2, -1, 4), {"sizes": [2, -1, 4]})
    x = rnd(2, 7)
    fam.add("chunk", {"x": x}, None, {"chunks": 3, "dim": 1}, expected_list=list(torch.chunk(r(x), 3, 1)))
    a, b = rnd(2, 3, 4), rnd(2, 1, 4)
    fam.add("cat", {"a": a, "b": b}, torch.cat([r(a), r(b)], -2), {"dim": -2})
    return fam


def embedding():
    fam = Family("embedding")
    w = rnd(10, 4)
    idx = torch.randint(0, 10, (2, 3), generator=GEN)
    fam.add("embedding", {"indices": idx, "weight": w}, F.embedding(idx, r(w)))
    return fam


def init():
    fam = Family("init")
    from torch.nn import init as tinit
    for shape in [(10, 20), (8, 3, 3, 3), (16, 4, 5), (6, 2, 3, 3, 3), (1, 1)]:
        t = torch.empty(shape)
        fi, fo = tinit._calculate_fan_in_and_fan_out(t)
        gain = tinit.calculate_gain("leaky_relu", math.sqrt(5))
        bound = math.sqrt(3.0) * gain / math.sqrt(fi)
        fam.add(f"fan/{'x'.join(map(str, shape))}", {}, None,
                {"shape": list(shape), "expected_fans": [fi, fo], "kaiming_a_sqrt5_bound": bound})
    gains = {k: tinit.calculate_gain(k) for k in ["linear", "sigmoid", "tanh", "relu", "leaky_relu", "selu"]}
    gains["leaky_relu_0.2"] = tinit.calculate_gain("leaky_relu", 0.2)
    fam.add("gains", {}, None, gains)
    return fam


def attention():
    fam = Family("attention")
    # Head counts and lengths that leave partial blocks of query rows (the kernel takes 32
    # at a time), L != S, a value width unlike the key width, and batch dims that broadcast.
    q, k, v = rnd(1, 3, 37, 8), rnd(1, 3, 37, 8), rnd(1, 3, 37, 8)
    fam.add("plain", {"q": q, "k": k, "v": v}, F.scaled_dot_product_attention(r(q), r(k), r(v)))
    fam.add("causal", {"q": q, "k": k, "v": v},
            F.scaled_dot_product_attention(r(q), r(k), r(v), is_causal=True), {"is_causal": True})
    fam.add("scale", {"q": q, "k": k, "v": v},
            F.scaled_dot_product_attention(r(q), r(k), r(v), scale=0.3), {"scale": 0.3})
    q2, k2, v2 = rnd(2, 1, 5, 6), rnd(1, 4, 11, 6), rnd(4, 11, 3)
    fam.add("broadcast_batch", {"q": q2, "k": k2, "v": v2},
            F.scaled_dot_product_attention(r(q2), r(k2), r(v2)))
    add = rnd(5, 11)
    fam.add("float_mask", {"q": q2, "k": k2, "v": v2, "mask": add},
            F.scaled_dot_product_attention(r(q2), r(k2), r(v2), attn_mask=r(add)))
    keep = torch.rand(2, 4, 5, 11, generator=GEN) > 0.3
    keep[..., 0] = True  # no fully masked rows (NaN in torch)
    fam.add("bool_mask", {"q": q2, "k": k2, "v": v2, "keep": keep.to(torch.float32)},
            F.scaled_dot_product_attention(r(q2), r(k2), r(v2), attn_mask=keep))
    return fam


def main():
    total = 0
    for build in [elementwise, linear, conv, norm, pool, softmax, reduce, shape_ops, embedding, init, attention]:
        path, size = build().write()
        total += size
        print(f"{os.path.relpath(path)}: {size} bytes")
    print(f"total: {total} bytes")
    if total >= 1 << 20:
        sys.exit("fixtures exceed 1 MB")


if __name__ == "__main__":
    main()
