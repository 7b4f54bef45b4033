#!/usr/bin/env bash
# Runs every test of the project. Works on a fresh machine: it fetches what the tests read
# (torchvision's *source*, from its wheel on PyPI — torch itself is never needed) into
# target/test-data, then runs the Rust test suite.
set -euo pipefail
cd "$(dirname "$0")/.."

data="$PWD/target/test-data"
mkdir -p "$data"

# torchvision's model sources, for the torch.fx fidelity test (expectations are committed).
tv_version=0.29.2
if [ ! -f "$data/torchvision-$tv_version/torchvision/models/resnet.py" ]; then
  python3 -m pip download --quiet --no-deps --only-binary=:all: "torchvision==$tv_version" -d "$data/wheels"
  rm -rf "$data/torchvision-$tv_version"
  python3 -m zipfile -e "$data"/wheels/torchvision-"$tv_version"-*.whl "$data/torchvision-$tv_version"
fi
export STATICFX_TORCHVISION_ROOT="$data/torchvision-$tv_version"

# A user's environment without torch: timm, transformers (+ huggingface_hub, which its
# configs import) and einops installed from their wheels, for tests/python_env.rs.
user_venv="$data/user-venv"
if ! ls "$user_venv"/lib/python*/site-packages/timm/layers/mlp.py >/dev/null 2>&1; then
  python3 -m pip download --quiet --no-deps --only-binary=:all: \
    "timm==1.0.31" "transformers==5.24.0" "huggingface_hub==2.4.0" "einops==0.8.2" -d "$data/wheels"
  rm -rf "$user_venv"
  python3 -m venv "$user_venv"
  "$user_venv/bin/python" -m pip install --quiet --no-deps --no-index \
    "$data"/wheels/timm-1.0.31-*.whl "$data"/wheels/transformers-5.24.0-*.whl \
    "$data"/wheels/huggingface_hub-2.4.0-*.whl "$data"/wheels/einops-0.8.2-*.whl
fi
export STATICFX_USER_VENV="$user_venv"

# timm's source, for the timm fidelity test (expectations from scripts/expect/timm_cases.json).
timm_version=1.0.31
if [ ! -f "$data/timm-$timm_version/timm/models/resnet.py" ]; then
  python3 -m pip download --quiet --no-deps --only-binary=:all: "timm==$timm_version" -d "$data/wheels"
  rm -rf "$data/timm-$timm_version"
  python3 -m zipfile -e "$data"/wheels/timm-"$timm_version"-*.whl "$data/timm-$timm_version"
fi
export STATICFX_TIMM_ROOT="$data/timm-$timm_version"

# transformers' source, for tests/hf_fidelity.rs (recordings from scripts/expect/gen_hf_recordings.py)
# tests/hf_breaks.rs (labels from scripts/breaks/label_hf.py) and tests/hf_sweep.rs (scripts/breaks/sweep_hf.py);
# huggingface_hub, which its configs import, comes from the user venv above.
tf_version=5.24.0
if [ ! -f "$data/transformers-$tf_version/transformers/modeling_utils.py" ]; then
  python3 -m pip download --quiet --no-deps --only-binary=:all: "transformers==$tf_version" -d "$data/wheels"
  rm -rf "$data/transformers-$tf_version"
  python3 -m zipfile -e "$data"/wheels/transformers-"$tf_version"-*.whl "$data/transformers-$tf_version"
fi
export STATICFX_TRANSFORMERS_ROOT="$data/transformers-$tf_version"

# The 4.x line most projects still pin, for hf_fidelity's second run (recordings in
# tests/expected/hf-4.57.1).
tf4_version=4.57.1
if [ ! -f "$data/transformers-$tf4_version/transformers/modeling_utils.py" ]; then
  python3 -m pip download --quiet --no-deps --only-binary=:all: "transformers==$tf4_version" -d "$data/wheels"
  rm -rf "$data/transformers-$tf4_version"
  python3 -m zipfile -e "$data"/wheels/transformers-"$tf4_version"-*.whl "$data/transformers-$tf4_version"
fi
export STATICFX_TRANSFORMERS4_ROOT="$data/transformers-$tf4_version"

# diffusers' source, for tests/diffusers_classes.rs (per-class analysis of its models, held to
# scripts/expect/gen_diffusers_recordings.py) and tests/diffusers_compile_tests.rs (diffusers'
# compile tests replayed, scripts/expect/gen_diffusers_compile_tests.py); huggingface_hub and
# transformers, which it imports, come from the user venv above.
df_version=0.42.1
if [ ! -f "$data/diffusers-$df_version/diffusers/models/modeling_utils.py" ]; then
  python3 -m pip download --quiet --no-deps --only-binary=:all: "diffusers==$df_version" -d "$data/wheels"
  rm -rf "$data/diffusers-$df_version"
  python3 -m zipfile -e "$data"/wheels/diffusers-"$df_version"-*.whl "$data/diffusers-$df_version"
fi
export STATICFX_DIFFUSERS_ROOT="$data/diffusers-$df_version"

# open_clip's source, for tests/open_clip_models.rs (issue 42 item 4, the held-out library: its
# models replayed against scripts/expect/gen_open_clip_recordings.py); timm, which its timm
# towers import, comes from the user venv above.
oc_version=3.3.0
if [ ! -f "$data/open_clip-$oc_version/open_clip/model.py" ]; then
  python3 -m pip download --quiet --no-deps --only-binary=:all: "open_clip_torch==$oc_version" -d "$data/wheels"
  rm -rf "$data/open_clip-$oc_version"
  python3 -m zipfile -e "$data"/wheels/open_clip_torch-"$oc_version"-*.whl "$data/open_clip-$oc_version"
fi
export STATICFX_OPEN_CLIP_ROOT="$data/open_clip-$oc_version"

# Graphviz checks that our DOT output is valid.
if ! command -v dot >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && apt-get install -y -qq graphviz >/dev/null
  else
    echo "note: install graphviz (apt-get install graphviz) to run the DOT validity test" >&2
  fi
fi

cargo test --locked --all-targets

# pip install (maturin wheel), python -m staticfx and the pre-commit hook, in one fresh venv
# under target/, reusing the build above.
./scripts/test-pip.sh

# The VS Code extension and the Neovim plugin, against the server binary cargo test built.
./scripts/test-editors.sh

# The README's pictures of real model code (transformers' modeling_bart.py in Neovim, with inlay
# hints, the code lens and its graph breaks; the graph view of LlamaDecoderLayer), made into a
# scratch folder so the committed ones stay as they are: the script must keep working. Where
# Neovim, chromium or the corpus is missing the picture is skipped with a note.
shots="$(mktemp -d)"
STATICFX_BIN="${CARGO_TARGET_DIR:-$PWD/target}/debug/staticfx" SCREENSHOTS_OUT="$shots" SCREENSHOTS_ALLOW_SKIPS=1 \
  ./scripts/screenshots.sh nvim-real vscode-graph-real
rm -rf "$shots"
