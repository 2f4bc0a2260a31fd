"""DeepSpeed ZeRO 3 against ZeRO 2 on one GPU (compare_gpu.py --zero-sweep): its cases, the chunked
loss both runners train with, and the count of the parameter gathers ZeRO 3 makes.

On the H200 of 30 November (validation/gpu/h200-141gb-2026-11-30/compare_gpu.jsonl) ZeRO 3 ran a
16K step of qwen3-0.6b 3.6x slower than ZeRO 2 on one GPU, where nothing is communicated: its hooks
gather and release each module's weights, pass after pass. Three lengths at two hidden sizes with
the same 28 layers give two per-module GPU works at one module count, so a per-gather host cost
can be told from what long modules hide.
"""
# The cheapest first, so that a lease's deadline cuts the dearest cases.
ZERO_CASES = [(model, seq, "full", False) for model in ("qwen3-0.6b", "qwen3-1.7b") for seq in (4096, 16384, 65536)]
ZERO_SMOKE_CASES = [("tiny-llama", 256, "full", False), ("tiny-llama", 512, "full", False)]
ZERO_RUNNERS = ["ds-zero2", "ds-zero3"]
LOSS_CHUNK_ROWS = 4096


def chunked_loss_model(lm, chunk_rows):
    """lm wrapped so that its forward(input_ids) returns the next-token loss computed in chunks.

    At 64K tokens the full logits (64K x 151936, which transformers' loss upcasts to fp32, plus the
    log-softmax and its gradient) do not fit on 141 GB, so the decoder's hidden states go through
    lm_head and an fp32 cross-entropy chunk_rows rows at a time, each chunk under a non-reentrant
    checkpoint so that only its input is kept for backward: the kind of thing TRL 1.14.2's
    chunked_nll does. Both ZeRO runners compute it alike, so it cancels in their difference. The
    wrapper, not the model, goes to deepspeed.initialize: DeepSpeed's forward (and its ZeRO 3
    hooks, which sit on every submodule) then runs the whole step.
    """
    import torch
    import torch.nn.functional as F
    from torch.utils.checkpoint import checkpoint

    def chunk_loss_sum(hidden, targets):
        logits = lm.lm_head(hidden).float()
        return F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.reshape(-1), reduction="sum")

    class ChunkedLoss(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lm = lm

        def forward(self, input_ids):
            hidden = self.lm.model(input_ids=input_ids).last_hidden_state[:, :-1]  # [1, s-1, h]
            targets = input_ids[:, 1:]  # [1, s-1]: the next token
            total = 0.0
            for i in range(0, targets.shape[1], chunk_rows):
                total = total + checkpoint(chunk_loss_sum, hidden[:, i:i + chunk_rows],
                                           targets[:, i:i + chunk_rows], use_reentrant=False)
            return total / targets.numel()

    return ChunkedLoss()


def count_param_module_forwards(model):
    """(how many modules hold parameters directly, a counter of their forwards while counter["on"]).

    A forward pre-hook on each such module counts every call of its forward, the checkpoint's
    recompute in backward included: ZeRO 3 gathers a module's parameters at each of these forwards
    and again for its backward, ZeRO 2 not at all, so the count is what ZeRO 3's per-module cost
    multiplies. (Its hooks run for every such module, but DeepSpeed 0.18.9 keeps a parameter of
    fewer than stage3_param_persistence_threshold = 1e5 elements whole, so the RMSNorms' fetch
    moves nothing.) Counted the same under both runners: the hooks go on before
    deepspeed.initialize.
    """
    counter = {"on": False, "n": 0}

    def hook(module, inputs):
        if counter["on"]:
            counter["n"] += 1

    held = [m for m in model.modules() if next(m.parameters(recurse=False), None) is not None]
    for m in held:
        m.register_forward_pre_hook(hook)
    return len(held), counter


def sweep_fields(args):
    """What the sweep's rows carry beside the common schema."""
    return {"loss": "chunked-%d" % LOSS_CHUNK_ROWS, "sweep": "zero"} if args.zero_sweep else {}
