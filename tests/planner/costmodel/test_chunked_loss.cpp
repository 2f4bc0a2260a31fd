// A tiled loss that recomputes its chunks (TrainingStack::tiled_loss_recomputes_chunks: TRL's
// chunked_nll): what it holds and how long it takes, worked by hand for Llama-3.1-8B on 8 GPUs at
// 256K tokens under Ulysses 8 (32768 tokens a rank), bf16.
#include <gtest/gtest.h>

#include "planner/costmodel/estimate.hpp"
#include "planner/costmodel/memory.hpp"
#include "planner/costmodel/step_costs.hpp"
#include "tests/planner/costmodel/fixtures.hpp"

namespace spplan::costmodel {
namespace {

using testing::llama8b;

PlanSpec chunked(int64_t zero_stage) {
  PlanSpec p = llama8b(8, 8, 8 * 32768);
  p.knobs.zero_stage = zero_stage;
  p.knobs.tiled_loss = true;
  p.stack.loop_holds_logits = false;
  p.stack.tiled_loss_recomputes_chunks = true;
  p.stack.tiled_loss_chunk_tokens = 256;
  return p;
}

TEST(ChunkedLoss, KeepsTheOrderedHiddenStatesAndOneChunk) {
  const PlanSpec p = chunked(1);
  const double s = 32768, v = 128256, h = 4096, c = 256;
  // The final RMSNorm (eager): its fp32 input copy (4) and normalised output (2) per hidden entry
  // and its fp32 rsqrt (4) per token; its output (2 per entry) is the head's input.
  const double final_norm = (4.0 + 2.0) * h * s + 4.0 * s, head_input = 2.0 * h * s;
  // The hidden states in label order (2 per entry) and the indices: int64 order and labels, bool mask.
  const double ordered = 2.0 * h * s + 17.0 * s;
  EXPECT_DOUBLE_EQ(loss_saved_bytes(p), ordered + final_norm);
  // Forward: the norm's output beside its ordered copy, and one chunk's four fp32 [c, V] tensors.
  EXPECT_DOUBLE_EQ(loss_forward_peak_bytes(p), head_input + ordered + 4 * 4.0 * c * v + final_norm);
  // Backward: the kept copy, the hidden states' gradient, the recomputed chunk's two fp32 [c, V]
  // tensors; below ZeRO 2 one chunk's bf16 head gradient on top of the weight's own.
  const LossBackwardMoment m = loss_backward_moment(p);
  EXPECT_DOUBLE_EQ(m.logits_bytes, ordered + 2.0 * h * s + 2 * 4.0 * c * v + final_norm);
  EXPECT_DOUBLE_EQ(m.grads_bytes, 2.0 * v * h);
  EXPECT_DOUBLE_EQ(loss_backward_peak_bytes(p), m.logits_bytes);
  // At ZeRO 2 and 3 the accumulated head gradient is a transient too (head_grad_transient_bytes).
  EXPECT_DOUBLE_EQ(loss_backward_moment(chunked(3)).grads_bytes, 2 * 2.0 * v * h);
}

// No term of the recomputed loss grows with s x V: a rank's tokens double, its loss memory grows
// by the per-token terms only, where the untiled loss's grows by its [s, V] fp32 tensors.
TEST(ChunkedLoss, HasNoVocabularyTermPerToken) {
  PlanSpec p = chunked(1), twice = chunked(1);
  twice.seq_len *= 2;
  const double s = 32768, h = 4096;
  const double per_token = (2.0 + 2.0) * h + 17.0 + (4.0 + 2.0) * h + 4.0;  // input + ordered copy + final norm
  EXPECT_DOUBLE_EQ(loss_forward_peak_bytes(twice) - loss_forward_peak_bytes(p), per_token * s);
}

// The recompute: each chunk's head GEMM runs twice (forward, and again before its backward), the
// backward's two GEMMs once, so the loss's backward is its forward and more; Liger's (which made its
// gradients in the forward) only scales them.
TEST(ChunkedLoss, TheBackwardRecomputesTheForward) {
  const PlanSpec p = chunked(1);
  const StepCosts c = step_costs(p);
  EXPECT_EQ(c.loss_tiles, 32768 / 256);
  EXPECT_GT(c.loss_bwd_s, 2 * c.loss_fwd_s);  // the recompute, then two GEMMs as long as the first
  PlanSpec liger = p;
  liger.stack.tiled_loss_recomputes_chunks = false;
  liger.stack.tiled_loss_chunk_tokens = 0;
  EXPECT_LT(step_costs(liger).loss_bwd_s, c.loss_bwd_s);
}

}  // namespace
}  // namespace spplan::costmodel
