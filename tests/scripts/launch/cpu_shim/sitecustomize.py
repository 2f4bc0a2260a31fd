"""CPU stand-ins for what a GPU run gets from NCCL and CUDA, for tests/scripts/launch_test.py: it
puts this folder on PYTHONPATH with SPPLAN_CPU_SHIM=1 (nothing else imports it; without the
variable it does nothing). None changes what a run computes or which groups it forms; each lets a
GPU code path run over Gloo on the CPU, and the test reports when one is no longer needed.

1. all_gather of a 0-d tensor into 1-element tensors: NCCL checks element counts, Gloo exact
   shapes ("ProcessGroupGloo::allgather: invalid tensor size at index 0 (expected (), got (1))").
   DeepSpeed's UlyssesSPDataLoaderAdapter.refill gathers its sequence lengths so (0.18.9, and its
   main branch at 0.19.6). The stand-in gathers the 0-d tensor as a 1-element view.
2. all_gather_into_tensor into a tensor autograd tracks: Gloo splits the output into views and
   copies into them in place, which autograd refuses in grad mode ("Output 0 of Split is a view
   and is being modified inplace"). ZeRO 1 and 2 keep their flat parameter buffer as such a
   tensor (a torch.cat of the parameters: CatBackward0), so with dp > 1 they fail at the
   optimizer step's all-gather. The stand-in runs Gloo's all_gather_into_tensor under no_grad.
3. Accelerate's PartialState with DeepSpeed and no CUDA: no backend is named (transformers'
   TrainingArguments passes none on its DeepSpeed path), so it counts one process on every rank
   (num_processes 1, process_index 0): every rank reads the same batches and calls itself the
   main process. The stand-in names "gloo" where Accelerate would have named "nccl".
4. The backward of torch.distributed.nn.functional.all_gather (transformers' Ulysses loss
   gathers with it) on Gloo: its _AlltoAll scatters with the group rank i as the global source
   rank, so in a group that does not hold global rank i (the second Ulysses group of dp 2 x sp 2)
   it fails with "Global rank 0 is not part of group"; NCCL takes a reduce-scatter instead. The
   stand-in scatters from group rank i (group_src).
"""
import os

if os.environ.get("SPPLAN_CPU_SHIM") == "1":
    import torch
    import torch.distributed as dist

    _all_gather, _all_gather_into_tensor = dist.all_gather, dist.all_gather_into_tensor

    def _is_gloo(group):
        try:
            return dist.get_backend(group) == "gloo"
        except Exception:  # no process group yet: leave the call alone
            return False

    def all_gather(tensor_list, tensor, group=None, async_op=False):
        if (_is_gloo(group) and tensor.dim() == 0 and tensor_list and
                all(t.dim() == 1 and t.numel() == 1 for t in tensor_list)):
            tensor = tensor.reshape(1)
        return _all_gather(tensor_list, tensor, group=group, async_op=async_op)

    def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
        if _is_gloo(group):
            with torch.no_grad():
                return _all_gather_into_tensor(output_tensor, input_tensor, group=group, async_op=async_op)
        return _all_gather_into_tensor(output_tensor, input_tensor, group=group, async_op=async_op)

    dist.all_gather, dist.all_gather_into_tensor = all_gather, all_gather_into_tensor

    import torch.distributed.nn.functional as dist_nn

    _alltoall_forward = dist_nn._AlltoAll.forward

    def alltoall_forward(ctx, group, out_tensor_list, *tensors):
        if not _is_gloo(group):
            return _alltoall_forward(ctx, group, out_tensor_list, *tensors)
        ctx.group = group
        ctx.input_tensor_size_list = [t.size() for t in tensors]
        me = dist.get_rank(group=group)
        tensors = tuple(t.contiguous() for t in tensors)
        for i in range(dist.get_world_size(group=group)):
            dist.scatter(out_tensor_list[i], list(tensors) if i == me else None, group=group, group_src=i)
        return tuple(out_tensor_list)

    dist_nn._AlltoAll.forward = staticmethod(alltoall_forward)

    try:
        from accelerate.state import PartialState
    except ImportError:  # a launcher's Python without accelerate
        PartialState = None
    if PartialState is not None:
        _prepare_backend = PartialState._prepare_backend

        def prepare_backend(self, cpu=False, sagemaker_dp=False, backend=None):
            backend, distributed_type = _prepare_backend(self, cpu, sagemaker_dp, backend)
            if (backend is None and not cpu and not torch.cuda.is_available() and
                    int(os.environ.get("LOCAL_RANK", -1)) != -1):
                backend = "gloo"
            return backend, distributed_type

        PartialState._prepare_backend = prepare_backend
