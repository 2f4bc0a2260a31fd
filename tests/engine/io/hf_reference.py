"""Reference numbers from Hugging Face transformers for tests/engine/io/hf_weights_test.cpp.

  hf_reference.py make DIR --arch llama|qwen3|qwen2|mistral|qwen3_moe|mixtral|glm4_moe [--router-logits]
                    [--rope TYPE] [--layout v4|v5] [--window W] --seq S --sequences N
      Builds a small random LlamaForCausalLM (untied head), Qwen3ForCausalLM (tied, q/k norms),
      Qwen2ForCausalLM (q/k/v biases), MistralForCausalLM (a sliding window longer than S, or of W
      tokens with --window, also printing the loss of the same weights without it),
      Qwen3MoeForCausalLM or MixtralForCausalLM (4 experts, 2 a token; --router-logits adds the
      load-balancing loss, which the loss printed then includes as transformers adds it),
      Glm4MoeForCausalLM (a dense first layer, then 4 experts in 2 groups and a shared expert),
      with RoPE scaling TYPE (default, linear, dynamic, yarn, llama3: ROPE below, sized so that
      each changes the frequencies at S), saves it with save_pretrained (safetensors) to
      DIR/model, writes N sequences of random tokens to DIR/tokens.u16.bin, and prints the loss
      and gradient norm of sequence 0. --layout v4 rewrites the saved config.json the way
      transformers 4 wrote it (rope_theta and "rope_scaling" at the top level).
  hf_reference.py loss MODEL_DIR --data FILE --seq S --index K
      Loads MODEL_DIR with AutoModelForCausalLM and prints the loss and gradient norm of
      sequence K of FILE.

  hf_reference.py train MODEL_DIR --data FILE --seq S --steps K --lr X --weight-decay W [--decay-all]
      Trains K steps of one sequence each (sequence k at step k) with torch.optim.AdamW (betas 0.9,
      0.95, eps 1e-8: the engine's defaults) at a constant rate, its parameters grouped as the
      Hugging Face Trainer groups them (Trainer.get_decay_parameter_names: no decay on biases and
      norm weights), or all decayed with --decay-all; prints {"losses": [...]}.

  hf_reference.py docs MODEL_DIR --data FILE --seq S --eos E
      The loss and gradient norm of sequence 0 of FILE when each document in it (ended by token E)
      runs through the model alone, from position 0: the token losses of all documents summed,
      over their count (what the engine's --eos-id must give for the packed sequence).

Sequence K is what the engine's TokenSource::window(K, S) reads (engine/io/data.cpp): tokens
[K S, K S + S] of the file, inputs the first S, labels the last S; the loss is the mean token
cross-entropy and the gradient norm the L2 norm of all gradients (one batch, fp32, no optimizer).
Prints one JSON object: {"loss": ..., "grad_norm": ...}. Nothing is downloaded.
"""
import argparse
import json
import os

import numpy as np
import torch
import torch.nn.functional as F
import transformers


