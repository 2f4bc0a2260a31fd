"""The Megatron-LM part of export_check_test.py: spplan's pretrain_gpt.py arguments, read as
Megatron-LM reads them, must describe the plan's model and layout.

megatron-core (PyPI) has Megatron's config classes and RoPE modules but not megatron/training, the
argument parser: FLAGS below declares each flag spplan writes with the type and the destination
Megatron-LM's arguments.py gives it (NVIDIA/Megatron-LM core_v0.13.1 declares them all by hand;
core_v0.16.1 generates the TransformerConfig ones from the dataclass, same names and types; the
YaRN ones are core_v0.19.0's). A flag missing from FLAGS fails the check: a new export flag cannot
slip through unread. The parsed values then build, on the CPU:
  TransformerConfig              core_transformer_config_from_args: every argument named as a
                                 field, num_query_groups only with --group-query-attention,
                                 --swiglu as gated_linear_unit with silu; validate_args: bf16
                                 params, --add-qkv-bias implied by bias on every linear;
  DistributedDataParallelConfig  and OptimizerConfig: their fields, by name;
  RotaryEmbedding or YarnRotaryEmbedding with what the model builder passes (gpt_builders.py:
                                 rotary_base and rope_scaling, never --rope-scaling-factor;
                                 seq_len_interpolation_factor from core_v0.19.0's
                                 gpt_config_from_args), compared angle by angle with transformers'
                                 LlamaRotaryEmbedding for the model's config.
"""
import argparse
import dataclasses
import os
import shlex
import subprocess
import tomllib

import torch
import torch.nn.functional as F

