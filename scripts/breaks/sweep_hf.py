#!/usr/bin/env python3
"""Sweep every base model class transformers exports through TorchDynamo.

Usage (from the repository root, with a venv holding torch and transformers):

    "$VENV"/bin/python scripts/breaks/sweep_hf.py run                 # every model, resumable
    "$VENV"/bin/python scripts/breaks/sweep_hf.py run llama bert      # these model types only
    "$VENV"/bin/python scripts/breaks/sweep_hf.py write               # results -> tests/expected/hf_sweep.json
    "$VENV"/bin/python scripts/breaks/sweep_hf.py show llama          # one model, printed, nothing written
    "$VENV"/bin/python scripts/breaks/sweep_hf.py summary             # the figures of the README

`run` takes every entry of `transformers.models.auto.modeling_auto.MODEL_MAPPING_NAMES`
(model_type -> base model class), builds the class from its config class's DEFAULT config,
shrunk by the generic rules of `shrink` (every layer count to 2, one layer of each kind of a
hybrid, hidden 64 / 4 heads / head_dim 16 / intermediate 128, vocabulary <= 1000 unless a token
id needs more, experts <= 4, images of 4x4 patches; see `shrink`), makes inputs from the model's
`main_input_name` (`make_inputs`), runs a deep copy eagerly once, and then
`torch._dynamo.explain` on the model in eval mode and, on a second copy never called, in train
mode (no gradient checkpointing). The breaks are read as `label_hf.py` reads them (the
`dynamo_graph_break_reason` artifact and convert_frame's `WON'T CONVERT` record, gb ids from the
installed registry, `label_hf.breaks_of`).

Each model runs in a process of its own, forked from a parent that has imported torch and
transformers but never run Dynamo (so no Dynamo cache or report filter leaks from one model into
the next, and the imports are paid once), with a timeout (`--timeout`, 240 s); `--workers`
processes run at once (2), in a fixed pseudo-random order (a sweep stopped midway covers
the whole alphabet). One JSON line per model is appended to the results file (`--results`,
default `target/hf_sweep/results.jsonl`), and a rerun skips the model types already in it, so a
stopped sweep resumes; a results file that does not exist yet starts from the models of the
committed labels, so a new checkout resumes too (delete a model's line to run it again).
The eager run notes which of the modeling file's classes had their forward called
(`called`; `classes` are all those built). `write` turns the results into the sorted, deterministic `tests/expected/hf_sweep.json` (no
timings, no absolute paths).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
import label_breaks as lb  # noqa: E402  (trace capture, registry)
import label_hf as lh  # noqa: E402  (breaks_of, rel)

OUT = ROOT / "tests" / "expected" / "hf_sweep.json"
RESULTS = ROOT / "target" / "hf_sweep" / "results.jsonl"
MODES = ["eval", "train"]

# --------------------------------------------------------------------------------------------
# the generic shrink
# --------------------------------------------------------------------------------------------
HIDDEN = 64
HEADS = 4
HEAD_DIM = 16
INTERMEDIATE = 128
VOCAB = 1000
EXPERTS = 4
EXPERTS_PER_TOKEN = 2
LORA_RANK = 32
PATCHES = 4  # an image is PATCHES x PATCHES patches

HIDDEN_KEYS = {"hidden_size", "d_model", "n_embd", "n_embed", "embed_dim", "embedding_dim", "dim",
               "model_dim", "d_embed", "word_embed_proj_dim", "embedding_size", "projection_dim",
               "proj_dim", "text_embed_dim", "vision_embed_dim", "input_embedding_size",
               "output_embedding_size", "true_hidden_size", "intra_bottleneck_size"}
INTERMEDIATE_KEYS = {"ffn_dim", "encoder_ffn_dim", "decoder_ffn_dim", "d_ff", "dff", "d_inner",
                     "n_inner", "inner_dim", "mlp_dim", "ffn_hidden_size"}
HEAD_KEYS = {"num_heads", "n_head", "n_heads", "num_attention_heads", "num_q_heads"}
KV_HEAD_KEYS = {"multi_query_group_num"}
HEAD_DIM_KEYS = {"head_dim", "d_kv", "d_head", "attention_head_dim", "kv_channels", "head_size"}
EXPERT_KEYS = {"num_experts", "num_local_experts", "n_routed_experts", "moe_num_experts",
               "num_routed_experts", "n_experts"}
TOP_K_KEYS = {"num_experts_per_tok", "top_k", "moe_topk", "num_experts_per_token",
              "n_activated_experts", "moe_top_k", "experts_per_token", "num_selected_experts"}
GROUP_KEYS = {"n_group", "num_expert_group", "topk_group"}
LIST_WIDTH_KEYS = {"hidden_sizes", "embed_dims", "dims", "widths", "channels", "embed_dim_per_stage"}
NOT_LAYER_COUNT = re.compile(r"(index|indices|idx|feature_layer|_ids)")
# the only per-model data: none yet (a handful at most, each with its reason)
OVERRIDES: dict = {}


def is_layer_count(key: str, value) -> bool:
    if not isinstance(value, int) or isinstance(value, bool) or NOT_LAYER_COUNT.search(key):
        return False
    return bool(re.fullmatch(r"(num_|n_)?\w*layers?", key) and (key.endswith("layers") or key.startswith(("num_", "n_")))
                or key == "depth" or key.endswith("_depth"))


def is_kind_list(key: str, value) -> bool:
    """A per-layer list of kinds (`layer_types`, `block_types`, `layers_block_type`, ...)."""
    return (isinstance(value, list) and len(value) > 0 and all(isinstance(v, str) for v in value)
            and (key.endswith("_types") or key.endswith("block_type") or key == "attention_types_per_layer"))


def kinds_once(values: list, length: int) -> list:
    """Each distinct kind once, in order of first appearance, at least `length` long (the last
    kind repeated)."""
    out: list = []
    for v in values:
        if v not in out:
            out.append(v)
    while len(out) < length:
        out.append(out[-1])
    return out


def scale_rope(value, head_dim_from: int | None, head_dim_to: int):
    """`mrope_section`-style lists (sum = head_dim / 2) scaled to the new head_dim."""
    if not isinstance(value, dict):
        return value
    out = dict(value)
    for k, v in value.items():
        if (isinstance(v, list) and v and all(isinstance(x, int) for x in v) and head_dim_from
                and sum(v) == head_dim_from // 2 and "section" in k):
            target = head_dim_to // 2
            scaled = [max(1, x * target // sum(v)) for x in v]
            scaled[-1] += target - sum(scaled)
            out[k] = scaled
    return out


def shrink_level(cfg, changes_only: bool, keep_head_dim: bool = False) -> dict:
    """The shrunk values of one config (and, recursively, its sub-configs). Returns the keys to
    pass to the config class: only the changed ones when `changes_only`, else the whole dict.

    `keep_head_dim`: the text tower of a multimodal model keeps its head_dim (hidden = heads x
    head_dim): its modeling code splits the rotary dims into sections written for it
    (`config.rope_parameters.get("mrope_section", [16, 24, 24])` in ~20 files)."""
    from transformers import PretrainedConfig

    own = {k: list(v) if isinstance(v, tuple) else v for k, v in vars(cfg).items() if not k.startswith("_")}
    amap = getattr(type(cfg), "attribute_map", {}) or {}
    hidden_key = amap.get("hidden_size", "hidden_size")
    heads_key = amap.get("num_attention_heads", "num_attention_heads")
    heads_like = {k for k in own if k in HEAD_KEYS or k.endswith("attention_heads") or k == heads_key}
    int_heads = [own[k] for k in heads_like if isinstance(own[k], int) and not isinstance(own[k], bool)]
    orig_heads = max(int_heads) if int_heads else None
    head_dims = [own[k] for k in own if (k in HEAD_DIM_KEYS or k == "head_dim") and isinstance(own[k], int)]
    orig_head_dim = head_dims[0] if head_dims else None
    orig_hidden = own.get(hidden_key) if isinstance(own.get(hidden_key), int) else None
    if orig_head_dim is None and orig_hidden and orig_heads:
        orig_head_dim = orig_hidden // orig_heads
    # token ids anywhere in this config: the vocabulary keeps room for them
    token_ids = [v for k, v in own.items() if isinstance(v, int) and not isinstance(v, bool)
                 and (k.endswith("token_id") or k.endswith("token_index"))]
    max_token = max(token_ids) if token_ids else -1

    new: dict = {}
    # a count equal to the length of a structural list (`depths`, `conv_dim`) is the number of
    # stages, derived from that list: left alone
    structural = {len(v) for k, v in own.items() if isinstance(v, list) and v and "layer" not in k
                  and not is_kind_list(k, v)}
    layer_keys = [k for k, v in own.items() if is_layer_count(k, v) and v not in structural]
    counts = {k: own[k] for k in layer_keys}
    # hybrid layouts: one layer of each kind
    kind_lists = {k: v for k, v in own.items() if is_kind_list(k, v) and len(v) in counts.values()}
    n_layers = 2
    if kind_lists:
        n_layers = max(2, max(len(kinds_once(v, 1)) for v in kind_lists.values()))
        for k, v in kind_lists.items():
            new[k] = kinds_once(v, n_layers)[:max(n_layers, len(kinds_once(v, 1)))]
    for k, v in counts.items():
        if v > 2:
            target = n_layers if (kind_lists and v in {len(x) for x in kind_lists.values()}) else 2
            new[k] = min(v, target)
    orig_layers = max(counts.values()) if counts else None
    new_layers = max([new.get(k, v) for k, v in counts.items()], default=None)
    widths_scalar = [k for k, v in own.items() if isinstance(v, int) and not isinstance(v, bool)
                     and (k in HIDDEN_KEYS or k == hidden_key or (k == "hidden_dim" and v == orig_hidden))]
    if orig_heads is not None:
        # attention models: the fixed sizes
        hidden = HEADS * orig_head_dim if keep_head_dim and orig_head_dim else HIDDEN
        for k in widths_scalar:
            if own[k] > hidden:
                new[k] = hidden
        for k in heads_like:
            if isinstance(own[k], int) and not isinstance(own[k], bool) and own[k] > HEADS:
                new[k] = HEADS
        for k, v in own.items():
            if not isinstance(v, int) or isinstance(v, bool):
                continue
            if k in KV_HEAD_KEYS or "key_value_heads" in k or "kv_heads" in k:
                # as many as the heads (MHA), one (MQA), else a group of two (GQA)
                want = min(v, HEADS) if v >= orig_heads else (1 if v == 1 else min(v, 2))
                if want != v:
                    new[k] = want
            elif k in HEAD_DIM_KEYS or k.endswith("head_dim"):
                if v > HEAD_DIM and not keep_head_dim:
                    new[k] = HEAD_DIM
            elif "intermediate_size" in k or k in INTERMEDIATE_KEYS or (k == "hidden_dim" and k not in widths_scalar):
                if v > INTERMEDIATE:
                    new[k] = INTERMEDIATE
            elif k.endswith("lora_rank") and v > LORA_RANK:
                new[k] = LORA_RANK
    else:
        # no per-model head count (CNNs, stage models with a head count per stage): every width
        # divided by one power of two, so ratios and divisibility stay
        widths = [own[k] for k in widths_scalar]
        lists = {k: v for k, v in own.items() if k in LIST_WIDTH_KEYS and isinstance(v, list)
                 and v and all(isinstance(x, int) and not isinstance(x, bool) for x in v)}
        inter = [k for k, v in own.items() if isinstance(v, int) and not isinstance(v, bool)
                 and ("intermediate_size" in k or k in INTERMEDIATE_KEYS)]
        every = widths + [x for v in lists.values() for x in v] + [own[k] for k in inter]
        f = 1
        while every and f < 64 and all(x % (2 * f) == 0 and x // (2 * f) >= 8 for x in every):
            f *= 2
        if f > 1:
            for k in widths_scalar + inter:
                new[k] = own[k] // f
            for k, v in lists.items():
                new[k] = [x // f for x in v]
    for k, v in own.items():
        if isinstance(v, bool) or k in new:
            continue
        if isinstance(v, int):
            if k.endswith("vocab_size") and v > VOCAB:
                new[k] = min(v, max(VOCAB, max_token + 1))
            elif k in EXPERT_KEYS and v > EXPERTS:
                new[k] = EXPERTS
            elif k in TOP_K_KEYS and v > EXPERTS_PER_TOKEN:
                new[k] = EXPERTS_PER_TOKEN
            elif k in GROUP_KEYS and v > 1:
                new[k] = 1
            elif k == "first_k_dense_replace" and v > 1:
                new[k] = 1  # one dense layer, then one sparse
            elif k.endswith(("_period", "_step", "_freq", "_interval", "every_n_layers", "_pattern")) and v > 2 \
                    and orig_layers and v <= orig_layers:
                new[k] = 2
            elif (k == "image_size" and isinstance(own.get("patch_size"), int) and v > own["patch_size"] * PATCHES
                  and "window_size" not in own):  # windowed models need the default's multiple
                new[k] = own["patch_size"] * PATCHES
        elif isinstance(v, list):
            if (k.endswith("depths") and v and all(isinstance(x, int) for x in v) and max(v) > 2):
                new[k] = [min(x, 2) for x in v]
            elif (k == "image_size" and len(v) == 2 and isinstance(own.get("patch_size"), int)
                  and max(v) > own["patch_size"] * PATCHES and "window_size" not in own):
                new[k] = [own["patch_size"] * PATCHES] * 2
            elif ("layer" in k and orig_layers and new_layers and orig_layers > new_layers and v
                  and all(isinstance(x, int) and not isinstance(x, bool) and 0 <= x < orig_layers for x in v)
                  and k not in ("out_indices",)):
                kept = [x for x in v if x < new_layers]
                new[k] = kept or [new_layers - 1]
        elif isinstance(v, dict) and "rope" in k:
            scaled = scale_rope(v, orig_head_dim, new.get("head_dim", HEAD_DIM) if orig_heads else orig_head_dim)
            if scaled != v:
                new[k] = scaled
        elif isinstance(v, PretrainedConfig):
            multimodal = k == "text_config" and any(
                isinstance(own.get(o), PretrainedConfig) for o in ("vision_config", "audio_config"))
            new[k] = shrink_level(v, changes_only=False, keep_head_dim=multimodal)
    # period/offset pairs: the offset within the new period
    for k in list(new):
        if k.endswith("_period") and k[:-len("_period")] + "_offset" in own:
            off = k[:-len("_period")] + "_offset"
            if isinstance(own[off], int) and own[off] >= new[k]:
                new[off] = own[off] % new[k]
    if changes_only:
        return new
    full = cfg.to_dict()
    full.update(new)
    return full


def shrink(config_class) -> tuple:
    """(the shrunk config, the keyword arguments it was built from)."""
    default = config_class()
    kwargs = shrink_level(default, changes_only=True)
    return config_class(**kwargs), kwargs


# --------------------------------------------------------------------------------------------
# inputs
# --------------------------------------------------------------------------------------------
def sub_attr(config, name):
    """`name` of the config, else of its first sub-config that has it."""
    if getattr(config, name, None) is not None:
        return getattr(config, name)
    for k in ("vision_config", "audio_config", "encoder_config", "text_config", "backbone_config"):
        sub = getattr(config, k, None)
        if sub is not None and getattr(sub, name, None) is not None:
            return getattr(sub, name)
    return None


def make_inputs(model, config, model_type: str, with_images: bool = False):
    """(inputs, description) for the model's main input, or (None, why). `with_images`: a text
    model's forward also gets `pixel_values` at its vision config's size (dual encoders such as
    CLIP need both)."""
    import inspect

    import numpy as np
    import torch

    params = inspect.signature(model.forward).parameters
    main = getattr(model, "main_input_name", "input_ids")
    if main not in params:
        return None, f"no inputs known: main_input_name {main} is not a forward parameter"
    g = torch.Generator().manual_seed(0)
    inputs: dict = {}
    if main == "input_ids":
        vocab = sub_attr(config, "vocab_size") or VOCAB
        special = set()
        for cfg in [config] + [getattr(config, k) for k in vars(config)
                               if k.endswith("_config") and hasattr(getattr(config, k), "to_dict")]:
            for k, v in vars(cfg).items():
                if isinstance(v, int) and (k.endswith("token_id") or k.endswith("token_index")):
                    special.add(v)
        allowed = [i for i in range(4, min(vocab, VOCAB)) if i not in special]
        idx = torch.randint(0, len(allowed), (1, 8), generator=g)
        ids = torch.tensor(allowed)[idx]
        inputs["input_ids"] = ids
    elif main in ("pixel_values", "pixel_values_videos"):
        size = sub_attr(config, "image_size") or 64
        h, w = (size, size) if isinstance(size, int) else tuple(size)[:2]
        channels = sub_attr(config, "num_channels") or 3
        inputs[main] = torch.randn(1, channels, h, w, generator=g)
    elif main in ("input_values", "input_features"):
        from transformers.models.auto.feature_extraction_auto import FEATURE_EXTRACTOR_MAPPING_NAMES

        # an encoder of its own (`x_encoder`) takes the features of its model's extractor
        fe_name = FEATURE_EXTRACTOR_MAPPING_NAMES.get(model_type) or FEATURE_EXTRACTOR_MAPPING_NAMES.get(
            re.sub(r"_(encoder|audio|audio_encoder|speech_encoder)$", "", model_type))
        if fe_name is None:
            if main == "input_values":
                inputs[main] = torch.randn(1, 16000, generator=g)
            else:
                return None, f"no inputs known: {main} without a feature extractor"
        else:
            import transformers

            fe = getattr(transformers, fe_name)()
            rate = getattr(fe, "sampling_rate", 16000)
            audio = np.random.default_rng(0).standard_normal(rate).astype(np.float32) * 0.1
            feats = fe(audio, sampling_rate=rate, return_tensors="pt")
            if main not in feats:
                return None, f"no inputs known: the feature extractor {fe_name} gives no {main}"
            inputs[main] = feats[main].float()
    else:
        return None, f"no inputs known: main_input_name {main}"
    if with_images:
        vision = getattr(config, "vision_config", None)
        size = getattr(vision, "image_size", None)
        if main != "input_ids" or "pixel_values" not in params or not isinstance(size, int):
            return None, "no images derivable"
        inputs["pixel_values"] = torch.randn(1, getattr(vision, "num_channels", 3) or 3, size, size, generator=g)
    if getattr(config, "is_encoder_decoder", False) and "decoder_input_ids" in params:
        start = getattr(config, "decoder_start_token_id", None)
        inputs["decoder_input_ids"] = torch.full((1, 8), start if isinstance(start, int) else 1, dtype=torch.long)
    return inputs, {k: list(v.shape) for k, v in inputs.items()}


# --------------------------------------------------------------------------------------------
# one model, in its own process
# --------------------------------------------------------------------------------------------
def first_line(e: BaseException) -> str:
    """The error's first line, and the next one when the first only introduces it."""
    lines = [ln.strip() for ln in f"{type(e).__name__}: {e}".strip().splitlines() if ln.strip()]
    text = lines[0] if lines else ""
    if text.endswith(":") and len(lines) > 1:
        text += " " + lines[1]
    return lb.ADDR_RE.sub("0x?", text)[:300]


