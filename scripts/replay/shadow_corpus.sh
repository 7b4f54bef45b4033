#!/usr/bin/env bash
# The replay shadow check over every transformers modeling file (issue 40, item 1):
# `check --no-cache --output-format json` with STATICFX_REPLAY_SHADOW=1 and without; the two
# outputs must be byte-identical (the check changes no graph), and the tallies it printed are
# summed by tally.py.
#   STATICFX_TRANSFORMERS_ROOT=... scripts/replay/shadow_corpus.sh [OUT_DIR]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
bin="${CARGO_TARGET_DIR:-$repo/target}/release/staticfx"
out="${1:-$(mktemp -d)}"
mkdir -p "$out"
: "${STATICFX_TRANSFORMERS_ROOT:?set it to the directory holding the transformers package}"
mapfile -t files < <(ls "$STATICFX_TRANSFORMERS_ROOT"/transformers/models/*/modeling_*.py)
echo "${#files[@]} files, outputs in $out"
start=$(date +%s)
STATICFX_REPLAY_SHADOW=1 "$bin" check --no-cache --output-format json "${files[@]}" \
    >"$out/shadow_on.json" 2>"$out/shadow_on.err" || true
middle=$(date +%s)
"$bin" check --no-cache --output-format json "${files[@]}" \
    >"$out/shadow_off.json" 2>"$out/shadow_off.err" || true
end=$(date +%s)
echo "wall: shadow on $((middle - start)) s, off $((end - middle)) s"
if cmp -s "$out/shadow_on.json" "$out/shadow_off.json"; then
    echo "findings: byte-identical"
else
    echo "findings: DIFFER"
    exit 1
fi
python3 "$here/tally.py" "$out/shadow_on.err"
