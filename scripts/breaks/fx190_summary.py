#!/usr/bin/env python3
"""Counts FX190 (possible graph break) and FX907 (unresolved call) findings in the JSON of
`staticfx check --output-format json`, grouped by what was called and why, for the table in
issue notes:

    staticfx check --output-format json CORPUS_DIR > out.json
    python3 scripts/breaks/fx190_summary.py out.json [more.json ...]
"""
import collections
import json
import re
import sys


def reason(message: str) -> str:
    if "compiled extension module" in message:
        return "compiled extension"
    if "trace rules skip" in message:
        return "module Dynamo skips"
    if "standard library" in message:
        return "C standard library"
    if "numpy function" in message:
        return "numpy not modelled"
    if "is installed but outside" in message:
        return "installed, not analysed"
    if "could not resolve" in message:
        return "unresolved value"
    if "is outside the analysed code" in message:
        return "outside the analysed code (before the environment)"
    if "not in the project or the Python environment" in message or "no Python environment" in message:
        return "module not installed"
    return "other"


def called(message: str) -> str:
    m = re.search(r"`([A-Za-z_][\w.]*)`", message)
    return m.group(1) if m else "?"


def main(paths):
    for path in paths:
        with open(path) as f:
            messages = json.load(f)
        counts = collections.Counter(m["code"] for m in messages)
        print(f"{path}: FX190 {counts['FX190']}, FX907 {counts['FX907']}")
        groups = collections.Counter(
            (m["code"], reason(m["message"]), called(m["message"]) if m["code"] == "FX190" else "")
            for m in messages
            if m["code"] in ("FX190", "FX907")
        )
        for (code, why, what), n in sorted(groups.items(), key=lambda kv: (-kv[1], kv[0])):
            print(f"  {n:5d}  {code}  {why:<48} {what}")


if __name__ == "__main__":
    main(sys.argv[1:])