def sweep_one(model_type: str, class_name: str) -> dict:
    import contextlib
    import copy
    import inspect
    import io
    import warnings

    import torch
    import torch._dynamo
    import transformers
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    torch.set_num_threads(1)
    pkg = os.path.realpath(os.path.dirname(transformers.__file__))
    known = lb.gb_type_map(lb.load_registry())
    events: list = []
    lb.capture_breaks(torch, events)
    result: dict = {"model_type": model_type, "class": class_name}
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            cls = getattr(transformers, class_name)
        except Exception as e:
            result.update(status="not_importable", error=first_line(e))
            return result
        try:
            result["file"] = lh.rel(inspect.getsourcefile(cls), pkg)
        except Exception:
            result["file"] = None
        torch.manual_seed(0)
        try:
            config_class = CONFIG_MAPPING[model_type]
            result["config_class"] = config_class.__name__
            config, kwargs = shrink(config_class)
            result["config_changes"] = json.loads(json.dumps(kwargs, default=str))
            config._attn_implementation = None
            model = cls._from_config(config)
            model.float()
        except Exception as e:
            result.update(status="build_error", error=first_line(e))
            return result
        result["classes"] = sorted({type(m).__name__ for m in model.modules()
                                    if lh.rel(inspect.getsourcefile(type(m)) or "", pkg) == result["file"]})
        result["parameters"] = sum(p.numel() for p in model.parameters())
        try:
            inputs, desc = make_inputs(model, config, model_type)
        except Exception as e:
            result.update(status="input_error", error=first_line(e))
            return result
        if inputs is None:
            result.update(status="no_inputs", error=desc)
            return result
        result["inputs"] = desc
        model.eval()
        train_copy = copy.deepcopy(model)
        called: set = set()

        def eager(inputs):
            """Run a copy; note the classes whose forward ran."""
            m = copy.deepcopy(model)
            for sub in m.modules():
                sub.register_forward_pre_hook(lambda mod, args: called.add(type(mod).__name__))
            m(**inputs)

        try:
            eager(inputs)
        except Exception as e:
            # a multimodal model that needs its images too
            try:
                inputs2, desc2 = make_inputs(model, config, model_type, with_images=True)
            except Exception:
                inputs2 = None
            if inputs2 is None:
                result.update(status="eager_error", error=first_line(e))
                return result
            try:
                called.clear()
                eager(inputs2)
            except Exception:
                result.update(status="eager_error", error=first_line(e))
                return result
            inputs, result["inputs"] = inputs2, desc2
        result["status"] = "ok"
        # the modeling file's classes whose forward ran eagerly (a built tower the inputs do not
        # reach is in `classes`, not here)
        result["called"] = sorted(called & set(result["classes"]))
        result["modes"] = {}
        for mode in MODES:
            m = model if mode == "eval" else train_copy
            if mode == "train":
                m.train()
            events.clear()
            torch._dynamo.reset()
            try:
                ex = torch._dynamo.explain(m)(**inputs)
            except Exception as e:
                result["modes"][mode] = {"error": first_line(e),
                                         "breaks": lh.breaks_of(events, pkg, result["file"], known)}
                continue
            result["modes"][mode] = {"graph_count": ex.graph_count,
                                     "breaks": lh.breaks_of(events, pkg, result["file"], known)}
    return result


