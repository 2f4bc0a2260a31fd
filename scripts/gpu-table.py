#!/usr/bin/env python3
"""Renders one GPU lease's measurements (validation/gpu/<gpu>-<date>/) as the tables of docs/accuracy.md.

Usage: scripts/gpu-table.py DIR [--spplan BIN]

DIR holds what scripts/gpu-measure.sh left (kernels.txt, fused_cuda_tests.json, compare_gpu.jsonl,
calibrated.toml; unit_tests.json, engine_runs.jsonl, slack.jsonl, trl_gpu.jsonl and zero_sweep.jsonl
where the lease ran them) and manifest.json (device, driver, software, the commit measured). Prints,
in Markdown:
  - the fused CUDA kernels: their tests' verdict and bench_fused_kernels' bandwidth against HBM's;
  - the engine beside Hugging Face (+ Liger, + DeepSpeed where they ran), ratios from the same run;
  - attention's rate by length (calibrate.log, when its report has them): what a ring's blocks of
    S / cp tokens run at;
  - the engine's and HF + Liger's longest sequence under one memory cap (longest_peers.jsonl), when
    the lease had it;
  - every engine run (and, when the lease had them, longest.jsonl's runs at the max-seq of ALST's
    recipe and at 1.1x) priced now by the costmodel with the GPU's preset and with the calibrated file
    (`spplan estimate --json`, the run's own knobs, --trainer engine), memory as the allocator
    counts it (the estimate's allocated peak against torch's max_memory_allocated), and each run's
    fit verdict (the planner's `fits` against whether it ran or ran out of memory);
  - the slack stage's runs near the limit (slack.jsonl) priced likewise, and the allocator's slack
    they kept (reserved less allocated) beside the allowance the planner counts there;
  - TRL's SFTTrainer run from spplan's trl export (trl_gpu.jsonl), when the lease ran it: each case
    priced now by the trl record with bench/engine/trl_gpu.py's knobs, memory as the allocator counts it;
  - DeepSpeed ZeRO 2 beside ZeRO 3 (zero_sweep.jsonl), when the lease ran it: the step time ZeRO 3's
    parameter gathers add, per gather, and each stage priced now (the trl record: the hf record with
    the chunked, recomputed loss the sweep runs).
The predictions are recomputed on every call, so after a costmodel change the GPU tables of docs/accuracy.md
are regenerated from the same measurements, never copied by hand. Bad input: one line, exit 2.
"""
import argparse
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from gpu_lease import GIB, BadInput, estimate, load_json, load_jsonl, need, pct, planner  # noqa: E402
from gpu_stack_tables import trl_lines, zero_lines  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH_ROW = re.compile(r"^(\S.*?)\s+([\d.]+) ms\s+(\d+) GB/s\s+([\d.]+) ms\s+(\d+) GB/s\s+([\d.]+)x$")
BENCH_HEAD = re.compile(r"^(\S+), (\d+) tokens, (\w+)\s+kernel")


