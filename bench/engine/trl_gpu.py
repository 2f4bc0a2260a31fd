#!/usr/bin/env python3
"""TRL's SFTTrainer on one GPU, as spplan's trl record prices it: measured against the plan.

Each case is a plan of the `trl` record (`spplan plan --trainer trl` with every knob pinned, so the
plan is the case), exported as `--format trl`, `accelerate` and `deepspeed`, and launched with the
YAML's own line, `trl sft --config trl.yaml` (DeepSpeed ZeRO under Accelerate, as the record
prices; no train.py of ours), on a model of the preset's shape with random weights and a data set
of random words, each sample longer than the sequence. tests/scripts/launch/trl_probe records
from inside the run: the caching allocator's peak allocated and reserved bytes, each optimizer
step's time, the loss type and chunk rows TRL ran. One JSON line per case: the plan's predicted
peak and step time beside them, whether PYTORCH_CUDA_ALLOC_CONF had expandable segments, and the
error where the run failed (an out-of-memory is a result: the length past what fits).

Cases (GPU): qwen3-0.6b and qwen3-4b, each at 16K and near `spplan max-seq --trainer trl` for the
same knobs on this GPU (the edge answer, so a run shows which side of it the GPU is); at 16K TRL's
chunked loss against the full logits (loss_type nll); at the edge with and without expandable
segments. --quick: qwen3-0.6b only. Attention is SDPA: a GPU node's image has no flash-attn.
Last, qwen3-0.6b at 16K once more with torch's memory history recorded (the probe dumps it) and
nvidia-smi sampling memory.used: `spplan check` reads both against the case's plan, and --keep
copies the plan, the snapshot, the samples and check's report to a folder (real inputs for check's
readers, which are otherwise tested on files made in torch's and nvidia-smi's shapes).

  bench/engine/trl_gpu.py --spplan build-gpu/spplan --gpu h200-141gb --out gpu-out/trl_gpu.jsonl

--smoke: the launch test's tiny Llama at 512 tokens on the CPU, fp32, both losses, 2 steps (a
test of this script: ctest bench_trl_gpu_smoke). Needs trl and datasets (carried as
wheels to a node without an index: scripts/bundle-wheels.sh).
"""
import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import time
from typing import NamedTuple

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
LAUNCH = os.path.join(REPO, "tests", "scripts", "launch")
sys.path.insert(0, LAUNCH)
sys.path.insert(0, HERE)
import harness  # noqa: E402  (tests/scripts/launch/harness.py)
from compare_gpu import load_model_toml  # noqa: E402

RUN_TIMEOUT_S = 900  # one launch: a 4B model's load, DeepSpeed's start and 3 steps near the limit
STEPS = 3  # the first step warms kernels and allocates the optimizer state; the others are timed
KNOBS = ["--sp", "1", "--cp", "1", "--zero", "0", "--offload-optimizer", "none", "--offload-params", "none",
         "--act-ckpt", "full", "--no-tiled-mlp", "--micro-batch", "1", "--grad-accum", "1", "--attention", "sdpa"]
TINY = {"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2,
        "head_dim": 16, "intermediate_size": 176, "vocab_size": 256, "tie_word_embeddings": False,
        "rope_theta": 10000.0, "rms_norm_eps": 1e-5}


def spplan_json(args, *cmd):
    r = subprocess.run([args.spplan, *cmd, "--json"], capture_output=True, text=True)
    if r.returncode not in (0, 1):
        raise RuntimeError(f"spplan {cmd[0]}: exit {r.returncode}: {r.stderr.strip()}")
    return json.loads(r.stdout)


def model_flags(args, model):
    return ["--model", model if not args.smoke else os.path.join(args.work, "tiny.toml"), "--gpu", args.gpu,
            "--gpus", "1", "--trainer", "trl", "--precision", "fp32" if args.smoke else "bf16"]


def edge_length(args, model, granularity=1024):
    """max-seq's edge answer for the chunked loss with the case's knobs, in whole K."""
    j = spplan_json(args, "max-seq", *model_flags(args, model), *KNOBS, "--tiled-loss")
    return j["max_seq"] // granularity * granularity


class Case(NamedTuple):
    model: str
    seq: int
    chunked: bool  # TRL's chunked_nll, else the full logits (nll)
    expandable: bool  # PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
    snapshot: bool = False  # memory history and nvidia-smi samples, read by spplan check


def cases(args):
    if args.smoke:
        return [Case("tiny", 512, True, True), Case("tiny", 512, False, True), Case("tiny", 512, True, True, True)]
    out = []
    for model in ["qwen3-0.6b"] + ([] if args.quick else ["qwen3-4b"]):
        edge = edge_length(args, model)
        out += [Case(model, 16384, True, True), Case(model, 16384, False, True), Case(model, edge, True, True),
                Case(model, edge, True, False)]
    return out + [Case("qwen3-0.6b", 16384, True, True, True)]


