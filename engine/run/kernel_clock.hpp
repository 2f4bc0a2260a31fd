// Where a step's time goes, kernel class by kernel class, measured inside the run itself.
//
// `spplan calibrate` fits a rate per kernel class from probes; the costmodel prices each class of
// a step with those rates. When a prediction misses, the question is which class: the probe may
// not measure what the run executes (other shapes, threads, backend or dtype). With
// SPPLAN_ENGINE_KERNEL_CLOCK=1 on a CPU, every ATen op the training thread calls is timed through
// LibTorch's RecordFunction callbacks; an op's self time (its time less the ops it called) is
// added to its class, so nested calls (linear -> matmul -> mm) count once. The classes are the
// costmodel's (Prediction::kernel_classes_s in predict.hpp):
//   loss          every op of the head and the loss (the memory tag kLogits is current)
//   optimizer     every op of the optimizer step (the memory tag kOptimizer is current)
//   gemm          mm, addmm, bmm, ... in the layers
//   attention_fwd the SDPA forward kernel; attention_bwd its backward
//   elementwise   every other op in the layers and the embedding (norms, RoPE, SwiGLU, adds,
//                 copies, the all-to-all packing), and autograd's own bookkeeping
// Communication is not an op here: it is the phases' all_to_all_s and grad_* times.
// On CUDA an op returns at its launch, so the clock is not started there (null in the report).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "engine/device/memory_meter.hpp"

namespace spplan::engine {

// The class of an op called while `region` was the memory tag (see above). No LibTorch.
const char* kernel_class_of(std::string_view op_name, MemCategory region);

// The clock: installed once per process (idempotent), then started and read around the steps.
// Not thread-safe across training threads: the engine has one.
// SPPLAN_ENGINE_KERNEL_CLOCK=1 (wall time) or =cpu (the training thread's CPU time: with one
// thread per rank, what each op cost whatever else shares the cores).
bool kernel_clock_requested();
// The clock's time, as the variable would set it: the training thread's CPU time, or the wall.
void kernel_clock_use_thread_cpu_time(bool on);
void install_kernel_clock();
void kernel_clock_reset();      // zero the sums (before the steps that are averaged)
// Self seconds summed since the reset, by class, and by "class op" (the largest ones: a diagnosis,
// e.g. "elementwise aten::mul"), and how many calls each of those ops made.
std::map<std::string, double> kernel_clock_classes_s();
std::map<std::string, double> kernel_clock_top_ops_s(int how_many);
std::map<std::string, int64_t> kernel_clock_op_calls(const std::map<std::string, double>& ops);
// The ops (outermost first) that were running when this process's device peak last grew: where
// the peak is. Read it after the steps, when no op runs.
std::vector<std::string> kernel_clock_peak_ops();

}  // namespace spplan::engine
