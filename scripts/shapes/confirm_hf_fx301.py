#!/usr/bin/env python3
"""Run the transformers models whose modeling files `staticfx check` flags FX301 on, built from
their default configs (one text layer, one vision block), with eager PyTorch, and print where
they raise. Confirms that the findings are the library's own: these default configs do not run.

Usage (needs torch and transformers 5.24 in the running interpreter):

    "$VENV"/bin/python scripts/shapes/confirm_hf_fx301.py

Measured with torch 2.15.0 and transformers 5.24.0: all three raise `split_with_sizes expects
split_sizes to sum exactly to N` on the lines staticfx reports (glm4v 489, glm4v_moe 116,
glm_image 113): `mrope_section` [8, 12, 12] sums to 32, while the rotary embedding's
`inv_freq` has 64 (glm4v, glm_image) or 11 (glm4v_moe) entries.
"""

import traceback

import torch
import transformers

CASES = [
    ("Glm4vConfig", "Glm4vModel"),
    ("Glm4vMoeConfig", "Glm4vMoeModel"),
    ("GlmImageConfig", "GlmImageModel"),
]


def main() -> None:
    for config_name, model_name in CASES:
        config = getattr(transformers, config_name)()
        config.text_config.num_hidden_layers = 1
        if hasattr(getattr(config, "vision_config", None), "depth"):
            config.vision_config.depth = 1
        model = getattr(transformers, model_name)(config).eval()
        ids = torch.randint(0, 100, (1, 7))
        try:
            with torch.no_grad():
                model(input_ids=ids)
            print(f"{model_name}: runs")
        except Exception as e:  # the point is to see what raises
            frames = [f for f in traceback.extract_tb(e.__traceback__) if "modeling_" in f.filename]
            where = f"{frames[-1].filename.split('/')[-1]}:{frames[-1].lineno}" if frames else "?"
            print(f"{model_name}: {type(e).__name__} at {where}: {str(e).splitlines()[0]}")


if __name__ == "__main__":
    main()
