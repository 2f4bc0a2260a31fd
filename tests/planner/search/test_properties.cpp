// Properties of the costmodel over random valid configurations (seeded, so every run checks the
// same few thousand plans): finite, non-negative numbers; more tokens never need less memory; more
// GPUs never need more memory per GPU for the same knobs; nothing that breaks a plan rule is ever
// reported as fitting. The models are the presets and random architectures of the shapes they
// span; the knobs are drawn from candidate_knobs(), which holds only combinations the rules allow.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>
#include <sstream>

#include "planner/config/loaders.hpp"
#include "planner/config/plan_rules.hpp"
#include "planner/config/trainer_rules.hpp"
#include "planner/costmodel/estimate.hpp"
#include "planner/costmodel/software_facts.hpp"
#include "planner/search/search.hpp"

namespace spplan {
namespace {

constexpr uint64_t kSeed = 20261123;  // any fixed value: the cases are the same on every run
// 2,000 plans a property in the normal build (about a second each); the sanitizer build, 10-20x
// slower, checks the same code paths for memory errors on the first SPPLAN_PROPERTY_PLANS of them.
int plans_per_property() {
  const char* v = std::getenv("SPPLAN_PROPERTY_PLANS");
  return v != nullptr ? std::max(1, std::atoi(v)) : 2000;
}
const int kPlans = plans_per_property();

template <typename T>
const T& pick(std::mt19937_64& rng, const std::vector<T>& v) {
  return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)];
}

