#!/usr/bin/env python3
"""The engine beside what a user writes by hand, on the same GPU, the same cases, in one run.

Runners (each case runs in a fresh process per runner, so an out-of-memory in one leaves the
others' numbers clean, and the peak memory is that runner's alone):
  engine     spplan run --model M --seq S --sp 1 --nproc 1 --json (its own report)
  hf         Hugging Face transformers + PyTorch: the model in fp32 under bf16 autocast, SDPA
             attention, gradient checkpointing when the case checkpoints, fused AdamW
  hf+liger   the same with Liger-Kernel's RoPE, RMSNorm, SwiGLU and fused linear cross-entropy,
             when `liger_kernel` imports (the engine's --tiled-loss counterpart)
  ds-zero2, ds-zero3   the same model under DeepSpeed ZeRO 2 / 3 (bf16 weights, fp32 master,
             DeepSpeed's engine.backward / engine.step, which is what the HF Trainer calls), when
             `deepspeed` imports
Each runner reports step time (mean of the steps after the first, the device synchronized) and
peak memory (the caching allocator's allocated and reserved). The table prints them side by side
with ratios to the engine measured in the same run; --out writes one JSON object per runner and case.

  bench/engine/compare_gpu.py --spplan build-gpu/spplan --out gpu-out/compare_gpu.jsonl

--smoke: tiny-llama at 256 tokens on the CPU, 2 steps: checks the whole path in seconds (ctest).

--zero-sweep: DeepSpeed ZeRO 3 against ZeRO 2 only (no engine run), qwen3-0.6b and qwen3-1.7b (the
same 28 layers, hidden 1024 and 2048) at 4K, 16K and 64K, 3 steps, the loss in chunks of 4096 rows;
each row counts the forwards of the modules that hold parameters in its last step, so that ZeRO 3's
cost per module gather can be fitted against the per-module GPU work. --zero-sweep --smoke: the
same on tiny-llama at 256 and 512 tokens on the CPU, 2 steps.

--deadline S (a lease's command limit): no case starts once S seconds have passed; rows are
written as each run ends.

Random weights and synthetic tokens everywhere: the step's work does not depend on the values.
"""
import argparse
import importlib.metadata
import json
import os
import subprocess
import sys
import time
import tomllib

from zero_sweep import (LOSS_CHUNK_ROWS, ZERO_CASES, ZERO_RUNNERS, ZERO_SMOKE_CASES, chunked_loss_model,
                        count_param_module_forwards, sweep_fields)

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# model, seq, checkpointing, tiled loss: the single-GPU cases of validation's gpu_h100_measured.csv
# that a hand-written HF loop can run, and the boundary where HF ran out of memory there.
GPU_CASES = [
    ("qwen3-0.6b", 16384, "full", False),
    ("qwen3-0.6b", 32768, "full", False),
    ("llama-3.2-1b", 16384, "full", False),
    ("llama-3.2-1b", 32768, "full", False),
    ("qwen3-1.7b", 16384, "full", False),
    ("qwen3-1.7b", 4096, "none", False),
    ("qwen3-0.6b", 16384, "full", True),
    ("qwen3-1.7b", 32768, "full", True),
]
SMOKE_CASES = [("tiny-llama", 256, "full", False)]
# --one (a short lease's single comparison): qwen3-0.6b at 16K with full checkpointing,
# the engine beside HF and DeepSpeed ZeRO 2 and 3, and with the tiled loss beside HF + Liger.
ONE_CASES = [GPU_CASES[0], GPU_CASES[6]]


