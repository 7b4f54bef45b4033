#!/usr/bin/env bash
# Nightly-style fuzzing (not run by scripts/test-all.sh): builds the cargo-fuzz targets in
# fuzz/ and runs each for SECONDS (default 300) from a corpus seeded with the test fixtures.
# Every crash, timeout or OOM found is copied to tests/fuzz/<target>/, where
# tests/fuzz_regressions.rs replays it in the normal `cargo test`; the script then exits 1.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]      # default: all four targets
#
# Needs `cargo install cargo-fuzz`. Works on a stable toolchain: RUSTC_BOOTSTRAP=1 unlocks the
# nightly flags cargo-fuzz passes; the sanitizer defaults to none (FUZZ_SANITIZER=address for
# ASan where its runtime is installed). Use CARGO_BUILD_JOBS to limit the build's parallelism.
set -euo pipefail

cd "$(dirname "$0")/.."
SECS=${1:-300}
shift || true
TARGETS=("$@")
if [ ${#TARGETS[@]} -eq 0 ]; then
    TARGETS=(graph_breaks fixes cache_load lsp_dispatch)
fi
SAN=${FUZZ_SANITIZER:-none}
export RUSTC_BOOTSTRAP=1
FUZZ=(cargo fuzz)
command -v cargo-fuzz >/dev/null || { echo "cargo-fuzz missing: cargo install cargo-fuzz" >&2; exit 2; }

echo "== building fuzz targets (sanitizer: $SAN)"
"${FUZZ[@]}" build -O --sanitizer "$SAN" --fuzz-dir fuzz

CORPUS=fuzz/corpus
mkdir -p "$CORPUS"/{graph_breaks,fixes,cache_load,lsp_dispatch}

echo "== seeding corpora from tests/fixtures"
for f in tests/fixtures/*/*.py tests/fixtures/projects/*/*.py tests/fuzz/graph_breaks/* tests/fuzz/fixes/*; do
    [ -f "$f" ] || continue
    case "$f" in *.md) continue ;; esac
    name=$(echo "$f" | tr '/' '_')
    cp "$f" "$CORPUS/graph_breaks/$name"
    cp "$f" "$CORPUS/fixes/$name"
done
# Cache files: the optimized graphs of the model fixtures, as `graph --optimize` stores them.
# A current staticfx binary (STATICFX_BIN, else the newest build here, else a debug build).
BIN=${STATICFX_BIN:-}
for b in target/debug/staticfx target/release/staticfx; do
    [ -z "$BIN" ] && [ -x "$b" ] && BIN=$b
done
if [ -z "$BIN" ]; then
    cargo build -q && BIN=target/debug/staticfx
fi
cache_tmp=$(mktemp -d)
for f in tests/fixtures/models/*.py tests/fixtures/breaks/*.py; do
    "$BIN" graph "$f" --optimize --cache-dir "$cache_tmp" >/dev/null 2>&1 || true
done
cp "$cache_tmp"/*.json "$CORPUS/cache_load/" 2>/dev/null || true
rm -rf "$cache_tmp"
cp tests/fuzz/cache_load/* "$CORPUS/cache_load/" 2>/dev/null || true
# Client byte streams: opening, editing and querying each fixture (the harness initializes).
python3 - "$CORPUS/lsp_dispatch" tests/fixtures/lsp/*.py tests/fixtures/breaks/*.py <<'PY'
import json, sys, os
out, files = sys.argv[1], sys.argv[2:]
uri = "file:///staticfx-fuzz-root/model.py"
def frame(o):
    b = json.dumps(o).encode()
    return b"Content-Length: %d\r\n\r\n" % len(b) + b
for i, f in enumerate(files):
    text = open(f, encoding="utf-8", errors="replace").read()
    msgs = [
        {"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": text}]}},
        {"jsonrpc": "2.0", "id": 10, "method": "textDocument/hover", "params": {"textDocument": {"uri": uri}, "position": {"line": 5, "character": 12}}},
        {"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {"textDocument": {"uri": uri, "version": 3}, "contentChanges": [{"range": {"start": {"line": 3, "character": 0}, "end": {"line": 4, "character": 2}}, "text": "é😀\r\n"}]}},
        {"jsonrpc": "2.0", "id": 11, "method": "textDocument/codeAction", "params": {"textDocument": {"uri": uri}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 30, "character": 0}}, "context": {"diagnostics": []}}},
        {"jsonrpc": "2.0", "id": 12, "method": "workspace/executeCommand", "params": {"command": "staticfx.showGraph", "arguments": [{"uri": uri, "position": {"line": 8, "character": 4}, "optimized": i % 2 == 0}]}},
    ]
    with open(os.path.join(out, f"seed_{i}_{os.path.basename(f)}.jsonrpc"), "wb") as fh:
        fh.write(b"".join(frame(m) for m in msgs))
PY
cp tests/fuzz/lsp_dispatch/* "$CORPUS/lsp_dispatch/" 2>/dev/null || true

found=0
for t in "${TARGETS[@]}"; do
    echo "== fuzzing $t for ${SECS}s"
    mkdir -p "fuzz/artifacts/$t"
    "${FUZZ[@]}" run -O --sanitizer "$SAN" --fuzz-dir fuzz "$t" "$CORPUS/$t" -- \
        -max_total_time="$SECS" -timeout=120 -rss_limit_mb=4096 -max_len=65536 \
        -print_final_stats=1 || true
    for a in fuzz/artifacts/"$t"/crash-* fuzz/artifacts/"$t"/timeout-* fuzz/artifacts/"$t"/oom-*; do
        [ -f "$a" ] || continue
        dest="tests/fuzz/$t/$(basename "$a")"
        known=0
        for k in tests/fuzz/"$t"/*; do
            cmp -s "$a" "$k" && known=1
        done
        if [ "$known" = 0 ]; then
            cp "$a" "$dest"
            echo "!! $t: new finding $a -> $dest"
            found=1
        fi
    done
done
if [ "$found" = 1 ]; then
    echo "Findings were copied to tests/fuzz/; fix them and keep the files (cargo test --test fuzz_regressions)."
    exit 1
fi
echo "== no findings"
