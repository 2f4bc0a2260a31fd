#include "engine/measure/validate_cases.hpp"

#include <cstdint>
#include <cstdio>

#include "engine/run/options.hpp"
#include "engine/run/predict.hpp"
#include "planner/search/search.hpp"

namespace spplan::engine {
namespace {

using Knobs = std::vector<std::string>;

ValidateCase tiny(int64_t seq, int64_t sp, int64_t world, Knobs knobs) {
  return {"tiny-llama", seq, sp, world, std::move(knobs), ValidateCase::Expect::kRuns};
}

// The mixtures of experts (Qwen3-MoE, GLM-4.5): tiny-llama's attention with q/k norms and 8 experts, 2 a
// token; GLM-4.5's with a dense first layer, a shared expert and a grouped sigmoid router.
ValidateCase tiny_moe(int64_t seq, int64_t sp, int64_t world, Knobs knobs) {
  return {"tiny-qwen3-moe", seq, sp, world, std::move(knobs), ValidateCase::Expect::kRuns};
}
ValidateCase tiny_glm(int64_t seq, int64_t sp, int64_t world, Knobs knobs) {
  return {"tiny-glm-moe", seq, sp, world, std::move(knobs), ValidateCase::Expect::kRuns};
}
// A sliding window (Mistral's): tiny-llama's shapes, every layer over its last 1024 tokens.
ValidateCase tiny_window(int64_t seq, int64_t sp, int64_t world, Knobs knobs) {
  return {"tiny-mistral", seq, sp, world, std::move(knobs), ValidateCase::Expect::kRuns};
}

// ZeRO 2/3 cases reduce in buckets of 256K elements, below tiny-llama's largest unit (the
// 1M-element embedding and head): DeepSpeed allocates its reduce bucket whole (what the costmodel
// prices), the engine one slab at a time, and the two agree when the bucket is the smaller.
const Knobs kZ2 = {"--zero", "2", "--reduce-bucket", "262144"};
const Knobs kZ3 = {"--zero", "3", "--reduce-bucket", "262144"};

Knobs operator+(Knobs a, const Knobs& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace

// Ring attention (cp) and Ulysses x ring (USP, arXiv 2405.07719), each beside Ulysses at the same
// degree and knobs (the report sets their step times side by side, ring_pairs): cp 2 against sp 2,
// cp 4 and sp 2 x cp 2 against sp 4. Checkpointed and tiled, so the peak is a layer's backward,
// where the ring's K/V, dK/dV and dq buffers are alive.
std::vector<ValidateCase> cpu_ring_cases() {
  const Knobs knobs = {"--act-ckpt", "full", "--tiled-mlp", "--tiled-loss"};
  auto cp = [](const char* degree) { return Knobs{"--cp", degree}; };
  return {tiny(8192, 1, 2, cp("2") + knobs), tiny(8192, 2, 2, knobs), tiny(8192, 1, 4, cp("4") + knobs),
          tiny(8192, 2, 4, cp("2") + knobs), tiny(8192, 4, 4, knobs)};
}

// The mixtures: Qwen3-MoE's untiled at sp 1, checkpointed at sp 2, with ZeRO 3 and the tiled loss
// at sp 2 x dp 2; GLM-4.5's without checkpointing (every layer's saves held: its dense layer's
// and its mixture layers' summed) and checkpointed at sp 2 with ZeRO 3.
std::vector<ValidateCase> cpu_moe_cases() {
  const Knobs none = {"--act-ckpt", "none"}, full = {"--act-ckpt", "full"};
  return {tiny_moe(4096, 1, 1, none), tiny_moe(8192, 2, 2, full), tiny_moe(8192, 2, 4, full + kZ3 + Knobs{"--tiled-loss"}),
          tiny_glm(4096, 1, 1, none), tiny_glm(8192, 2, 2, full + kZ3)};
}

// The sliding window's masked blocks (window_attention.hpp): untiled at sp 1 without checkpointing
// (a backward's attention moment with the band and a block's gradients), checkpointed at sp 2
// (each rank the whole sequence for its heads) with the tiled loss, and at 16K in bf16.
std::vector<ValidateCase> cpu_window_cases() {
  const Knobs none = {"--act-ckpt", "none"}, full = {"--act-ckpt", "full"};
  return {tiny_window(4096, 1, 1, none), tiny_window(8192, 2, 2, full + Knobs{"--tiled-loss"}),
          tiny_window(16384, 2, 2, full + Knobs{"--precision", "bf16"}),
          tiny_window(8192, 1, 1, full + Knobs{"--tiled-mlp", "--tiled-loss"})};
}

// Packed documents (the engine's --eos-id; ring_attention.hpp's pieces on a ring, one causal call a
// document under Ulysses): priced per document, counted from the case's token file (validate.cpp).
std::vector<ValidateCase> cpu_packed_cases() {
  const Knobs knobs = {"--act-ckpt", "full", "--tiled-mlp", "--tiled-loss", "--eos-id", std::to_string(kPackedEosId)};
  auto cp = [](const char* degree) { return Knobs{"--cp", degree}; };
  std::vector<ValidateCase> cases = {tiny(8192, 1, 2, cp("2") + knobs), tiny(8192, 2, 2, knobs),
                                     tiny(8192, 2, 4, cp("2") + knobs), tiny(8192, 4, 4, knobs)};
  for (ValidateCase& c : cases) c.doc_tokens = 1024;
  return cases;
}

Status write_packed_data(const std::string& path, int64_t tokens, int64_t doc_tokens) {
  std::string bytes;
  bytes.reserve(static_cast<size_t>(2 * tokens));
  uint32_t state = 1;
  for (int64_t i = 0; i < tokens; ++i) {
    state = state * 1664525u + 1013904223u;  // Numerical Recipes' LCG: the same file everywhere
    const auto id = static_cast<uint16_t>((i + 1) % doc_tokens == 0 ? kPackedEosId : (state >> 16) % kPackedEosId);
    bytes += {static_cast<char>(id & 0xff), static_cast<char>(id >> 8)};
  }
  std::FILE* f = std::fopen(path.c_str(), "wb");
  const bool written = f != nullptr && std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  if (f != nullptr && std::fclose(f) != 0) return Status::internal(path + ": cannot write the packed cases' tokens");
  if (!written) return Status::internal(path + ": cannot write the packed cases' tokens");
  return Status::ok();
}

namespace {

// On G GPUs: ring over all of them, and Ulysses over G/2 x ring 2 (from 4 GPUs).
std::vector<ValidateCase> gpu_ring_cases(int64_t gpus) {
  std::vector<ValidateCase> out;
  if (gpus < 2 || gpus % 2 != 0) return out;
  const Knobs knobs = {"--act-ckpt", "full", "--precision", "bf16"};
  out.push_back({"qwen3-1.7b", 32 * 1024, 1, gpus, knobs + Knobs{"--cp", std::to_string(gpus)}, ValidateCase::Expect::kRuns});
  if (gpus >= 4) {
    out.push_back({"qwen3-1.7b", 32 * 1024, gpus / 2, gpus, knobs + Knobs{"--cp", "2"}, ValidateCase::Expect::kRuns});
  }
  return out;
}

}  // namespace

std::vector<ValidateCase> cpu_cases(bool quick) {
  const Knobs none = {"--act-ckpt", "none"}, full = {"--act-ckpt", "full"}, off = {"--act-ckpt", "offload"};
  const Knobs offload_opt = {"--offload-optimizer", "cpu"}, offload_params = {"--offload-params", "cpu"};
  const Knobs bf16 = {"--precision", "bf16"};
  if (quick) {
    return {tiny(2048, 1, 1, none), tiny(2048, 2, 2, none), tiny(2048, 2, 2, full + kZ3 + Knobs{"--tiled-loss"}),
            tiny(2048, 2, 2, off + kZ3 + offload_opt + offload_params)};
  }
  // Chosen to cover seq, sp, act-ckpt, ZeRO stages, tiling, offload and bf16 within a few minutes.
  std::vector<ValidateCase> cases = {tiny(4096, 1, 1, none),  tiny(4096, 2, 2, none),  tiny(4096, 4, 4, none),   tiny(4096, 1, 1, full),
          tiny(8192, 1, 1, none),  tiny(8192, 2, 2, full),  tiny(8192, 4, 4, none),   tiny(16384, 2, 2, full),
          tiny(16384, 4, 4, none), tiny(8192, 2, 4, full + Knobs{"--zero", "1"}), tiny(8192, 2, 4, full + kZ2),
          tiny(8192, 2, 4, full + kZ3), tiny(8192, 1, 1, full + Knobs{"--tiled-loss"}),
          tiny(16384, 4, 4, full + kZ3 + Knobs{"--tiled-mlp", "--tiled-loss"}),
          tiny(8192, 2, 2, off + Knobs{"--zero", "1"} + offload_opt),
          tiny(16384, 2, 4, off + kZ3 + offload_opt + offload_params), tiny(8192, 2, 2, full + bf16),
          tiny(8192, 2, 4, full + kZ3 + bf16),
          tiny(8192, 2, 2, full + Knobs{"--tiled-loss"} + bf16 + Knobs{"--sp-comm-dtype", "bf16"})};
  for (const std::vector<ValidateCase>& more : {cpu_moe_cases(), cpu_window_cases(), cpu_ring_cases()}) {
    cases.insert(cases.end(), more.begin(), more.end());
  }
  return cases;
}

// ---- long sequences, memory only (`validate engine --long`) ----------------------------------
//
// The regime ALST runs in, where the per-token terms (checkpoints, the recomputed layer, the
// tiled MLP's shard, the loss's chunk, the all-to-all copies) outweigh the model states: at 64K
// tokens micro-llama's per-token memory is ~50x its 3.5 MB of weights, gradients and AdamW
// state. One step each, memory only: LibTorch's CPU flash attention runs ~45 GFLOP/s a thread
// and its work grows with the square of the sequence, so tiny-llama at 64K would take minutes a
// layer; micro-llama (h 64, 2 layers) takes about a minute a 64K step on 2 cores (engine/README.md),
// 128K four times that. Checkpoint offload, TiledMLP and the tiled loss as ALST runs them; the two
// sharded layouts again at 128K, where the all-to-all moments are twice the size.
std::vector<ValidateCase> long_cpu_cases() {
  const Knobs alst = {"--act-ckpt", "offload", "--tiled-mlp", "--tiled-loss"};
  const Knobs all_offloaded = alst + kZ3 + Knobs{"--offload-optimizer", "cpu", "--offload-params", "cpu"};
  const Knobs optimizer_offloaded = alst + Knobs{"--zero", "1", "--offload-optimizer", "cpu"};
  auto micro = [](int64_t seq, int64_t sp, Knobs knobs) {
    ValidateCase c{"micro-llama", seq, sp, sp, std::move(knobs), ValidateCase::Expect::kRuns};
    c.memory_only = true;
    return c;
  };
  return {micro(65536, 1, alst), micro(65536, 1, Knobs{"--act-ckpt", "full", "--tiled-loss"}),
          micro(65536, 2, all_offloaded), micro(65536, 4, optimizer_offloaded),
          micro(131072, 2, all_offloaded), micro(131072, 4, optimizer_offloaded)};
}

std::vector<ValidateCase> gpu_cases(int64_t gpus, bool quick) {
  const Knobs none = {"--act-ckpt", "none"}, full = {"--act-ckpt", "full"}, off = {"--act-ckpt", "offload"};
  const Knobs bf16 = {"--precision", "bf16"}, fp32 = {"--precision", "fp32"};
  const Knobs offload_opt = {"--offload-optimizer", "cpu"}, offload_params = {"--offload-params", "cpu"};
  const Knobs z1 = {"--zero", "1"}, z2 = {"--zero", "2"}, z3 = {"--zero", "3"};
  auto c = [&](const char* model, int64_t seq_k, Knobs knobs) {
    return ValidateCase{model, seq_k * 1024, gpus, gpus, std::move(knobs), ValidateCase::Expect::kRuns};
  };
  std::vector<ValidateCase> cases = {
      c("qwen3-0.6b", 4, none + bf16),
      c("qwen3-0.6b", 16, full + bf16),
      c("qwen3-1.7b", 4, none + bf16),
      c("qwen3-0.6b", 4, none + fp32),
      c("qwen3-1.7b", 16, full + z3 + offload_opt + offload_params + bf16),
  };
  if (quick) return cases;
  const std::vector<ValidateCase> more = {
      c("qwen3-0.6b", 32, full + bf16 + Knobs{"--tiled-loss"}),
      c("llama-3.2-1b", 16, full + bf16),
      c("qwen3-1.7b", 16, full + bf16 + Knobs{"--tiled-mlp"}),
      c("qwen3-1.7b", 16, full + z1 + bf16),
      c("qwen3-1.7b", 16, full + z2 + bf16),
      c("qwen3-1.7b", 16, full + z3 + bf16),
      c("qwen3-1.7b", 32, off + z1 + offload_opt + bf16),
      c("qwen3-4b", 8, full + z1 + offload_opt + bf16),
      c("llama-3.2-1b", 32, full + z3 + offload_opt + offload_params + bf16),
      c("llama-3.1-8b", 8, full + z3 + offload_opt + offload_params + bf16 + Knobs{"--tiled-mlp", "--tiled-loss"}),
      c("qwen3-1.7b", 8, full + fp32 + Knobs{"--tiled-loss"}),
  };
  cases.insert(cases.end(), more.begin(), more.end());
  const std::vector<ValidateCase> ring = gpu_ring_cases(gpus);
  cases.insert(cases.end(), ring.begin(), ring.end());
  return cases;
}

std::vector<ValidateCase> gpu_boundary_plans(int64_t gpus, bool quick) {
  std::vector<ValidateCase> plans = {
      {"qwen3-0.6b", 0, gpus, gpus, {"--act-ckpt", "full", "--precision", "bf16"}, ValidateCase::Expect::kRuns}};
  if (!quick) {
    plans.push_back({"qwen3-1.7b", 0, gpus, gpus, {"--act-ckpt", "full", "--precision", "bf16", "--tiled-loss"},
                     ValidateCase::Expect::kRuns});
  }
  return plans;
}

std::string case_name(const ValidateCase& c) {
  std::string name = c.model + " s" + (c.seq % 1024 == 0 ? std::to_string(c.seq / 1024) + "k" : std::to_string(c.seq)) +
                     " sp" + std::to_string(c.sp);
  if (c.world != c.sp) name += " w" + std::to_string(c.world);
  for (size_t i = 0; i < c.knobs.size(); ++i) {
    name += " " + c.knobs[i].substr(2);  // "--zero" -> "zero"
    const bool has_value = i + 1 < c.knobs.size() && c.knobs[i + 1].rfind("--", 0) != 0;
    if (has_value) name += "-" + c.knobs[++i];
  }
  if (c.doc_tokens > 0) name += " docs-" + std::to_string(c.doc_tokens);
  if (c.expect == ValidateCase::Expect::kFitsAtBoundary) name += " (max-seq)";
  if (c.expect == ValidateCase::Expect::kOomPastBoundary) name += " (1.1x max-seq)";
  return name;
}

std::vector<std::string> run_args(const ValidateCase& c, int64_t steps) {
  std::vector<std::string> args = {"run", "--model", c.model, "--seq", std::to_string(c.seq), "--sp", std::to_string(c.sp)};
  args.insert(args.end(), c.knobs.begin(), c.knobs.end());
  if (!c.data.empty()) args.insert(args.end(), {"--data", c.data});
  for (const std::string& a : {std::string("--nproc"), std::to_string(c.world), std::string("--steps"),
                               std::to_string(steps), std::string("--seed"), std::string("1"), std::string("--json")}) {
    args.push_back(a);
  }
  return args;
}

Result<std::vector<ValidateCase>> boundary_cases(const ValidateCase& plan, const GpuSpec& gpu, int64_t granularity) {
  ValidateCase probe = plan;
  probe.seq = granularity;
  const std::vector<std::string> args = run_args(probe, 1);
  std::vector<const char*> argv = {"spplan-engine"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  auto opts = parse_run_options(static_cast<int>(argv.size()), argv.data(), 2);
  if (!opts.ok()) return Status::invalid(case_name(plan) + ": " + opts.status().message());
  if (auto s = check_run_options(&*opts, plan.world); !s) return Status::invalid(case_name(plan) + ": " + s.message());
  const int64_t max_seq = search::max_seq_fixed(priced_plan(opts->plan, Pricing{gpu, true}), granularity);
  if (max_seq < granularity) {
    return Status::invalid(case_name(plan) + ": not even " + std::to_string(granularity) + " tokens fit on " + gpu.name +
                           " (allowed: a plan whose max-seq is at least one granule)");
  }
  ValidateCase fits = plan, past = plan;
  fits.seq = max_seq;
  fits.expect = ValidateCase::Expect::kFitsAtBoundary;
  past.seq = (max_seq * 11 / 10 + granularity - 1) / granularity * granularity;
  past.expect = ValidateCase::Expect::kOomPastBoundary;
  return std::vector<ValidateCase>{fits, past};
}

std::string outcome_error(const ValidateCase& c, const RunOutcome& r) {
  const std::string got = r.oom ? "ran out of device memory (exit " + std::to_string(r.exit_code) + ")"
                                : "exit " + std::to_string(r.exit_code);
  if (c.expect == ValidateCase::Expect::kOomPastBoundary) {
    if (r.exit_code == 3 && r.oom) return "";
    return "expected the engine's out-of-memory report (exit 3, \"oom\": true) past the planner's max-seq, got " +
           (r.exit_code == 0 ? std::string("a run that fit") : got);
  }
  if (r.exit_code == 0 && !r.oom) return "";
  return std::string(c.expect == ValidateCase::Expect::kFitsAtBoundary ? "at the planner's max-seq: " : "") +
         "run failed: " + got;
}

}  // namespace spplan::engine
