#include "engine/run/worker.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/cuda.h>
#include <c10/util/Exception.h>
#include <nlohmann/json.hpp>

#include "engine/device/alloc_conf.hpp"
#include "engine/device/cpu_bf16.hpp"
#include "engine/io/checkpoint_io.hpp"
#include "engine/io/fault_point.hpp"
#include "engine/io/hf_side_files.hpp"
#include "engine/io/hf_weights.hpp"
#include "engine/io/staged_folder.hpp"
#include "engine/model/fused_kernels.hpp"
#include "engine/run/kernel_clock.hpp"
#include "engine/run/predict.hpp"
#include "engine/run/rank_report.hpp"
#include "engine/run/report.hpp"
#include "engine/run/resume_settings.hpp"
#include "engine/run/run_log.hpp"
#include "engine/run/run_paths.hpp"
#include "engine/run/signals.hpp"
#include "engine/run/train.hpp"
#include "planner/config/json_file.hpp"
#include "planner/core/parse.hpp"
#include "planner/core/path_info.hpp"

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

// OMP_NUM_THREADS wins (LibTorch reads it); else split the cores between the ranks on this
// machine, as the prediction assumes (predict.hpp threads_per_rank).
int64_t set_threads(int64_t local_world) {
  if (std::getenv("OMP_NUM_THREADS") == nullptr) at::set_num_threads(static_cast<int>(threads_per_rank(local_world)));
  return at::get_num_threads();
}

// Text read as bytes trains on ids 0-255: right for a byte-level model, silently wrong for one
// whose --init-from folder carries a tokenizer (its ids are not bytes).
Status check_text_with_tokenizer(const RunOptions& o) {
  if (o.init_from.empty() || look_at(o.init_from + "/tokenizer.json").kind != PathKind::kFile) return Status::ok();
  const std::pair<const char*, const std::vector<std::string>*> lists[] = {{"--data", &o.data_paths},
                                                                           {"--eval-data", &o.eval_paths}};
  for (const auto& [flag, paths] : lists) {
    for (const std::string& path : *paths) {
      if (token_width(path) != 1) continue;
      return Status::invalid(std::string(flag) + ": " + path + ": text, which the engine reads as bytes (ids 0-255), but " +
                             o.init_from + " has a tokenizer (allowed: its token ids in a *.u16.bin / *.u32.bin file; " +
                             "make one with " + tokenize_command(path, o.init_from) + ")");
    }
  }
  return Status::ok();
}

Result<TokenSource> open_data(const RunOptions& o) {
  SPPLAN_RETURN_IF_ERROR(check_text_with_tokenizer(o));
  SPPLAN_ASSIGN_OR_RETURN(TokenSource data,
                          TokenSource::open(o.data_paths, o.plan.model.vocab_size, o.eos_id, o.seed, o.shuffle));
  SPPLAN_RETURN_IF_ERROR(check_enough_tokens(data, o.plan.seq_len));
  return data;
}

// --eval-data: checked as --data is, its messages naming --eval-data.
Result<std::optional<TokenSource>> open_eval_data(const RunOptions& o) {
  if (o.eval_paths.empty()) return std::optional<TokenSource>{};
  auto renamed = [](const Status& s) {
    std::string m = s.message();
    if (m.rfind("--data", 0) == 0) m = "--eval-data" + m.substr(6);
    return Status::invalid(m);
  };
  Result<TokenSource> eval = TokenSource::open(o.eval_paths, o.plan.model.vocab_size, o.eos_id);
  if (!eval.ok()) return renamed(eval.status());
  if (Status s = check_enough_tokens(*eval, o.plan.seq_len); !s) return renamed(s);
  return std::optional<TokenSource>(std::move(eval).value());
}

