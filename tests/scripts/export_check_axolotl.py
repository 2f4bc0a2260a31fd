#!/usr/bin/env python3
"""spplan export --format axolotl, read by Axolotl 0.19.0 itself.

Usage: export_check_axolotl.py SPPLAN_BINARY WORK_DIR, with a Python that imports axolotl
(scripts/install-deps.sh gives it its own venv over the main one). For a few plans on the axolotl
trainer, the exported YAML is:
  validated by Axolotl's prepare_plugins and validate_config (its pydantic AxolotlInputConfig with
            the Liger plugin's arguments and every validator); since pydantic drops unknown keys
            silently, each key must also be a field of that schema;
  compared  with the plan: ring degree, variant and heads_k_stride (the record's), length, packing,
            batch, checkpointing, kernel, TiledMLP's shard count (the costmodel's), Liger's kernels
            for the tiled loss, ZeRO and offload in the inline DeepSpeed config;
  built     into the Trainer's arguments by Axolotl's own HFCausalTrainerBuilder, which transformers'
            DeepSpeed consistency check (HfTrainerDeepSpeedConfig, process and finalize) then holds
            against the inline config, as at start-up;
  split     by Axolotl's own apply_sequence_parallelism: each ring rank must get the contiguous
            shard the costmodel prices (the record's ring_contiguous_shards).
ring_flash_attn, which the validator imports under context parallel, is CUDA-only: a stub module
stands in for it. Nothing is trained: its ring runs FlashAttention 2, a CUDA-only kernel.
"""
import dataclasses
import json
import math
import os
import subprocess
import sys
import types

spplan, work = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)
failed = 0

sys.modules.setdefault("ring_flash_attn", types.ModuleType("ring_flash_attn"))
import torch  # noqa: E402
import yaml  # noqa: E402
from axolotl.core.builders.causal import HFCausalTrainerBuilder  # noqa: E402
from axolotl.utils.config import merge_input_args, prepare_plugins, validate_config  # noqa: E402
from axolotl.utils.ctx_managers.sequence_parallel import apply_sequence_parallelism  # noqa: E402
from axolotl.utils.dict import DictDefault  # noqa: E402
from axolotl.utils.schemas.config import AxolotlInputConfig  # noqa: E402
from axolotl.utils.schemas.enums import RingAttnFunc  # noqa: E402
from transformers import TrainingArguments  # noqa: E402
from transformers.integrations.deepspeed import HfTrainerDeepSpeedConfig  # noqa: E402


def check(name, ok, detail=""):
    global failed
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else ": " + detail))
    failed += 0 if ok else 1


def plan_text(model, gpus, seq, knobs, optimizer):
    return (f'trainer = "axolotl"\nseq_len = {seq}\n[model]\npreset = "{model}"\n[gpu]\npreset = "h100-80gb"\n'
            f"[cluster]\nnum_gpus = {gpus}\n[knobs]\n{knobs}[optimizer]\n{optimizer}")


COSINE = ('lr = 2e-5\nadam_beta1 = 0.9\nadam_beta2 = 0.98\nadam_eps = 1e-7\nweight_decay = 0.05\ngrad_clip = 1.0\n'
          'warmup_steps = 10\nlr_schedule = "cosine"\ntrain_steps = 500\n')
# No warm-up with a decaying rate: the exports write 1 step, which Axolotl turns into 2.
LINEAR = 'lr = 1e-5\nweight_decay = 0.0\ngrad_clip = 0.5\nwarmup_steps = 0\nlr_schedule = "linear"\ntrain_steps = 200\n'
CONSTANT = 'lr = 3e-6\nwarmup_steps = 0\nlr_schedule = "constant"\n'
HIDDEN = {"llama-3.1-8b": 4096, "qwen2.5-7b": 3584, "qwen3-4b": 2560}