def load_model_toml(name):
    path = name if name.endswith(".toml") else os.path.join(REPO, "configs", "models", name + ".toml")
    with open(path, "rb") as f:
        m = tomllib.load(f)
    m.setdefault("num_key_value_heads", m["num_attention_heads"])
    m.setdefault("head_dim", m["hidden_size"] // m["num_attention_heads"])
    return m


def hf_config(m):
    """A transformers config of the same architecture (Qwen3 or Llama)."""
    import transformers

    kind = m.get("model_type", "llama")
    cls = transformers.Qwen3Config if kind == "qwen3" else transformers.LlamaConfig
    return cls(
        vocab_size=m["vocab_size"], hidden_size=m["hidden_size"], intermediate_size=m["intermediate_size"],
        num_hidden_layers=m["num_hidden_layers"], num_attention_heads=m["num_attention_heads"],
        num_key_value_heads=m["num_key_value_heads"], head_dim=m["head_dim"],
        tie_word_embeddings=m.get("tie_word_embeddings", False), rope_theta=m.get("rope_theta", 10000.0),
        rms_norm_eps=m.get("rms_norm_eps", 1e-6), max_position_embeddings=1 << 20, use_cache=False,
        attn_implementation="sdpa")


def apply_liger(model_type):
    import liger_kernel.transformers as lk

    apply = getattr(lk, "apply_liger_kernel_to_" + model_type)
    apply(rope=True, rms_norm=True, swiglu=True, cross_entropy=False, fused_linear_cross_entropy=True)


def ds_config(stage):
    return {"train_micro_batch_size_per_gpu": 1, "gradient_accumulation_steps": 1, "bf16": {"enabled": True},
            "zero_optimization": {"stage": stage},
            "optimizer": {"type": "AdamW", "params": {"lr": 1e-5, "weight_decay": 0.01}}}


def worker(args):
    """One runner and one case in this process; prints one JSON object."""
    import torch

    device = torch.device("cuda" if torch.cuda.is_available() and not args.smoke else "cpu")
    if args.memory_limit and device.type == "cuda":  # as the engine's SPPLAN_ENGINE_DEVICE_MEMORY_LIMIT
        torch.cuda.set_per_process_memory_fraction(min(1.0, args.memory_limit / torch.cuda.get_device_properties(0).total_memory))
    m = load_model_toml(args.model)
    if args.runner == "hf+liger":
        apply_liger(m.get("model_type", "llama"))
    import transformers

    torch.manual_seed(1)
    model = transformers.AutoModelForCausalLM.from_config(hf_config(m), dtype=torch.float32).to(device)
    if args.act_ckpt == "full":
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    model.train()
    forwards = {"on": False, "n": 0}  # counted in the sweep only: the other runs time no extra hooks
    if args.zero_sweep:
        param_modules, forwards = count_param_module_forwards(model)
        model = chunked_loss_model(model, LOSS_CHUNK_ROWS)
    ids = torch.randint(0, m["vocab_size"], (1, args.seq), device=device)
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    if args.runner.startswith("ds-zero"):
        import deepspeed

        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29517")
        os.environ.setdefault("RANK", "0")
        os.environ.setdefault("LOCAL_RANK", "0")
        os.environ.setdefault("WORLD_SIZE", "1")
        deepspeed.init_distributed()
        engine, _, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(),
                                               config=ds_config(int(args.runner[-1])))

        def step():
            loss = engine(ids) if args.zero_sweep else engine(input_ids=ids, labels=ids).loss
            engine.backward(loss)
            engine.step()
            return loss
    else:
        opt = torch.optim.AdamW(model.parameters(), lr=1e-5, weight_decay=0.01, fused=device.type == "cuda")

        # On a CPU (--smoke) bf16 is emulated and slow, and the engine's CPU runs are fp32: no autocast.
        def step():
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"):
                loss = model(input_ids=ids, labels=ids).loss
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            return loss
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats()
    times = []
    for i in range(args.steps):
        forwards["on"], forwards["n"] = i == args.steps - 1, 0  # the last step's forwards only
        sync()
        t0 = time.perf_counter()
        loss = step()
        sync()
        times.append(time.perf_counter() - t0)
    out = {"step_time_s": sum(times[1:]) / len(times[1:]) if len(times) > 1 else times[0],
           "loss": float(loss.detach().float().cpu())}
    if args.zero_sweep:  # "loss" names the loss in the sweep's rows; its value goes here
        out = {"step_time_s": out["step_time_s"], "loss_value": out["loss"],
               "param_module_forwards": forwards["n"], "param_modules": param_modules}
    if device.type == "cuda":
        out["peak_allocated_bytes"] = torch.cuda.max_memory_allocated()
        out["peak_reserved_bytes"] = torch.cuda.max_memory_reserved()
    print(json.dumps(out))


