#!/usr/bin/env python3
"""spplan export, launched (DESIGN.md "Exports": each format launches, as it is, the job the plan
describes).

Usage: launch_test.py SPPLAN_BINARY WORK_DIR. For small plans of a tiny Llama (2 layers, hidden 64,
4 heads, 2 KV heads, vocab 256) at 256 tokens on 2 GPUs, each export is started as its launcher
line says, with 2 processes on the CPU (Gloo), for one optimizer step, and what the ranks did is
checked: every rank's first decoder layer saw seq / (sp x cp) tokens (its Ulysses or ring shard;
the whole sample when the plan has neither), the shards of a group start where the plan's
contiguous Ulysses ranks put them, DeepSpeed formed the plan's sequence-parallel / ZeRO groups,
and the loss is finite. The training script is tests/scripts/launch/train_hf.py (a reference HF
Trainer script: the flags the export writes configure it) for torchrun, accelerate and
deepspeed, and ArcticTraining's own trainer for arctic (tests/scripts/launch/arctic_probe.py
records its shards). A case fails with what the ranks saw and the launch's last error lines.

  torchrun/sp2         the exported bash script itself: torchrun + train.py --deepspeed
  accelerate/sp2       accelerate launch --config_file EXPORT.yaml train.py FLAGS (the flags the
                       YAML's comment names), ds_config.json beside it
  accelerate/cp2       ring attention (FSDP2 + torch context parallel): the launch is started and
                       must reach the ranks with cp 2 and FSDP2 in their environment; Accelerate
                       has no FSDP without a GPU and torch's context_parallel no CPU attention,
                       so the case is skipped there (with that reason) and its YAML checked
                       with Accelerate's own loader and ParallelismConfig
  deepspeed/dp2        ds_config.json under DeepSpeed's own launcher (deepspeed --num_gpus 2
                       train.py --deepspeed ds_config.json FLAGS): ZeRO 2 over 2 data-parallel
                       ranks, a cosine schedule without warm-up
  arctic/sp2           arctic_training RECIPE.yml --num_gpus 2 with a local model, tokenizer and
                       data set made here (the recipe's placeholders) and the CPU-only data
                       settings below; skipped without arctic_training, datasets or tokenizers
  torchrun/glm-sp2     a tiny GLM-4.5 (shared expert, dense first layer, sigmoid router, partial
                       RoPE) under the same script: transformers' Glm4MoeForCausalLM at sp 2
  torchrun/engine-sp2   a --trainer engine plan's script (torchrun of `spplan run`), world, sp and
                       Ulysses' exchanges read from the run's --json report
  torchrun/engine-2nodes the same plan on two nodes of one GPU: the script started twice, meeting
                       at torchrun's c10d rendezvous, must train the one-node run's step exactly
  torchrun/sp2-offload bf16, flash_attention_2 and checkpoint offload: the script must let the
                       attention be set to sdpa (a CPU has no flash_attention_2) through
                       PARALLELISM_CONFIG_SP_ATTN_IMPLEMENTATION, pass transformers'
                       gradient_checkpointing_kwargs {"offload": true}, and pass --use_cpu
                       through to train.py (transformers refuses --bf16 on a CPU without it)

The exported text runs as written; what this machine adds is its environment (CUDA_VISIBLE_DEVICES="",
DS_ACCELERATOR=cpu, OMP_NUM_THREADS=1, offline Hugging Face, a free MASTER_PORT and the launchers'
port flags, a private TORCH_EXTENSIONS_DIR where DeepSpeed JIT-builds its CPU Adam and
shared-memory ops once: minutes the first time), the stand-ins of
tests/scripts/launch/cpu_shim/sitecustomize.py for what NCCL and CUDA do that Gloo and the CPU do
not, the arctic recipe's placeholders and data-pipeline settings, and --use_cpu for the bf16 case.
Exit 1 when a case fails, 77 (skipped) without torch, transformers, accelerate and deepspeed.
About 6 minutes on 2 cores once the ops are built.
"""
import json
import math
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time