# name: (model, GPUs, seq_len, knobs, optimizer)
PLANS = {
    "ring8_llama8b_2_nodes": ("llama-3.1-8b", 16, 262144,
                              'sp = 1\ncp = 8\ncp_comm = "allgather"\nzero_stage = 3\noffload_optimizer = "cpu"\n'
                              'offload_params = "cpu"\nact_ckpt = "full"\ntiled_mlp = true\ntiled_loss = true\n', COSINE),
    "ring4_qwen2_5_7b_zero2": ("qwen2.5-7b", 4, 65536,
                               'sp = 1\ncp = 4\ncp_comm = "allgather"\nzero_stage = 2\nact_ckpt = "full"\n', LINEAR),
    "none_qwen3_4b_zero1": ("qwen3-4b", 8, 16384,
                            'sp = 1\ncp = 1\nzero_stage = 1\nact_ckpt = "none"\nmicro_batch = 2\ngrad_accum_steps = 4\n',
                            CONSTANT),
}


def knob(knobs, key, default):
    for line in knobs.splitlines():
        if line.startswith(key + " = "):
            return yaml.safe_load(line.split(" = ", 1)[1])
    return default


def export(plan_path):
    r = subprocess.run([spplan, "export", "--plan", plan_path, "--format", "axolotl"], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"spplan export: exit {r.returncode}: {r.stderr.strip()}")
    return r.stdout


def schema_fields(raw):
    """AxolotlInputConfig's keys with the plugins' arguments merged in, and their aliases."""
    schema = merge_input_args()[-1] if raw.get("plugins") else AxolotlInputConfig
    names = set(schema.model_fields)
    names |= {f.alias for f in schema.model_fields.values() if f.alias}
    return names


def trainer_arguments(cfg):
    """The Trainer's arguments as Axolotl builds them, as a namespace transformers' check reads."""
    kwargs, _ = HFCausalTrainerBuilder(cfg, None, None)._set_base_training_args(total_num_steps=cfg.max_steps or 1000)
    args = types.SimpleNamespace(**{f.name: f.default for f in dataclasses.fields(TrainingArguments)
                                    if f.default is not dataclasses.MISSING})
    for key, value in kwargs.items():
        setattr(args, key, value)
    args.get_warmup_steps = lambda n: TrainingArguments.get_warmup_steps(args, n)
    return args


def shard_starts(seq, cp):
    """The first token each ring rank holds after Axolotl's own split of one packed row."""
    starts = []
    for rank in range(cp):
        batch = {"input_ids": torch.arange(seq)[None], "labels": torch.arange(seq)[None]}
        out, _, _ = apply_sequence_parallelism(batch, local_rank=rank, local_world_size=cp,
                                               gradient_accumulation_steps=1, ring_attn_func=RingAttnFunc.VARLEN_LLAMA3)
        starts.append((int(out["input_ids"][0, 0]), out["input_ids"].shape[1]))
    return starts


