#!/usr/bin/env bash
# Wheels of the peers bench/engine/compare_gpu.py runs beside the engine and of TRL for
# bench/engine/trl_gpu.py, for a GPU node that has no package index (docs/gpu-node.md):
# Liger-Kernel, DeepSpeed, TRL, and what they need that such a node's image lacks. scripts/gpu-measure.sh installs whatever lies in DIR before its stages.
#
# - Liger-Kernel is a pure-Python wheel on PyPI (it needs torch and triton: the node has both).
# - DeepSpeed ships only a source distribution: it is built here into a pure-Python wheel with
#   DS_BUILD_OPS=0 (no op compiled ahead; its fused Adam compiles on first use with the node's nvcc
#   and ninja, as a plain `pip install deepspeed` would). The build imports torch: the torch python
#   of scripts/lib/torch-python.sh builds it (scripts/install-deps.sh makes one).
# - DeepSpeed's requirements that the device image lacks (../.library KINDS.md lists the image's
#   packages; it has einops, msgpack, ninja, numpy, packaging, psutil, py-cpuinfo, tqdm): hjson and
#   pydantic with its own requirements; pydantic-core is compiled, so it is fetched for the node's
#   Python (SPPLAN_NODE_PYTHON, default 3.12, the device image's) on manylinux x86-64.
#
# Versions are pinned (the same DeepSpeed as install-deps.sh's export checks), so two bundles hold
# the same wheels. Usage: scripts/bundle-wheels.sh [DIR]   (default third_party_bundle/whl)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -gt 1 ] || [[ "${1:-}" == -* ]]; then
  echo "bundle-wheels: argument '$*' is not valid (allowed: one folder, default third_party_bundle/whl)" >&2
  exit 2
fi
dest=${1:-third_party_bundle/whl}
node_py=${SPPLAN_NODE_PYTHON:-3.12}
if ! [[ "$node_py" =~ ^3\.[0-9]+$ ]]; then
  echo "bundle-wheels: SPPLAN_NODE_PYTHON: value '$node_py' is not valid (allowed: a Python version, e.g. 3.12)" >&2
  exit 2
fi

deepspeed=deepspeed==0.18.9
# TRL and what it imports that the device image lacks (datasets, dill, multiprocess), for
# bench/engine/trl_gpu.py: the releases install-deps.sh runs the CPU launch of --format trl with.
pure=(liger-kernel==0.8.5 hjson==3.1.0 pydantic==2.14.4 annotated-types==0.8.0 typing-inspection==0.4.5
      typing-extensions==4.16.0 trl==1.14.2 datasets==5.2.0 dill==0.4.1)
compiled=(pydantic-core==2.50.5  # pydantic 2.14.4 requires exactly this one
          multiprocess==0.70.19)  # one wheel per Python version (py312-none-any)

. scripts/lib/torch-python.sh
if ! spplan_find_torch; then
  echo "bundle-wheels: no Python with torch to build DeepSpeed's wheel (${SPPLAN_TORCH_WHY:-run scripts/install-deps.sh})" >&2
  exit 2
fi
py=$SPPLAN_TORCH_PY
# Replace the wheels, not merge: two versions of one package in DIR stop the node's install. Only
# wheels go: DIR may be a folder that holds other files.
mkdir -p "$dest"
rm -f "$dest"/*.whl
"$py" -m pip download -q --no-deps --only-binary=:all: -d "$dest" "${pure[@]}"
"$py" -m pip download -q --no-deps --only-binary=:all: --implementation cp --python-version "$node_py" \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  -d "$dest" "${compiled[@]}"
DS_BUILD_OPS=0 "$py" -m pip wheel -q --no-deps --no-build-isolation -w "$dest" "$deepspeed"
for w in "$dest"/deepspeed-*.whl; do
  case "$w" in
    *-py3-none-any.whl) ;;
    *) echo "bundle-wheels: $w: not a pure-Python wheel (DS_BUILD_OPS=0 should leave no compiled op)" >&2; exit 1 ;;
  esac
done
echo "bundle-wheels: $(find "$dest" -name '*.whl' | wc -l) wheels in $dest ($(du -sh "$dest" | cut -f1)) for Python $node_py"
