// Reading a run log whatever wrote it: the file is read (bounded), its format told from its
// content, and the reader of that format (readers.hpp) called.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "planner/check/run_measurements.hpp"
#include "planner/core/status.hpp"

namespace spplan::check {

// No log a run writes for `check` comes near this; a larger file is refused rather than read whole.
inline constexpr int64_t kMaxRunLogBytes = 256LL << 20;

// The formats, as RunMeasurements::formats and the messages name them.
inline constexpr const char* kRunLogFormats =
    "an HF Trainer or TRL trainer_state.json, ArcticTraining's metrics JSON Lines, a DeepSpeed log, "
    "spplan run --json or --log, torch.cuda.max_memory_allocated/reserved lines, "
    "nvidia-smi --query-gpu=memory.used --format=csv (with its header), "
    "a PyTorch memory snapshot (torch.cuda.memory._dump_snapshot's pickle)";

// The log at `path`. Fails in one line naming the file: not a readable regular file, larger than
// kMaxRunLogBytes, another binary file, a format none of the readers knows, or what that format's
// reader refuses.
Result<RunMeasurements> read_run_log(const std::string& path);
// The same on text already read; `where` names it in messages.
Result<RunMeasurements> read_run_log_text(const std::string& where, std::string_view text);

}  // namespace spplan::check