// A --resume checkpoint that fits this run: the model, the data and --eos-id it was trained with,
// its settings (resume_settings.hpp: restored, or a contradiction refused) and the step count (any,
// when the run only converts: --export-hf without --steps). Returns what a person should know
// about the resume ("" when nothing).
Result<std::string> check_checkpoint(RunOptions* o, const LoadedCheckpoint& ck, const TokenSource& data) {
  const bool convert_only = !o->steps_given && !o->export_hf.empty();
  SPPLAN_RETURN_IF_ERROR(check_resume_data(ck, data.fingerprint(), o->eos_id));
  SPPLAN_ASSIGN_OR_RETURN(const std::string notes, continue_settings(o, ck, convert_only));
  if (convert_only) o->steps = ck.meta.step;
  SPPLAN_RETURN_IF_ERROR(check_resume(ck, o->plan.model, o->steps, convert_only));
  return notes;
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
  r.cp = comm.cp();
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

// What a rank needs around the training loop: the carried Hugging Face files, the --log file, the
// held-out tokens and the prediction (for MFU).
struct RunContext {
  HfSideFiles hf_files;            // hf_side_files.hpp: saved in every checkpoint, written by --export-hf
  RunLog log;                      // rank 0 only
  const TokenSource* data = nullptr;
  const TokenSource* eval = nullptr;
  Prediction prediction;
  RunReport* report = nullptr;     // the evaluations go into it as they happen
};

Status save(const RunOptions& o, Comm& comm, Trainer& trainer, RunContext& ctx) {
  Status s;
  std::vector<BlobRef> blobs = trainer.state_blobs();  // collective: every rank gathers its shards
  if (comm.rank() == 0) {
    for (const BlobRef& b : hf_side_file_blobs(ctx.hf_files)) blobs.push_back(b);
    s = save_checkpoint(o.save_dir, trainer.state_meta(), blobs);
    if (s) {
      std::cerr << "spplan-engine: saved checkpoint of step " << trainer.steps_done() << " to " << o.save_dir << std::endl;
      ctx.log.write({{"event", "checkpoint"}, {"step", trainer.steps_done()}, {"dir", o.save_dir}});
    }
  }
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

// A line when the run reads its data more than once (HF Trainer's "Num Epochs" in words): the
// stream repeats from its start, which a user should know but need not be stopped by.
void say_data_passes(const RunOptions& o, const TokenSource& data, const Comm& comm, int64_t first_step) {
  const int64_t per_step = comm.dp() * o.plan.knobs.micro_batch * o.plan.knobs.grad_accum_steps;
  const double passes = data.passes(o.steps * per_step, o.plan.seq_len);
  if (comm.rank() != 0 || passes <= 1.0) return;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f", passes);
  std::cerr << "spplan-engine: --data holds " << data.num_tokens() << " tokens; " << o.steps << " steps of "
            << per_step << " sequences of " << o.plan.seq_len << " read it " << buf
            << " times over (epochs; each pass " << (o.shuffle ? "in a new order" : "in the same order")
            << ", from step " << first_step << ")" << std::endl;
}

// The step's watch numbers (run_log.hpp): MFU from the prediction, ETA from the mean so far.
StepWatch watch_of(const RunOptions& o, const RunContext& ctx, const std::vector<StepStats>& steps, int64_t step,
                   int64_t peak, int64_t per_step) {
  const StepStats& st = steps.back();
  StepWatch w;
  w.step = step;
  w.total_steps = o.steps;
  w.tokens_per_s = static_cast<double>(st.tokens) / st.step_time_s;
  if (ctx.prediction.mfu_step_s) w.mfu = *ctx.prediction.mfu_step_s / st.step_time_s;
  double sum_s = 0;
  for (const StepStats& s : steps) sum_s += s.step_time_s;
  w.eta_s = sum_s / static_cast<double>(steps.size()) * static_cast<double>(o.steps - step);
  w.epoch = ctx.data->passes(step * per_step, o.plan.seq_len);
  w.peak_memory_bytes = peak;
  return w;
}

void maybe_evaluate(const RunOptions& o, Comm& comm, Trainer& trainer, RunContext& ctx, bool last) {
  if (ctx.eval == nullptr) return;
  const bool due = o.eval_every > 0 && trainer.steps_done() % o.eval_every == 0;
  if (!due && !last) return;
  const EvalResult r = trainer.evaluate(*ctx.eval);  // collective
  if (comm.rank() != 0) return;
  ctx.report->eval_steps.push_back(trainer.steps_done());
  ctx.report->eval_losses.push_back(r.loss);
  ctx.report->eval_tokens.push_back(r.tokens);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%.6f over %lld tokens", r.loss, static_cast<long long>(r.tokens));
  std::cerr << "eval step " << trainer.steps_done() << "/" << o.steps << "  eval loss " << buf << std::endl;
  ctx.log.write({{"event", "eval"}, {"step", trainer.steps_done()}, {"eval_loss", r.loss}, {"eval_tokens", r.tokens}});
}

// Runs the steps still to do: a progress line per step (rank 0), checkpoints and evaluations when
// due. Returns the stop signal the ranks agreed on (signals.hpp), 0 when the run went to its end.
int run_steps(const RunOptions& o, Comm& comm, Trainer& trainer, RunContext& ctx, std::vector<StepStats>* steps) {
  const int64_t per_step = comm.dp() * o.plan.knobs.micro_batch * o.plan.knobs.grad_accum_steps;
  while (trainer.steps_done() < o.steps) {
    maybe_die(comm.rank(), trainer.steps_done() + 1);
    if (steps->size() <= 1) kernel_clock_reset();  // the steps summarize() averages: all but the first
    const int64_t data_position = trainer.next_token();
    steps->push_back(trainer.step());
    const int64_t peak = max_over_ranks(comm, measured_peak(comm.device()).total_bytes);
    const int signal = agreed_stop_signal(comm);  // every rank stops after the same step
    if (comm.rank() == 0) {
      StepWatch w = watch_of(o, ctx, *steps, trainer.steps_done(), peak, per_step);
      if (ctx.data->in_order()) w.data_position = data_position;
      std::cerr << watch_progress_line(steps->back(), w) << std::endl;
      ctx.log.write(step_log_line(steps->back(), w));
    }
    const bool last = trainer.steps_done() == o.steps;
    maybe_evaluate(o, comm, trainer, ctx, last);
    const bool due = o.save_every > 0 && trainer.steps_done() % o.save_every == 0;
    if (!o.save_dir.empty() && (due || last || signal != 0)) {
      if (Status s = save(o, comm, trainer, ctx); !s) throw std::runtime_error(s.message());
    }
    if (signal != 0) {
      if (comm.rank() == 0) {
        std::cerr << "spplan-engine: stopped by signal " << signal << " (" << ::strsignal(signal) << ") after step "
                  << trainer.steps_done() << " of " << o.steps << std::endl;
      }
      return signal;
    }
  }
  return 0;
}

// --export-hf after the last step: rank 0 writes the folder from the gathered parameters; the
// others wait, so the run never ends before it is on disk.
// config.json is the carried one (hf_side_files.hpp) with only its dtype changed; the other carried
// files (generation_config.json, the tokenizer's) are copied beside it.
// The folder is written beside its final name and put in place whole (staged_folder.hpp): a failure
// or a kill at any point leaves the previous folder as it was.
Status write_export(const RunOptions& o, const at::Tensor& params, const HfSideFiles& hf_files) {
  SPPLAN_ASSIGN_OR_RETURN(StagedFolder staged, StagedFolder::begin(o.export_hf, "--export-hf"));
  const auto config = hf_files.find("config.json");
  ExportOptions e;
  e.bf16 = o.export_bf16;
  e.max_position_embeddings = o.export_trained_length ? o.plan.seq_len : 0;
  SPPLAN_RETURN_IF_ERROR(write_hf_folder(staged.path(), o.plan.model, o.plan.seq_len,
                                         config == hf_files.end() ? "" : config->second, params.data_ptr<float>(),
                                         params.numel(), e));
  SPPLAN_RETURN_IF_ERROR(write_hf_side_files(staged.path(), hf_files));
  fault_point("export");  // the tests' kill with the new folder complete but not in place
  return staged.commit();
}

Status export_hf(const RunOptions& o, Comm& comm, Trainer& trainer, const HfSideFiles& hf_files) {
  const at::Tensor params = trainer.full_params();  // collective
  Status s;
  if (comm.rank() == 0) {
    s = write_export(o, params, hf_files);
    if (s) {
      std::cerr << "spplan-engine: wrote the weights of step " << trainer.steps_done() << " to " << o.export_hf << " ("
                << (o.export_bf16 ? "bf16" : "fp32") << "; " << hf_files.size() << " Hugging Face file(s) carried)"
                << std::endl;
    }
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

// SPPLAN_ENGINE_DEVICE_MEMORY_LIMIT (worker.hpp): the emulated device of a CPU run, or the cap of
// a GPU's caching allocator.
Status apply_device_memory_limit(c10::Device device) {
  const char* v = std::getenv("SPPLAN_ENGINE_DEVICE_MEMORY_LIMIT");
  if (v == nullptr) return Status::ok();
  const bool gpu = device.is_cuda();
  const int64_t most = gpu ? cuda_device_total_bytes(device.index()) : int64_t{1} << 50;
  SPPLAN_ASSIGN_OR_RETURN(const int64_t bytes,
                          parse_int("environment variable SPPLAN_ENGINE_DEVICE_MEMORY_LIMIT", v, 1, most));
  if (gpu) {
    set_cuda_memory_limit(device.index(), bytes);
  } else {
    set_device_memory_limit(bytes);
  }
  return Status::ok();
}

// A --seq past the model's max_position_embeddings trains positions the base model never saw (fine
// for context extension, which is why it runs) and the export keeps the old limit unless asked.
void warn_past_trained_context(const RunOptions& o) {
  const int64_t limit = o.plan.model.max_position_embeddings;
  if (limit <= 0 || o.plan.seq_len <= limit) return;
  std::cerr << "spplan-engine: warning: --seq " << o.plan.seq_len << " is past the model's max_position_embeddings "
            << limit << " (context extension)"
            << (o.export_hf.empty() ? std::string()
                : o.export_trained_length ? "; the export's config.json says " + std::to_string(o.plan.seq_len)
                                          : "; the export keeps " + std::to_string(limit) +
                                                " unless --export-trained-length")
            << "\n";
}

// The carried Hugging Face files: the checkpoint's when resuming, else --init-from's folder's.
Result<HfSideFiles> carried_hf_files(const RunOptions& o, const std::optional<LoadedCheckpoint>& resume) {
  if (resume) return hf_side_files_of(resume->blobs);
  if (!o.init_from.empty()) return read_hf_side_files(o.init_from);
  return HfSideFiles{};
}

int train(const RunOptions& o, const DistEnv& env, const TokenSource& data, const std::optional<TokenSource>& eval,
          std::optional<LoadedCheckpoint>& resume, const std::optional<HfWeights>& init) {
  RunContext ctx;
  ctx.data = &data;
  ctx.eval = eval ? &*eval : nullptr;
  if (Result<HfSideFiles> files = carried_hf_files(o, resume); files.ok()) {
    ctx.hf_files = std::move(files).value();
  } else {
    return env.rank == 0 ? print_bad_input(files.status()) : 2;
  }
  if (env.rank == 0 && !o.log_path.empty()) {
    // A resumed run drops what a killed run logged past its checkpoint: the steps are run again.
    const std::optional<int64_t> resumed = resume ? std::optional<int64_t>(resume->meta.step) : std::nullopt;
    Result<RunLog> log = RunLog::open(o.log_path, resumed);
    if (!log.ok()) return print_bad_input(log.status());
    ctx.log = std::move(log).value();
  }
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
  Comm comm(env, o.plan.knobs.sp, device, *timeout, o.plan.knobs.cp);
  Trainer trainer(o, comm, data);
  if (resume) {
    if (Status s = trainer.restore(*resume); !s) {
      return env.rank == 0 ? print_bad_input(s) : 2;
    }
    if (env.rank == 0) {
      std::cerr << "spplan-engine: resumed from " << resume->folder << " at step " << trainer.steps_done() << " of "
                << o.steps << std::endl;
    }
    resume.reset();  // free the file bytes before training
  }
  if (init) trainer.load_weights(*init);
  RunReport report = base_report(o, comm, trainer, threads);
  ctx.report = &report;
  report.ranks_on_host = local_world_size(env);
  report.settings = dump_utf8(run_settings(o));  // paths may be named in Latin-1
  report.prediction = ctx.prediction = predict(o.plan, pricing_for(o, comm.device(), report.ranks_on_host));
  const bool kernel_clock = kernel_clock_requested() && !comm.device().is_cuda();  // CUDA ops return at launch
  if (kernel_clock) install_kernel_clock();
  report.alloc_conf = apply_alloc_conf();  // set in main() already: this reads it back
  if (env.rank == 0 && !comm.device().is_cuda() && o.plan.knobs.precision == Precision::kBf16) {
    const CpuBf16Probe probe = probe_cpu_bf16();
    report.cpu_bf16_emulated = bf16_is_emulated(probe);
    if (*report.cpu_bf16_emulated) std::cerr << bf16_emulated_note(probe) << std::endl;
  }
  reset_peak(comm.device());
  if (env.rank == 0 && trainer.steps_done() < o.steps) say_data_passes(o, data, comm, trainer.steps_done() + 1);
  std::vector<StepStats> steps;
  const int signal = run_steps(o, comm, trainer, ctx, &steps);
  if (kernel_clock && !steps.empty()) {
    const double averaged = static_cast<double>(steps.size() > 1 ? steps.size() - 1 : 1);
    for (const auto& [name, s] : kernel_clock_classes_s()) report.kernel_classes_s[name] = s / averaged;
    const std::map<std::string, double> top = kernel_clock_top_ops_s(24);
    for (const auto& [name, s] : top) report.kernel_top_ops_s[name] = s / averaged;
    for (const auto& [name, n] : kernel_clock_op_calls(top)) report.kernel_top_ops_calls[name] = n / averaged;
    report.peak_memory_ops = kernel_clock_peak_ops();
  }
  if (!o.export_hf.empty() && signal == 0) {
    if (Status s = export_hf(o, comm, trainer, ctx.hf_files); !s) throw std::runtime_error(s.message());
  }
  report.stopped_by_signal = signal;
  if (steps.empty()) return 0;  // a conversion only (--resume --export-hf): no step to report
  const std::string summary = finish_report(o, comm, steps, report);
  if (env.rank == 0) {
    nlohmann::json line = nlohmann::json::parse(summary);
    line["event"] = "summary";
    ctx.log.write(line);
  }
  return signal == 0 ? 0 : 128 + signal;
}

}  // namespace

int print_bad_input(const Status& status) {
  // printable(): a newline inside a value (a TOML string, a flag) would break the one-line rule.
  std::cerr << "spplan: " << printable(status.message()) << "\n";
  return 2;
}

Status check_inputs(RunOptions* o, int64_t world) {
  SPPLAN_RETURN_IF_ERROR(check_run_options(o, world));
  SPPLAN_RETURN_IF_ERROR(check_run_paths(*o));  // before anything is opened for writing
  SPPLAN_ASSIGN_OR_RETURN(const TokenSource data, open_data(*o));  // maps and scans the files; each rank maps them again
  SPPLAN_RETURN_IF_ERROR(open_eval_data(*o).status());
  if (!o->resume_dir.empty()) {
    SPPLAN_ASSIGN_OR_RETURN(const LoadedCheckpoint ck, load_checkpoint(o->resume_dir));
    SPPLAN_RETURN_IF_ERROR(check_checkpoint(o, ck, data).status());
  } else if (!o->init_from.empty()) {  // a resume takes the checkpoint's weights
    SPPLAN_RETURN_IF_ERROR(open_init_from(*o).status());
  }
  return Status::ok();
}

int run_rank(RunOptions o, const DistEnv& env) {
  auto bad_input = [&](const Status& s) {
    return env.rank == 0 ? print_bad_input(s) : 2;
  };
  if (Status s = check_run_options(&o, env.world); !s) return bad_input(s);
  // Rank 0 writes every output; the others check that none lands on an input, as it does.
  if (Status s = env.rank == 0 ? check_run_paths(o) : check_outputs_apart(run_inputs(o), run_outputs(o)); !s) {
    return bad_input(s);
  }
  catch_rank_stop_signals();  // before the data is read: a signal from now on ends the run cleanly
  Result<TokenSource> data = open_data(o);
  if (!data.ok()) return bad_input(data.status());
  Result<std::optional<TokenSource>> eval = open_eval_data(o);
  if (!eval.ok()) return bad_input(eval.status());
  std::optional<LoadedCheckpoint> resume;
  if (!o.resume_dir.empty()) {
    Result<LoadedCheckpoint> ck = load_checkpoint(o.resume_dir);
    if (!ck.ok()) return bad_input(ck.status());
    const Result<std::string> notes = check_checkpoint(&o, *ck, *data);
    if (!notes.ok()) return bad_input(notes.status());
    if (env.rank == 0 && !ck->warning.empty()) std::cerr << "spplan-engine: warning: " << ck->warning << "\n";
    if (env.rank == 0 && !notes->empty()) std::cerr << "spplan-engine: resume: " << *notes << "\n";
    resume = std::move(ck).value();
  } else if (o.resume_or_init && env.rank == 0) {
    std::cerr << "spplan-engine: --resume-or-init: " << o.resume_or_init_dir << " holds no checkpoint; starting from "
              << (o.init_from.empty() ? "the seeded weights" : o.init_from) << "\n";
  }
  if (env.rank == 0) warn_past_trained_context(o);
  std::optional<HfWeights> init;
  if (!o.init_from.empty() && !resume) {
    Result<HfWeights> w = open_init_from(o);
    if (!w.ok()) return bad_input(w.status());
    init = std::move(w).value();
  }
  try {
    return train(o, env, *data, *eval, resume, init);
  } catch (const c10::OutOfMemoryError& e) {
    return report_oom(o, env.rank, e.what());
  } catch (const std::exception& e) {
    // c10d errors carry a C++ stack trace after the first line; the first line says what failed.
    std::cerr << "spplan-engine: rank " << env.rank << ": " << first_line(e.what()) << std::endl;
    return 1;
  }
}

}  // namespace spplan::engine