spplan, work = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
here = os.path.dirname(os.path.abspath(__file__))
launch_dir = os.path.join(here, "launch")
sys.path.insert(0, launch_dir)
import harness  # noqa: E402  (tests/scripts/launch/harness.py)
from harness import free_port, last_error, read_records, trainer_flags  # noqa: E402
os.makedirs(work, exist_ok=True)
LAUNCH_TIMEOUT_S = 180  # one launch: some 40-70 s here (four Python start-ups importing torch)
SEQ, GPUS = 256, 2
check = harness.Checks()
summary = []  # (case, status, detail)


def importable(module):
    try:
        __import__(module)
        return True
    except Exception:
        return False


for module in ("torch", "transformers", "accelerate", "deepspeed"):
    if not importable(module):
        print(f"{sys.executable} cannot import {module} (scripts/install-deps.sh installs it): skipped")
        sys.exit(77)

MODEL = {"name": "launch-tiny", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
         "num_key_value_heads": 2, "head_dim": 16, "intermediate_size": 176, "vocab_size": 256,
         "tie_word_embeddings": False, "rope_theta": 10000.0, "rms_norm_eps": 1e-5}


# A tiny GLM-4.5: its mixture (4 experts, 2 a token, a shared expert, layer 0 dense),
# sigmoid router and partial RoPE come with model_type glm4_moe in the plan; train.py builds
# transformers' Glm4MoeForCausalLM from the config.json write_model writes beside.
MODEL_GLM = dict(MODEL, name="launch-tiny-glm", model_type="glm4_moe", attention_bias=True, num_experts=4,
                 num_experts_per_tok=2, moe_intermediate_size=32)


def plan_toml(knobs, optimizer="", precision="fp32", trainer="hf", gpus_per_node=None, spec=None):
    model = "".join(f"{k} = {json.dumps(v) if isinstance(v, str) else str(v).lower() if isinstance(v, bool) else v}\n"
                    for k, v in (spec or MODEL).items())
    node = f"gpus_per_node = {gpus_per_node}\n" if gpus_per_node else ""
    return (f'seq_len = {SEQ}\ntrainer = "{trainer}"\n[model]\n{model}[gpu]\npreset = "h100-80gb"\n'
            f'[cluster]\nnum_gpus = {GPUS}\n{node}[knobs]\n{knobs}precision = "{precision}"\n'
            f"[optimizer]\ntrain_steps = 1\n{optimizer}")


PLANS = {  # name: (TOML, sp, cp)
    "sp2": (plan_toml('sp = 2\nzero_stage = 3\nact_ckpt = "none"\n'), 2, 1),
    "sp2-arctic": (plan_toml('sp = 2\nzero_stage = 3\nact_ckpt = "none"\n', trainer="arctic"), 2, 1),
    "cp2": (plan_toml('sp = 1\ncp = 2\ncp_comm = "ring"\nzero_stage = 3\nact_ckpt = "none"\n'), 1, 2),
    "dp2": (plan_toml('sp = 1\nzero_stage = 2\nact_ckpt = "none"\n', 'lr_schedule = "cosine"\nwarmup_steps = 0\n'), 1, 1),
    "sp2-offload": (plan_toml('sp = 2\nzero_stage = 3\nact_ckpt = "offload"\n', precision="bf16"), 2, 1),
    "glm-sp2": (plan_toml('sp = 2\nzero_stage = 3\nact_ckpt = "none"\n', spec=MODEL_GLM), 2, 1),
    "engine-sp2": (plan_toml('sp = 2\nzero_stage = 3\nact_ckpt = "full"\n', trainer="engine"), 2, 1),
    "engine-sp2-2nodes": (plan_toml('sp = 2\nzero_stage = 3\nact_ckpt = "full"\n', trainer="engine", gpus_per_node=1),
                          2, 1),
}


