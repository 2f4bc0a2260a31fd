// The CUDA caching allocator's settings for a run: expandable segments unless the user chose.
//
// Without expandable segments the caching allocator splits its fixed-size segments and cannot
// hand a freed region to a larger request: at the fit boundary of qwen3-0.6b at 36K on one H100 it
// held 20.8 GiB "reserved but unallocated" and ran out of memory (BUILD-NOTES.md section 9), where
// with `expandable_segments:True` 36K and 37K ran. ALST trains with them, and the costmodel's
// fragmentation term assumes them. LibTorch reads PYTORCH_CUDA_ALLOC_CONF, then PYTORCH_ALLOC_CONF
// (c10/cuda/CUDAAllocatorConfig.h), once, at the first CUDA allocation: so the engine sets the
// variable first thing in main(), before any tensor, and the ranks it starts inherit it.
#pragma once

#include <string>

namespace spplan::engine {

inline constexpr const char* kEngineAllocConf = "expandable_segments:True";

struct AllocConf {
  std::string variable;  // the variable LibTorch will read ("" when none is set)
  std::string value;
  bool set_by_engine = false;
};

// What a process with these variables (nullptr: unset) runs with. A variable the user set, even
// to "", is theirs; `engine_marker`: the engine's own note that it set the value (inherited by ranks).
AllocConf choose_alloc_conf(const char* cuda_var, const char* generic_var, const char* engine_marker);

// Sets PYTORCH_CUDA_ALLOC_CONF to kEngineAllocConf (and the marker) in this process when the user
// set neither variable; returns the setting in force.
AllocConf apply_alloc_conf();

}  // namespace spplan::engine
