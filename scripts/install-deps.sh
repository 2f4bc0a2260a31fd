#!/usr/bin/env bash
# Installs what spplan needs on Debian 12 or Ubuntu 22.04 / 24.04 (a GPU node). Idempotent: a
# second run changes nothing, and a run that finds everything installs nothing (and needs no apt).
#   Tools: compilers, CMake >= 3.25, Ninja, git (found as commands, however they were installed).
#   Header libraries: toml++, nlohmann-json >= 3.11, Eigen >= 3.3 (found as packages, or in
#   third_party_bundle/ from scripts/bundle-headers.sh).
#   Unless SPPLAN_ENGINE_ONLY=1: Boost.Graph (the simulator), GoogleTest, Google Benchmark, and
#   clang with libclang-rt-dev (sanitizers and libFuzzer, for scripts/sanitize.sh).
#   Unless SPPLAN_NO_GUI=1 or SPPLAN_ENGINE_ONLY=1: Qt 6 >= 6.4 (Widgets, Charts, Svg, Test;
#   Charts' CMake config needs Qt6OpenGL's, which qt6-base-dev does not pull in:
#   libqt6opengl6-dev) and Xvfb for the GUI tests.
#   Torch: the engine builds against a torch wheel's LibTorch (BUILD-NOTES.md section 0). When
#   scripts/lib/torch-python.sh finds one (SPPLAN_TORCH_PYTHON, the venv below, or the active
#   python3, as on a GPU node) nothing is installed; else the PyPI wheel goes into a virtual
#   environment outside the checkout, so that fresh clones reuse it. That venv also gets
#   transformers and safetensors (PyPI) for the Hugging Face equivalence test.
# A package the archive lacks, or has too old, is named with what to do instead; then it exits 1.
#
# Usage: scripts/install-deps.sh [--dry-run]   (--dry-run: print what would be installed, install nothing)
# Env: SPPLAN_NO_GUI=1, SPPLAN_ENGINE_ONLY=1, SPPLAN_SKIP_TORCH=1 (no torch), SPPLAN_TORCH_PYTHON,
#      SPPLAN_VENV (default ~/.cache/spplan/venv), SPPLAN_TORCH_SPEC (default torch),
#      SPPLAN_OS_RELEASE (default /etc/os-release), SPPLAN_BUNDLE_DIR (default third_party_bundle).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/torch-python.sh

SPPLAN_VENV=${SPPLAN_VENV:-$HOME/.cache/spplan/venv}
export SPPLAN_VENV
TORCH_SPEC=${SPPLAN_TORCH_SPEC:-torch}
bundle=${SPPLAN_BUNDLE_DIR:-third_party_bundle}
os_release=${SPPLAN_OS_RELEASE:-/etc/os-release}
engine_only=${SPPLAN_ENGINE_ONLY:-0}
no_gui=${SPPLAN_NO_GUI:-0}
[ "$engine_only" = 1 ] && no_gui=1
dry_run=0
case "${1:-}" in
  "") ;;
  --dry-run) dry_run=1 ;;
  *) echo "install-deps: unknown argument '$1' (allowed: --dry-run)" >&2; exit 2 ;;
esac
say() { echo "install-deps: $*"; }

# Debian and Ubuntu share the package names used here; anything else is left to the user.
# shellcheck source=/dev/null
os_id=$(. "$os_release" && echo "${ID:-}") os_like=$(. "$os_release" && echo "${ID_LIKE:-}")
# shellcheck source=/dev/null
os_version=$(. "$os_release" && echo "${VERSION_ID:-}")
case " $os_id $os_like " in
  *" debian "* | *" ubuntu "*) ;;
  *) echo "install-deps: $os_release: ID=$os_id is not supported (Debian 12, Ubuntu 22.04, 24.04);" \
          "install the packages this script names with your system's tools" >&2
     exit 2 ;;
esac
say "system: $os_id $os_version"

# package|minimum version|how to tell it is there without dpkg (cmd:NAME, or header:DIR of the bundle)
wanted=(
  "build-essential||cmd:c++" "cmake|3.25|cmd:cmake" "ninja-build||cmd:ninja" "git||cmd:git"
  "libtomlplusplus-dev||header:toml++" "nlohmann-json3-dev|3.11|header:nlohmann" "libeigen3-dev|3.3|header:Eigen"
)
if [ "$engine_only" != 1 ]; then
  wanted+=("pkg-config||" "libboost-graph-dev||" "libgtest-dev||" "libgmock-dev||" "libbenchmark-dev||")
  # scripts/sanitize.sh: clang with its AddressSanitizer, UBSan and libFuzzer runtimes.
  wanted+=("clang||cmd:clang++" "libclang-rt-dev||")
