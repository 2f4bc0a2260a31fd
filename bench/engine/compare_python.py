#!/usr/bin/env python3
"""One training step of the same model, same sequence, same data and the same initial weights in
spplan-engine (LibTorch, C++) and in PyTorch's Python front end (the venv's torch), side by side.

Prints both step times, their ratio (python / engine: > 1 means the engine is faster) and the first
losses of both (they must agree: same weights, same tokens, same math), e.g.

  bench/engine/compare_python.py --engine build/bin/spplan-engine --model configs/models/tiny-llama.toml

Method: both run --steps N (default 4) on one process with the same thread count; the first step
of each run is a warm-up and is dropped; runs alternate engine, Python, engine, ... --repeats times
(the build machines are shared and noisy) and each side's time is the median of all its kept steps.
The Python model mirrors engine/model/model.cpp (fused qkv and gate/up projections, RMSNorm, RoPE, SDPA,
token-summed cross-entropy / tokens, torch.optim.AdamW with the engine's settings).
"""
import argparse
import json
import statistics
import os
import subprocess
import sys
import tempfile
import time
import tomllib

import torch
import torch.nn.functional as F


def load_model_toml(path):
    with open(path, "rb") as f:
        m = tomllib.load(f)
    m.setdefault("num_key_value_heads", m["num_attention_heads"])
    m.setdefault("head_dim", m["hidden_size"] // m["num_attention_heads"])
    m.setdefault("tie_word_embeddings", False)
    m.setdefault("rope_theta", 10000.0)
    m.setdefault("rms_norm_eps", 1e-6)
    m.setdefault("qk_norm", m.get("model_type", "") in ("qwen3", "qwen3_moe"))
    return m


class Decoder(torch.nn.Module):
    """The engine's decoder, parameters created in the engine's order from one seeded generator."""

    def __init__(self, m, seed):
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        h, d, i, V = m["hidden_size"], m["head_dim"], m["intermediate_size"], m["vocab_size"]
        nh, nkv = m["num_attention_heads"], m["num_key_value_heads"]
        self.m = m

        def mat(*shape):
            return torch.nn.Parameter(torch.empty(*shape).normal_(0.0, 0.02, generator=g))

        def norm(n):
            return torch.nn.Parameter(torch.ones(n))

        self.embed = mat(V, h)
        self.layers = torch.nn.ModuleList()
        for _ in range(m["num_hidden_layers"]):
            L = torch.nn.Module()
            L.attn_norm = norm(h)
            L.wqkv = mat((nh + 2 * nkv) * d, h)
            if m["qk_norm"]:
                L.q_norm, L.k_norm = norm(d), norm(d)
            L.wo = mat(h, nh * d)
            L.mlp_norm = norm(h)
            L.w_gate_up = mat(2 * i, h)
            L.w_down = mat(h, i)
            self.layers.append(L)
        self.final_norm = norm(h)
        self.lm_head = self.embed if m["tie_word_embeddings"] else mat(V, h)

    def rope(self, n):
        d = self.m["head_dim"]
        inv = 1.0 / (self.m["rope_theta"] ** (torch.arange(0, d, 2, dtype=torch.float32) / d))
        ang = torch.outer(torch.arange(n, dtype=torch.float32), inv)
        return ang.cos().view(1, n, 1, d // 2), ang.sin().view(1, n, 1, d // 2)

    @staticmethod
    def apply_rope(x, cos, sin):
        x1, x2 = x.chunk(2, dim=-1)
        return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)

    def forward(self, tokens, labels):
        m, eps = self.m, self.m["rms_norm_eps"]
        b, n = tokens.shape
        h, d, i = m["hidden_size"], m["head_dim"], m["intermediate_size"]
        nh, nkv = m["num_attention_heads"], m["num_key_value_heads"]
        cos, sin = self.rope(n)
        x = F.embedding(tokens, self.embed)
        for L in self.layers:
            q, k, v = F.linear(F.rms_norm(x, (h,), L.attn_norm, eps), L.wqkv).split([nh * d, nkv * d, nkv * d], -1)
            q, k, v = q.view(b, n, nh, d), k.view(b, n, nkv, d), v.view(b, n, nkv, d)
            if m["qk_norm"]:
                q, k = F.rms_norm(q, (d,), L.q_norm, eps), F.rms_norm(k, (d,), L.k_norm, eps)
            q, k = self.apply_rope(q, cos, sin), self.apply_rope(k, cos, sin)
            k = k.repeat_interleave(nh // nkv, dim=2)
            v = v.repeat_interleave(nh // nkv, dim=2)
            a = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
            x = x + F.linear(a.transpose(1, 2).reshape(b, n, nh * d), L.wo)
            gate, up = F.linear(F.rms_norm(x, (h,), L.mlp_norm, eps), L.w_gate_up).chunk(2, dim=-1)
            x = x + F.linear(F.silu(gate) * up, L.w_down)
        logits = F.linear(F.rms_norm(x, (h,), self.final_norm, eps), self.lm_head)
        return F.cross_entropy(logits.view(-1, m["vocab_size"]), labels.reshape(-1), reduction="sum")


def python_run(m, tokens, seq, steps, seed):
    model = Decoder(m, seed)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.1)
    losses, times = [], []
    for s in range(steps):
        w = tokens[s * seq: s * seq + seq + 1].long()
        inputs, labels = w[:-1].view(1, seq), w[1:].view(1, seq)
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss_sum = model(inputs, labels)
        (loss_sum / seq).backward()
        opt.step()
        times.append(time.perf_counter() - t0)
        losses.append(loss_sum.item() / seq)
    return losses, times[1:] if len(times) > 1 else times


def engine_run(engine, model_path, data_path, seq, steps, seed, threads, sp=1):
    env = dict(os.environ, OMP_NUM_THREADS=str(max(1, threads // sp)))
    cmd = [engine, "run", "--model", model_path, "--seq", str(seq), "--sp", str(sp), "--nproc", str(sp),
           "--steps", str(steps), "--seed", str(seed), "--data", data_path, "--json"]
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    j = json.loads(out)
    times = j["step_times_s"]
    return j["losses"], times[1:] if len(times) > 1 else times


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--engine", required=True, help="path to spplan-engine")
    p.add_argument("--model", default=os.path.join(os.path.dirname(__file__), "../../configs/models/tiny-llama.toml"))
    p.add_argument("--seq", type=int, default=4096)
    p.add_argument("--steps", type=int, default=4)
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--also-sp", type=int, default=0,
                   help="also time the engine with --sp P --nproc P on the same cores (threads split)")
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    m = load_model_toml(a.model)
    gen = torch.Generator().manual_seed(a.seed)
    tokens = torch.randint(0, m["vocab_size"], (a.steps * a.seq + 1,), generator=gen, dtype=torch.int64)
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "tokens.u32.bin")
        with open(data, "wb") as f:
            f.write(tokens.to(torch.int32).numpy().tobytes())
        e_times, p_times, sp_times = [], [], []
        for _ in range(a.repeats):
            e_losses, e_s = engine_run(a.engine, a.model, data, a.seq, a.steps, a.seed, a.threads)
            p_losses, p_s = python_run(m, tokens, a.seq, a.steps, a.seed)
            e_times += e_s
            p_times += p_s
            if a.also_sp > 1:
                sp_times += engine_run(a.engine, a.model, data, a.seq, a.steps, a.seed, a.threads, a.also_sp)[1]
    best_e, best_p = statistics.median(e_times), statistics.median(p_times)
    print(f"model {m.get('name', a.model)}  seq {a.seq}  threads {a.threads}  torch {torch.__version__}")
    print(f"first losses  engine {e_losses[0]:.6f}  python {p_losses[0]:.6f}  "
          f"(rel diff {abs(e_losses[0] - p_losses[0]) / abs(p_losses[0]):.1e})")
    print(f"step time (median of {len(e_times)} steps each)  engine {best_e:.3f} s  python {best_p:.3f} s")
    print(f"ratio python/engine {best_p / best_e:.3f}  ({'engine faster' if best_p >= best_e else 'python faster'})")
    if a.also_sp > 1:
        best_sp = statistics.median(sp_times)
        print(f"engine --sp {a.also_sp} --nproc {a.also_sp}: {best_sp:.3f} s  (ratio python/engine {best_p / best_sp:.3f})")
    return 0 if abs(e_losses[0] - p_losses[0]) <= 1e-4 * abs(p_losses[0]) else 1


if __name__ == "__main__":
    sys.exit(main())
