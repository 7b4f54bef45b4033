"""Sums the `replay-shadow` lines a traced run printed (STATICFX_REPLAY_SHADOW=1).

Prints the totals, the share of nodes a replay could copy, and why the other repeats
differ, by kind and by module class.
"""

import collections
import re
import sys


def main(path):
    totals = collections.Counter()
    by_kind = collections.Counter()
    by_class = collections.Counter()
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
                count, rest = reason.split("x ", 1)
                module, why = rest.split(": ", 1)
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


if __name__ == "__main__":
    main(sys.argv[1])
