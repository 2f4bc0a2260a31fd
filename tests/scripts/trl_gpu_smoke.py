#!/usr/bin/env python3
"""ctest bench_trl_gpu_smoke: bench/engine/trl_gpu.py --smoke (TRL's trl sft of a tiny Llama on the
CPU, chunked loss and full logits) with the spplan binary and work folder ctest gives.
Usage: trl_gpu_smoke.py SPPLAN_BINARY WORK_DIR (run by export_check_tools.sh with TRL's venv)."""
import os
import runpy
import sys

repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.argv = ["trl_gpu.py", "--smoke", "--spplan", sys.argv[1], "--work", sys.argv[2], "--gpu", "h100-80gb"]
runpy.run_path(os.path.join(repo, "bench", "engine", "trl_gpu.py"), run_name="__main__")
