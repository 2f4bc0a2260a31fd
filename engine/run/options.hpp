// RunOptions: the flags of `spplan-engine run` (the same as DESIGN.md's `spplan run`), checked.
//
//   (--plan FILE.toml | --model M --seq S --sp P [knobs]) --nproc N [--steps K] [--data FILE[,FILE...]]
//   [--eos-id N] [--seed X] [--save DIR] [--save-every K] [--resume DIR] [--gpu G] [--json]
//   [--lr X --warmup-steps K --lr-schedule constant|cosine|linear --min-lr X --weight-decay X --grad-clip X]
//   [--init-from HF_DIR] [--export-hf DIR [--export-dtype fp32|bf16]] [--shuffle]
//   [--adam-beta1 X --adam-beta2 X --adam-eps X] [--weight-decay-all] [--log FILE.jsonl]
//   [--eval-data FILE --eval-every K] [--resume-or-init DIR] [--export-trained-length]
//
// --data takes a comma-separated list (a flag is given once: planner/core/args.hpp), read as one
// stream in that order; --eos-id is the token that ends a document (engine/io/data.hpp). The optimizer
// flags (planner/config/optimizer_spec.hpp) override a plan file's [optimizer], as knob flags do.
// --init-from starts from a Hugging Face model folder's weights instead of the seeded init (its
// config.json is the model when --model is absent); --export-hf writes the trained weights as one
// after the last step (engine/io/hf_weights.hpp); `--resume DIR --export-hf OUT` without --steps
// only converts the checkpoint (no training step). --shuffle reads the sequences of each pass over
// the data in a seeded random order (data.hpp). --log writes one JSON line per step (run_log.hpp).
// --eval-data is a held-out token file whose mean loss is measured every --eval-every steps
// (eval.hpp). --warmup-steps above the schedule's horizon and, with --plan, an --nproc other than the
// plan's cluster.num_gpus are refused.
//
// Weight decay skips biases and norm weights, as the Hugging Face Trainer and ArcticTraining group
// them (train_optimizer.cpp); --weight-decay-all decays every parameter.
//
// --resume-or-init DIR is one command that starts and restarts a run (a job scheduler's retry):
// it resumes from DIR when DIR holds a checkpoint, else starts fresh (seeded, or --init-from's
// weights); --save defaults to DIR. A checkpoint carries the run's settings (resume_settings.hpp):
// a resume restores the optimizer, its schedule and the data position, and refuses a flag that
// contradicts them.
//
// Paths: no output (--log, --save, --export-hf) is, lies inside or holds an input (--data,
// --eval-data, --init-from, --resume, --plan, a --model or --gpu file), and every output is checked
// writable before the first step (run_paths.hpp).
//
// --gpu G (a preset or a GPU TOML, e.g. what `spplan calibrate` wrote) is the accelerator the run's
// predictions are priced on; without it, predict.hpp picks one for the device the run has.
//
// Knob flags override a plan file's knobs. Knobs the engine does not implement yet are refused
// (never ignored): ZeRO stages > 0, offload, act-ckpt offload, tiled MLP/loss, bf16 precision.
// Every failure is one line naming the flag or file key, the value, and what is allowed.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "planner/config/plan_spec.hpp"
#include "planner/core/args.hpp"
#include "planner/core/path_guard.hpp"
#include "planner/core/status.hpp"

namespace spplan::engine {

struct RunOptions {
  PlanSpec plan;                  // model, seq_len, knobs; cluster.num_gpus is set to the world size
  std::string plan_path;          // "" when the plan came from flags
  std::optional<int64_t> nproc;   // absent: this process is one rank started by torchrun/Slurm
  int64_t steps = 5;
  std::vector<std::string> data_paths;  // empty = synthetic tokens
  int64_t eos_id = -1;            // kNoEos (data.hpp): documents are not marked
  uint64_t seed = 0;
  std::string save_dir;           // "" = no checkpoints
  int64_t save_every = 0;         // 0 = only after the last step
  std::string resume_dir;         // "" = start from step 0
  std::string init_from;          // "" = seeded init; else a Hugging Face folder (hf_weights.hpp)
  std::string export_hf;          // "" = no export; else the folder written after the last step
  bool model_from_flag = false;   // --model given (then it must agree with --init-from's config.json)
  std::optional<GpuSpec> gpu;     // --gpu: the spec predictions are priced on
  bool json = false;
  bool steps_given = false;       // --steps on the command line (else a --resume + --export-hf only converts)
  bool shuffle = false;           // --shuffle: each pass over --data in a seeded order (data.hpp)
  bool export_bf16 = false;       // --export-dtype bf16 (default fp32)
  std::string log_path;           // --log: JSON lines, one per step (run_log.hpp)
  std::vector<std::string> eval_paths;  // --eval-data: held-out tokens (eval.hpp)
  int64_t eval_every = 0;         // --eval-every: 0 = only after the last step (when --eval-data is given)
  std::vector<std::string> knob_flags_given;  // e.g. "zero": names a value's source in messages
  // The files the flags name besides the data (--plan, a --model or --gpu file or folder): inputs
  // no output may touch (run_paths.hpp).
  std::vector<NamedPath> config_inputs;
  bool weight_decay_all = false;  // --weight-decay-all: biases and norm weights decay too
  bool resume_or_init = false;    // --resume-or-init DIR (resume_dir is DIR only when it holds a checkpoint)
  std::string resume_or_init_dir; // its DIR, whether or not it held one
  bool export_trained_length = false;  // --export-trained-length: max_position_embeddings = seq in the export
  // The settings a --resume holds against the checkpoint's (flags, and the plan file's [optimizer]
  // keys), each with where it was given ("--lr", "plan.toml: key \"optimizer.lr\""): optimizer_keys()
  // names (the betas and eps among them) and "weight_decay_all".
  std::map<std::string, std::string> settings_given;
  bool given(const std::string& setting) const { return settings_given.count(setting) > 0; }
  // The LR schedule's horizon (lr_schedule.hpp T): train_steps, else --steps; a resume keeps the
  // checkpoint's.
  int64_t schedule_steps = 0;

  // Where a knob's value came from: "--zero" or "plan.toml: key \"knobs.zero_stage\"".
  std::string where(const std::string& key) const;
};

// The flags of `run`, with their help (`spplan-engine run --help`, the bash completion).
std::vector<FlagSpec> run_flag_specs();

// Parses argv[first..argc) (the words after "run"); reads the --plan and --model files only.
Result<RunOptions> parse_run_options(int argc, const char* const* argv, int first);

// The checks that need the world size: sp divides the world, heads fit sp, and the knobs are ones
// the engine implements. `world` is --nproc or WORLD_SIZE.
Status check_run_options(RunOptions* options, int64_t world);

}  // namespace spplan::engine
