#!/usr/bin/env python3
"""spplan export --format trl, launched with TRL's own code (trl 1.14.2 in its own venv, over the
main venv's torch, transformers, Accelerate and DeepSpeed; scripts/install-deps.sh makes it).

Usage: launch_trl_test.py SPPLAN_BINARY WORK_DIR. A tiny Llama (2 layers, hidden 64, vocab 256) at
1024 tokens on 2 GPUs, with its word-level tokenizer and a JSON Lines data set made here:

  trl/sp2   Ulysses sp 2 on DeepSpeed ZeRO 3, TRL's chunked loss, checkpointed layers. The three
            exports (trl, accelerate, deepspeed) are written beside each other and the YAML's own
            launch line is run, `trl sft --config trl.yaml`, with the placeholders (model, data
            set) and the port given on the command line: 2 processes on the CPU (Gloo), one
            optimizer step. What the ranks did is checked, not what the files say: each rank's
            first decoder layer saw 1024 / 2 tokens from where Ulysses puts it, DeepSpeed's
            sequence-parallel group has 2 ranks, the batches carried position_ids, TRL ran
            loss_type chunked_nll through its per-chunk function with 256-row chunks, with
            SFTConfig's max_length, padding multiple, packing, checkpointing, precision, batch
            and learning rate as the plan says, and the loss is finite.
  trl/cp2   the ring (FSDP2 + torch's context parallel) has no CPU path (launch_test.py's
            accelerate/cp2 says why), so its YAML is read by TRL's own parser (TrlParser, as
            `trl sft --config` reads it) and its accelerate YAML by Accelerate's loader:
            SFTConfig's loss, 2 x cp padding multiple, no packing, offloaded checkpoints; cp 2 on
            FSDP2 over 2 processes.

The environment adds only this machine's: the CPU (CUDA_VISIBLE_DEVICES="", DS_ACCELERATOR=cpu),
offline Hugging Face, a free port, DeepSpeed's JIT-built CPU ops in the work folder, and
tests/scripts/launch/trl_probe (which records the ranks and loads the CPU stand-ins of
launch/cpu_shim). Exit 1 when a check fails, 77 (skipped) without trl. About 2 minutes on 2 cores
once the ops are built.
"""
import json
import math
import os
import shlex
import subprocess
import sys

spplan, work = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
here = os.path.dirname(os.path.abspath(__file__))
launch_dir = os.path.join(here, "launch")
sys.path.insert(0, launch_dir)
import harness  # noqa: E402  (tests/scripts/launch/harness.py)

os.makedirs(work, exist_ok=True)
LAUNCH_TIMEOUT_S = 300  # one launch: about 60 s here (TRL's CLI, accelerate launch, two ranks importing torch)
SEQ, GPUS, CHUNK = 1024, 2, 256  # CHUNK: trl 1.14.2's _CHUNKED_LM_HEAD_CHUNK_SIZE
MODEL = {"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2,
         "head_dim": 16, "intermediate_size": 176, "vocab_size": 256, "tie_word_embeddings": False,
         "rope_theta": 10000.0, "rms_norm_eps": 1e-5, "max_position_embeddings": 4096}
check = harness.Checks()

try:
    import trl
except ImportError:
    print(f"{sys.executable} cannot import trl (scripts/install-deps.sh makes its venv): skipped")
    sys.exit(77)


def plan_toml(knobs):
    model = "".join(f"{k} = {str(v).lower() if isinstance(v, bool) else v}\n" for k, v in MODEL.items()
                    if k != "max_position_embeddings")
    return (f'seq_len = {SEQ}\ntrainer = "trl"\n[model]\nname = "launch-tiny"\n{model}[gpu]\npreset = "h100-80gb"\n'
            f'[cluster]\nnum_gpus = {GPUS}\n[knobs]\n{knobs}[optimizer]\ntrain_steps = 1\nlr = 0.0001\n')


PLANS = {
    "sp2": plan_toml('sp = 2\nzero_stage = 3\nact_ckpt = "full"\ntiled_loss = true\nprecision = "fp32"\n'),
    "cp2": plan_toml('sp = 1\ncp = 2\ncp_comm = "allgather"\nzero_stage = 3\nact_ckpt = "offload"\ntiled_loss = true\n'
                     'precision = "bf16"\n'),
}


