// simulator/op_words.hpp: op ids in words, a table of ids the step graph makes.
#include "simulator/op_words.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

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
      {"m0.bwd.L7.experts", "layer 7, backward, MoE MLP (router and experts)"},
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

// Phase starts (the timeline's dashed marks): each micro step's forward at its embedding, its
// backward at the loss's backward (the first tile only), the optimizer at its first op; a gather
// of the embedding is no phase; by time, whatever order the events come in.
TEST(OpWords, PhaseStartsAreEachMicroStepsForwardAndBackwardAndTheOptimizer) {
  const auto event = [](const char* name, double start_s) {
    SimEvent e;
    e.name = name;
    e.start_s = start_s;
    e.end_s = start_s + 0.5;
    return e;
  };
  const std::vector<SimEvent> events{
      event("gather.m0.embed.fwd", 0.0), event("m0.embed.fwd", 0.5),  event("m0.fwd.L0.attention", 1.0),
      event("m0.loss.bwd", 3.0),        event("m1.embed.fwd", 5.0),  event("m1.loss.bwd.t1", 8.5),
      event("m1.loss.bwd.t0", 8.0),     event("opt.grad_d2h", 11.0), event("opt.adam", 12.0),
      event("m1.embed.bwd", 10.0),
  };
  const std::vector<PhaseStart> starts = phase_starts(events);
  const std::vector<std::pair<double, std::string>> expected{
      {0.5, "forward"}, {3.0, "backward"}, {5.0, "micro step 2, forward"}, {8.0, "micro step 2, backward"},
      {11.0, "optimizer"}};
  ASSERT_EQ(starts.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_DOUBLE_EQ(starts[i].time_s, expected[i].first) << i;
    EXPECT_EQ(starts[i].words, expected[i].second) << i;
  }
  EXPECT_TRUE(phase_starts({}).empty());
}

}  // namespace
}  // namespace spplan::sim
