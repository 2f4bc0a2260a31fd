#include "planner/costmodel/memory.hpp"

#include <gtest/gtest.h>

#include "planner/costmodel/software_facts.hpp"

#include "planner/config/loaders.hpp"
#include "planner/core/units.hpp"
#include "tests/planner/costmodel/fixtures.hpp"

namespace spplan::costmodel {
namespace {

using testing::llama8b;

// Qwen's model card: 30.5B parameters, 3.3B activated; a token runs through 8 of the 128 experts.
TEST(ParamCounts, AMixtureCountsEveryExpertAndATokenRunsK) {
  const ParamCounts c = param_counts(testing::qwen3_30b_a3b());
  EXPECT_NEAR(c.total / 30.5e9, 1.0, 0.005);
  EXPECT_DOUBLE_EQ(c.mlp, 128 * 3 * 2048.0 * 768 + 2048.0 * 128);  // experts + router
  EXPECT_DOUBLE_EQ(c.mlp_active, 8 * 3 * 2048.0 * 768 + 2048.0 * 128);
  const double active = 48 * (c.attention + c.mlp_active + 2 * 2048.0) + c.embedding + c.lm_head + 2048;
  EXPECT_NEAR(active / 3.3e9, 1.0, 0.02);
  const ParamCounts dense = param_counts(load_model("llama-3.1-8b").value());
  EXPECT_EQ(dense.mlp, dense.mlp_active);
}

// What a mixture's layer saves per token: its k experts' SwiGLU (4 tensors of the expert width
// each) and routing: the gathered input and the expert output of each slot, the router's fp32
// softmax over E, the top-k's int64 indices and fp32 weights; run as grouped GEMMs (transformers 5)
// three int64 slot indices, run as a loop over the experts (the engine) the weighted output
// index_add_ keeps and two int64 slot indices instead.
TEST(Activations, AMixtureSavesItsExpertsSwiGluAndItsRouting) {
  PlanSpec p = llama8b(8, 8, 32768);
  p.model = testing::qwen3_30b_a3b();
  const double a = 2, h = 2048, k = 8, ie = 768, experts = 128;
  const double swiglu = 4 * a * k * ie, routing = 2 * k * a * h + 4 * experts + 12 * k;
  PlanSpec dense_twin = p;  // the same layer with a dense MLP as wide as the k experts together
  dense_twin.model.num_experts = dense_twin.model.experts_per_token = dense_twin.model.moe_intermediate_size = 0;
  dense_twin.model.intermediate_size = static_cast<int64_t>(k * ie);
  EXPECT_DOUBLE_EQ(layer_saved_bytes(p) - layer_saved_bytes(dense_twin), (routing + 3 * 8 * k) * local_tokens(p));
  EXPECT_DOUBLE_EQ(swiglu, 4 * a * dense_twin.model.intermediate_size);
  p.stack.moe_expert_loop = true;
  dense_twin.stack.moe_expert_loop = true;
  EXPECT_DOUBLE_EQ(layer_saved_bytes(p) - layer_saved_bytes(dense_twin), (routing + k * a * h + 2 * 8 * k) * local_tokens(p));
}

// OpenAI's gpt-oss model card: 116.83B parameters (gpt-oss-120b) and 20.91B (gpt-oss-20b), the
// experts' and router's biases and a sink per head among them.
TEST(ParamCounts, GptOssMatchesItsModelCard) {
  EXPECT_NEAR(param_counts(load_model("gpt-oss-120b").value()).total / 116.83e9, 1.0, 0.005);
  const ModelSpec m = load_model("gpt-oss-20b").value();
  const ParamCounts c = param_counts(m);
  EXPECT_NEAR(c.total / 20.91e9, 1.0, 0.005);
  EXPECT_DOUBLE_EQ(c.mlp, 32 * (3 * 2880.0 * 2880 + 2 * 2880 + 2880) + 2880.0 * 32 + 32);
}

// gpt-oss's experts keep 7 i-wide tensors a slot for their clamped SwiGLU (the eager SwiGLU's 4),
// and its router softmaxes the top k logits only: k bf16 values a token, not E fp32 ones.
TEST(Activations, GptOssClampedSwiGluAndRouterAfterTopK) {
  PlanSpec p = llama8b(8, 1, 16384);
  p.model = load_model("gpt-oss-20b").value();
  p.stack.attention = AttentionKernel::kFlex;
  PlanSpec plain = p;
  plain.model.swiglu_limit = 0;
  plain.model.router_softmax_after_topk = false;
  const double a = 2, k = 4, i = 2880, experts = 32;
  EXPECT_DOUBLE_EQ(layer_saved_bytes(p) - layer_saved_bytes(plain), (3 * a * k * i + a * k - 4 * experts) * local_tokens(p));
}

// GLM-4.5-Air (Z.ai's model card: 106B parameters, 12B active besides the embeddings): 45 mixture
// layers of 128 experts and a shared one, one dense layer of width 10944, q/k/v biases; ZeRO-3
// gathers the mixture layer, the largest; ZeRO's traffic moves the mean layer.
TEST(ParamCounts, GlmAirCountsItsDenseFirstLayerAndSharedExpert) {
  const ParamCounts c = param_counts(load_model("glm-4.5-air").value());
  const double h = 4096, attention = 2 * h * 12288 + 2 * h * 1024 + 12288 + 2 * 1024, expert = 3 * h * 1408;
  EXPECT_DOUBLE_EQ(c.attention, attention);
  EXPECT_DOUBLE_EQ(c.mlp, 128 * expert + h * 128 + expert);  // experts, router, shared expert
  EXPECT_DOUBLE_EQ(c.dense_layer, attention + 3 * h * 10944 + 2 * h);
  EXPECT_DOUBLE_EQ(c.layers, 45 * c.per_layer + c.dense_layer);
  EXPECT_DOUBLE_EQ(c.mean_layer, c.layers / 46);
  EXPECT_NEAR(c.total / 106e9, 1.0, 0.01);
  EXPECT_NEAR(c.layers_active / 12e9, 1.0, 0.02);
}

// What the first layers save without checkpointing: GLM-4.5-Air's dense first layer saves its
// dense MLP's SwiGLU and no routing, the mixture layers theirs and the shared expert's; the
// mixture's router keeps an fp32 copy of its input; RoPE's tables cover the rotated half.
TEST(Activations, GlmAirsDenseFirstLayerSavesItsOwnMlp) {
  PlanSpec p = llama8b(8, 1, 16384);
  p.model = load_model("glm-4.5-air").value();
  p.knobs.act_ckpt = ActCkpt::kNone;
  const PlanSpec dense = dense_layer_plan(p);
  EXPECT_FALSE(dense.model.is_moe());
  EXPECT_EQ(dense.model.routed_width(), 10944);
  const double s = local_tokens(p), a = 2;
  EXPECT_DOUBLE_EQ(layers_saved_bytes(p, 1), layer_saved_bytes(dense));
  EXPECT_DOUBLE_EQ(layers_saved_bytes(p, 46), layer_saved_bytes(dense) + 45 * layer_saved_bytes(p));
  // The two kinds differ by their SwiGLU widths and the mixture's routing (grouped experts).
  const double routing = 8 * (2 * a * 4096 + 3 * 8) + 4 * 128 + 12 * 8 + 4 * 4096;
  EXPECT_DOUBLE_EQ(layer_saved_bytes(p) - layer_saved_bytes(dense), (4 * a * (9 * 1408 - 10944) + routing) * s);
  EXPECT_DOUBLE_EQ(rope_tables_bytes(p), 2 * a * 64 * s);
}

TEST(ParamCounts, Llama31_8bMatchesPublishedCount) {
  // Per layer: q 4096*4096 + k,v 2*4096*1024 + o 4096*4096 = 41,943,040; MLP 3*4096*14336 =
  // 176,160,768; norms 2*4096 -> 218,112,000. x32 + embedding and lm_head 2*128256*4096 + final
  // norm 4096 = 8,030,261,248 (Meta's model card: 8.03B).
  const ParamCounts c = param_counts(load_model("llama-3.1-8b").value());
  EXPECT_DOUBLE_EQ(c.per_layer, 218112000.0);
  EXPECT_DOUBLE_EQ(c.total, 8030261248.0);
}

TEST(ModelState, Zero3ShardsEverythingOverTheWorld) {
  PlanSpec p = llama8b(8, 8, 8192);
  const double psi = param_counts(p.model).total;
  const ModelStateBytes s = model_state_bytes(p);
  const double persistent_norms = 2.0 * (32 * 2 + 1) * 4096;  // bf16 norm weights kept gathered
  EXPECT_DOUBLE_EQ(s.params, 2 * psi / 8 + persistent_norms);
  EXPECT_DOUBLE_EQ(s.grads, 2 * psi / 8);
  EXPECT_DOUBLE_EQ(s.optimizer, 12 * psi / 8);  // fp32 master 4 + Adam 8
  p.knobs.offload_optimizer = OffloadDevice::kCpu;
  EXPECT_DOUBLE_EQ(model_state_bytes(p).optimizer, 0.0);
  EXPECT_DOUBLE_EQ(model_state_bytes(p).grads, 0.0);  // gradient partitions live on the host
  EXPECT_DOUBLE_EQ(host_memory(p).optimizer_bytes, 18 * psi / 8 * 8);  // 18 B per element, 8 ranks on the node
}

// DeepSpeed keeps small parameters and the layers reused across the forward/backward turn
// gathered; a stack that frees every gathered layer (reuse window 0, no persistence) keeps none.
TEST(ModelState, Zero3RetentionFollowsTheStack) {
  PlanSpec p = llama8b(8, 8, 8192);
  p.knobs.zero_stage = 3;
  const double psi = param_counts(p.model).total, h = p.model.hidden_size;
  EXPECT_DOUBLE_EQ(zero3_persistent_elems(p), (2 * 32 + 1) * h);
  EXPECT_GT(reuse_kept_params_bytes(p), 0.0);
  p.stack.zero3_reuse_window_elems = p.stack.zero3_persistence_threshold_elems = 0.0;
  EXPECT_DOUBLE_EQ(zero3_persistent_elems(p), 0.0);
  EXPECT_DOUBLE_EQ(reuse_kept_params_bytes(p), 0.0);
  EXPECT_DOUBLE_EQ(model_state_bytes(p).params, 2 * psi / 8);
}

// A multimodal model's encoders: trained, they hold all a parameter holds; frozen by the stack,
// only their weights, at every stage and on the host with offload.
TEST(ModelState, FrozenEncodersHoldWeightsOnly) {
  PlanSpec p = llama8b(8, 8, 8192);
  p.knobs.zero_stage = 3;
  const double text = param_counts(p.model).total, encoders = 4e8;
  p.model.encoder_params = encoders;
  EXPECT_DOUBLE_EQ(param_counts(p.model).total, text + encoders);
  EXPECT_DOUBLE_EQ(trained_params(p), text + encoders);
  p.stack.freezes_encoders = true;
  EXPECT_DOUBLE_EQ(trained_params(p), text);
  const double persistent_norms = 2.0 * (32 * 2 + 1) * 4096;
  EXPECT_DOUBLE_EQ(model_state_bytes(p).params, 2 * (text + encoders) / 8 + persistent_norms);
  EXPECT_DOUBLE_EQ(model_state_bytes(p).grads, 2 * text / 8);
  EXPECT_DOUBLE_EQ(model_state_bytes(p).optimizer, 12 * text / 8);
  p.knobs.offload_optimizer = p.knobs.offload_params = OffloadDevice::kCpu;
  EXPECT_DOUBLE_EQ(host_memory(p).optimizer_bytes, 18 * text);          // 8 ranks on the node
  EXPECT_DOUBLE_EQ(host_memory(p).params_bytes, 2 * (text + encoders));  // every weight partition
  p.knobs.zero_stage = 1;
  p.knobs.offload_optimizer = p.knobs.offload_params = OffloadDevice::kNone;
  EXPECT_DOUBLE_EQ(model_state_bytes(p).params, 2 * (text + encoders));  // replicated, frozen or not
  EXPECT_DOUBLE_EQ(model_state_bytes(p).grads, 2 * text);
}

// Trained encoders a text step never runs: DeepSpeed ZeRO (hf's Ulysses) holds their gradients and
// optimizer state; FSDP2 with torch's AdamW (hf's ring) makes neither for a parameter without a
// gradient, so they hold their weights only there.
TEST(ModelState, UnrunEncodersHoldStateOnlyWhereTheLayoutMakesIt) {
  PlanSpec p = llama8b(8, 8, 65536);
  p.stack = trainer_stack("hf");
  p.knobs.zero_stage = 3;
  const double text = param_counts(p.model).total, encoders = 4e8;
  p.model.encoder_params = encoders;
  ASSERT_FALSE(p.stack.freezes_encoders);
  EXPECT_FALSE(encoders_weights_only(p));  // Ulysses on DeepSpeed
  EXPECT_DOUBLE_EQ(trained_params(p), text + encoders);
  p.knobs.sp = 1;
  p.knobs.cp = 8;  // the ring on FSDP2
  EXPECT_TRUE(encoders_weights_only(p));
  EXPECT_DOUBLE_EQ(trained_params(p), text);
  EXPECT_DOUBLE_EQ(model_state_bytes(p).optimizer, 12 * text / 8);
  p.model.encoder_params = 0;  // nothing to hold
  EXPECT_FALSE(encoders_weights_only(p));
}

TEST(ModelState, Zero0ReplicatesAndZero1ShardsOnlyTheOptimizer) {
  PlanSpec p = llama8b(8, 1, 8192);
  const double psi = param_counts(p.model).total;
  p.knobs.zero_stage = 0;
  EXPECT_DOUBLE_EQ(model_state_bytes(p).optimizer, 12 * psi);
  p.knobs.zero_stage = 1;
  EXPECT_DOUBLE_EQ(model_state_bytes(p).optimizer, 12 * psi / 8);
  EXPECT_DOUBLE_EQ(model_state_bytes(p).grads, 2 * psi);
  EXPECT_DOUBLE_EQ(model_state_bytes(p).params, 2 * psi);
}

// The engine's window in masked blocks (window_attention.hpp): its attention backward holds the
// band bias ([w, 2w - 1] in the activation dtype) and one block's kernel gradients (dq of w rows
// over the rank's heads, dk and dv of 2w - 1 keys over its key-value heads) beside the whole dq,
// dk, dv; nothing where the window covers the sequence or the kernel skips what it leaves out.
TEST(Activations, MaskedWindowBlocksHoldTheBandAndABlocksGradients) {
  PlanSpec p = testing::llama8b(8, 8, 65536);
  p.model.sliding_window = 1024;
  EXPECT_EQ(window_blocks_backward_bytes(p), 0.0);  // FlashAttention's window_size: none
  p.stack.window_in_masked_blocks = true;
  const double a = 2, w = 1024, q = 32 * 128 / 8.0, kv = 128;  // 8 kv heads over sp 8: one a rank
  ASSERT_EQ(p.model.kv_heads_per_rank(8), 1);
  EXPECT_DOUBLE_EQ(window_blocks_backward_bytes(p), a * w * (2 * w - 1) + a * (w * q + 2 * (2 * w - 1) * kv));
  const LayerBackwardMoments with = layer_backward_moments(p);
  p.stack.window_in_masked_blocks = false;
  EXPECT_DOUBLE_EQ(with.attention - layer_backward_moments(p).attention, a * w * (2 * w - 1) + a * (w * q + 2 * (2 * w - 1) * kv));
  p.stack.window_in_masked_blocks = true;
  p.seq_len = 1024;
  EXPECT_EQ(window_blocks_backward_bytes(p), 0.0);  // inside the window: causal attention
}

TEST(Activations, CheckpointIsOneHiddenStatePerLayer) {
  const PlanSpec p = llama8b(8, 8, 8 * 1024);
  EXPECT_DOUBLE_EQ(local_tokens(p), 1024.0);
  EXPECT_DOUBLE_EQ(checkpoint_bytes_per_layer(p), 2.0 * 4096 * 1024);
  EXPECT_DOUBLE_EQ(checkpoints_on_device_bytes(p), 32 * 2.0 * 4096 * 1024);
}

TEST(Activations, UnevenSequencesArePaddedToAMultipleOfSp) {
  const PlanSpec p = llama8b(8, 8, 8 * 1024 + 1);
  EXPECT_DOUBLE_EQ(local_tokens(p), 1025.0);
}

TEST(Activations, LayerWorkingSetShrinksWithSp) {
  // Llama-3.1-8B has 8 kv heads, so up to sp 8 every saved tensor is split by sp. At sp > 1
  // o_proj's input is the all-to-all's output, a tensor of its own (2 B x q_dim per local token);
  // at sp 1 under FlashAttention it is a view of the attention output.
  const double sp1 = layer_saved_bytes(llama8b(8, 1, 65536));
  const double sp8 = layer_saved_bytes(llama8b(8, 8, 65536));
  EXPECT_NEAR(sp8, sp1 / 8 + 2.0 * 4096 * (65536 / 8), 1e-9 * sp8);
}

TEST(Activations, KvHeadsAreReplicatedBeyondKvHeadCount) {
  // qwen3-4b: 8 kv heads. At sp 16 each rank still holds one whole kv head for all tokens, so the
  // k, v term per local token is 2 * 2 B * d * 16 instead of 2 * 2 B * d * 8.
  PlanSpec p;
  p.model = *load_model("qwen3-4b");
  p.cluster.gpu = *load_gpu("h100-80gb");
  p.cluster.num_gpus = 16;
  p.seq_len = 16 * 1024;
  p.knobs.sp = 8;
  const double at8 = layer_saved_bytes(p);
  p.knobs.sp = 16;
  p.seq_len = 16 * 2048;  // same local tokens (2048)
  const double at16 = layer_saved_bytes(p);
  EXPECT_DOUBLE_EQ(at16 - at8, 2048.0 * 2 * 2 * 128 * (16 - 8));
}

// output_router_logits: every mixture layer's router logits [s, E] (bf16) from its forward to the
// loss; the load-balancing loss keeps their softmax and then writes their gradients, which wait for
// each layer's backward (memory_phases.cpp add_router_logits).
TEST(Activations, RouterLogitsForTheLoadBalancingLossAreHeldUntilTheirLayersBackward) {
  PlanSpec p = llama8b(8, 4, 4 * 32768);
  p.model = testing::qwen3_30b_a3b();
  const MemoryPhases without = memory_phases(p);
  p.model.output_router_logits = true;
  const MemoryPhases with = memory_phases(p);
  const double layer = 2.0 * 128 * local_tokens(p), layers = 48;
  EXPECT_DOUBLE_EQ(router_logits_bytes_per_layer(p), layer);
  const auto activations = [](const MemoryBreakdown& m) { return m.activations_bytes; };
  EXPECT_DOUBLE_EQ(activations(with.forward) - activations(without.forward), layers * layer);
  EXPECT_DOUBLE_EQ(activations(with.loss_forward) - activations(without.loss_forward), 2 * layers * layer);
  EXPECT_DOUBLE_EQ(activations(with.loss_backward) - activations(without.loss_backward), 2 * layers * layer);
  EXPECT_DOUBLE_EQ(activations(with.layer_backward) - activations(without.layer_backward), layers * layer);
  p.model = load_model("llama-3.1-8b").value();  // a dense model has no router
  p.model.output_router_logits = true;
  EXPECT_EQ(router_logits_bytes_per_layer(p), 0.0);
}

// Gemma 2's and 3's sandwich norms: two more RMSNorms a layer, each keeping what a norm of a
// tensor no one else keeps does (its input, or its fp32 copy, its output and the rsqrt).
TEST(Activations, SandwichNormsSaveTwoMoreNorms) {
  PlanSpec p = llama8b(8, 8, 8 * 32768);
  const double two = layer_saved_bytes(p);
  p.model.sandwich_norms = true;
  const double a = 2, h = 4096;
  EXPECT_DOUBLE_EQ(layer_saved_bytes(p) - two, 2 * ((4 + 2 * a) * h + 4) * local_tokens(p));
}

TEST(Loss, UntiledLossKeepsFp32LogitsAndTiledDoesNot) {
  PlanSpec p = llama8b(8, 8, 8 * 32768);
  const double s = 32768, v = 128256, h = 4096;
  // The final RMSNorm (eager): its fp32 input copy (4) and normalised output (2) per hidden entry
  // and its fp32 rsqrt (4) per token, and its output (2), which lm_head saves as its input.
  const double final_norm = (4.0 + 2.0) * h * s + 4.0 * s, head_input = 2.0 * h * s;
  // Backward: saved log_softmax (4) + its gradient (4) + logits gradient (4) + held bf16 logits (2).
  EXPECT_DOUBLE_EQ(loss_backward_peak_bytes(p), 14.0 * v * s + final_norm + head_input);
  // Forward: bf16 logits (2) + fp32 upcast (4) + log_softmax output (4).
  EXPECT_DOUBLE_EQ(loss_forward_peak_bytes(p), 10.0 * v * s + final_norm + head_input);
  // Liger FLCE keeps grad_input [s, h], grad_weight [V, h] (bf16) and the fp32 per-token loss;
  // Liger's RMSNorm keeps only its input (2) and its fp32 rstd (4 per token). The forward walks
  // chunks of next_pow2(ceil(s / ceil(V / h))) = next_pow2(32768 / 32) = 1024 tokens while reading
  // its input [s, h].
  p.knobs.tiled_loss = true;
  const double saved = 2.0 * h * s + 2.0 * v * h + 4.0 * s + 2.0 * h * s + 4.0 * s;
  EXPECT_DOUBLE_EQ(loss_backward_peak_bytes(p), saved);
  EXPECT_DOUBLE_EQ(liger_chunk_tokens(s, h, v), 1024.0);
  EXPECT_DOUBLE_EQ(loss_forward_peak_bytes(p), 2.0 * 1024 * v + saved + head_input);
}

// ms-swift's loss under sequence parallel runs the cross-entropy on the bf16 logits
// (TrainingStack::sp_loss_in_logits_dtype): no fp32 copy, and the log_softmax output and the
// gradients in bf16. Without sequence parallel its loss is the model's own, upcast.
TEST(Loss, ALossOnTheLogitsDtypeKeepsTwoBytesALogit) {
  PlanSpec p = llama8b(8, 8, 8 * 32768);
  p.stack.loop_holds_logits = false;
  p.stack.sp_loss_in_logits_dtype = true;
  const double s = 32768, v = 128256, h = 4096;
  const double final_norm = (4.0 + 2.0) * h * s + 4.0 * s, head_input = 2.0 * h * s;
  EXPECT_DOUBLE_EQ(loss_forward_peak_bytes(p), (2.0 + 2.0) * v * s + final_norm + head_input);
  EXPECT_DOUBLE_EQ(loss_saved_bytes(p), 2.0 * v * s + final_norm + head_input);
  EXPECT_DOUBLE_EQ(loss_backward_peak_bytes(p), 3 * 2.0 * v * s + final_norm + head_input);
  PlanSpec alone = p;
  alone.knobs.sp = 1;
  alone.cluster.num_gpus = 1;
  alone.seq_len = 32768;
  EXPECT_DOUBLE_EQ(loss_forward_peak_bytes(alone), 10.0 * v * s + final_norm + head_input);
}

// The lm_head's weight gradient (ZeRO >= 2: a full transient) is allocated by the head's backward,
// after the cross-entropy's backward has freed its [s, V] tensors: the loss backward's moment is the
// larger of the two, not their sum (the sum priced `validate engine`'s ZeRO 2/3 rows 2-4 % high).
// A tiled loss made that gradient in its forward (loss_saved_bytes): nothing on top.
TEST(Loss, TheHeadsWeightGradientComesAfterTheCrossEntropysTensorsAreFreed) {
  PlanSpec p = llama8b(8, 8, 8 * 32768);
  p.knobs.zero_stage = 3;
  const double v = 128256, h = 4096;
  const LossBackwardMoment long_seq = loss_backward_moment(p);
  EXPECT_DOUBLE_EQ(long_seq.logits_bytes, loss_backward_peak_bytes(p));  // 14 B per token and entry
  EXPECT_DOUBLE_EQ(long_seq.grads_bytes, 0);
  // 64 tokens a rank: the head's moment, (2 + 2) v s (gradient and held logits) + 2 s h and the
  // saves, with the 2 v h gradient, outgrows the cross-entropy's 14 v s.
  PlanSpec short_seq = llama8b(8, 8, 8 * 64);
  short_seq.knobs.zero_stage = 3;
  const LossBackwardMoment head = loss_backward_moment(short_seq);
  const double saves = loss_backward_peak_bytes(short_seq) - 14.0 * v * 64;
  EXPECT_DOUBLE_EQ(head.grads_bytes, 2.0 * v * h);
  EXPECT_DOUBLE_EQ(head.logits_bytes, 4.0 * v * 64 + 2.0 * 64 * h + saves);
  EXPECT_GT(head.logits_bytes + head.grads_bytes, loss_backward_peak_bytes(short_seq));
  short_seq.knobs.tiled_loss = true;
  EXPECT_DOUBLE_EQ(loss_backward_moment(short_seq).grads_bytes, 0);
  EXPECT_DOUBLE_EQ(loss_backward_moment(short_seq).logits_bytes, loss_saved_bytes(short_seq));
}

// act_ckpt offload through ArcticTraining's or the engine's copies keeps only the running layer's
// input on the device: the loss, where no layer runs, holds none (measured: the engine's loss
// moment was one checkpoint below the price); the last layer's forward and backward hold one.
// DeepSpeed's offload context (the hf stacks) keeps its stash at the loss too.
TEST(Checkpoints, OffloadedOnesAreOnTheDeviceOnlyWhileTheirLayerRuns) {
  PlanSpec p = llama8b(8, 8, 8 * 32768);
  p.knobs.act_ckpt = ActCkpt::kOffload;
  EXPECT_DOUBLE_EQ(offloaded_checkpoints_kept(p, 32, true), 1);
  EXPECT_DOUBLE_EQ(offloaded_checkpoints_kept(p, 32, false), 0);
  const MemoryPhases arctic = memory_phases(p);
  p.knobs.act_ckpt = ActCkpt::kFull;  // every checkpoint kept: the same phases plus 32 of them
  const MemoryPhases kept = memory_phases(p);
  const double ckpt = checkpoint_bytes_per_layer(p);
  EXPECT_DOUBLE_EQ(kept.loss_forward.activations_bytes - arctic.loss_forward.activations_bytes, 32 * ckpt);
  EXPECT_DOUBLE_EQ(kept.layer_backward.activations_bytes - arctic.layer_backward.activations_bytes, 31 * ckpt);
  // The HF Trainer's offload (transformers 5.17+: save_on_cpu around each checkpoint) copies the
  // input inside the layer too: one while a layer runs, none at the loss.
  p.knobs.act_ckpt = ActCkpt::kOffload;
  p.stack = trainer_stack("hf");
  EXPECT_DOUBLE_EQ(offloaded_checkpoints_kept(p, 32, true), 1);
  EXPECT_DOUBLE_EQ(offloaded_checkpoints_kept(p, 32, false), 0);
}

// TiledMLP's shards: ArcticTraining runs the eager SwiGLU there (4 saved i-wide tensors and 3
// gradients a token), the engine keeps its fused one (3 saved, 1 gradient: its backward overwrites
// the saved gate|up), measured. Shards of ceil(32768 / ceil(32768 / 4096)) = 4096 tokens.
TEST(Activations, TiledMlpShardsRunTheStacksSwiGlu) {
  PlanSpec p = llama8b(8, 8, 8 * 32768);
  p.knobs.tiled_mlp = p.knobs.tiled_loss = true;
  const double arctic = layer_backward_moments(p).mlp;
  p.stack = trainer_stack("engine");
  EXPECT_DOUBLE_EQ(arctic - layer_backward_moments(p).mlp, (7.0 - 4.0) * 2 * 14336 * 4096);
}

// Measured in the engine (`validate engine`): what lives all step besides the layers (the token ids and HF's
// RoPE tables), and down_proj's weight gradient beside its input gradient below ZeRO 2.
TEST(Activations, TokenIdsRopeTablesAndTheDownProjGradient) {
  PlanSpec p = llama8b(8, 8, 8 * 32768);
  const double s = 32768, d = 128, h = 4096, i = 14336;
  EXPECT_DOUBLE_EQ(token_ids_bytes(p), 2 * 8.0 * s);      // input ids + labels, int64
  EXPECT_DOUBLE_EQ(rope_tables_bytes(p), 2 * 2.0 * d * s);  // cos, sin [s, d] bf16
  PlanSpec engine = p;
  engine.stack = trainer_stack("engine");
  EXPECT_DOUBLE_EQ(rope_tables_bytes(engine), 2 * 2.0 * d / 2 * s);  // the engine's [s, d/2] tables
  p.knobs.zero_stage = 1;
  const double below_stage2 = layer_backward_moments(p).mlp;
  p.knobs.zero_stage = 2;
  EXPECT_DOUBLE_EQ(below_stage2 - layer_backward_moments(p).mlp, 2.0 * h * i);
}

// LibTorch's CPU flash kernel (the engine on a CPU): o_proj reads its output without a copy at
// sp 1, and its backward allocates dq, dk, dv only: no fp32 dq accumulator, softmax_d or GQA
// expansion of dk, dv (FlashAttention-2's, MEMORY-FACTS 6.5).
TEST(Activations, CpuFlashAttentionHasNoFlash2BackwardBuffers) {
  PlanSpec p = llama8b(1, 1, 32768);
  p.knobs.act_ckpt = ActCkpt::kFull;
  p.stack.attention = AttentionKernel::kSdpa;
  const double s = 32768, q = 4096, nh = 32, a = 2;
  PlanSpec cpu = p;
  cpu.stack.cpu_flash_attention = true;
  EXPECT_DOUBLE_EQ(layer_saved_bytes(p) - layer_saved_bytes(cpu), a * q * s);  // HF sdpa's .contiguous()
  const double flash2_extra = (2 * a * q + 4.0 * q + 4.0 * nh) * s;         // dk/dv expanded, dq_accum, softmax_d
  // ... less that .contiguous() copy, o_proj's input, which o_proj's backward has freed by then,
  // and less the CPU kernel's block buffers: 256 x 512 attention and gradient, fp32 and bf16.
  const double blocks = 2 * 256 * 512 * (4.0 + 2.0);
  EXPECT_DOUBLE_EQ(layer_backward_moments(p).attention - layer_backward_moments(cpu).attention,
                   flash2_extra - a * q * s - blocks);
}

// ZeRO-Infinity: what lives on the node's drives is counted apart from RAM (MEMORY-FACTS 3.3): the
// fp32 master and Adam moments of every partition element with the optimizer there, each bf16
// partition with the parameters there.
TEST(HostMemory, NvmeHoldsWhatZeroInfinitySwapsThere) {
  PlanSpec p = llama8b(8, 8, 32768);
  p.knobs.zero_stage = 3;
  const double psi = param_counts(p.model).total;  // 8 ranks, ZeRO-3: each owns psi / 8
  EXPECT_EQ(host_memory(p).nvme_bytes, 0);
  p.knobs.offload_optimizer = OffloadDevice::kNvme;
  EXPECT_DOUBLE_EQ(host_memory(p).nvme_bytes, 12.0 * psi);
  p.knobs.offload_params = OffloadDevice::kNvme;
  EXPECT_DOUBLE_EQ(host_memory(p).nvme_bytes, 12.0 * psi + 2.0 * psi);
  const HostMemory host = host_memory(p);
  EXPECT_DOUBLE_EQ(host.total_bytes(), host.optimizer_bytes + host.params_bytes + host.activations_bytes);  // RAM only
}

// FlashAttention 3 accumulates GQA's dk, dv per kv head in fp32 where FlashAttention 2 expands them
// to every query head in bf16, and keeps the log2 log-sum-exp beside softmax_d (hopper/flash_api.cpp).
TEST(Activations, Flash3AccumulatesGqaGradientsPerKvHead) {
  PlanSpec flash2 = llama8b(1, 1, 32768);
  flash2.knobs.act_ckpt = ActCkpt::kFull;
  PlanSpec flash3 = flash2;
  flash3.stack.attention = AttentionKernel::kFlash3;
  const double s = 32768, q = 4096, kv = 1024, nh = 32, a = 2;
  const double flash2_buffers = 2 * a * q + 4.0 * q + 4.0 * nh;  // dk/dv expanded, dq_accum, softmax_d
  const double flash3_buffers = 2 * 4.0 * kv + 4.0 * q + 2 * 4.0 * nh;
  EXPECT_DOUBLE_EQ(layer_backward_moments(flash2).attention - layer_backward_moments(flash3).attention,
                   (flash2_buffers - flash3_buffers) * s);
  // Its output is in FlashAttention 2's layout: o_proj reads it without SDPA's copy.
  EXPECT_DOUBLE_EQ(layer_saved_bytes(flash2), layer_saved_bytes(flash3));
}

// LibTorch's fp32 rms_norm on a GPU (the engine's fp32 layers) saves the input and the reciprocal
// RMS, not the normalised value the eager chain keeps: one h-wide fp32 tensor less per norm, two a
// layer (an H100, 2026-11-26: the eager count was 0.89 GiB high at qwen3-0.6b fp32 4K, exactly that).
TEST(Activations, TheEnginesFp32NormsKeepNoNormalisedValue) {
  PlanSpec engine = testing::llama8b(1, 1, 4096);
  engine.knobs.precision = Precision::kFp32;
  engine.knobs.act_ckpt = ActCkpt::kNone;
  engine.stack = trainer_stack("engine");
  PlanSpec composite = engine;
  composite.stack.fp32_norms_fused_on_gpu = false;  // as predict.cpp prices a CPU
  EXPECT_DOUBLE_EQ(layer_saved_bytes(composite) - layer_saved_bytes(engine), 2 * 4.0 * 4096 * 4096);
  engine.knobs.precision = composite.knobs.precision = Precision::kBf16;
  EXPECT_DOUBLE_EQ(layer_saved_bytes(composite), layer_saved_bytes(engine));
}

// DeepSpeed's step flattens one sub-group's bf16 gradients and makes their fp32 copy (6 B an element,
// at most 1e9 elements); the engine upcasts the rank's whole partition into one fp32 buffer (4 B an
// element; an H100, 2026-11-26: the states plus 2.29 GiB at the step of qwen3-0.6b, whose fp32
// gradients are 2.22 GiB). fp32 training steps in place either way.
TEST(OptimizerStep, TheEngineUpcastsItsWholePartitionDeepSpeedOneSubGroup) {
  PlanSpec p = testing::llama8b(1, 1, 4096);
  p.knobs.precision = Precision::kBf16;
  const double params = param_counts(p.model).total;
  EXPECT_DOUBLE_EQ(optimizer_step_transient_bytes(p), 1e9 * (2.0 + 4.0));
  PlanSpec engine = p;
  engine.stack = trainer_stack("engine");
  EXPECT_DOUBLE_EQ(optimizer_step_transient_bytes(engine), params * 4.0);
  engine.knobs.precision = Precision::kFp32;
  EXPECT_DOUBLE_EQ(optimizer_step_transient_bytes(engine), 0.0);
}

// Below ZeRO 2 with an fp32 reduction of bf16 gradients (sp > 1, sp_comm_dtype fp32): DeepSpeed keeps
// its bucket and makes its converted copy during the backward; the engine reduces after the
// backward, one converted bucket at a time (train.cpp all_reduce_grads), so neither is alive at the
// backward and the copy is priced after it. Measured in `validate engine`'s bf16 case (s8k sp 2, ZeRO 0):
// the peak held no buffer.
TEST(ReduceBuffers, TheEngineReducesAfterTheBackwardOneConvertedBucketAtATime) {
  PlanSpec p = llama8b(8, 8, 8 * 32768);
  p.knobs.zero_stage = 1;
  p.knobs.sp_comm_dtype = CommDtype::kFp32;
  p.knobs.reduce_bucket_elems = 1e8;
  const double bucket = 1e8 * 4.0;
  EXPECT_DOUBLE_EQ(reduce_buffer_bytes(p), bucket);
  EXPECT_DOUBLE_EQ(reduce_after_backward_bytes(p), 0.0);
  PlanSpec engine = p;
  engine.stack = trainer_stack("engine");
  EXPECT_DOUBLE_EQ(reduce_buffer_bytes(engine), 0.0);
  EXPECT_DOUBLE_EQ(reduce_copy_bytes(engine), 0.0);
  EXPECT_DOUBLE_EQ(reduce_after_backward_bytes(engine), bucket);
  const MemoryPhases with = memory_phases(engine);
  EXPECT_DOUBLE_EQ(with.optimizer_step.buffers_bytes - persistent_memory(engine).buffers_bytes, bucket);
  engine.knobs.sp_comm_dtype = CommDtype::kBf16;  // the gradients' own dtype: reduced in place
  EXPECT_DOUBLE_EQ(reduce_after_backward_bytes(engine), 0.0);
  engine.knobs.zero_stage = 2;  // reduce-scattered during the backward, as DeepSpeed
  engine.knobs.sp_comm_dtype = CommDtype::kFp32;
  EXPECT_DOUBLE_EQ(reduce_buffer_bytes(engine), 2 * bucket);
  EXPECT_DOUBLE_EQ(reduce_after_backward_bytes(engine), 0.0);
}

// LibTorch's CPU flash backward allocates its block buffers for every thread of the pool
// (FlashAttentionKernel.cpp): 1 MiB per thread in fp32 at 256 x 512 blocks; at 500 queries the
// blocks are 64 x 500. No other kernel has them.
TEST(Activations, CpuFlashBackwardHoldsBlockBuffersForEveryThread) {
  PlanSpec p = llama8b(1, 1, 32768);
  p.knobs.precision = Precision::kFp32;
  p.stack.cpu_flash_attention = true;
  EXPECT_DOUBLE_EQ(cpu_flash_backward_scratch_bytes(p), 2 * 256 * 512 * 4.0);
  const double one_thread = layer_backward_moments(p).attention;
  p.stack.cpu_flash_threads = 4;
  EXPECT_DOUBLE_EQ(layer_backward_moments(p).attention - one_thread, 3 * 2 * 256 * 512 * 4.0);
  p.seq_len = 500;
  EXPECT_DOUBLE_EQ(cpu_flash_backward_scratch_bytes(p), 4 * 2 * 64 * 500 * 4.0);
  p.stack.cpu_flash_attention = false;
  EXPECT_DOUBLE_EQ(cpu_flash_backward_scratch_bytes(p), 0.0);
}

// At its forward all-to-all a layer holds its first norm's saves (eager bf16: fp32 input copy,
// output, weighted output, fp32 rstd; the input is the checkpoint), q, k, v as projected and the
// two copies of the exchange; by the backward all-to-all the attention's saved tensors are gone.
TEST(Activations, UlyssesMomentsHoldWhatIsAliveAtEachAllToAll) {
  PlanSpec p = llama8b(8, 8, 8 * 32768);
  p.knobs.act_ckpt = ActCkpt::kFull;
  const double s = 32768, h = 4096, q = 4096, kv = 1024, a = 2, nh = 32;
  const double norm1 = (4 + 2 * a) * h + 4, qkv = a * (q + 2 * kv), copies = 2 * a * (q + 2 * kv);
  EXPECT_DOUBLE_EQ(ulysses_exchange_moment_bytes(p), (norm1 + qkv + copies) * s);
  PlanSpec one = p;
  one.knobs.sp = 1;
  EXPECT_DOUBLE_EQ(ulysses_exchange_moment_bytes(one), 0.0);
  // Backward: DeepSpeed exchanges dq, dk, dv one at a time (the gradients' block and dq's send
  // copy and receive buffer); the engine all three at once (its receive block: at micro-batch 1 the
  // gradient is the send buffer).
  const LayerBackwardMoments m = layer_backward_moments(p);
  const double attention_saved = (2 * a * q + 2 * a * kv + 4 * nh) * s, block = copies / 2 * s;
  EXPECT_DOUBLE_EQ(m.a2a, a * h * s + block + 2 * a * q * s - m.freed_before_attention - attention_saved);
  p.stack = trainer_stack("engine");
  const LayerBackwardMoments e = layer_backward_moments(p);
  EXPECT_DOUBLE_EQ(e.a2a, a * h * s + 2 * block - e.freed_before_attention - attention_saved);
  p.knobs.micro_batch = 2;  // then a send copy too, of twice the tokens
  EXPECT_DOUBLE_EQ(layer_backward_moments(p).a2a, 2 * (a * h * s + 3 * block) - layer_backward_moments(p).freed_before_attention -
                                                      2 * attention_saved);
}

// A head dimension far above the hidden size (q 1024 against h 64, all heads KV heads) on the CPU
// flash kernel: the recompute's exchange (q, k, v and their two copies) outweighs the backward on
// the finished recompute, and the layer backward is priced at it: the incoming gradient, the first
// norm's saves, q, k, v and the copies, besides the stored checkpoints. For Llama-3.1-8B at sp 8
// the backward's moments stay the larger.
TEST(Activations, TheRecomputesExchangeIsTheLayerBackwardWhenItsCopiesOutweighTheBackward) {
  PlanSpec p = llama8b(2, 2, 2 * 8192);
  p.model.hidden_size = 64;
  p.model.num_attention_heads = p.model.num_key_value_heads = 8;
  p.model.head_dim = 128;
  p.model.intermediate_size = 128;
  p.knobs.act_ckpt = ActCkpt::kFull;
  p.knobs.zero_stage = 1;  // nothing gathered
  p.stack.cpu_flash_attention = true;
  auto has = [](const MemoryBreakdown& m, const std::string& name) {
    for (int i = 0; i < m.term_count; ++i) {
      if (m.terms[i].name == name) return true;
    }
    return false;
  };
  const MemoryBreakdown bwd = memory_phases(p).layer_backward;
  EXPECT_TRUE(has(bwd, "recompute's Ulysses all-to-all copies"));
  const double s = 8192, a = 2, q = 1024, h = 64;
  const double norm1 = (4 + 2 * a) * h + 4, qkv = 3 * a * q, copies = 2 * 3 * a * q;
  const MemoryBreakdown states = persistent_memory(p);
  const double stored = step_inputs_bytes(p) + p.model.num_hidden_layers * a * h * s;
  const double tensors = stored + a * h * s + (norm1 + qkv + copies) * s;
  const double slack = allocator_slack(p).bytes(states.total_bytes() - states.overhead_bytes + tensors);
  EXPECT_NEAR(bwd.total_bytes(), states.total_bytes() + tensors + slack, 1.0);
  PlanSpec llama = llama8b(8, 8, 8 * 32768);
  llama.knobs.act_ckpt = ActCkpt::kFull;
  EXPECT_FALSE(has(memory_phases(llama).layer_backward, "recompute's Ulysses all-to-all copies"));
}

// TiledMLP's forward saves nothing of the MLP (it recomputes one shard at a time in backward).
TEST(Activations, TiledMlpSavesNothingOfTheMlp) {
  PlanSpec p = llama8b(8, 8, 8 * 32768);
  p.knobs.act_ckpt = ActCkpt::kFull;
  const PlanSpec untiled = p;
  p.knobs.tiled_mlp = true;
  const double i = 14336, s = 32768;
  EXPECT_DOUBLE_EQ(layer_saved_bytes(untiled) - layer_saved_bytes(p), 4 * 2 * i * s);  // eager SwiGLU's 4 saved
}

// NCCL connects every SP peer: 32 channels to a peer in the node, 2 to a peer across the network.
TEST(Overhead, AllToAllBuffersCostLessForPeersInOtherNodes) {
  const double per_peer = llama8b(8, 8, 8192).cluster.gpu.nccl_a2a_gib_per_peer * kGiB;
  EXPECT_DOUBLE_EQ(sp_all_to_all_buffer_bytes(llama8b(8, 1, 8192)), 0.0);
  EXPECT_NEAR(sp_all_to_all_buffer_bytes(llama8b(8, 8, 8192)), 7 * per_peer, 1.0);
  EXPECT_NEAR(sp_all_to_all_buffer_bytes(llama8b(32, 32, 8192)), (7 + 24 * 2.0 / 32.0) * per_peer, 1.0);
}

TEST(Peak, GrowsWithSequenceAndFallsWithSp) {
  double previous = 0;
  for (int64_t seq : {8192, 32768, 131072, 524288}) {
    const double now = peak_memory(llama8b(8, 8, seq)).total_bytes();
    EXPECT_GT(now, previous);
    previous = now;
  }
  EXPECT_LT(peak_memory(llama8b(8, 8, 131072)).total_bytes(), peak_memory(llama8b(8, 2, 131072)).total_bytes());
}

TEST(Overhead, AllocatorSlackSparesTheStatesAllocatedOnce) {
  const PlanSpec p = llama8b(8, 8, 262144);
  const AllocatorSlack slack = allocator_slack(p);
  const MemoryBreakdown states = persistent_memory(p);
  EXPECT_DOUBLE_EQ(slack.exempt_bytes, states.total_bytes() - states.overhead_bytes);
  EXPECT_DOUBLE_EQ(slack.bytes(slack.exempt_bytes), 0.0);
  EXPECT_DOUBLE_EQ(slack.bytes(slack.exempt_bytes + 1e9), 0.05 * 1e9);  // h100-80gb: 5%
  // The peak's overhead is the fixed part plus the slack on what the peak moment allocated.
  const MemoryBreakdown peak = peak_memory(p);
  const double allocated = peak.total_bytes() - peak.overhead_bytes;
  EXPECT_NEAR(peak.overhead_bytes, states.overhead_bytes + slack.bytes(allocated), 1e-6 * peak.overhead_bytes);
}

// A stack that runs with expandable segments (the engine) needs only kAllocatorSlackAtLimit of the
// step's transient memory as slack at the limit; the reported peak keeps the whole allowance.
// Without them (the default stack) the whole allowance is needed.
TEST(Overhead, ExpandableSegmentsGiveBackAllButTheSlackAtTheLimit) {
  PlanSpec p = llama8b(8, 8, 262144);
  const MemoryBreakdown without = peak_memory(p);
  EXPECT_DOUBLE_EQ(without.slack_given_back_bytes, 0.0);
  EXPECT_DOUBLE_EQ(without.needed_bytes(), without.total_bytes());
  EXPECT_DOUBLE_EQ(allocator_slack(p).needed_fraction(), 0.05);

  p.stack.expandable_segments = true;
  const AllocatorSlack slack = allocator_slack(p);
  EXPECT_DOUBLE_EQ(slack.needed_fraction(), facts::kAllocatorSlackAtLimit);
  const MemoryBreakdown with = peak_memory(p);
  EXPECT_DOUBLE_EQ(with.total_bytes(), without.total_bytes());  // what a run reserves, memory plentiful
  const double transient = slack.transient(with.total_bytes() - with.overhead_bytes);
  EXPECT_NEAR(with.slack_given_back_bytes, (0.05 - facts::kAllocatorSlackAtLimit) * transient, 1.0);
  EXPECT_NEAR(with.needed_bytes(), with.total_bytes() - (0.05 - facts::kAllocatorSlackAtLimit) * transient, 1.0);

  // A GPU file asking less slack than the limit's caps it there (nothing is given back).
  p.cluster.gpu.allocator_fragmentation = 0.001;
  EXPECT_DOUBLE_EQ(allocator_slack(p).needed_fraction(), 0.001);
  EXPECT_DOUBLE_EQ(peak_memory(p).slack_given_back_bytes, 0.0);
}

TEST(Peak, IsTheLargestPhase) {
  const PlanSpec p = llama8b(8, 8, 262144);
  const MemoryPhases ph = memory_phases(p);
  const double peak = peak_memory(p).total_bytes();
  for (const auto* m : {&ph.forward, &ph.loss_forward, &ph.loss_backward, &ph.layer_backward, &ph.optimizer_step}) {
    EXPECT_LE(m->total_bytes(), peak);
  }
}

}  // namespace
}  // namespace spplan::costmodel