def export_all(name, d, formats):
    """Each format's export of plan `name` into d (trl.yaml, accelerate.yaml, ds_config.json)."""
    plan = os.path.join(d, name + ".toml")
    with open(plan, "w") as f:
        f.write(PLANS[name])
    files = {"trl": "trl.yaml", "accelerate": "accelerate.yaml", "deepspeed": "ds_config.json"}
    for fmt in formats:
        r = subprocess.run([spplan, "export", "--plan", plan, "--format", fmt, "--out", os.path.join(d, files[fmt])],
                           capture_output=True, text=True)
        if not check(f"trl/{name}: spplan export --format {fmt}", r.returncode == 0, r.stderr.strip()):
            return False
    return True


def assets(d):
    """The model folder (weights and tokenizer) and a data set folder of JSON Lines text, each
    sample longer than the sequence (TRL truncates it to max_length: every rank gets a full shard)."""
    import random

    model_dir, data_dir = os.path.join(d, "model"), os.path.join(d, "data")
    words = harness.write_tiny_model(model_dir, MODEL, MODEL["vocab_size"])
    os.makedirs(data_dir, exist_ok=True)
    rng = random.Random(0)
    with open(os.path.join(data_dir, "train.jsonl"), "w") as f:
        for _ in range(16):
            f.write(json.dumps({"text": " ".join(rng.choice(words) for _ in range(SEQ + 64))}) + "\n")
    return model_dir, data_dir


def base_env(d):
    env = harness.launch_env()
    env.update({
        "PATH": os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", ""),  # trl, accelerate
        "CUDA_VISIBLE_DEVICES": "", "DS_ACCELERATOR": "cpu", "OMP_NUM_THREADS": "1",
        "HF_DATASETS_CACHE": os.path.join(d, "datasets_cache"),
        "TORCH_EXTENSIONS_DIR": os.path.join(work, "torch_extensions"),
        "PYTHONPATH": os.pathsep.join(p for p in (os.path.join(launch_dir, "trl_probe"), env.get("PYTHONPATH")) if p),
        "SPPLAN_CPU_SHIM": "1", "SPPLAN_TRL_RECORD": os.path.join(d, "ranks.jsonl"),
        "MASTER_ADDR": "127.0.0.1",
    })
    return env


def launch_line(yaml_text):
    """The YAML's own launch line, as its comment writes it."""
    for line in yaml_text.splitlines():
        if line.startswith("# Launch, in that folder") and ": " in line:
            return shlex.split(line.split(": ", 1)[1].replace("THIS.yaml", "trl.yaml"))
    return None


