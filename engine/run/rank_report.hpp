// What a rank measures and rank 0 reports at the end of `spplan-engine run` (worker.hpp): the
// peaks gathered over the ranks, the means over the steps beside the costmodel's prediction, and
// the out-of-memory report.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <c10/core/Device.h>

#include "engine/device/memory_meter.hpp"
#include "engine/parallel/comm.hpp"
#include "engine/run/options.hpp"
#include "engine/run/predict.hpp"
#include "engine/run/report.hpp"
#include "engine/run/step_stats.hpp"

namespace spplan::engine {

// This rank's peak: the counting allocator's breakdown on CPU; CUDA's caching allocator's peak of
// allocated bytes (no breakdown: reported as other_bytes) on a GPU.
MemorySnapshot measured_peak(c10::Device device);
void reset_peak(c10::Device device);
// The largest `v` over the ranks. Collective.
int64_t max_over_ranks(Comm& comm, int64_t v);

// The spec the run is priced on (predict.hpp): --gpu, else what this device is; on a CPU at the
// threads each of the `ranks_on_host` ranks runs (costmodel/host_cpu.hpp shares it).
Pricing pricing_for(const RunOptions& o, c10::Device device, int64_t ranks_on_host);

// Collective (every rank calls it); rank 0 prints the comparison line and, with --json, the object,
// and returns the object's text (the other ranks: ""). `report.prediction` is used as it is when
// set (its machine named), else computed.
std::string finish_report(const RunOptions& o, Comm& comm, const std::vector<StepStats>& steps, RunReport report);

// One line on stderr and, with --json, the object that says so; returns the exit code 3
// (kExitOutOfMemory). `what`: the exception's text.
int report_oom(const RunOptions& o, int64_t rank, const std::string& what);

// The first line of an exception's text: c10d errors carry a C++ stack trace after it.
std::string first_line(const std::string& text);

}  // namespace spplan::engine