def kernel_lines(d, manifest):
    tests = load_json(os.path.join(d, "fused_cuda_tests.json"))
    hbm = float(need(manifest, "hbm_GBps", "manifest.json"))
    others = "not run in this lease (CI runs them on a CPU)"
    if os.path.exists(os.path.join(d, "unit_tests.json")):
        o = load_json(os.path.join(d, "unit_tests.json"))
        others = "%d of %d" % (need(o, "tests", "unit_tests.json") - o["failures"] - o["errors"], o["tests"])
    yield "FusedCuda.* (each kernel against its ATen reference, fp32 and bf16): %d of %d passed; the other LibTorch unit tests %s." % (
        need(tests, "tests", "fused_cuda_tests.json") - tests["failures"] - tests["errors"], tests["tests"], others)
    yield ""
    yield "| model, tokens | op | kernel ms | GB/s | of HBM | ATen reference ms | reference / kernel |"
    yield "|---|---|---|---|---|---|---|"
    shape, rows = None, 0
    try:
        with open(os.path.join(d, "kernels.txt")) as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise BadInput("%s: %s" % (os.path.join(d, "kernels.txt"), e))
    for line in lines:
        head = BENCH_HEAD.match(line)
        if head:
            shape = "%s, %dK %s" % (head.group(1), int(head.group(2)) // 1024, head.group(3))
            continue
        row = BENCH_ROW.match(line)
        if row and shape:
            op, k_ms, k_gbs, a_ms, _, ratio = row.groups()
            yield "| %s | %s | %s | %s | %.0f %% | %s | %s |" % (shape, op, k_ms, k_gbs, 100.0 * float(k_gbs) / hbm, a_ms, ratio)
            rows += 1
    if rows == 0:
        raise BadInput("%s: no bench_fused_kernels rows" % os.path.join(d, "kernels.txt"))


def compare_lines(d):
    rows = load_jsonl(os.path.join(d, "compare_gpu.jsonl"))
    engine = {r["case"]: r for r in rows if r.get("runner") == "engine" and r.get("exit") == 0}
    yield "| case | runner | step s | tokens/s | allocated GiB | reserved GiB | runner / engine time | runner / engine memory |"
    yield "|---|---|---|---|---|---|---|---|"
    for r in rows:
        case = need(r, "case", "compare_gpu.jsonl")
        if r.get("exit") != 0:
            yield "| %s | %s | - | - | - | - | exit %s | - |" % (case, r.get("runner"), r.get("exit"))
            continue
        e = engine.get(case)
        time_ratio = "%.2f" % (r["step_time_s"] / e["step_time_s"]) if e else "-"
        mem_ratio = "%.2f" % (r["peak_allocated_bytes"] / e["peak_allocated_bytes"]) if e else "-"
        yield "| %s | %s | %.4f | %.0f | %.2f | %.2f | %s | %s |" % (
            case, r["runner"], r["step_time_s"], r["seq"] / r["step_time_s"], r["peak_allocated_bytes"] / GIB,
            r["peak_reserved_bytes"] / GIB, time_ratio, mem_ratio)


def without_seq(flags):
    words = flags.split()
    i = words.index("--seq")
    return " ".join(words[:i] + words[i + 2:])


def run_lines(d, spplan, preset, name):
    """Every run of `name` (engine_runs.jsonl or slack.jsonl: one gpu-measure.sh run_case line each)."""
    path = os.path.join(d, name)
    if not os.path.exists(path):
        return
    calibrated = os.path.join(d, "calibrated.toml")
    yield "| case | measured GiB | predicted GiB | d % | measured s | preset s | d % | calibrated s | d % | fits (planner) | ran | verdict |"
    yield "|---|---|---|---|---|---|---|---|---|---|---|---|"
    time_p, time_c, mem, verdicts = [], [], [], []
    for r in load_jsonl(path):
        case, flags, rc = need(r, "case", name), need(r, "flags", name), r.get("exit")
        p, c = estimate(spplan, d, preset, flags), estimate(spplan, d, calibrated, flags)
        ran = {0: "yes", 3: "out of memory"}.get(rc, "exit %s" % rc)
        right = (rc == 0) == bool(p["fits"]) if rc in (0, 3) else None
        verdicts.append(right)
        verdict = {True: "right", False: "wrong", None: "-"}[right]
        res = r.get("result")
        if rc != 0 or not res:
            yield "| %s | - | %.2f | - | - | %.3f | - | %.3f | - | %s | %s | %s |" % (
                case, p["memory"]["allocated_gib"], p["step_time_s"], c["step_time_s"], "yes" if p["fits"] else "no", ran, verdict)
            continue
        m, t = res["peak_memory_bytes"] / GIB, res["step_time_s"]
        pm = p["memory"]["allocated_gib"]
        dm, dp, dc = pct(pm, m), pct(p["step_time_s"], t), pct(c["step_time_s"], t)
        mem.append(abs(dm))
        time_p.append(abs(dp))
        time_c.append(abs(dc))
        yield "| %s | %.2f | %.2f | %+.1f | %.3f | %.3f | %+.1f | %.3f | %+.1f | %s | %s | %s |" % (
            case, m, pm, dm, t, p["step_time_s"], dp, c["step_time_s"], dc, "yes" if p["fits"] else "no", ran, verdict)
    if not mem:
        raise BadInput("%s: no run with a result" % path)
    yield ""
    yield "Memory: mean |d| %.1f %%, max %.1f %%. Step time with the preset: mean |d| %.1f %%, max %.1f %%; with the calibrated file: mean |d| %.1f %%, max %.1f %% (%d runs). Fit verdicts: %d of %d right." % (
        sum(mem) / len(mem), max(mem), sum(time_p) / len(time_p), max(time_p), sum(time_c) / len(time_c), max(time_c), len(mem),
        sum(1 for v in verdicts if v), sum(1 for v in verdicts if v is not None))


def slack_lines(d, spplan, preset):
    """The slack stage's runs near the limit: what the caching allocator kept beyond what was
    allocated (torch's peak reserved less peak allocated) beside the allowance the planner adds at
    its peak moment (the estimate's 'allocator slack' term), the total with it and what the step needs
    (the slack the allocator gives back near the limit not counted) against the device."""
    path = os.path.join(d, "slack.jsonl")
    if not os.path.exists(path):
        return
    yield "| case | allocated GiB | reserved GiB | slack kept GiB | slack allowance GiB | predicted total GiB | needed GiB | device GiB |"
    yield "|---|---|---|---|---|---|---|---|"
    for r in load_jsonl(path):
        res = r.get("result") if r.get("exit") == 0 else None
        if not res or "peak_reserved_bytes" not in res:
            continue
        p = estimate(spplan, d, preset, need(r, "flags", path))
        allowance = sum(t["gib"] for t in p["memory"]["peak"]["tensors"] if t["name"] == "allocator slack")
        a, v = res["peak_memory_bytes"] / GIB, res["peak_reserved_bytes"] / GIB
        yield "| %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.1f |" % (
            need(r, "case", path), a, v, v - a, allowance, p["memory"]["total_gib"], p["memory"]["needed_gib"],
            p["memory"]["capacity_gib"])


ATTENTION_HEAD = re.compile(r"^attention by length \((\w+), (\d+) heads;")
ATTENTION_ROW = re.compile(r"^  d (\d+), (\d+) tokens: causal ([\d.]+) / ([\d.]+), non-causal ([\d.]+) / ([\d.]+)")


def attention_lines(d):
    """calibrate's attention rates by length (bf16), when its report has them: each call's TFLOP/s
    of the pairs it attends, forward / backward, causal and not (a ring's off-diagonal blocks)."""
    path = os.path.join(d, "calibrate.log")
    if not os.path.exists(path):
        return
    with open(path) as f:
        lines = f.read().splitlines()
    dtype, rows = None, []
    for line in lines:
        head = ATTENTION_HEAD.match(line)
        if head:
            dtype = head.group(1)
            continue
        row = ATTENTION_ROW.match(line)
        if row and dtype == "bf16":
            rows.append(row.groups())
        elif not line.startswith("  "):
            dtype = None
    if not rows:
        return
    yield "| head dim | tokens | causal forward | causal backward | non-causal forward | non-causal backward |"
    yield "|---|---|---|---|---|---|"
    for hd, tokens, cf, cb, nf, nb in rows:
        yield "| %s | %dK | %.0f | %.0f | %.0f | %.0f |" % (hd, int(tokens) // 1024, float(cf), float(cb), float(nf), float(nb))


def longest_lines(d, spplan, preset):
    """The max-seq runs (gpu-measure.sh's longest stage), when the lease had them: each run's length,
    the planner's max-seq then and now, and whether the run went as the planner said."""
    path = os.path.join(d, "longest.jsonl")
    if not os.path.exists(path):
        return
    yield "| case | seq | max-seq then | max-seq now | ran | measured GiB | predicted GiB | d % | verdict |"
    yield "|---|---|---|---|---|---|---|---|---|"
    for r in load_jsonl(path):
        case, flags, rc = need(r, "case", path), need(r, "flags", path), r.get("exit")
        words = flags.split()
        seq = int(words[words.index("--seq") + 1])
        now = planner(spplan, "max-seq", d, preset, without_seq(flags))["max_seq"]
        ran = {0: "yes", 3: "out of memory"}.get(rc, "exit %s" % rc)
        right = (rc == 0 and seq <= now) or (rc == 3 and seq > now)
        res = r.get("result") if rc == 0 else None
        cells = ["-", "-", "-"]
        if res and "peak_memory_bytes" in res:
            m, pm = res["peak_memory_bytes"] / GIB, estimate(spplan, d, preset, flags)["memory"]["allocated_gib"]
            cells = ["%.2f" % m, "%.2f" % pm, "%+.1f" % pct(pm, m)]
        yield "| %s | %d | %s | %d | %s | %s | %s |" % (
            case, seq, need(r, "max_seq", path), now, ran, " | ".join(cells), "right" if right else "wrong")


def longest_peers_lines(d):
    """The engine's and HF + Liger's longest sequence under one memory cap (gpu-measure.sh's
    longest_peers stage), when the lease had it."""
    path = os.path.join(d, "longest_peers.jsonl")
    if not os.path.exists(path):
        return
    rows = load_jsonl(path)
    engine = next((r.get("longest_seq") for r in rows if r.get("runner") == "engine"), None)
    yield "| runner | model | memory cap GiB | knobs | longest that ran | shortest that did not | tries | engine / runner |"
    yield "|---|---|---|---|---|---|---|---|"
    for r in rows:
        longest = r.get("longest_seq")
        ratio = "%.2f" % (engine / longest) if engine and longest else "-"
        yield "| %s | %s | %.1f | %s | %s | %s | %d | %s |" % (
            need(r, "runner", path), need(r, "model", path), need(r, "memory_limit_bytes", path) / GIB,
            need(r, "knobs", path), longest if longest else "-", r.get("first_oom_seq") or "-",
            len(need(r, "tries", path)), ratio)


def main():
    ap = argparse.ArgumentParser(description="Render a GPU lease's measurements as the tables of docs/accuracy.md.")
    ap.add_argument("dir")
    ap.add_argument("--spplan", default=os.path.join(REPO, "build", "spplan"))
    args = ap.parse_args()
    try:
        if not (os.path.isfile(args.spplan) and os.access(args.spplan, os.X_OK)):
            raise BadInput("--spplan: value '%s' is not an executable (allowed: a built spplan, e.g. build/spplan)" % args.spplan)
        if not os.path.isdir(args.dir):
            raise BadInput("%s: not a folder (allowed: a validation/gpu/<gpu>-<date> folder)" % args.dir)
        manifest = load_json(os.path.join(args.dir, "manifest.json"))
        out = ["**%s**, driver %s, %s; the tree of commit %s; %s." % (
            need(manifest, "device", "manifest.json"), need(manifest, "driver", "manifest.json"),
            need(manifest, "software", "manifest.json"), need(manifest, "commit", "manifest.json"),
            need(manifest, "date", "manifest.json"))]
        out += [""] + list(kernel_lines(args.dir, manifest))
        out += [""] + list(compare_lines(args.dir))
        preset = need(manifest, "preset", "manifest.json")
        for optional in (attention_lines(args.dir), run_lines(args.dir, args.spplan, preset, "engine_runs.jsonl"),
                         run_lines(args.dir, args.spplan, preset, "slack.jsonl"), slack_lines(args.dir, args.spplan, preset),
                         longest_lines(args.dir, args.spplan, preset),
                         longest_peers_lines(args.dir), trl_lines(args.dir, args.spplan, preset),
                         zero_lines(args.dir, args.spplan, preset)):  # sections a lease may not have had
            lines = list(optional)
            if lines:
                out += [""] + lines
    except BadInput as e:
        print("gpu-table: %s" % e, file=sys.stderr)
        return 2
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
