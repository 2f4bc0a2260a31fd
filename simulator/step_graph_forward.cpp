// StepGraphBuilder: layer passes, the forward and the loss.
#include <algorithm>

#include "simulator/step_graph_builder.hpp"

namespace spplan::sim::detail {

// Runs of equal ops a pass draws as one (tiles of a tiled MLP or loss, ring-attention blocks and
// their hops) beyond kMaxDrawnRuns: the number of tiles grows with the sequence (ceil(s / h) at
// 10^12 tokens is 10^8 a pass), and nothing else runs on the compute stream between two tiles, so
// a run of them as one op moves no time and no memory; each op is named by the first it holds.
namespace {

constexpr int64_t kMaxDrawnRuns = 64;

// The first of `n` items that drawn op `d` of `drawn` holds (the ops hold n / drawn each, +-1).
int64_t first_of_run(int64_t d, int64_t n, int64_t drawn) { return d * n / drawn; }

}  // namespace

// `tiles` ops of total_s / tiles each on the compute stream (at most kMaxDrawnRuns, each then a
// run of tiles); returns the last, sets *first.
OpId StepGraphBuilder::emit_tiles(const std::string& prefix, double total_s, int64_t tiles, OpId* first) {
  const int64_t n = std::max<int64_t>(1, tiles), drawn = std::min(n, kMaxDrawnRuns);
  OpId last = kNoOp;
  for (int64_t d = 0; d < drawn; ++d) {
    const int64_t from = first_of_run(d, n, drawn), to = first_of_run(d + 1, n, drawn);
    const std::string name = n == 1 ? prefix : prefix + ".t" + std::to_string(from);
    last = add_compute(name, OpCategory::kCompute, total_s * static_cast<double>(to - from) / static_cast<double>(n));
    if (d == 0 && first != nullptr) *first = last;
  }
  return last;
}

// One layer pass on the compute stream.
PassOps StepGraphBuilder::emit_pass(const costmodel::LayerPassCosts& pass, bool backward, const std::string& prefix,
                                    int layer) {
  PassOps ops;
  const bool mixture = c_.first_mixture_layer >= 0 && layer >= c_.first_mixture_layer;
  const std::string mlp = prefix + (mixture ? "experts" : "mlp");
  const auto compute = [&](const char* name, double s) { return add_compute(prefix + name, OpCategory::kCompute, s); };
  const auto a2a = [&](const char* name, double s) { return add_compute(prefix + name, OpCategory::kA2a, s); };
  if (!backward) {
    ops.first = compute("norm", pass.norm_s);
    compute("qkv", pass.qkv_s);
    ops.a2a_first = a2a("a2a_qkv", pass.a2a_qkv_s);
    emit_attention(pass, prefix, &ops);
    ops.a2a_second = a2a("a2a_out", pass.a2a_out_s);
    compute("out_proj", pass.out_proj_s);
    ops.last = emit_tiles(mlp, pass.mlp_s, pass.mlp_tiles, nullptr);
  } else {  // the mirror image: gradients flow from the MLP back to the norm
    ops.last = emit_tiles(mlp, pass.mlp_s, pass.mlp_tiles, &ops.first);
    compute("out_proj", pass.out_proj_s);
    ops.a2a_first = a2a("a2a_out", pass.a2a_out_s);
    emit_attention(pass, prefix, &ops);
    ops.a2a_second = a2a("a2a_qkv", pass.a2a_qkv_s);
    compute("qkv", pass.qkv_s);
    ops.last = compute("norm", pass.norm_s);
  }
  return ops;
}

// Ring attention (cp > 1): block i on the compute stream while hop i on the comm stream brings
// the K/V of block i+1 (after the previous hop has freed the receive buffer); block i+1 waits for
// it. The all-gather variant and the backward's last dK/dV hop wait in line on the compute
// stream, exposed as the estimate counts them (costmodel LayerPassCosts::cp_exposed_s). Each
// block's merge, an equal share of the pass's cp_merge_s, runs after it on the compute stream.
void StepGraphBuilder::emit_attention(const costmodel::LayerPassCosts& pass, const std::string& prefix,
                                      PassOps* ops) {
  if (pass.attention_blocks <= 1 && pass.cp_comm_s() <= 0) {
    ops->attention_first = ops->attention_last = add_compute(prefix + "attention", OpCategory::kCompute, pass.attention_s);
    return;
  }
  const OpId pre = pass.cp_pre_s > 0 ? add_compute(prefix + "ring_gather", OpCategory::kRing, pass.cp_pre_s) : kNoOp;
  // Beyond kMaxDrawnRuns blocks, runs of blocks as one op, and the hops as many fewer, each
  // carrying an equal share of all the hops' time (a ring of 2^20 ranks drew 2^20 blocks a pass).
  const int64_t blocks = std::max<int64_t>(1, pass.attention_blocks), drawn = std::min(blocks, kMaxDrawnRuns);
  const bool runs = drawn < blocks;
  const int64_t hops =
      runs ? std::min(drawn, std::max<int64_t>(pass.cp_hops > 0 ? 1 : 0, pass.cp_hops * drawn / blocks)) : pass.cp_hops;
  const double hop_s = runs && hops > 0 ? pass.cp_hop_s * static_cast<double>(pass.cp_hops) / static_cast<double>(hops)
                                        : pass.cp_hop_s;
  OpId hop_ready = prev_compute_;  // K/V of this rank are ready once the ops before are done
  OpId first = pre, prev_block = kNoOp;
  for (int64_t i = 0; i < drawn; ++i) {
    const int64_t from = first_of_run(i, blocks, drawn), to = first_of_run(i + 1, blocks, drawn);
    const double share = static_cast<double>(to - from) / static_cast<double>(blocks);
    const OpId block = add_compute(prefix + "attention.b" + std::to_string(from), OpCategory::kCompute,
                                   runs ? pass.attention_s * share : pass.attention_block_s());
    if (first == kNoOp) first = block;
    g_.add_dep(hop_ready, block);  // its K/V chunk has arrived
    if (i < hops) {
      const OpId hop = add(prefix + "ring_hop" + std::to_string(from), Resource::kComm, OpCategory::kRing, hop_s);
      g_.add_dep(hop_ready, hop);   // forwards the chunk the previous hop brought
      g_.add_dep(prev_block, hop);  // into the buffer block i-1 has finished with (double buffering)
      hop_ready = hop;
    }
    // The block's fp32 merge (forward) or accumulation (backward) follows it on the compute stream.
    if (pass.cp_merge_s > 0) {
      add_compute(prefix + "attention.merge" + std::to_string(from), OpCategory::kCompute,
                  runs ? pass.cp_merge_s * share : pass.cp_merge_s / static_cast<double>(pass.attention_blocks));
    }
    prev_block = block;
  }
  const OpId post = pass.cp_post_s > 0 ? add_compute(prefix + "ring_post", OpCategory::kRing, pass.cp_post_s) : kNoOp;
  ops->attention_first = first;
  ops->attention_last = post != kNoOp ? post : prev_compute_;
}

// The costmodel's two moments of a forward or recompute pass: at its first all-to-all (first
// norm's saves, q, k, v and the copies), then every saved tensor, from the end of that all-to-all
// (the pass's first op without one) until the caller frees them; ring attention's receive and
// merge buffers through its blocks. In the backward the costmodel counts the all-to-all copies
// inside layer_backward_extra_bytes.
void StepGraphBuilder::hold_pass_activations(const PassOps& pass, const MemoryTerms::LayerBytes& own) {
  if (pass.a2a_first != kNoOp) {
    alloc_at_start(pass.a2a_first, MemCategory::kActivations, t_.ulysses_exchange_held_bytes);
    alloc_at_start(pass.a2a_first, MemCategory::kBuffers, t_.ulysses_buffer_bytes);
    free_at_end(pass.a2a_first, MemCategory::kActivations, t_.ulysses_exchange_held_bytes);
    free_at_end(pass.a2a_first, MemCategory::kBuffers, t_.ulysses_buffer_bytes);
    alloc_at_end(pass.a2a_first, MemCategory::kActivations, own.saved);
  } else {
    alloc_at_start(pass.first, MemCategory::kActivations, own.saved);
  }
  alloc_at_start(pass.attention_first, MemCategory::kBuffers, t_.ring_buffer_bytes);
  free_at_end(pass.attention_last, MemCategory::kBuffers, t_.ring_buffer_bytes);
}

void StepGraphBuilder::emit_embedding_forward(int micro) {
  begin_use();
  const OpId embed = add_compute(micro_prefix(micro) + "embed.fwd", OpCategory::kCompute, c_.embed_fwd_s);
  attach_first(embed);
  alloc_at_start(embed, MemCategory::kActivations, t_.step_inputs_bytes);  // freed by embed.bwd
  end_use(embed);
}

// While a layer runs forward it holds its saved tensors; when it ends it leaves what its backward
// needs (checkpoint, or every saved tensor without checkpointing). Offloaded checkpoints leave the
// device when the layer `checkpoints_kept_on_device` later ends (and their copy is done).
void StepGraphBuilder::emit_forward_layer(int micro, int layer) {
  const std::string prefix = micro_prefix(micro) + "fwd.L" + std::to_string(layer) + ".";
  begin_use();
  const MemoryTerms::LayerBytes own = t_.layer(layer);
  const PassOps pass = emit_pass(c_.layer_pass(costmodel::StepCosts::Pass::kForward, layer), false, prefix, layer);
  attach_first(pass.first);
  hold_pass_activations(pass, own);
  free_at_end(pass.last, MemCategory::kActivations, own.saved);
  alloc_at_end(pass.last, MemCategory::kActivations, own.stored);
  alloc_at_end(pass.last, MemCategory::kActivations, own.router_logits);  // freed after the loss forward
  end_use(pass.last);
  if (layer + 1 == c_.layers) alloc_at_end(pass.last, MemCategory::kParams, t_.reuse_kept_bytes);

  const int released = layer - t_.checkpoints_kept_on_device;
  if (t_.checkpoints_offloaded && released >= 0) {
    g_.add_dep(ckpt_d2h_[released], pass.last);  // DeepSpeed waits for the copy before reusing memory
    free_at_end(pass.last, MemCategory::kActivations, t_.layer(released).stored);
  }
  ckpt_d2h_[layer] = add_optional(micro_prefix(micro) + "ckpt_d2h.L" + std::to_string(layer), Resource::kD2H,
                                  OpCategory::kOffload, c_.ckpt_d2h_s);
  g_.add_dep(pass.last, ckpt_d2h_[layer]);  // overlaps the next layer's forward
  // Kept only while a layer runs: these stacks copy synchronously inside the layer, so the last
  // layer's checkpoint has left when its forward returns, before the loss.
  if (t_.checkpoints_offloaded && t_.checkpoints_only_while_running && layer + 1 == c_.layers) {
    free_at_end(pass.last, MemCategory::kActivations, own.stored);
  }
}

// The head use: loss forward then backward. The logits peak while the forward runs, its saved
// tensors stay until the backward, which holds its larger moment (costmodel loss_backward_moment:
// the cross-entropy's gradients, or the head's backward after they are freed).
void StepGraphBuilder::emit_loss(int micro) {
  const std::string prefix = micro_prefix(micro) + "loss.";
  begin_use();
  if (t_.checkpoints_reload_ahead) emit_ckpt_h2d(micro, static_cast<int>(c_.layers) - 1);
  OpId fwd_first = kNoOp, bwd_first = kNoOp;
  const OpId fwd_last = emit_tiles(prefix + "fwd", c_.loss_fwd_s, c_.loss_tiles, &fwd_first);
  const OpId bwd_last = emit_tiles(prefix + "bwd", c_.loss_bwd_s, c_.loss_tiles, &bwd_first);
  attach_first(fwd_first);
  alloc_at_start(fwd_first, MemCategory::kLogits, t_.loss_forward_peak_bytes);
  free_at_end(fwd_last, MemCategory::kLogits, t_.loss_forward_peak_bytes);
  alloc_at_end(fwd_last, MemCategory::kLogits, t_.loss_saved_bytes);
  alloc_at_start(bwd_first, MemCategory::kLogits, t_.loss_backward_peak_bytes - t_.loss_saved_bytes);
  alloc_at_start(bwd_first, MemCategory::kGrads, t_.loss_backward_grads_bytes);
  free_at_end(bwd_last, MemCategory::kLogits, t_.loss_backward_peak_bytes);
  free_at_end(bwd_last, MemCategory::kGrads, t_.loss_backward_grads_bytes);
  // The load-balancing loss: every layer's softmax kept over the loss (its logits freed after the
  // forward), the logits' gradients from its backward on, each freed by its layer's backward.
  const double router_logits = static_cast<double>(c_.layers) * t_.router_logits_bytes_per_layer;
  alloc_at_start(fwd_first, MemCategory::kActivations, router_logits);
  free_at_end(fwd_last, MemCategory::kActivations, router_logits);
  alloc_at_start(bwd_first, MemCategory::kActivations, router_logits);
  free_at_end(bwd_last, MemCategory::kActivations, router_logits);
  end_use(bwd_last);
}

}  // namespace spplan::sim::detail
