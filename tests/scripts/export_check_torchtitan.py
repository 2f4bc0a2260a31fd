#!/usr/bin/env python3
"""spplan export --format torchtitan, read by TorchTitan 0.2.2 itself.

Usage: export_check_torchtitan.py SPPLAN_BINARY WORK_DIR, with a Python that imports torchtitan
(scripts/install-deps.sh gives it its own venv over the main one). For a few plans on the
torchtitan trainer, the export is:
  parsed       by torchtitan.config.ConfigManager (unknown keys are its error), every field then
               type-checked against JobConfig's annotations (ConfigManager checks only flags);
  compared     with the plan: data-parallel shard and context-parallel degrees, the rotate method,
               the gradient accumulation TorchTitan derives from the batch sizes (train.py),
               activation checkpointing, precision, sequence length, AdamW and its schedule;
  built        as TorchTitan builds the model (its train spec's model class on the meta device,
               after update_from_config): its parameter count and shapes must be the plan's model,
               counted by spplan estimate --json.
Nothing is trained: TorchTitan 0.2.2 starts on CUDA only, and no tokenizer or dataset is offline.
"""
import dataclasses
import os
import pathlib
import subprocess
import sys
import tomllib
import types
import typing

spplan, work = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)
failed = 0

# torch.utils.tensorboard imports tensorboard, which TorchTitan's metrics module needs only to log.
stub = types.ModuleType("torch.utils.tensorboard")
stub.SummaryWriter = object
sys.modules.setdefault("torch.utils.tensorboard", stub)

import torch  # noqa: E402
import typeguard  # noqa: E402
from torchtitan.config import ConfigManager  # noqa: E402
from torchtitan.protocols.train_spec import get_train_spec  # noqa: E402


def check(name, ok, detail=""):
    global failed
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else ": " + detail))
    failed += 0 if ok else 1


def presets(model, gpus, knobs, optimizer=""):
    return (f'trainer = "torchtitan"\nseq_len = {{seq}}\n[model]\npreset = "{model}"\n[gpu]\npreset = "h100-80gb"\n'
            f"[cluster]\nnum_gpus = {gpus}\n[knobs]\n{knobs}{optimizer}")


# Every optimizer key a plan states, so that the export is compared with the plan's own values.
OPTIMIZER = ("[optimizer]\nlr = 2e-5\nadam_beta1 = 0.9\nadam_beta2 = 0.98\nadam_eps = 1e-7\nweight_decay = 0.05\n"
             "grad_clip = 0.5\nwarmup_steps = 10\n")

# name: (plan TOML, seq, expected (dp_shard, cp, grad accumulation, AC mode, precision))
PLANS = {
    "ring_cp4_llama8b": (presets("llama-3.1-8b", 8, 'sp = 1\ncp = 4\ncp_comm = "allgather"\nzero_stage = 3\n'
                                 'act_ckpt = "full"\ngrad_accum_steps = 2\n',
                                 OPTIMIZER + 'lr_schedule = "cosine"\nmin_lr = 2e-6\ntrain_steps = 1000\n'),
                         131072, (2, 4, 2, "full", "bfloat16")),
    "none_qwen3_4b_offload": (presets("qwen3-4b", 4, 'sp = 1\nzero_stage = 3\noffload_optimizer = "cpu"\n'
                                      'offload_params = "cpu"\nact_ckpt = "none"\nmicro_batch = 2\n',
                                      OPTIMIZER + 'lr_schedule = "constant"\n'),
                              8192, (4, 1, 1, "none", "bfloat16")),
    "fp32_cp2_qwen3_0_6b": (presets("qwen3-0.6b", 2, 'sp = 1\ncp = 2\ncp_comm = "allgather"\nzero_stage = 3\n'
                                    'act_ckpt = "full"\nprecision = "fp32"\n',
                                    OPTIMIZER + 'lr_schedule = "linear"\nmin_lr = 0\n'),
                            16384, (1, 2, 1, "full", "float32")),
}


def run(*args):
    r = subprocess.run([spplan, *args], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"spplan {' '.join(args[:1])}: exit {r.returncode}: {r.stderr.strip()}")
    return r.stdout


def typecheck(obj, path=""):
    """Every field of the parsed JobConfig against its annotation: TOML values are not checked."""
    hints = typing.get_type_hints(type(obj))
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if dataclasses.is_dataclass(value):
            typecheck(value, path + f.name + ".")
        else:
            typeguard.check_type(value, hints[f.name])


def preset_model(name):
    """The model spplan priced: its preset file (configs/models)."""
    root = pathlib.Path(__file__).resolve().parents[2]
    with open(root / "configs" / "models" / (name + ".toml"), "rb") as f:
        return tomllib.load(f)


