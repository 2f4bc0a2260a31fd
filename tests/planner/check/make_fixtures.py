#!/usr/bin/env python3
"""Writes the real-run fixtures of tests/planner/check/data/ (run by hand, not by the test command):

    ~/.cache/spplan/venv/bin/python tests/planner/check/make_fixtures.py build/spplan WORK_DIR

Each fixture is what a stack wrote during a run on this CPU, trimmed to the keys `spplan check`
reads and nothing invented:
  hf_sp2/trainer_state.json        the HF Trainer launched from `spplan export --format accelerate` of
                                   a Ulysses plan (sp 2, ZeRO 3, two CPU processes), as exported;
  hf_sp2_dropped/trainer_state.json the same launch with the YAML's parallelism_config removed: the
                                   ParallelismConfig dropped, the two ranks data parallel;
  arctic_sp2/metrics.jsonl         ArcticTraining launched from `spplan export --format arctic` of that
                                   plan on trainer arctic (its metrics file, train_log_metrics_path);
  engine_sp2.json, engine_sp2.log.jsonl   spplan run of tiny-llama-4k-cpu (sp 2), --json and --log;
  engine_sp1_on_sp2.log.jsonl      the same model, length and GPUs run with --sp 1: the split not applied
                                   (for ring_cp2_cpu.toml too: a ring plan launched without cp);
  engine_cp2.json                  spplan run of ring_cp2_cpu.toml (the ring, cp 2).
  gpu/h100-2026-11-26/              each engine run of that lease that ran, its --json report as kept;
  gpu/                             from the H200 lease's records in validation/gpu/ (no GPU here): its
                                   runs' max_memory_allocated/reserved written as the lines torch's
                                   users print and DeepSpeed's see_memory_usage prints (the numbers
                                   the lease measured; the wording each tool's).
The training script is tests/scripts/launch/train_hf.py, with the flags the export names plus
--max_steps 2 --logging_steps 1 --include_num_input_tokens_seen true --save_strategy steps --save_steps 2
(the Trainer writes trainer_state.json with each checkpoint).
"""
import json
import os
import shutil
import subprocess
import sys

spplan, work = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
# --check: the test command's run (tests/planner/check/check_launch_test.sh): the runs are made again
# into WORK_DIR/data, nothing in the source tree is written, and `spplan check` must pass each run
# launched as planned and call each broken one "not split".
checking = "--check" in sys.argv[3:]
here = os.path.dirname(os.path.abspath(__file__))
root = os.path.abspath(os.path.join(here, "..", "..", ".."))
data = os.path.join(work, "data") if checking else os.path.join(here, "data")
launch_dir = os.path.join(root, "tests", "scripts", "launch")
sys.path.insert(0, launch_dir)
import harness  # noqa: E402  (tests/scripts/launch/harness.py: the launch tests' shared parts)
os.makedirs(work, exist_ok=True)

MODEL = {"name": "launch-tiny", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
         "num_key_value_heads": 2, "head_dim": 16, "intermediate_size": 176, "vocab_size": 256,
         "tie_word_embeddings": False, "rope_theta": 10000.0, "rms_norm_eps": 1e-5}
SEQ = 256
PLAN = (f'seq_len = {SEQ}\ntrainer = "hf"\n[model]\n' +
        "".join(f"{k} = {json.dumps(v) if isinstance(v, str) else str(v).lower() if isinstance(v, bool) else v}\n"
                for k, v in MODEL.items()) +
        '[gpu]\npreset = "h100-80gb"\n[cluster]\nnum_gpus = 2\n[knobs]\nsp = 2\nzero_stage = 3\nact_ckpt = "none"\n'
        'precision = "fp32"\n[optimizer]\ntrain_steps = 2\n')


def env():
    e = {k: v for k, v in os.environ.items() if not k.startswith(("PARALLELISM_CONFIG_", "ACCELERATE_", "FSDP_"))}
    e.update({"PATH": os.path.dirname(sys.executable) + os.pathsep + e.get("PATH", ""), "CUDA_VISIBLE_DEVICES": "",
              "DS_ACCELERATOR": "cpu", "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "WANDB_MODE": "disabled",
              "TORCH_EXTENSIONS_DIR": os.path.join(work, "torch_extensions"),
              "PYTHONPATH": os.path.join(launch_dir, "cpu_shim"), "SPPLAN_CPU_SHIM": "1",
              "SPPLAN_TRAIN_MODEL": os.path.join(work, "model", "config.json"), "SPPLAN_TRAIN_SEQ_LEN": str(SEQ),
              "MASTER_ADDR": "127.0.0.1"})
    return e