# RoPE scaling per type, for S = 256 and head_dim 16 at theta 10000: dynamic rescales past
# max_position_embeddings (128 < S); llama3's original context 64 puts the 8 frequencies' wavelengths
# (6.3 to 4,000) on both sides of its 16 to 64 band; yarn's ramp spans them at original context 64.
ROPE = {
    "linear": ({"rope_type": "linear", "factor": 2.0}, 2048),
    "dynamic": ({"rope_type": "dynamic", "factor": 2.0}, 128),
    "yarn": ({"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64}, 256),
    "llama3": ({"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                "original_max_position_embeddings": 64}, 2048),
}


def small_config(arch, seq, rope, router_logits=False, window=0):
    theta = 1000000.0 if rope == "default" else 10000.0
    scaling, context = ROPE.get(rope, ({"rope_type": "default"}, max(seq, 2048)))
    common = dict(vocab_size=256, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2, head_dim=16, rms_norm_eps=1e-6,
                  rope_parameters=dict(scaling, rope_theta=theta), max_position_embeddings=context,
                  hidden_act="silu", attention_dropout=0.0)
    if arch == "llama":
        return transformers.LlamaConfig(tie_word_embeddings=False, attention_bias=False, mlp_bias=False, **common)
    if arch == "qwen2":
        return transformers.Qwen2Config(tie_word_embeddings=False, use_sliding_window=False, **common)
    if arch == "mistral":
        return transformers.MistralConfig(tie_word_embeddings=False, sliding_window=window or 4 * seq, **common)
    # Mixtures: 4 experts, 2 a token, with the load-balancing loss at a weight that moves the loss by
    # about 1e-2 (router_logits); Qwen3-MoE with norm_topk_prob off (its class default: the top-k
    # weights as the softmax gave them), Mixtral always dividing by their sum.
    moe = dict(num_experts_per_tok=2, output_router_logits=router_logits, router_aux_loss_coef=0.01)
    if arch == "qwen3_moe":
        return transformers.Qwen3MoeConfig(tie_word_embeddings=False, num_experts=4, moe_intermediate_size=32,
                                           norm_topk_prob=False, use_sliding_window=False, **moe, **common)
    if arch == "mixtral":
        common = dict(common, intermediate_size=32)  # Mixtral's experts are intermediate_size wide
        return transformers.MixtralConfig(tie_word_embeddings=False, num_local_experts=4, sliding_window=None,
                                          **moe, **common)
    if arch == "glm4_moe":
        # GLM-4.5's mixture on layer 1 (layer 0 dense), a shared expert, the sigmoid router picking
        # among the better of two groups of two experts and scaling its weights, q/k norms and q/k/v
        # biases, RoPE on part of each head; no load-balancing loss.
        # A quarter of each head rotated (GLM-4.5's 0.5 is Glm4MoeConfig's default: a factor lost on the way
        # would not show with it).
        common["rope_parameters"] = dict(common["rope_parameters"], partial_rotary_factor=0.25)
        return transformers.Glm4MoeConfig(tie_word_embeddings=False, n_routed_experts=4, num_experts_per_tok=2,
                                          moe_intermediate_size=32, n_shared_experts=1, first_k_dense_replace=1,
                                          n_group=2, topk_group=1, routed_scaling_factor=2.5, norm_topk_prob=True,
                                          use_qk_norm=True, attention_bias=True, **common)
    return transformers.Qwen3Config(tie_word_embeddings=True, attention_bias=False, use_sliding_window=False, **common)


def rewrite_as_v4(model_dir):
    path = os.path.join(model_dir, "config.json")
    with open(path) as f:
        config = json.load(f)
    params = config.pop("rope_parameters")
    config["rope_theta"] = params.pop("rope_theta")
    config["rope_scaling"] = None if params.get("rope_type") == "default" else params
    with open(path, "w") as f:
        json.dump(config, f, indent=2)


def sequence(tokens, seq, index):
    # TokenSource::window: positions index * seq + t for t in [0, seq], wrapping around the file.
    pos = (index * seq + np.arange(seq + 1)) % len(tokens)
    window = torch.from_numpy(tokens[pos].astype(np.int64))
    return window[:-1].unsqueeze(0), window[1:]


def aux_term(model, out):
    # What *ForCausalLM adds to the loss when config.output_router_logits (its aux_loss, weighted).
    return model.config.router_aux_loss_coef * out.aux_loss if getattr(out, "aux_loss", None) is not None else 0.0


def loss_and_grad_norm(model, tokens, seq, index):
    model.zero_grad()
    inputs, labels = sequence(tokens, seq, index)
    out = model(input_ids=inputs)
    loss = F.cross_entropy(out.logits[0].float(), labels, reduction="mean") + aux_term(model, out)
    loss.backward()
    squares = sum(p.grad.double().pow(2).sum() for p in model.parameters() if p.grad is not None)
    return {"loss": loss.item(), "grad_norm": squares.sqrt().item()}


def documents_alone(model, tokens, seq, eos):
    # The engine's labels (data.cpp shard_of): token t + 1, ignored where token t is the EOS.
    model.zero_grad()
    window = torch.from_numpy(tokens[: seq + 1].astype(np.int64))
    inputs, labels = window[:-1], window[1:].clone()
    labels[inputs == eos] = -100
    starts = [0] + [t + 1 for t in range(seq - 1) if inputs[t] == eos]
    ends = starts[1:] + [seq]
    count = int((labels != -100).sum())
    total = 0.0
    for a, b in zip(starts, ends):
        logits = model(input_ids=inputs[a:b].unsqueeze(0)).logits[0].float()
        doc = F.cross_entropy(logits, labels[a:b], reduction="sum", ignore_index=-100)
        (doc / count).backward()
        total += doc.item()
    squares = sum(p.grad.double().pow(2).sum() for p in model.parameters() if p.grad is not None)
    return {"loss": total / count, "grad_norm": squares.sqrt().item(), "documents": len(starts)}


def load(model_dir):
    # Eager experts: the loop the engine runs (grouped_mm, transformers 5's default where it can
    # dispatch, computes the same numbers in another summation order).
    return transformers.AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32,
                                                             attn_implementation="eager", experts_implementation="eager")


def make(args):
    torch.manual_seed(args.seed)
    config = small_config(args.arch, args.seq, args.rope, args.router_logits, args.window)
    model = transformers.AutoModelForCausalLM.from_config(config, attn_implementation="eager").float()
    with torch.no_grad():  # norms away from 1 and biases away from 0, so a misplaced one shows in the loss
        for name, p in model.named_parameters():
            if name.endswith(("q_proj.weight", "k_proj.weight")):
                p.normal_(0.0, 0.5)  # sharp attention: RoPE's frequencies move the loss by ~1e-3
            elif name.endswith("gate.weight"):
                p.normal_(0.0, 0.5)  # a router far from uniform: no near-ties in the top k
            elif name.endswith(".bias"):
                p.normal_(0.0, 0.1)
            elif p.dim() == 1:
                p.mul_(1 + 0.2 * torch.randn_like(p))
        for name, b in model.named_buffers():  # GLM's correction bias: a buffer that changes which experts are chosen
            if name.endswith("e_score_correction_bias"):
                b.normal_(0.0, 0.5)
    model_dir = os.path.join(args.dir, "model")
    model.save_pretrained(model_dir, safe_serialization=True)
    if args.layout == "v4":
        rewrite_as_v4(model_dir)
    rng = np.random.default_rng(args.seed)
    tokens = rng.integers(0, 256, size=args.sequences * args.seq + 1, dtype=np.uint16)
    tokens.astype("<u2").tofile(os.path.join(args.dir, "tokens.u16.bin"))
    result = loss_and_grad_norm(load(model_dir), tokens, args.seq, 0)
    if args.rope != "default":
        # The same weights under unscaled RoPE at the same theta: how far the scaling moves the loss,
        # so the test can show its tolerance would catch a scaling computed wrong.
        config = load(model_dir).config
        config.rope_parameters = {"rope_type": "default", "rope_theta": config.rope_parameters["rope_theta"]}
        plain = transformers.AutoModelForCausalLM.from_config(config, attn_implementation="eager").float()
        plain.load_state_dict(model.state_dict())
        result["loss_default_rope"] = loss_and_grad_norm(plain, tokens, args.seq, 0)["loss"]
    if args.window:
        # The same weights attending over the whole sequence: how far the window moves the loss.
        config = load(model_dir).config
        config.sliding_window = None
        full = transformers.AutoModelForCausalLM.from_config(config, attn_implementation="eager").float()
        full.load_state_dict(model.state_dict())
        result["loss_full_attention"] = loss_and_grad_norm(full, tokens, args.seq, 0)["loss"]
    print(json.dumps(result))


def loss(args):
    tokens = np.fromfile(args.data, dtype="<u2")
    print(json.dumps(loss_and_grad_norm(load(args.model_dir), tokens, args.seq, args.index)))


def train(args):
    tokens = np.fromfile(args.data, dtype="<u2")
    model = load(args.model_dir)
    # The Trainer's own grouping rule (it reads no Trainer state), so the test holds the engine to it.
    decay = set(transformers.Trainer.get_decay_parameter_names(None, model))
    if args.decay_all:
        decay = {name for name, _ in model.named_parameters()}
    groups = [{"params": [p for n, p in model.named_parameters() if n in decay], "weight_decay": args.weight_decay},
              {"params": [p for n, p in model.named_parameters() if n not in decay], "weight_decay": 0.0}]
    opt = torch.optim.AdamW([g for g in groups if g["params"]], lr=args.lr, betas=(0.9, 0.95), eps=1e-8)
    losses = []
    for step in range(args.steps):
        opt.zero_grad()
        inputs, labels = sequence(tokens, args.seq, step)
        out = model(input_ids=inputs)
        loss = F.cross_entropy(out.logits[0].float(), labels, reduction="mean") + aux_term(model, out)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    print(json.dumps({"losses": losses, "no_decay": sorted(set(n for n, _ in model.named_parameters()) - decay)}))


def docs(args):
    tokens = np.fromfile(args.data, dtype="<u2")
    print(json.dumps(documents_alone(load(args.model_dir), tokens, args.seq, args.eos)))


def main():
    torch.set_num_threads(1)
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="mode", required=True)
    m = sub.add_parser("make")
    m.add_argument("dir")
    m.add_argument("--arch", choices=["llama", "qwen3", "qwen2", "mistral", "qwen3_moe", "mixtral", "glm4_moe"],
                   required=True)
    m.add_argument("--router-logits", action="store_true", help="a mixture's load-balancing loss (output_router_logits)")
    m.add_argument("--rope", choices=["default"] + list(ROPE), default="default")
    m.add_argument("--window", type=int, default=0, help="Mistral's sliding_window (shorter than --seq: windowed)")
    m.add_argument("--layout", choices=["v4", "v5"], default="v5")
    m.add_argument("--seq", type=int, required=True)
    m.add_argument("--sequences", type=int, default=8)
    m.add_argument("--seed", type=int, default=0)
    lo = sub.add_parser("loss")
    lo.add_argument("model_dir")
    lo.add_argument("--data", required=True)
    lo.add_argument("--seq", type=int, required=True)
    lo.add_argument("--index", type=int, required=True)
    d = sub.add_parser("docs")
    d.add_argument("model_dir")
    d.add_argument("--data", required=True)
    d.add_argument("--seq", type=int, required=True)
    d.add_argument("--eos", type=int, required=True)
    t = sub.add_parser("train")
    t.add_argument("model_dir")
    t.add_argument("--data", required=True)
    t.add_argument("--seq", type=int, required=True)
    t.add_argument("--steps", type=int, required=True)
    t.add_argument("--lr", type=float, required=True)
    t.add_argument("--weight-decay", type=float, required=True)
    t.add_argument("--decay-all", action="store_true")
    args = p.parse_args()
    {"make": make, "loss": loss, "docs": docs, "train": train}[args.mode](args)


if __name__ == "__main__":
    main()
