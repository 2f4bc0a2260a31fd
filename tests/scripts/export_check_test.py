#!/usr/bin/env python3
"""spplan export, read by the tools that read it (DESIGN.md: exports accepted by their targets).

Usage: export_check_test.py SPPLAN_BINARY WORK_DIR. For a few plans, each export is loaded by its
target's own code, on the CPU, without starting training:
  deepspeed    DeepSpeedConfig (deepspeed.runtime.config), the world size patched to the plan's
               GPU count, checked for the plan's batch sizes, ZeRO stage and precision;
  torchrun     train.py's arguments parsed by transformers' HfArgumentParser(TrainingArguments),
               then HfTrainerDeepSpeedConfig.trainer_config_process against ds_config.json: the
               consistency check transformers runs at start-up (no mismatch allowed);
  accelerate   accelerate's load_config_from_file;
  arctic       ArcticTraining's get_config (its pydantic TrainerConfig and its validators);
  megatron     pretrain_gpt.py's arguments parsed with the types Megatron-LM declares, then
               megatron-core's TransformerConfig, DDP and optimizer configs and RoPE modules built
               from them and compared with the plan's model (export_check_megatron.py).
A package that cannot be imported skips its part with a message; exit 77 (skipped) when none can.
"""
import json
import os
import pathlib
import shlex
import subprocess
import sys
import types

spplan, work = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)
failed = 0
skipped = []


def check(name, ok, detail=""):
    global failed
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else ": " + detail), flush=True)
    failed += not ok


def importable(module):
    try:
        __import__(module)
        return True
    except Exception as e:  # a broken install is as good as none here
        skipped.append(f"{module} ({type(e).__name__}: {str(e)[:120]})")
        return False


# name: (plan TOML body after seq_len, GPUs, micro batch, grad accumulation, sp, zero, bf16)
def presets(model):
    return f'[model]\npreset = "{model}"\n[gpu]\npreset = "h100-80gb"\n'


PRESETS = presets("llama-3.1-8b")
PLANS = {
    "one_node_alst": (PRESETS + "[cluster]\nnum_gpus = 8\n[knobs]\nsp = 8\nzero_stage = 3\n"
                      'offload_optimizer = "cpu"\nact_ckpt = "full"\ntiled_mlp = true\ntiled_loss = true\n',
                      8, 1, 1, 8, 3, True),
    "two_nodes_dp4": (PRESETS + "[cluster]\nnum_gpus = 16\n[knobs]\nsp = 4\nzero_stage = 2\n"
                      'act_ckpt = "full"\nmicro_batch = 2\ngrad_accum_steps = 4\n', 16, 2, 4, 4, 2, True),
    "fp32_sp2": (PRESETS + "[cluster]\nnum_gpus = 2\n[knobs]\nsp = 2\nzero_stage = 1\nprecision = \"fp32\"\n",
                 2, 1, 1, 2, 1, False),
    # A mixture of experts: the same formats, the model's own config.json for ArcticTraining.
    "moe_qwen3_30b": (presets("qwen3-30b-a3b") + "[cluster]\nnum_gpus = 8\n[knobs]\nsp = 8\nzero_stage = 3\n"
                      'offload_optimizer = "cpu"\nact_ckpt = "full"\ntiled_loss = true\n', 8, 1, 1, 8, 3, True),
    # GLM-4.5's mixture (a shared expert, a dense first layer): the HF Trainer's untiled loss (Liger refuses it).
    "moe_glm_air": (presets("glm-4.5-air") + "[cluster]\nnum_gpus = 8\n[knobs]\nsp = 8\nzero_stage = 3\n"
                    'offload_optimizer = "cpu"\nact_ckpt = "full"\n', 8, 1, 1, 8, 3, True),
}