def base_env():
    env = harness.launch_env()
    env.update({
        "PATH": os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", ""),  # torchrun, accelerate, deepspeed
        "CUDA_VISIBLE_DEVICES": "", "DS_ACCELERATOR": "cpu", "OMP_NUM_THREADS": "1",
        # DeepSpeed's JIT ops, built once per work folder: a shared ~/.cache/torch_extensions is
        # rebuilt (minutes) whenever a Python with another ninja on PATH built it last.
        "TORCH_EXTENSIONS_DIR": os.path.join(work, "torch_extensions"),
        "PYTHONPATH": os.pathsep.join(p for p in (os.path.join(launch_dir, "cpu_shim"), env.get("PYTHONPATH")) if p),
        "SPPLAN_CPU_SHIM": "1",
        "SPPLAN_TRAIN_MODEL": os.path.join(work, "model", "config.json"),
        "SPPLAN_TRAIN_SEQ_LEN": str(SEQ),
        "SPPLAN_TRAIN_TIMEOUT_S": str(LAUNCH_TIMEOUT_S - 30),
        "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(free_port()),
    })
    for key in ("SPPLAN_TRAIN_ATTN", "DS_SKIP_CUDA_CHECK"):
        env.pop(key, None)
    return env


def export(plan_name, fmt):
    """(exit code, stdout, stderr) of spplan export."""
    path = os.path.join(work, plan_name + ".toml")
    with open(path, "w") as f:
        f.write(PLANS[plan_name][0])
    r = subprocess.run([spplan, "export", "--plan", path, "--format", fmt], capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr.strip()


def case_dir(name):
    d = os.path.join(work, name.replace("/", "_"))
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def check_ranks(case, rows, sp, cp, rc, seconds, log, loss_of=None):
    """The shards, groups and loss the ranks recorded."""
    shard = SEQ // (sp * cp)
    seen = {r.get("rank"): r.get("layer_seq_lens") for r in rows}
    detail = f"exit {rc}, {seconds:.0f} s, first layer saw {seen} tokens per rank (plan: {shard})"
    check(f"{case}: both ranks recorded", sorted(seen) == list(range(GPUS)), f"{detail}; {last_error(log)}")
    errors = [f"rank {r.get('rank')}: {r['error'][:300]}" for r in rows if r.get("error")]
    check(f"{case}: launch exits 0 without an error", rc == 0 and not errors,
          f"exit {rc}; " + ("; ".join(errors) or last_error(log)))
    got = [x for r in rows for x in r.get("layer_seq_lens", [])]
    check(f"{case}: each rank's shard is seq / (sp x cp) = {SEQ} / {sp * cp} = {shard}",
          bool(got) and all(x == shard for x in got), detail)
    if sp > 1 and got:
        got_sp = {r.get("ds_sp_world_size") for r in rows}
        env = {k: v for k, v in (rows[0].get("launch_env") or {}).items() if k.startswith(("PARALLELISM_CONFIG_SP", "ACCELERATE_USE_PARALLELISM"))}
        check(f"{case}: DeepSpeed's sequence-parallel group has sp = {sp} ranks", got_sp == {sp},
              f"{got_sp}; the ranks' Accelerate sequence-parallel variables: {env or 'none'}")
        starts = {r["rank"]: (r.get("first_positions") or [None])[0] for r in rows if r.get("first_positions")}
        if starts and all(x == shard for x in got):  # contiguous Ulysses ranks: rank r holds [r*shard, (r+1)*shard)
            check(f"{case}: Ulysses rank r holds tokens from r x {shard}",
                  starts == {r: (r % sp) * shard for r in starts}, f"first positions {starts}")
    losses = loss_of(rows) if loss_of else [r.get("loss") for r in rows]
    check(f"{case}: loss is finite", bool(losses) and all(isinstance(x, (int, float)) and math.isfinite(x) for x in losses),
          str(losses))
    return f"{seconds:.0f} s, shards {seen}, loss {losses}"


def prebuild_ops(env):
    ok, detail, seconds = harness.prebuild_ops(env)
    check(f"DeepSpeed's CPU ops built or loaded ({seconds:.0f} s)", ok, detail)
    return ok


def run(cmd, cwd, env, log):
    return harness.run(cmd, cwd, env, log, LAUNCH_TIMEOUT_S)


def write_model():
    d = os.path.join(work, "model")
    os.makedirs(d, exist_ok=True)
    cfg = {k: v for k, v in MODEL.items() if k != "name"}
    cfg.update(architectures=["LlamaForCausalLM"], model_type="llama", max_position_embeddings=4096)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f)
    d = os.path.join(work, "model-glm")
    os.makedirs(d, exist_ok=True)
    glm = {k: v for k, v in MODEL.items() if k != "name"}
    glm.update(architectures=["Glm4MoeForCausalLM"], model_type="glm4_moe", max_position_embeddings=4096,
               n_routed_experts=MODEL_GLM["num_experts"], num_experts_per_tok=MODEL_GLM["num_experts_per_tok"],
               moe_intermediate_size=MODEL_GLM["moe_intermediate_size"], n_shared_experts=1, first_k_dense_replace=1,
               n_group=1, topk_group=1, norm_topk_prob=True, partial_rotary_factor=0.5, attention_bias=True,
               use_qk_norm=False)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(glm, f)


