#!/usr/bin/env python3
"""spplan export --format swift, read by ms-swift 4.6.0 itself.

Usage: export_check_swift.py SPPLAN_BINARY WORK_DIR, with a Python that imports swift
(scripts/install-deps.sh gives it its own venv over the main one). For a few plans on the usp
trainer, the exported script's `swift sft` line is:
  parsed    by transformers' HfArgumentParser over ms-swift's SftArguments, as `swift sft` parses it
            (unknown flags and wrong types are its errors; __post_init__, which downloads the model
            and starts DeepSpeed, is not run);
  compared  with the plan: sequence-parallel size, length, checkpointing, kernel, packing, ZeRO as
            the named config ms-swift ships (its JSON read for stage and offload), batch, AdamW;
  split     by ms-swift's own SequenceParallel._init_device_mesh (process-group calls stubbed): the
            mesh it builds must be the plan's dp x ring x Ulysses.
Nothing is trained: ms-swift's sequence parallel runs FlashAttention 2, a CUDA-only kernel.
"""
import json
import os
import pathlib
import shlex
import subprocess
import sys

spplan, work = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)
failed = 0

import importlib  # noqa: E402

import swift  # noqa: E402
from swift.arguments import SftArguments  # noqa: E402
from swift.utils.utils import _patch_get_type_hints  # noqa: E402
from transformers import HfArgumentParser  # noqa: E402

# The module (its package re-exports an instance under the same name).
swift_sp = importlib.import_module("swift.sequence_parallel.sequence_parallel")


def check(name, ok, detail=""):
    global failed
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else ": " + detail))
    failed += 0 if ok else 1


OPTIMIZER = ('[optimizer]\nlr = 2e-5\nadam_beta1 = 0.9\nadam_beta2 = 0.98\nadam_eps = 1e-7\nweight_decay = 0.05\n'
             'grad_clip = 1.0\nwarmup_steps = 10\nlr_schedule = "cosine"\ntrain_steps = 500\n')


def plan_text(model, gpus, seq, knobs):
    return (f'trainer = "usp"\nseq_len = {seq}\n[model]\npreset = "{model}"\n[gpu]\npreset = "h100-80gb"\n'
            f"[cluster]\nnum_gpus = {gpus}\n[knobs]\n{knobs}{OPTIMIZER}")


# name: (plan TOML, (sp, cp, dp, deepspeed name, checkpointing))
PLANS = {
    "hybrid_llama8b_4_nodes": (plan_text("llama-3.1-8b", 32, 131072, 'sp = 8\ncp = 2\nzero_stage = 3\n'
                                         'offload_optimizer = "cpu"\noffload_params = "cpu"\nact_ckpt = "full"\n'),
                               (8, 2, 2, "zero3_offload", True)),
    "ulysses_qwen2_5_7b": (plan_text("qwen2.5-7b", 4, 65536, 'sp = 4\nzero_stage = 3\nact_ckpt = "full"\n'),
                           (4, 1, 1, "zero3", True)),
    "none_zero2_offload": (plan_text("qwen3-4b", 8, 32768, 'sp = 1\ncp = 1\nzero_stage = 2\noffload_optimizer = "cpu"\n'
                                     'act_ckpt = "none"\nmicro_batch = 2\ngrad_accum_steps = 4\n'),
                           (1, 1, 8, "zero2_offload", False)),
}


def run(*args):
    r = subprocess.run([spplan, *args], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"spplan {args[0]}: exit {r.returncode}: {r.stderr.strip()}")
    return r.stdout


def swift_argv(script):
    """The `swift sft` line's arguments, the environment assignments before it kept apart."""
    words = shlex.split(script.split("swift sft", 1)[1].replace("\\\n", " "))
    return words, script.split("swift sft", 1)[0].splitlines()[-1].split()


def mesh_of(kv_heads, sp_size, world):
    """The mesh ms-swift's SequenceParallel builds for the plan (its own _init_device_mesh)."""
    built = {}
    swift_sp.get_dist_setting = lambda: (0, 0, world, 0)
    swift_sp.init_device_mesh = lambda device, mesh_shape, mesh_dim_names: built.update(
        shape=tuple(mesh_shape), names=tuple(mesh_dim_names))
    sequence_parallel = swift_sp.SequenceParallel()
    sequence_parallel.num_heads = kv_heads
    sequence_parallel.world_size = sp_size
    sequence_parallel._init_device_mesh()
    return built


