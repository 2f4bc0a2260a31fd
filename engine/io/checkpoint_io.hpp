// Checkpoint files: raw little-endian byte blobs plus a manifest with an FNV-1a 64 checksum per blob.
//
// Layout:  DIR/LATEST            one line: the name of the newest complete checkpoint folder
//          DIR/ckpt-000010/      manifest.json + one file per blob (params.f32, adam_m.f32, ...)
// Writing is atomic: blobs and manifest go to a temporary folder, each file is fsync'ed, the folder
// is renamed into place, then LATEST is replaced atomically; ckpt-* folders older than the previous
// one are removed last (two are kept: disk for two checkpoints). A crash or a full disk at any point
// leaves the previous checkpoint readable, and a failed save removes its partial folder. Reading
// verifies every size and checksum; a damaged newest checkpoint is refused and the previous one is
// used (with a warning); when none verifies, one line says why (the caller exits 2).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "planner/config/model_spec.hpp"
#include "planner/config/optimizer_spec.hpp"
#include "planner/core/status.hpp"

namespace spplan::engine {

// How the run trains, stored so that a resume continues it exactly (resume_settings.hpp restores
// them and refuses a flag that contradicts them).
struct TrainingSettings {
  OptimizerSpec optimizer;        // lr, warm-up, schedule, min_lr, weight decay, clipping, train_steps, betas, eps
  int64_t schedule_steps = 0;     // the horizon the schedule spans (train_steps, else the first --steps)
  bool weight_decay_all = false;  // else biases and norm weights are not decayed
  int64_t seq_len = 0;            // of the run that wrote the checkpoint
  // Where the next step reads --data: the stream position of its first window (files read in
  // order: it continues there at any --seq), and the sequence index (synthetic or shuffled data).
  int64_t next_token = 0;
};

struct CheckpointMeta {
  int64_t step = 0;            // optimizer steps done
  int64_t next_sequence = 0;   // data position: index of the next sequence to read
  uint64_t seed = 0;
  std::string model;           // architecture fingerprint; resume refuses another model
  std::string run;             // world/sp/dp/batch, for people reading the manifest
  // What the run read (absent in checkpoints written before they were stored): resume refuses
  // other data or another --eos-id, which would silently continue on something else.
  std::optional<std::string> data;  // TokenSource::fingerprint() (data.hpp)
  std::optional<int64_t> eos_id;    // -1: none
  // Absent in checkpoints written before they were stored: a resume then keeps its flags.
  std::optional<TrainingSettings> settings;
};

struct BlobRef {
  std::string name;            // file name inside the checkpoint folder
  const void* data = nullptr;
  size_t bytes = 0;
};

uint64_t fnv1a64(const void* data, size_t bytes);

Status save_checkpoint(const std::string& dir, const CheckpointMeta& meta, const std::vector<BlobRef>& blobs);

struct LoadedCheckpoint {
  std::string folder;                          // the ckpt-* folder read
  CheckpointMeta meta;
  std::map<std::string, std::string> blobs;    // name -> bytes, all verified
  std::string warning;                         // why LATEST was refused, when an older one is used
};

// Architecture fingerprint stored in the manifest: resume refuses a different model.
std::string model_fingerprint(const ModelSpec& spec);

// `dir` is a --save folder (LATEST is followed; if it does not verify, the newest ckpt-* that does)
// or one ckpt-* folder (no fallback: the user chose it).
Result<LoadedCheckpoint> load_checkpoint(const std::string& dir);

// --resume-or-init: true when `dir` holds a checkpoint (LATEST, a ckpt-* folder, or is one), false
// when it is missing or empty; any other content is refused (one line naming `flag`), not guessed at.
Result<bool> holds_checkpoint(const std::string& dir, const std::string& flag);

// The checkpoint fits this run: same model, and fewer steps done than --steps (the total to reach).
// With convert_only (--resume with --export-hf and no --steps) no step is trained: any step count.
Status check_resume(const LoadedCheckpoint& checkpoint, const ModelSpec& model, int64_t total_steps,
                    bool convert_only = false);

// The run reads what the checkpoint's run read: the same data (`data`: TokenSource::fingerprint())
// and --eos-id (kNoEos -1: none). One line naming both values. A checkpoint without them passes.
Status check_resume_data(const LoadedCheckpoint& checkpoint, const std::string& data, int64_t eos_id);

}  // namespace spplan::engine
