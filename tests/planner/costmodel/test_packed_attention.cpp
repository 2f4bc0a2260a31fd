// Attention over packed documents (packed_attention.hpp): per document where the trainer's record
// says how its kernel runs them, the whole sequence where it does not; the numbers worked by hand.
#include <gtest/gtest.h>

#include "planner/config/plan_rules.hpp"
#include "planner/config/trainer_rules.hpp"
#include "planner/costmodel/compute.hpp"
#include "planner/costmodel/estimate.hpp"
#include "planner/costmodel/packed_attention.hpp"
#include "planner/costmodel/ring.hpp"
#include "planner/costmodel/step_costs.hpp"
#include "tests/planner/costmodel/fixtures.hpp"

namespace spplan::costmodel {
namespace {

// Llama-3.1-8B at 8192 tokens on 4 H100s under `trainer`, sp x cp over them.
PlanSpec packed_plan(const std::string& trainer, int64_t sp, int64_t cp) {
  PlanSpec p = testing::llama8b(4, sp, 8192);
  p.knobs.cp = cp;
  p.stack = trainer_stack(trainer);
  settle_layout_attention(&p);
  return p;
}

// `per_sequence` documents of `length` tokens in each of `sequences` sequences.
DocumentPieces uniform(int64_t length, int64_t per_sequence, int64_t sequences) {
  return {{{length, per_sequence * sequences}}, sequences};
}

TEST(PackedAttention, OneDocumentASequenceIsPricedAsTheSequence) {
  for (const auto& [trainer, sp, cp] : {std::tuple{"usp", 4, 1}, std::tuple{"usp", 2, 2}, std::tuple{"engine", 1, 4}}) {
    PlanSpec whole = packed_plan(trainer, sp, cp);
    PlanSpec packed = whole;
    packed.documents = uniform(8192, 1, 10);
    ASSERT_TRUE(prices_documents(packed)) << trainer;
    const AttentionWork a = slowest_rank_attention_work(whole, 8192, 0);
    const AttentionWork b = slowest_rank_attention_work(packed, 8192, 0);
    EXPECT_NEAR(b.pairs, a.pairs, 1e-9 * a.pairs) << trainer << " cp " << cp;
    EXPECT_NEAR(b.diagonal_rows, a.diagonal_rows, 1e-9 * a.diagonal_rows) << trainer;
    EXPECT_DOUBLE_EQ(b.biased_pairs, a.biased_pairs);
  }
}

TEST(PackedAttention, EightDocumentsAreAnEighthOfTheCausalPairs) {
  // 8 documents of 1024 in 8192 tokens: 8 x 1024^2 / 2 = 4194304 pairs, where one document of 8192
  // has 8192^2 / 2 = 33554432; each document's rows cross their diagonal once: 8192 rows.
  PlanSpec p = packed_plan("usp", 4, 1);
  p.documents = uniform(1024, 8, 3);
  const AttentionWork w = slowest_rank_attention_work(p, 8192, 0);
  EXPECT_DOUBLE_EQ(w.pairs, 4194304.0);
  EXPECT_DOUBLE_EQ(w.diagonal_rows, 8192.0);
  // On a ring of 2 each rank holds 1/2 of every document's pairs and rows (ms-swift zigzags each one).
  PlanSpec ring = packed_plan("usp", 2, 2);
  ring.documents = p.documents;
  const AttentionWork r = slowest_rank_attention_work(ring, 8192, 0);
  EXPECT_DOUBLE_EQ(r.pairs, 2097152.0);
  EXPECT_DOUBLE_EQ(r.diagonal_rows, 4096.0);
  // The model's work counts the documents: MFU's numerator.
  EXPECT_DOUBLE_EQ(sequence_causal_pairs(p, 8192, 0), 4194304.0);
}

TEST(PackedAttention, TheEngineCallsItsKernelOnceADocument) {
  PlanSpec p = packed_plan("engine", 1, 1);
  p.documents = uniform(1024, 8, 1);
  EXPECT_DOUBLE_EQ(per_document_calls(p, 8192, 0), 8.0);
  // On a ring of 2 (4 zigzag chunks of 2048): a 1024-token document touches 1 + 1024 / 2048 = 1.5
  // chunks on average, 1.5 x 2.5 / 2 = 1.875 (document, query chunk, key chunk) calls; 8 of them,
  // shared by the 2 ranks: 7.5 each.
  PlanSpec ring = packed_plan("engine", 1, 2);
  ring.documents = p.documents;
  EXPECT_DOUBLE_EQ(per_document_calls(ring, 8192, 0), 7.5);
  // A varlen kernel runs them all in one call.
  PlanSpec usp = packed_plan("usp", 4, 1);
  usp.documents = p.documents;
  EXPECT_DOUBLE_EQ(per_document_calls(usp, 8192, 0), 0.0);
}

TEST(PackedAttention, EachExtraCallPaysTheKernelsFixedCostOnly) {
  // The engine's 8 calls a layer pass against one: the same FLOPs, 7 fixed costs more.
  PlanSpec one = packed_plan("engine", 1, 1);
  one.documents = uniform(8192, 1, 1);
  PlanSpec eight = one;
  eight.documents = {{{1024, 8}}, 1};
  const double fwd_fixed = attention_fwd_time_s(one.cluster.gpu, one.stack.attention, 0, 2);
  const LayerPassCosts a = step_costs(one).forward, b = step_costs(eight).forward;
  const double one_flops_s = a.attention_s - fwd_fixed;
  const double eight_flops_s = one_flops_s * (8 * 1024.0 * 1024 / 2 + 8192 * one.cluster.gpu.attention_causal_extra_keys) /
                               (8192.0 * 8192 / 2 + 8192 * one.cluster.gpu.attention_causal_extra_keys);
  EXPECT_NEAR(b.attention_s, eight_flops_s + 8 * fwd_fixed, 1e-12);
}

TEST(PackedAttention, AnUnreadRecordPricesTheWholeSequenceAndSaysSo) {
  // hf's ring (torch context_parallel through Accelerate) was not read for packed documents.
  PlanSpec p = packed_plan("hf", 1, 4);
  ASSERT_EQ(p.stack.ring_packed_attention, PackedAttention::kUnread);
  PlanSpec packed = p;
  packed.documents = uniform(1024, 8, 4);
  EXPECT_FALSE(prices_documents(packed));
  EXPECT_DOUBLE_EQ(slowest_rank_attention_work(packed, 8192, 0).pairs, slowest_rank_attention_work(p, 8192, 0).pairs);
  EXPECT_FALSE(estimate(packed).attention_per_document);
}

TEST(PackedAttention, AnEpochIsItsSequencesOverTheStepsAndTheRealTokensLeaveThePadding) {
  // 100 sequences of 8192 holding 90% real tokens, dp 1 (sp 4), micro batch 1, accumulation 4:
  // 4 sequences a step, 25 steps an epoch.
  PlanSpec p = packed_plan("usp", 4, 1);
  p.knobs.grad_accum_steps = 4;
  p.documents = {{{7372, 100}, {1, 80}}, 100};  // 100 x 7372 + 80 = 737280 = 0.9 x 819200
  const Estimate e = estimate(p);
  EXPECT_DOUBLE_EQ(e.epoch_steps, 25.0);
  EXPECT_DOUBLE_EQ(e.epoch_s, 25 * e.time.step_time_s);
  EXPECT_NEAR(e.real_tokens_per_s, 0.9 * e.tokens_per_s, 1e-9 * e.tokens_per_s);
  EXPECT_DOUBLE_EQ(e.usd_per_epoch, e.epoch_s * 4 * p.cluster.gpu.price_per_gpu_hour / 3600);
  EXPECT_TRUE(e.attention_per_document);
}

TEST(PackedAttention, SdpaOverAVarlenStacksPackedDocumentsIsRefused) {
  PlanSpec p = packed_plan("hf", 1, 1);
  p.stack.attention = AttentionKernel::kSdpa;
  p.documents = uniform(1024, 8, 1);
  p.packed_documents = true;
  const Status s = check_plan(p, flag_where);
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.message(),
            "--attention: value \"sdpa\" with packed documents, which trainer \"hf\" runs through a dense [s, s] document "
            "mask, not priced (allowed: flash2, flash3 or flex)");
  p.stack.attention = AttentionKernel::kFlash2;
  EXPECT_TRUE(check_plan(p, flag_where).is_ok());
  // The engine calls SDPA once a document: no mask.
  PlanSpec engine = packed_plan("engine", 1, 1);
  engine.documents = p.documents;
  engine.packed_documents = true;
  EXPECT_TRUE(check_plan(engine, flag_where).is_ok());
}

}  // namespace
}  // namespace spplan::costmodel
