"""Reference numbers from Hugging Face transformers for tests/engine/io/hf_weights_test.cpp.

  hf_reference.py make DIR --arch llama|qwen3 --seq S --sequences N
      Builds a small random LlamaForCausalLM (untied head) or Qwen3ForCausalLM (tied, q/k norms),
      saves it with save_pretrained (safetensors) to DIR/model, writes N sequences of random
      tokens to DIR/tokens.u16.bin, and prints the loss and gradient norm of sequence 0.
  hf_reference.py loss MODEL_DIR --data FILE --seq S --index K
      Loads MODEL_DIR with AutoModelForCausalLM and prints the loss and gradient norm of
      sequence K of FILE.

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


def small_config(arch, seq):
    common = dict(vocab_size=256, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2, head_dim=16, rms_norm_eps=1e-6,
                  rope_theta=1000000.0, max_position_embeddings=max(seq, 2048), hidden_act="silu",
                  attention_dropout=0.0)
    if arch == "llama":
        return transformers.LlamaConfig(tie_word_embeddings=False, attention_bias=False, mlp_bias=False, **common)
    return transformers.Qwen3Config(tie_word_embeddings=True, attention_bias=False, use_sliding_window=False, **common)


def sequence(tokens, seq, index):
    # TokenSource::window: positions index * seq + t for t in [0, seq], wrapping around the file.
    pos = (index * seq + np.arange(seq + 1)) % len(tokens)
    window = torch.from_numpy(tokens[pos].astype(np.int64))
    return window[:-1].unsqueeze(0), window[1:]


def loss_and_grad_norm(model, tokens, seq, index):
    model.zero_grad()
    inputs, labels = sequence(tokens, seq, index)
    logits = model(input_ids=inputs).logits[0].float()
    loss = F.cross_entropy(logits, labels, reduction="mean")
    loss.backward()
    squares = sum(p.grad.double().pow(2).sum() for p in model.parameters() if p.grad is not None)
    return {"loss": loss.item(), "grad_norm": squares.sqrt().item()}


def load(model_dir):
    return transformers.AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32,
                                                             attn_implementation="eager")


def make(args):
    torch.manual_seed(args.seed)
    model = transformers.AutoModelForCausalLM.from_config(small_config(args.arch, args.seq),
                                                          attn_implementation="eager").float()
    with torch.no_grad():  # norms away from 1, so a misplaced norm weight shows in the loss
        for name, p in model.named_parameters():
            if p.dim() == 1:
                p.mul_(1 + 0.2 * torch.randn_like(p))
    model_dir = os.path.join(args.dir, "model")
    model.save_pretrained(model_dir, safe_serialization=True)
    rng = np.random.default_rng(args.seed)
    tokens = rng.integers(0, 256, size=args.sequences * args.seq + 1, dtype=np.uint16)
    tokens.astype("<u2").tofile(os.path.join(args.dir, "tokens.u16.bin"))
    print(json.dumps(loss_and_grad_norm(load(model_dir), tokens, args.seq, 0)))


def loss(args):
    tokens = np.fromfile(args.data, dtype="<u2")
    print(json.dumps(loss_and_grad_norm(load(args.model_dir), tokens, args.seq, args.index)))


def main():
    torch.set_num_threads(1)
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="mode", required=True)
    m = sub.add_parser("make")
    m.add_argument("dir")
    m.add_argument("--arch", choices=["llama", "qwen3"], required=True)
    m.add_argument("--seq", type=int, required=True)
    m.add_argument("--sequences", type=int, default=8)
    m.add_argument("--seed", type=int, default=0)
    lo = sub.add_parser("loss")
    lo.add_argument("model_dir")
    lo.add_argument("--data", required=True)
    lo.add_argument("--seq", type=int, required=True)
    lo.add_argument("--index", type=int, required=True)
    args = p.parse_args()
    make(args) if args.mode == "make" else loss(args)


if __name__ == "__main__":
    main()