# What a flag sets: ("config"|"ddp"|"optimizer", field) a field of that config class, by name;
# ("model", name) an argument of GPTModel or of its RoPE module; ("train", name) nothing of the
# model or its layout (data, schedule, tokenizer, batch), compared with the plan where it has one.
STORE_TRUE = {"action": "store_true"}
FLAGS = {
    "--num-layers": ({"type": int}, ("config", "num_layers")),
    "--hidden-size": ({"type": int}, ("config", "hidden_size")),
    "--ffn-hidden-size": ({"type": int}, ("config", "ffn_hidden_size")),
    "--num-attention-heads": ({"type": int}, ("config", "num_attention_heads")),
    "--kv-channels": ({"type": int}, ("config", "kv_channels")),
    "--group-query-attention": (STORE_TRUE, ("model", "group_query_attention")),
    "--num-query-groups": ({"type": int}, ("config", "num_query_groups")),
    "--seq-length": ({"type": int}, ("train", "seq_length")),
    "--max-position-embeddings": ({"type": int}, ("model", "max_sequence_length")),
    "--position-embedding-type": ({"choices": ["learned_absolute", "rope", "yarn", "mrope", "relative", "none"]},
                                  ("model", "position_embedding_type")),
    "--rotary-base": ({"type": int}, ("model", "rotary_base")),
    "--use-rope-scaling": (STORE_TRUE, ("model", "rope_scaling")),
    "--rope-scaling-factor": ({"type": float}, ("model", "rope_scaling_factor")),
    "--rotary-seq-len-interpolation-factor": ({"type": int}, ("model", "seq_len_interpolation_factor")),
    "--rotary-scaling-factor": ({"type": float}, ("model", "yarn_scaling_factor")),
    "--yarn-original-max-position-embeddings": ({"type": int}, ("model", "yarn_original_max_position_embeddings")),
    "--yarn-beta-fast": ({"type": float}, ("model", "yarn_beta_fast")),
    "--yarn-beta-slow": ({"type": float}, ("model", "yarn_beta_slow")),
    "--yarn-correction-range-round-to-int": ({"action": "store_true", "default": None},
                                             ("model", "yarn_correction_range_round_to_int")),
    "--no-yarn-correction-range-round-to-int": ({"action": "store_false"},
                                                ("model", "yarn_correction_range_round_to_int")),
    "--mscale": ({"type": float}, ("model", "yarn_mscale")),
    "--mscale-all-dim": ({"type": float}, ("model", "yarn_mscale_all_dim")),
    "--normalization": ({"choices": ["LayerNorm", "RMSNorm"]}, ("config", "normalization")),
    "--norm-epsilon": ({"type": float}, ("config", "layernorm_epsilon")),
    "--qk-layernorm": (STORE_TRUE, ("config", "qk_layernorm")),
    "--swiglu": (STORE_TRUE, ("model", "swiglu")),
    "--disable-bias-linear": ({"action": "store_false"}, ("config", "add_bias_linear")),
    "--add-qkv-bias": (STORE_TRUE, ("config", "add_qkv_bias")),
    "--untie-embeddings-and-output-weights": (STORE_TRUE, ("model", "untie_embeddings_and_output_weights")),
    "--tensor-model-parallel-size": ({"type": int}, ("config", "tensor_model_parallel_size")),
    "--pipeline-model-parallel-size": ({"type": int}, ("config", "pipeline_model_parallel_size")),
    "--context-parallel-size": ({"type": int}, ("config", "context_parallel_size")),
    "--cp-comm-type": ({"nargs": "+", "type": str}, ("config", "cp_comm_type")),
    "--hierarchical-context-parallel-sizes": ({"nargs": "+", "type": int},
                                              ("config", "hierarchical_context_parallel_sizes")),
    "--bf16": (STORE_TRUE, ("config", "bf16")),
    "--recompute-granularity": ({"choices": ["full", "selective"]}, ("config", "recompute_granularity")),
    "--recompute-method": ({"choices": ["uniform", "block"]}, ("config", "recompute_method")),
    "--recompute-num-layers": ({"type": int}, ("config", "recompute_num_layers")),
    "--use-distributed-optimizer": (STORE_TRUE, ("ddp", "use_distributed_optimizer")),
    "--use-megatron-fsdp": (STORE_TRUE, ("ddp", "use_megatron_fsdp")),
    "--data-parallel-sharding-strategy": ({"choices": ["no_shard", "optim", "optim_grads", "optim_grads_params"]},
                                          ("ddp", "data_parallel_sharding_strategy")),
    "--optimizer": ({"choices": ["adam", "sgd"]}, ("optimizer", "optimizer")),
    "--optimizer-cpu-offload": (STORE_TRUE, ("optimizer", "optimizer_cpu_offload")),
    "--optimizer-offload-fraction": ({"type": float}, ("optimizer", "optimizer_offload_fraction")),
    "--lr": ({"type": float}, ("optimizer", "lr")),
    "--min-lr": ({"type": float}, ("optimizer", "min_lr")),
    "--weight-decay": ({"type": float}, ("optimizer", "weight_decay")),
    "--clip-grad": ({"type": float}, ("optimizer", "clip_grad")),
    "--adam-beta1": ({"type": float}, ("optimizer", "adam_beta1")),
    "--adam-beta2": ({"type": float}, ("optimizer", "adam_beta2")),
    "--adam-eps": ({"type": float}, ("optimizer", "adam_eps")),
    # Training only: the schedule, the data and the tokenizer describe no part of the model.
    "--micro-batch-size": ({"type": int}, ("train", "micro_batch_size")),
    "--global-batch-size": ({"type": int}, ("train", "global_batch_size")),
    "--lr-decay-style": ({"choices": ["constant", "linear", "cosine", "inverse-square-root", "WSD"]},
                         ("train", "lr_decay_style")),
    "--lr-warmup-iters": ({"type": int}, ("train", "lr_warmup_iters")),
    "--train-iters": ({"type": int}, ("train", "train_iters")),
    "--mock-data": (STORE_TRUE, ("train", "mock_data")),
    "--tokenizer-type": ({"choices": ["GPT2BPETokenizer", "HuggingFaceTokenizer", "NullTokenizer"]},
                         ("train", "tokenizer_type")),
    "--vocab-size": ({"type": int}, ("train", "vocab_size")),
}


def parse(script):
    """pretrain_gpt.py's arguments in the script, parsed with FLAGS' types; unknown flags listed."""
    line = next(l for l in script.splitlines() if l.startswith("torchrun "))
    argv = shlex.split(line.replace("${TRAIN_ITERS}", "1000"))  # the script's default length
    argv = argv[argv.index("pretrain_gpt.py") + 1:]
    parser = argparse.ArgumentParser(allow_abbrev=False, add_help=False, exit_on_error=False)
    for flag, (kwargs, (_, dest)) in FLAGS.items():
        parser.add_argument(flag, dest=dest, **kwargs)
    ns, unknown = parser.parse_known_args(argv)
    return ns, [a for a in unknown if a.startswith("--")]


