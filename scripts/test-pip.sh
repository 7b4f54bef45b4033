#!/usr/bin/env bash
# The newcomer's path, end to end, in ONE fresh venv under target/ (never in HOME):
#   1. build the wheel with maturin and install it into the venv;
#   2. `staticfx --version`, `python -m staticfx --version`, and `staticfx check` on the bundled
#      examples/graph_break.py (exit 1, FX101 printed);
#   3. the real `pre-commit` from PyPI on a temporary git repository whose
#      .pre-commit-config.yaml points at this checkout (a local path, rev = HEAD): the
#      `staticfx-check` hook fails on the example and passes once `staticfx fix` fixed it.
# pre-commit installs the hook from git, so it builds the committed HEAD: uncommitted changes
# are not in that part (the script says so).
#
# Cost: every build shares one CARGO_TARGET_DIR (inherited by maturin and by the pip build that
# pre-commit runs) and the dev profile (MATURIN_PEP517_ARGS), so after `cargo test` only the
# staticfx crate itself is compiled again. Called by scripts/test-all.sh; runs alone too.
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"
start=$SECONDS

work="$repo/target/pip-test"
rm -rf "$work"
mkdir -p "$work"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/target}"
export MATURIN_PEP517_ARGS="--profile dev"
# Downloads (maturin, pre-commit, virtualenv) are cached across runs, beside the build.
export PIP_CACHE_DIR="$repo/target/pip-cache"
export PIP_DISABLE_PIP_VERSION_CHECK=1
export PRE_COMMIT_HOME="$work/pre-commit-home"
# virtualenv (which pre-commit uses for the hook's environment) keeps its seed wheels there.
export VIRTUALENV_OVERRIDE_APP_DATA="$repo/target/virtualenv-app-data"
# pre-commit and git must not read the user's settings.
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
unset VIRTUAL_ENV PYTHONPATH

log="$work/log"
# Runs a step quietly; on failure prints its output and stops.
step() {
  local name="$1"; shift
  if ! "$@" >"$log" 2>&1; then
    echo "test-pip: $name failed:" >&2
    cat "$log" >&2
    exit 1
  fi
}
fail() { echo "test-pip: $*" >&2; exit 1; }

venv="$work/venv"
step "python3 -m venv" python3 -m venv "$venv"
py="$venv/bin/python"
step "pip install maturin pre-commit" "$py" -m pip install --quiet "maturin>=1.9,<2" pre-commit

# 1. The wheel, from this working tree, installed like any wheel.
step "maturin build" "$venv/bin/maturin" build --profile dev --out "$work/dist"
wheel="$(ls "$work"/dist/staticfx-*.whl)"
step "pip install the wheel" "$py" -m pip install --quiet "$wheel"
[ -x "$venv/bin/staticfx" ] || fail "the wheel put no staticfx into $venv/bin"

# 2. The installed binary and the python -m entry point.
want="staticfx $(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)"
got="$("$venv/bin/staticfx" --version)"
[ "$got" = "$want" ] || fail "staticfx --version printed '$got', expected '$want'"
got="$("$py" -m staticfx --version)"
[ "$got" = "$want" ] || fail "python -m staticfx --version printed '$got', expected '$want'"
set +e
out="$("$venv/bin/staticfx" check examples/graph_break.py 2>&1)"
code=$?
set -e
[ "$code" = 1 ] || fail "staticfx check examples/graph_break.py exited $code, expected 1: $out"
grep -q "graph_break.py:17:12: FX101 " <<<"$out" || fail "no FX101 on line 17 in: $out"

# 3. pre-commit, installing the hook from this checkout's HEAD.
rev="$(git rev-parse HEAD)"
if [ -n "$(git status --porcelain)" ]; then
  echo "test-pip: note: the checkout has uncommitted changes; pre-commit installs HEAD ($rev), not the working tree" >&2
fi
# pre-commit's build of the HEAD clone shares the target dir, and cargo tells a package's
# sources apart by path relative to the package and by mtime only: afterwards the working
# tree's files would look built, now and after any later edit older than that build (the
# fingerprint then lists the clone's files). Make cargo rebuild the package next time.
forget_head_build() {
  rm -rf "$CARGO_TARGET_DIR"/debug/.fingerprint/staticfx-*
}
trap forget_head_build EXIT
proj="$work/project"
mkdir -p "$proj"
cp examples/graph_break.py "$proj/model.py"
cat >"$proj/.pre-commit-config.yaml" <<YAML
repos:
  - repo: $repo
    rev: $rev
    hooks:
      - id: staticfx-check
YAML
(
  cd "$proj"
  git init --quiet
  git add model.py .pre-commit-config.yaml
  set +e
  "$venv/bin/pre-commit" run --all-files >"$work/hook1.log" 2>&1
  code=$?
  set -e
  [ "$code" = 1 ] || { cat "$work/hook1.log" >&2; fail "the hook exited $code on the example, expected 1"; }
  grep -q "model.py:17:12: FX101 " "$work/hook1.log" || { cat "$work/hook1.log" >&2; fail "the hook did not report FX101"; }
  # The fix, as a user would make it, then the hook again.
  "$venv/bin/staticfx" fix --unsafe-fixes model.py >/dev/null 2>&1
  grep -q "torch.where" model.py || fail "staticfx fix did not rewrite the branch"
  git add model.py
  "$venv/bin/pre-commit" run --all-files >"$work/hook2.log" 2>&1 \
    || { cat "$work/hook2.log" >&2; fail "the hook failed on the fixed example"; }
)
echo "test-pip: wheel, staticfx --version, python -m staticfx, check and the pre-commit hook passed ($((SECONDS - start)) s)"
