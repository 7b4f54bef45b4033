#!/usr/bin/env bash
# Per-forward latency of the bundled executor next to eager PyTorch, 2 threads each, in one
# run, taking turns (see benches/run_vs_eager.rs). torchvision and timm models need their source:
#
#   STATICFX_TORCHVISION_ROOT=target/test-data/torchvision-0.29.2 \
#   STATICFX_TIMM_ROOT=target/test-data/timm-1.0.31 scripts/bench/run_vs_eager.sh
#
# PYTHON (or $VENV/bin/python) must have torch (and torchvision's dependencies).
set -eu
here="$(cd "$(dirname "$0")/../.." && pwd)"
export PYTHON="${PYTHON:-${VENV:?set PYTHON or VENV to an environment with torch}/bin/python}"
export BENCH_THREADS="${BENCH_THREADS:-2}"
if [ -z "${STATICFX_TORCHVISION_ROOT:-}" ] && [ -d "$here/target/test-data/torchvision-0.29.2" ]; then
    export STATICFX_TORCHVISION_ROOT="$here/target/test-data/torchvision-0.29.2"
fi
if [ -z "${STATICFX_TIMM_ROOT:-}" ] && [ -d "$here/target/test-data/timm-1.0.31" ]; then
    export STATICFX_TIMM_ROOT="$here/target/test-data/timm-1.0.31"
fi
cd "$here"
CARGO_BUILD_JOBS="${CARGO_BUILD_JOBS:-1}" cargo bench --bench run_vs_eager
