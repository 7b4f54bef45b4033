#!/usr/bin/env python3
"""Analysis limits (FX9xx) per file, from `staticfx check --output-format json`.

    cd ROOT && staticfx check FOLDER --output-format json --exit-zero --no-cache > out.json
    python3 scripts/limits_per_file.py FOLDER out.json

or, to run check itself (STATICFX names the binary, default `staticfx`; extra arguments after
`--` go to check, e.g. `-- --python VENV`):

    cd ROOT && python3 scripts/limits_per_file.py FOLDER -- --python VENV

FOLDER is counted file by file: every `.py` under it, so a file with no limit counts as 0.
Prints the median and the distribution of limits per file, the files with the most, and the
most frequent messages with backticked names replaced by `_`.
"""
import collections
import json
import os
import re
import statistics
import subprocess
import sys


def main(argv):
    if not argv:
        print(__doc__)
        return 2
    folder = argv[0]
    if not os.path.isdir(folder):
        print(f"{folder}: not a folder (run from the project root)", file=sys.stderr)
        return 2
    rest = argv[1:]
    if rest and rest[0] != "--":
        with open(rest[0]) as f:
            diags = json.load(f)
    else:
        extra = rest[1:] if rest else []
        exe = os.environ.get("STATICFX", "staticfx")
        cmd = [exe, "check", folder, "--output-format", "json", "--exit-zero", "--no-cache"]
        out = subprocess.run(cmd + extra, check=True, capture_output=True, text=True).stdout
        diags = json.loads(out)
    files = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames.sort()
        files += [os.path.normpath(os.path.join(dirpath, n)) for n in sorted(filenames) if n.endswith(".py")]
    per_file = collections.Counter({f: 0 for f in files})
    messages = collections.Counter()
    codes = collections.Counter()
    for d in diags:
        codes[d["code"]] += 1
        if not d["code"].startswith("FX9"):
            continue
        per_file[os.path.normpath(d["filename"])] += 1
        msg = re.sub(r"`[^`]*`", "`_`", d["message"].removeprefix("analysis limit: "))
        messages[f'{d["code"]} {msg[:110]}'] += 1
    counts = sorted(per_file.values())
    total = sum(counts)
    print(f"{len(counts)} files, {total} analysis limits (FX9xx), "
          f"median per file {statistics.median(counts) if counts else 0}, "
          f"mean {total / max(len(counts), 1):.2f}, files with 0: {counts.count(0)}")
    print("codes: " + ", ".join(f"{c} {n}" for c, n in sorted(codes.items())))
    dist = collections.Counter(min(c, 10) for c in counts)
    print("limits per file: " + ", ".join(
        f"{'10+' if k == 10 else k}: {v}" for k, v in sorted(dist.items())))
    print("\nmost limits:")
    for f, n in per_file.most_common(10):
        print(f"  {n:4} {f}")
    print("\nmost frequent:")
    for m, n in messages.most_common(25):
        print(f"  {n:4} {m}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
