// The cases `spplan validate engine` runs, and how a boundary case is judged. No LibTorch.
//
// A case is one `spplan-engine run`: a model, a sequence length, sp over `world` ranks and the
// knob flags. Two lists: the CPU's (tiny-llama, minutes on 2 cores) and the GPU's (0.6B-8B models,
// 4K tokens up to the fit boundary, ZeRO 0-3, optimizer / parameter / checkpoint offload, tiled
// MLP and loss, bf16 and fp32, each on `world` GPUs of one node). Boundary cases come from the
// planner: for a plan, the longest sequence it says fits (search::max_seq_fixed on the spec the run
// is priced with) must run, and 1.1x of it must stop with the engine's out-of-memory report (exit 3,
// {"oom": true}).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "planner/config/cluster_spec.hpp"
#include "planner/core/status.hpp"

namespace spplan::engine {

struct ValidateCase {
  enum class Expect { kRuns, kFitsAtBoundary, kOomPastBoundary };
  std::string model = "tiny-llama";
  int64_t seq = 0, sp = 1, world = 1;  // world = dp x sp ranks
  std::vector<std::string> knobs;      // knob flags beyond --sp
  Expect expect = Expect::kRuns;
  // One step, memory only: the step time is neither compared nor reported (long_cpu_cases).
  bool memory_only = false;
  // Packed documents (cpu_packed_cases): every document this many tokens, ended by kPackedEosId
  // (the knobs name --eos-id); 0: none. `data` is the token file the run reads (--data), which
  // write_packed_data writes before the case runs.
  int64_t doc_tokens = 0;
  std::string data;
};

// The EOS id of the packed cases' token files: below every tiny model's vocab (256 and more).
inline constexpr int64_t kPackedEosId = 255;

std::vector<ValidateCase> cpu_cases(bool quick);
// `validate engine --ring` (CPU), also part of the full list: ring, Ulysses x ring and Ulysses at
// equal degree and knobs (tiny-llama 8K: cp 2 and sp 2; cp 4, sp 2 x cp 2 and sp 4).
std::vector<ValidateCase> cpu_ring_cases();
// `validate engine --moe` (CPU), also part of the full list: the mixtures of experts (tiny-qwen3-moe
// at sp 1 and 2, ZeRO 3 and the tiled loss; tiny-glm-moe without checkpointing and at sp 2, ZeRO 3).
std::vector<ValidateCase> cpu_moe_cases();
// `validate engine --window` (CPU), also part of the full list: tiny-mistral's sliding window in
// masked blocks, untiled at sp 1, checkpointed at sp 2, and in bf16.
std::vector<ValidateCase> cpu_window_cases();
// `validate engine --packed` (CPU): packed documents of 1024 tokens each (8 a sequence), on a ring,
// on Ulysses x ring and on Ulysses beside them at equal degree and knobs (tiny-llama 8K,
// checkpointed and tiled as the ring cases): cp 2 and sp 2; sp 2 x cp 2 and sp 4.
std::vector<ValidateCase> cpu_packed_cases();
// A u16 token file at `path` for a packed case: `tokens` ids, a document of `doc_tokens` ended
// by kPackedEosId, then the next; the other ids a fixed sequence below the EOS id. Fails (internal)
// naming the file when it cannot be written.
Status write_packed_data(const std::string& path, int64_t tokens, int64_t doc_tokens);
// `validate engine --long` (CPU): memory-only cases where per-token terms dominate (ALST's regime):
// micro-llama at 64K tokens with checkpoint offload, TiledMLP, the tiled loss, ZeRO 1 and 3 and
// optimizer / parameter offload at sp 1, 2 and 4.
std::vector<ValidateCase> long_cpu_cases();
// On `gpus` GPUs of one node (sp = gpus; ZeRO shards over them too). REQUIRES: gpus >= 1.
std::vector<ValidateCase> gpu_cases(int64_t gpus, bool quick);
// The plans whose boundary the GPU list checks (their seq is a placeholder).
std::vector<ValidateCase> gpu_boundary_plans(int64_t gpus, bool quick);

// "qwen3-0.6b s32k sp1 act-ckpt-full precision-bf16", with " (max-seq)" or " (1.1x max-seq)".
std::string case_name(const ValidateCase& c);

// The argv words of `spplan-engine run` for the case (after the program name).
std::vector<std::string> run_args(const ValidateCase& c, int64_t steps);

// The plan's boundary on `gpu` (the spec its runs are priced with): the case at the planner's
// max-seq (a multiple of `granularity`) and the case at 1.1x of it, rounded up to `granularity`.
// Fails (invalid) on bad case flags, or when not even `granularity` tokens fit.
Result<std::vector<ValidateCase>> boundary_cases(const ValidateCase& plan, const GpuSpec& gpu, int64_t granularity);

// How a run ended.
struct RunOutcome {
  int exit_code = 0;
  bool oom = false;  // the report said {"oom": true}
};
// "" when the outcome is what the case expects; else why not, in one line.
std::string outcome_error(const ValidateCase& c, const RunOutcome& r);

}  // namespace spplan::engine
