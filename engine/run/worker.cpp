#include "engine/run/worker.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <thread>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/cuda.h>
#include <c10/util/Exception.h>
#include <nlohmann/json.hpp>

#include "engine/device/alloc_conf.hpp"
#include "engine/io/checkpoint_io.hpp"
#include "engine/device/cpu_bf16.hpp"
#include "engine/io/hf_weights.hpp"
#include "engine/model/fused_kernels.hpp"
#include "engine/run/report.hpp"
#include "planner/core/parse.hpp"
#include "planner/core/units.hpp"
#include "engine/run/train.hpp"

namespace spplan::engine {
namespace {


void maybe_die(int64_t rank, int64_t step) {  // the test hook (see worker.hpp)
  const char* fault = std::getenv("SPPLAN_ENGINE_FAULT");
  char what[8] = {};
  long long r = -1, k = -1;
  if (fault != nullptr && std::sscanf(fault, "%7[a-z]:%lld:%lld", what, &r, &k) == 3 && r == rank && k == step) {
    ::raise(std::string(what) == "stop" ? SIGSTOP : SIGKILL);
  }
}

// OMP_NUM_THREADS wins; else split the cores between the ranks on this machine.
int64_t set_threads(int64_t local_world) {
  if (std::getenv("OMP_NUM_THREADS") == nullptr) {
    const auto cores = static_cast<int64_t>(std::max(1u, std::thread::hardware_concurrency()));
    at::set_num_threads(static_cast<int>(std::max<int64_t>(1, cores / local_world)));
  }
  return at::get_num_threads();
}

Result<TokenSource> open_data(const RunOptions& o) {
  SPPLAN_ASSIGN_OR_RETURN(TokenSource data, TokenSource::open(o.data_paths, o.plan.model.vocab_size, o.eos_id, o.seed));
  SPPLAN_RETURN_IF_ERROR(check_enough_tokens(data, o.plan.seq_len));
  return data;
}

// A GPU when LibTorch has CUDA and one is present (NCCL path: compiled, not exercised here).
c10::Device pick_device(const DistEnv& env) {
  if (torch::cuda::is_available()) {
    const auto n = static_cast<int64_t>(torch::cuda::device_count());
    return c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(env.local_rank % n));
  }
  return c10::Device(c10::kCPU);
}

// This rank's peak: the counting allocator's breakdown on CPU; CUDA's caching allocator's peak of
// allocated bytes (no breakdown: reported as other_bytes) on a GPU.
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

int64_t max_over_ranks(Comm& comm, int64_t v) {
  at::Tensor t = at::tensor({v}, at::kLong);
  comm.all_reduce_max(t);
  return t.item<int64_t>();
}

void add_phases(const PhaseTimes& p, std::map<std::string, double>* sum) {
  (*sum)["data_s"] += p.data_s;
  (*sum)["forward_s"] += p.forward_s;
  (*sum)["loss_s"] += p.loss_s;
  (*sum)["backward_s"] += p.backward_s;
  (*sum)["grad_all_reduce_s"] += p.grad_all_reduce_s;
  (*sum)["optimizer_s"] += p.optimizer_s;
  (*sum)["all_to_all_s"] += p.all_to_all_s;
  (*sum)["grad_reduce_scatter_s"] += p.grad_reduce_scatter_s;
}

RunReport base_report(const RunOptions& o, const Comm& comm, const Trainer& trainer, int64_t threads) {
  RunReport r;
  const Knobs& k = o.plan.knobs;
  r.world = comm.world();
  r.sp = comm.sp();
  r.dp = comm.dp();
  r.micro_batch = k.micro_batch;
  r.grad_accum = k.grad_accum_steps;
  r.seq_len = o.plan.seq_len;
  r.first_step = trainer.steps_done() + 1;
  r.num_params = trainer.num_params();
  r.threads_per_rank = threads;
  r.model = o.plan.model.name;
  r.act_ckpt = to_string(k.act_ckpt);
  r.device = comm.device().str();
  r.attention_backend = to_string(trainer.sdpa_choice().backend);
  r.attention_backend_choice = trainer.sdpa_choice().how;
  r.fused_kernels = k.tiled_loss ? fused_kernels_path(comm.device()) : "none";
  return r;
}

Status save(const RunOptions& o, Comm& comm, Trainer& trainer) {
  Status s;
  const std::vector<BlobRef> blobs = trainer.state_blobs();  // collective: every rank gathers its shards
  if (comm.rank() == 0) s = save_checkpoint(o.save_dir, trainer.state_meta(), blobs);
  comm.barrier();  // the others wait, so a run never ends before its checkpoint is on disk
  trainer.drop_state_blobs();
  return s;
}

// Mean over the steps after the warm-up step (the first step of a run warms caches and the
// allocator); a one-step run reports that step.
void summarize(const std::vector<StepStats>& steps, RunReport* r) {
  const size_t first = steps.size() > 1 ? 1 : 0;
  double time_s = 0, tokens = 0;
  std::map<std::string, double> sum;
  for (size_t i = first; i < steps.size(); ++i) {
    time_s += steps[i].step_time_s;
    tokens += static_cast<double>(steps[i].tokens);
    add_phases(steps[i].phases, &sum);
  }
  const auto n = static_cast<double>(steps.size() - first);
  r->tokens_per_s = tokens / time_s;
  r->step_time_s = time_s / n;
  for (auto& [name, s] : sum) r->phases_s[name] = s / n;
}

// Ranks on this machine: torchrun's LOCAL_WORLD_SIZE, else Slurm's tasks per node, else all.
int64_t local_world_size(const DistEnv& env) {
  for (const char* var : {"LOCAL_WORLD_SIZE", "SLURM_NTASKS_PER_NODE"}) {
    if (const char* v = std::getenv(var); v != nullptr && std::atoi(v) > 0) return std::atoi(v);
  }
  return env.world;
}

// Runs the steps still to do: a progress line per step (rank 0), checkpoints when due.
std::vector<StepStats> run_steps(const RunOptions& o, int64_t rank, Comm& comm, Trainer& trainer) {
  std::vector<StepStats> steps;
  while (trainer.steps_done() < o.steps) {
    maybe_die(rank, trainer.steps_done() + 1);
    steps.push_back(trainer.step());
    const StepStats& st = steps.back();
    const int64_t peak = max_over_ranks(comm, measured_peak(comm.device()).total_bytes);
    if (rank == 0) {
      std::cerr << progress_line(trainer.steps_done(), o.steps, st.loss, static_cast<double>(st.tokens) / st.step_time_s,
                                 st.step_time_s, peak, st.lr, st.grad_norm)
                << std::endl;
    }
    const bool due = o.save_every > 0 && trainer.steps_done() % o.save_every == 0;
    if (!o.save_dir.empty() && (due || trainer.steps_done() == o.steps)) {
      if (Status s = save(o, comm, trainer); !s) throw std::runtime_error(s.message());
    }
  }
  return steps;
}

// The spec the run is priced on (predict.hpp): --gpu, else what this device is.
Pricing pricing_for(const RunOptions& o, c10::Device device) {
  const GpuSpec* flag = o.gpu ? &*o.gpu : nullptr;
  if (!device.is_cuda()) return cpu_pricing(flag, o.plan.cluster.gpu);
  const CudaDevice d{cuda_device_name(device.index()), cuda_memory(device.index()).device_total_bytes};
  return cuda_pricing(flag, d, o.plan.cluster.gpu);
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

// Collective (every rank calls it); rank 0 prints the comparison line and, with --json, the object.
void finish_report(const RunOptions& o, Comm& comm, const std::vector<StepStats>& steps, RunReport report) {
  const Gathered g = gather_peak(comm);
  const int64_t host_peak = max_over_ranks(comm, peak_host_memory().total_bytes);
  if (comm.rank() != 0) return;
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
  report.prediction = predict(o.plan, pricing_for(o, comm.device()));
  std::cerr << prediction_line(report) << std::endl;
  if (comm.device().is_cuda()) {  // on a CPU both are always LibTorch's CPU kernels
    std::cerr << "spplan-engine: attention " << report.attention_backend << " (" << report.attention_backend_choice
              << "); fused kernels " << report.fused_kernels << std::endl;
  }
  if (o.json) std::cout << to_json(report) << std::endl;
}

// --export-hf after the last step: rank 0 writes the folder from the gathered parameters; the
// others wait, so the run never ends before it is on disk.
Status export_hf(const RunOptions& o, Comm& comm, Trainer& trainer) {
  const at::Tensor params = trainer.full_params();  // collective
  Status s;
  if (comm.rank() == 0) {
    s = write_hf_folder(o.export_hf, o.plan.model, o.plan.seq_len, o.init_from, params.data_ptr<float>(), params.numel());
  }
  comm.barrier();
  return s;
}

// --init-from: DIR/config.json is the run's model (check_same_model) and DIR's tensors are all
// there, each with its shape and a dtype the engine takes. The weights are read later, by each rank.
Result<HfWeights> open_init_from(const RunOptions& o) {
  SPPLAN_ASSIGN_OR_RETURN(const ModelSpec hf, read_hf_config(o.init_from));
  const std::string source = !o.plan_path.empty() ? o.plan_path : "--model " + o.plan.model.name;
  if (!o.plan_path.empty() || o.model_from_flag) {
    SPPLAN_RETURN_IF_ERROR(check_same_model(o.plan.model, source, hf, o.init_from + "/config.json"));
  }
  return HfWeights::open(o.init_from, o.plan.model);
}

// SPPLAN_ENGINE_DEVICE_MEMORY_LIMIT on a CPU run (worker.hpp).
Status apply_device_memory_limit(c10::Device device) {
  const char* v = std::getenv("SPPLAN_ENGINE_DEVICE_MEMORY_LIMIT");
  if (v == nullptr || device.is_cuda()) return Status::ok();
  SPPLAN_ASSIGN_OR_RETURN(const int64_t bytes, parse_int("environment variable SPPLAN_ENGINE_DEVICE_MEMORY_LIMIT", v, 1,
                                                         int64_t{1} << 50));
  set_device_memory_limit(bytes);
  return Status::ok();
}

int train(const RunOptions& o, const DistEnv& env, const TokenSource& data, std::optional<LoadedCheckpoint>& resume,
          const std::optional<HfWeights>& init) {
  const int64_t threads = set_threads(local_world_size(env));
  const c10::Device device = pick_device(env);
  // Before the first allocation of the run: CUDA's out-of-memory observer, or the emulated device.
  if (device.is_cuda()) watch_cuda_oom();
  if (Status s = apply_device_memory_limit(device); !s) {
    if (env.rank == 0) std::cerr << s.message() << "\n";
    return 2;
  }
  const Result<std::chrono::seconds> timeout = comm_timeout();
  if (!timeout.ok()) {
    if (env.rank == 0) std::cerr << timeout.status().message() << "\n";
    return 2;
  }
  Comm comm(env, o.plan.knobs.sp, device, *timeout);
  Trainer trainer(o, comm, data);
  if (resume) {
    if (Status s = trainer.restore(*resume); !s) {
      if (env.rank == 0) std::cerr << s.message() << "\n";
      return 2;
    }
    resume.reset();  // free the file bytes before training
  }
  if (init) trainer.load_weights(*init);
  RunReport report = base_report(o, comm, trainer, threads);
  report.alloc_conf = apply_alloc_conf();  // set in main() already: this reads it back
  if (env.rank == 0 && !comm.device().is_cuda() && o.plan.knobs.precision == Precision::kBf16) {
    const CpuBf16Probe probe = probe_cpu_bf16();
    report.cpu_bf16_emulated = bf16_is_emulated(probe);
    if (*report.cpu_bf16_emulated) std::cerr << bf16_emulated_note(probe) << std::endl;
  }
  reset_peak(comm.device());
  const std::vector<StepStats> steps = run_steps(o, env.rank, comm, trainer);
  if (!o.export_hf.empty()) {
    if (Status s = export_hf(o, comm, trainer); !s) throw std::runtime_error(s.message());
  }
  finish_report(o, comm, steps, report);
  return 0;
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

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

// One line on stderr and, with --json, the object that says so; exit 3 (kExitOutOfMemory).
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
    if (!append_oom_report(j.dump())) std::cout << j.dump() << std::endl;
  }
  return kExitOutOfMemory;
}


}  // namespace

