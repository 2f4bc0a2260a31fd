// Facts about the software stack the plans run on (DeepSpeed, PyTorch, NCCL, FlashAttention,
// Hugging Face), each with its source. Hardware numbers live in configs/gpus/*.toml instead.
// Section numbers refer to ../shared/MEMORY-FACTS.md, which cites the code they were read from.
#pragma once

namespace spplan::costmodel::facts {

// ZeRO-3's reuse window and persistence threshold, and whether the loop holds the logits through
// backward, are PlanSpec::stack (planner/config/plan_spec.hpp): they depend on the software.

// ZeRO-Infinity parameter swapping (offload_param: nvme) keeps one pinned buffer of buffer_count x
// buffer_size elements in the param dtype per rank: 5 x 1e8 (DeepSpeed defaults, MEMORY-FACTS 3.3).
inline constexpr double kNvmeParamSwapBufferElems = 5 * 1e8;

// DeepSpeed's optimizer sub_group_size (1e9 elements): the GPU Adam step flattens and upcasts one
// sub-group of gradients at a time (MEMORY-FACTS 2.4).
inline constexpr double kSubGroupElems = 1e9;

// Host bytes per offloaded partition element with offload_optimizer=cpu, besides the gradient
// partition itself (in the model dtype): fp32 master 4 + fp32 grad buffer 4 + Adam
// exp_avg/exp_avg_sq 8 (MEMORY-FACTS 3.1: 18 B with bf16 gradients, 20 B with fp32).
inline constexpr double kHostOptimizerBytesPerParamBesidesGrads = 16.0;

// Ulysses under DeepSpeed copies q, k, v into a contiguous send layout and receives into a new
// tensor, then rearranges again (DeepSpeed ulysses_sp.py, MEMORY-FACTS 8.3): two local-size
// copies of q, k, v are alive around the all-to-all besides the tensors attention keeps.
inline constexpr double kUlyssesTransientCopies = 2.0;

// What the CUDA caching allocator with expandable segments still holds beyond what is allocated
// when a step runs at the device's limit, as a fraction of the memory the step allocates and frees
// (the slack allowance's base, memory_phases.cpp). Short of memory, the allocator releases its
// cached free blocks and retries before it reports out of memory (c10/cuda/CUDACachingAllocator.cpp:
// release_cached_blocks on a failed allocation; expandable segments unmap whole free pages), so only
// free space inside pages that also hold live tensors stays. Measured with the engine at the limit:
// 0.34-0.35 GiB of 65-66 GiB on one H100 (qwen3-0.6b 36K and 37K, 26 November, 0.52-0.54%), 0.14-0.47
// GiB of 124-130 GiB on one H200 (70656-73728 tokens, validation/gpu/h200-141gb-2026-11-30/slack.jsonl,
// 0.11-0.38%); the largest, 0.54%, rounded up. Far from the limit the same allocator keeps 1-10%
// (GpuSpec::allocator_fragmentation), which is what a run's reserved memory shows.
inline constexpr double kAllocatorSlackAtLimit = 0.006;

// DeepSpeed TiledMLP runs ceil(s / h) shards (DeepSpeed ulysses_sp.py, MEMORY-FACTS 8.4).
inline constexpr double kTiledMlpTokensPerShardPerHidden = 1.0;

// torch's flex_attention against FlashAttention 2 on causal attention, A100: "90% of
// FlashAttention2's performance in the forward pass and 85% in the backward pass" (PyTorch blog
// "FlexAttention: The Flexibility of PyTorch with the Performance of FlashAttention", 2024-08-07;
// its backward recomputes more intermediates). The FlexAttention paper (arXiv 2412.05496) measures
// it on the H100 at 85% / 76% of FlashAttention 3, about 25% / 3% faster than FlashAttention 2:
// priced at the A100 shares of the flash rate, its H100 steps err slow, as FlashAttention 3's do.
inline constexpr double kFlexFwdShareOfFlash2 = 0.90;
inline constexpr double kFlexBwdShareOfFlash2 = 0.85;

// FlashAttention backward executes 2.5x the forward FLOPs (5 matmuls of s*s*d against 2; the FA2
// paper's benchmark counts it so, arXiv 2307.08691).
inline constexpr double kAttentionBwdFlopsFactor = 2.5;

// FlashAttention 2 (the flash_attn package) computes element offsets in 32-bit integers: a q,
// output or dq-accumulator tensor of more than 2^31 elements is addressed out of bounds ("an
// illegal memory access"). Its maintainer: "We use 32bit indexing so when tensors get larger than
// 2GB or 4GB the indexing might be wrong" (Dao-AILab/flash-attention issue #1311); FA2 will not be
// changed, FlashAttention 3 indexes in 64 bits (ALST's author there, issue #767, July 2025). This,
// not memory, stopped ALST's one-H100 run at 500K tokens of Llama-3.1-8B: [1, 500K, 4096] is just
// under 2^31 elements, and ArcticTraining's recipe records 555K as "an illegal memory access"
// (projects/sequence-parallelism/run-h100-sp1-llama-8b.yml; Liger-Kernel issue #803, whose RMSNorm
// and RoPE kernels had the same limit until its PR #804).
inline constexpr double kFlash2MaxTensorElements = 2147483648.0;  // 2^31

// Host memory a plan leaves to the rest of the node: the kernel and its page cache (the data
// loader's reads and checkpoint writes go through it), each rank's Python, PyTorch and CUDA host
// footprint, and room under the locked-memory limit: DeepSpeed pins its offload buffers
// (pin_memory: true), and pinned pages can be neither swapped nor reclaimed, so a node planned to
// its last GiB is killed by the OOM killer or fails cudaHostAlloc. 10% of RAM, at least 8 GiB
// (the share cloud images and Kubernetes' kubelet reserve on nodes of this size keep free).
inline constexpr double kHostReservedFraction = 0.10;
inline constexpr double kHostReservedMinGiB = 8.0;

// Pageable-to-pinned staging halves effective PCIe bandwidth for tensors DeepSpeed moves with
// plain .cpu()/.to() (ArcticTraining's checkpoint offload patch uses a synchronous .cpu()).
inline constexpr double kPageableCopyEfficiency = 0.5;

// NCCL all-to-all buffers are per channel per connected peer (MEMORY-FACTS 6.4). A peer in the
// same node is reached over NVLink P2P with 32 channels (NCCL issue #1685's 8xH100 measurement,
// the basis of GpuSpec::nccl_a2a_gib_per_peer); a peer in another node over the network with 2
// channels (NCCL's NET default, ncclTopoGetNchannels in src/graph/paths.cc), so it costs 2/32 as much.
inline constexpr double kNcclP2pChannelsPerPeer = 32.0;
inline constexpr double kNcclNetChannelsPerPeer = 2.0;

}  // namespace spplan::costmodel::facts