def model_folder(args, model):
    """The preset's shape with random weights and a word-level tokenizer of its vocabulary, once."""
    d = os.path.join(args.work, "model-" + model)
    if os.path.exists(os.path.join(d, "config.json")):
        return d
    if args.smoke:
        harness.write_tiny_model(d, TINY, TINY["vocab_size"])
        return d
    m = load_model_toml(model)
    config = {k: m[k] for k in ("num_hidden_layers", "hidden_size", "num_attention_heads", "num_key_value_heads",
                                "head_dim", "intermediate_size", "vocab_size") if k in m}
    config.update(tie_word_embeddings=m.get("tie_word_embeddings", False), rope_theta=m.get("rope_theta", 10000.0),
                  rms_norm_eps=m.get("rms_norm_eps", 1e-6), max_position_embeddings=1 << 22)
    harness.write_tiny_model(d, config, m["vocab_size"], m.get("model_type", "llama"))
    return d


def data_folder(args, seq, vocab_size):
    """Random words, 2 x STEPS samples each longer than the sequence (TRL truncates to max_length)."""
    d = os.path.join(args.work, f"data-{seq}")
    os.makedirs(d, exist_ok=True)
    rng = random.Random(seq)
    with open(os.path.join(d, "train.jsonl"), "w") as f:
        for _ in range(2 * STEPS):
            f.write(json.dumps({"text": " ".join(f"w{rng.randrange(vocab_size - 3)}" for _ in range(seq + 16))}) + "\n")
    return d


def case_name(case):
    length = f"{case.seq // 1024}k" if case.seq % 1024 == 0 else str(case.seq)
    return (f"{case.model}-{length}-{'chunked' if case.chunked else 'nll'}"
            f"{'' if case.expandable else '-noexpandable'}{'-snapshot' if case.snapshot else ''}")


class NvidiaSmi:
    """nvidia-smi sampling memory.used every 200 ms into a CSV while a run lasts (none without it;
    SPPLAN_NVIDIA_SMI names a stand-in, as the CPU smoke test does)."""

    def __init__(self, path):
        self.path, self.proc = path, None
        tool = shutil.which(os.environ.get("SPPLAN_NVIDIA_SMI", "nvidia-smi"))
        if tool:
            self.file = open(path, "w")
            self.proc = subprocess.Popen([tool, "--query-gpu=timestamp,memory.used,memory.total",
                                          "--format=csv", "-lms", "200"], stdout=self.file,
                                         stderr=subprocess.DEVNULL)

    def stop(self):
        if self.proc is None:
            return None
        self.proc.terminate()
        self.proc.wait(timeout=10)
        self.file.close()
        return self.path


def check_run(args, plan, logs, keep_dir):
    """spplan check of the run's logs against its plan: exit code and report, copied with them."""
    r = subprocess.run([args.spplan, "check", "--plan", plan, *logs, "--json"], capture_output=True, text=True)
    found = {"check_exit": r.returncode, "check_stderr": r.stderr.strip()[-300:]}
    try:
        found["check"] = json.loads(r.stdout)
    except ValueError:
        found["check_stdout"] = r.stdout[-300:]
    if keep_dir:
        os.makedirs(keep_dir, exist_ok=True)
        for f in [plan, *logs]:
            shutil.copy(f, keep_dir)
        with open(os.path.join(keep_dir, "check.json"), "w") as f:
            json.dump(found, f, indent=1)
    return found


