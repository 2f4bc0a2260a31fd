#!/usr/bin/env python3
"""Prints docs/costmodel.md's "Past the head count" table from today's spplan: Llama-3.1-8B on H100s (8 per
node), priced for spplan's engine (`--trainer engine`, which runs all three layouts and launches on
any node count), each layout family fixed by one flag (Ulysses only `--cp 1`, ring only `--sp 1`,
Ulysses x ring `--sp 8`) and every other knob searched.

Usage: scripts/readme-layout-table.py [SPPLAN]   (default build/spplan)
"""
import json
import subprocess
import sys

SPPLAN = sys.argv[1] if len(sys.argv) > 1 else "build/spplan"
BASE = ["--model", "llama-3.1-8b", "--gpu", "h100-80gb", "--trainer", "engine"]
FAMILIES = [("Ulysses only", ["--cp", "1"]), ("ring only", ["--sp", "1"]), ("Ulysses x ring (sp 8)", ["--sp", "8"])]
ROWS = [(8, "1M", True), (64, "4M", True), (256, "16M", True), (256, "1M", False)]  # (GPUs, sequence, longest?)


def spplan(*args):
    r = subprocess.run([SPPLAN, *args, "--json"], capture_output=True, text=True)
    if r.returncode not in (0, 1):  # 1: nothing fits, still a report
        sys.exit(f"spplan {' '.join(args)}: exit {r.returncode}: {r.stderr.strip()}")
    return json.loads(r.stdout)


def layout(knobs, dp):
    parts = []
    if knobs["sp"] > 1:
        parts.append(f"sp {knobs['sp']}")
    if knobs["cp"] > 1:
        parts.append(f"cp {knobs['cp']}")
    text = " x ".join(parts) or "no split"
    return text + (f" (dp {dp})" if dp > 1 else "")


def cell(gpus, seq, flags):
    report = spplan("plan", *BASE, "--gpus", str(gpus), "--seq", seq, "--top", "1", *flags)
    if not report["plans"]:
        return "nothing fits"
    best = report["plans"][0]
    return (f"{layout(best['knobs'], best['dp'])}: {best['tokens_per_s']:,.0f} tokens/s, "
            f"{best['memory']['total_gib']:.1f} GiB")


def longest(gpus, flags):
    tokens = spplan("max-seq", *BASE, "--gpus", str(gpus), *flags)["max_seq"]
    return f"{tokens / 2**20:.3g}M"


print("| GPUs | sequence | " + " | ".join(name for name, _ in FAMILIES) +
      " | longest sequence (Ulysses / ring / sp 8 x ring) |")
print("|---|---|---|---|---|---|")
for gpus, seq, with_longest in ROWS:
    cells = [cell(gpus, seq, flags) for _, flags in FAMILIES]
    span = " / ".join(longest(gpus, flags) for _, flags in FAMILIES) if with_longest else ""
    print(f"| {gpus} | {seq} | " + " | ".join(cells) + f" | {span} |")
