"""Mistake blocks for gen_mistakes.py: one small, shape-preserving piece of model code per
call, correct (``wrong=False``, used as an ordinary block by the compositional bases) or with
one shape mistake of the given kind (``wrong=True``).

A block is a `Blk`: layer constructors (``name -> "nn.Linear(16, 16)"``) and body lines that
read and write the running tensor ``{t}`` and refer to their layers as ``{name}``. The site
wrapper in gen_mistakes.py decides where the layers live (``self.x``, a submodule, a
Sequential, ...) and fills the placeholders. Temporaries are named from a small fixed set
(u v a s g q kk vv o idx ctx hx cx) that the hand-written bases never use.

Every kind function takes ``(rng, S, wrong)`` with ``S`` the running tensor's concrete
shape, and returns a `Blk` or None when it does not apply to that shape. A wrong block and its
correct twin are built from the same random choices, so the two differ only in the mistake.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Blk:
    tag: str
    layers: list = field(default_factory=list)  # [(name, ctor)]
    body: list = field(default_factory=list)
    single: bool = False  # body is exactly "{t} = {L}({t})" for its one layer
    einops: bool = False


def single(tag, name, ctor):
    return Blk(tag, [(name, ctor)], ["{t} = {%s}({t})" % name], single=True)


def bcast_ok(a, b):
    for x, y in zip(reversed(a), reversed(b)):
        if x != y and x != 1 and y != 1:
            return False
    return True


def off(rng, n, lo=1):
    """A size that differs from n (a plausible wrong one)."""
    return rng.choice([n + 1, n - 1 if n > lo + 1 else n + 2, n * 2, n + 4])


def seq(S, lines):
    """Run `lines` (written over a [B, N, F] sequence `{u}`) on the running tensor: rank 3 is
    already one, rank 2 gets a length-1 sequence, rank 4 is read channels-last."""
    r = len(S)
    if r == 3:
        return [l.replace("{u}", "{t}") for l in lines]
    if r == 2:
        return ["u = {t}.unsqueeze(1)"] + [l.replace("{u}", "u") for l in lines] + ["{t} = u.squeeze(1)"]
    if r == 4:
        return (["u = {t}.flatten(2).transpose(1, 2)"] + [l.replace("{u}", "u") for l in lines]
                + ["{t} = u.transpose(1, 2).reshape({t}.shape)"])
    return None


def seq_dims(S):
    r = len(S)
    if r == 2:
        return S[0], 1, S[1]
    if r == 3:
        return S[0], S[1], S[2]
    if r == 4:
        return S[0], S[2] * S[3], S[1]
    return None


def chan(S, lines):
    """Run `lines` (over a channels-first `{c}`: [B, C, H, W] or [B, C, L]) on the running
    tensor; a rank-3 sequence [B, N, D] is transposed to [B, D, N]."""
    r = len(S)
    if r == 4:
        return [l.replace("{c}", "{t}") for l in lines]
    if r == 3:
        return ["a = {t}.transpose(1, 2)"] + [l.replace("{c}", "a") for l in lines] + ["{t} = a.transpose(1, 2)"]
    return None


def chan_dims(S):
    if len(S) == 4:
        return S[1], S[2:], "2d"
    if len(S) == 3:
        return S[2], [S[1]], "1d"
    return None


# ---------------------------------------------------------------- matmul family
def k_linear_in(rng, S, wrong):
    B, N, Fd = seq_dims(S) or (0, 0, 0)
    if not Fd:
        return None
    v = rng.choice(["res", "mlp", "bottleneck", "se"] if len(S) == 4 else ["res", "mlp", "bottleneck"])
    if v == "res":
        fin = off(rng, Fd) if wrong else Fd
        return Blk("proj", [("proj", f"nn.Linear({fin}, {Fd})")], seq(S, ["{u} = {u} + {proj}({u})"]))
    if v == "mlp":
        hid = rng.choice([2, 4]) * Fd
        h2 = off(rng, hid) if wrong else hid
        return Blk("mlp", [("fc1", f"nn.Linear({Fd}, {hid})"), ("fc2", f"nn.Linear({h2}, {Fd})")],
                   seq(S, ["{u} = {u} + {fc2}(F.gelu({fc1}({u})))"]))
    if v == "bottleneck":
        half = f"{Fd} // 2 + 1" if wrong else f"{Fd} // 2"
        return Blk("bottleneck", [("down", f"nn.Linear({Fd}, {Fd} // 2)"), ("up", f"nn.Linear({half}, {Fd})")],
                   seq(S, ["{u} = {u} + {up}(torch.relu({down}({u})))"]))
    C, H, W = S[1], S[2], S[3]
    if wrong and H * W == 1:
        return None
    pool = "s = {t}.flatten(1)" if wrong else "s = {t}.mean((2, 3))"
    return Blk("se", [("fc", f"nn.Linear({C}, {C})")],
               [pool, "{t} = {t} * torch.sigmoid({fc}(s))[:, :, None, None]"])


def param(shape):
    return "nn.Parameter(torch.randn(%s) * 0.02)" % ", ".join(str(d) for d in shape)


def k_matmul_inner(rng, S, wrong):
    B, N, Fd = seq_dims(S) or (0, 0, 0)
    if not Fd:
        return None
    v = rng.choice(["param", "scores", "lowrank"])
    if v == "scores" and N == Fd:
        v = "param"
    if v == "param":
        rows = off(rng, Fd) if wrong else Fd
        return Blk("mix", [("w", param([rows, Fd]))], seq(S, ["{u} = {u} + {u} @ {w}"]))
    if v == "scores":
        kt = "{u}" if wrong else "{u}.transpose(-2, -1)"
        return Blk("selfmix", [], seq(S, [f"a = torch.softmax({{u}} @ {kt} / {Fd} ** 0.5, dim=-1)",
                                          "{u} = {u} + torch.matmul(a, {u})"]))
    rk = rng.choice([2, 4, 8])
    r2 = rk + 1 if wrong else rk
    return Blk("lowrank", [("wa", param([Fd, rk])), ("wb", param([r2, Fd]))],
               seq(S, ["{u} = {u} + torch.matmul({u} @ {wa}, {wb})"]))


def k_bmm_inner(rng, S, wrong):
    B, N, Fd = seq_dims(S) or (0, 0, 0)
    if not Fd:
        return None
    v = rng.choice(["attn", "param"])
    if v == "attn" and N != Fd:
        second = "torch.bmm(a, {u}.transpose(1, 2))" if wrong else "torch.bmm(a, {u})"
        return Blk("bmmattn", [], seq(S, ["a = torch.bmm({u}, {u}.transpose(1, 2)).softmax(-1)",
                                          "{u} = {u} + " + second]))
    rows = off(rng, Fd) if wrong else Fd
    return Blk("bmix", [("w", param([rows, Fd]))],
               seq(S, ["{u} = {u} + torch.bmm({u}, {w}.unsqueeze(0).expand({u}.shape[0], -1, -1))"]))


def k_mm_inner(rng, S, wrong):
    B, N, Fd = seq_dims(S) or (0, 0, 0)
    if not Fd:
        return None
    v = rng.choice(["param", "reshape"])
    if v == "reshape" and B * N != Fd:
        lhs = f"{{u}}.reshape({Fd}, -1)" if wrong else f"{{u}}.reshape(-1, {Fd})"
        return Blk("flatmix", [("w", param([Fd, Fd]))],
                   seq(S, [f"s = torch.mm({lhs}, {{w}})", "{u} = {u} + s.view({u}.shape)"]))
    rows = off(rng, Fd) if wrong else Fd
    return Blk("flatmix", [("w", param([rows, Fd]))],
               seq(S, [f"s = torch.mm({{u}}.reshape(-1, {Fd}), {{w}})", "{u} = {u} + s.view({u}.shape)"]))


def k_einsum_dims(rng, S, wrong):
    B, N, Fd = seq_dims(S) or (0, 0, 0)
    if not Fd:
        return None
    v = rng.choice(["param", "subscripts", "attn"])
    if v == "attn" and (N == Fd or N < 2):  # a length-1 axis would broadcast
        v = "param"
    if v == "param":
        rows = off(rng, Fd) if wrong else Fd
        return Blk("emix", [("w", param([rows, Fd]))], seq(S, ["{u} = {u} + torch.einsum('bnd,de->bne', {u}, {w})"]))
    if v == "subscripts":
        eq = "'bd,de->be'" if wrong else "'bnd,de->bne'"
        return Blk("emix", [("w", param([Fd, Fd]))], seq(S, [f"{{u}} = {{u}} + torch.einsum({eq}, {{u}}, {{w}})"]))
    eq = "'bnd,bdm->bnm'" if wrong else "'bnd,bmd->bnm'"
    return Blk("eattn", [], seq(S, [f"a = torch.einsum({eq}, {{u}}, {{u}}).softmax(-1)",
                                    "{u} = {u} + torch.einsum('bnm,bmd->bnd', a, {u})"]))


# ---------------------------------------------------------------- convolutions
def k_conv_in_channels(rng, S, wrong):
    cd = chan_dims(S)
    if not cd:
        return None
    C, sp, d = cd
    v = rng.choice(["res", "pair", "cat", "notranspose"] if d == "1d" else ["res", "pair", "cat", "plain"])
    if v == "notranspose" and S[1] == S[2]:
        v = "res"
    if v == "plain":
        cin = off(rng, C) if wrong else C
        return single("conv", "conv", f"nn.Conv2d({cin}, {C}, 3, padding=1)")
    if v == "res":
        cin = off(rng, C) if wrong else C
        return Blk("conv", [("conv", f"nn.Conv{d}({cin}, {C}, 3, padding=1)")],
                   chan(S, ["{c} = {c} + F.relu({conv}({c}))"]))
    if v == "pair":
        hid = rng.choice([C, 2 * C, max(2, C // 2)])
        h2 = off(rng, hid) if wrong else hid
        return Blk("convpair", [("c1", f"nn.Conv{d}({C}, {hid}, 1)"), ("c2", f"nn.Conv{d}({h2}, {C}, 3, padding=1)")],
                   chan(S, ["{c} = {c} + {c2}(F.relu({c1}({c})))"]))
    if v == "cat":
        parts = "[{c}, {branch}({c}), {c}]" if wrong else "[{c}, {branch}({c})]"
        return Blk("convcat", [("branch", f"nn.Conv{d}({C}, {C}, 3, padding=1)"), ("fuse", f"nn.Conv{d}({2 * C}, {C}, 1)")],
                   chan(S, [f"{{c}} = {{fuse}}(torch.cat({parts}, dim=1))"]))
    # conv1d applied without moving channels first
    return Blk("tconv", [("conv", f"nn.Conv1d({C}, {C}, 3, padding=1)")],
               ["{t} = {t} + " + ("{conv}({t})" if wrong else "{conv}({t}.transpose(1, 2)).transpose(1, 2)")])


def k_conv_groups(rng, S, wrong):
    cd = chan_dims(S)
    if not cd:
        return None
    C, sp, d = cd
    gs = [g for g in (2, 4, 8) if C % g == 0 and g < C]
    if not gs:
        return None
    g = rng.choice(gs)
    v = rng.choice(["functional", "depthwise"])
    if v == "functional":
        g2 = [x for x in (2, 3, 4, 8) if x != g]
        groups = rng.choice(g2) if wrong else g
        k = [3] * len(sp)
        return Blk("gconv", [("weight", param([C, C // g] + k))],
                   chan(S, [f"{{c}} = {{c}} + F.conv{d}({{c}}, {{weight}}, padding=1, groups={groups})"]))
    C2 = rng.choice([x for x in (C // 2, C * 2, C + g) if x != C and x > 0]) if wrong else C
    return Blk("dwconv", [("dw", f"nn.Conv{d}({C2}, {C2}, 3, padding=1, groups={C2})"), ("pw", f"nn.Conv{d}({C2}, {C}, 1)")],
               chan(S, ["{c} = {c} + {pw}(F.relu({dw}({c})))"]))


def k_conv_too_small(rng, S, wrong):
    cd = chan_dims(S)
    if not cd:
        return None
    C, sp, d = cd
    m = min(sp)
    v = rng.choice(["kernel", "dilation", "downs"])
    if v == "kernel":
        if wrong:
            k = m + rng.choice([1, 2, 3])
            return Blk("bigconv", [("conv", f"nn.Conv{d}({C}, {C}, {k})")],
                       chan(S, [f"{{c}} = {{c}} + F.interpolate({{conv}}({{c}}), size={{c}}.shape[2:])"]))
        k = rng.choice([k for k in (1, 3, 5) if k <= m])
        return Blk("bigconv", [("conv", f"nn.Conv{d}({C}, {C}, {k})")],
                   chan(S, [f"{{c}} = {{c}} + F.interpolate({{conv}}({{c}}), size={{c}}.shape[2:])"]))
    if v == "dilation":
        dil = (m // 2 + 1) if wrong else 1
        return Blk("dilconv", [("conv", f"nn.Conv{d}({C}, {C}, 3, dilation={dil})")],
                   chan(S, [f"{{c}} = {{c}} + F.interpolate({{conv}}({{c}}), size={{c}}.shape[2:])"]))
    # stride-2 valid convolutions: count how many fit
    n, fit = m, 0
    while n >= 3:
        n = (n - 3) // 2 + 1
        fit += 1
    if fit == 0 and not wrong:
        return None
    cnt = fit + rng.choice([1, 2]) if wrong else rng.randint(1, fit)
    return Blk("downs", [("downs", f"nn.ModuleList([nn.Conv{d}({C}, {C}, 3, stride=2) for _ in range({cnt})])")],
               chan(S, ["s = {c}", "for conv in {downs}:", "    s = F.relu(conv(s))",
                        "{c} = {c} + F.interpolate(s, size={c}.shape[2:])"]))


def k_conv_rank(rng, S, wrong):
    r = len(S)
    if r == 4:
        C = S[1]
        v = rng.choice(["flat", "unsq", "conv1d"])
        if v == "conv1d":
            arg = "{t}" if wrong else "{t}.flatten(2)"
            return Blk("conv1", [("conv", f"nn.Conv1d({C}, {C}, 3, padding=1)")],
                       [f"{{t}} = {{t}} + {{conv}}({arg}).view_as({{t}})"])
        arg = ("{t}.flatten(1)" if v == "flat" else "{t}.unsqueeze(2)") if wrong else "{t}"
        return Blk("conv", [("conv", f"nn.Conv2d({C}, {C}, 3, padding=1)")],
                   [f"{{t}} = {{t}} + {{conv}}({arg}).view_as({{t}})"])
    if r == 3:
        Fd = S[2]
        arg = "{t}.transpose(1, 2).unsqueeze(1)" if wrong else "{t}.transpose(1, 2)"
        return Blk("tconv", [("conv", f"nn.Conv1d({Fd}, {Fd}, 3, padding=1)")],
                   [f"{{t}} = {{t}} + {{conv}}({arg}).view_as({{t}}.transpose(1, 2)).transpose(1, 2)"])
    if r == 2:
        arg = "{t}[:, None, None]" if wrong else "{t}.unsqueeze(1)"
        return Blk("conv", [("conv", "nn.Conv1d(1, 1, 3, padding=1)")],
                   [f"{{t}} = {{t}} + {{conv}}({arg}).view_as({{t}})"])
    return None


def k_conv_transpose_in_channels(rng, S, wrong):
    cd = chan_dims(S)
    if not cd:
        return None
    C, sp, d = cd
    v = rng.choice(["ctor", "cat"])
    if v == "ctor":
        cin = off(rng, C) if wrong else C
        return Blk("up", [("up", f"nn.ConvTranspose{d}({cin}, {C}, 2, stride=2)")],
                   chan(S, [f"{{c}} = {{c}} + F.avg_pool{d}({{up}}({{c}}), 2)"]))
    arg = "torch.cat([{c}, {c}], dim=1)" if wrong else "{c}"
    return Blk("up", [("up", f"nn.ConvTranspose{d}({C}, {C}, 4, stride=2, padding=1)")],
               chan(S, [f"{{c}} = {{c}} + F.avg_pool{d}({{up}}({arg}), 2)"]))


def k_pool_too_small(rng, S, wrong):
    cd = chan_dims(S)
    if not cd:
        return None
    C, sp, d = cd
    m = min(sp)
    v = rng.choice(["functional", "module", "stack"])
    if v == "stack":
        n, fit = m, 0
        while n >= 2:
            n //= 2
            fit += 1
        if fit == 0 and not wrong:
            return None
        cnt = fit + rng.choice([1, 2]) if wrong else rng.randint(1, fit)
        return Blk("pools", [("pools", f"nn.ModuleList([nn.MaxPool{d}(2) for _ in range({cnt})])")],
                   chan(S, ["s = {c}", "for pool in {pools}:", "    s = pool(s)",
                            "{c} = {c} + F.interpolate(s, size={c}.shape[2:])"]))
    if wrong:
        k = m + rng.choice([1, 2, m])
    else:
        ks = [k for k in (2, 3, 4) if k <= m]
        if not ks:
            return None
        k = rng.choice(ks)
    op = rng.choice(["max", "avg"])
    if v == "functional":
        return Blk("pool", [], chan(S, [f"s = F.{op}_pool{d}({{c}}, {k})",
                                        "{c} = {c} + F.interpolate(s, size={c}.shape[2:])"]))
    name = "MaxPool" if op == "max" else "AvgPool"
    return Blk("pool", [("pool", f"nn.{name}{d}({k})")],
               chan(S, ["{c} = {c} + F.interpolate({pool}({c}), size={c}.shape[2:])"]))


# ---------------------------------------------------------------- normalization
def k_batchnorm_features(rng, S, wrong):
    r = len(S)
    if r == 4:
        C = S[1]
        n = off(rng, C) if wrong else C
        return single("bn", "bn", f"nn.BatchNorm2d({n})")
    if r == 3:
        Fd = S[2]
        if rng.random() < 0.5 and S[1] != Fd:
            arg = "{t}" if wrong else "{t}.transpose(1, 2)"
            post = "" if wrong else ".transpose(1, 2)"
            return Blk("bn", [("bn", f"nn.BatchNorm1d({Fd})")], [f"{{t}} = {{bn}}({arg}){post}"])
        n = off(rng, Fd) if wrong else Fd
        return Blk("bn", [("bn", f"nn.BatchNorm1d({n})")], ["{t} = {bn}({t}.transpose(1, 2)).transpose(1, 2)"])
    if r == 2:
        n = off(rng, S[1]) if wrong else S[1]
        return single("bn", "bn", f"nn.BatchNorm1d({n})")
    return None


def k_groupnorm_channels(rng, S, wrong):
    cd = chan_dims(S)
    if not cd:
        return None
    C = cd[0]
    gs = [g for g in (2, 4, 8) if C % g == 0]
    if not gs:
        return None
    g = rng.choice(gs)
    if rng.random() < 0.5:
        if wrong:
            cands = [x for x in (C + g, C - g, 2 * C) if x > 0 and x != C]
            n = rng.choice(cands)
        else:
            n = C
        if len(S) == 4:
            return single("gn", "gn", f"nn.GroupNorm({g}, {n})")
        return Blk("gn", [("gn", f"nn.GroupNorm({g}, {n})")], chan(S, ["{c} = {gn}({c})"]))
    bad = [x for x in (3, 5, 6, 7) if C % x != 0]
    g2 = rng.choice(bad) if wrong else g
    return Blk("gn", [], chan(S, [f"{{c}} = F.group_norm({{c}}, {g2})"]))


def k_layernorm_shape(rng, S, wrong):
    r = len(S)
    if r == 4 and rng.random() < 0.5:
        C, H, W = S[1:]
        if rng.random() < 0.5 and W != C:
            # LayerNorm(C) on NCHW reads the last axis (W): channels-last is needed
            if wrong:
                return single("ln", "ln", f"nn.LayerNorm({C})")
            return Blk("ln", [("ln", f"nn.LayerNorm({C})")], ["{t} = {ln}({t}.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)"])
        shp = [H, W, C] if wrong and (H, W) != (C, H) else [C, H, W]
        if wrong and shp == [C, H, W]:
            shp = [C, H + 1, W]
        return single("ln", "ln", f"nn.LayerNorm([{shp[0]}, {shp[1]}, {shp[2]}])")
    B, N, Fd = seq_dims(S) or (0, 0, 0)
    if not Fd:
        return None
    n = off(rng, Fd) if wrong else Fd
    if rng.random() < 0.5:
        if r == 4:
            return Blk("ln", [("ln", f"nn.LayerNorm({n})")], seq(S, ["{u} = {ln}({u})"]))
        return single("ln", "ln", f"nn.LayerNorm({n})")
    return Blk("ln", [], seq(S, [f"{{u}} = F.layer_norm({{u}}, ({n},))"]))


def k_rmsnorm_shape(rng, S, wrong):
    r = len(S)
    if r == 4 and rng.random() < 0.4 and S[3] != S[1]:
        C = S[1]
        if wrong:
            return single("rms", "norm", f"nn.RMSNorm({C})")
        return Blk("rms", [("norm", f"nn.RMSNorm({C})")], ["{t} = {norm}({t}.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)"])
    B, N, Fd = seq_dims(S) or (0, 0, 0)
    if not Fd:
        return None
    n = off(rng, Fd) if wrong else Fd
    if rng.random() < 0.6:
        if r == 4:
            return Blk("rms", [("norm", f"nn.RMSNorm({n}, eps=1e-6)")], seq(S, ["{u} = {norm}({u})"]))
        return single("rms", "norm", f"nn.RMSNorm({n}, eps=1e-6)")
    return Blk("rms", [], seq(S, [f"{{u}} = F.rms_norm({{u}}, [{n}])"]))


# ---------------------------------------------------------------- embeddings, rnn, attention
def k_embedding_float_index(rng, S, wrong):
    B, N, Fd = seq_dims(S) or (0, 0, 0)
    if not Fd:
        return None
    v = rng.choice(["argmax", "bucket", "pos"])
    if v == "pos":
        ar = (f"torch.arange({{u}}.shape[1], device={{u}}.device, dtype=torch.float32)" if wrong
              else "torch.arange({u}.shape[1], device={u}.device)")
        return Blk("pos", [("pos", f"nn.Embedding({max(N, 10)}, {Fd})")], seq(S, [f"{{u}} = {{u}} + {{pos}}({ar})"]))
    if v == "argmax":
        idx = "idx = {u}.argmax(-1).float()" if wrong else "idx = {u}.argmax(-1)"
        if wrong and rng.random() < 0.5:
            idx = "idx = {u}.argmax(-1, keepdim=True).squeeze(-1) * 1.0"
        return Blk("code", [("codes", f"nn.Embedding({max(Fd, 10)}, {Fd})")], seq(S, [idx, "{u} = {u} + {codes}(idx)"]))
    nb = rng.choice([10, 16, 32])
    idx = (f"idx = (torch.sigmoid({{u}}.mean(-1)) * {nb - 1}).round()" if wrong
           else f"idx = (torch.sigmoid({{u}}.mean(-1)) * {nb - 1}).round().long()")
    return Blk("bucket", [("buckets", f"nn.Embedding({nb}, {Fd})")], seq(S, [idx, "{u} = {u} + {buckets}(idx)"]))


def k_rnn_input_size(rng, S, wrong):
    B, N, Fd = seq_dims(S) or (0, 0, 0)
    if not Fd:
        return None
    cell = rng.choice(["LSTM", "GRU", "RNN"])
    v = rng.choice(["ctor", "bidir", "transposed"])
    if v == "transposed" and N == Fd:
        v = "ctor"
    if v == "ctor":
        fin = off(rng, Fd) if wrong else Fd
        return Blk("rnn", [("rnn", f"nn.{cell}({fin}, {Fd}, batch_first=True)")], seq(S, ["s, _ = {rnn}({u})", "{u} = {u} + s"]))
    if v == "bidir":
        if Fd % 2:
            return None
        fin2 = Fd // 2 if wrong else Fd
        return Blk("birnn", [("rnn1", f"nn.{cell}({Fd}, {Fd // 2}, batch_first=True, bidirectional=True)"),
                             ("rnn2", f"nn.{cell}({fin2}, {Fd}, batch_first=True)")],
                   seq(S, ["s, _ = {rnn1}({u})", "s, _ = {rnn2}(s)", "{u} = {u} + s"]))
    arg = "{u}.transpose(1, 2)" if wrong else "{u}"
    return Blk("rnn", [("rnn", f"nn.{cell}({Fd}, {Fd}, batch_first=True)")], seq(S, [f"s, _ = {{rnn}}({arg})", "{u} = {u} + s"]))


def k_rnn_rank(rng, S, wrong):
    B, N, Fd = seq_dims(S) or (0, 0, 0)
    if not Fd:
        return None
    r = len(S)
    v = rng.choice(["cell", "forgot_flatten"] if r == 4 else ["cell", "extra_dim"])
    if v == "cell" and N > 48:
        v = "forgot_flatten" if r == 4 else "extra_dim"
    cell = rng.choice(["LSTM", "GRU"])
    if v == "cell":
        step = "{u}[:, step:step + 1]" if wrong else "{u}[:, step]"
        if cell == "LSTM":
            return Blk("cell", [("cell", f"nn.LSTMCell({Fd}, {Fd})")], seq(S, [
                f"hx = {{u}}.new_zeros({{u}}.shape[0], {Fd})", "cx = hx", "s = []",
                f"for step in range({{u}}.shape[1]):", f"    hx, cx = {{cell}}({step}, (hx, cx))", "    s.append(hx)",
                "{u} = {u} + torch.stack(s, dim=1)"]))
        return Blk("cell", [("cell", f"nn.GRUCell({Fd}, {Fd})")], seq(S, [
            f"hx = {{u}}.new_zeros({{u}}.shape[0], {Fd})", "s = []",
            f"for step in range({{u}}.shape[1]):", f"    hx = {{cell}}({step}, hx)", "    s.append(hx)",
            "{u} = {u} + torch.stack(s, dim=1)"]))
    if v == "forgot_flatten":
        C = S[1]
        arg = "{t}.permute(0, 2, 3, 1)" if wrong else "{t}.flatten(2).transpose(1, 2)"
        return Blk("rnn", [("rnn", f"nn.{cell}({C}, {C}, batch_first=True)")],
                   [f"s, _ = {{rnn}}({arg})", "{t} = {t} + s.transpose(1, 2).reshape({t}.shape)"])
    arg = "{u}.unsqueeze(-1)" if wrong else "{u}"
    return Blk("rnn", [("rnn", f"nn.{cell}({Fd}, {Fd}, batch_first=True)")], seq(S, [f"s, _ = {{rnn}}({arg})", "{u} = {u} + s"]))


def k_mha_embed_dim(rng, S, wrong):
    B, N, Fd = seq_dims(S) or (0, 0, 0)
    if not Fd:
        return None
    hs = [h for h in (1, 2, 4, 8) if Fd % h == 0]
    h = rng.choice(hs)
    if wrong:
        cands = [e for e in (Fd + h, Fd * 2, Fd // 2, Fd - h) if e > 0 and e != Fd and e % h == 0]
        e = rng.choice(cands)
    else:
        e = Fd
    return Blk("attn", [("attn", f"nn.MultiheadAttention({e}, {h}, batch_first=True)")],
               seq(S, ["s, _ = {attn}({u}, {u}, {u}, need_weights=False)", "{u} = {u} + s"]))


def k_sdpa(rng, S, wrong):
    B, N, Fd = seq_dims(S) or (0, 0, 0)
    if not Fd:
        return None
    hs = [h for h in (2, 4, 8) if Fd % h == 0 and Fd // h >= 2]
    if not hs:
        return None
    h = rng.choice(hs)
    d = Fd // h
    v = rng.choice(["kdim", "gqa", "nosplit"])
    if v == "gqa":
        kvs = [k for k in (1, 2, 4) if h % k == 0 and k < h and k > 1]
        if not kvs:
            v = "kdim"
    if v == "kdim":
        kd = rng.choice([Fd // 2, Fd * 2]) if wrong else Fd
        if kd % h or kd // h == 0:
            kd = Fd * 2 if wrong else Fd
        return Blk("sdpa", [("q", f"nn.Linear({Fd}, {Fd})"), ("k", f"nn.Linear({Fd}, {kd})"), ("v", f"nn.Linear({Fd}, {Fd})")],
                   seq(S, ["b, n, _ = {u}.shape",
                           f"q = {{q}}({{u}}).view(b, n, {h}, -1).transpose(1, 2)",
                           f"kk = {{k}}({{u}}).view(b, n, {h}, -1).transpose(1, 2)",
                           f"vv = {{v}}({{u}}).view(b, n, {h}, -1).transpose(1, 2)",
                           "o = F.scaled_dot_product_attention(q, kk, vv)",
                           "{u} = {u} + o.transpose(1, 2).reshape(b, n, -1)"]))
    if v == "gqa":
        kv = rng.choice(kvs)
        rep = [] if wrong else [f"kk = kk.repeat_interleave({h // kv}, dim=1)", f"vv = vv.repeat_interleave({h // kv}, dim=1)"]
        return Blk("gqa", [("q", f"nn.Linear({Fd}, {Fd})"), ("kv", f"nn.Linear({Fd}, {2 * kv * d})")],
                   seq(S, ["b, n, _ = {u}.shape",
                           f"q = {{q}}({{u}}).view(b, n, {h}, {d}).transpose(1, 2)",
                           f"kk, vv = {{kv}}({{u}}).view(b, n, 2, {kv}, {d}).permute(2, 0, 3, 1, 4)"] + rep +
                           ["o = F.scaled_dot_product_attention(q, kk, vv, is_causal=True)",
                            "{u} = {u} + o.transpose(1, 2).reshape(b, n, -1)"]))
    ksplit = "kk = {k}({u})" if wrong else f"kk = {{k}}({{u}}).view(b, n, {h}, {d}).transpose(1, 2)"
    return Blk("sdpa", [("q", f"nn.Linear({Fd}, {Fd})"), ("k", f"nn.Linear({Fd}, {Fd})")],
               seq(S, ["b, n, _ = {u}.shape",
                       f"q = {{q}}({{u}}).view(b, n, {h}, {d}).transpose(1, 2)", ksplit,
                       "o = F.scaled_dot_product_attention(q, kk, kk)",
                       "{u} = {u} + o.transpose(1, 2).reshape(b, n, -1)"]))


# ---------------------------------------------------------------- joining
def k_cat_rank(rng, S, wrong):
    r = len(S)
    if r == 4:
        C = S[1]
        ctx = "ctx = {t}.mean((2, 3))" if wrong else "ctx = {t}.mean((2, 3), keepdim=True).expand_as({t})"
        return Blk("ctxcat", [("fuse", f"nn.Conv2d({2 * C}, {C}, 1)")], [ctx, "{t} = {fuse}(torch.cat([{t}, ctx], dim=1))"])
    if r in (2, 3):
        Fd = S[-1]
        d = 0 if r == 2 else 1
        ctx = f"ctx = {{t}}.mean({d})" if wrong else f"ctx = {{t}}.mean({d}, keepdim=True).expand_as({{t}})"
        if wrong and rng.random() < 0.4:
            ctx = f"ctx = {{t}}.max({d}).values"
        return Blk("ctxcat", [("fuse", f"nn.Linear({2 * Fd}, {Fd})")], [ctx, "{t} = {fuse}(torch.cat([{t}, ctx], dim=-1))"])
    return None


def k_cat_size(rng, S, wrong):
    r = len(S)
    if r == 4 and rng.random() < 0.5 and min(S[2:]) >= 2:
        C = S[1]
        stride = 2 if wrong else 1
        return Blk("branchcat", [("branch", f"nn.Conv2d({C}, {C}, 3, stride={stride}, padding=1)"),
                                 ("fuse", f"nn.Conv2d({2 * C}, {C}, 1)")],
                   ["{t} = {fuse}(torch.cat([{t}, {branch}({t})], dim=1))"])
    B, N, Fd = seq_dims(S) or (0, 0, 0)
    if not Fd:
        return None
    if N >= 2 and rng.random() < 0.5:
        other = "{u}[:, 1:]" if wrong else "{u}.roll(1, dims=1)"
        return Blk("shiftcat", [("fuse", f"nn.Linear({2 * Fd}, {Fd})")], seq(S, [f"{{u}} = {{fuse}}(torch.cat([{{u}}, {other}], dim=-1))"]))
    F2 = rng.choice([x for x in (Fd // 2, Fd * 2, Fd + 4) if x != Fd and x > 0])
    dim = 1 if wrong else -1
    return Blk("projcat", [("proj", f"nn.Linear({Fd}, {F2})"), ("fuse", f"nn.Linear({Fd + F2}, {Fd})")],
               seq(S, [f"{{u}} = {{fuse}}(torch.cat([{{u}}, {{proj}}({{u}})], dim={dim}))"]))


def k_stack_shape(rng, S, wrong):
    r = len(S)
    if r == 4:
        C = S[1]
        if rng.random() < 0.5:
            c2 = off(rng, C) if wrong else C
            return Blk("stack", [("a", f"nn.Conv2d({C}, {C}, 3, padding=1)"), ("b", f"nn.Conv2d({C}, {c2}, 1)")],
                       ["{t} = torch.stack([{t}, {a}({t}), {b}({t})], dim=0).mean(0)"])
        if min(S[2:]) < 2:
            return None
        other = "F.max_pool2d({t}, 2)" if wrong else "F.max_pool2d({t}, 3, stride=1, padding=1)"
        return Blk("stack", [], [f"{{t}} = torch.stack([{{t}}, {other}], dim=-1).amax(-1)"])
    if r in (2, 3):
        Fd = S[-1]
        if r == 3 and S[1] >= 2 and rng.random() < 0.5:
            other = "{t}[:, 1:]" if wrong else "{t}.roll(1, dims=1)"
            return Blk("stack", [], [f"{{t}} = torch.stack([{{t}}, {other}], dim=0).mean(0)"])
        f2 = off(rng, Fd) if wrong else Fd
        return Blk("stack", [("a", f"nn.Linear({Fd}, {Fd})"), ("b", f"nn.Linear({Fd}, {f2})")],
                   ["{t} = torch.stack([{t}, {a}({t}), {b}({t})], dim=1).sum(1)"])
    return None


# ---------------------------------------------------------------- elementwise / views
def k_broadcast(rng, S, wrong):
    r = len(S)
    opts = ["scale", "keepdim", "shift"]
    rng.shuffle(opts)
    for v in opts:
        if v == "scale":
            if r == 4:
                C = S[1]
                good = [C, 1, 1]
                bads = [[C], [off(rng, C), 1, 1]]
            else:
                good = [S[-1]]
                bads = [[off(rng, S[-1])]]
            shp = good
            if wrong:
                bads = [b for b in bads if not bcast_ok(S, b)]
                if not bads:
                    continue
                shp = rng.choice(bads)
            init = rng.choice(["ones", "zeros"])
            return Blk("scale", [("gamma", "nn.Parameter(torch.%s(%s))" % (init, ", ".join(map(str, shp))))],
                       ["{t} = {t} * {gamma}" if init == "ones" else "{t} = {t} + {gamma}"])
        if v == "keepdim":
            dims = (2, 3) if r == 4 else (1 if r == 3 else 0)
            red = list(S)
            dl = list(dims) if isinstance(dims, tuple) else [dims]
            if wrong:
                red = [s for i, s in enumerate(S) if i not in dl]
                if bcast_ok(S, red):
                    continue
            ds = f"{dims}" if isinstance(dims, tuple) else f"{dims}"
            kd = "" if wrong else ", keepdim=True"
            return Blk("center", [], [f"{{t}} = {{t}} - {{t}}.mean({ds}{kd})"])
        if v == "shift":
            if r < 2 or S[1] < 3:
                continue
            if wrong:
                sh = list(S)
                sh[1] -= 1
                if bcast_ok(S, sh):
                    continue
                return Blk("delta", [], ["{t} = {t} + ({t}[:, 1:] - {t}[:, :-1])"])
            return Blk("delta", [], ["{t} = {t} + F.pad({t}[:, 1:] - {t}[:, :-1], " + pad_arg(r) + ")"])
    return None


def pad_arg(r):
    # pad dim 1 at the end by one
    return "(" + ", ".join(["0, 0"] * (r - 2) + ["0, 1"]) + ")"


def k_view_numel(rng, S, wrong):
    B, N, Fd = seq_dims(S) or (0, 0, 0)
    if not Fd:
        return None
    return _split_heads(rng, S, wrong, "view")


def _split_heads(rng, S, wrong, op):
    B, N, Fd = seq_dims(S)
    hs = [h for h in (2, 4, 8) if Fd % h == 0]
    bad = [h for h in (3, 5, 6, 7) if Fd % h != 0]
    r = len(S)
    v = rng.choice(["heads", "flatten"] if r == 4 else ["heads", "heads", "merge"])
    if v == "heads" and hs and bad:
        h = rng.choice(bad) if wrong else rng.choice(hs)
        return Blk("heads", [], seq(S, ["b, n, _ = {u}.shape",
                                        f"q = {{u}}.{op}(b, n, {h}, {Fd} // {h})",
                                        "{u} = {u} + q.softmax(-1).flatten(2)"]))
    if v == "flatten" and r == 4:
        C, H, W = S[1:]
        hw = f"{H} * {W - 1}" if wrong else f"{H} * {W}"
        return Blk("spatial", [], [f"s = {{t}}.{op}({B}, {C}, {hw}).softmax(-1)", f"{{t}} = {{t}} * s.{op}({{t}}.shape)"])
    if v == "merge" and N >= 2:
        k = f"{Fd} * {N + 1}" if wrong else f"{Fd} * {N}"
        return Blk("merge", [], [f"s = {{t}}.{op}(-1, {k})" if r == 3 else f"s = {{t}}.{op}(-1, {k})",
                                 f"{{t}} = s.{op}({{t}}.shape) * 0.5 + {{t}}"]) if r == 3 and (B * N * Fd) % (Fd * (N + 1)) != 0 or not wrong else None
    if hs and bad:
        h = rng.choice(bad) if wrong else rng.choice(hs)
        return Blk("heads", [], seq(S, ["b, n, _ = {u}.shape",
                                        f"q = {{u}}.{op}(b, n, {h}, {Fd} // {h})",
                                        "{u} = {u} + q.softmax(-1).flatten(2)"]))
    return None


def k_reshape_numel(rng, S, wrong):
    B, N, Fd = seq_dims(S) or (0, 0, 0)
    if not Fd:
        return None
    if len(S) == 4 and rng.random() < 0.4:
        C, H, W = S[1:]
        ps = [p for p in (2, 4) if H % p == 0 and W % p == 0]
        badp = [p for p in (3, 5) if H % p or W % p]
        if ps and badp:
            p = rng.choice(badp) if wrong else rng.choice(ps)
            return Blk("patch", [], ["b, c, hh, ww = {t}.shape",
                                     f"s = {{t}}.reshape(b, c, hh // {p}, {p}, ww // {p}, {p})",
                                     "{t} = {t} + s.mean((3, 5), keepdim=True).expand_as(s).reshape({t}.shape)"])
    return _split_heads(rng, S, wrong, "reshape")


def k_view_after_transpose(rng, S, wrong):
    r = len(S)
    if r == 4 and rng.random() < 0.5:
        C, H, W = S[1:]
        if C < 2 or H * W < 2:
            return None
        cont = "" if wrong else ".contiguous()"
        return Blk("chlast", [("proj", f"nn.Linear({C * H * W}, {C})")] if C * H * W <= 4096 else [],
                   [f"s = {{t}}.permute(0, 2, 3, 1){cont}.view({{t}}.shape[0], -1)",
                    "{t} = {t} + {proj}(s)[:, :, None, None]" if C * H * W <= 4096 else "{t} = {t} + s.view({t}.shape[0], -1, 1, 1)[:, :" + str(C) + "]"])
    B, N, Fd = seq_dims(S) or (0, 0, 0)
    if not Fd or N < 2:
        return None
    hs = [h for h in (2, 4, 8) if Fd % h == 0 and Fd // h >= 2]  # head dim 1 would still be viewable
    if not hs:
        return None
    h = rng.choice(hs)
    cont = "" if wrong else ".contiguous()"
    return Blk("mhsa", [("qkv", f"nn.Linear({Fd}, {3 * Fd})"), ("out", f"nn.Linear({Fd}, {Fd})")],
               seq(S, ["b, n, _ = {u}.shape",
                       f"q, kk, vv = {{qkv}}({{u}}).view(b, n, 3, {h}, {Fd // h}).permute(2, 0, 3, 1, 4)",
                       f"a = (q @ kk.transpose(-2, -1)) * {Fd // h} ** -0.5",
                       "o = a.softmax(dim=-1) @ vv",
                       f"{{u}} = {{u}} + {{out}}(o.transpose(1, 2){cont}.view(b, n, {Fd}))"]))


def k_permute_len(rng, S, wrong):
    r = len(S)
    if r == 4:
        C = S[1]
        p = "(0, 2, 1)" if wrong else "(0, 2, 3, 1)"
        if wrong and rng.random() < 0.5:
            p = "(0, 2, 3, 1, 4)"
        return Blk("chlast", [("ln", f"nn.LayerNorm({C})")], [f"{{t}} = {{ln}}({{t}}.permute{p}).permute(0, 3, 1, 2)"])
    if r == 3:
        Fd = S[2]
        p = rng.choice(["(0, 2, 1, 3)", "(0, 2)", "(2, 1)"]) if wrong else "(0, 2, 1)"
        return Blk("tconv", [("conv", f"nn.Conv1d({Fd}, {Fd}, 3, padding=1)")],
                   [f"{{t}} = {{t}} + {{conv}}({{t}}.permute{p}).permute(0, 2, 1)"])
    if r == 2:
        p = "(0, 2, 1)" if wrong else "(1, 0)"
        return Blk("tmix", [("w", param([S[0], S[0]]))], [f"{{t}} = {{t}} + ({{t}}.permute{p} @ {{w}}).permute(1, 0)"])
    return None


def k_dim_range(rng, S, wrong):
    r = len(S)
    bad = r + rng.choice([0, 1]) if wrong else None
    op = rng.choice(["softmax", "sum", "chunk", "transpose", "unsqueeze", "flatten", "squeeze", "split", "narrow", "mean"])
    if op == "softmax":
        return Blk("gate", [], [f"{{t}} = {{t}} * torch.softmax({{t}}, dim={bad if wrong else -1})"])
    if op == "sum":
        return Blk("l1", [], [f"{{t}} = {{t}} / ({{t}}.abs().sum(dim={bad if wrong else 1}, keepdim=True) + 1)"])
    if op == "mean":
        return Blk("rms", [], [f"{{t}} = {{t}} * torch.rsqrt({{t}}.pow(2).mean({bad if wrong else -1}, keepdim=True) + 1e-6)"])
    if op == "chunk" and S[-1] % 2 == 0:
        return Blk("glu", [("proj", f"nn.Linear({S[-1]}, {2 * S[-1]})")],
                   [f"a, g = {{proj}}({{t}}).chunk(2, dim={bad if wrong else -1})", "{t} = {t} + a * torch.sigmoid(g)"])
    if op == "split" and S[-1] % 2 == 0:
        k = S[-1] // 2
        return Blk("swap", [], [f"a, g = {{t}}.split({k}, dim={bad if wrong else r - 1})", "{t} = torch.cat([g, a], dim=-1)"])
    if op == "transpose" and r >= 3:
        return Blk("swap", [], [f"{{t}} = {{t}}.transpose(1, {bad if wrong else 2}).transpose(1, 2)"])
    if op == "unsqueeze":
        d = r + 1 + rng.choice([0, 1]) if wrong else rng.choice([0, 1, -1])
        return Blk("unsq", [], [f"{{t}} = {{t}}.unsqueeze({d}).mean({d})"])
    if op == "flatten" and r >= 3:
        return Blk("flat", [], [f"{{t}} = {{t}}.flatten({bad if wrong else 1}).view({{t}}.shape)"])
    if op == "squeeze":
        return Blk("sq", [], [f"{{t}} = {{t}}.unsqueeze(-1).squeeze({bad + 1 if wrong else -1})"])
    if op == "narrow":
        return Blk("head", [], [f"{{t}} = {{t}} + {{t}}.narrow({bad if wrong else 0}, 0, 1)"])
    return Blk("gate", [], [f"{{t}} = {{t}} * torch.softmax({{t}}, dim={bad if wrong else 1})"])


def k_narrow_range(rng, S, wrong):
    d = rng.choice(range(1, len(S)))
    n = S[d]
    if n < 2:
        return None
    half = n // 2
    if rng.random() < 0.5:
        ln = n - half + 1 if wrong else n - half
        return Blk("rot", [], [f"a = {{t}}.narrow({d}, 0, {half})", f"g = {{t}}.narrow({d}, {half}, {ln})",
                                f"{{t}} = torch.cat([g, a], dim={d})"])
    start = 1 if wrong else 0
    return Blk("edge", [], [f"a = {{t}}.narrow({d}, {start}, {n})", "{t} = {t} + a.flip(" + str(d) + ")"])


def k_expand_size(rng, S, wrong):
    r = len(S)
    v = rng.choice(["param", "mean", "fewer"])
    if v == "param":
        last = off(rng, S[-1]) if wrong else S[-1]
        shp = [1] * (r - 1) + [last]
        return Blk("bias", [("bias", "nn.Parameter(torch.zeros(%s))" % ", ".join(map(str, shp)))],
                   ["{t} = {t} + {bias}.expand_as({t})"])
    if v == "mean" and r >= 2:
        red = [s for i, s in enumerate(S) if i != 1]
        if wrong and bcast_ok(S, red) and len(red) == r:
            return None
        if wrong:
            # expand needs trailing alignment: B.. vs S
            ok = all(x == y or x == 1 for x, y in zip(reversed(red), reversed(S)))
            if ok:
                return None
        kd = "" if wrong else ", keepdim=True"
        return Blk("ctx", [], [f"g = {{t}}.mean(1{kd}).expand(" + ", ".join(f"{{t}}.shape[{i}]" for i in range(r)) + ")",
                               "{t} = {t} + g"])
    sizes = ", ".join(f"{{t}}.shape[{i}]" for i in range(r - 1 if wrong else r))
    return Blk("ctx", [], [f"g = {{t}}.amax(0, keepdim=True).expand({sizes})", "{t} = {t} + g"])


def k_interpolate(rng, S, wrong):
    r = len(S)
    if r == 4:
        v = rng.choice(["size", "mode"])
        if v == "size":
            sz = "{t}.shape[1:]" if wrong else "{t}.shape[2:]"
            return Blk("up", [("conv", f"nn.Conv2d({S[1]}, {S[1]}, 3, padding=1)")],
                       ["s = F.avg_pool2d({t}, 2, ceil_mode=True)" if min(S[2:]) >= 2 else "s = {t}",
                        f"{{t}} = {{t}} + {{conv}}(F.interpolate(s, size={sz}, mode='nearest'))"])
        mode = "'linear'" if wrong else "'bilinear'"
        return Blk("up", [], [f"s = F.interpolate({{t}}, scale_factor=2, mode={mode}, align_corners=False)",
                              "{t} = {t} + F.avg_pool2d(s, 2)"])
    if r == 3:
        v = rng.choice(["size", "scale", "mode"])
        if v == "size":
            sz = "a.shape[1:]" if wrong else "a.shape[2:]"
            return Blk("up", [], ["a = {t}.transpose(1, 2)", "s = F.avg_pool1d(a, 2, ceil_mode=True)" if S[1] >= 2 else "s = a",
                                  f"{{t}} = {{t}} + F.interpolate(s, size={sz}, mode='linear').transpose(1, 2)"])
        if v == "scale":
            sc = "(2, 2)" if wrong else "2"
            return Blk("up", [], ["a = {t}.transpose(1, 2)", f"s = F.interpolate(a, scale_factor={sc}, mode='nearest')",
                                  "{t} = {t} + F.avg_pool1d(s, 2).transpose(1, 2)"])
        mode = "'bilinear'" if wrong else "'linear'"
        return Blk("up", [], ["a = {t}.transpose(1, 2)", f"s = F.interpolate(a, scale_factor=2, mode={mode})",
                              "{t} = {t} + F.avg_pool1d(s, 2).transpose(1, 2)"])
    if r == 2:
        sz = f"({S[1]}, {S[1]})" if wrong else f"{S[1]}"
        return Blk("resize", [], [f"{{t}} = F.interpolate({{t}}.unsqueeze(1), size={sz}, mode='linear').squeeze(1)"])
    return None


def k_einops_pattern(rng, S, wrong):
    r = len(S)
    opts = []
    if r == 4:
        C, H, W = S[1:]
        ps = [p for p in (2,) if H % 2 == 0 and W % 2 == 0]
        opts = ["tokens", "tokens"]
        if ps or (wrong and (H % 2 or W % 2)):
            opts.append("s2d")
            opts.append("reduce")
        elif wrong:
            pass
        if wrong:
            opts.append("s2d_bad")
    elif r == 3:
        Fd = S[2]
        opts = ["heads", "repeat", "rank"]
    elif r == 2:
        opts = ["rank2"]
    else:
        return None
    v = rng.choice(opts)
    if v == "tokens":
        pat = "'b c h w -> b (h w) c'"
        if wrong:
            return Blk("tok", [("ln", f"nn.LayerNorm({S[1]})")],
                       ["s = rearrange({t}, 'b c h w -> b (h w) c')", "s = rearrange({ln}(s), 'b (h w) c -> b c h w', h=%d)" % S[2],
                        "{t} = {t} + rearrange(s, 'b (h w) c -> b c h w', h=%d)" % S[2]], einops=True)
        return Blk("tok", [("ln", f"nn.LayerNorm({S[1]})")],
                   [f"s = rearrange({{t}}, {pat})", "{t} = {t} + rearrange({ln}(s), 'b (h w) c -> b c h w', h=%d)" % S[2]], einops=True)
    if v in ("s2d", "s2d_bad"):
        C, H, W = S[1:]
        if wrong:
            bad = [p for p in (2, 3, 5) if H % p or W % p]
            p = bad[0]
        else:
            p = 2
        return Blk("s2d", [("mix", f"nn.Conv2d({C * p * p}, {C * p * p}, 1)")],
                   [f"s = rearrange({{t}}, 'b c (h p) (w q) -> b (c p q) h w', p={p}, q={p})",
                    f"{{t}} = {{t}} + rearrange({{mix}}(s), 'b (c p q) h w -> b c (h p) (w q)', p={p}, q={p})"], einops=True)
    if v == "reduce":
        C, H, W = S[1:]
        if wrong:
            if H % 2 == 0 and W % 2 == 0:
                return Blk("pool", [], ["s = reduce({t}, 'b c (h 2) (w 2) -> b c h', 'max')",
                                        "{t} = {t} + repeat(s, 'b c h w -> b c (h 2) (w 2)')"], einops=True)
        return Blk("pool", [], ["s = reduce({t}, 'b c (h 2) (w 2) -> b c h w', 'max')",
                                "{t} = {t} + repeat(s, 'b c h w -> b c (h 2) (w 2)')"], einops=True)
    if v == "heads":
        Fd = S[2]
        hs = [h for h in (2, 4, 8) if Fd % h == 0]
        bad = [h for h in (3, 5, 6) if Fd % h]
        if not hs or not bad:
            v = "rank"
        else:
            h = rng.choice(bad) if wrong else rng.choice(hs)
            return Blk("heads", [], [f"q = rearrange({{t}}, 'b n (h d) -> b h n d', h={h})",
                                     "a = torch.softmax(q @ q.transpose(-2, -1), dim=-1)",
                                     "{t} = {t} + rearrange(a @ q, 'b h n d -> b n (h d)')"], einops=True)
    if v == "repeat":
        src = "{t}.mean(1, keepdim=True)" if wrong else "{t}.mean(1)"
        return Blk("ctx", [], [f"g = repeat({src}, 'b d -> b n d', n={S[1]})", "{t} = {t} + g"], einops=True)
    if v == "rank":
        pat = "'b c h w -> b (h w) c'" if wrong else "'b n d -> b d n'"
        back = "'b n d -> b d n'" if wrong else "'b d n -> b n d'"
        return Blk("tmix", [("w", param([S[1], S[1]]))], [f"s = rearrange({{t}}, {pat}) @ {{w}}",
                                                            f"{{t}} = {{t}} + rearrange(s, {back})"], einops=True)
    # rank 2
    pat = "'b n d -> b (n d)'" if wrong else "'b d -> b d 1'"
    back = "'b d 1 -> b d'"
    return Blk("mean", [], [f"s = rearrange({{t}}, {pat})", f"{{t}} = {{t}} + reduce(s, 'b d 1 -> b d', 'mean')"], einops=True)


KINDS = {
    "linear_in": k_linear_in, "matmul_inner": k_matmul_inner, "bmm_inner": k_bmm_inner, "mm_inner": k_mm_inner,
    "einsum_dims": k_einsum_dims, "conv_in_channels": k_conv_in_channels, "conv_groups": k_conv_groups,
    "conv_too_small": k_conv_too_small, "conv_rank": k_conv_rank,
    "conv_transpose_in_channels": k_conv_transpose_in_channels, "pool_too_small": k_pool_too_small,
    "batchnorm_features": k_batchnorm_features, "groupnorm_channels": k_groupnorm_channels,
    "layernorm_shape": k_layernorm_shape, "rmsnorm_shape": k_rmsnorm_shape,
    "embedding_float_index": k_embedding_float_index, "rnn_input_size": k_rnn_input_size, "rnn_rank": k_rnn_rank,
    "mha_embed_dim": k_mha_embed_dim, "cat_rank": k_cat_rank, "cat_size": k_cat_size, "stack_shape": k_stack_shape,
    "broadcast": k_broadcast, "view_numel": k_view_numel, "reshape_numel": k_reshape_numel,
    "view_after_transpose": k_view_after_transpose, "permute_len": k_permute_len, "dim_range": k_dim_range,
    "narrow_range": k_narrow_range, "expand_size": k_expand_size, "interpolate": k_interpolate, "sdpa": k_sdpa,
    "einops_pattern": k_einops_pattern,
}
