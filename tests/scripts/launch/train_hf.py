#!/usr/bin/env python3
"""A reference `train.py` for spplan's Hugging Face exports (torchrun, accelerate): an HF Trainer
script configured by its command line alone, so the flags the export writes are what run.

    torchrun ... train_hf.py --deepspeed ds_config.json --per_device_train_batch_size 1 ...
    accelerate launch --config_file accelerate.yaml train_hf.py --per_device_train_batch_size 1 ...

Every TrainingArguments flag comes from argv (HfArgumentParser). Sequence parallelism is not a
flag: the Trainer's Accelerator builds it from the launcher's environment (ACCELERATE_USE_PARALLELISM_CONFIG
and PARALLELISM_CONFIG_*, which `accelerate launch` writes from its YAML and a torchrun script
must export itself). What an HF Trainer script owns and spplan's exports do not pass comes from
the environment here:
  SPPLAN_TRAIN_MODEL      a config.json, or a folder holding one: the model is built from it with
                          random weights (seeded by --seed; nothing is downloaded)
  SPPLAN_TRAIN_SEQ_LEN    tokens per sample (the plan's seq_len); default 256
  SPPLAN_TRAIN_ATTN       the model's attn_implementation; default: what Accelerate's sequence
                          parallelism was told (PARALLELISM_CONFIG_SP_ATTN_IMPLEMENTATION: DeepSpeed
                          requires the two to match), else "sdpa"
  SPPLAN_TRAIN_RECORD     a file: each rank appends one JSON line when it ends (below)
  SPPLAN_TRAIN_OUTPUT     --output_dir when argv has none; default a folder beside the record
  SPPLAN_TRAIN_TIMEOUT_S  a rank still running after this many seconds prints every thread's
                          stack and exits (a hung collective shows where it waits)

The record says what the run did, not what it was asked to do: `layer_seq_lens` holds the
sequence length of every call of the first decoder layer (hidden_states.shape[1]: the rank's
sequence shard under Ulysses or ring attention, the whole sample without them) and
`first_positions` the first position id each call was given (where the shard starts); with the
loss (the Trainer's training loss on this rank), the samples this rank's data loader read, the
process group, the parallel sizes Accelerate and DeepSpeed built, whether activation checkpoints
were kept and offloaded, the PARALLELISM_CONFIG_* / ACCELERATE_* / FSDP_* variables the rank was
started with, and the error if it failed. The data: random tokens (seeded), each sample
`seq_len` long with its position_ids (DeepSpeed's Ulysses data loader requires them).
"""
import json
import os
import sys
import time


def main(argv):
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, HfArgumentParser, Trainer, TrainingArguments

    t0 = time.time()
    if os.environ.get("SPPLAN_TRAIN_TIMEOUT_S"):
        import faulthandler

        faulthandler.dump_traceback_later(float(os.environ["SPPLAN_TRAIN_TIMEOUT_S"]), exit=True)
    record = os.environ.get("SPPLAN_TRAIN_RECORD")
    if "--output_dir" not in argv:
        out = os.environ.get("SPPLAN_TRAIN_OUTPUT") or os.path.join(os.path.dirname(record or ".") or ".", "trainer_output")
        argv = argv + ["--output_dir", out]
    (args,) = HfArgumentParser(TrainingArguments).parse_args_into_dataclasses(argv)

    seq_len = int(os.environ.get("SPPLAN_TRAIN_SEQ_LEN", "256"))
    attn = os.environ.get("SPPLAN_TRAIN_ATTN") or os.environ.get("PARALLELISM_CONFIG_SP_ATTN_IMPLEMENTATION") or "sdpa"
    model_path = os.environ.get("SPPLAN_TRAIN_MODEL")
    if not model_path:
        sys.exit("train_hf.py: SPPLAN_TRAIN_MODEL: missing (required: a config.json or a folder holding one)")
    config = AutoConfig.from_pretrained(model_path)

    sample_indices = []  # the samples this rank's data loader read

    class Tokens(torch.utils.data.Dataset):
        """Random tokens, the same for an index on every rank (a generator seeded by the index)."""

        def __len__(self):
            return 64

        def __getitem__(self, i):
            sample_indices.append(int(i))
            g = torch.Generator().manual_seed(args.seed * 1000 + i)
            ids = torch.randint(0, config.vocab_size, (seq_len,), generator=g)
            return {"input_ids": ids, "labels": ids.clone(), "position_ids": torch.arange(seq_len)}

    seen, first_positions = [], []

    def first_layer_hook(module, hook_args, hook_kwargs):
        hidden = hook_args[0] if hook_args else hook_kwargs["hidden_states"]
        seen.append(int(hidden.shape[1]))
        pos = hook_kwargs.get("position_ids")
        first_positions.append(int(pos.reshape(-1)[0]) if pos is not None else None)

    row = {"seq_len": seq_len, "attn_implementation": attn, "layer_seq_lens": seen, "first_positions": first_positions,
           "sample_indices": sample_indices,
           "launch_env": {k: v for k, v in sorted(os.environ.items())
                          if k.startswith(("PARALLELISM_CONFIG_", "ACCELERATE_", "FSDP_"))}}
    trainer = None
    try:
        torch.manual_seed(args.seed)
        model = AutoModelForCausalLM.from_config(config, attn_implementation=attn, dtype=torch.float32)
        # A pre-hook of the layer module: transformers checkpoints its forward, not its __call__,
        # so a recompute in backward does not call it again.
        model.model.layers[0].register_forward_pre_hook(first_layer_hook, with_kwargs=True)
        trainer = Trainer(model=model, args=args, train_dataset=Tokens())
        result = trainer.train()
        row.update(loss=result.training_loss, global_step=result.global_step)
    except BaseException as e:  # the record still says what the layers saw before it
        row["error"] = f"{type(e).__name__}: {e}"[:2000]
        raise
    finally:
        row.update(describe_run(trainer), seconds=round(time.time() - t0, 2))
        if record:
            with open(record, "a") as f:  # one short line per rank: appends do not interleave
                f.write(json.dumps(row) + "\n")
        print("train_hf.py: " + json.dumps(row), flush=True)


