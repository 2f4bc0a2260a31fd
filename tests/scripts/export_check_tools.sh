#!/usr/bin/env bash
# Runs export_check_TOOL.py with the Python of that tool's venv (scripts/install-deps.sh makes it:
# SPPLAN_TOOLS_DIR/TOOL, default ~/.cache/spplan/tools/TOOL), or SPPLAN_TOOL_PYTHON. Exit 77
# (skipped) when that Python cannot import the tool. Offline.
# Usage: export_check_tools.sh TOOL MODULE SPPLAN_BINARY WORK_DIR [SCRIPT]; SCRIPT (default
# export_check_TOOL.py) for another test of that tool (launch_trl_test.py).
set -u
tool=$1 module=$2 script=${5:-export_check_${1//-/_}.py}
py=${SPPLAN_TOOL_PYTHON:-${SPPLAN_TOOLS_DIR:-$HOME/.cache/spplan/tools}/$tool/bin/python}
if [ -x "$py" ] && "$py" -c "import $module" 2>/dev/null; then
  HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 exec "$py" "$(dirname "$0")/$script" "$3" "$4"
fi
echo "no Python that imports $module ($py; scripts/install-deps.sh installs it): skipped"
exit 77