def child(model_type: str, class_name: str, conn) -> None:
    try:
        res = sweep_one(model_type, class_name)
    except BaseException as e:  # noqa: BLE001 - everything is a result here
        res = {"model_type": model_type, "class": class_name, "status": "crash",
               "error": first_line(e), "traceback_tail": traceback.format_exc().splitlines()[-3:]}
    conn.send(json.dumps(res, sort_keys=True, default=str))
    conn.close()


# --------------------------------------------------------------------------------------------
# the driver
# --------------------------------------------------------------------------------------------
def all_models() -> list:
    from transformers.models.auto.modeling_auto import MODEL_MAPPING_NAMES

    out = []
    for mt, name in MODEL_MAPPING_NAMES.items():
        if isinstance(name, (list, tuple)):  # several classes: the first is the base model
            name = name[0]
        out.append((mt, name))
    return sorted(out)


def done_types(path: Path) -> set:
    if not path.exists():
        return set()
    done = set()
    for line in path.read_text().splitlines():
        if line.strip():
            try:
                done.add(json.loads(line)["model_type"])
            except json.JSONDecodeError:
                pass  # a line cut by a kill; the model runs again
    return done


def run(args) -> int:
    import multiprocessing as mp

    # imported once here, inherited by every forked child; nothing here runs Dynamo or torch ops
    import torch  # noqa: F401
    import transformers  # noqa: F401

    ctx = mp.get_context("fork")
    models = all_models()
    if args.models:
        wanted = set(args.models)
        models = [m for m in models if m[0] in wanted]
    args.results.parent.mkdir(parents=True, exist_ok=True)
    if not args.results.exists() and args.out.exists():
        # a new checkout resumes from the committed labels
        with args.results.open("w") as f:
            for m in json.loads(args.out.read_text())["models"]:
                f.write(json.dumps(m, sort_keys=True) + "\n")
    done = done_types(args.results)
    # in a fixed pseudo-random order: a sweep stopped midway covers the whole alphabet
    todo = sorted((m for m in models if m[0] not in done),
                  key=lambda m: hashlib.sha1(m[0].encode()).hexdigest())
    print(f"{len(models)} models, {len(models) - len(todo)} done, {len(todo)} to run", flush=True)
    running: list = []  # (proc, conn, model_type, class, start)
    out = args.results.open("a")
    t0 = time.time()
    finished = 0
    while todo or running:
        while todo and len(running) < args.workers:
            mt, name = todo.pop(0)
            parent, kid = ctx.Pipe(duplex=False)
            p = ctx.Process(target=child, args=(mt, name, kid), daemon=True)
            p.start()
            kid.close()
            running.append((p, parent, mt, name, time.time()))
        time.sleep(0.2)
        for item in list(running):
            p, conn, mt, name, start = item
            res = None
            if conn.poll():
                try:
                    res = json.loads(conn.recv())
                except EOFError:
                    res = {"model_type": mt, "class": name, "status": "crash",
                           "error": f"worker exited with code {p.exitcode}"}
            elif not p.is_alive():
                res = {"model_type": mt, "class": name, "status": "crash",
                       "error": f"worker exited with code {p.exitcode}"}
            elif time.time() - start > args.timeout:
                p.kill()
                res = {"model_type": mt, "class": name, "status": "timeout",
                       "error": f"no result in {args.timeout} s"}
            if res is None:
                continue
            p.join(5)
            if p.is_alive():
                p.kill()
            conn.close()
            running.remove(item)
            res["seconds"] = round(time.time() - start, 1)
            out.write(json.dumps(res, sort_keys=True) + "\n")
            out.flush()
            finished += 1
            print(f"[{finished}/{len(todo) + len(running) + finished}] {mt:32s} {brief(res)}  "
                  f"({res['seconds']} s, {time.time() - t0:.0f} s total)", flush=True)
    out.close()
    return 0