# --- the HF Trainer formats -------------------------------------------------------------------

def prepare_hf(case, plan_name):
    """A case folder with the plan's ds_config.json and train.py: (folder, None) or (None, reason)."""
    d = case_dir(case)
    rc, ds, err = export(plan_name, "deepspeed")
    if rc != 0:
        return None, f"spplan export --format deepspeed: exit {rc}: {err}"
    with open(os.path.join(d, "ds_config.json"), "w") as f:
        f.write(ds)
    shutil.copy(os.path.join(launch_dir, "train_hf.py"), os.path.join(d, "train.py"))
    return d, None


def torchrun_case(case, plan_name, extra_env=None, extra_args=()):
    _, sp, cp = PLANS[plan_name]
    d, why = prepare_hf(case, plan_name)
    rc, script, err = export(plan_name, "torchrun")
    if d is None or rc != 0:
        check(f"{case}: spplan export", False, why or f"--format torchrun: exit {rc}: {err}")
        return "not exported: " + (why or err)
    with open(os.path.join(d, "run.sh"), "w") as f:
        f.write(script)
    line = next((l for l in script.splitlines() if l.startswith("torchrun ")), "")
    check(f"{case}: the script passes further train.py arguments through (\"$@\")", line.endswith('"$@"'),
          "its torchrun line ends without \"$@\": train.py's own arguments (model, data, output) cannot be given"
          + (f"; this case needs {' '.join(extra_args)}" if extra_args else ""))
    env = dict(base_env(), SPPLAN_TRAIN_RECORD=os.path.join(d, "ranks.jsonl"), **(extra_env or {}))
    log = os.path.join(d, "launch.log")
    rc, seconds = run(["bash", "run.sh", *extra_args], d, env, log)
    rows = read_records(env["SPPLAN_TRAIN_RECORD"])
    detail = check_ranks(case, rows, sp, cp, rc, seconds, log)
    if PLANS[plan_name][0].count('act_ckpt = "offload"') and rows:
        got = {(r.get("activation_checkpointing"), r.get("checkpoint_offload")) for r in rows}
        check(f"{case}: activation checkpoints kept and offloaded (gradient_checkpointing_kwargs offload)",
              got == {(True, True)}, f"(checkpointing, offload) per rank: {got}")
    return detail


