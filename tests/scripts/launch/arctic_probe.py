"""ArcticTraining loads the `train.py` beside its recipe (its `code:` key's default) on every rank
before it builds the trainer; tests/scripts/launch_test.py copies this file there so that an
exported recipe runs unchanged and still says what it did. Each rank appends one JSON line to
SPPLAN_TRAIN_RECORD at exit, in train_hf.py's record format: `layer_seq_lens` (hidden_states.shape[1]
at every call of the first decoder layer: the rank's sequence shard), the process group and the
sequence-parallel size DeepSpeed formed (read at the first call, while the groups exist), and the
error if training raised. The loss is ArcticTraining's own: its train_log_metrics_path file.
"""
import atexit
import json
import os
import sys
import time

import torch

_t0 = time.time()
_row = {"layer_seq_lens": []}


def _groups():
    import torch.distributed as dist

    out = {"rank": dist.get_rank(), "world_size": dist.get_world_size(), "backend": dist.get_backend()}
    try:
        from deepspeed.utils import groups

        out["ds_sp_world_size"] = groups._get_sequence_parallel_world_size()
    except Exception as e:  # no sequence-parallel groups formed
        out["ds_sp_world_size"] = f"{type(e).__name__}: {e}"[:200]
    return out


def _layer_hook(module, args):
    # A global hook sees every module: keep the first decoder layer's calls (its attention is layer 0).
    if type(module).__name__.endswith("DecoderLayer") and getattr(getattr(module, "self_attn", None), "layer_idx", None) == 0:
        if not _row["layer_seq_lens"]:
            _row.update(_groups())
        _row["layer_seq_lens"].append(int(args[0].shape[1]))


torch.nn.modules.module.register_module_forward_pre_hook(_layer_hook)
_excepthook = sys.excepthook


def _record_error(kind, value, tb):
    _row["error"] = f"{kind.__name__}: {value}"[:2000]
    _excepthook(kind, value, tb)


def _write():
    _row.setdefault("rank", int(os.environ.get("RANK", -1)))
    _row["seconds"] = round(time.time() - _t0, 2)
    if os.environ.get("SPPLAN_TRAIN_RECORD"):
        with open(os.environ["SPPLAN_TRAIN_RECORD"], "a") as f:
            f.write(json.dumps(_row) + "\n")


sys.excepthook = _record_error
atexit.register(_write)