def ulysses_case():
    d = os.path.join(work, "trl_sp2")
    os.makedirs(d, exist_ok=True)
    record = os.path.join(d, "ranks.jsonl")
    if os.path.exists(record):
        os.unlink(record)
    if not export_all("sp2", d, ("trl", "accelerate", "deepspeed")):
        return
    model_dir, data_dir = assets(d)
    env = base_env(d)
    ok, detail, seconds = harness.prebuild_ops(env)
    if not check(f"DeepSpeed's CPU ops built or loaded ({seconds:.0f} s)", ok, detail):
        return
    line = launch_line(open(os.path.join(d, "trl.yaml")).read())
    if not check("trl/sp2: the YAML names its launch line", line is not None and line[:2] == ["trl", "sft"], str(line)):
        return
    # The placeholders and this machine's port; the CPU needs fp32 (the plan's) and sdpa (the plan's).
    cmd = line + ["--model_name_or_path", model_dir, "--dataset_name", data_dir, "--output_dir",
                  os.path.join(d, "out"), "--report_to", "none", "--main_process_port", str(harness.free_port())]
    log = os.path.join(d, "launch.log")
    rc, seconds = harness.run(cmd, d, env, log, LAUNCH_TIMEOUT_S)
    rows = harness.read_records(record)
    shard = SEQ // 2
    seen = {r.get("rank"): r.get("layer_seq_lens") for r in rows}
    detail = f"exit {rc}, {seconds:.0f} s, first layer saw {seen}"
    check("trl/sp2: both ranks recorded", sorted(seen) == list(range(GPUS)), f"{detail}; {harness.last_error(log)}")
    errors = [f"rank {r.get('rank')}: {r['error'][:300]}" for r in rows if r.get("error")]
    check("trl/sp2: trl sft exits 0 without an error", rc == 0 and not errors,
          f"exit {rc}; " + ("; ".join(errors) or harness.last_error(log)))
    got = [x for r in rows for x in r.get("layer_seq_lens", [])]
    check(f"trl/sp2: each rank's shard is {SEQ} / sp 2 = {shard}", bool(got) and all(x == shard for x in got), detail)
    starts = {r["rank"]: (r.get("first_positions") or [None])[0] for r in rows}
    check(f"trl/sp2: Ulysses rank r holds tokens from r x {shard}", starts == {r: r * shard for r in range(GPUS)},
          f"first positions {starts}")
    check("trl/sp2: DeepSpeed's sequence-parallel group has 2 ranks",
          {r.get("ds_sp_world_size") for r in rows} == {2}, str([r.get("ds_sp_world_size") for r in rows]))
    check("trl/sp2: every batch carried position_ids (TRL's collator under Ulysses)",
          bool(rows) and all("position_ids" in r.get("batch_keys", []) for r in rows), str([r.get("batch_keys") for r in rows]))
    chunks = [r.get("chunk_rows") for r in rows]
    check(f"trl/sp2: TRL ran loss_type chunked_nll in chunks of {CHUNK} rows",
          bool(rows) and all(r.get("loss_type") == "chunked_nll" and r.get("chunk_size") == CHUNK for r in rows)
          and all(c and max(c) == CHUNK for c in chunks), f"{[r.get('loss_type') for r in rows]}, chunk rows {chunks}")
    want = {"max_length": SEQ, "pad_to_multiple_of": 2, "packing": False, "bf16": False, "gradient_checkpointing": True,
            "per_device_train_batch_size": 1, "gradient_accumulation_steps": 1, "max_steps": 1, "learning_rate": 1e-4,
            "activation_checkpointing": True}
    ran = [{k: r.get(k) for k in want} for r in rows]
    check("trl/sp2: SFTConfig ran with the plan's values", bool(rows) and all(x == want for x in ran), f"{ran} vs {want}")
    losses = [r.get("loss") for r in rows]
    check("trl/sp2: loss is finite", bool(losses) and all(isinstance(x, float) and math.isfinite(x) for x in losses),
          str(losses))
    print(f"trl/sp2: {detail}, chunk rows {chunks}, loss {losses}", flush=True)


def ring_case():
    """The ring's files read by TRL's and Accelerate's own loaders."""
    from accelerate.commands.config.config_args import load_config_from_file
    from trl.scripts.sft import make_parser

    d = os.path.join(work, "trl_cp2")
    os.makedirs(d, exist_ok=True)
    if not export_all("cp2", d, ("trl", "accelerate")):
        return
    try:
        script, config, model, _, config_rest, cli_rest = make_parser().parse_args_and_config(
            # --use_cpu: transformers refuses bf16 without a bf16 GPU otherwise (training_args.py __post_init__).
            ["--config", os.path.join(d, "trl.yaml"), "--use_cpu"], return_remaining_strings=True,
            separate_remaining_strings=True)
        got = (config.loss_type, config.max_length, config.pad_to_multiple_of, config.packing,
               config.gradient_checkpointing, config.gradient_checkpointing_kwargs, config.bf16, model.attn_implementation,
               model.dtype)
        want = ("chunked_nll", SEQ, 4, False, True, {"offload": True}, True, "sdpa", "bfloat16")
        check("trl/cp2: TRL's parser reads SFTConfig as the plan says", got == want, f"{got} vs {want}")
        check("trl/cp2: the accelerate config goes to accelerate launch", config_rest == ["--accelerate_config",
              "accelerate.yaml"] and not cli_rest, f"{config_rest} {cli_rest}")
        c = load_config_from_file(os.path.join(d, "accelerate.yaml"))
        ring = (str(c.distributed_type), c.fsdp_config.get("fsdp_version"), c.num_processes,
                c.parallelism_config.get("parallelism_config_cp_size"), c.fsdp_config.get("fsdp_activation_checkpointing"))
        check("trl/cp2: Accelerate reads FSDP2, 2 processes, cp 2, checkpointing left to the Trainer",
              ring == ("DistributedType.FSDP", 2, GPUS, 2, False), str(ring))
    except Exception as e:
        check("trl/cp2: the loaders read the YAMLs", False, f"{type(e).__name__}: {e}")


print(f"trl {trl.__version__} ({trl.__file__})", flush=True)
ulysses_case()
ring_case()
sys.exit(1 if check.failed else 0)