def describe_run(trainer):
    """The process group, Accelerate's parallel sizes and DeepSpeed's groups, as this rank sees them."""
    import torch.distributed as dist

    out = {"rank": dist.get_rank() if dist.is_initialized() else int(os.environ.get("RANK", 0)),
           "world_size": dist.get_world_size() if dist.is_initialized() else None,
           "backend": dist.get_backend() if dist.is_initialized() else None}
    if trainer is None:
        return out
    acc = trainer.accelerator
    out.update(distributed_type=str(acc.distributed_type).split(".")[-1],
               accelerate_processes=[acc.process_index, acc.num_processes])
    pc = getattr(acc, "parallelism_config", None)
    if pc is not None:
        out.update(sp_size=pc.sp_size, cp_size=pc.cp_size, dp_shard_size=pc.dp_shard_size,
                   dp_replicate_size=pc.dp_replicate_size)
    layer = trainer.model.model.layers[0] if hasattr(trainer.model, "model") else None
    if layer is not None and getattr(layer, "gradient_checkpointing", False):
        fn = getattr(layer, "_gradient_checkpointing_func", None)
        inner = getattr(fn, "func", fn)
        # transformers' offload wraps torch's checkpoint in save_on_cpu (modeling_utils.py)
        out.update(activation_checkpointing=True,
                   checkpoint_offload="save_on_cpu" in getattr(getattr(inner, "__code__", None), "co_names", ()))
    engine = trainer.model_wrapped
    if hasattr(engine, "zero_optimization_stage"):  # a DeepSpeedEngine

        def size(group_name):  # None where this DeepSpeed has no such group
            group = getattr(engine, group_name, None)
            return dist.get_world_size(group) if group is not None else None

        # ZeRO partitions over seq_data_parallel_group: the sp ranks and the dp ranks together.
        out.update(zero_stage=engine.zero_optimization_stage(), ds_dp_world_size=size("data_parallel_group"),
                   ds_zero_world_size=size("seq_data_parallel_group"),
                   ds_sp_world_size=getattr(engine, "sequence_parallel_size", None))
    return out


def close_process_group():
    """Tears the process group down before the interpreter does: left to exit, one rank of
    accelerate/sp2 aborted after its step ("terminate called without an active exception", once in
    three runs), as a communicator's thread was destroyed still joinable."""
    import torch.distributed as dist

    if dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1:])
    close_process_group()
    # Closing the group was not enough: a rank of accelerate/sp2 still aborted with that line after
    # both ranks had written their records (once in four CI runs on 30 November), from a thread a
    # library leaves joinable to the C++ static destructors. Every check has run by now: the rank
    # leaves without them, so its exit code says whether the launch and the step worked.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