def flag_names(cls, field):
    """The flags core_v0.16.1's ArgumentGroupFactory makes for a dataclass field: argparse_meta's
    arg_names, else the field's name with dashes."""
    meta = field.metadata.get("argparse_meta", {})
    return meta.get("arg_names", ["--" + field.name.replace("_", "-")])


def configs(ns):
    """TransformerConfig, DistributedDataParallelConfig and OptimizerConfig from the parsed flags."""
    from megatron.core.distributed import DistributedDataParallelConfig
    from megatron.core.optimizer import OptimizerConfig
    from megatron.core.transformer import TransformerConfig
    classes = {"config": TransformerConfig, "ddp": DistributedDataParallelConfig, "optimizer": OptimizerConfig}
    kw = {name: {} for name in classes}
    for flag, (_, (where, dest)) in FLAGS.items():
        if where in classes and getattr(ns, dest, None) is not None:
            kw[where][dest] = getattr(ns, dest)
    t = kw["config"]
    if not ns.group_query_attention:
        t.pop("num_query_groups", None)
    if isinstance(t.get("cp_comm_type"), list) and len(t["cp_comm_type"]) == 1:
        t["cp_comm_type"] = t["cp_comm_type"][0]
    if ns.swiglu:
        t.update(gated_linear_unit=True, activation_func=F.silu)
    if t.get("add_bias_linear", True):
        t["add_qkv_bias"] = True
    if t.get("bf16"):
        t["params_dtype"] = torch.bfloat16
    kw["optimizer"]["bf16"] = bool(t.get("bf16"))
    kw["optimizer"]["use_distributed_optimizer"] = bool(kw["ddp"].get("use_distributed_optimizer"))
    return {name: cls(**kw[name]) for name, cls in classes.items()}


def rope_angles(ns, head_dim, positions):
    """Megatron's rotary angles and cos/sin scale, from the module pretrain_gpt.py's model builds."""
    from megatron.core.models.common.embeddings.rotary_pos_embedding import RotaryEmbedding
    from megatron.core.models.common.embeddings.yarn_rotary_pos_embedding import YarnRotaryEmbedding
    real = torch.cuda.current_device
    torch.cuda.current_device = lambda: "cpu"  # the modules move their tables to the GPU on first use
    try:
        if ns.position_embedding_type == "yarn":
            rope = YarnRotaryEmbedding(
                kv_channels=head_dim, rotary_base=ns.rotary_base, use_cpu_initialization=True,
                scaling_factor=ns.yarn_scaling_factor or 1.0,
                original_max_position_embeddings=ns.yarn_original_max_position_embeddings or 4096,
                beta_fast=ns.yarn_beta_fast or 32.0, beta_slow=ns.yarn_beta_slow or 1.0,
                mscale=ns.yarn_mscale or 1.0, mscale_all_dim=ns.yarn_mscale_all_dim or 0.0,
                correction_range_round_to_int=ns.yarn_correction_range_round_to_int is not False)
            emb, scale = rope.get_emb(positions)
        else:
            rope = RotaryEmbedding(kv_channels=head_dim, rotary_percent=1.0, rotary_base=ns.rotary_base,
                                   rope_scaling=ns.rope_scaling, use_cpu_initialization=True,
                                   seq_len_interpolation_factor=ns.seq_len_interpolation_factor)
            emb, scale = rope.get_emb(positions), 1.0
    finally:
        torch.cuda.current_device = real
    return emb.reshape(positions, head_dim)[:, : head_dim // 2], float(scale)


def hf_angles(model, positions):
    """transformers' rotary angles and cos/sin scale for the model's config."""
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding
    params = {"rope_type": "default", **model.get("rope_scaling", {}), "rope_theta": model["rope_theta"]}
    config = LlamaConfig(hidden_size=model["hidden_size"], num_attention_heads=model["num_attention_heads"],
                         head_dim=model["head_dim"], max_position_embeddings=model.get("max_position_embeddings", 4096),
                         rope_parameters=params)
    rope = LlamaRotaryEmbedding(config)
    return torch.outer(torch.arange(positions, dtype=torch.float32), rope.inv_freq), float(rope.attention_scaling)


# name: (plan TOML after seq_len, model preset or file, sp, cp). Ulysses alone with the distributed
# optimizer offloaded, a Ulysses x ring hybrid of Qwen3 (q/k norms), a ring of Qwen2.5 (q/k/v biases)
# with YaRN, and Linear scaling on Qwen3.
YARN = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}
LINEAR = {"rope_type": "linear", "factor": 4.0}
MEGATRON = 'trainer = "megatron"\n'  # the trainer whose record has the megatron format
PLANS = {
    "megatron_llama_ulysses": ("llama-3.1-8b", None, 8, 1, 131072, MEGATRON,
                               'zero_stage = 1\noffload_optimizer = "cpu"\nact_ckpt = "full"\n'),
    "megatron_qwen3_hybrid": ("qwen3-4b", None, 4, 2, 262144, MEGATRON, "zero_stage = 3\n"),
    "megatron_qwen25_yarn_ring": ("qwen2.5-7b", YARN, 1, 4, 131072, MEGATRON,
                                  'cp_comm = "ring"\nzero_stage = 2\nact_ckpt = "full"\n'),
    "megatron_qwen3_linear": ("qwen3-0.6b", LINEAR, 2, 1, 65536, MEGATRON, "zero_stage = 0\n"),
}