def brief(res: dict) -> str:
    if res.get("status") != "ok":
        return f"{res.get('status')}: {res.get('error', '')[:120]}"
    parts = []
    for mode, r in res["modes"].items():
        if "error" in r:
            parts.append(f"{mode}: error {r['error'][:80]}")
        else:
            ids = sorted({f"{b['line']}:{b['gb_id']}" for b in r["breaks"]}, key=str)
            parts.append(f"{mode}: {r['graph_count']} graphs, {len(r['breaks'])} breaks {' '.join(ids[:6])}")
    return "; ".join(parts)


def load_results(path: Path) -> dict:
    by_type: dict = {}
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        try:
            res = json.loads(line)
        except json.JSONDecodeError:
            continue
        res.pop("seconds", None)
        res.pop("traceback_tail", None)
        by_type[res["model_type"]] = res  # the last run of a model wins
    return by_type


def write(args) -> int:
    import torch
    import transformers

    by_type = load_results(args.results)
    total = len(all_models())
    labels = {
        "torch_version": torch.__version__,
        "transformers_version": transformers.__version__,
        "modes": MODES,
        "models_total": total,
        "models_swept": len(by_type),
        "models": [by_type[k] for k in sorted(by_type)],
    }
    args.out.write_text(json.dumps(labels, indent=1, sort_keys=True) + "\n")
    print(f"wrote {len(by_type)} of {total} models to {args.out}")
    return 0


