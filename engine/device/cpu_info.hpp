// What a report says about the CPU its times belong to: the model name and cores from
// /proc/cpuinfo, and the vector units that decide its GEMM and bf16 rates. A cloud VM's model name
// is often only "AMD EPYC" or "Intel Xeon Processor", which covers CPUs from AVX2-only (bf16
// emulated at under a hundredth of the fp32 rate) to AMX (bf16 faster than fp32): two "AMD EPYC"
// VMs, one AVX2-only and one with AVX512-BF16, had step times 2x apart in bf16.
#pragma once

#include <string>

namespace spplan::engine {

// "AVX2 (no AVX-512)", "AVX-512 (no bf16 units)", "AVX-512 with AVX512-BF16", "AVX-512 with
// AVX512-BF16 and AMX", ... from a /proc/cpuinfo "flags" line's words; "" where none is named.
std::string cpu_vector_units(const std::string& flags_line);

// "<model name>, <cores> cores, <vector units>" from the text of /proc/cpuinfo ("unknown CPU" where
// it names no model).
std::string describe_cpu(const std::string& cpuinfo_text, long cores);

// describe_cpu of this machine's /proc/cpuinfo and online cores.
std::string this_cpu();

}  // namespace spplan::engine