def expected_shapes(m):
    h, heads, kv = m["hidden_size"], m["num_attention_heads"], m["num_key_value_heads"]
    d = m.get("head_dim", h // heads)
    return {"layers": m["num_hidden_layers"], "wq": (heads * d, h), "wk": (kv * d, h), "w1": (m["intermediate_size"], h),
            "embed": (m["vocab_size"], h), "tied": bool(m.get("tie_word_embeddings", False))}


def torchtitan_shapes(model):
    layer = model.layers["0"]
    return {"layers": len(model.layers), "wq": tuple(layer.attention.wq.weight.shape),
            "wk": tuple(layer.attention.wk.weight.shape), "w1": tuple(layer.feed_forward.w1.weight.shape),
            "embed": tuple(model.tok_embeddings.weight.shape),
            "tied": model.output.weight is model.tok_embeddings.weight}


for name, (body, seq, (dp_shard, cp, accum, ac, precision)) in PLANS.items():
    plan_path = os.path.join(work, name + ".toml")
    with open(plan_path, "w") as f:
        f.write(body.replace("{seq}", str(seq)))
    try:
        toml_path = os.path.join(work, name + ".torchtitan.toml")
        with open(toml_path, "w") as f:
            f.write(run("export", "--plan", plan_path, "--format", "torchtitan"))
        job = ConfigManager().parse_args(["--job.config_file", toml_path])
        typecheck(job)
        p, t = job.parallelism, job.training
        # TorchTitan's own derivation of the accumulation (train.py): global / (local x dp degree).
        got_accum = t.global_batch_size // (t.local_batch_size * p.data_parallel_shard_degree)
        got = (p.data_parallel_shard_degree, p.context_parallel_degree, got_accum,
               job.activation_checkpoint.mode, t.mixed_precision_param, t.seq_len)
        check(f"{name}: layout, batch, checkpointing, precision", got == (dp_shard, cp, accum, ac, precision, seq),
              f"{got}")
        check(f"{name}: the rotate method training runs", p.context_parallel_rotate_method == "allgather",
              p.context_parallel_rotate_method)
        check(f"{name}: every GPU placed", p.data_parallel_shard_degree * p.context_parallel_degree ==
              int(body.split("num_gpus = ")[1].split("\n")[0]), f"{p}")
        plan = tomllib.loads(body.replace("{seq}", str(seq)))
        o = plan["optimizer"]
        sched = job.lr_scheduler
        got_opt = (job.optimizer.lr, job.optimizer.beta1, job.optimizer.beta2, job.optimizer.eps,
                   job.optimizer.weight_decay, t.max_norm, sched.warmup_steps)
        want_opt = (o["lr"], o["adam_beta1"], o["adam_beta2"], o["adam_eps"], o["weight_decay"], o["grad_clip"],
                    o["warmup_steps"])
        check(f"{name}: AdamW and its warm-up", got_opt == want_opt, f"{got_opt} != {want_opt}")
        if o["lr_schedule"] == "constant":
            check(f"{name}: constant rate", sched.decay_ratio == 0.0, f"decay_ratio {sched.decay_ratio}")
        else:
            check(f"{name}: the decay", sched.decay_type == o["lr_schedule"] and
                  abs(sched.min_lr_factor - o["min_lr"] / o["lr"]) < 1e-12, f"{sched}")
        if "train_steps" in o:
            check(f"{name}: the run's length", t.steps == o["train_steps"], f"steps {t.steps}")
        # The model TorchTitan builds for the flavour is the one spplan priced.
        spec = get_train_spec(job.model.name)
        args = spec.model_args[job.model.flavor]
        args.update_from_config(job)
        with torch.device("meta"):
            model = spec.model_cls(args)
        got_shapes, want_shapes = torchtitan_shapes(model), expected_shapes(preset_model(plan["model"]["preset"]))
        check(f"{name}: TorchTitan's {job.model.name} {job.model.flavor} is the plan's model", got_shapes == want_shapes,
              f"{got_shapes} != {want_shapes}")
    except Exception as e:
        check(f"{name}: exported and read", False, f"{type(e).__name__}: {str(e)[:400]}")

# A model TorchTitan has no flavour for is refused with one line.
odd = os.path.join(work, "odd.toml")
with open(odd, "w") as f:
    f.write(PLANS["ring_cp4_llama8b"][0].replace("{seq}", "131072").replace("llama-3.1-8b", "mistral-7b"))
r = subprocess.run([spplan, "export", "--plan", odd, "--format", "torchtitan"], capture_output=True, text=True)
check("a model without a TorchTitan flavour: one line, exit 2",
      r.returncode == 2 and "is not a model trainer \"torchtitan\" builds" in r.stderr and r.stderr.count("\n") == 1, r.stderr)
sys.exit(1 if failed else 0)