def accelerate_case(case, plan_name):
    _, sp, cp = PLANS[plan_name]
    d, why = prepare_hf(case, plan_name) if cp == 1 else (case_dir(case), None)
    rc, text, err = export(plan_name, "accelerate")
    if d is None or rc != 0:
        check(f"{case}: spplan export", False, why or f"--format accelerate: exit {rc}: {err}")
        return "not exported: " + (why or err)
    if cp > 1:
        shutil.copy(os.path.join(launch_dir, "train_hf.py"), os.path.join(d, "train.py"))
    with open(os.path.join(d, "accelerate.yaml"), "w") as f:
        f.write(text)
    flags = trainer_flags(text)
    if not check(f"{case}: the YAML's comment names the HF Trainer flags", flags is not None,
                 "no \"HF Trainer script flags\" line: the script's optimizer, batch and step flags are unknown"):
        flags = trainer_flags(export("sp2", "accelerate")[1]) or []  # the same optimizer: launch anyway
    env = dict(base_env(), SPPLAN_TRAIN_RECORD=os.path.join(d, "ranks.jsonl"))
    log = os.path.join(d, "launch.log")
    cmd = ["accelerate", "launch", "--config_file", "accelerate.yaml", "--main_process_port", env["MASTER_PORT"],
           "train.py", *flags]
    rc, seconds = run(cmd, d, env, log)
    rows = read_records(env["SPPLAN_TRAIN_RECORD"])
    if cp == 1:
        return check_ranks(case, rows, sp, cp, rc, seconds, log)
    # Ring attention: what reached the ranks, then why the CPU stops there.
    launch_env = rows[0].get("launch_env", {}) if rows else {}
    want = {"PARALLELISM_CONFIG_CP_SIZE": str(cp), "ACCELERATE_USE_FSDP": "true", "FSDP_VERSION": "2"}
    check(f"{case}: accelerate launch starts {GPUS} ranks with cp {cp} and FSDP2 in their environment",
          len(rows) == GPUS and all(launch_env.get(k) == v for k, v in want.items()),
          f"{len(rows)} ranks; {({k: launch_env.get(k) for k in want})}; {last_error(log)}")
    errors = {r.get("error", "") for r in rows}
    no_fsdp = any("ParallelismConfig is only compatible" in e and "DistributedType.NO" in e for e in errors)
    result = None
    if rc == 0 and not any(errors):
        result = check_ranks(case, rows, sp, cp, rc, seconds, log)  # a CPU that runs it: check it all
    elif no_fsdp:
        reason = ("Accelerate enables FSDP only over a multi-device distributed type (MULTI_GPU, XPU, NPU, ...), never "
                  "MULTI_CPU (accelerate/state.py, AcceleratorState), so the ranks stop at \"ParallelismConfig is only "
                  "compatible DistributedType.FSDP (version 2) ... but got DistributedType.NO\"; " + torch_cp_on_cpu(d))
        print(f"skip {case}: the ring runs only on a GPU: {reason}", flush=True)
        result = ("skipped", f"launch: {seconds:.0f} s to the refusal; {reason}")
    else:
        check(f"{case}: the launch stops only where a CPU lacks FSDP", False, "; ".join(e[:300] for e in errors) or last_error(log))
        result = last_error(log)
    check_cp_yaml(case, os.path.join(d, "accelerate.yaml"), cp)
    return result


def torch_cp_on_cpu(d):
    """Whether torch's context_parallel runs SDPA on CPU tensors over Gloo (2 processes, one call)."""
    probe = os.path.join(d, "torch_cp_probe.py")
    with open(probe, "w") as f:
        f.write("import torch, torch.distributed as dist, torch.nn.functional as F\n"
                "from torch.distributed.device_mesh import init_device_mesh\n"
                "from torch.distributed.tensor.experimental import context_parallel\n"
                "dist.init_process_group('gloo')\n"
                "mesh = init_device_mesh('cpu', (2,), mesh_dim_names=('cp',))\n"
                "x = torch.randn(1, 2, 16, 8)\n"
                "try:\n"
                "    with context_parallel(mesh, buffers=[x], buffer_seq_dims=[2]):\n"
                "        F.scaled_dot_product_attention(x, x, x, is_causal=True)\n"
                "    print('CP-OK', flush=True)\n"
                "except Exception as e:\n"
                "    print('CP-ERROR', type(e).__name__, str(e).splitlines()[0][:200], flush=True)\n")
    env = base_env()
    log = os.path.join(d, "torch_cp_probe.log")
    run(["torchrun", "--nproc-per-node", "2", "--master-port", env["MASTER_PORT"], probe], d, env, log)
    out = [l for l in open(log, errors="replace") if l.startswith(("CP-OK", "CP-ERROR"))]
    if out and out[0].startswith("CP-OK"):
        return "torch's context_parallel itself does run SDPA on this CPU"
    return ("and torch's context_parallel has no CPU attention: " + (out[0][9:].strip() if out else last_error(log)))


