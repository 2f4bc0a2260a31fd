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
import functools
import json
import os
import re
import subprocess
import sys

GIB = 1024.0**3
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The knobs `spplan run` takes by default (engine/run/options.cpp), spelled for `spplan estimate`,
# which prices exactly the knobs it is given.
RUN_DEFAULTS = {"--sp": "1", "--zero": "0", "--offload-optimizer": "none", "--offload-params": "none", "--micro-batch": "1"}
BENCH_ROW = re.compile(r"^(\S.*?)\s+([\d.]+) ms\s+(\d+) GB/s\s+([\d.]+) ms\s+(\d+) GB/s\s+([\d.]+)x$")
BENCH_HEAD = re.compile(r"^(\S+), (\d+) tokens, (\w+)\s+kernel")


class BadInput(Exception):
    pass


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise BadInput("%s: %s" % (path, e))


def load_jsonl(path):
    rows = []
    try:
        with open(path) as f:
            for line in f:
                if line.strip():
                    rows.append(json.loads(line))
    except (OSError, ValueError) as e:
        raise BadInput("%s: %s" % (path, e))
    return rows


def need(obj, key, where):
    if not isinstance(obj, dict) or key not in obj:
        raise BadInput("%s: key '%s' missing" % (where, key))
    return obj[key]


def pct(predicted, measured):
    return 100.0 * (predicted - measured) / measured


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


# Once per question: the slack table asks again for the estimates the runs table priced (its
# callers read the answer, never change it).
@functools.lru_cache(maxsize=None)
def planner(spplan, command, d, gpu, flags, trainer="engine"):
    """`spplan COMMAND --json` on one GPU with a run's flags (its model first: a preset, or a model
    file the lease kept beside its results) under `trainer`'s record, the knobs `spplan run`
    defaults to made explicit where the flags leave them out."""
    words = flags.split()
    model = os.path.join(d, os.path.basename(words[0])) if words[0].endswith(".toml") else words[0]
    args = [spplan, command, "--model", model, "--gpu", gpu, "--gpus", "1", "--trainer", trainer, "--json"] + words[1:]
    for k, v in RUN_DEFAULTS.items():
        if k not in words:
            args += [k, v]
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode != 0:
        raise BadInput("spplan %s %s: exit %d: %s" % (command, flags, p.returncode, " ".join(p.stderr.strip().splitlines()[-1:])))
    return json.loads(p.stdout)


def estimate(spplan, d, gpu, flags, trainer="engine"):
    return planner(spplan, "estimate", d, gpu, flags, trainer)


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


def number(obj, key, where):
    v = need(obj, key, where)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0:
        raise BadInput("%s: key '%s': value %r is not a number >= 0" % (where, key, v))
    return v


def outcome(r, where):
    """What one measured row came to: 'yes' (ran), 'out of memory', 'exit N' or 'failed' (an error
    without a launch's exit: trl_gpu.py's export failed, or its probe reported one)."""
    if r.get("oom"):
        return "out of memory"
    rc = r.get("exit") if "error" in r else need(r, "exit", where)
    if rc == 0 and "error" not in r:
        return "yes"
    return "exit %s" % rc if rc not in (None, 0) else "failed"


# The knobs bench/engine/trl_gpu.py pins (its KNOBS, bf16): the plan it exported is the case.
TRL_KNOBS = ("--precision bf16 --sp 1 --cp 1 --zero 0 --offload-optimizer none --offload-params none --act-ckpt full "
             "--no-tiled-mlp --micro-batch 1 --grad-accum 1 --attention sdpa")
TRL_LOSSES = {"chunked_nll": "--tiled-loss", "nll": "--no-tiled-loss"}


