"""scripts/gpu-table.py's tables of the other stacks a lease ran: TRL's SFTTrainer (trl_gpu.jsonl)
and DeepSpeed ZeRO 2 beside ZeRO 3 (zero_sweep.jsonl), each case priced now by its record."""
import os
import re

from gpu_lease import GIB, BadInput, estimate, load_jsonl, need, number, outcome, pct


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