def check_cp_yaml(case, path, cp):
    """The ring YAML read by Accelerate's own loader and validated by its ParallelismConfig."""
    from accelerate.commands.config.config_args import load_config_from_file
    from accelerate.parallelism_config import ParallelismConfig
    from accelerate.utils import TorchContextParallelConfig
    try:
        c = load_config_from_file(path)
        pc = {k[len("parallelism_config_"):]: v for k, v in c.parallelism_config.items()}
        strategy = pc.pop("cp_comm_strategy", "allgather")
        cfg = ParallelismConfig(**pc, cp_handler=TorchContextParallelConfig(cp_comm_strategy=strategy))
        got = (str(c.distributed_type), c.fsdp_config.get("fsdp_version"), c.num_processes, cfg.cp_size, cfg.total_size)
        check(f"{case}: Accelerate's loader reads FSDP2, {GPUS} processes, cp {cp}", got ==
              ("DistributedType.FSDP", 2, GPUS, cp, GPUS), str(got))
    except Exception as e:
        check(f"{case}: Accelerate's loader reads the YAML", False, f"{type(e).__name__}: {e}")


def deepspeed_case(case, plan_name):
    """ds_config.json under DeepSpeed's own launcher, with the HF Trainer flags of the same plan."""
    _, sp, cp = PLANS[plan_name]
    d, why = prepare_hf(case, plan_name)
    rc, script, err = export(plan_name, "torchrun")
    if d is None or rc != 0:
        check(f"{case}: spplan export", False, why or f"--format torchrun: exit {rc}: {err}")
        return "not exported: " + (why or err)
    line = next(l for l in script.splitlines() if l.startswith("torchrun "))
    argv = shlex.split(line)
    flags = [a for a in argv[argv.index("train.py") + 1:] if a != "$@"]  # the script's pass-through
    env = dict(base_env(), SPPLAN_TRAIN_RECORD=os.path.join(d, "ranks.jsonl"))
    log = os.path.join(d, "launch.log")
    rc, seconds = run(["deepspeed", "--num_gpus", str(GPUS), "--master_port", env["MASTER_PORT"], "train.py", *flags],
                      d, env, log)
    rows = read_records(env["SPPLAN_TRAIN_RECORD"])
    detail = check_ranks(case, rows, sp, cp, rc, seconds, log)
    if rows and not any(r.get("error") for r in rows):
        zero = {(r.get("zero_stage"), r.get("ds_zero_world_size")) for r in rows}
        check(f"{case}: ZeRO 2 partitions over both data-parallel ranks", zero == {(2, GPUS)}, str(zero))
        samples = [tuple(r.get("sample_indices", [])[:1]) for r in rows]
        check(f"{case}: the data-parallel ranks read different samples", len(set(samples)) == GPUS, str(samples))
    return detail


# --- ArcticTraining ---------------------------------------------------------------------------

def arctic_assets(d):
    """A local model (random weights), a word-level tokenizer with a chat template and a data set
    of user/assistant pairs: what the recipe's placeholders name on a machine that downloads nothing."""
    import random

    import datasets

    datasets.disable_progress_bars()
    model_dir, data_dir = os.path.join(d, "model"), os.path.join(d, "data")
    words = harness.write_tiny_model(model_dir, {k: v for k, v in MODEL.items() if k != "name"}, MODEL["vocab_size"])
    rng = random.Random(0)
    datasets.Dataset.from_list([{"user": " ".join(rng.choice(words) for _ in range(40)),
                        "assistant": " ".join(rng.choice(words) for _ in range(60))} for _ in range(64)]).save_to_disk(data_dir)
    return model_dir, data_dir


