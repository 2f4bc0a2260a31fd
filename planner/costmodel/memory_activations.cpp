// Activation, Ulysses and loss memory of one rank (bytes). Per-token terms follow the tensors the
// Hugging Face Llama/Qwen layer keeps for backward (MEMORY-FACTS 8.2, 8.3, 8.4, 7.1, 7.2).
//
// The ALST stack at its longest sequences (docs/accuracy.md "Per-token memory of the ALST stack"
// has the term-by-term table): the peak is the backward of a layer, not the loss. With checkpoint
// offload one layer input is on the device (ArcticTraining's CheckpointFunctionWithCPUOffload);
// the reentrant checkpoint recomputes the layer and holds its output and incoming gradient
// through the layer's backward; by the attention backward, autograd has released the MLP's and
// the second RMSNorm's saved tensors; FlashAttention's backward then allocates dq, dk, dv and its
// buffers (flash_backward_buffers_per_token: FlashAttention 2 expands GQA's dk, dv for every query
// head, FlashAttention 3 accumulates them per kv head in fp32). Per local token of Llama-3.1-8B at
// sp 1 with TiledMLP, the tiled loss and FlashAttention 2 that is 14 [tokens x hidden] bf16
// tensors (115 KB per token) besides the weights.
#include <algorithm>
#include <cmath>

#include "planner/costmodel/dtype.hpp"
#include "planner/costmodel/layer_kernels.hpp"
#include "planner/costmodel/memory.hpp"
#include "planner/costmodel/ring.hpp"
#include "planner/costmodel/software_facts.hpp"