def without_parallelism(yaml_text):
    """The YAML with its parallelism_config block removed (the ParallelismConfig dropped)."""
    out, skipping = [], False
    for line in yaml_text.splitlines():
        if line.startswith("parallelism_config:"):
            skipping = True
            continue
        if skipping and line.startswith((" ", "\t")):
            continue
        skipping = False
        out.append(line)
    return "\n".join(out) + "\n"


def trim_state(path):
    """trainer_state.json with the keys check reads (log_history, global_step) and the run's shape."""
    state = json.load(open(path))
    keep = {k: state[k] for k in ("global_step", "max_steps", "train_batch_size", "log_history") if k in state}
    return json.dumps(keep, indent=2) + "\n"


def deepspeed_lines(log_path):
    """The lines of a launch log that DeepSpeed's timers and memory reports printed."""
    keep = [l for l in open(log_path, errors="replace") if "time (ms) |" in l or "Max_MA" in l or "MaxMemAllocated=" in l]
    return "".join(keep)


def hf_case(name, drop):
    d = os.path.join(work, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    shutil.copy(os.path.join(launch_dir, "train_hf.py"), os.path.join(d, "train.py"))
    plan = os.path.join(d, "plan.toml")
    open(plan, "w").write(PLAN)
    def export(fmt):
        return subprocess.run([spplan, "export", "--plan", plan, "--format", fmt], check=True, capture_output=True,
                              text=True).stdout

    # The YAML's flags name it; DeepSpeed's wall-clock timers on, printed every step (its logs' format).
    ds = json.loads(export("deepspeed"))
    ds.update(wall_clock_breakdown=True, steps_per_print=1)
    open(os.path.join(d, "ds_config.json"), "w").write(json.dumps(ds, indent=1))
    text = export("accelerate")
    flags = harness.trainer_flags(text)
    if flags is None:
        sys.exit("the accelerate export names no HF Trainer flags")
    open(os.path.join(d, "accelerate.yaml"), "w").write(without_parallelism(text) if drop else text)
    e = dict(env(), SPPLAN_TRAIN_RECORD=os.path.join(d, "ranks.jsonl"), SPPLAN_TRAIN_OUTPUT=os.path.join(d, "out"))
    port = str(harness.free_port())
    cmd = ["accelerate", "launch", "--config_file", "accelerate.yaml", "--main_process_port", port, "train.py", *flags,
           "--max_steps", "2", "--logging_steps", "1", "--include_num_input_tokens_seen", "true",
           "--save_strategy", "steps", "--save_steps", "2", "--report_to", "none"]
    with open(os.path.join(d, "launch.log"), "w") as log:
        rc = subprocess.run(cmd, cwd=d, env=e, stdout=log, stderr=subprocess.STDOUT, timeout=600).returncode
    state = os.path.join(d, "out", "checkpoint-2", "trainer_state.json")
    if rc != 0 or not os.path.exists(state):
        sys.exit(f"{name}: exit {rc}, no {state}; see {d}/launch.log")
    os.makedirs(os.path.join(data, name), exist_ok=True)
    open(os.path.join(data, name, "trainer_state.json"), "w").write(trim_state(state))
    open(os.path.join(data, name, "plan.toml"), "w").write(PLAN)
    open(os.path.join(data, name, "deepspeed.log"), "w").write(deepspeed_lines(os.path.join(d, "launch.log")))
    print(f"{name}: {os.path.join(data, name, 'trainer_state.json')}", flush=True)


def arctic_case(name):
    """ArcticTraining from `spplan export --format arctic` of the same plan on trainer arctic, its
    placeholders filled as tests/scripts/launch_test.py fills them; its metrics file kept."""
    import random
    import re

    import datasets

    d = os.path.join(work, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    plan_text = PLAN.replace('trainer = "hf"', 'trainer = "arctic"')
    plan = os.path.join(d, "plan.toml")
    open(plan, "w").write(plan_text)
    text = subprocess.run([spplan, "export", "--plan", plan, "--format", "arctic"], check=True, capture_output=True,
                          text=True).stdout
    model_dir, data_dir = os.path.join(d, "model"), os.path.join(d, "data")
    words = harness.write_tiny_model(model_dir, {k: v for k, v in MODEL.items() if k != "name"}, MODEL["vocab_size"])
    rng = random.Random(0)
    datasets.Dataset.from_list([{"user": " ".join(rng.choice(words) for _ in range(40)),
                                 "assistant": " ".join(rng.choice(words) for _ in range(60))}
                                for _ in range(64)]).save_to_disk(data_dir)
    text = re.sub(r"^  name_or_path: .*$", "  name_or_path: " + model_dir, text, flags=re.M)
    text = re.sub(r"^  sources:\n    - .*$", "  sources:\n    - " + data_dir, text, flags=re.M)
    text = text.replace("\ndata:\n", f"\ndata:\n  cache_dir: {d}/data_cache\n  num_proc: 1\n  dl_num_workers: 1\n", 1)
    metrics = os.path.join(d, "metrics.jsonl")
    text += f"logger:\n  output_dir: {d}/logs\ntrain_log_metrics_path: {metrics}\n"
    open(os.path.join(d, "recipe.yml"), "w").write(text)
    shutil.copy(os.path.join(launch_dir, "arctic_probe.py"), os.path.join(d, "train.py"))
    e = dict(env(), SPPLAN_TRAIN_RECORD=os.path.join(d, "ranks.jsonl"))
    cmd = ["arctic_training", "recipe.yml", "--num_gpus", "2", "--master_port", str(harness.free_port())]
    with open(os.path.join(d, "launch.log"), "w") as log:
        rc = subprocess.run(cmd, cwd=d, env=e, stdout=log, stderr=subprocess.STDOUT, timeout=600).returncode
    if rc != 0 or not os.path.exists(metrics):
        sys.exit(f"{name}: exit {rc}, no {metrics}; see {d}/launch.log")
    os.makedirs(os.path.join(data, name), exist_ok=True)
    shutil.copy(metrics, os.path.join(data, name, "metrics.jsonl"))
    open(os.path.join(data, name, "plan.toml"), "w").write(plan_text)
    print(f"{name}: {os.path.join(data, name, 'metrics.jsonl')}", flush=True)


def engine_case(out_name, flags):
    d = os.path.join(work, "engine")
    os.makedirs(d, exist_ok=True)
    log = os.path.join(d, out_name + ".log.jsonl")
    report = subprocess.run([spplan, "run", *flags, "--nproc", "2", "--steps", "3", "--json", "--log", log],
                            cwd=d, check=True, capture_output=True, text=True).stdout
    return report, open(log).read()


def gpu_plan(gpu, trainer, zero, seq=16384, act_ckpt="full", precision="bf16", tiled_loss=False):
    tiled = "tiled_loss = true\n" if tiled_loss else ""
    return (f'seq_len = {seq}\ntrainer = "{trainer}"\n[model]\npreset = "qwen3-0.6b"\n[gpu]\npreset = "{gpu}"\n'
            f'[cluster]\nnum_gpus = 1\n[knobs]\nsp = 1\nzero_stage = {zero}\nact_ckpt = "{act_ckpt}"\n'
            f'precision = "{precision}"\n{tiled}')


def h100_lease(out):
    """Every engine run of the H100 lease of 26 November that ran: its --json report and its plan."""
    lease = os.path.join(out, "h100-2026-11-26")
    os.makedirs(lease, exist_ok=True)
    path = os.path.join(root, "validation", "gpu", "h100-80gb-2026-11-26", "engine_runs.jsonl")
    for row in map(json.loads, open(path)):
        if row["exit"] != 0:
            continue
        words = row["flags"].split()
        flag = lambda name: words[words.index(name) + 1]
        seq = int(flag("--seq").rstrip("k")) * 1024
        open(os.path.join(lease, row["case"] + ".json"), "w").write(json.dumps(row["result"], indent=1) + "\n")
        open(os.path.join(lease, row["case"] + ".plan.toml"), "w").write(
            gpu_plan("h100-80gb", "engine", 0, seq, flag("--act-ckpt"), flag("--precision"), "--tiled-loss" in words))


def gpu_cases():
    out = os.path.join(data, "gpu")
    os.makedirs(out, exist_ok=True)
    h100_lease(out)
    h200 = os.path.join(root, "validation", "gpu", "h200-141gb-2026-11-30", "compare_gpu.jsonl")
    rows = [json.loads(l) for l in open(h200)]
    engine = next(r for r in rows if r["runner"] == "engine" and r["case"] == "qwen3-0.6b s16k ckpt-full")
    zero2 = next(r for r in rows if r["runner"] == "ds-zero2" and r["case"] == "qwen3-0.6b s16k ckpt-full")
    open(os.path.join(out, "h200_engine_q06_16k.memory.log"), "w").write(
        f"max_memory_allocated: {engine['peak_allocated_bytes']}\nmax_memory_reserved: {engine['peak_reserved_bytes']}\n")
    open(os.path.join(out, "h200_engine_q06_16k.plan.toml"), "w").write(gpu_plan("h200-141gb", "engine", 0))
    gib = 1024 ** 3  # see_memory_usage divides by 1024^3, rounds Max_CA to a whole number
    open(os.path.join(out, "h200_zero2_q06_16k.deepspeed.log"), "w").write(
        "After step\n"
        f"MA {round(zero2['peak_allocated_bytes'] / gib, 2)} GB         Max_MA {round(zero2['peak_allocated_bytes'] / gib, 2)} GB"
        f"         CA {round(zero2['peak_reserved_bytes'] / gib, 2)} GB         Max_CA {round(zero2['peak_reserved_bytes'] / gib)} GB \n")
    open(os.path.join(out, "h200_zero2_q06_16k.plan.toml"), "w").write(gpu_plan("h200-141gb", "hf", 2))


def main():
    os.makedirs(os.path.join(work, "model"), exist_ok=True)
    json.dump(dict({k: v for k, v in MODEL.items() if k != "name"}, model_type="llama", architectures=["LlamaForCausalLM"]),
              open(os.path.join(work, "model", "config.json"), "w"))
    os.makedirs(data, exist_ok=True)
    if checking:  # the ring plan the engine case runs
        shutil.copy(os.path.join(here, "data", "ring_cp2_cpu.toml"), os.path.join(data, "ring_cp2_cpu.toml"))
    cases = [c for c in sys.argv[3:] if c != "--check"] or (["hf_sp2", "hf_sp2_dropped", "arctic_sp2", "engine"] if checking
                                                           else ["hf_sp2", "hf_sp2_dropped", "arctic_sp2", "engine", "gpu"])
    if "gpu" in cases:
        gpu_cases()
    if "hf_sp2" in cases:
        hf_case("hf_sp2", drop=False)
    if "hf_sp2_dropped" in cases:
        hf_case("hf_sp2_dropped", drop=True)
    if "arctic_sp2" in cases:
        arctic_case("arctic_sp2")
    if "engine" in cases:
        plan = os.path.join(root, "configs", "plans", "tiny-llama-4k-cpu.toml")
        report, log = engine_case("engine_sp2", ["--plan", plan])
        open(os.path.join(data, "engine_sp2.json"), "w").write(report)
        open(os.path.join(data, "engine_sp2.log.jsonl"), "w").write(log)
        _, log = engine_case("engine_sp1", ["--model", "tiny-llama", "--seq", "4k", "--sp", "1", "--zero", "0",
                                            "--act-ckpt", "none", "--precision", "fp32"])
        open(os.path.join(data, "engine_sp1_on_sp2.log.jsonl"), "w").write(log)
        report, _ = engine_case("engine_cp2", ["--plan", os.path.join(data, "ring_cp2_cpu.toml")])
        open(os.path.join(data, "engine_cp2.json"), "w").write(report)
    if checking:
        sys.exit(check_all(cases))


def check_all(cases):
    """spplan check on each run made: (plan, logs, expected exit, a word the output must hold)."""
    cpu_plan = os.path.join(root, "configs", "plans", "tiny-llama-4k-cpu.toml")
    ring_plan = os.path.join(data, "ring_cp2_cpu.toml")
    expected = {
        "hf_sp2": [("hf_sp2/plan.toml", ["hf_sp2/trainer_state.json", "hf_sp2/deepspeed.log"], 0, "as planned")],
        "hf_sp2_dropped": [("hf_sp2_dropped/plan.toml", ["hf_sp2_dropped/trainer_state.json"], 1, "not_split")],
        "arctic_sp2": [("arctic_sp2/plan.toml", ["arctic_sp2/metrics.jsonl"], 0, "as planned")],
        "engine": [(cpu_plan, ["engine_sp2.json"], 0, "as planned"), (cpu_plan, ["engine_sp2.log.jsonl"], 0, "as planned"),
                   (cpu_plan, ["engine_sp1_on_sp2.log.jsonl"], 1, "not_split"), (ring_plan, ["engine_cp2.json"], 0, "as planned"),
                   (ring_plan, ["engine_sp1_on_sp2.log.jsonl"], 1, "not_split")],
    }
    failed = 0
    for case in cases:
        for plan, logs, code, word in expected.get(case, []):
            r = subprocess.run([spplan, "check", "--plan", os.path.join(data, plan), *[os.path.join(data, l) for l in logs]],
                               capture_output=True, text=True)
            ok = r.returncode == code and word in r.stdout
            failed += not ok
            print(("ok   " if ok else "FAIL ") + f"{case}: check {' '.join(logs)}: exit {r.returncode}, want {code} and "
                  f"\"{word}\"" + ("" if ok else f"\n{r.stdout}{r.stderr}"), flush=True)
    return 1 if failed else 0


main()