def arctic_case(case, plan_name):
    _, sp, cp = PLANS[plan_name]
    missing = [m for m in ("arctic_training", "datasets", "tokenizers") if not importable(m)]
    if missing:
        print(f"skip {case}: cannot import {', '.join(missing)}", flush=True)
        return ("skipped", "cannot import " + ", ".join(missing))
    d = case_dir(case)
    rc, text, err = export(plan_name, "arctic")
    if not check(f"{case}: spplan export", rc == 0, f"--format arctic: exit {rc}: {err}"):
        return "not exported: " + err
    model_dir, data_dir = arctic_assets(d)
    # The recipe's placeholders, then settings of this machine (no GPU, 2 cores) appended: the
    # data pipeline's worker counts and where it caches and logs. Nothing of the plan changes.
    name = re.search(r"^  name_or_path: (.*)$", text, re.M)
    source = re.search(r"^  sources:\n    - (.*)$", text, re.M)
    if not check(f"{case}: the recipe has model.name_or_path and data.sources placeholders", bool(name and source),
                 "not found"):
        return "placeholders not found"
    text = text.replace(name.group(0), "  name_or_path: " + model_dir).replace(source.group(0), "  sources:\n    - " + data_dir)
    text = text.replace("\ndata:\n", f"\ndata:\n  cache_dir: {d}/data_cache\n  num_proc: 1\n  dl_num_workers: 1\n", 1)
    metrics = os.path.join(d, "metrics.jsonl")
    text += f"logger:\n  output_dir: {d}/logs\ntrain_log_metrics_path: {metrics}\n"
    with open(os.path.join(d, "recipe.yml"), "w") as f:
        f.write(text)
    shutil.copy(os.path.join(launch_dir, "arctic_probe.py"), os.path.join(d, "train.py"))  # its `code:` default
    launch = re.search(r"^# Launch: (arctic_training THIS\.yml[^(\n]*)", text, re.M)
    args = shlex.split(launch.group(1).replace("THIS.yml", "recipe.yml")) if launch else ["arctic_training", "recipe.yml"]
    if not check(f"{case}: the launch line names the process count (--num_gpus {GPUS})", f"--num_gpus" in args,
                 f"\"{launch.group(0) if launch else 'no # Launch: line'}\": DeepSpeed's launcher would start one rank "
                 "per device it finds (the CPU accelerator counts NUMA nodes)"):
        args += ["--num_gpus", str(GPUS)]
    env = dict(base_env(), SPPLAN_TRAIN_RECORD=os.path.join(d, "ranks.jsonl"))
    log = os.path.join(d, "launch.log")
    rc, seconds = run(args + ["--master_port", env["MASTER_PORT"]], d, env, log)

    def loss_of(rows):  # ArcticTraining's own record of the step (rank 0 writes it)
        try:
            return [json.loads(l)["loss"] for l in open(metrics) if l.strip()]
        except (OSError, KeyError, ValueError):
            return []

    return check_ranks(case, read_records(env["SPPLAN_TRAIN_RECORD"]), sp, cp, rc, seconds, log, loss_of)


# --- spplan's engine ------------------------------------------------------------------------

def run_nodes(cmd, cwd, env, logs):
    """cmd once per log, at the same time (one process per node of the plan): (exit codes, seconds)."""
    t0 = time.time()
    procs = []
    for log in logs:
        out = open(log, "w")
        procs.append((subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT,
                                       start_new_session=True), out))
    codes = []
    for p, out in procs:
        try:
            codes.append(p.wait(timeout=max(1, LAUNCH_TIMEOUT_S - (time.time() - t0))))
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            codes.append(124)
        out.close()
    return codes, time.time() - t0


def engine_report(logs):
    """The run's --json report (rank 0 prints it, on the first node)."""
    for log in logs:
        for line in open(log, errors="replace"):
            if line.startswith("{"):
                try:
                    return json.loads(line)
                except ValueError:
                    pass
    return None