def summary(args) -> int:
    data = json.loads(args.out.read_text())
    models = data["models"]
    from collections import Counter

    status = Counter(m["status"] for m in models)
    print(f"models swept {len(models)} of {data['models_total']}: " + ", ".join(f"{k} {v}" for k, v in sorted(status.items())))
    ok = [m for m in models if m["status"] == "ok"]
    for mode in MODES:
        ran = [m for m in ok if "error" not in m["modes"].get(mode, {"error": 1})]
        broke = [m for m in ran if m["modes"][mode]["breaks"]]
        errs = len(ok) - len(ran)
        ids = Counter(b["gb_id"] or b["reason"][:40] for m in broke for b in m["modes"][mode]["breaks"])
        print(f"{mode}: explained {len(ran)} (explain errors {errs}), with breaks {len(broke)}; "
              f"gb ids: " + ", ".join(f"{k} {v}" for k, v in ids.most_common(12)))
    errors = Counter(re.sub(r"\d+", "N", m.get("error", ""))[:70] for m in models if m["status"] != "ok")
    for e, n in errors.most_common(15):
        print(f"  {n:4d}  {e}")
    return 0


def show(args) -> int:
    import multiprocessing as mp

    import torch  # noqa: F401
    import transformers  # noqa: F401

    names = dict(all_models())
    ctx = mp.get_context("fork")
    for mt in args.models:
        parent, kid = ctx.Pipe(duplex=False)
        p = ctx.Process(target=child, args=(mt, names[mt], kid))
        p.start()
        kid.close()
        res = json.loads(parent.recv()) if parent.poll(args.timeout) else {"status": "timeout"}
        p.join(5)
        print(json.dumps(res, indent=1, sort_keys=True))
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("command", choices=["run", "write", "show", "summary"])
    ap.add_argument("models", nargs="*", help="model types (default: all)")
    ap.add_argument("--results", type=Path, default=RESULTS, help="the resumable JSON-lines file")
    ap.add_argument("--out", type=Path, default=OUT, help="the labels `write` writes")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=240.0)
    args = ap.parse_args()
    os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    return {"run": run, "write": write, "show": show, "summary": summary}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
