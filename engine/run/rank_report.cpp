#include "engine/run/rank_report.hpp"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <string>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include "engine/device/memory_meter.hpp"
#include "engine/run/launcher.hpp"
#include "engine/run/predict.hpp"
#include "planner/config/json_file.hpp"
#include "planner/core/units.hpp"

namespace spplan::engine {
namespace {

struct Gathered {
  int64_t peak_bytes = 0, rank = 0, reserved_bytes = 0, device_used_bytes = 0;
  std::map<std::string, int64_t> by_category;
};

// The peak of the rank with the largest total, with its breakdown; the largest reserved bytes and
// (CUDA) device memory in use.
Gathered gather_peak(Comm& comm) {
  constexpr int kFixed = 3;  // total, reserved, device used
  const c10::Device device = comm.device();
  const MemorySnapshot mine = measured_peak(device);
  const CudaMemory cuda = device.is_cuda() ? cuda_memory(device.index()) : CudaMemory{};
  at::Tensor t = at::empty({kFixed + kMemCategories}, at::kLong);
  t[0] = mine.total_bytes;
  t[1] = device.is_cuda() ? cuda.peak_reserved_bytes : peak_reserved_bytes();
  t[2] = cuda.device_used_bytes;
  for (int c = 0; c < kMemCategories; ++c) t[kFixed + c] = mine.by_category_bytes[static_cast<size_t>(c)];
  Gathered g;
  const std::vector<at::Tensor> all = comm.all_gather(t);
  for (size_t r = 0; r < all.size(); ++r) {
    g.reserved_bytes = std::max(g.reserved_bytes, all[r][1].item<int64_t>());
    g.device_used_bytes = std::max(g.device_used_bytes, all[r][2].item<int64_t>());
    if (r == 0 || all[r][0].item<int64_t>() > g.peak_bytes) {
      g.peak_bytes = all[r][0].item<int64_t>();
      g.rank = static_cast<int64_t>(r);
      for (int c = 0; c < kMemCategories; ++c) {
        g.by_category[mem_category_key(static_cast<MemCategory>(c))] = all[r][kFixed + c].item<int64_t>();
      }
    }
  }
  return g;
}

// printf-style formatting of one number into a string.
std::string format(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

// The run's measured step and peak beside the prediction, one line on stderr (rank 0).
std::string prediction_line(const RunReport& r) {
  const Prediction& p = r.prediction;
  std::string line = "spplan-engine: step " + format("%.3f", r.step_time_s) + " s measured";
  if (p.step_time_s) {
    line += ", " + format("%.3f", *p.step_time_s) + " s predicted (" +
            format("%+.1f", 100.0 * (*p.step_time_s - r.step_time_s) / r.step_time_s) + " %)";
  }
  line += "; peak memory " + format("%.2f", r.peak_memory_bytes / kGiB) + " GiB measured";
  if (p.peak_memory_bytes) line += ", " + format("%.2f", *p.peak_memory_bytes / kGiB) + " GiB predicted";
  return line + " (on " + p.machine + ")";
}

// "20.90 GiB", or "64.0 MiB" below a GiB.
std::string bytes_text(int64_t bytes) {
  char buf[32];
  const auto b = static_cast<double>(bytes);
  if (b >= kGiB) {
    std::snprintf(buf, sizeof buf, "%.2f GiB", b / kGiB);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f MiB", b / kMiB);
  }
  return buf;
}

}  // namespace

Pricing pricing_for(const RunOptions& o, c10::Device device, int64_t ranks_on_host) {
  const GpuSpec* flag = o.gpu ? &*o.gpu : nullptr;
  if (!device.is_cuda()) {
    Pricing p = cpu_pricing(flag, o.plan.cluster.gpu);
    p.threads_per_rank = threads_per_rank(ranks_on_host);  // what worker.cpp set_threads runs
    return p;
  }
  const CudaDevice d{cuda_device_name(device.index()), cuda_memory(device.index()).device_total_bytes};
  return cuda_pricing(flag, d, o.plan.cluster.gpu);
}

MemorySnapshot measured_peak(c10::Device device) {
  if (!device.is_cuda()) return peak_memory();
  MemorySnapshot s;
  s.total_bytes = cuda_memory(device.index()).peak_allocated_bytes;
  s.by_category_bytes[static_cast<size_t>(MemCategory::kOther)] = s.total_bytes;
  return s;
}

void reset_peak(c10::Device device) {
  if (device.is_cuda()) cuda_reset_peak(device.index());
  reset_peak_memory();
}

int64_t max_over_ranks(Comm& comm, int64_t v) {
  at::Tensor t = at::tensor({v}, at::kLong);
  comm.all_reduce_max(t);
  return t.item<int64_t>();
}

std::string finish_report(const RunOptions& o, Comm& comm, const std::vector<StepStats>& steps, RunReport report) {
  const Gathered g = gather_peak(comm);
  const int64_t host_peak = max_over_ranks(comm, peak_host_memory().total_bytes);
  if (comm.rank() != 0) return "";
  for (const StepStats& st : steps) {
    report.losses.push_back(st.loss);
    report.step_times_s.push_back(st.step_time_s);
    report.lrs.push_back(st.lr);
    report.grad_norms.push_back(st.grad_norm);
  }
  summarize(steps, &report);
  report.peak_memory_bytes = g.peak_bytes;
  report.peak_rank = g.rank;
  report.peak_reserved_bytes = g.reserved_bytes;
  if (comm.device().is_cuda()) report.device_used_bytes = g.device_used_bytes;
  report.memory_bytes = g.by_category;
  report.peak_host_memory_bytes = host_peak;
  if (report.prediction.machine.empty()) report.prediction = predict(o.plan, pricing_for(o, comm.device(), report.ranks_on_host));
  std::cerr << prediction_line(report) << std::endl;
  if (comm.device().is_cuda()) {  // on a CPU both are always LibTorch's CPU kernels
    std::cerr << "spplan-engine: attention " << report.attention_backend << " (" << report.attention_backend_choice
              << "); fused kernels " << report.fused_kernels << std::endl;
  }
  const std::string text = to_json(report);
  if (o.json) std::cout << text << std::endl;
  return text;
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

int report_oom(const RunOptions& o, int64_t rank, const std::string& what) {
  OomInfo info;
  const bool known = last_oom(&info);
  std::string line = "spplan-engine: rank " + std::to_string(rank) + ": out of device memory";
  if (known) {
    line += ": tried to allocate " + bytes_text(info.tried_bytes) + " with " + bytes_text(info.in_use_bytes) +
            " in use of " + bytes_text(info.capacity_bytes);
  } else {
    line += ": " + first_line(what);
  }
  std::cerr << line + "\n" << std::flush;  // one write: ranks running out together do not interleave
  if (o.json) {
    nlohmann::json j = {{"oom", true}, {"rank", rank}, {"message", first_line(what)}};
    if (known) j.update({{"tried_bytes", info.tried_bytes}, {"in_use_bytes", info.in_use_bytes},
                         {"capacity_bytes", info.capacity_bytes}});
    // Ranks of one SP group run out together: under the launcher the first one's object is the
    // run's (launcher.hpp); under torchrun each rank prints its own.
    if (!append_oom_report(dump_utf8(j))) std::cout << dump_utf8(j) << std::endl;
  }
  return kExitOutOfMemory;
}

}  // namespace spplan::engine