def engine_case(case, plan_name, nodes, reference_losses=None):
    """The exported script of a --trainer engine plan, started once per node (torchrun's c10d
    rendezvous on this machine stands in for the first node's): the report's world, layout and
    Ulysses exchange, and a finite loss; two nodes must train the one-node run's step exactly."""
    _, sp, cp = PLANS[plan_name]
    d = case_dir(case)
    rc, script, err = export(plan_name, "torchrun")
    if not check(f"{case}: spplan export", rc == 0, f"--format torchrun: exit {rc}: {err}"):
        return "not exported: " + err
    with open(os.path.join(d, "run.sh"), "w") as f:
        f.write(script)
    env = dict(base_env(), STEPS="1")
    env["PATH"] = os.path.dirname(spplan) + os.pathsep + env["PATH"]  # the script runs `spplan run`
    logs = [os.path.join(d, f"launch_node{n}.log") for n in range(nodes)]
    codes, seconds = run_nodes(["bash", "run.sh", "--json"], d, env, logs)
    report = engine_report(logs) or {}
    got = (report.get("world"), report.get("sp"), report.get("cp"))
    check(f"{case}: {nodes} node(s) x {GPUS // nodes} rank(s) exit 0 and form world {GPUS}, sp {sp}, cp {cp}",
          codes == [0] * nodes and got == (GPUS, sp, cp), f"exit codes {codes}, (world, sp, cp) {got}; "
          + "; ".join(last_error(l) for l in logs))
    exchanged = (report.get("phases") or {}).get("all_to_all_s", 0)
    if sp > 1:
        check(f"{case}: the ranks ran Ulysses' all-to-alls", exchanged > 0, f"all_to_all_s {exchanged}")
    losses = report.get("losses") or []
    check(f"{case}: loss is finite", bool(losses) and all(math.isfinite(x) for x in losses), str(losses))
    if reference_losses is not None:
        check(f"{case}: the same step as on one node", losses == reference_losses, f"{losses} vs {reference_losses}")
    return (f"{seconds:.0f} s, world {report.get('world')}, {report.get('ranks_on_host')} rank(s) per node, "
            f"loss {losses}"), losses


# --- main -------------------------------------------------------------------------------------

def run_case(case, fn, *args):
    """One case: its summary row is FAIL when any of its checks failed, else its own result."""
    before = check.failed
    result = fn(case, *args)
    value = None
    if isinstance(result, tuple) and isinstance(result[1], list):  # (detail, what a later case compares with)
        result, value = result
    status, detail = result if isinstance(result, tuple) else ("ok", result or "")
    summary.append((case, "FAIL" if check.failed > before else status, detail))
    return value


write_model()
if prebuild_ops(base_env()):
    run_case("torchrun/sp2", torchrun_case, "sp2")
    run_case("accelerate/sp2", accelerate_case, "sp2")
    run_case("accelerate/cp2", accelerate_case, "cp2")
    run_case("deepspeed/dp2", deepspeed_case, "dp2")
    run_case("arctic/sp2", arctic_case, "sp2-arctic")
    # bf16 plans are priced for flash_attention_2, which a CPU lacks: sdpa, through the variable
    # Accelerate's sequence parallelism and train.py both read (the export must not pin it); and
    # transformers refuses --bf16 without a bf16 GPU unless --use_cpu (given through "$@").
    run_case("torchrun/sp2-offload", torchrun_case, "sp2-offload", {"PARALLELISM_CONFIG_SP_ATTN_IMPLEMENTATION": "sdpa"},
             ["--use_cpu"])
    run_case("torchrun/glm-sp2", torchrun_case, "glm-sp2", {"SPPLAN_TRAIN_MODEL": os.path.join(work, "model-glm", "config.json")})
# The engine's export needs no DeepSpeed op: one node, then the same plan on two nodes of one GPU.
one_node_losses = run_case("torchrun/engine-sp2", engine_case, "engine-sp2", 1)
run_case("torchrun/engine-2nodes", engine_case, "engine-sp2-2nodes", 2, one_node_losses)

print("\n%-22s %-8s %s" % ("case", "result", "what the ranks did"))
for case, status, detail in summary:
    print("%-22s %-8s %s" % (case, status, detail))
print(f"\nlogs: {work}/<case>/launch.log, records: {work}/<case>/ranks.jsonl")
sys.exit(1 if check.failed else 0)