def run_json(cmd, env, timeout_s):
    """Runs cmd; (the last JSON object line of stdout or None, exit code, last stderr line)."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return None, 124, "timed out after %d s" % timeout_s
    obj = None
    for line in reversed(p.stdout.strip().splitlines()):
        try:
            obj = json.loads(line)
            break
        except ValueError:
            continue
    err = p.stderr.strip().splitlines()
    return obj, p.returncode, err[-1] if err else ""


def run_engine(args, case, env):
    model, seq, ckpt, tiled = case
    cmd = [args.spplan, "run", "--model", model, "--seq", str(seq), "--sp", "1", "--nproc", "1", "--steps",
           str(args.steps), "--act-ckpt", ckpt, "--json"]
    cmd += ["--precision", "bf16"] if not args.smoke else []
    cmd += ["--tiled-loss"] if tiled else []
    obj, rc, err = run_json(cmd, env, args.timeout)
    row = {"exit": rc}
    if obj and obj.get("oom"):
        row["oom"] = True
    elif obj and rc == 0:
        row.update(step_time_s=obj["step_time_s"], peak_allocated_bytes=obj["peak_memory_bytes"],
                   peak_reserved_bytes=obj.get("peak_reserved_bytes"), loss=(obj.get("losses") or [None])[-1],
                   predicted_device_memory_bytes=obj.get("predicted_device_memory_bytes"))
    else:
        row["error"] = err
    return row


def run_peer(args, runner, case, env):
    model, seq, ckpt, _ = case
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", runner, "--model", model, "--seq", str(seq),
           "--act-ckpt", ckpt, "--steps", str(args.steps)] + (["--smoke"] if args.smoke else [])
    cmd += ["--zero-sweep"] if args.zero_sweep else []
    if env.get("SPPLAN_ENGINE_DEVICE_MEMORY_LIMIT"):  # the cap the engine runs under, for the peer too
        cmd += ["--memory-limit", env["SPPLAN_ENGINE_DEVICE_MEMORY_LIMIT"]]
    obj, rc, err = run_json(cmd, env, args.timeout)
    if obj and rc == 0:
        return dict(obj, exit=0)
    oom = "OutOfMemoryError" in err or "out of memory" in err.lower()
    return {"exit": rc, "oom": True} if oom else {"exit": rc, "error": err}


def importable(name):
    try:
        __import__(name)
        return True
    except Exception:  # a broken install is as good as none here
        return False


def runners_for(case):
    """Liger only where the engine's --tiled-loss is its counterpart; HF and DeepSpeed everywhere else."""
    if case[3]:
        return ["hf+liger"] if importable("liger_kernel") else []
    return ["hf"] + (["ds-zero2", "ds-zero3"] if importable("deepspeed") else [])


def gib(b):
    return "%.2f" % (b / 2**30) if isinstance(b, (int, float)) else "-"


def ratio(a, b):
    return "%.2f" % (a / b) if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b else "-"


