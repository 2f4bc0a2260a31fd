# shellcheck shell=bash disable=SC2034  # sourced; the SPPLAN_TORCH_* variables are its outputs
# Sourced by build.sh and install-deps.sh, so that both settle on the same torch: the engine builds
# against the LibTorch inside a torch wheel (BUILD-NOTES.md section 0), and on a GPU node that
# wheel is already in the node's own Python (section 9); installing a second one there is waste.
#
# spplan_find_torch tries, in order:
#   1. SPPLAN_TORCH_PYTHON, when set: the user's explicit choice, never silently replaced;
#   2. the virtual environment install-deps.sh makes (SPPLAN_VENV, default ~/.cache/spplan/venv);
#   3. the active python3 (a GPU node's, or an activated environment's).
# On success it sets SPPLAN_TORCH_PY, SPPLAN_TORCH_VERSION and SPPLAN_TORCH_PREFIX (the folder for
# CMAKE_PREFIX_PATH) and returns 0. It returns 1 when no candidate imports torch, and 2 when
# SPPLAN_TORCH_PYTHON is set but cannot import torch; SPPLAN_TORCH_WHY then says why.

# Prints the version and CMake prefix of PY's torch on two lines; fails if PY cannot import it.
_spplan_probe_torch() {
  "$1" -c 'import torch; print(torch.__version__); print(torch.utils.cmake_prefix_path)' 2>/dev/null
}

# Sets the SPPLAN_TORCH_* variables from PY when it imports torch.
_spplan_try_torch() {
  local out
  out=$(_spplan_probe_torch "$1") || return 1
  SPPLAN_TORCH_PY=$1
  SPPLAN_TORCH_VERSION=$(printf '%s\n' "$out" | sed -n 1p)
  SPPLAN_TORCH_PREFIX=$(printf '%s\n' "$out" | sed -n 2p)
  [ -n "$SPPLAN_TORCH_PREFIX" ]
}

spplan_find_torch() {
  SPPLAN_TORCH_PY="" SPPLAN_TORCH_VERSION="" SPPLAN_TORCH_PREFIX="" SPPLAN_TORCH_WHY=""
  if [ -n "${SPPLAN_TORCH_PYTHON:-}" ]; then
    _spplan_try_torch "$SPPLAN_TORCH_PYTHON" && return 0
    SPPLAN_TORCH_PY="" SPPLAN_TORCH_VERSION="" SPPLAN_TORCH_PREFIX=""
    SPPLAN_TORCH_WHY="SPPLAN_TORCH_PYTHON=$SPPLAN_TORCH_PYTHON: cannot import torch"
    return 2
  fi
  local venv_py="${SPPLAN_VENV:-$HOME/.cache/spplan/venv}/bin/python"
  if [ -x "$venv_py" ] && _spplan_try_torch "$venv_py"; then
    return 0
  fi
  local active_py
  if active_py=$(command -v python3) && _spplan_try_torch "$active_py"; then
    return 0
  fi
  SPPLAN_TORCH_PY="" SPPLAN_TORCH_VERSION="" SPPLAN_TORCH_PREFIX=""
  SPPLAN_TORCH_WHY="no torch in $venv_py nor in the active python3 (${active_py:-none on PATH}); set SPPLAN_TORCH_PYTHON or run scripts/install-deps.sh"
  return 1
}
