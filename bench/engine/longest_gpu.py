#!/usr/bin/env python3
"""The longest sequence the engine and Hugging Face + Liger each train on one GPU, same knobs, one cap.

The engine should train at least its strongest peer's longest sequence. Both runners use the
knobs a hand-written HF loop has: bf16, full activation checkpointing and the fused loss (the
engine's --tiled-loss, Liger's fused linear cross-entropy); no ZeRO, no offload (the engine's ALST
recipe with offload is gpu-measure.sh's `longest` stage). On a whole H100 that length is a few
hundred thousand tokens of qwen3-0.6b, where one step takes minutes; under a memory cap
(--memory-gib, default 16: the engine's SPPLAN_ENGINE_DEVICE_MEMORY_LIMIT, torch's memory
fraction for the peer) it is tens of thousands and a try takes seconds. Both runners hold about the
same model state (16 bytes a parameter), so the ratio of their lengths under the cap is the ratio
of what each spends a token.

Each runner: a try at --start tokens, then twice as long while it runs or half while it does not,
then the gap halved down to --granularity; each try is a fresh process running 2 steps (the
second holds the optimizer state). One JSON line per runner: the longest that ran, the shortest
that did not, every try (the engine's tries with the costmodel's device memory for them).

  bench/engine/longest_gpu.py --spplan build-gpu/spplan --out gpu-out/longest_peers.jsonl
--smoke: tiny-llama on the CPU, the engine alone under an emulated 160 MiB device (a test of the
search and the runs: three tries, about 30 s).
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_gpu  # noqa: E402  (the runners and their processes)

GIB = 1024**3
GROWTH = 2.0  # doubling or halving to a bracket, then halving the gap: a few tries from any start
MAX_TRIES = 12


def find_longest(fits, start, granularity, growth=GROWTH, max_tries=MAX_TRIES):
    """(longest that fits, shortest that does not, tries): lengths are multiples of granularity.
    fits(seq) is True, False, or None (an error: the search stops there). Either end is None when
    the tries ran out (or the error came) before finding it."""
    def snap(x):
        return max(granularity, int(x) // granularity * granularity)

    tries = []
    fit, miss = None, None

    def probe(seq):
        nonlocal fit, miss
        ok = fits(seq)
        tries.append((seq, ok))
        if ok is True:
            fit = seq if fit is None else max(fit, seq)
        elif ok is False:
            miss = seq if miss is None else min(miss, seq)
        return ok is not None

    if not probe(snap(start)):
        return fit, miss, tries
    while len(tries) < max_tries and (fit is None or miss is None):
        if miss is None:
            nxt = max(snap(fit * growth), fit + granularity)
        else:
            nxt = min(snap(miss / growth), miss - granularity)
            if nxt < granularity:
                break  # not even the shortest length fits
        if not probe(nxt):
            return fit, miss, tries
    while len(tries) < max_tries and fit is not None and miss is not None and miss - fit > granularity:
        if not probe(snap((fit + miss) // 2)):
            break
    return fit, miss, tries


def try_runner(args, runner, seq, env, log):
    """One try: True (ran), False (out of memory) or None (an error); appends the try to log."""
    case = (args.model, seq, "full", True)
    if runner == "engine":
        row = compare_gpu.run_engine(args, case, env)
    else:
        row = compare_gpu.run_peer(args, runner, case, env)
    entry = {"seq": seq, "exit": row.get("exit"), "outcome": "ran" if row.get("exit") == 0 else
             "out of memory" if row.get("oom") else "error"}
    for key in ("step_time_s", "peak_allocated_bytes", "peak_reserved_bytes", "predicted_device_memory_bytes", "error"):
        if row.get(key) is not None:
            entry[key] = row[key]
    log.append(entry)
    print("  %-9s %8d tokens: %s%s" % (runner, seq, entry["outcome"],
                                       " (%s)" % entry["error"][-80:] if "error" in entry else ""), flush=True)
    return {"ran": True, "out of memory": False}.get(entry["outcome"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--spplan", default=os.path.join(compare_gpu.REPO, "build", "spplan"), help="the spplan binary")
    ap.add_argument("--out", help="JSONL file: one object per runner")
    ap.add_argument("--model", default="qwen3-0.6b")
    ap.add_argument("--memory-gib", type=float, default=16.0, help="the cap both runners train under")
    ap.add_argument("--start", type=int, default=32768, help="the first try's length")
    ap.add_argument("--granularity", type=int, default=2048, help="the answer's step, in tokens")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per try (a try at the cap takes tens)")
    ap.add_argument("--smoke", action="store_true", help="tiny-llama on the CPU, the engine alone (a test of the search)")
    args = ap.parse_args()
    for name in ("memory_gib", "start", "granularity", "timeout"):
        if getattr(args, name) <= 0:
            ap.error("--%s: value %r is not valid (allowed: a positive number)" % (name.replace("_", "-"), getattr(args, name)))
    args.steps = 2
    if args.smoke:
        # 3072 tokens peak 13 MB under the cap; 4096 tokens, by its per-token growth, about 11 MB over.
        args.model, args.memory_gib, args.start, args.granularity = "tiny-llama", 160 / 1024, 3072, 1024
    limit = int(args.memory_gib * GIB)
    env = dict(os.environ, SPPLAN_ENGINE_DEVICE_MEMORY_LIMIT=str(limit))
    if args.smoke:
        env.setdefault("OMP_NUM_THREADS", "1")
    runners = ["engine"] + ([] if args.smoke else ["hf+liger"])
    if not args.smoke and not compare_gpu.importable("liger_kernel"):
        print("longest_gpu: liger_kernel does not import: the engine alone")
        runners = ["engine"]
    meta = compare_gpu.versions()
    print("longest_gpu: %s under %.2f GiB; %s" % (args.model, args.memory_gib, ", ".join("%s %s" % kv for kv in meta.items())))
    results = []
    for runner in runners:
        log = []
        fit, miss, _ = find_longest(lambda seq, r=runner: try_runner(args, r, seq, env, log), args.start, args.granularity)
        results.append({"runner": runner, "model": args.model, "memory_limit_bytes": limit, "longest_seq": fit,
                        "first_oom_seq": miss, "tries": log, "versions": meta,
                        "knobs": "%s, act-ckpt full, fused loss" % ("fp32" if args.smoke else "bf16")})
    engine = results[0]["longest_seq"]
    print("%-9s %12s %16s %6s %14s" % ("runner", "longest ran", "shortest did not", "tries", "engine / runner"))
    for r in results:
        ratio = "%.2f" % (engine / r["longest_seq"]) if engine and r["longest_seq"] else "-"
        print("%-9s %12s %16s %6d %14s" % (r["runner"], r["longest_seq"], r["first_oom_seq"], len(r["tries"]), ratio))
    if args.out:
        with open(args.out, "w") as f:
            for r in results:
                f.write(json.dumps(r) + "\n")
    # A runner whose tries ended in an error (not out of memory) has no answer: a failure.
    return 1 if any(t["outcome"] == "error" for r in results for t in r["tries"]) else 0


if __name__ == "__main__":
    sys.exit(main())