Status check_inputs(RunOptions* o, int64_t world) {
  SPPLAN_RETURN_IF_ERROR(check_run_options(o, world));
  SPPLAN_RETURN_IF_ERROR(open_data(*o).status());  // maps and scans the files; each rank maps them again
  if (!o->resume_dir.empty()) {
    SPPLAN_ASSIGN_OR_RETURN(const LoadedCheckpoint ck, load_checkpoint(o->resume_dir));
    SPPLAN_RETURN_IF_ERROR(check_resume(ck, o->plan.model, o->steps));
  }
  if (!o->init_from.empty()) SPPLAN_RETURN_IF_ERROR(open_init_from(*o).status());
  return Status::ok();
}

int run_rank(RunOptions o, const DistEnv& env) {
  auto bad_input = [&](const Status& s) {
    if (env.rank == 0) std::cerr << s.message() << "\n";
    return 2;
  };
  if (Status s = check_run_options(&o, env.world); !s) return bad_input(s);
  Result<TokenSource> data = open_data(o);
  if (!data.ok()) return bad_input(data.status());
  std::optional<LoadedCheckpoint> resume;
  if (!o.resume_dir.empty()) {
    Result<LoadedCheckpoint> ck = load_checkpoint(o.resume_dir);
    if (!ck.ok()) return bad_input(ck.status());
    if (Status s = check_resume(*ck, o.plan.model, o.steps); !s) return bad_input(s);
    if (env.rank == 0 && !ck->warning.empty()) std::cerr << "spplan-engine: warning: " << ck->warning << "\n";
    resume = std::move(ck).value();
  }
  std::optional<HfWeights> init;
  if (!o.init_from.empty()) {
    Result<HfWeights> w = open_init_from(o);
    if (!w.ok()) return bad_input(w.status());
    init = std::move(w).value();
  }
  try {
    return train(o, env, *data, resume, init);
  } catch (const c10::OutOfMemoryError& e) {
    return report_oom(o, env.rank, e.what());
  } catch (const std::exception& e) {
    // c10d errors carry a C++ stack trace after the first line; the first line says what failed.
    std::cerr << "spplan-engine: rank " << env.rank << ": " << first_line(e.what()) << std::endl;
    return 1;
  }
}

}  // namespace spplan::engine
