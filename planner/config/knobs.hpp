// Knobs: the execution choices a plan makes (parallelism, ZeRO, offload, checkpointing, tiling) and
// the DeepSpeed settings that change memory. Execution only: no model, no hardware.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace spplan {

enum class OffloadDevice { kNone, kCpu, kNvme };
enum class ActCkpt { kNone, kFull, kOffload };
enum class CommDtype { kBf16, kFp32 };
// Training precision: bf16 mixed precision (bf16 weights/activations/grads, fp32 master and Adam,
// as DeepSpeed with bf16.enabled) or plain fp32 (the engine's CPU runs: no separate master copy).
enum class Precision { kBf16, kFp32 };
// How ring attention (context parallelism, degree cp) moves K/V: `ring` passes one K/V chunk per
// step to the next rank while the current chunk's attention runs (ring-flash-attention, Megatron
// "p2p", PyTorch context_parallel's "alltoall" rotate); `allgather` gathers all K/V chunks before
// attention with no overlap (PyTorch's default "allgather" rotate, Megatron "all_gather").
enum class CpComm { kRing, kAllGather };

struct Knobs {
  int64_t sp = 1;                                    // Ulysses degree P
  int64_t cp = 1;                                    // ring-attention degree R (GPUs = dp x sp x cp)
  CpComm cp_comm = CpComm::kRing;                    // how the ring moves K/V (cp > 1)
  int64_t zero_stage = 3;                            // 0, 1, 2, 3
  OffloadDevice offload_optimizer = OffloadDevice::kNone;
  OffloadDevice offload_params = OffloadDevice::kNone;  // ZeRO-3 only
  ActCkpt act_ckpt = ActCkpt::kFull;
  bool tiled_mlp = false;
  bool tiled_loss = false;
  int64_t micro_batch = 1;                           // sequences per SP group per step
  int64_t grad_accum_steps = 1;                      // micro steps per optimizer step
  Precision precision = Precision::kBf16;

  // DeepSpeed settings the memory and time depend on (defaults: what `export` writes).
  CommDtype sp_comm_dtype = CommDtype::kBf16;        // seq_parallel_communication_data_type
  double reduce_bucket_elems = 5e8;                  // zero_optimization.reduce_bucket_size
  double prefetch_bucket_elems = 5e7;                // stage3_prefetch_bucket_size
};

std::string to_string(OffloadDevice device);
std::string to_string(ActCkpt mode);
std::string to_string(CommDtype dtype);
std::string to_string(Precision precision);
std::string to_string(CpComm comm);
const std::vector<std::string>& precision_names();       // bf16, fp32
const std::vector<std::string>& offload_device_names();  // none, cpu, nvme
const std::vector<std::string>& act_ckpt_names();        // none, full, offload
const std::vector<std::string>& comm_dtype_names();      // bf16, fp32
const std::vector<std::string>& cp_comm_names();         // ring, allgather

}  // namespace spplan
