// simulator/op_words.hpp: op ids in words, a table of ids the step graph makes.
#include "simulator/op_words.hpp"

#include <gtest/gtest.h>

namespace spplan::sim {
namespace {

TEST(OpWords, EachKindOfIdInWords) {
  const struct {
    const char* id;
    const char* words;
  } rows[] = {
      {"gather.m0.rec.L30", "layer 30, recompute, parameter gather"},
      {"fetch.m0.fwd.L2", "layer 2, forward, parameter fetch from the host"},
      {"m0.fwd.L3.attention", "layer 3, forward, attention"},
      {"m0.bwd.L0.a2a_qkv", "layer 0, backward, all-to-all of q/k/v"},
      {"m0.fwd.L5.mlp.t2", "layer 5, forward, MLP, tile 3"},
      {"m1.rec.L7.norm", "micro step 2, layer 7, recompute, RMSNorm"},
      {"m0.loss.fwd.t0", "loss, forward, tile 1"},
      {"m0.loss.bwd", "loss, backward"},
      {"m0.embed.fwd", "embedding, forward"},
      {"gather.m0.head", "head, parameter gather"},
      {"m0.ckpt_d2h.L4", "layer 4, checkpoint copy to the host"},
      {"m0.reduce.L9", "layer 9, gradient reduction"},
      {"opt.adam", "optimizer, AdamW step"},
      {"opt.param_allgather", "optimizer, parameter all-gather"},
      {"something else", "something else"},
      {"", ""},
  };
  for (const auto& r : rows) EXPECT_EQ(op_in_words(r.id), r.words) << r.id;
}

}  // namespace
}  // namespace spplan::sim