# The config.json each plan's model is read from by ArcticTraining's validators (its Hub file's keys).
MODEL_CONFIGS = {
    "llama-3.1-8b": {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
                     "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32,
                     "num_key_value_heads": 8, "vocab_size": 128256, "max_position_embeddings": 131072,
                     "rms_norm_eps": 1e-05, "rope_theta": 500000.0, "tie_word_embeddings": False},
    "qwen3-30b-a3b": {"architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "hidden_size": 2048,
                      "intermediate_size": 6144, "moe_intermediate_size": 768, "num_hidden_layers": 48,
                      "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128, "vocab_size": 151936,
                      "num_experts": 128, "num_experts_per_tok": 8, "norm_topk_prob": True,
                      "decoder_sparse_step": 1, "mlp_only_layers": [], "max_position_embeddings": 40960,
                      "rms_norm_eps": 1e-06, "rope_theta": 1000000.0, "tie_word_embeddings": False},
    "glm-4.5-air": {"architectures": ["Glm4MoeForCausalLM"], "model_type": "glm4_moe", "hidden_size": 4096,
                    "intermediate_size": 10944, "moe_intermediate_size": 1408, "num_hidden_layers": 46,
                    "num_attention_heads": 96, "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 151552,
                    "n_routed_experts": 128, "n_shared_experts": 1, "num_experts_per_tok": 8,
                    "first_k_dense_replace": 1, "norm_topk_prob": True, "partial_rotary_factor": 0.5,
                    "attention_bias": True, "use_qk_norm": False, "max_position_embeddings": 131072,
                    "rms_norm_eps": 1e-05, "rope_theta": 1000000, "tie_word_embeddings": False},
}


# The trainer whose record lists each format (configs/trainers): a plan is exported as its trainer
# launches it, so each plan is written once per trainer. The Hugging Face Trainer has no tiled MLP,
# and its tiled loss is Liger-Kernel's (--trainer liger).
TRAINER_OF = {"deepspeed": "arctic", "arctic": "arctic", "torchrun": "hf", "accelerate": "hf", "megatron": "megatron"}


def on_trainer(plan_path, trainer):
    """The plan file with `trainer` set (and, for hf, the tiled MLP it cannot apply turned off)."""
    text = open(plan_path).read()
    if text.startswith("trainer = ") or "\ntrainer = " in text:
        return plan_path
    if trainer == "hf":
        text = text.replace("tiled_mlp = true", "tiled_mlp = false")
        if "tiled_loss = true" in text:  # the Trainer tiles its loss with Liger-Kernel's layers only
            trainer = "liger"
    out = plan_path[:-len(".toml")] + "." + trainer + ".toml"
    with open(out, "w") as f:
        f.write(f'trainer = "{trainer}"\n' + text)
    return out


def export(plan_path, fmt):
    path = on_trainer(plan_path, TRAINER_OF[fmt])
    r = subprocess.run([spplan, "export", "--plan", path, "--format", fmt], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"spplan export {fmt}: exit {r.returncode}: {r.stderr.strip()}")
    return r.stdout


def check_arctic(name, plan_path, gpus, sp, mb, bf16):
    """ArcticTraining's TrainerConfig validates the recipe: its validators start DeepSpeed's
    process group (patched to the plan's world), read the model's config.json (a local one for the
    placeholder name_or_path: nothing is downloaded) and, for flash_attention_2, import flash_attn
    (a GPU-only package: an empty stand-in module here)."""
    import deepspeed
    import deepspeed.comm as dscomm
    sys.modules.setdefault("flash_attn", types.ModuleType("flash_attn"))
    deepspeed.init_distributed = lambda *a, **k: None
    dscomm.get_world_size = lambda *a, **k: gpus
    dscomm.get_rank = lambda *a, **k: 0
    dscomm.get_local_rank = lambda *a, **k: 0
    from arctic_training.config.trainer import get_config
    model = next(m for m in MODEL_CONFIGS if f'preset = "{m}"' in open(plan_path).read())
    model_dir = os.path.join(work, model)
    os.makedirs(model_dir, exist_ok=True)
    with open(os.path.join(model_dir, "config.json"), "w") as f:
        json.dump(MODEL_CONFIGS[model], f)
    text = export(plan_path, "arctic").replace("name_or_path: " + model, "name_or_path: " + model_dir)
    arctic_path = os.path.join(work, name + ".arctic.yml")
    with open(arctic_path, "w") as f:
        f.write(text)
    try:
        cfg = get_config(pathlib.Path(arctic_path))
        got = (cfg.sequence_parallel_size, cfg.micro_batch_size, str(cfg.model.dtype))
        want = (sp, mb, "DType.BF16" if bf16 else "DType.FP32")
        check(f"{name}: ArcticTraining config", got == want, f"{got} != {want}")
    except Exception as e:
        check(f"{name}: ArcticTraining config", False, f"{type(e).__name__}: {str(e)[:400]}")