int64_t uniform(std::mt19937_64& rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

// A preset, or a random architecture: heads a multiple of the KV heads, sizes in the presets' range.
ModelSpec random_model(std::mt19937_64& rng) {
  static const std::vector<ModelSpec> presets = [] {
    std::vector<ModelSpec> v;
    for (const auto& name : model_presets()) v.push_back(load_model(name).value());
    return v;
  }();
  if (uniform(rng, 0, 1) == 0) return pick(rng, presets);
  ModelSpec m;
  m.name = "random";
  m.num_key_value_heads = pick(rng, std::vector<int64_t>{1, 2, 4, 8});
  m.num_attention_heads = m.num_key_value_heads * pick(rng, std::vector<int64_t>{1, 2, 3, 4, 8});
  m.head_dim = pick(rng, std::vector<int64_t>{64, 80, 128});
  m.hidden_size = m.num_attention_heads * m.head_dim;
  m.num_hidden_layers = uniform(rng, 1, 96);
  m.intermediate_size = m.hidden_size * uniform(rng, 2, 4);
  m.vocab_size = uniform(rng, 1000, 260000);
  m.tie_word_embeddings = uniform(rng, 0, 1) == 1;
  m.qk_norm = uniform(rng, 0, 1) == 1;
  return m;
}

// A plan every rule allows: a random model, GPU, cluster and length, and one of its candidate knob sets.
PlanSpec random_plan(std::mt19937_64& rng) {
  static const std::vector<GpuSpec> gpus = [] {
    std::vector<GpuSpec> v;
    for (const auto& name : gpu_presets()) v.push_back(load_gpu(name).value());
    return v;
  }();
  PlanSpec p;
  p.model = random_model(rng);
  p.cluster.gpu = pick(rng, gpus);
  p.cluster.num_gpus = int64_t{1} << uniform(rng, 0, 7);       // 1 to 128
  // Above one node, whole nodes (check_cluster_shape): a gb200-nvl72 node is 72 GPUs.
  const int64_t per_node = p.cluster.gpu.gpus_per_node;
  if (p.cluster.num_gpus > per_node && p.cluster.num_gpus % per_node != 0) p.cluster.num_gpus = per_node * uniform(rng, 1, 2);
  p.seq_len = int64_t{1024} << uniform(rng, 0, 12);             // 1K to 4M tokens
  p.seq_len += uniform(rng, 0, 1023);                           // not only powers of two
  // A window or attention sinks (Mistral, gpt-oss) on a stack that runs them: the HF Trainer's,
  // with the kernel it runs for the model (flex for sinks).
  if (p.model.sliding_window > 0 || p.model.attention_sinks) p.stack = trainer_stack("hf");
  settle_layout_attention(&p);
  const std::vector<Knobs> knobs = search::candidate_knobs(p);
  EXPECT_FALSE(knobs.empty()) << p.cluster.num_gpus << " x " << p.cluster.gpu.name;  // pick() needs one
  if (knobs.empty()) return p;
  p.knobs = pick(rng, knobs);
  p.knobs.grad_accum_steps = uniform(rng, 1, 4);
  p.knobs.sp_comm_dtype = uniform(rng, 0, 1) == 0 ? CommDtype::kBf16 : CommDtype::kFp32;
  return p;
}

std::string describe(const PlanSpec& p) {
  std::ostringstream o;
  o << p.model.name << " (L" << p.model.num_hidden_layers << " h" << p.model.hidden_size << " nh"
    << p.model.num_attention_heads << " kv" << p.model.num_key_value_heads << " i" << p.model.intermediate_size << " V"
    << p.model.vocab_size << ") on " << p.cluster.num_gpus << "x " << p.cluster.gpu.name << " seq " << p.seq_len
    << " sp " << p.knobs.sp << " cp " << p.knobs.cp << " zero " << p.knobs.zero_stage << " opt-offload " << to_string(p.knobs.offload_optimizer)
    << " param-offload " << to_string(p.knobs.offload_params) << " ckpt " << to_string(p.knobs.act_ckpt) << " mlp "
    << p.knobs.tiled_mlp << " loss " << p.knobs.tiled_loss << " mb " << p.knobs.micro_batch << " ga "
    << p.knobs.grad_accum_steps;
  return o.str();
}

bool finite_nonnegative(double v) { return std::isfinite(v) && v >= 0; }

void expect_sane(const PlanSpec& p, const costmodel::Estimate& e) {
  const auto& m = e.memory;
  for (double v : {m.params_bytes, m.grads_bytes, m.optimizer_bytes, m.activations_bytes, m.logits_bytes,
                   m.buffers_bytes, m.overhead_bytes, e.host.total_bytes()}) {
    ASSERT_TRUE(finite_nonnegative(v)) << describe(p) << ": a memory category is " << v;
  }
  const auto& t = e.time;
  for (double v : {t.compute_s, t.a2a_s, t.zero_comm_s, t.offload_s, t.optimizer_s, t.exposed_a2a_s, t.exposed_zero_s,
                   t.exposed_offload_s}) {
    ASSERT_TRUE(finite_nonnegative(v)) << describe(p) << ": a time is " << v;
  }
  ASSERT_TRUE(std::isfinite(t.step_time_s) && t.step_time_s > 0) << describe(p) << ": step " << t.step_time_s;
  ASSERT_LE(t.step_time_s, t.serial_step_time_s * (1 + 1e-12)) << describe(p) << ": overlap made the step longer";
  ASSERT_TRUE(std::isfinite(e.tokens_per_s) && e.tokens_per_s > 0) << describe(p);
  ASSERT_TRUE(finite_nonnegative(e.mfu) && finite_nonnegative(e.usd_per_million_tokens)) << describe(p);
  // "Fits" means within both capacities and the attention kernel's index range, and nothing else.
  const bool in_range = p.stack.attention != AttentionKernel::kFlash2 ||
                        e.attention_tensor_elements <= costmodel::facts::kFlash2MaxTensorElements;
  const bool within = m.total_bytes() <= e.capacity_bytes && e.host.total_bytes() <= e.host_capacity_bytes && in_range;
  ASSERT_EQ(e.fits, within) << describe(p) << ": " << m.total_bytes() << " of " << e.capacity_bytes;
}

// Relative slack for "never less": sums of doubles in another order differ in the last bits.
constexpr double kRounding = 1e-9;

TEST(CostmodelProperties, RandomValidPlansGiveFiniteNonNegativeNumbers) {
  std::mt19937_64 rng(kSeed);
  for (int i = 0; i < kPlans; ++i) {
    const PlanSpec p = random_plan(rng);
    ASSERT_TRUE(check_plan(p, flag_where).is_ok()) << describe(p) << ": " << check_plan(p, flag_where).message();
    expect_sane(p, costmodel::estimate(p));
    if (HasFatalFailure()) return;
  }
}

TEST(CostmodelProperties, MoreTokensNeverNeedLessMemory) {
  std::mt19937_64 rng(kSeed + 1);
  for (int i = 0; i < kPlans; ++i) {
    const PlanSpec p = random_plan(rng);
    PlanSpec longer = p;
    longer.seq_len = p.seq_len * 2;
    const auto e = costmodel::estimate(p), e2 = costmodel::estimate(longer);
    ASSERT_GE(e2.memory.total_bytes(), e.memory.total_bytes() * (1 - kRounding))
        << describe(p) << ": " << e.memory.total_bytes() << " bytes, at twice the tokens " << e2.memory.total_bytes();
    ASSERT_GE(e2.host.total_bytes(), e.host.total_bytes() * (1 - kRounding)) << describe(p) << ": host memory";
    ASSERT_FALSE(e2.fits && !e.fits) << describe(p) << ": fits at twice the tokens, not at these";
  }
}

// From 2 GPUs up. One GPU runs no collective: it has no NCCL communicator and no gradient
// reduction bucket (costmodel/memory_buffers.cpp: reduce_buffer_bytes, fixed_overhead_bytes), which
// the second GPU brings (on an A100 about 0.5 GB of buffers and 0.56 GB
// of NCCL overhead). For a small model, or one whose optimizer state is offloaded, ZeRO's
// partitioning saves less than that, so 1 -> 2 GPUs can rightly need more memory per GPU:
// e.g. L22 h512 V179670, ZeRO-2 with the optimizer on the CPU: 10.74 GB on 1 GPU, 11.80 on 2.
TEST(CostmodelProperties, MoreGpusNeverNeedMoreMemoryPerGpu) {
  std::mt19937_64 rng(kSeed + 2);
  int compared = 0;
  for (int i = 0; i < kPlans; ++i) {
    PlanSpec p = random_plan(rng);
    if (p.cluster.num_gpus == 1) {
      p.cluster.num_gpus = 2;  // the same knobs hold on 2: sp 1 divides every count
      ASSERT_EQ(p.knobs.sp, 1);
    }
    PlanSpec wider = p;  // same knobs: sp still divides the GPUs, so the rules still hold
    wider.cluster.num_gpus = p.cluster.num_gpus * 2;
    // Unless twice the GPUs are not whole nodes: 64 of a 72-GPU gb200-nvl72 node.
    if (!check_cluster_shape(wider.cluster, flag_where).is_ok()) continue;
    ++compared;
    ASSERT_TRUE(check_plan(wider, flag_where).is_ok()) << describe(wider);
    const auto e = costmodel::estimate(p), e2 = costmodel::estimate(wider);
    ASSERT_LE(e2.memory.total_bytes(), e.memory.total_bytes() * (1 + kRounding))
        << describe(p) << ": " << e.memory.total_bytes() << " bytes per GPU, on twice the GPUs "
        << e2.memory.total_bytes();
  }
  EXPECT_GE(compared, kPlans * 3 / 4);  // the skipped shapes are rare
}

// Knobs drawn from the whole range, most of them against the rules: each one the rules refuse
// is never among the plans the search reports as fitting, and every reported plan obeys the rules.
TEST(CostmodelProperties, APlanThatBreaksARuleNeverFits) {
  std::mt19937_64 rng(kSeed + 3);
  int refused = 0;
  for (int i = 0; i < 40; ++i) {
    PlanSpec p = random_plan(rng);
    p.seq_len = int64_t{1024} << uniform(rng, 0, 5);  // short: most knob sets fit, so "fits" is tested
    const search::SearchResult found = search::search_plans(p, /*keep_rejected=*/false);
    for (const auto& ranked : found.feasible) {
      ASSERT_TRUE(check_plan(ranked.plan, flag_where).is_ok()) << describe(ranked.plan);
      ASSERT_TRUE(ranked.estimate.fits) << describe(ranked.plan);
    }
    for (int k = 0; k < 50; ++k) {
      PlanSpec bad = p;
      bad.knobs.sp = uniform(rng, 1, 256);
      bad.knobs.zero_stage = uniform(rng, 0, 3);
      bad.knobs.offload_optimizer = static_cast<OffloadDevice>(uniform(rng, 0, 2));
      bad.knobs.offload_params = static_cast<OffloadDevice>(uniform(rng, 0, 2));
      bad.knobs.act_ckpt = static_cast<ActCkpt>(uniform(rng, 0, 2));
      if (check_plan(bad, flag_where).is_ok()) continue;
      ++refused;
      for (const auto& ranked : found.feasible) {
        const Knobs& a = ranked.plan.knobs;
        const bool same = a.sp == bad.knobs.sp && a.zero_stage == bad.knobs.zero_stage &&
                          a.offload_optimizer == bad.knobs.offload_optimizer &&
                          a.offload_params == bad.knobs.offload_params && a.act_ckpt == bad.knobs.act_ckpt;
        ASSERT_FALSE(same) << describe(bad) << " breaks a rule (" << check_plan(bad, flag_where).message()
                           << ") but the search reports it as fitting";
      }
    }
  }
  EXPECT_GT(refused, 500);  // the drawing does reach the rules
}

}  // namespace
}  // namespace spplan