def run_case(args, case):
    model, seq, chunked, expandable = case.model, case.seq, case.chunked, case.expandable
    name = case_name(case)
    d = os.path.join(args.work, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    plan = os.path.join(d, "plan.toml")
    planned = spplan_json(args, "plan", *model_flags(args, model), "--seq", str(seq), *KNOBS,
                          "--tiled-loss" if chunked else "--no-tiled-loss", "--train-steps", str(STEPS), "--out", plan)
    best = (planned.get("plans") or [{}])[0]
    row = {"case": name, "model": model, "seq": seq, "loss": "chunked_nll" if chunked else "nll",
           "expandable_segments": expandable, "memory_history": case.snapshot,
           "predicted_peak_gib": (best.get("memory") or {}).get("total_gib"),
           "predicted_step_time_s": best.get("step_time_s"), "predicted_fits": best.get("fits")}
    for fmt, file in (("trl", "trl.yaml"), ("accelerate", "accelerate.yaml"), ("deepspeed", "ds_config.json")):
        r = subprocess.run([args.spplan, "export", "--plan", plan, "--format", fmt, "--out", os.path.join(d, file)],
                           capture_output=True, text=True)
        if r.returncode != 0:
            return dict(row, error=f"export {fmt}: {r.stderr.strip()}")
    env = harness.launch_env()
    env.pop("PYTORCH_CUDA_ALLOC_CONF", None)
    if expandable:
        env["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"  # what the trl YAML's first lines ask
    record = os.path.join(d, "ranks.jsonl")
    env.update(PATH=os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", ""),
               HF_DATASETS_CACHE=os.path.join(d, "datasets_cache"), SPPLAN_TRL_RECORD=record,
               PYTHONPATH=os.pathsep.join(p for p in (os.path.join(LAUNCH, "trl_probe"), env.get("PYTHONPATH")) if p))
    if args.smoke:
        env.update(CUDA_VISIBLE_DEVICES="", DS_ACCELERATOR="cpu", OMP_NUM_THREADS="1", SPPLAN_CPU_SHIM="1",
                   TORCH_EXTENSIONS_DIR=os.path.join(args.work, "torch_extensions"))
    vocab = TINY["vocab_size"] if args.smoke else load_model_toml(model)["vocab_size"]
    cmd = ["trl", "sft", "--config", "trl.yaml", "--model_name_or_path", model_folder(args, model), "--dataset_name",
           data_folder(args, seq, vocab), "--output_dir", os.path.join(d, "out"), "--report_to", "none",
           "--save_strategy", "no", "--main_process_port", str(harness.free_port())]
    log = os.path.join(d, "launch.log")
    snapshot = os.path.join(d, "memory_snapshot.pickle")
    if case.snapshot:
        env["SPPLAN_TRL_SNAPSHOT"] = snapshot
        smi = NvidiaSmi(os.path.join(d, "nvidia_smi.csv"))
    rc, seconds = harness.run(cmd, d, env, log, args.timeout)
    if case.snapshot:
        logs = [f for f in (snapshot, smi.stop()) if f and os.path.exists(f)]
        row["snapshot_logs"] = [os.path.basename(f) for f in logs]
        if logs:
            row.update(check_run(args, plan, logs, args.keep))
    ranks = harness.read_records(record)
    got = ranks[0] if ranks else {}
    times = got.get("step_times_s") or []
    row.update(exit=rc, seconds=round(seconds, 1), loss_type_ran=got.get("loss_type"),
               chunk_rows=sorted(set(got.get("chunk_rows") or [])), step_times_s=times,
               step_time_s=sum(times[1:]) / len(times[1:]) if len(times) > 1 else None,
               peak_allocated_bytes=got.get("peak_allocated_bytes"), peak_reserved_bytes=got.get("peak_reserved_bytes"),
               alloc_conf=got.get("alloc_conf"), train_loss=got.get("loss"))
    error = got.get("error") or ("" if rc == 0 else harness.last_error(log))
    if error:
        row["error"] = error[:500]
        row["oom"] = "OutOfMemoryError" in error or "out of memory" in error.lower()
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--spplan", default=os.path.join(REPO, "build", "spplan"))
    ap.add_argument("--gpu", default="h200-141gb", help="the GPU preset the plans are priced on")
    ap.add_argument("--out", help="JSONL file: one object per case")
    ap.add_argument("--work", default=os.path.join(os.environ.get("TMPDIR", "/tmp"), "spplan-trl-gpu"))
    ap.add_argument("--timeout", type=int, default=RUN_TIMEOUT_S, help="seconds per launch")
    ap.add_argument("--quick", action="store_true", help="qwen3-0.6b only")
    ap.add_argument("--smoke", action="store_true", help="a tiny Llama on the CPU (a test of this script)")
    ap.add_argument("--keep", help="folder for the snapshot case's plan, logs and spplan check report")
    ap.add_argument("--deadline", type=int, help="seconds from now after which no case starts (a lease's limit)")
    args = ap.parse_args()
    start = time.monotonic()
    try:
        import trl  # noqa: F401
    except ImportError:
        print(f"trl_gpu: SKIP: {sys.executable} cannot import trl (scripts/bundle-wheels.sh carries it)")
        return 77
    os.makedirs(args.work, exist_ok=True)
    if args.smoke:
        with open(os.path.join(args.work, "tiny.toml"), "w") as f:
            f.write('name = "tiny-llama-trl"\n' + "".join(f"{k} = {str(v).lower() if isinstance(v, bool) else v}\n"
                                                         for k, v in TINY.items()))
        ok, detail, seconds = harness.prebuild_ops(dict(os.environ, CUDA_VISIBLE_DEVICES="", DS_ACCELERATOR="cpu",
                                                        TORCH_EXTENSIONS_DIR=os.path.join(args.work, "torch_extensions")))
        if not ok:
            print(f"trl_gpu: DeepSpeed's CPU ops did not build ({seconds:.0f} s): {detail}")
            return 1
    out = open(args.out, "w") if args.out else None
    failures = 0
    for case in cases(args):
        if args.deadline is not None and time.monotonic() - start >= args.deadline:
            row = {"case": case_name(case), "not_run": f"--deadline {args.deadline} s passed"}
        else:
            row = run_case(args, case)
        failures += bool(row.get("error")) and not row.get("oom")
        print(json.dumps(row), flush=True)
        if out:
            out.write(json.dumps(row) + "\n")
            out.flush()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
