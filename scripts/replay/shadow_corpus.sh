#!/usr/bin/env bash
# Replay (issue 40, item 1) over transformers modeling files: `check --no-cache --output-format
# json` three times, plain, with the shadow check (STATICFX_REPLAY_SHADOW=1: every call traced,
# each predicted copy verified) and with replay (STATICFX_REPLAY=1, tallies printed too). The
# three outputs must be byte-identical; the wall times and phase clocks are printed, and the
# tallies summed by tally.py.
#   STATICFX_TRANSFORMERS_ROOT=... scripts/replay/shadow_corpus.sh [OUT_DIR [FILE...]]
# Without files, every modeling file. Set VIRTUAL_ENV to the user environment as for `check`.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
bin="${CARGO_TARGET_DIR:-$repo/target}/release/staticfx"
out="${1:-$(mktemp -d)}"
mkdir -p "$out"
shift || true
: "${STATICFX_TRANSFORMERS_ROOT:?set it to the directory holding the transformers package}"
if [ "$#" -gt 0 ]; then
    files=("$@")
else
    mapfile -t files < <(ls "$STATICFX_TRANSFORMERS_ROOT"/transformers/models/*/modeling_*.py)
fi
echo "${#files[@]} files, outputs in $out"
run() {
    local name="$1"
    shift
    local start end
    start=$(date +%s.%N)
    env "$@" STATICFX_PHASE_CLOCK=1 "$bin" check --no-cache --exit-zero --output-format json \
        "${files[@]}" >"$out/$name.json" 2>"$out/$name.err" || true
    end=$(date +%s.%N)
    printf '%-7s wall %6.1f s\n' "$name" "$(echo "$end - $start" | bc)"
    grep '^phase' "$out/$name.err" | sed 's/^/        /' || true
}
# an empty value still counts as set: the runs unset what they do not want
run plain -u STATICFX_REPLAY_SHADOW -u STATICFX_REPLAY
run shadow -u STATICFX_REPLAY STATICFX_REPLAY_SHADOW=1
run replay STATICFX_REPLAY=1 STATICFX_REPLAY_SHADOW=1
status=0
for name in shadow replay; do
    if cmp -s "$out/plain.json" "$out/$name.json"; then
        echo "findings $name: byte-identical to plain"
    else
        echo "findings $name: DIFFER from plain"
        status=1
    fi
done
echo "== shadow"
python3 "$here/tally.py" "$out/shadow.err"
echo "== replay"
python3 "$here/tally.py" "$out/replay.err"
exit $status
