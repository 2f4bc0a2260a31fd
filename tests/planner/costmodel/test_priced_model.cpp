#include "planner/costmodel/priced_model.hpp"

#include <gtest/gtest.h>

#include "planner/config/loaders.hpp"
#include "tests/planner/costmodel/fixtures.hpp"

namespace spplan::costmodel {
namespace {

using testing::llama8b;

// A dense text model: its RoPE only, with Llama 3.1's scaling spelt out.
TEST(PricedModel, ADenseModelHasItsRopeOnly) {
  const PricedModelLines lines = priced_model_lines(llama8b(8, 8, 65536));
  EXPECT_EQ(lines.rope,
            "RoPE: llama3 (factor 8, high_freq_factor 4, low_freq_factor 1, original_max_position_embeddings 8192) "
            "(theta 500000)");
  EXPECT_EQ(lines.present(), std::vector<std::string>{lines.rope});
  PlanSpec qwen = llama8b(8, 4, 65536);
  qwen.model = load_model("qwen2.5-7b").value();
  EXPECT_EQ(priced_model_lines(qwen).rope, "RoPE: default (theta 1000000); q/k/v biases");
}

TEST(PricedModel, AMixtureNamesItsExperts) {
  PlanSpec p = llama8b(8, 8, 65536);
  p.model = testing::qwen3_30b_a3b();
  const PricedModelLines lines = priced_model_lines(p);
  EXPECT_EQ(lines.mixture, "mixture: 128 experts 768 wide, 8 a token");
  EXPECT_EQ(lines.present(), (std::vector<std::string>{lines.rope, lines.mixture}));
}

// A window is named only where the sequence passes it.
TEST(PricedModel, AWindowIsNamedWhereTheSequencePassesIt) {
  PlanSpec p = llama8b(1, 1, 4096);
  p.model = load_model("tiny-mistral").value();
  EXPECT_EQ(priced_model_lines(p).window, "attention: a 1024-token sliding window on 4 of 4 layers");
  p.seq_len = 1024;
  EXPECT_EQ(priced_model_lines(p).window, "");
}

// A multimodal config's encoders: trained, frozen by the plan or by the trainer, trained but
// holding weights only on FSDP2 (hf's ring), and encoders not counted.
TEST(PricedModel, EncodersSayHowTheyAreHeld) {
  PlanSpec p = llama8b(8, 8, 65536);
  p.model.encoder_params = 4.2e8;
  const std::string lm = "model: the language model of a multimodal config and its vision encoder, 0.42B parameters ";
  const std::string tail = "; a text step never runs them)";
  EXPECT_EQ(priced_model_lines(p).encoders, lm + "counted as trained (weights, gradients, optimizer state" + tail);
  p.stack.freezes_encoders = true;
  EXPECT_EQ(priced_model_lines(p).encoders, lm + "frozen (weights only, no gradients or optimizer state" + tail);
  p.stack = trainer_stack("usp");
  ASSERT_TRUE(p.stack.freezes_encoders);
  EXPECT_EQ(priced_model_lines(p).encoders, lm + "frozen by usp (weights only, no gradients or optimizer state" + tail);
  p.stack = trainer_stack("hf");
  p.knobs.sp = 1;
  p.knobs.cp = 8;
  EXPECT_EQ(priced_model_lines(p).encoders,
            lm + "trained but holding weights only (this layout makes no gradient or optimizer state for a parameter "
                 "that never runs" + tail);
  p = llama8b(8, 8, 65536);
  p.model.encoders_left_out = true;
  EXPECT_EQ(priced_model_lines(p).encoders,
            "model: the language model of a multimodal config; the encoders beside it (vision, audio) not counted "
            "(trained too, their weights, gradients and optimizer state add to memory)");
  EXPECT_EQ(priced_model_lines(p).present(), (std::vector<std::string>{priced_model_lines(p).rope,
                                                                        priced_model_lines(p).encoders}));
}

}  // namespace
}  // namespace spplan::costmodel
