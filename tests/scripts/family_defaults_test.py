"""Every family spplan prices, read from a config.json holding only its model_type, is the model
transformers' AutoConfig.for_model(model_type) builds: spplan's defaults table
(planner/config/family_defaults.cpp) checked key by key against the installed transformers.

For each family named in spplan's own refusal of an unknown model_type (so a family added there is
checked here too), writes {"model_type": T} to a temporary folder, lets `spplan plan --out` write
the model it read into a plan file and compares that [model] table with the config class's values:
shapes, tying, window and windowed layers (layer_types), context, RoPE, biases and the mixture's
keys. Gemma 2's default soft-capping is refused by spplan, so that is checked, then the family is
read with both caps null. Usage: family_defaults_test.py SPPLAN_BINARY
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import tomllib

import transformers
from transformers import AutoConfig

SPPLAN = sys.argv[1]


def spplan(*args):
    return subprocess.run([SPPLAN, *args], capture_output=True, text=True)


def priced_families(folder):
    """The families spplan prices, from its refusal of one it does not."""
    path = os.path.join(folder, "unknown", "config.json")
    os.makedirs(os.path.dirname(path))
    with open(path, "w") as f:
        json.dump({"model_type": "no_such_family"}, f)
    r = spplan("fit", "--model", path, "--gpu", "h200-141gb", "--gpus", "8", "--seq", "1024")
    found = re.search(r"\(allowed: ([a-z0-9_, ]+); or a model TOML", r.stderr)
    assert r.returncode == 2 and found, r.stderr
    return found.group(1).split(", ")


def text_config(config):
    """The language model's config: a multimodal class's text_config (Gemma3Config's)."""
    return config.text_config if hasattr(config, "text_config") and config.text_config is not None else config


def expected_model(model_type, config):
    """The [model] keys spplan's plan file writes, as transformers' config holds them."""
    c = text_config(config)
    layers, heads = c.num_hidden_layers, c.num_attention_heads
    want = {
        "num_hidden_layers": layers,
        "hidden_size": c.hidden_size,
        "num_attention_heads": heads,
        "num_key_value_heads": getattr(c, "num_key_value_heads", None) or heads,
        "head_dim": getattr(c, "head_dim", None) or c.hidden_size // heads,
        "intermediate_size": c.intermediate_size,
        "vocab_size": c.vocab_size,
        "tie_word_embeddings": c.tie_word_embeddings,
        "rms_norm_eps": c.rms_norm_eps,
        "max_position_embeddings": c.max_position_embeddings,
    }
    rope = c.rope_parameters or {}
    rope = rope.get("full_attention", rope)  # Gemma 3: its full layers' RoPE
    want["rope_theta"] = rope["rope_theta"]
    if rope.get("rope_type", "default") != "default":
        want["rope_scaling.rope_type"] = rope["rope_type"]
        want["rope_scaling.factor"] = rope["factor"]
    # The window: every layer_types "sliding_attention" layer, or every layer without layer_types.
    window = getattr(c, "sliding_window", None) or 0
    types = getattr(c, "layer_types", None)
    windowed = (types.count("sliding_attention") if types else layers) if window else 0
    want["sliding_window"] = window if windowed else 0
    want["windowed_layers"] = windowed
    # Qwen2Attention's q/k/v are biased whatever the config says (bias=True).
    want["attention_bias"] = True if model_type == "qwen2" else bool(getattr(c, "attention_bias", False))
    experts = getattr(c, "n_routed_experts", None) or getattr(c, "num_local_experts", None) or 0
    if experts > 1:
        want["num_experts"] = experts
        want["num_experts_per_tok"] = c.num_experts_per_tok
        want["moe_intermediate_size"] = getattr(c, "moe_intermediate_size", None) or c.intermediate_size
    if model_type in ("qwen3_moe", "glm4_moe"):
        want["norm_topk_prob"] = c.norm_topk_prob
    if model_type == "glm4_moe":
        want["n_shared_experts"] = c.n_shared_experts
        want["first_k_dense_replace"] = c.first_k_dense_replace
        want["partial_rotary_factor"] = rope["partial_rotary_factor"]
        want["qk_norm"] = c.use_qk_norm
    if model_type == "gpt_oss":
        want["swiglu_limit"] = c.swiglu_limit
    return want


def read_model(plan_path):
    """The plan file's [model] table in expected_model's keys (a key left out is its default)."""
    with open(plan_path, "rb") as f:
        m = tomllib.load(f)["model"]
    got = {k: m[k] for k in ("num_hidden_layers", "hidden_size", "num_attention_heads", "num_key_value_heads",
                              "head_dim", "intermediate_size", "vocab_size", "tie_word_embeddings", "rms_norm_eps",
                              "rope_theta")}
    got["max_position_embeddings"] = m.get("max_position_embeddings", 0)
    got["sliding_window"] = m.get("sliding_window", 0)
    got["windowed_layers"] = m["num_hidden_layers"] - m.get("full_attention_layers", 0) if got["sliding_window"] else 0
    got["attention_bias"] = m.get("attention_bias", False)
    for key in ("num_experts", "num_experts_per_tok", "moe_intermediate_size", "swiglu_limit", "first_k_dense_replace",
                "qk_norm"):
        if key in m:
            got[key] = m[key]
    got["norm_topk_prob"] = m.get("norm_topk_prob", True)
    got["n_shared_experts"] = m.get("n_shared_experts", 0)
    got["partial_rotary_factor"] = m.get("partial_rotary_factor", 1.0)
    for key, value in m.get("rope_scaling", {}).items():
        got["rope_scaling." + key] = value
    return got


def plan_model(folder, model_type, keys):
    """spplan's reading of a config.json holding `keys`: the plan's model, or its refusal."""
    path = os.path.join(folder, model_type + str(len(keys)), "config.json")
    os.makedirs(os.path.dirname(path))
    with open(path, "w") as f:
        json.dump(keys, f)
    plan = os.path.join(os.path.dirname(path), "plan.toml")
    r = spplan("plan", "--model", path, "--gpu", "h200-141gb", "--gpus", "64", "--seq", "1024", "--trainer", "hf",
               "--out", plan)
    return (read_model(plan), "") if r.returncode == 0 else (None, r.stderr.strip())


def main():
    failures = []
    with tempfile.TemporaryDirectory() as folder:
        families = priced_families(folder)
        for model_type in families:
            keys = {"model_type": model_type}
            config = AutoConfig.for_model(model_type)
            c = text_config(config)
            if getattr(c, "attn_logit_softcapping", None) is not None:  # Gemma 2: refused, as it caps
                _, refusal = plan_model(folder, model_type, keys)
                if 'key "attn_logit_softcapping": value 50.0 is logit soft-capping' not in refusal:
                    failures.append(f"{model_type}: its default soft-capping is not refused: {refusal!r}")
                keys.update(attn_logit_softcapping=None, final_logit_softcapping=None)
                config = AutoConfig.for_model(model_type, attn_logit_softcapping=None, final_logit_softcapping=None)
            got, refusal = plan_model(folder, model_type, keys)
            if got is None:
                failures.append(f"{model_type}: refused: {refusal}")
                continue
            want = expected_model(model_type, config)
            wrong = {k: (got.get(k), v) for k, v in want.items() if got.get(k) != v}
            if wrong:
                failures.append(f"{model_type}: spplan, transformers differ at " +
                                ", ".join(f"{k} {g!r} vs {w!r}" for k, (g, w) in sorted(wrong.items())))
    for failure in failures:
        print("FAIL: " + failure)
    print(f"{len(families)} families against transformers {transformers.__version__}'s AutoConfig: "
          f"{len(families) - len(failures)} agree")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