def trl_lines(d, spplan, preset):
    """TRL's SFTTrainer launched from spplan's trl export (bench/engine/trl_gpu.py), when the lease
    ran it: each case priced now by the trl record with the case's knobs."""
    path = os.path.join(d, "trl_gpu.jsonl")
    if not os.path.exists(path):
        return
    yield ("TRL's SFTTrainer (`trl sft` of spplan's trl export, bench/engine/trl_gpu.py). Memory: the trl record's "
           "allocated peak now (`spplan estimate --json` memory.allocated_gib, CUDA context, NCCL and allocator slack "
           "left out) against torch's max_memory_allocated; reserved is max_memory_reserved, shown, not compared; "
           "'then' is the plan's total (allocated_gib plus that overhead) on the day of the lease. A case run with "
           "torch's memory history on (-snapshot, for spplan check) has its step time shown in brackets and left out "
           "of the step-time error: recording every allocation slows the host side of a step.")
    yield ""
    yield ("| case | allocated GiB | reserved GiB | predicted GiB | d % | then GiB | step s | predicted s | d % "
           "| fits (planner) | ran | verdict | loss TRL ran |")
    yield "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    mem, times, verdicts = [], [], []
    for r in load_jsonl(path):
        if "not_run" in r:  # trl_gpu.py --deadline: a case it did not start (no model, nothing to price)
            yield "| %s |%s not run | - | - |" % (need(r, "case", path), " - |" * 9)
            continue
        case, model, seq, loss = (need(r, k, path) for k in ("case", "model", "seq", "loss"))
        if loss not in TRL_LOSSES:
            raise BadInput("%s: case %s: key 'loss': value %r is not one of %s" % (path, case, loss, ", ".join(TRL_LOSSES)))
        then = need(r, "predicted_peak_gib", path)
        p = estimate(spplan, d, preset, "%s --seq %d %s %s" % (model, number(r, "seq", path), TRL_KNOBS, TRL_LOSSES[loss]),
                     "trl")
        ran = outcome(r, path)
        right = (ran == "yes") == bool(p["fits"]) if ran in ("yes", "out of memory") else None
        verdicts.append(right)
        measured = ("-",) * 6
        if ran == "yes":
            a, v, t = (number(r, k, path) for k in ("peak_allocated_bytes", "peak_reserved_bytes", "step_time_s"))
            dm, dt = pct(p["memory"]["allocated_gib"], a / GIB), pct(p["step_time_s"], t)
            mem.append(abs(dm))
            recorded = bool(r.get("memory_history"))
            if not recorded:
                times.append(abs(dt))
            rows = ", ".join(str(n) for n in r.get("chunk_rows") or [])
            ran_loss = str(need(r, "loss_type_ran", path)) + (" (%s rows a chunk)" % rows if rows else "")
            step, err = ("(%.3f)" % t, "-") if recorded else ("%.3f" % t, "%+.1f" % dt)
            measured = ("%.2f" % (a / GIB), "%.2f" % (v / GIB), "%+.1f" % dm, step, err, ran_loss)
        a, v, dm, t, dt, ran_loss = measured
        yield "| %s | %s | %s | %.2f | %s | %s | %s | %.3f | %s | %s | %s | %s | %s |" % (
            case, a, v, p["memory"]["allocated_gib"], dm, "%.2f" % then if isinstance(then, (int, float)) else "-", t,
            p["step_time_s"], dt, "yes" if p["fits"] else "no", ran, {True: "right", False: "wrong", None: "-"}[right], ran_loss)
    if times:
        yield ""
        yield "Memory: mean |d| %.1f %%, max %.1f %% (%d runs). Step time: mean |d| %.1f %%, max %.1f %% (%d runs). Fit verdicts: %d of %d right." % (
            sum(mem) / len(mem), max(mem), len(mem), sum(times) / len(times), max(times), len(times),
            sum(1 for v in verdicts if v), sum(1 for v in verdicts if v is not None))


ZERO_RUNNERS = {"ds-zero2": 2, "ds-zero3": 3}


