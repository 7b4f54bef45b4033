#!/usr/bin/env python3
"""Label the graph breaks of real transformers modeling files against the installed torch.

Usage (from the repository root, with a venv holding torch and transformers):

    "$VENV"/bin/python scripts/breaks/label_hf.py               # every model, writes the labels
    "$VENV"/bin/python scripts/breaks/label_hf.py llama bert    # these models, print only
    "$VENV"/bin/python scripts/breaks/label_hf.py --table       # the README table from the labels

For each architecture in `MODELS` this builds the base model class (`AutoModel.from_config`) of
its modeling file from a tiny config, runs a copy of it eagerly once (the model itself is never
called before Dynamo sees it), then runs it under `torch._dynamo.explain` in three conditions:

* `default`: eval mode, `model(input_ids=...)` (`pixel_values=...` for vision models);
* `output_attentions`: the same call with `output_attentions=True`;
* `gradient_checkpointing`: train mode after `model.gradient_checkpointing_enable()`;
* `global_attention`: for the models whose forward takes a `global_attention_mask` (Longformer,
  LED), the same call with global attention on the first token (the default call has none,
  so the global-attention code never runs).

Every graph break Dynamo reports is recorded with its gb id and gb_type (from the registry, as
`label_breaks.py` reads them), the frames of its user stack inside the transformers package, and
`line`: the innermost frame in the model's own modeling file (what `staticfx check` on that file
must report). Each model runs in a fresh interpreter (its conditions one after another, with
`torch._dynamo.reset()` before each), so no Dynamo cache leaks from one model into the next.

Output: `tests/expected/hf_breaks.json`, deterministic (paths relative to the transformers
package, sorted keys).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
import label_breaks as lb  # noqa: E402

OUT = ROOT / "tests" / "expected" / "hf_breaks.json"

CONDITIONS = ["default", "output_attentions", "gradient_checkpointing", "global_attention"]

# A tiny decoder/encoder: the usual names; configs map them with `attribute_map`.
TEXT = dict(vocab_size=99, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
            intermediate_size=64, max_position_embeddings=64)
GQA = dict(TEXT, num_key_value_heads=2)
VISION = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
              image_size=32, patch_size=8, num_channels=3)

# model_type -> config kwargs; "vision" models get pixel_values, the others input_ids.
MODELS: dict = {
    # decoder-only, dense
    "llama": GQA, "mistral": GQA, "qwen2": GQA, "qwen3": dict(GQA, head_dim=8),
    "gemma": dict(GQA, head_dim=8), "gemma2": dict(GQA, head_dim=8), "phi": TEXT,
    "phi3": dict(GQA, pad_token_id=0), "opt": dict(TEXT, ffn_dim=64, word_embed_proj_dim=32),
    "falcon": dict(TEXT, num_kv_heads=2), "gpt2": TEXT, "gpt_neo": dict(TEXT, attention_types=[[["global", "local"], 1]], window_size=16),
    "gptj": dict(TEXT, rotary_dim=4), "gpt_neox": TEXT, "bloom": TEXT, "olmo": GQA, "olmo2": GQA,
    "stablelm": GQA, "starcoder2": GQA, "cohere": GQA, "granite": GQA, "persimmon": TEXT,
    "codegen": dict(TEXT, rotary_dim=4), "biogpt": TEXT, "xglm": dict(TEXT, ffn_dim=64),
    "mpt": dict(TEXT, d_model=32, n_heads=4, n_layers=2, expansion_ratio=2), "helium": dict(GQA, head_dim=8),
    "glm": dict(GQA, head_dim=8), "nemotron": dict(GQA, head_dim=8), "gpt_bigcode": TEXT,
    "ctrl": dict(TEXT, dff=64), "smollm3": GQA, "exaone4": GQA, "seed_oss": dict(GQA, head_dim=8),
    # decoder-only, mixture of experts
    "mixtral": dict(GQA, num_local_experts=4, num_experts_per_tok=2),
    "qwen2_moe": dict(GQA, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=32,
                      shared_expert_intermediate_size=32),
    "olmoe": dict(GQA, num_experts=4, num_experts_per_tok=2),
    "qwen3_moe": dict(GQA, head_dim=8, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=32),
    # encoder-only
    "bert": TEXT, "roberta": TEXT, "distilbert": dict(TEXT, dim=32, n_layers=2, n_heads=4, hidden_dim=64),
    "albert": dict(TEXT, embedding_size=16), "electra": dict(TEXT, embedding_size=16),
    "deberta": TEXT, "deberta-v2": TEXT, "xlm-roberta": TEXT, "camembert": TEXT, "mpnet": TEXT,
    "ernie": TEXT, "megatron-bert": TEXT, "convbert": dict(TEXT, embedding_size=32),
    "roformer": dict(TEXT, embedding_size=32), "modernbert": dict(TEXT, global_attn_every_n_layers=2, local_attention=16, pad_token_id=0),
    # encoder-decoder
    "t5": dict(vocab_size=99, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4),
    "bart": dict(vocab_size=99, d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
                 decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64, max_position_embeddings=64),
    # models whose modeling files hold the break reasons of real HF code (autograd.Function,
    # `.item()` in helpers, data-dependent code)
    "phimoe": dict(GQA, num_local_experts=4, num_experts_per_tok=2), "jetmoe": dict(TEXT, num_local_experts=4, num_experts_per_tok=2, kv_channels=8),
    "granitemoe": dict(GQA, num_local_experts=4, num_experts_per_tok=2), "dbrx": dict(d_model=32, n_heads=4, n_layers=2, max_seq_len=64, vocab_size=99),
    "deepseek_v3": dict(GQA, moe_intermediate_size=32, n_routed_experts=4, num_experts_per_tok=2, n_group=1, topk_group=1, first_k_dense_replace=1, kv_lora_rank=16, q_lora_rank=16, qk_rope_head_dim=8, qk_nope_head_dim=8, v_head_dim=8),
    "big_bird": TEXT, "longformer": dict(TEXT, attention_window=4),
    "funnel": dict(vocab_size=99, d_model=32, n_head=4, d_head=8, d_inner=64, block_sizes=[1, 1], num_decoder_layers=1),
    "xlnet": dict(vocab_size=99, d_model=32, n_layer=2, n_head=4, d_inner=64), "mobilebert": dict(TEXT, embedding_size=16, intra_bottleneck_size=32, true_hidden_size=32),
    "squeezebert": dict(TEXT, embedding_size=32), "layoutlm": TEXT, "nystromformer": dict(TEXT, num_landmarks=4, segment_means_seq_len=8),
    "fnet": TEXT, "ibert": TEXT, "data2vec-text": TEXT, "rembert": dict(TEXT, input_embedding_size=32, output_embedding_size=32),
    "rwkv": dict(vocab_size=99, hidden_size=32, num_hidden_layers=2, attention_hidden_size=32, intermediate_size=64, context_length=64),
    "recurrent_gemma": dict(GQA, head_dim=8, lru_width=32, block_types=["recurrent", "attention"]),
    "led": dict(vocab_size=99, d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4, decoder_attention_heads=4,
                encoder_ffn_dim=64, decoder_ffn_dim=64, attention_window=4, max_encoder_position_embeddings=64, max_decoder_position_embeddings=64),
    # vision
    "vit": VISION, "deit": VISION, "beit": VISION, "dinov2": VISION,
    "convnext": dict(hidden_sizes=[8, 16, 32, 64], depths=[1, 1, 1, 1], image_size=32),
    "resnet": dict(hidden_sizes=[8, 16, 32, 64], depths=[1, 1, 1, 1], embedding_size=8),
}
VISION_TYPES = {"vit", "deit", "beit", "dinov2", "convnext", "resnet"}
ENCODER_DECODER = {"t5", "bart"}


def rel(path: str, pkg: str) -> str | None:
    """The path inside the transformers package, or None outside it."""
    path = os.path.realpath(path)
    if path.startswith(pkg + os.sep):
        return Path(path[len(pkg) + 1:]).as_posix()
    return None


def run_one(model_type: str, condition: str) -> dict:
    import contextlib
    import copy
    import inspect
    import io
    import warnings

    import torch
    import torch._dynamo
    import transformers
    from transformers import AutoConfig, AutoModel

    pkg = os.path.realpath(os.path.dirname(transformers.__file__))
    known = lb.gb_type_map(lb.load_registry())
    events: list = []

    lb.capture_breaks(torch, events)

    kwargs = dict(MODELS[model_type])
    result: dict = {"model_type": model_type, "condition": condition}
    torch.manual_seed(0)
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            config = AutoConfig.for_model(model_type, **kwargs)
            model = AutoModel.from_config(config)
        except Exception as e:
            result["build_error"] = f"{type(e).__name__}: {e}".splitlines()[0][:200]
            return result
        cls = type(model)
        result["class"] = cls.__name__
        result["config_class"] = type(config).__name__
        result["file"] = rel(inspect.getsourcefile(cls), pkg)
        # the modeling file's classes this model is built from: a check finding inside another
        # class of the file (a task head) was not run here, so it is not labelled either way
        result["classes"] = sorted({type(m).__name__ for m in model.modules()
                                    if rel(inspect.getsourcefile(type(m)), pkg) == result["file"]})
        if model_type in VISION_TYPES:
            size = getattr(config, "image_size", 32)
            inputs = {"pixel_values": torch.randn(1, 3, size, size)}
        else:
            inputs = {"input_ids": torch.randint(0, 99, (1, 8))}
            if model_type in ENCODER_DECODER:
                inputs["decoder_input_ids"] = torch.randint(0, 99, (1, 8))
        if condition == "global_attention":
            if "global_attention_mask" not in inspect.signature(model.forward).parameters:
                result["skipped"] = "the model takes no global_attention_mask"
                return result
            mask = torch.zeros_like(inputs["input_ids"])
            mask[:, 0] = 1
            inputs["global_attention_mask"] = mask
        if condition == "output_attentions":
            inputs["output_attentions"] = True
        if condition == "gradient_checkpointing":
            if not getattr(model, "supports_gradient_checkpointing", False):
                result["skipped"] = "model does not support gradient checkpointing"
                return result
            model.gradient_checkpointing_enable()
            model.train()
            # dropout would make the eager check and explain differ; the checkpointing path is
            # the point here
            for m in model.modules():
                if isinstance(m, torch.nn.Dropout):
                    m.p = 0.0
        else:
            model.eval()
        # no torch.no_grad(): parameters require grad, as when a model is compiled as it stands,
        # and Dynamo traces autograd.Function.apply only then.
        # The eager check runs on a copy: a forward may change the model on its first call
        # (BigBird switches `attention_type` to "original_full" for short inputs), and Dynamo
        # must see the model as a user compiles it, never called before.
        try:
            copy.deepcopy(model)(**inputs)
        except Exception as e:
            result["eager_error"] = f"{type(e).__name__}: {e}".splitlines()[0][:200]
            return result
        events.clear()
        torch._dynamo.reset()
        try:
            ex = torch._dynamo.explain(model)(**inputs)
        except Exception as e:
            result["explain_error"] = f"{type(e).__name__}: {e}".splitlines()[0][:200]
            return result

    breaks = breaks_of(events, pkg, result["file"], known)
    result.update({"breaks": breaks, "graph_count": ex.graph_count})
    return result


def breaks_of(events: list, pkg: str, own: str, known: dict) -> list:
    """The breaks `lb.capture_breaks` collected, one entry per (line, gb id, kind, innermost
    frame): `line` is the innermost frame in `own` (the model's modeling file, relative to
    the transformers package `pkg`), `stack` the frames inside the package."""
    breaks: list = []
    index: dict = {}
    for kind, reason, frames in events:
        stack = [{"file": r, "line": ln, "function": fn.strip()}
                 for (f, ln, fn) in frames if (r := rel(f, pkg)) is not None]
        in_own = [fr["line"] for fr in stack if fr["file"] == own]
        types = lb.gb_types_in(reason, known)
        gb_type = types[0] if types else None
        gb_id = known.get(gb_type) if gb_type else None
        doc = lb.DOC_ID_RE.search(reason)
        if gb_id is None and doc:
            gb_id = "GB" + doc.group("num")
        line = in_own[-1] if in_own else None
        site = stack[-1] if stack else None
        key = (line, gb_id, kind, None if site is None else (site["file"], site["line"]))
        if key in index:
            breaks[index[key]]["reports"] += 1
            continue
        index[key] = len(breaks)
        entry = {
            "line": line,
            "gb_id": gb_id,
            "gb_type": gb_type,
            "reason": field_or_first(reason),
            "stack": stack,
            "reports": 1,
        }
        if kind != "graph_break":
            entry["frame_skipped"] = True
        if types[1:]:
            entry["chained"] = [known.get(t) or t for t in types[1:]]
        breaks.append(entry)
    breaks.sort(key=lambda b: (b["line"] if b["line"] is not None else -1, b["gb_id"] or ""))
    return breaks


def field_or_first(reason: str) -> str:
    text = lb.field(reason, "Explanation:") or (reason.strip().splitlines() or [""])[0]
    return lb.ADDR_RE.sub("0x?", text)[:240]


def run_model(model_type: str) -> list:
    """Every condition of one model, in this interpreter (torch and transformers imported
    once); the default first, and nothing else when it does not run."""
    runs = []
    for cond in CONDITIONS:
        res = run_one(model_type, cond)
        runs.append(res)
        if cond == "default" and "breaks" not in res:
            break
    return runs


def run_isolated(model_type: str) -> list:
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--one", model_type],
        capture_output=True, text=True, cwd=str(ROOT), timeout=900,
        env={**os.environ, "PYTHONHASHSEED": "0", "CUDA_VISIBLE_DEVICES": "",
             "PYTHONDONTWRITEBYTECODE": "1", "TRANSFORMERS_VERBOSITY": "error"},
    )
    marker = "STATICFX-RESULT "
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(marker):
            return json.loads(line[len(marker):])
    tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
    return [{"model_type": model_type, "condition": "default",
             "explain_error": f"label subprocess failed (rc={proc.returncode}): {tail}"[:200]}]


def summary(res: dict) -> str:
    for key in ("build_error", "eager_error", "explain_error", "skipped"):
        if key in res:
            return f"{key}: {res[key]}"
    if not res["breaks"]:
        return f"no break ({res['graph_count']} graph)"
    return ", ".join(f"L{b['line']} {b['gb_id']}" for b in res["breaks"])


def merge(per_condition: list) -> dict:
    """One model's record: the default run's fields plus each flag's breaks."""
    base = dict(per_condition[0])
    base.pop("condition", None)
    base["config_kwargs"] = MODELS[base["model_type"]]
    flags = {}
    for res in per_condition[1:]:
        cond = res.pop("condition")
        res.pop("model_type", None)
        for k in ("class", "config_class", "file", "classes"):
            res.pop(k, None)
        flags[cond] = res
    base["flags"] = flags
    return base


