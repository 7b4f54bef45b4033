#!/usr/bin/env python3
"""Check FX201 findings on transformers models with torch.compile: does the model recompile
on identical calls, and on which guard?

Usage: "$VENV"/bin/python scripts/recompiles/confirm_hf_fx201.py   (torch, transformers)

Each model is built from its default config with 2 layers (random weights, no download), put
in eval mode, compiled with a counting backend and called three times with the same inputs;
the recompiles and their guards come from Dynamo's recompile log.
"""

import logging

import torch
import transformers

CASES = [
    # (model class, config class, config overrides, input builder)
    ("RwkvModel", "RwkvConfig", {"num_hidden_layers": 2, "vocab_size": 100, "hidden_size": 32,
                                 "attention_hidden_size": 32, "intermediate_size": 64},
     lambda: {"input_ids": torch.randint(0, 100, (1, 8))}),
    ("BigBirdModel", "BigBirdConfig", {"num_hidden_layers": 2, "vocab_size": 100, "hidden_size": 32,
                                       "num_attention_heads": 2, "intermediate_size": 64},
     lambda: {"input_ids": torch.randint(0, 100, (1, 16))}),
]


def main():
    records = []

    class Capture(logging.Handler):
        def emit(self, record):
            msg = record.getMessage()
            if "Recompiling function" in msg:
                records.append(msg)

    torch._logging.set_logs(recompiles=True)
    log = logging.getLogger("torch._dynamo")
    log.addHandler(Capture())
    log.propagate = False
    for model_name, config_name, overrides, inputs in CASES:
        torch._dynamo.reset()
        records.clear()
        torch.manual_seed(0)
        config = getattr(transformers, config_name)(**overrides)
        model = getattr(transformers, model_name)(config).eval()
        frames = [0]

        def counting(gm, example_inputs):
            frames[0] += 1
            return gm.forward

        compiled = torch.compile(model, backend=counting)
        args = inputs()
        with torch.no_grad():
            for _ in range(3):
                compiled(**args)
        guards = [next((l.strip() for l in r.splitlines() if l.strip().startswith("- ")), "") for r in records]
        print(f"{model_name}: {len(records)} recompiles on 3 identical calls, {frames[0]} graphs")
        for g in guards:
            print(f"  {g[:200]}")


if __name__ == "__main__":
    main()