swift_config = pathlib.Path(swift.__file__).parent / "config"
for name, (body, (sp, cp, dp, ds_name, ckpt)) in PLANS.items():
    plan_path = os.path.join(work, name + ".toml")
    with open(plan_path, "w") as f:
        f.write(body)
    try:
        script = run("export", "--plan", plan_path, "--format", "swift")
        with open(os.path.join(work, name + ".swift.sh"), "w") as f:
            f.write(script)
        argv, env = swift_argv(script)
        with _patch_get_type_hints():
            args = HfArgumentParser([SftArguments]).parse_args(argv)
        seq = int(body.split("seq_len = ")[1].split("\n")[0])
        got = (args.sequence_parallel_size, args.max_length, args.gradient_checkpointing, args.attn_impl,
               args.padding_free, args.deepspeed, args.tuner_type)
        want = (sp * cp, seq, ckpt, "flash_attn", cp > 1, ds_name, "full")
        check(f"{name}: sequence parallel, length, checkpointing, kernel, packing, ZeRO", got == want, f"{got} != {want}")
        ds = json.load(open(swift_config / (ds_name + ".json")))["zero_optimization"]
        knobs = body.split("[knobs]\n")[1]
        want_stage = int(knobs.split("zero_stage = ")[1].split("\n")[0])
        def device(key):
            return ds.get(key, {}).get("device", "none")
        check(f"{name}: ms-swift's {ds_name}.json is the plan's ZeRO", ds["stage"] == want_stage and
              (device("offload_optimizer") == "cpu") == ('offload_optimizer = "cpu"' in knobs) and
              (device("offload_param") == "cpu") == ('offload_params = "cpu"' in knobs), json.dumps(ds)[:300])
        gpus = int(body.split("num_gpus = ")[1].split("\n")[0])
        nodes = [w for w in env if w.startswith("NNODES=")][0].split("=")[1]
        per_node = [w for w in env if w.startswith("NPROC_PER_NODE=")][0].split("=")[1]
        check(f"{name}: every GPU started", int(nodes) * int(per_node) == gpus, f"{env}")
        mb = int(knobs.split("micro_batch = ")[1].split("\n")[0]) if "micro_batch" in knobs else 1
        ga = int(knobs.split("grad_accum_steps = ")[1].split("\n")[0]) if "grad_accum_steps" in knobs else 1
        got_opt = (args.per_device_train_batch_size, args.gradient_accumulation_steps, args.learning_rate,
                   args.adam_beta1, args.adam_beta2, args.adam_epsilon, args.weight_decay, args.max_grad_norm,
                   args.warmup_steps, str(args.lr_scheduler_type), args.max_steps, args.bf16)
        want_opt = (mb, ga, 2e-5, 0.9, 0.98, 1e-7, 0.05, 1.0, 10, "cosine", 500, True)
        check(f"{name}: batch and AdamW", got_opt == want_opt, f"{got_opt} != {want_opt}")
        if sp * cp > 1:
            kv = {"llama-3.1-8b": 8, "qwen2.5-7b": 4, "qwen3-4b": 8}[body.split('preset = "')[1].split('"')[0]]
            mesh = mesh_of(kv, sp * cp, gpus)
            want_mesh = (dp, cp, sp) if cp > 1 else (dp, sp)
            check(f"{name}: ms-swift's mesh is the plan's dp x ring x Ulysses", mesh.get("shape") == want_mesh,
                  f"{mesh} != {want_mesh}")
    except Exception as e:
        check(f"{name}: exported and read", False, f"{type(e).__name__}: {str(e)[:400]}")

# A multimodal model's vision tower and projector: priced frozen on usp, and the script ms-swift
# reads freezes both (its freeze_vit and freeze_aligner, what _init_multimodal_full turns into
# freeze_parameters for a full run).
gemma3 = pathlib.Path(__file__).resolve().parents[1] / "planner/config/data/gemma3_4b_multimodal.json"
multimodal_plan = os.path.join(work, "multimodal.toml")
try:
    report = json.loads(run("plan", "--model", str(gemma3), "--gpu", "h100-80gb", "--gpus", "8", "--seq", "32k",
                            "--trainer", "usp", "--out", multimodal_plan, "--json"))["plans"][0]
    argv, _ = swift_argv(run("export", "--plan", multimodal_plan, "--format", "swift"))
    with _patch_get_type_hints():
        args = HfArgumentParser([SftArguments]).parse_args(argv)
    check("multimodal: priced frozen, and ms-swift reads freeze_vit and freeze_aligner true",
          report["encoders_frozen"] is True and args.freeze_vit is True and args.freeze_aligner is True,
          f"priced frozen {report['encoders_frozen']}, freeze_vit {args.freeze_vit}, freeze_aligner {args.freeze_aligner}")
    # What those two flags freeze: ms-swift's model type for the config's architecture, its model
    # arch's vision_tower and aligner (_init_multimodal_full), frozen by its own freeze_parameters on
    # the model transformers builds from the config (on the meta device).
    import torch  # noqa: E402
    import transformers  # noqa: E402
    from swift.model.model_meta import MODEL_MAPPING, get_matched_model_types  # noqa: E402
    from swift.utils.transformers_utils import freeze_parameters  # noqa: E402
    with open(gemma3) as f:
        config_dict = json.load(f)
    model_type = get_matched_model_types(config_dict["architectures"])[0]
    arch = MODEL_MAPPING[model_type].model_arch
    with torch.device("meta"):
        model = transformers.AutoModelForImageTextToText.from_config(transformers.AutoConfig.for_model(**config_dict))
    freeze_parameters(model, 0, arch.vision_tower + arch.aligner)
    frozen = sum(p.numel() for p in model.parameters() if not p.requires_grad)
    check(f"multimodal: ms-swift ({model_type}) freezes exactly the encoders the plan counted",
          frozen == report["encoder_params"], f"{frozen} frozen, {report['encoder_params']} priced")
except Exception as e:
    check("multimodal: exported and read", False, f"{type(e).__name__}: {str(e)[:400]}")

# A split ms-swift would not run (sp 2 x cp 4 where gcd(8 kv heads, 8) = 8) is refused with one line.
odd = os.path.join(work, "split.toml")
with open(odd, "w") as f:
    f.write(plan_text("llama-3.1-8b", 8, 65536, 'sp = 2\ncp = 4\nzero_stage = 3\nact_ckpt = "full"\n'))
r = subprocess.run([spplan, "export", "--plan", odd, "--format", "swift"], capture_output=True, text=True)
check("a split ms-swift does not make: one line, exit 2",
      r.returncode == 2 and "allowed: sp 8, cp 1" in r.stderr and r.stderr.count("\n") == 1, r.stderr)
sys.exit(1 if failed else 0)