def table(labels: dict) -> str:
    rows = ["| model | file | class | graphs | breaks (line gb id) | under a flag |",
            "| --- | --- | --- | --- | --- | --- |"]
    for m in labels["models"]:
        if "breaks" not in m:
            rows.append(f"| {m['model_type']} | {m.get('file', '')} | {m.get('class', '')} | | {summary(m)} | |")
            continue
        own = ", ".join(f"{b['line']} {b['gb_id']}" for b in m["breaks"]) or "none"
        flagged = []
        for cond, res in m["flags"].items():
            extra = [f"{b['line']} {b['gb_id']}" for b in res.get("breaks", [])
                     if (b["line"], b["gb_id"]) not in {(x["line"], x["gb_id"]) for x in m["breaks"]}]
            if extra:
                flagged.append(f"{cond}: " + ", ".join(extra))
        rows.append(f"| {m['model_type']} | {m['file']} | {m['class']} | {m['graph_count']} | {own} "
                    f"| {'; '.join(flagged)} |")
    return "\n".join(rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("models", nargs="*", help="model types; default: all (and write the labels)")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--table", action="store_true", help="print the labels as a markdown table")
    ap.add_argument("--out", type=Path, help="write the labels of the named models to this file")
    ap.add_argument("--merge", type=Path, help="merge the models of a file written with --out into the labels")
    args = ap.parse_args()
    if args.table:
        print(table(json.loads(OUT.read_text())))
        return 0
    if args.merge:
        labels = json.loads(OUT.read_text()) if OUT.exists() else {"models": []}
        labels.update({k: v for k, v in json.loads(args.merge.read_text()).items() if k != "models"})
        extra = json.loads(args.merge.read_text())["models"]
        names = {m["model_type"] for m in extra}
        labels["models"] = sorted([m for m in labels["models"] if m["model_type"] not in names] + extra,
                                  key=lambda m: m["model_type"])
        OUT.write_text(json.dumps(labels, indent=2, sort_keys=True) + "\n")
        print(f"merged {len(extra)} models into {OUT.relative_to(ROOT)}")
        return 0
    if args.one:
        res = run_model(args.one)
        sys.stdout.flush()
        print("STATICFX-RESULT " + json.dumps(res, sort_keys=True))
        return 0

    import torch
    import transformers

    types = args.models or list(MODELS)
    models = []
    for mt in types:
        runs = run_isolated(mt)
        for res in runs:
            print(f"{mt:16s} {res['condition']:24s} {summary(res)}", flush=True)
        models.append(merge(runs))
        if args.out:  # what is done so far, so a stopped run is not lost
            partial = {"torch_version": torch.__version__, "transformers_version": transformers.__version__,
                       "conditions": CONDITIONS, "models": models}
            args.out.write_text(json.dumps(partial, indent=2, sort_keys=True) + "\n")
    if args.models and not args.out:
        print(json.dumps(models, indent=2, sort_keys=True))
        return 0
    labels = {"torch_version": torch.__version__, "transformers_version": transformers.__version__,
              "conditions": CONDITIONS, "models": sorted(models, key=lambda m: m["model_type"])}
    out = args.out or OUT
    out.write_text(json.dumps(labels, indent=2, sort_keys=True) + "\n")
    print(f"wrote {len(models)} models to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
