// Whether this CPU runs bf16 GEMMs at speed, found by measuring rather than by CPU flags.
//
// LibTorch runs bf16 matrix products on a CPU through oneDNN where the CPU has AVX-512 (with
// AVX512-BF16 or AMX natively, else by conversion at about the fp32 rate), and through a scalar
// fallback elsewhere: on an AVX2-only CPU a bf16 GEMM runs 100-500x slower than fp32 (measured:
// 0.33 GFLOP/s against 153 GFLOP/s on a 2-core AMD EPYC). Which path runs also depends on
// LibTorch's build and on ATEN_CPU_CAPABILITY / ONEDNN_MAX_CPU_ISA, so a short timing is the one
// reliable test.
#pragma once

#include <string>

namespace spplan::engine {

struct CpuBf16Probe {
  double bf16_flops = 0;  // FLOP/s of a small bf16 at::mm on this thread pool
  double fp32_flops = 0;  // the same product in fp32
};

// Emulated: bf16 at less than a quarter of the fp32 rate. Native or converting paths run at 0.5x
// to 2x fp32; the scalar fallback at under 1/100, so the threshold has a wide margin both ways.
inline bool bf16_is_emulated(const CpuBf16Probe& p) { return p.bf16_flops * 4.0 < p.fp32_flops; }

// Times a 128^3 product in each dtype (tens of milliseconds even where bf16 is emulated).
CpuBf16Probe probe_cpu_bf16();

// The one stderr line a bf16 run prints on such a CPU.
std::string bf16_emulated_note(const CpuBf16Probe& p);

}  // namespace spplan::engine