for name, (model, gpus, seq, knobs, optimizer) in PLANS.items():
    plan_path = os.path.join(work, name + ".toml")
    with open(plan_path, "w") as f:
        f.write(plan_text(model, gpus, seq, knobs, optimizer))
    cp, ga, mb = knob(knobs, "cp", 1), knob(knobs, "grad_accum_steps", 1), knob(knobs, "micro_batch", 1)
    tiled_mlp, tiled_loss = knob(knobs, "tiled_mlp", False), knob(knobs, "tiled_loss", False)
    try:
        text = export(plan_path)
        with open(os.path.join(work, name + ".yaml"), "w") as f:
            f.write(text)
        raw = yaml.safe_load(text)
        cfg = DictDefault(raw)
        prepare_plugins(cfg)
        cfg = validate_config(cfg)
        unknown = sorted(set(raw) - schema_fields(raw))
        check(f"{name}: every key is Axolotl's", not unknown, f"unknown (pydantic drops them): {unknown}")
        got = (cfg.context_parallel_size, cfg.sequence_len, cfg.sample_packing, cfg.micro_batch_size,
               cfg.gradient_accumulation_steps, bool(cfg.gradient_checkpointing), cfg.attn_implementation)
        want = (cp, seq, True, mb, ga, knob(knobs, "act_ckpt", "full") == "full", "flash_attention_2")
        check(f"{name}: ring degree, length, packing, batch, checkpointing, kernel", got == want, f"{got} != {want}")
        if cp > 1:
            got = (cfg.ring_attn_func, cfg.heads_k_stride)
            check(f"{name}: the llama3 all-gather, one key-value head per call", got == (RingAttnFunc.VARLEN_LLAMA3, 1),
                  f"{got}")
            starts = shard_starts(seq // 1024, cp)  # the split's rule, on a row 1024 times shorter
            want = [(r * seq // 1024 // cp, seq // 1024 // cp) for r in range(cp)]
            check(f"{name}: Axolotl's split gives each ring rank a contiguous shard", starts == want, f"{starts}")
        shards = math.ceil(seq / cp / HIDDEN[model])  # DeepSpeed's ceil(s / h), as priced
        got = (bool(cfg.tiled_mlp), cfg.tiled_mlp_num_shards if tiled_mlp else None)
        check(f"{name}: TiledMLP and its shards", got == (tiled_mlp, shards if tiled_mlp else None), f"{got}")
        liger = [bool(cfg.get(k)) for k in ("liger_rope", "liger_rms_norm", "liger_glu_activation",
                                             "liger_fused_linear_cross_entropy")]
        check(f"{name}: Liger's kernels for the tiled loss", liger == [tiled_loss] * 4, f"{liger}")
        ds = cfg.deepspeed.to_dict() if hasattr(cfg.deepspeed, "to_dict") else dict(cfg.deepspeed)
        zero = ds["zero_optimization"]
        got = (zero["stage"], zero.get("offload_optimizer", {}).get("device", "none"),
               zero.get("offload_param", {}).get("device", "none"))
        want = (knob(knobs, "zero_stage", 3), knob(knobs, "offload_optimizer", "none"), knob(knobs, "offload_params", "none"))
        check(f"{name}: ZeRO and offload in the inline DeepSpeed config", got == want, f"{got} != {want}")
        args = trainer_arguments(cfg)
        args.world_size = gpus
        hf = HfTrainerDeepSpeedConfig(ds)
        hf.trainer_config_process(args)
        hf.trainer_config_finalize(args, types.SimpleNamespace(config=types.SimpleNamespace(hidden_size=HIDDEN[model])),
                                   cfg.max_steps or 1000)
        check(f"{name}: transformers' DeepSpeed check of Axolotl's Trainer arguments", not hf.mismatches,
              "; ".join(hf.mismatches))
        launch = next(line for line in text.splitlines() if line.startswith("# Launch: "))
        words = launch.split()
        per_node = int(words[words.index("--nproc_per_node") + 1])
        nodes = int(words[words.index("--nnodes") + 1]) if "--nnodes" in words else 1
        check(f"{name}: every GPU started", per_node * nodes == gpus, launch)
    except Exception as e:
        check(f"{name}: exported and read", False, f"{type(e).__name__}: {str(e)[:600]}")

# A sliding window over the ring: the planner prices Axolotl's ring as windowed where a
# rank's shard is longer than the window (the record's ring_sliding_window and
# ring_window_past_shard_only). Axolotl's own ring forward, handed the shard its own split gives a
# rank, must pass the window on there, and pass none over a shard within the window, which the
# planner refuses.
def ring_window_passed(shard, window):
    """window_size Axolotl's ring forward hands ring-flash-attn for a rank's shard, or None."""
    from axolotl.monkeypatch.ring_attn.patch import create_ring_flash_attention_forward
    seen = {}
    hf_adapter = types.ModuleType("ring_flash_attn.adapters.hf_adapter")
    hf_adapter.DATA_PARAMS = {k: None for k in ("cu_seqlens_q", "cu_seqlens_k", "max_seqlen_q", "max_seqlen_k",
                                                "local_k_slice")}
    sys.modules["ring_flash_attn"].llama3_flash_attn_varlen_func = lambda q, k, v, **kw: seen.update(kw) or q
    sys.modules["ring_flash_attn.adapters"] = types.ModuleType("ring_flash_attn.adapters")
    sys.modules["ring_flash_attn.adapters.hf_adapter"] = hf_adapter
    forward = create_ring_flash_attention_forward(None, 1)[0]
    q = torch.zeros(1, shard, 1, 8)
    forward(q, q, q, None, shard, True, sliding_window=window)
    return seen.get("window_size")


mistral = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "planner", "config", "data", "mistral_v01.json")
window = 4096  # its sliding_window
for seq, fits in ((65536, True), (32768, False)):
    windowed = os.path.join(work, f"window_ring8_{seq}.toml")
    r = subprocess.run([spplan, "plan", "--model", mistral, "--gpu", "h100-80gb", "--gpus", "8", "--seq", str(seq),
                        "--trainer", "axolotl", "--sp", "1", "--cp", "8", "--cp-comm", "allgather", "--zero", "3",
                        "--top", "1", "--out", windowed], capture_output=True, text=True)
    shard = shard_starts(seq, 8)[-1][1]
    passed = ring_window_passed(shard, window)
    if fits:
        try:
            cfg = validate_config(DictDefault(yaml.safe_load(export(windowed))))
            check(f"window ring at {seq}: planned and exported as a ring of 8", cfg.context_parallel_size == 8,
                  f"{cfg.context_parallel_size}")
        except Exception as e:
            check(f"window ring at {seq}: planned and exported", False, f"{type(e).__name__}: {r.stderr.strip()} {e}")
        check(f"window ring at {seq}: Axolotl windows each rank's {shard} tokens, one key more than transformers",
              passed == (window, window), f"{passed}")
    else:
        check(f"window ring at {seq}: refused in one line, exit 2",
              r.returncode == 2 and "runs no window" in r.stderr and r.stderr.count("\n") == 1, r.stderr)
        check(f"window ring at {seq}: Axolotl passes no window over {shard}-token shards", passed is None, f"{passed}")

# A multimodal model's encoders frozen as priced: the YAML Axolotl validates asks for
# freeze_mm_modules, and Axolotl's own freeze_mm_modules, run on the model transformers builds from
# the config (on the meta device), freezes exactly the parameters the plan counted as the encoders.
gemma3 = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "planner", "config", "data",
                      "gemma3_4b_multimodal.json")
frozen_plan = os.path.join(work, "multimodal_frozen.toml")
try:
    r = subprocess.run([spplan, "plan", "--model", gemma3, "--gpu", "h100-80gb", "--gpus", "8", "--seq", "32768",
                        "--trainer", "axolotl", "--freeze-encoders", "--out", frozen_plan, "--json"],
                       capture_output=True, text=True)
    priced = json.loads(r.stdout)["plans"][0]
    cfg = validate_config(DictDefault(yaml.safe_load(export(frozen_plan))))
    check("multimodal: priced frozen, and Axolotl reads freeze_mm_modules true",
          priced["encoders_frozen"] is True and cfg.freeze_mm_modules is True, f"{cfg.freeze_mm_modules}")
    import transformers  # noqa: E402
    from axolotl.utils.freeze import freeze_mm_modules  # noqa: E402
    with open(gemma3) as f:
        config = transformers.AutoConfig.for_model(**json.load(f))
    with torch.device("meta"):
        model = transformers.AutoModelForImageTextToText.from_config(config)
    freeze_mm_modules(model)
    frozen = sum(p.numel() for p in model.parameters() if not p.requires_grad)
    check("multimodal: Axolotl freezes exactly the encoders the plan counted", frozen == priced["encoder_params"],
          f"{frozen} frozen, {priced['encoder_params']} priced")
except Exception as e:
    check("multimodal: planned, exported and frozen", False, f"{type(e).__name__}: {str(e)[:400]}")

# A ring over two packed rows at once, which ring-flash-attn's varlen path does not run: one line, exit 2.
odd = os.path.join(work, "two_rows.toml")
with open(odd, "w") as f:
    f.write(plan_text("llama-3.1-8b", 8, 65536, 'sp = 1\ncp = 4\ncp_comm = "allgather"\nzero_stage = 3\nmicro_batch = 2\n',
                      CONSTANT))
r = subprocess.run([spplan, "export", "--plan", odd, "--format", "axolotl"], capture_output=True, text=True)
check("a ring over two rows: one line, exit 2",
      r.returncode == 2 and "micro_batch" in r.stderr and r.stderr.count("\n") == 1, r.stderr)
sys.exit(1 if failed else 0)