def model_file(work, preset, scaling):
    """The preset's TOML, or a copy of it with [rope_scaling] added; its keys, as loaded."""
    path = os.path.join(os.environ["SPPLAN_CONFIG_DIR"], "models", preset + ".toml")
    with open(path, "rb") as f:
        model = tomllib.load(f)
    if scaling is None:
        return preset, model
    # Scaling needs the model's context; the Qwen3 presets omit it (their config.json says 40960).
    extra = {} if "max_position_embeddings" in model else {"max_position_embeddings": 40960}
    text = open(path).read() + "".join(f"{k} = {v}\n" for k, v in extra.items()) + "\n[rope_scaling]\n" + "".join(
        f"{k} = {v!r}\n" if not isinstance(v, str) else f'{k} = "{v}"\n' for k, v in scaling.items())
    path = os.path.join(work, f"{preset}-{scaling['rope_type']}.toml")
    with open(path, "w") as f:
        f.write(text)
    return path, {**model, **extra, "rope_scaling": scaling}


def expected_cp(sp, cp):
    if sp * cp == 1:
        return None, None
    if cp == 1:
        return "a2a", None
    return ("p2p", None) if sp == 1 else ("a2a+p2p", [sp, cp])


def check_plan(name, plan, check, run_export):
    preset, scaling, sp, cp, seq, head, knobs = plan["spec"]
    model, gpus = plan["model"], plan["gpus"]
    ns, unknown = parse(run_export(plan["path"], "megatron"))
    check(f"{name}: every pretrain_gpt.py flag is one Megatron-LM declares", not unknown, f"unknown {unknown}")
    c = configs(ns)
    t, ddp = c["config"], c["ddp"]
    qwen2, qwen3 = model["model_type"] == "qwen2", model["model_type"] == "qwen3"
    got = (t.num_layers, t.hidden_size, t.num_attention_heads, t.num_query_groups, t.kv_channels,
           t.ffn_hidden_size, t.normalization, t.layernorm_epsilon, t.gated_linear_unit,
           t.activation_func is F.silu, t.qk_layernorm, t.add_bias_linear, t.add_qkv_bias)
    want = (model["num_hidden_layers"], model["hidden_size"], model["num_attention_heads"],
            model["num_key_value_heads"], model["head_dim"], model["intermediate_size"], "RMSNorm",
            model["rms_norm_eps"], True, True, model.get("qk_norm", qwen3), False, model.get("attention_bias", qwen2))
    check(f"{name}: TransformerConfig describes {preset}", got == want, f"{got} != {want}")
    got = (t.context_parallel_size, t.cp_comm_type if sp * cp > 1 else None, t.hierarchical_context_parallel_sizes,
           t.tensor_model_parallel_size, t.pipeline_model_parallel_size)
    check(f"{name}: TransformerConfig's context parallel is sp x cp", got == (sp * cp, *expected_cp(sp, cp), 1, 1),
          f"{got}")
    zero = int(knobs.split("zero_stage = ")[1][0])
    got = (ddp.use_distributed_optimizer, ddp.use_megatron_fsdp, ddp.data_parallel_sharding_strategy)
    want = {0: (False, False, "no_shard"), 1: (True, False, "no_shard"), 2: (False, True, "optim_grads"),
            3: (False, True, "optim_grads_params")}[zero]
    check(f"{name}: DistributedDataParallelConfig is ZeRO {zero}", got == want, f"{got} != {want}")
    dp = gpus // (sp * cp)
    got = (ns.seq_length, ns.micro_batch_size, ns.global_batch_size, ns.vocab_size,
           ns.untie_embeddings_and_output_weights, ns.max_sequence_length)
    want = (seq, 1, dp, model["vocab_size"], not model["tie_word_embeddings"],
            max(seq, model.get("max_position_embeddings", 0)))
    check(f"{name}: sequence, batch, vocabulary and embeddings", got == want, f"{got} != {want}")
    # pretrain_gpt.py's model never receives --rope-scaling-factor: GPTModel's default 8 is used.
    check(f"{name}: --rope-scaling-factor is GPTModel's fixed 8 when written",
          ns.rope_scaling_factor in (None, 8.0), str(ns.rope_scaling_factor))
    positions = 4096
    mega, mega_scale = rope_angles(ns, model["head_dim"], positions)
    hf, hf_scale = hf_angles(model, positions)
    err = float(((mega - hf).abs() / hf.abs().clamp(min=1e-30)).max())
    check(f"{name}: Megatron's RoPE is transformers' for {preset} ({ns.position_embedding_type})",
          err < 1e-5 and abs(mega_scale - hf_scale) < 1e-12, f"max relative angle error {err}, "
          f"scale {mega_scale} vs {hf_scale}")