fi
if [ "$no_gui" != 1 ]; then
  wanted+=("qt6-base-dev|6.4|" "qt6-charts-dev||" "qt6-svg-dev||" "libqt6opengl6-dev||" "libgl-dev||"
           "xvfb||" "xauth||")
fi

# Torch first: when a venv must be made, python3-venv and pip join the packages.
torch_action=skip
if [ "${SPPLAN_SKIP_TORCH:-0}" = 1 ]; then
  say "torch: skipped (SPPLAN_SKIP_TORCH=1)"
else
  torch_rc=0
  spplan_find_torch || torch_rc=$?
  if [ "$torch_rc" -eq 0 ]; then
    say "torch: $SPPLAN_TORCH_VERSION present in $SPPLAN_TORCH_PY; not installing another"
  elif [ "$torch_rc" -eq 2 ]; then
    echo "install-deps: $SPPLAN_TORCH_WHY (unset it to let this script install torch into $SPPLAN_VENV)" >&2
    exit 2
  else
    torch_action=install
    say "torch: none found; will install $TORCH_SPEC into $SPPLAN_VENV"
    wanted+=("python3||cmd:python3" "python3-venv||" "python3-pip||" "ca-certificates||")
  fi
fi

# The installed version of a package, or of a tool found on PATH; empty when absent.
installed_version() {
  local pkg=$1 probe=$2
  case "$probe" in
    cmd:cmake) command -v cmake >/dev/null && cmake --version | sed -n '1s/.* \([0-9][0-9.]*\).*/\1/p' ;;
    cmd:*) command -v "${probe#cmd:}" >/dev/null && echo present ;;
    header:*) [ -d "$bundle/include/${probe#header:}" ] && echo bundled ;;
  esac
  dpkg-query -W -f='${Status} ${Version}\n' "$pkg" 2>/dev/null | sed -n 's/^install ok installed //p'
}
# True when VERSION is known and at least MIN (or there is no MIN); "present"/"bundled" pass.
new_enough() {
  [ -z "$2" ] || [ "$1" = present ] || [ "$1" = bundled ] || dpkg --compare-versions "$1" ge "$2"
}

names=() missing=()
for entry in "${wanted[@]}"; do
  IFS='|' read -r pkg min probe <<<"$entry"
  names+=("$pkg${min:+>=$min}")
  ok=0
  while read -r v; do
    [ -n "$v" ] && new_enough "$v" "$min" && ok=1
  done < <(installed_version "$pkg" "$probe")
  [ "$ok" = 1 ] || missing+=("$pkg|$min")
done
say "wanted: ${names[*]}"
missing_names=("${missing[@]%%|*}")
say "missing: ${missing_names[*]:-none}"
if [ "$dry_run" = 1 ]; then
  exit 0
fi

sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
unavailable=()
if [ "${#missing[@]}" -gt 0 ]; then
  if ! "${sudo_cmd[@]}" apt-get update -qq; then
    echo "install-deps: apt-get update failed (no package archive here?), and these are missing:" \
         "${missing_names[*]}. On a GPU node: bring third_party_bundle/ (scripts/bundle-headers.sh" \
         "on a machine that has the packages) and build with SPPLAN_ENGINE_ONLY=1 (README \"On a GPU node\")" >&2
    exit 1
  fi
  to_install=()
  for entry in "${missing[@]}"; do
    pkg=${entry%%|*} min=${entry#*|}
    candidate=$(apt-cache policy "$pkg" 2>/dev/null | sed -n 's/^ *Candidate: //p')
    if [ -z "$candidate" ] || [ "$candidate" = "(none)" ]; then
      unavailable+=("$pkg (not in this archive)")
    elif ! new_enough "$candidate" "$min"; then
      unavailable+=("$pkg (the archive has $candidate; spplan needs $min)")
    else
      to_install+=("$pkg")
    fi
  done
  if [ "${#to_install[@]}" -gt 0 ]; then
    say "installing ${#to_install[@]} packages: ${to_install[*]}"
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${to_install[@]}"
  fi
else
  say "packages present"
fi

if [ "$torch_action" = install ]; then
  [ -x "$SPPLAN_VENV/bin/python" ] || python3 -m venv "$SPPLAN_VENV"
  say "installing the torch wheel into $SPPLAN_VENV (several GB, once)"
  "$SPPLAN_VENV/bin/pip" install -q --upgrade pip
  "$SPPLAN_VENV/bin/pip" install -q "$TORCH_SPEC" numpy
fi

# The Hugging Face equivalence test (tests/engine/io/hf_weights_test.cpp) builds its reference models
# with transformers in the venv's python; without it that test skips. Only the venv is touched: a
# GPU node's own python is the user's to change.
if [ "${SPPLAN_SKIP_TORCH:-0}" != 1 ] && [ -x "$SPPLAN_VENV/bin/python" ]; then
  if "$SPPLAN_VENV/bin/python" -c 'import transformers, safetensors' 2>/dev/null; then
    say "transformers: present in $SPPLAN_VENV"
  else
    say "installing transformers and safetensors into $SPPLAN_VENV"
    "$SPPLAN_VENV/bin/pip" install -q transformers safetensors
  fi
fi

# The export check (tests/scripts/export_check_test.py) loads every export with its target's own
# code: DeepSpeed's config class, transformers' TrainingArguments parser and DeepSpeed consistency
# check, Accelerate's config loader, ArcticTraining's config model. Pinned: DeepSpeed 0.18.9 (the
# README prices DeepSpeed 0.17-0.18), Accelerate 1.15.0, ArcticTraining 0.8.0. ArcticTraining
# declares transformers<5 while the venv keeps transformers 5 (the HF equivalence test): it goes in
# without its dependencies, and those go in with the venv's transformers, hub and torch held (-c).
# megatron-core 0.16.1 has Megatron-LM's config classes and RoPE modules for the Megatron part (0.17
# on need Python 3.12; Debian 12 has 3.11); its dependencies (torch, numpy, packaging) are already
# there, so it adds its wheel alone: 6-12 s and 17 MB measured. Measured on a 2-core machine: about
# 2 minutes and 440 MB in all. Without them that test skips.
export_check_pins=(deepspeed==0.18.9 accelerate==1.15.0 megatron-core==0.16.1)
arctic_pin=arctic-training==0.8.0
arctic_deps=(datasets devtools jsonlines loguru nvidia-ml-py openai peft psutil tabulate tqdm wandb yq)
if [ "${SPPLAN_SKIP_TORCH:-0}" != 1 ] && [ -x "$SPPLAN_VENV/bin/python" ] && [ "$engine_only" != 1 ]; then
  if "$SPPLAN_VENV/bin/python" - "${export_check_pins[@]}" "$arctic_pin" <<'PY' 2>/dev/null
import importlib.metadata as m, sys
sys.exit(any(m.version(p.split("==")[0]) != p.split("==")[1] for p in sys.argv[1:]))
PY
  then
    say "export-check packages: present in $SPPLAN_VENV"
  else
    say "installing ${export_check_pins[*]} $arctic_pin into $SPPLAN_VENV (the export check)"
    held=$(mktemp)
    "$SPPLAN_VENV/bin/pip" freeze | grep -E '^(torch|transformers|huggingface[-_]hub|tokenizers|safetensors)==' > "$held" || true
    # DeepSpeed's setup.py imports torch: build against the venv's (no isolation), no ops compiled.
    DS_BUILD_OPS=0 "$SPPLAN_VENV/bin/pip" install -q --no-build-isolation -c "$held" "${export_check_pins[@]}"
    # Its dependencies first, ArcticTraining last: pip reports a conflict with an installed
    # package's declared pins ("ERROR: ... arctic-training 0.8.0 requires transformers<5.0.0") after
    # any install that resolves dependencies, not after a --no-deps one. The conflict is known and
    # meant (above); a newcomer should not read it as a failure.
    "$SPPLAN_VENV/bin/pip" install -q -c "$held" "${arctic_deps[@]}"
    "$SPPLAN_VENV/bin/pip" install -q --no-deps "$arctic_pin"
    rm -f "$held"
  fi
fi

# The ring stacks' own config readers (tests/scripts/export_check_tools.sh): each tool in a
# venv of its own under SPPLAN_TOOLS_DIR, whose .pth file puts the main venv's packages (torch,
# transformers) behind its own, so nothing large is installed twice and the main venv is not
# touched. The tools pin other releases of what the main venv holds (TorchTitan 0.2.2 nothing that
# its config reader imports), so each goes in without its dependencies, with the few small ones its
# reader imports. TorchTitan 0.2.2 is the last release whose job config is a TOML file (0.3 reads
# Python registries); ms-swift 4.6.0 declares transformers<5.20, which its argument parser does not
# need; Axolotl 0.19.0 pins torch<=2.13 and transformers==5.16.1, which its config validator does not
# need. Measured on a 2-core machine with pip's cache warm: TorchTitan 2 s and 7 MB, ms-swift 7 s and
# 140 MB (modelscope is half of it), Axolotl 265 MB (numba and llvmlite, which its Trainer builder
# imports, are 200 MB of it).
SPPLAN_TOOLS_DIR=${SPPLAN_TOOLS_DIR:-$HOME/.cache/spplan/tools}
tool_venv() {  # tool_venv NAME IMPORT PACKAGE==PIN...
  local dir="$SPPLAN_TOOLS_DIR/$1" module=$2
  shift 2
  # Present when the reader imports and the tool is the pinned release (a new pin reinstalls).
  if [ -x "$dir/bin/python" ] && "$dir/bin/python" - "$module" "$1" <<'PY' 2>/dev/null
import importlib, importlib.metadata as m, sys
importlib.import_module(sys.argv[1])
name, pin = sys.argv[2].split("==")
sys.exit(m.version(name) != pin)
PY
  then
    say "$module: present in $dir"
    return
  fi
  say "installing $* into $dir (its export check)"
  "$SPPLAN_VENV/bin/python" -m venv --clear --without-pip "$dir"
  local site
  site=$("$SPPLAN_VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  "$dir/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' |
    { read -r own; echo "$site" > "$own/_spplan_main_venv.pth"; }
  "$SPPLAN_VENV/bin/pip" --python "$dir/bin/python" install -q --no-deps "$@"
}
if [ "${SPPLAN_SKIP_TORCH:-0}" != 1 ] && [ -x "$SPPLAN_VENV/bin/python" ] && [ "$engine_only" != 1 ]; then
  tool_venv torchtitan torchtitan torchtitan==0.2.2 torchdata==0.11.0 tyro==1.0.17 docstring-parser==0.18.0 \
    typeguard==4.6.1
  tool_venv ms-swift swift.arguments ms-swift==4.6.0 pillow==13.0.0 modelscope==1.40.2 modelscope_hub==0.5.1 \
    cryptography==50.0.2 cffi==2.1.1 pycparser==3.12 json_repair==0.64.6 aiohttp==3.14.5 multidict==7.2.1 \
    yarl==1.25.1 propcache==0.5.4 aiohappyeyeballs==2.7.1 aiosignal==1.4.0 frozenlist==1.8.0
  tool_venv axolotl axolotl.core.builders.causal axolotl==0.19.0 pillow==13.0.0 addict==2.4.0 trl==1.9.0 \
    posthog==7.91.1 evaluate==0.4.6 numba==0.68.1 llvmlite==0.50.0 colorama==0.4.6
  # TRL 1.14.2, the release configs/trainers/trl.toml was read from, for the launch of `--format trl`
  # (tests/scripts/launch_trl_test.py): its own `trl sft` over the main venv's transformers,
  # Accelerate, DeepSpeed and datasets. Its wheel alone: 1 s and 3 MB measured with pip's cache warm.
  tool_venv trl trl.trainer.sft_trainer trl==1.14.2
fi

# The Python package (pyproject.toml; `pip install .`): scripts/test.sh builds it into the venv
# without build isolation, so its build tools (scikit-build-core, nanobind) live there, with
# pytest for its tests (tests/python) and PyYAML, its one dependency. About 10 MB.
python_pkgs=(scikit-build-core nanobind pytest pyyaml)
if [ "${SPPLAN_SKIP_TORCH:-0}" != 1 ] && [ -x "$SPPLAN_VENV/bin/python" ] && [ "$engine_only" != 1 ]; then
  if "$SPPLAN_VENV/bin/python" -c 'import scikit_build_core, nanobind, pytest, yaml' 2>/dev/null; then
    say "Python package build tools: present in $SPPLAN_VENV"
  else
    say "installing ${python_pkgs[*]} into $SPPLAN_VENV (the Python package and its tests)"
    "$SPPLAN_VENV/bin/pip" install -q "${python_pkgs[@]}"
  fi
fi
if [ "${#unavailable[@]}" -gt 0 ]; then
  joined=$(printf '%s; ' "${unavailable[@]}")
  echo "install-deps: not installed: ${joined%; }." \
       "For toml++ / nlohmann-json / Eigen: scripts/bundle-headers.sh on a machine that has them;" \
       "for Qt: SPPLAN_NO_GUI=1 and -DSPPLAN_BUILD_GUI=OFF; for CMake: a newer one (pip install cmake)." >&2
  exit 1
fi