have_ds = importable("deepspeed")
have_hf = importable("transformers")
have_acc = importable("accelerate")
have_arctic = importable("arctic_training")
have_mcore = importable("megatron.core")
if not (have_ds or have_hf or have_acc or have_arctic or have_mcore):
    print("none of deepspeed, transformers, accelerate, arctic_training, megatron.core imports: skipped")
    sys.exit(77)

for name, (body, gpus, mb, ga, sp, zero, bf16) in PLANS.items():
    plan_path = os.path.join(work, name + ".toml")
    with open(plan_path, "w") as f:
        f.write("seq_len = 131072\n" + body)
    ds_text = export(plan_path, "deepspeed")
    ds = json.loads(ds_text)
    ds_path = os.path.join(work, name + ".ds_config.json")
    with open(ds_path, "w") as f:
        f.write(ds_text)
    dp = gpus // sp

    if have_ds:
        import deepspeed.runtime.config as ds_config
        # DeepSpeedConfig asks deepspeed.comm for the world; a CPU test has no process group.
        real = ds_config.dist.get_world_size, ds_config.dist.get_rank
        ds_config.dist.get_world_size = lambda *a, **k: gpus
        ds_config.dist.get_rank = lambda *a, **k: 0
        try:
            c = ds_config.DeepSpeedConfig(dict(ds))
            check(f"{name}: DeepSpeedConfig batch", (c.train_batch_size, c.train_micro_batch_size_per_gpu,
                                                     c.gradient_accumulation_steps) == (mb * ga * dp, mb, ga),
                  f"{(c.train_batch_size, c.train_micro_batch_size_per_gpu, c.gradient_accumulation_steps)}")
            check(f"{name}: DeepSpeedConfig ZeRO stage", c.zero_optimization_stage == zero, str(c.zero_optimization_stage))
            check(f"{name}: DeepSpeedConfig bf16", c.bfloat16_config.enabled == bf16, str(c.bfloat16_config.enabled))
        except Exception as e:
            check(f"{name}: DeepSpeedConfig", False, f"{type(e).__name__}: {e}")
        finally:
            ds_config.dist.get_world_size, ds_config.dist.get_rank = real

    if have_hf:
        from transformers import HfArgumentParser, TrainingArguments
        from transformers.integrations.deepspeed import HfTrainerDeepSpeedConfig
        script = export(plan_path, "torchrun")
        line = next(l for l in script.splitlines() if l.startswith("torchrun "))
        argv = shlex.split(line)
        argv = argv[argv.index("train.py") + 1:argv.index("$@")]  # "$@": the user's own arguments
        # Ulysses is on only through Accelerate's ParallelismConfig, which the script sets from
        # the environment under torchrun: sp_size must be the plan's.
        check(f"{name}: torchrun sets Accelerate's sp_size", f"\nexport PARALLELISM_CONFIG_SP_SIZE={sp}\n" in script and
              "\nexport ACCELERATE_USE_PARALLELISM_CONFIG=true\n" in script, script[:1500])
        argv[argv.index("--deepspeed") + 1] = ds_path
        try:
            # TrainingArguments' own parser (names and types); __post_init__ is skipped: it would
            # set up devices, and bf16 needs a GPU.
            ns = HfArgumentParser(TrainingArguments).parse_args(argv + ["--output_dir", work])
            args = types.SimpleNamespace(**vars(ns))
            args.world_size = gpus  # torchrun starts one process per GPU
            hf = HfTrainerDeepSpeedConfig(dict(ds))
            hf.trainer_config_process(args)
            check(f"{name}: transformers' DeepSpeed consistency check", not hf.mismatches, "; ".join(hf.mismatches))
        except SystemExit as e:
            check(f"{name}: TrainingArguments parse", False, f"argparse exit {e.code} on {argv}")
        except Exception as e:
            check(f"{name}: transformers", False, f"{type(e).__name__}: {e}")

    if have_acc:
        from accelerate.commands.config.config_args import load_config_from_file
        yaml_path = os.path.join(work, name + ".accelerate.yaml")
        with open(yaml_path, "w") as f:
            f.write(export(plan_path, "accelerate"))
        try:
            c = load_config_from_file(yaml_path)
            nodes = max(1, gpus // 8)
            check(f"{name}: accelerate config", (c.num_processes, c.num_machines, str(c.distributed_type)) ==
                  (gpus, nodes, "DistributedType.DEEPSPEED"), f"{(c.num_processes, c.num_machines, c.distributed_type)}")
            if nodes > 1:
                check(f"{name}: accelerate main_process_ip", bool(getattr(c, "main_process_ip", None)), "missing")
        except Exception as e:
            check(f"{name}: accelerate config", False, f"{type(e).__name__}: {e}")

    if have_arctic:
        if mb != 1:
            # Its TrainerConfig asserts micro_batch_size 1 with pack_samples: spplan refuses.
            r = subprocess.run([spplan, "export", "--plan", on_trainer(plan_path, "arctic"), "--format", "arctic"],
                               capture_output=True, text=True)
            check(f"{name}: arctic export refuses micro batch {mb}", r.returncode == 2 and
                  "cannot be expressed for --format arctic" in r.stderr, r.stderr.strip())
        else:
            check_arctic(name, plan_path, gpus, sp, mb, bf16)

# The costmodel gathers a mixture's whole expert set per layer under ZeRO-3, as DeepSpeed does for a
# leaf module: the pinned DeepSpeed makes both priced families' MoE blocks leaves by default.
if have_ds:
    try:
        from deepspeed.runtime.zero.leaf_module_config import DEFAULT_LEAF_MODULE_CLASSES as leaves
        for block in ("transformers.models.qwen3_moe.modeling_qwen3_moe.Qwen3MoeSparseMoeBlock",
                      "transformers.models.mixtral.modeling_mixtral.MixtralSparseMoeBlock"):
            check(f"DeepSpeed's default ZeRO-3 leaf modules hold {block.rsplit('.', 1)[1]}", block in leaves, str(leaves))
    except ImportError as e:
        check("DeepSpeed's default ZeRO-3 leaf modules", False, f"{type(e).__name__}: {e}")

# Ring attention: a ring-only plan goes to Accelerate's FSDP2 + context parallel, read back by
# accelerate's own config loader and validated by its ParallelismConfig and
# TorchContextParallelConfig; a hybrid (sp x cp) plan is refused, as Accelerate would refuse it.
RING = (PRESETS + "[cluster]\nnum_gpus = 16\n[knobs]\nsp = 1\ncp = 8\ncp_comm = \"ring\"\nzero_stage = 3\n"
        'act_ckpt = "full"\n')
HYBRID = RING.replace("sp = 1", "sp = 2")
if have_acc:
    ring_path = os.path.join(work, "ring_only.toml")
    with open(ring_path, "w") as f:
        f.write("seq_len = 1048576\ntrainer = \"hf\"\n" + RING)  # the HF Trainer runs a ring through Accelerate
    from accelerate.commands.config.config_args import load_config_from_file
    yaml_path = os.path.join(work, "ring_only.accelerate.yaml")
    with open(yaml_path, "w") as f:
        f.write(export(ring_path, "accelerate"))
    try:
        c = load_config_from_file(yaml_path)
        check("ring_only: accelerate config", (c.num_processes, str(c.distributed_type), c.fsdp_config.get("fsdp_version")) ==
              (16, "DistributedType.FSDP", 2), f"{(c.num_processes, c.distributed_type, c.fsdp_config)}")
        from accelerate.parallelism_config import ParallelismConfig
        from accelerate.utils import TorchContextParallelConfig
        pc = {k[len("parallelism_config_"):]: v for k, v in c.parallelism_config.items()}
        strategy = pc.pop("cp_comm_strategy")
        cfg = ParallelismConfig(**pc, cp_handler=TorchContextParallelConfig(cp_comm_strategy=strategy))
        check("ring_only: accelerate ParallelismConfig", (cfg.cp_size, cfg.dp_shard_size, cfg.total_size, strategy) ==
              (8, 2, 16, "alltoall"), f"{(cfg.cp_size, cfg.dp_shard_size, cfg.total_size, strategy)}")
    except Exception as e:
        check("ring_only: accelerate config", False, f"{type(e).__name__}: {e}")
    # Offloaded checkpoints (TRL's 1M-token recipe): the YAML leaves checkpointing to the Trainer
    # (transformers refuses FSDP's and its own at once), whose flags, read by transformers' own
    # parser, checkpoint and offload.
    offload_path = os.path.join(work, "ring_offloaded.toml")
    with open(offload_path, "w") as f:
        f.write("seq_len = 1048576\ntrainer = \"trl\"\n" + RING.replace('act_ckpt = "full"', 'act_ckpt = "offload"'))
    offload_text = export(offload_path, "accelerate")
    offload_yaml = os.path.join(work, "ring_offloaded.accelerate.yaml")
    with open(offload_yaml, "w") as f:
        f.write(offload_text)
    try:
        fc = load_config_from_file(offload_yaml).fsdp_config
        check("ring_offloaded: the YAML does not checkpoint", fc.get("fsdp_activation_checkpointing") is False, str(fc))
        if have_hf:
            import shlex
            from transformers import HfArgumentParser, TrainingArguments
            line = next(l for l in offload_text.splitlines() if l.startswith("#  --per_device_train_batch_size"))
            args, = HfArgumentParser(TrainingArguments).parse_args_into_dataclasses(
                args=shlex.split(line[len("#  "):]) + ["--output_dir", os.path.join(work, "ring_offloaded.out"), "--use_cpu"])
            # transformers 5.24 reads the gradient_checkpointing* flags into activation_checkpointing*.
            on = getattr(args, "activation_checkpointing", args.gradient_checkpointing)
            kwargs = getattr(args, "activation_checkpointing_kwargs", args.gradient_checkpointing_kwargs) or {}
            check("ring_offloaded: the Trainer's flags checkpoint and offload", on and kwargs.get("offload") is True,
                  f"{on} {kwargs}")
    except Exception as e:
        check("ring_offloaded: accelerate config and Trainer flags", False, f"{type(e).__name__}: {e}")
    hybrid_path = os.path.join(work, "hybrid.toml")
    with open(hybrid_path, "w") as f:
        f.write("seq_len = 1048576\ntrainer = \"hf\"\n" + HYBRID)
    r = subprocess.run([spplan, "export", "--plan", hybrid_path, "--format", "accelerate"], capture_output=True, text=True)
    check("hybrid: the hf record has no Ulysses x ring", r.returncode == 2 and
          'which trainer "hf" does not run' in r.stderr, r.stderr.strip())
    try:  # Accelerate's own rule, which the refusal mirrors
        from accelerate.parallelism_config import ParallelismConfig
        ParallelismConfig(dp_shard_size=1, cp_size=8, sp_size=2)
        check("hybrid: accelerate refuses cp_size with sp_size", False, "ParallelismConfig accepted it")
    except ValueError:
        check("hybrid: accelerate refuses cp_size with sp_size", True)

if have_mcore:
    if have_hf:  # the RoPE comparison's reference is transformers'
        from export_check_megatron import check_megatron
        check_megatron(spplan, work, check, export)
    else:
        skipped.append("megatron.core's check (it compares RoPE with transformers, which does not import)")

for s in skipped:
    print("skipped (cannot import): " + s)
sys.exit(1 if failed else 0)
