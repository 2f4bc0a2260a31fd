#!/usr/bin/env python3
"""ctest bench_trl_gpu_smoke: bench/engine/trl_gpu.py --smoke (TRL's trl sft of a tiny Llama on the
CPU: the chunked loss, the full logits, and the snapshot case) with the spplan binary and work
folder ctest gives, then its rows: each case ran, with the loss TRL ran, and the snapshot case's
nvidia-smi samples (from a stand-in printing nvidia-smi's CSV: the CPU has no GPU, so no snapshot
either) read by `spplan check` against the case's plan, and kept with its report.
Usage: trl_gpu_smoke.py SPPLAN_BINARY WORK_DIR (run by export_check_tools.sh with TRL's venv)."""
import json
import os
import runpy
import stat
import sys

repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
spplan, work = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)
fake_smi = os.path.join(work, "nvidia-smi")
with open(fake_smi, "w") as f:  # the header and rows of nvidia-smi --query-gpu=...,memory.used,... --format=csv
    f.write("#!/bin/sh\necho 'timestamp, memory.used [MiB], memory.total [MiB]'\n"
            "while :; do echo '2026/12/03 09:00:00.000, 1200 MiB, 81559 MiB'; sleep 0.2; done\n")
os.chmod(fake_smi, os.stat(fake_smi).st_mode | stat.S_IXUSR)
os.environ["SPPLAN_NVIDIA_SMI"] = fake_smi
out, keep = os.path.join(work, "trl_gpu.jsonl"), os.path.join(work, "kept")
sys.argv = ["trl_gpu.py", "--smoke", "--spplan", spplan, "--work", work, "--gpu", "h100-80gb", "--out", out,
            "--keep", keep]
try:
    runpy.run_path(os.path.join(repo, "bench", "engine", "trl_gpu.py"), run_name="__main__")
except SystemExit as e:
    if e.code:
        raise
rows = [json.loads(line) for line in open(out)]
assert [r["case"] for r in rows] == ["tiny-512-chunked", "tiny-512-nll", "tiny-512-chunked-snapshot"], rows
for r in rows:
    assert r["exit"] == 0 and not r.get("error"), r
    assert r["loss_type_ran"] == r["loss"], r
snap = rows[2]
assert snap["snapshot_logs"] == ["nvidia_smi.csv"], snap
assert snap["check_exit"] in (0, 1) and "check" in snap, snap  # a verdict, not bad input (2)
assert sorted(os.listdir(keep)) == ["check.json", "nvidia_smi.csv", "plan.toml"], os.listdir(keep)
print("trl_gpu smoke: 3 cases; check of the snapshot case's nvidia-smi samples: exit %d" % snap["check_exit"])
