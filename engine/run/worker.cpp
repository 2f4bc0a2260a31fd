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

#include "engine/device/alloc_conf.hpp"
#include "engine/device/cpu_bf16.hpp"
#include "engine/io/checkpoint_io.hpp"
#include "engine/io/hf_weights.hpp"
#include "engine/model/fused_kernels.hpp"
#include "engine/run/kernel_clock.hpp"
#include "engine/run/rank_report.hpp"
#include "engine/run/report.hpp"
#include "engine/run/train.hpp"
#include "planner/core/parse.hpp"

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

// Ranks on this machine: torchrun's LOCAL_WORLD_SIZE, else Slurm's tasks per node, else all.
int64_t local_world_size(const DistEnv& env) {
  for (const char* var : {"LOCAL_WORLD_SIZE", "SLURM_NTASKS_PER_NODE"}) {
    // parse_int, not atoi: atoi of a number beyond int's range is undefined.
    if (const char* v = std::getenv(var); v != nullptr) {
      if (const auto n = parse_int(var, v, 1, 1 << 20); n.ok()) return *n;
    }
  }
  return env.world;
}

// Runs the steps still to do: a progress line per step (rank 0), checkpoints when due.
std::vector<StepStats> run_steps(const RunOptions& o, int64_t rank, Comm& comm, Trainer& trainer) {
  std::vector<StepStats> steps;
  while (trainer.steps_done() < o.steps) {
    maybe_die(rank, trainer.steps_done() + 1);
    if (steps.size() <= 1) kernel_clock_reset();  // the steps summarize() averages: all but the first
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
    return env.rank == 0 ? print_bad_input(s) : 2;
  }
  const Result<std::chrono::seconds> timeout = comm_timeout();
  if (!timeout.ok()) {
    return env.rank == 0 ? print_bad_input(timeout.status()) : 2;
  }
  Comm comm(env, o.plan.knobs.sp, device, *timeout);
  Trainer trainer(o, comm, data);
  if (resume) {
    if (Status s = trainer.restore(*resume); !s) {
      return env.rank == 0 ? print_bad_input(s) : 2;
    }
    resume.reset();  // free the file bytes before training
  }
  if (init) trainer.load_weights(*init);
  RunReport report = base_report(o, comm, trainer, threads);
  const bool kernel_clock = kernel_clock_requested() && !device.is_cuda();  // CUDA ops return at launch
  if (kernel_clock) install_kernel_clock();
  report.alloc_conf = apply_alloc_conf();  // set in main() already: this reads it back
  if (env.rank == 0 && !comm.device().is_cuda() && o.plan.knobs.precision == Precision::kBf16) {
    const CpuBf16Probe probe = probe_cpu_bf16();
    report.cpu_bf16_emulated = bf16_is_emulated(probe);
    if (*report.cpu_bf16_emulated) std::cerr << bf16_emulated_note(probe) << std::endl;
  }
  reset_peak(comm.device());
  const std::vector<StepStats> steps = run_steps(o, env.rank, comm, trainer);
  if (kernel_clock && !steps.empty()) {
    const double averaged = static_cast<double>(steps.size() > 1 ? steps.size() - 1 : 1);
    for (const auto& [name, s] : kernel_clock_classes_s()) report.kernel_classes_s[name] = s / averaged;
    for (const auto& [name, s] : kernel_clock_top_ops_s(12)) report.kernel_top_ops_s[name] = s / averaged;
    report.peak_memory_ops = kernel_clock_peak_ops();
  }
  if (!o.export_hf.empty()) {
    if (Status s = export_hf(o, comm, trainer); !s) throw std::runtime_error(s.message());
  }
  finish_report(o, comm, steps, report);
  return 0;
}

}  // namespace

int print_bad_input(const Status& status) {
  // printable(): a newline inside a value (a TOML string, a flag) would break the one-line rule.
  std::cerr << "spplan: " << printable(status.message()) << "\n";
  return 2;
}

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
    return env.rank == 0 ? print_bad_input(s) : 2;
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
