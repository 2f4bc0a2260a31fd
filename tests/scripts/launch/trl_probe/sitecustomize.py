"""What a rank of TRL's `trl sft` did, for tests/scripts/launch_trl_test.py: it puts this folder on
PYTHONPATH with SPPLAN_TRL_RECORD set to a file. The CPU stand-ins of ../cpu_shim run first (one
sitecustomize is imported, so this one runs that one). Then, in a launched rank only (LOCAL_RANK
set), TRL's SFTTrainer is observed, not changed: each call of the chunked loss's per-chunk function
(trl 1.14.2 trainer/sft_trainer.py `_chunk`, looked up by name when the loss checkpoints it) is
counted with its rows, the first decoder layer's input length recorded on every call, and when
train() ends the rank appends one JSON line: the loss type and SFTConfig values the trainer ran
with, the chunk rows, the shards, the loss, the groups (train_hf.describe_run) and any error; on a
GPU also the caching allocator's peak allocated and reserved bytes and each optimizer step's time
(the device synchronized at its ends), which bench/engine/trl_gpu.py reads. With SPPLAN_TRL_SNAPSHOT
set to a file name, a GPU rank also records the caching allocator's history through train() and
dumps it there (torch.cuda.memory._dump_snapshot's pickle, what `spplan check` reads)."""
import os
import runpy
import sys

_here = os.path.dirname(os.path.abspath(__file__))
runpy.run_path(os.path.join(_here, "..", "cpu_shim", "sitecustomize.py"), run_name="spplan_cpu_shim")

if os.environ.get("SPPLAN_TRL_RECORD") and os.environ.get("LOCAL_RANK") is not None:
    import json
    import time

    import trl.trainer.sft_trainer as sft

    sys.path.insert(0, os.path.join(_here, ".."))
    from train_hf import describe_run

    _row = {"chunk_rows": [], "layer_seq_lens": [], "first_positions": [], "batch_keys": []}
    _chunk = sft._chunk

    def _counted_chunk(h, *args, **kwargs):
        _row["chunk_rows"].append(int(h.shape[0]))
        return _chunk(h, *args, **kwargs)

    sft._chunk = _counted_chunk

    def _first_layer_hook(module, hook_args, hook_kwargs):
        hidden = hook_args[0] if hook_args else hook_kwargs["hidden_states"]
        _row["layer_seq_lens"].append(int(hidden.shape[1]))
        pos = hook_kwargs.get("position_ids")
        _row["first_positions"].append(int(pos.reshape(-1)[0]) if pos is not None else None)

    _compute_loss = sft.SFTTrainer.compute_loss

    def compute_loss(self, model, inputs, *args, **kwargs):
        if not _row["batch_keys"]:  # the first batch: hook the layer once (its checkpointed forward is not re-hooked)
            _row["batch_keys"] = sorted(inputs)
            self.model.model.layers[0].register_forward_pre_hook(_first_layer_hook, with_kwargs=True)
        return _compute_loss(self, model, inputs, *args, **kwargs)

    sft.SFTTrainer.compute_loss = compute_loss
    _train = sft.SFTTrainer.train

    import torch
    from transformers import TrainerCallback

    class _StepTimes(TrainerCallback):
        """Each optimizer step's seconds, the device synchronized at both ends."""

        def __init__(self):
            self.t0 = None

        def _sync(self):
            if torch.cuda.is_available():
                torch.cuda.synchronize()

        def on_step_begin(self, args, state, control, **kwargs):
            self._sync()
            self.t0 = time.perf_counter()

        def on_step_end(self, args, state, control, **kwargs):
            self._sync()
            _row.setdefault("step_times_s", []).append(time.perf_counter() - self.t0)

    # The snapshot's history: no stack frames (context None keeps each event to its action, address
    # and size, so the step time stays near an unrecorded run's) and the last 100,000 events, a few
    # MB, which hold a few steps of a 0.6B model's allocations, each step's peak among them.
    _SNAPSHOT_EVENTS = 100_000

    def _snapshot_path():
        return os.environ.get("SPPLAN_TRL_SNAPSHOT") if torch.cuda.is_available() else None

    def train(self, *args, **kwargs):
        t0 = time.time()
        self.add_callback(_StepTimes())
        if torch.cuda.is_available():
            torch.cuda.reset_peak_memory_stats()
        if _snapshot_path():
            # Keyword arguments that torch 2.1 to 2.15 all take (torch/cuda/memory.py).
            torch.cuda.memory._record_memory_history(enabled="all", context=None, max_entries=_SNAPSHOT_EVENTS)
        a = self.args
        _row.update(loss_type=a.loss_type, chunk_size=sft._CHUNKED_LM_HEAD_CHUNK_SIZE, max_length=a.max_length,
                    pad_to_multiple_of=a.pad_to_multiple_of, packing=a.packing, bf16=a.bf16,
                    gradient_checkpointing=a.gradient_checkpointing,
                    per_device_train_batch_size=a.per_device_train_batch_size,
                    gradient_accumulation_steps=a.gradient_accumulation_steps, max_steps=a.max_steps,
                    learning_rate=a.learning_rate)
        try:
            result = _train(self, *args, **kwargs)
            _row.update(loss=result.training_loss, global_step=result.global_step)
            return result
        except BaseException as e:
            _row["error"] = f"{type(e).__name__}: {e}"[:2000]
            raise
        finally:
            _row.update(describe_run(self), seconds=round(time.time() - t0, 2),
                        alloc_conf=os.environ.get("PYTORCH_CUDA_ALLOC_CONF"))
            if torch.cuda.is_available():
                _row.update(peak_allocated_bytes=torch.cuda.max_memory_allocated(),
                            peak_reserved_bytes=torch.cuda.max_memory_reserved())
            if _snapshot_path():
                torch.cuda.memory._dump_snapshot(_snapshot_path())
                torch.cuda.memory._record_memory_history(enabled=None)
                _row["snapshot"] = _snapshot_path()
            with open(os.environ["SPPLAN_TRL_RECORD"], "a") as f:  # one short line per rank
                f.write(json.dumps(_row) + "\n")

    sft.SFTTrainer.train = train