def zero_lines(d, spplan, preset):
    """DeepSpeed ZeRO 2 beside ZeRO 3 on one GPU (bench/engine/compare_gpu.py --zero-sweep), when
    the lease ran it: what ZeRO 3's parameter gathers add to a step, and each stage priced now.
    The sweep's runners are a hand-written loop of the HF model under DeepSpeed with a chunked,
    checkpointed loss; the hf record refuses --tiled-loss (it knows only Liger's fused one), and the
    trl record is the hf record with exactly that loss (lm_head + cross-entropy a chunk at a time,
    recomputed in the backward), so it prices them; its chunk is TRL's 256 rows, the sweep's 4096."""
    path = os.path.join(d, "zero_sweep.jsonl")
    if not os.path.exists(path):
        return
    cases = {}
    for r in load_jsonl(path):
        case, runner = need(r, "case", path), need(r, "runner", path)
        if runner not in ZERO_RUNNERS:
            raise BadInput("%s: case %s: key 'runner': value %r is not one of %s" % (path, case, runner, ", ".join(ZERO_RUNNERS)))
        if need(r, "sweep", path) != "zero":
            raise BadInput("%s: case %s: key 'sweep': value %r is not 'zero'" % (path, case, r["sweep"]))
        if runner in cases.setdefault(case, {}):
            raise BadInput("%s: case %s: runner %s twice (allowed: one row a runner and case)" % (path, case, runner))
        cases[case][runner] = r
    yield ("DeepSpeed ZeRO 2 and 3 on one GPU (bench/engine/compare_gpu.py --zero-sweep: the same HF model, SDPA, "
           "full checkpointing and chunked loss under both). 'A gather' is ZeRO 3's step less ZeRO 2's over 2 x ZeRO 3's "
           "param_module_forwards: it assumes ZeRO 3 gathers each parameter-holding module's weights once for each of its "
           "forwards (recomputes included) and once more for that forward's backward. Allocated: torch's "
           "max_memory_allocated. Predicted: `spplan estimate --trainer trl` (the hf record with a chunked, recomputed "
           "loss, as the sweep's; hf refuses --tiled-loss) with the run's knobs, --attention sdpa --tiled-loss.")
    yield ""
    yield ("| model | seq | ZeRO 2 step s | ZeRO 3 step s | ZeRO 3 - ZeRO 2 s | a gather ms | ZeRO 3 allocated GiB "
           "| ZeRO 2 allocated GiB | ZeRO 2 predicted s | d % | ZeRO 3 predicted s | d % |")
    yield "|---|---|---|---|---|---|---|---|---|---|---|---|"
    for case, by_runner in cases.items():
        first = next(iter(by_runner.values()))
        model, seq, ckpt, loss = (need(first, k, path) for k in ("model", "seq", "act_ckpt", "loss"))
        if not re.fullmatch(r"chunked-\d+", str(loss)):
            raise BadInput("%s: case %s: key 'loss': value %r is not chunked-ROWS (the sweep's loss)" % (path, case, loss))
        step, gib_, pred, err = {}, {}, {}, {}
        for runner, stage in ZERO_RUNNERS.items():
            r = by_runner.get(runner)
            flags = "%s --seq %d --precision bf16 --sp 1 --zero %d --act-ckpt %s --attention sdpa --tiled-loss" % (
                model, number(first, "seq", path), stage, ckpt)
            pred[runner] = estimate(spplan, d, preset, flags, "trl")["step_time_s"]
            ran = outcome(r, path) if r else "not run"
            step[runner], gib_[runner], err[runner] = ran, "-", "-"
            if ran == "yes":
                t = number(r, "step_time_s", path)
                number(r, "param_module_forwards", path)  # every run counts them (compare_gpu.py's worker)
                step[runner], gib_[runner] = t, "%.2f" % (number(r, "peak_allocated_bytes", path) / GIB)
                err[runner] = "%+.1f" % pct(pred[runner], t)
        both = all(not isinstance(step[k], str) for k in ZERO_RUNNERS)
        diff = gather = "-"
        if both:
            forwards = number(by_runner["ds-zero3"], "param_module_forwards", path)
            dt = step["ds-zero3"] - step["ds-zero2"]
            diff = "%+.4f" % dt
            gather = "%+.3f" % (1e3 * dt / (2 * forwards)) if forwards else "-"
        shown = {k: "%.4f" % v if not isinstance(v, str) else v for k, v in step.items()}
        yield "| %s | %d | %s | %s | %s | %s | %s | %s | %.4f | %s | %.4f | %s |" % (
            model, seq, shown["ds-zero2"], shown["ds-zero3"], diff, gather, gib_["ds-zero3"], gib_["ds-zero2"],
            pred["ds-zero2"], err["ds-zero2"], pred["ds-zero3"], err["ds-zero3"])


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