namespace spplan::costmodel {
namespace {

// Tokens of one TiledMLP shard, every micro-batch row at once (tiled_mlp_shards).
double mlp_tile_tokens(const PlanSpec& p) {
  const double b = p.knobs.micro_batch, s = local_tokens(p) / b;
  return b * std::ceil(s / static_cast<double>(tiled_mlp_shards(p)));
}

// Liger-Kernel's fused linear cross-entropy, which ALST and Hugging Face enable together with
// Liger's fused RMSNorm, SwiGLU and RoPE (apply_liger_kernel): those change what a layer saves
// (MEMORY-FACTS 8.2, "with Liger"). A loss that recomputes its chunks (TRL's chunked_nll) is TRL's
// own and comes with no layer kernels: its layers save what the eager modules do.
bool fused_layer_kernels(const PlanSpec& p) { return p.knobs.tiled_loss && !loss_recomputes_chunks(p); }

// What a mixture's routing saves per token besides its experts' SwiGLU (transformers'
// Qwen3MoeSparseMoeBlock and MixtralSparseMoeBlock, read in transformers 5.24): for each of the k (token,
// expert) slots the gathered input the expert's gate and up keep and the expert's output the
// routing-weight multiply keeps; the router's fp32 softmax over the E experts; the top-k's int64
// indices and fp32 weights. Run as a loop over the experts (TrainingStack::moe_expert_loop), each
// slot's weighted output too: index_add_ keeps its source (its gradient is
// grad.index_select(...).expand_as(source) in PyTorch's derivatives.yaml), and two int64 indices
// (the slot's token, and its place in the top-k). As one grouped GEMM (transformers 5's
// grouped_mm), three int64 indices a slot (the sort's permutation, its inverse, the slot's token).
// Both measured with saved-tensor hooks on transformers 5.24's Qwen3MoeSparseMoeBlock (h 256, k 2:
// 6,144 and 4,096 bytes a token of the h-wide slots), the loop also in the engine (tiny-qwen3-moe:
// its peak -7.1% with two h-wide tensors a slot, -0.1% with three).
double moe_routing_saved_per_token(const PlanSpec& p) {
  const ModelSpec& m = p.model;
  if (!m.is_moe()) return 0.0;
  const double k = static_cast<double>(m.experts_per_token);
  const double h_wide = p.stack.moe_expert_loop ? 3.0 : 2.0;
  const double slot_indices = p.stack.moe_expert_loop ? 2.0 : 3.0;
  // gpt-oss's router softmaxes its top k logits only (GptOssTopKRouter): k values, not E.
  const double router_softmax = m.router_softmax_after_topk ? act_bytes(p) * k : kFp32Bytes * m.num_experts;
  // GLM-4.5's router runs in fp32 (Glm4MoeTopkRouter: F.linear of hidden_states.type(torch.float32)),
  // so in bf16 its linear keeps an fp32 copy of the layer's MLP input (in fp32 the cast returns the
  // input itself); its sigmoid's fp32 output is the [T, E] counted as the softmax's.
  const double router_input = m.router_sigmoid ? upcast_bytes(p) * m.hidden_size : 0.0;
  return k * (h_wide * act_bytes(p) * m.hidden_size + slot_indices * sizeof(int64_t)) + router_softmax +
         (sizeof(int64_t) + kFp32Bytes) * k + router_input;
}

// The i-wide tensors a SwiGLU saves: eager gate out, SiLU out, up out and their product (4); Liger's
// recomputes SiLU (3); gpt-oss's clamped one (GptOssExperts._apply_gate, eager under every stack)
// its gate|up (2), the clamped gate, the sigmoid, up + 1, the product and the down projection's
// input (1 each): 7, measured with saved-tensor hooks on transformers 5.24 (issue42-moe.md 7).
double swiglu_saved_widths(const PlanSpec& p) {
  if (p.model.swiglu_limit > 0) return 7.0;
  return fused_layer_kernels(p) ? 3.0 : 4.0;
}

// Saved MLP tensors per token: the SwiGLU's (swiglu_saved_widths) over the width a token runs
// through (a mixture's k experts' together: ModelSpec::routed_width), and a mixture's routing.
double mlp_saved_per_token(const PlanSpec& p) {
  return swiglu_saved_widths(p) * act_bytes(p) * p.model.routed_width() + moe_routing_saved_per_token(p);
}

// Bytes one RMSNorm saves per token, its output included (the next linear saves it). Eager HF: the
// fp32 copy of the input, the normalised output and the weighted output; in fp32 training the
// "copy" is the input itself. Liger: the input and the output. A saved input costs nothing extra
// when something else keeps it anyway (`input_kept`: the layer input is the checkpoint). Both keep
// one fp32 reciprocal RMS per token besides: HF's `hidden_states * torch.rsqrt(variance + eps)`
// saves the [tokens, 1] rsqrt for the multiplication's backward (modeling_llama.py LlamaRMSNorm),
// Liger its RSTD row vector (LIGER ops/rms_norm.py, rms_norm_forward); 1/h of a tensor, but
// measured in the engine's tiny models (`validate engine` on a CPU).
double norm_saved_per_token(const PlanSpec& p, bool input_kept) {
  const double a = act_bytes(p), h = p.model.hidden_size;
  const double input = input_kept ? 0.0 : a;
  if (fused_layer_kernels(p) || fp32_norms_fused(p)) return (input + a) * h + kFp32Bytes;
  const double upcast = upcast_bytes(p);
  return ((upcast > 0 ? upcast : input) + 2 * a) * h + kFp32Bytes;
}

// The two RMSNorms of a layer: the first normalises the layer input (kept as the checkpoint when
// checkpointing), the second the post-attention residual (kept by nothing else). Sandwich norms
// (Gemma 2, 3) add one on the attention output and one on the MLP output, each input its own.
double norms_saved_per_token(const PlanSpec& p) {
  const bool input_is_checkpoint = p.knobs.act_ckpt != ActCkpt::kNone;
  const double sandwich = p.model.sandwich_norms ? 2 * norm_saved_per_token(p, false) : 0.0;
  return norm_saved_per_token(p, input_is_checkpoint) + norm_saved_per_token(p, false) + sandwich;
}

// What a FlashAttention backward allocates per token besides the output gradient and dq, dk, dv.
// FlashAttention 2 (MEMORY-FACTS 6.5, flash_api.cpp mha_bwd): with GQA dk and dv first computed for
// every query head (dk_expanded, dv_expanded), the fp32 dq accumulator and softmax_d.
// FlashAttention 3 (hopper/flash_api.cpp mha_bwd): with GQA dk and dv accumulated per kv head in
// fp32 (dk_accum, dv_accum), the fp32 dq accumulator, softmax_d and the log2 log-sum-exp.
// LibTorch's CPU kernel (TrainingStack::cpu_flash_attention) allocates only dq, dk, dv.
// flex_attention's backward (torch/_inductor/kernel/flex) writes dq per query block and dk, dv per
// key-value head directly, besides its fp32 delta (rowsum of dO O) per head.
double flash_backward_buffers_per_token(const PlanSpec& p) {
  if (p.stack.cpu_flash_attention) return 0.0;
  const ModelSpec& m = p.model;
  // Widths per local token: q, and k (or v) after the exchange (kv heads replicated up to sp).
  const double a = act_bytes(p), q = static_cast<double>(m.q_dim()), kv = kv_width_after_a2a(p);
  const double heads = static_cast<double>(m.num_attention_heads);
  if (p.stack.attention == AttentionKernel::kFlex) return kFp32Bytes * heads;
  const bool gqa = kv < q;
  if (p.stack.attention == AttentionKernel::kFlash3) {
    return (gqa ? 2 * kFp32Bytes * kv : 0.0) + kFp32Bytes * q + 2 * kFp32Bytes * heads;
  }
  return (gqa ? 2 * a * q : 0.0) + kFp32Bytes * q + kFp32Bytes * heads;
}

bool o_proj_input_is_a_copy(const PlanSpec& p) {
  if (p.stack.cpu_flash_attention) return p.knobs.sp > 1;
  return p.knobs.sp > 1 || p.stack.attention == AttentionKernel::kSdpa || p.stack.attention == AttentionKernel::kFlex;
}

// What the reentrant checkpoint's backward holds through the whole layer backward besides the
// recomputed saved tensors: the recomputed layer output (`outputs`, handed to
// torch.autograd.backward) and the incoming gradient (`args`) (torch/utils/checkpoint.py
// CheckpointFunction.backward; ArcticTraining's offload patch is the same function).
double reentrant_held_per_token(const PlanSpec& p) {
  const bool held = p.stack.reentrant_checkpoint && p.knobs.act_ckpt != ActCkpt::kNone;
  return held ? act_bytes(p) * p.model.hidden_size : 0.0;
}

}  // namespace

int64_t tiled_mlp_shards(const PlanSpec& p) {
  const double s = local_tokens(p) / static_cast<double>(p.knobs.micro_batch);
  const double h = static_cast<double>(p.model.hidden_size);
  return std::max<int64_t>(1, static_cast<int64_t>(std::ceil(s / (facts::kTiledMlpTokensPerShardPerHidden * h))));
}

double router_logits_bytes_per_layer(const PlanSpec& p) {
  const ModelSpec& m = p.model;
  if (!m.is_moe() || !m.output_router_logits) return 0.0;
  return act_bytes(p) * static_cast<double>(m.num_experts) * local_tokens(p);
}

double kv_width_after_a2a(const PlanSpec& p) {
  // The rank's kv heads (ModelSpec::kv_heads_per_rank: split over P, or replicated to one a rank)
  // for the sp times longer sequence it holds after the all-to-all.
  const int64_t sp = p.knobs.sp;
  return static_cast<double>(p.model.head_dim * p.model.kv_heads_per_rank(sp) * sp);
}

double local_tokens(const PlanSpec& p) {
  // Ulysses x ring: sp x cp ranks share a sequence; padded to a multiple of sp (cp > 1 needs an
  // exact multiple of 2 x sp x cp: check_context_parallel).
  const double per_rank = std::ceil(static_cast<double>(p.seq_len) / (p.knobs.sp * p.knobs.cp));
  return per_rank * p.knobs.micro_batch;
}

double packed_position_ids_bytes(const PlanSpec& p) {
  // One int64 position id per local token, restarting after each EOS: transformers' packed
  // ("padding-free") path passes position_ids and its flash-attention derives the documents'
  // cu_seqlens from them (modeling_flash_attention_utils.py, _prepare_from_posids); ALST shards them
  // with the inputs (UlyssesSPDataLoaderAdapter); the engine builds the same tensor (data.hpp).
  // The documents' starts (one int32 each, or on the host in the engine) are left out: below 1/8 of it.
  constexpr double kPositionIdBytes = 8;  // int64
  return p.packed_documents ? kPositionIdBytes * local_tokens(p) : 0.0;
}

double token_ids_bytes(const PlanSpec& p) {
  // input_ids and labels (ALST: shift_labels) of the micro-batch, int64 on the device from the
  // batch's copy until the step ends (HF Trainer _prepare_inputs; the engine's data.hpp likewise).
  constexpr double kTokenIdBytes = 8;  // int64
  return 2 * kTokenIdBytes * local_tokens(p);
}

double rope_tables_bytes(const PlanSpec& p) {
  // HF computes the rotary tables once per forward, cos and sin [b, s, d] in the activations'
  // dtype (LlamaRotaryEmbedding.forward: emb = cat(freqs, freqs), .to(x.dtype)), and hands them
  // to every layer: each layer's RoPE multiplication saves them, and a checkpoint keeps them for
  // the recompute, so they live until the first layer's backward. The engine keeps [b, s, d/2]
  // tables (TrainingStack::rope_half_tables), half of this.
  // A partial rotary embedding's tables cover the rotated dimensions only (ModelSpec::rotary_dim).
  const double rotated = static_cast<double>(p.model.rotary_dim());
  const double width = p.stack.rope_half_tables ? rotated / 2.0 : rotated;
  return 2.0 * act_bytes(p) * width * local_tokens(p);
}

double step_inputs_bytes(const PlanSpec& p) {
  return packed_position_ids_bytes(p) + token_ids_bytes(p) + rope_tables_bytes(p);
}

double checkpoint_bytes_per_layer(const PlanSpec& p) {
  return act_bytes(p) * p.model.hidden_size * local_tokens(p);  // the layer's input hidden state
}

double offloaded_checkpoints_kept(const PlanSpec& p, double layers_done, bool layer_running) {
  if (!layer_running && p.stack.offloaded_checkpoints_only_while_running) return 0.0;
  return std::min(layers_done, static_cast<double>(p.stack.offloaded_checkpoints_on_device));
}

double checkpoints_on_device_bytes(const PlanSpec& p) {
  const double layers = p.model.num_hidden_layers;
  switch (p.knobs.act_ckpt) {
    case ActCkpt::kNone: return 0.0;  // nothing checkpointed: every layer keeps layer_saved_bytes
    case ActCkpt::kFull: return layers * checkpoint_bytes_per_layer(p);
    case ActCkpt::kOffload:
      return offloaded_checkpoints_kept(p, layers, true) * checkpoint_bytes_per_layer(p);
  }
  return 0.0;
}

namespace {

// What the attention itself saves, after the all-to-all: q, k, v (kv possibly replicated), its
// output and the output's fp32 log-sum-exp.
// q, its output, k and v, and the fp32 log-sum-exp per head. With attention sinks, transformers'
// flex path renormalises the output by the sink (integrations/flex_attention.py: out times
// exp(lse - logsumexp([lse, sink]))), keeping a few values per head and token: the bf16
// log-sum-exp beside the sink (2), their log-sum-exp, the exp and the factor (1 each).
double attention_saved_per_token(const PlanSpec& p) {
  const double a = act_bytes(p), heads = static_cast<double>(p.model.num_attention_heads);
  const double sinks = p.model.attention_sinks ? 5 * a * heads : 0.0;
  return 2 * a * p.model.q_dim() + 2 * a * kv_width_after_a2a(p) + kFp32Bytes * heads + sinks;
}

// o_proj's saved input, when it is a tensor of its own: the output moved back to sequence layout
// (sp > 1, UlyssesSPAttentionHF._partition_global_sequence) or transposed to [b, s, heads, d]
// with a copy (HF sdpa_attention_forward's and flex_attention_forward's .contiguous()); at sp 1
// under FlashAttention the output already is [b, s, heads, d] and HF's reshape is a view of what
// attention keeps.
double o_proj_input_per_token(const PlanSpec& p) {
  return o_proj_input_is_a_copy(p) ? act_bytes(p) * p.model.q_dim() : 0.0;
}

// Qwen3's and Gemma 3's per-head q/k RMSNorms keep an fp32 copy and the normalised output of q and k.
// And one fp32 reciprocal RMS per head and token (norm_saved_per_token).
double qk_norm_saved_per_token(const PlanSpec& p) {
  const ModelSpec& m = p.model;
  if (!m.qk_norm) return 0.0;
  // An eager norm keeps its input for its backward (in bf16 its fp32 copy instead) and the
  // normalised product the weight multiply keeps; RoPE after it keeps neither q nor k (cos and sin
  // need no gradient). In fp32 the input is the q|k projection's output itself, kept alive by the
  // norm: measured in the engine on a CPU (fp32, at::rms_norm), 1.5 KB a token a layer of
  // tiny-llama's widths that were missing when only one tensor was counted. LibTorch's fused fp32
  // norm keeps its input only; Liger's fused q/k norm + RoPE as before.
  const double a = act_bytes(p), upcast = upcast_bytes(p);
  const double per_element = fp32_norms_fused(p) || fused_layer_kernels(p) ? upcast + a : (upcast > 0 ? upcast : a) + a;
  return per_element * (m.q_dim() + m.kv_dim()) + kFp32Bytes * (m.num_attention_heads + m.num_key_value_heads);
}

}  // namespace

PlanSpec dense_layer_plan(const PlanSpec& p) {
  PlanSpec dense = p;
  ModelSpec& m = dense.model;
  if (!m.is_moe() || m.first_dense_layers == 0) return dense;
  m.num_experts = m.experts_per_token = m.moe_intermediate_size = m.shared_expert_intermediate_size = 0;
  m.first_dense_layers = 0;
  m.router_sigmoid = m.output_router_logits = m.expert_biases = m.router_softmax_after_topk = false;
  return dense;
}

double layers_saved_bytes(const PlanSpec& p, double layers) {
  const double dense = p.model.is_moe() ? std::min(layers, static_cast<double>(p.model.first_dense_layers)) : 0.0;
  const double dense_saved = dense > 0 ? dense * layer_saved_bytes(dense_layer_plan(p)) : 0.0;
  return dense_saved + (layers - dense) * layer_saved_bytes(p);
}

double layer_saved_bytes(const PlanSpec& p) {
  const double s = local_tokens(p);
  const double norms = norms_saved_per_token(p);
  const double attention = attention_saved_per_token(p) + o_proj_input_per_token(p);
  // TiledMLP's forward runs without autograd: it keeps only its input (norm2's output, counted above).
  const double mlp = p.knobs.tiled_mlp ? 0.0 : mlp_saved_per_token(p) * s;
  return (norms + attention + qk_norm_saved_per_token(p)) * s + mlp;
}

double ulysses_exchange_moment_bytes(const PlanSpec& p) {
  if (p.knobs.sp == 1) return 0.0;
  // At the forward all-to-all a layer has saved only what comes before attention: the first
  // RMSNorm's tensors and Qwen3's q/k norms'. The attention module holds its q, k, v (sequence
  // layout, as projected) until it returns (HF LlamaAttention.forward's query_states,
  // key_states, value_states; the engine's Model::attention), and the exchange's copies
  // (ulysses_buffer_bytes) are alive around it.
  const bool input_is_checkpoint = p.knobs.act_ckpt != ActCkpt::kNone;
  const double qkv = act_bytes(p) * (p.model.q_dim() + 2.0 * p.model.kv_dim());
  const double saved = norm_saved_per_token(p, input_is_checkpoint) + qk_norm_saved_per_token(p);
  return (saved + qkv) * local_tokens(p) + ulysses_buffer_bytes(p);
}

LayerBackwardMoments layer_backward_moments(const PlanSpec& p) {
  const ModelSpec& m = p.model;
  // i: the SwiGLU width a token runs through (a mixture's k experts together).
  const double a = act_bytes(p), h = m.hidden_size, q = m.q_dim(), i = m.routed_width(), s = local_tokens(p);
  const double kv = kv_width_after_a2a(p);
  LayerBackwardMoments out;
  // Gradient flowing into the layer (the last layer's: the loss's), and under a reentrant
  // checkpoint the recomputed layer output (reentrant_held_per_token).
  out.upstream = a * h * s;
  out.reentrant_output = reentrant_held_per_token(p) * s;
  // MLP backward while the MLP's saved tensors are alive: eager autograd makes three i-wide
  // gradients; Liger's SwiGLU writes its gradients into the saved gate/up buffers in place, so
  // only down_proj's input gradient is new (Liger swiglu_backward). TiledMLP (DeepSpeed
  // ulysses_sp.py TiledMLP.backward) recomputes one shard at a time, so the shard's saved tensors
  // and gradients are transient, plus x_grad = zeros_like(x) for all tokens; its shards run the
  // eager SwiGLU (4 saved, 3 gradients) unless the stack keeps the fused one there (the engine:
  // 3 saved, gate|up and the product down_proj keeps, and 1 gradient; `validate engine` measured the
  // eager count 2 MiB over the engine's peak at 16K tokens, sp 4).
  const bool fused_swiglu = fused_layer_kernels(p) && (!p.knobs.tiled_mlp || p.stack.tiled_mlp_fused_swiglu);
  // gpt-oss's clamped SwiGLU: the down input's, the product's two factors', the sigmoid's and the
  // clamped gate's gradients (counted from its graph, not measured).
  const double mlp_grads = (m.swiglu_limit > 0 ? 5.0 : fused_swiglu ? 1.0 : 3.0) * a * i;
  const double tile_saved = (fused_swiglu ? 3.0 : 4.0) * a * i;  // the SwiGLU inside the shard
  out.mlp = p.knobs.tiled_mlp ? (tile_saved + mlp_grads) * mlp_tile_tokens(p) + a * h * s : mlp_grads * s;
  // A mixture's input gradient is gathered back from its experts' into one tensor of all tokens
  // (the backward of the expert loop's indexing: index_add into zeros of the input's shape).
  if (m.is_moe()) out.mlp += a * h * s;
  // Below ZeRO 2 (from stage 2 on layer_grad_transient_bytes counts the layer's gradients):
  // down_proj's backward node makes its weight gradient beside its input gradient, and
  // AccumulateGrad adds it into .grad only after the node returns (torch/csrc/autograd/functions/
  // accumulate_grad.h: `variable_grad += new_grad` when .grad exists), so one h x i gradient is
  // alive at this moment (measured in the engine's MLP backward on a CPU); a mixture's experts run
  // one after another, so one expert's.
  // (GLM-4.5's shared expert is one more, of its own width.)
  const double expert_width = std::max(m.moe_intermediate_size, m.shared_expert_intermediate_size);
  if (p.knobs.zero_stage < 2) out.mlp += a * h * (m.is_moe() ? static_cast<double>(expert_width) : i);
  // By the attention backward the MLP's and the second RMSNorm's saved tensors (its input, the
  // post-attention residual, and its output, the MLP input) and o_proj's input have been
  // released: autograd frees a node's saved tensors right after its backward runs, and o_proj's
  // runs before the attention's. The residual's gradient is now the sum of the upstream gradient
  // and the norm's input gradient, a new tensor.
  out.freed_before_attention = (p.knobs.tiled_mlp ? 0.0 : mlp_saved_per_token(p) * s) +
                               (norm_saved_per_token(p, false) + o_proj_input_per_token(p)) * s;
  const double residual_grad = a * h * s;
  const double flash = (2 * a * q + 2 * a * kv + flash_backward_buffers_per_token(p)) * s;
  out.attention = residual_grad + flash + cpu_flash_backward_scratch_bytes(p) + window_blocks_backward_bytes(p) -
                  out.freed_before_attention;
  // Then the mirrored all-to-all: dq, dk, dv in head layout (one block of the exchange) and its
  // copies. By then the attention's backward has run too and autograd has released what it saved
  // (q, k, v after the exchange, the output, its log-sum-exp): the all-to-all's node runs after
  // the attention's (DeepSpeed's _DimZeroAllToAll, the engine's QkvToHeads). DeepSpeed exchanges
  // one gradient at a time, so one tensor's send copy and receive buffer are alive, at most dq's
  // (kv_width_after_a2a <= q: Ulysses needs sp | heads). The engine exchanges the three in one
  // block: its receive buffer, and a send copy unless the micro-batch is 1 (then the gradient,
  // [b, s, heads, d], already is the send layout: ulysses.cpp). Measured in the engine at 16K
  // tokens, sp 4: the gradient block and the receive block (the engine's memory meter).
  const double block = ulysses_block_bytes(p);
  const double copies = !p.stack.ulysses_one_exchange ? (p.knobs.sp > 1 ? 2 * a * q * s : 0.0)
                                                      : (p.knobs.micro_batch > 1 ? 2 : 1) * block;
  out.a2a = residual_grad + block + copies - out.freed_before_attention - attention_saved_per_token(p) * s;
  out.ring = ring_backward_buffer_bytes(p);
  return out;
}

// LibTorch's CPU flash backward (aten/src/ATen/native/cpu/FlashAttentionKernel.cpp,
// cpu_flash_attention_backward) allocates one block's attention and its gradient in fp32 for every
// thread of the pool at once (`at::empty({num_thread, size_per_thread})`), and in bf16 both again
// in the input dtype: blocks of 256 queries x 512 keys from 768 queries on (64 from 192, else 32;
// flash_attention_backward_kernel_impl), capped by the lengths. Alive for the kernel's call only,
// beside dq, dk, dv. One thread: 1 MiB; measured 1.15-1.18 MiB above the other terms at 16K and
// 64K tokens (`validate engine --long`). Its forward's block buffers (one block and a q x d accumulator per thread)
// are freed before the layer's forward ends, where the forward peaks: not priced.
double cpu_flash_backward_scratch_bytes(const PlanSpec& p) {
  if (!p.stack.cpu_flash_attention) return 0.0;
  double queries = std::ceil(static_cast<double>(p.seq_len) / p.knobs.cp), keys = queries;  // of one sequence, per call
  if (runs_window_blocks(p)) {  // a block of w queries over its 2w - 1 keys (window_attention.hpp)
    queries = static_cast<double>(p.model.sliding_window);
    keys = 2 * queries - 1;
  }
  const double q_split = std::min(queries, queries >= 768 ? 256.0 : queries >= 192 ? 64.0 : 32.0);
  const double kv_split = std::min(keys, 512.0);
  const double reduced = p.knobs.precision == Precision::kBf16 ? kBf16Bytes : 0.0;
  const double threads = static_cast<double>(std::max<int64_t>(1, p.stack.cpu_flash_threads));
  return threads * 2 * q_split * kv_split * (kFp32Bytes + reduced);
}

bool runs_window_blocks(const PlanSpec& p) { return p.stack.window_in_masked_blocks && p.model.windows(p.seq_len); }

// The engine's window in masked blocks (window_attention.hpp backward), beside the whole dq, dk,
// dv it writes into: the band bias (w x (2w - 1) in the activation dtype, made once a call) and one
// block's kernel gradients, dq of its w rows and dk, dv of its 2w - 1 keys (the rank's heads after
// the all-to-all; a CPU kernel's key-value heads unexpanded). Alive for the attention's backward.
double window_blocks_backward_bytes(const PlanSpec& p) {
  if (!runs_window_blocks(p)) return 0.0;
  const double a = act_bytes(p), w = static_cast<double>(p.model.sliding_window), b = p.knobs.micro_batch;
  const double q = p.model.q_dim() / static_cast<double>(p.knobs.sp);  // the rank's heads
  const double kv = static_cast<double>(p.model.head_dim * p.model.kv_heads_per_rank(p.knobs.sp));
  return a * w * (2 * w - 1) + b * a * (w * q + 2 * (2 * w - 1) * kv);
}

double layer_backward_extra_bytes(const PlanSpec& p) {
  const LayerBackwardMoments m = layer_backward_moments(p);
  return m.upstream + m.reentrant_output + std::max({m.mlp, m.attention + m.ring, m.a2a});
}

double ulysses_block_bytes(const PlanSpec& p) {
  if (p.knobs.sp == 1) return 0.0;
  return act_bytes(p) * (p.model.q_dim() + 2.0 * kv_width_after_a2a(p)) * local_tokens(p);
}

double ulysses_buffer_bytes(const PlanSpec& p) { return facts::kUlyssesTransientCopies * ulysses_block_bytes(p); }

// Liger's chunk: next_pow2(ceil(T / ceil(V / H))) tokens, at most T (MEMORY-FACTS 7.2).
double liger_chunk_tokens(double tokens, double hidden, double vocab) {
  const double chunk = std::ceil(tokens / std::ceil(vocab / hidden));
  return std::min(tokens, std::exp2(std::ceil(std::log2(std::max(1.0, chunk)))));
}

// The final RMSNorm runs just before the head: what it keeps for backward besides its output, and
// its output, which the head takes as input (the untiled lm_head saves it; Liger's FLCE reads it
// during its forward only).
double final_norm_saved_bytes(const PlanSpec& p) {
  return (norm_saved_per_token(p, false) - act_bytes(p) * p.model.hidden_size) * local_tokens(p);
}
double head_input_bytes(const PlanSpec& p) { return act_bytes(p) * p.model.hidden_size * local_tokens(p); }

namespace {

// A loss that recomputes its chunks (TrainingStack::tiled_loss_recomputes_chunks: TRL's
// chunked_nll, read from trl 1.13.0's sft_trainer.py _chunk and _chunked_cross_entropy_loss, and
// measured on the CPU with torch 2.15's memory profiler at two token counts, which isolate the
// per-token terms). The hidden states are gathered into label order (valid tokens first: a copy of
// [s, h]), each chunk's lm_head GEMM and cross-entropy run under a non-reentrant checkpoint, so no
// [s, V] tensor exists and only the ordered copy is kept for the backward (loss_recomputes_chunks).

// The ordering's index tensors, per token: the int64 permutation, the int64 labels put in its
// order and the bool mask of valid labels.
constexpr double kChunkOrderBytesPerToken = 8 + 8 + 1;
// One chunk's [c, V] fp32 tensors alive at once in its forward: the upcast logits, log_softmax's
// output, and the entropy's exp(log_p) and exp(log_p) * log_p (TRL computes the entropy and the
// token accuracy inside the chunk).
constexpr double kChunkForwardFp32Tensors = 4;
// In the chunk's backward: its recomputed log_softmax output, and the gradient flowing to it.
constexpr double kChunkBackwardFp32Tensors = 2;

double chunk_bytes(const PlanSpec& p, double fp32_tensors) {
  return fp32_tensors * kFp32Bytes * static_cast<double>(p.stack.tiled_loss_chunk_tokens) * p.model.vocab_size;
}

// The ordered copy of the hidden states and the indices: what the forward keeps for the backward.
double ordered_hidden_bytes(const PlanSpec& p) {
  return (act_bytes(p) * p.model.hidden_size + kChunkOrderBytesPerToken) * local_tokens(p);
}

// At the end of the loss backward: the kept copy, the hidden states' gradient [s, h], one chunk's
// head weight gradient beside the accumulated one (the accumulator is the weight's own gradient
// below ZeRO 2: head_grad_transient_bytes), and one chunk's recomputed tensors.
LossBackwardMoment recomputed_chunks_backward(const PlanSpec& p) {
  const double a = act_bytes(p), s = local_tokens(p), h = p.model.hidden_size;
  const double logits = ordered_hidden_bytes(p) + a * h * s + chunk_bytes(p, kChunkBackwardFp32Tensors) +
                        final_norm_saved_bytes(p);
  const double weight_grad = a * h * p.model.vocab_size + head_grad_transient_bytes(p);
  return {logits, weight_grad};
}

}  // namespace

double loss_forward_peak_bytes(const PlanSpec& p) {
  const double a = act_bytes(p), s = local_tokens(p), v = p.model.vocab_size, h = p.model.hidden_size;
  if (loss_recomputes_chunks(p)) {
    // The final norm's output and its ordered copy, while one chunk runs.
    return head_input_bytes(p) + ordered_hidden_bytes(p) + chunk_bytes(p, kChunkForwardFp32Tensors) +
           final_norm_saved_bytes(p);
  }
  if (p.knobs.tiled_loss) {
    // Liger FLCE: one logits chunk + what it keeps (grad_input, grad_weight) + its input. The chunk
    // stays in the activation dtype in bf16 too: Liger's cross-entropy kernel upcasts each row to
    // fp32 in registers and writes the gradient back into the bf16 chunk (MEMORY-FACTS 7.2).
    return a * liger_chunk_tokens(s, h, v) * v + loss_saved_bytes(p) + head_input_bytes(p);
  }
  // lm_head logits (a), .float() copy (upcast), log_softmax output (fp32) (MEMORY-FACTS 7.1); no
  // copy and the output in the logits' dtype where the loss skips the upcast (dtype.hpp).
  return (a + loss_upcast_bytes(p) + cross_entropy_bytes(p)) * v * s + final_norm_saved_bytes(p) + head_input_bytes(p);
}

double loss_saved_bytes(const PlanSpec& p) {
  const double a = act_bytes(p), s = local_tokens(p), v = p.model.vocab_size, h = p.model.hidden_size;
  if (loss_recomputes_chunks(p)) return ordered_hidden_bytes(p) + final_norm_saved_bytes(p);
  if (p.knobs.tiled_loss) {
    // grad_input, grad_weight (the parameter dtype: Liger's default accum_dtype=None), fp32 loss_1d.
    return a * h * s + a * v * h + kFp32Bytes * s + final_norm_saved_bytes(p);
  }
  const double held_logits = p.stack.loop_holds_logits ? act_bytes(p) : 0.0;
  // log_softmax output saved for backward (+ held logits), lm_head's input.
  return (cross_entropy_bytes(p) + held_logits) * v * s + final_norm_saved_bytes(p) + head_input_bytes(p);
}

double loss_backward_peak_bytes(const PlanSpec& p) {
  const double s = local_tokens(p), v = p.model.vocab_size;
  if (loss_recomputes_chunks(p)) return recomputed_chunks_backward(p).logits_bytes;
  if (p.knobs.tiled_loss) return loss_saved_bytes(p);  // gradients were computed in the forward
  // Saved log_softmax output + gradient w.r.t. it + gradient w.r.t. the logits, all fp32 (or all in
  // the logits' dtype without the upcast), and the logits themselves when the training loop still
  // holds the outputs.
  const double held_logits = p.stack.loop_holds_logits ? act_bytes(p) : 0.0;
  return (3 * cross_entropy_bytes(p) + held_logits) * v * s + final_norm_saved_bytes(p) + head_input_bytes(p);
}

LossBackwardMoment loss_backward_moment(const PlanSpec& p) {
  if (loss_recomputes_chunks(p)) return recomputed_chunks_backward(p);
  const double cross_entropy = loss_backward_peak_bytes(p);
  if (p.knobs.tiled_loss) return {cross_entropy, 0.0};
  // The head's backward: the logits' gradient in the activation dtype (after the upcast's backward;
  // held logits still held), the head's input gradient [s, h], its input and the final norm's saves.
  const double a = act_bytes(p), s = local_tokens(p), v = p.model.vocab_size, h = p.model.hidden_size;
  const double held_logits = p.stack.loop_holds_logits ? a : 0.0;
  const double head = (a + held_logits) * v * s + a * s * h + final_norm_saved_bytes(p) + head_input_bytes(p);
  const double weight_grad = head_grad_transient_bytes(p);
  if (head + weight_grad > cross_entropy) return {head, weight_grad};
  return {cross_entropy, 0.0};
}

}  // namespace spplan::costmodel