def versions():
    import torch

    v = {"torch": torch.__version__, "python": sys.version.split()[0]}
    # The distributions' metadata, not the modules' __version__: liger_kernel has none (seen on the
    # H100 node, 2026-11-26, where Liger 0.8.5 imported and ran).
    for module, dist in (("transformers", "transformers"), ("liger_kernel", "liger-kernel"), ("deepspeed", "deepspeed")):
        try:
            v[module] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            pass
    if torch.cuda.is_available():
        v["gpu"] = torch.cuda.get_device_name(0)
    return v


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--spplan", default=os.path.join(REPO, "build", "spplan"), help="the spplan binary")
    ap.add_argument("--out", help="JSONL file: one object per case and runner")
    ap.add_argument("--steps", type=int, help="steps a run, the first a warm-up (default 4; --zero-sweep 3)")
    ap.add_argument("--timeout", type=int, default=900, help="seconds per run")
    ap.add_argument("--deadline", type=int, help="seconds from now after which no case starts (a lease's limit)")
    ap.add_argument("--quick", action="store_true", help="the first 3 GPU cases")
    ap.add_argument("--one", action="store_true",
                    help="qwen3-0.6b 16K only: beside HF and DeepSpeed ZeRO 2 / 3, and tiled beside HF + Liger")
    ap.add_argument("--zero-sweep", action="store_true",
                    help="DeepSpeed ZeRO 3 against ZeRO 2, qwen3-0.6b and -1.7b at 4K/16K/64K, chunked loss")
    ap.add_argument("--shard", default="0/1", help="I/N: every N-th case from the I-th (a lease's per-command limit)")
    ap.add_argument("--smoke", action="store_true", help="tiny-llama on the CPU, 2 steps (a test of this script)")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--model", help=argparse.SUPPRESS)
    ap.add_argument("--seq", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--act-ckpt", help=argparse.SUPPRESS)
    ap.add_argument("--memory-limit", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.zero_sweep and (args.one or args.quick):
        ap.error("--zero-sweep: cannot be combined with --one or --quick (the sweep has its own cases)")
    try:
        args.shard_i, args.shard_n = (int(x) for x in args.shard.split("/"))
        assert 0 <= args.shard_i < args.shard_n
    except (ValueError, AssertionError):
        ap.error("--shard: value %r is not valid (allowed: I/N with 0 <= I < N, e.g. 0/3)" % args.shard)
    if args.smoke:
        args.steps = 2
    elif args.steps is None:
        args.steps = 3 if args.zero_sweep else 4
    return args


def cases_for(args):
    if args.zero_sweep:
        cases = ZERO_SMOKE_CASES if args.smoke else ZERO_CASES
    else:
        cases = SMOKE_CASES if args.smoke else ONE_CASES if args.one else GPU_CASES[:3] if args.quick else GPU_CASES
    return cases[args.shard_i::args.shard_n]


def case_name(case):
    model, seq, ckpt, tiled = case
    if seq < 1024:
        return "%s s%d ckpt-%s" % (model, seq, ckpt)
    return "%s s%dk ckpt-%s%s" % (model, seq // 1024, ckpt, " tiled-loss" if tiled else "")


def case_rows(args, case, env):
    """[(runner, row)] for one case, the runner the ratios are against first."""
    if args.zero_sweep:
        return [(r, run_peer(args, r, case, env)) for r in ZERO_RUNNERS]
    eng = run_engine(args, case, env)
    return [("engine", eng)] + [(r, run_peer(args, r, case, env)) for r in runners_for(case)]


def main():
    args = parse_args()
    if args.worker:
        args.runner = args.worker
        return worker(args)
    for module in ["transformers"] + (["deepspeed"] if args.zero_sweep else []):
        if not importable(module):
            print("compare_gpu: SKIP: %s cannot import %s" % (sys.executable, module))
            return 77
    env = dict(os.environ)
    if args.smoke:
        env["OMP_NUM_THREADS"] = env.get("OMP_NUM_THREADS", "1")
    meta = versions()
    base = "zero2" if args.zero_sweep else "engine"
    print("compare_gpu: " + ", ".join("%s %s" % kv for kv in meta.items()))
    print("%-28s %-9s %9s %9s %8s %8s %8s %8s" % ("case", "runner", "step s", "alloc GiB", "resv GiB",
                                                 "t/" + base, "m/" + base, "note"))
    out = open(args.out, "w") if args.out else None
    failures = 0
    start = time.monotonic()
    for case in cases_for(args):
        name = case_name(case)
        if args.deadline is not None and time.monotonic() - start >= args.deadline:
            print("%-28s not run (--deadline %d s passed)" % (name, args.deadline))
            continue
        rows = case_rows(args, case, env)
        first = rows[0][1]
        for runner, row in rows:
            note = "oom" if row.get("oom") else ("error: " + row["error"][-60:]) if "error" in row else ""
            if "param_module_forwards" in row:
                note = "%d forwards of %d modules" % (row["param_module_forwards"], row["param_modules"])
            failures += "error" in row
            print("%-28s %-9s %9s %9s %8s %8s %8s %s" % (
                name, runner, "%.4f" % row["step_time_s"] if "step_time_s" in row else "-",
                gib(row.get("peak_allocated_bytes")), gib(row.get("peak_reserved_bytes")),
                ratio(row.get("step_time_s"), first.get("step_time_s")),
                ratio(row.get("peak_allocated_bytes"), first.get("peak_allocated_bytes")), note))
            if out:
                out.write(json.dumps(dict(row, case=name, runner=runner, model=case[0], seq=case[1],
                                          act_ckpt=case[2], tiled_loss=case[3], versions=meta,
                                          **sweep_fields(args))) + "\n")
                out.flush()  # a lease's deadline may cut the run: keep what was measured
    if out:
        out.close()
    # An out-of-memory is a result (HF is expected to run out where the engine fits); an error is not.
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