def check_refusals(work, check, spplan):
    """Models Megatron-LM's arguments cannot describe: one line, exit 2."""
    cases = {"dynamic": ({"rope_type": "dynamic", "factor": 2.0}, 'key "model.rope_scaling.rope_type": value '
                         '"dynamic" cannot be expressed for Megatron-LM'),
             "llama3_factor_32": ({"rope_type": "llama3", "factor": 32.0, "low_freq_factor": 1.0,
                                   "high_freq_factor": 4.0, "original_max_position_embeddings": 8192},
                                  'key "model.rope_scaling.factor": value 32 cannot be expressed for Megatron-LM')}
    for case, (scaling, message) in cases.items():
        path, _ = model_file(work, "qwen3-4b", scaling)
        plan_path = os.path.join(work, f"megatron_refused_{case}.toml")
        with open(plan_path, "w") as f:
            f.write(f'seq_len = 65536\n{MEGATRON}[model]\npreset = "{path}"\n[gpu]\npreset = "h100-80gb"\n'
                    "[cluster]\nnum_gpus = 4\n[knobs]\nsp = 4\nzero_stage = 3\n")
        r = subprocess.run([spplan, "export", "--plan", plan_path, "--format", "megatron"], capture_output=True,
                           text=True)
        lines = r.stderr.strip().splitlines()
        check(f"megatron export refuses {case}", r.returncode == 2 and len(lines) == 1 and message in lines[0],
              f"exit {r.returncode}: {r.stderr.strip()}")


def check_megatron(spplan, work, check, run_export):
    from megatron.core.transformer import TransformerConfig
    fields = {f.name: f for f in dataclasses.fields(TransformerConfig)}
    for flag, (_, (where, dest)) in FLAGS.items():
        if where == "config":  # a stale entry would map a flag to a field Megatron no longer has
            check(f"megatron: {flag} is TransformerConfig.{dest}'s flag",
                  dest in fields and flag in flag_names(TransformerConfig, fields[dest]) + ["--cp-comm-type"],
                  "no such field" if dest not in fields else str(flag_names(TransformerConfig, fields[dest])))
    for name, spec in PLANS.items():
        preset, scaling, sp, cp, seq, head, knobs = spec
        path, model = model_file(work, preset, scaling)
        gpus = 8 if sp * cp <= 8 else 16
        plan_path = os.path.join(work, name + ".toml")
        with open(plan_path, "w") as f:
            f.write(f"seq_len = {seq}\n{head}[model]\npreset = \"{path}\"\n[gpu]\npreset = \"h100-80gb\"\n"
                    f"[cluster]\nnum_gpus = {gpus}\n[knobs]\nsp = {sp}\ncp = {cp}\n{knobs}")
        try:
            check_plan(name, {"spec": spec, "model": model, "gpus": gpus, "path": plan_path}, check, run_export)
        except Exception as e:
            check(f"{name}: Megatron-LM", False, f"{type(e).__name__}: {str(e)[:400]}")
    check_refusals(work, check, spplan)
