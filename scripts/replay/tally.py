"""Sums the `replay-shadow` lines a traced run printed (STATICFX_REPLAY_SHADOW=1, alone or
with STATICFX_REPLAY=1).

Prints the totals, the share of nodes a replay could copy, why the other repeats differ and
why first calls could not be copied, by kind and by module class, and any copy the shadow
predicted that differed from the full trace (there must be none).
"""

import collections
import re
import sys


def main(path):
    totals = collections.Counter()
    by_kind = collections.Counter()
    by_class = collections.Counter()
    dirty = collections.Counter()
    mispredicted = collections.Counter()
    traces = 0
    with open(path) as f:
        for line in f:
            if not line.startswith("replay-shadow"):
                continue
            traces += 1
            line = re.sub(r" class=\S*$", "", line.rstrip("\n"))
            head, *reasons = line.split(" | ")
            for key, value in re.findall(r"(\w+)=(\d+)", head):
                totals[key] += int(value)
            for reason in reasons:
                label, reason = ("", reason)
                if reason.startswith(("dirty ", "MISPREDICTED ")):
                    label, reason = reason.split(" ", 1)
                count, rest = reason.split("x ", 1)
                module, why = rest.split(": ", 1)
                if label == "dirty":
                    dirty[why] += int(count)
                    continue
                if label == "MISPREDICTED":
                    mispredicted[f"{module}: {why}"] += int(count)
                    continue
                words = why.split(" ")
                kind = " ".join(words[:3] if why.startswith("origin") else words[:2])
                by_kind[kind] += int(count)
                by_class[f"{module}: {kind}"] += int(count)
    print(f"traces {traces}")
    for key, value in totals.items():
        print(f"  {key} {value}")
    if totals["nodes"]:
        share = 100 * totals["replayable_nodes"] / totals["nodes"]
        print(f"nodes inside exact repeats: {share:.1f}%")
    print("repeats that differ, by kind:")
    for kind, count in by_kind.most_common():
        print(f"  {count} {kind}")
    print("most frequent (class: kind):")
    for key, count in by_class.most_common(15):
        print(f"  {count} {key}")
    print("first calls a replay may not copy, why:")
    for why, count in dirty.most_common():
        print(f"  {count} {why}")
    print(f"copies predicted that differ from the full trace: {sum(mispredicted.values())}")
    for key, count in mispredicted.most_common():
        print(f"  {count} {key}")


if __name__ == "__main__":
    main(sys.argv[1])
