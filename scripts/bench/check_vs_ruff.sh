#!/usr/bin/env bash
# Wall time of `staticfx check` (release build) next to `ruff check --select E,F` on the same
# files, in one run: both without a cache, then both with their caches, cold and warm. Sources: the transformers and timm wheels unzipped under $CORPUS
# (first argument or $STATICFX_CORPUS); they are not part of the repository.
#
#   scripts/bench/check_vs_ruff.sh [CORPUS_DIR]
#
# staticfx exits 1 when it has findings and 2 on a per-file error; only a crash (signal or
# "internal error") fails this script.
set -u
here="$(cd "$(dirname "$0")/../.." && pwd)"
corpus="${1:-${STATICFX_CORPUS:?pass the corpus directory or set STATICFX_CORPUS}}"
ruff="${RUFF:-ruff}"
# TARGETS="a b" overrides the default pair of source trees.
read -r -a targets <<<"${TARGETS:-$corpus/transformers $corpus/timm}"
out="${TMPDIR:-/tmp}/staticfx-bench"
mkdir -p "$out"

cargo build --quiet --release -j 2 --manifest-path "$here/Cargo.toml" 2>/dev/null || exit 3
bin="$here/target/release/staticfx"
nfiles=$(find "${targets[@]}" -name '*.py' | wc -l)
nlines=$(find "${targets[@]}" -name '*.py' -print0 | xargs -0 cat | wc -l)
echo "load: $(uptime)"
echo "corpus: $nfiles Python files, $nlines lines (${targets[*]})"

now() { date +%s.%N; }

# Cold without a cache, then each tool's cache: cold (empty directory) and warm (nothing changed).
rm -rf "$out/sfx-cache" "$out/ruff-cache"
t0=$(now)
"$bin" check --no-cache --output-format json "${targets[@]}" >"$out/staticfx.json" 2>"$out/staticfx.err"
sfx_status=$?
t1=$(now)
"$ruff" check --select E,F --no-cache --output-format json --exit-zero "${targets[@]}" >"$out/ruff.json" 2>"$out/ruff.err"
ruff_status=$?
t2=$(now)
"$bin" check --cache-dir "$out/sfx-cache" --output-format json "${targets[@]}" >/dev/null 2>&1
t3=$(now)
"$bin" check --cache-dir "$out/sfx-cache" --output-format json "${targets[@]}" >"$out/staticfx-warm.json" 2>/dev/null
t4=$(now)
"$ruff" check --select E,F --cache-dir "$out/ruff-cache" --exit-zero "${targets[@]}" >/dev/null 2>&1
t5=$(now)
"$ruff" check --select E,F --cache-dir "$out/ruff-cache" --exit-zero "${targets[@]}" >/dev/null 2>&1
t6=$(now)

sfx=$(echo "$t1 - $t0" | bc)
rf=$(echo "$t2 - $t1" | bc)
sfx_warm=$(echo "$t4 - $t3" | bc)
rf_warm=$(echo "$t6 - $t5" | bc)
echo "staticfx check --no-cache: ${sfx}s (exit $sfx_status)"
echo "ruff check --select E,F --no-cache: ${rf}s (exit $ruff_status)"
echo "ratio staticfx/ruff, no cache: $(echo "scale=2; $sfx / $rf" | bc)x"
echo "cache cold (empty): staticfx $(echo "$t3 - $t2" | bc)s, ruff $(echo "$t5 - $t4" | bc)s"
echo "cache warm (nothing changed): staticfx ${sfx_warm}s, ruff ${rf_warm}s, ratio $(echo "scale=2; $sfx_warm / $rf_warm" | bc)x"
echo "load after: $(uptime)"
if ! cmp -s "$out/staticfx.json" "$out/staticfx-warm.json"; then
    echo "FAIL: the warm cache reported other findings than a run without it" >&2
    exit 1
fi
python3 - "$out/staticfx.json" <<'PY'
import collections, json, sys
msgs = json.load(open(sys.argv[1]))
by = collections.Counter(m["code"] for m in msgs)
print("staticfx findings:", len(msgs), dict(sorted(by.items())))
PY
echo "per-file errors: $(grep -c '^staticfx: ' "$out/staticfx.err" || true) (see $out/staticfx.err)"
if grep -q "internal error" "$out/staticfx.err" || [ "$sfx_status" -gt 2 ]; then
    echo "FAIL: staticfx crashed" >&2
    exit 1
fi
