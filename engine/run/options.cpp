#include "engine/run/options.hpp"

#include <cstdlib>

#include <algorithm>
#include <map>

#include "engine/io/checkpoint_io.hpp"
#include "planner/config/knob_flags.hpp"
#include "planner/config/loaders.hpp"
#include "planner/config/optimizer_spec.hpp"
#include "planner/config/plan_rules.hpp"
#include "planner/core/args.hpp"
#include "planner/core/parse.hpp"
#include "planner/core/path_info.hpp"

namespace spplan::engine {
namespace {

// What the engine runs when no knob says otherwise: plain fp32 data parallelism + Ulysses, with
// gradients reduced in fp32 (sp_comm_dtype bf16 is implemented too: see Trainer::all_reduce_grads).
Knobs engine_default_knobs() {
  Knobs k;
  k.zero_stage = 0;
  k.act_ckpt = ActCkpt::kNone;
  k.precision = Precision::kFp32;
  k.sp_comm_dtype = CommDtype::kFp32;
  return k;
}

// The knob flags with the engine's defaults (engine_default_knobs) in their help.
std::vector<FlagSpec> engine_knob_flag_specs() {
  const Knobs d = engine_default_knobs();
  const std::map<std::string, std::string> defaults{{"zero", std::to_string(d.zero_stage)},
                                                    {"act-ckpt", to_string(d.act_ckpt)},
                                                    {"precision", to_string(d.precision)},
                                                    {"sp-comm-dtype", to_string(d.sp_comm_dtype)}};
  std::vector<FlagSpec> specs = knob_flag_specs();
  for (FlagSpec& f : specs) {
    if (defaults.count(f.name)) f.default_value = defaults.at(f.name) + " (the engine's default)";
    if (f.name == "sp") f.default_value = "required without --plan";
  }
  return specs;
}

}  // namespace

std::vector<FlagSpec> run_flag_specs() {
  std::vector<FlagSpec> specs{
      {"plan", true, "the plan to train (model, sequence, knobs, optimizer)", "a plan TOML file",
       "none: --model, --seq and --sp"},
      {"model", true, "the model to train", kModelAllowed, "required without --plan or --init-from"},
      {"seq", true, "sequence length in tokens", kSeqLenForms,
       "required without --plan"},
      {"nproc", true, "local ranks to start (one per GPU)", "an integer 1..256",
       "none: this process is one rank started by torchrun or Slurm (RANK, WORLD_SIZE set)"},
      {"steps", true, "optimizer steps to train", "an integer 1..1000000", "5"},
      {"data", true, "token files read as one stream, in order", "paths separated by commas (*.u16.bin or *.u32.bin token ids)",
       "synthetic tokens"},
      {"seed", true, "the seed of the weights' init and the synthetic tokens", "an integer 0..2^62", "0"},
      {"save", true, "write checkpoints into this folder (two are kept)", "a folder", "no checkpoints"},
      {"save-every", true, "steps between checkpoints", "an integer 1..1000000 (needs --save)",
       "after the last step"},
      {"resume", true, "resume from the newest good checkpoint in this folder (its optimizer, schedule and data "
                       "position too)", "a folder written by --save", "start from step 0"},
      {"resume-or-init", true, "resume from this folder when it holds a checkpoint, else start fresh (seeded or "
                               "--init-from); --save defaults to it", "a folder: new, empty or written by --save",
       "none"},
      {"gpu", true, "the accelerator the run's predictions are priced on", "a GPU preset or a GPU TOML file",
       "the preset that matches the device"},
      {"json", false, "print one JSON object (losses, step time, peak memory, predictions)"},
      {"init-from", true, "start from a Hugging Face model folder's weights (its config.json is the model "
                          "when --model is absent)", "a folder with config.json and safetensors", "seeded init"},
      {"export-hf", true, "write the trained weights as a Hugging Face folder after the last step", "a folder",
       "none written"},
      {"eos-id", true, "the token id that ends a document in --data", "an integer 0..2^32",
       "documents are not marked"},
      {"export-dtype", true, "the dtype of the weights --export-hf writes", "fp32, bf16 (needs --export-hf)", "fp32"},
      {"export-trained-length", false, "write the trained --seq into the export's max_position_embeddings when it "
                                       "is longer (needs --export-hf)"},
      {"shuffle", false, "read --data's sequences in a seeded random order (--seed) instead of in file order"},
      {"weight-decay-all", false, "decay every parameter (default: not biases and norm weights, as the Hugging Face "
                                  "Trainer and ArcticTraining group them)"},
      {"log", true, "write one JSON line per step (flushed) and a summary line", "a .jsonl path", "none written"},
      {"eval-data", true, "held-out token files for the evaluation loss", "paths separated by commas", "no evaluation"},
      {"eval-every", true, "steps between evaluations (each over every sequence of --eval-data)",
       "an integer 1..1000000 (needs --eval-data)", "after the last step"}};
  for (const auto& k : engine_knob_flag_specs()) specs.push_back(k);
  for (const auto& k : optimizer_flag_specs()) specs.push_back(k);
  return specs;
}

namespace {

Result<PlanSpec> plan_from_flags(const Args& args) {
  PlanSpec plan;
  plan.knobs = engine_default_knobs();
  // --init-from DIR alone names the model too: DIR/config.json (check_inputs compares the two
  // when both are given).
  const std::string hf_config = args.has("init-from") ? *args.get("init-from") + "/config.json" : "";
  const std::string model = args.get("model").value_or(hf_config);
  if (model.empty()) SPPLAN_RETURN_IF_ERROR(args.require("model", "a model preset or file, --init-from DIR, or --plan FILE.toml").status());
  SPPLAN_ASSIGN_OR_RETURN(const std::string seq, args.require("seq", "a sequence length such as 4096 or 16k"));
  SPPLAN_ASSIGN_OR_RETURN(plan.model, load_model(model, args.has("model") ? "--model" : "--init-from"));
  SPPLAN_ASSIGN_OR_RETURN(plan.seq_len, parse_seq_len("--seq", seq));
  return plan;
}

Result<PlanSpec> plan_from_file(const Args& args, const std::string& path) {
  for (const char* flag : {"model", "seq"}) {
    if (args.has(flag)) {
      return Status::invalid(std::string("--") + flag + ": not allowed with --plan (the plan file " + path +
                             " names the model and seq_len)");
    }
  }
  return load_plan(path);
}

Result<uint64_t> parse_seed(const std::string& text) {
  SPPLAN_ASSIGN_OR_RETURN(const int64_t seed, parse_int("--seed", text, 0, int64_t{1} << 62));
  return static_cast<uint64_t>(seed);
}

// --weight-decay-all (AdamW's betas and eps are optimizer flags: OptimizerSpec).
Status read_decay_flag(const Args& args, RunOptions* o) {
  o->weight_decay_all = args.has("weight-decay-all");
  if (o->weight_decay_all) o->settings_given["weight_decay_all"] = "--weight-decay-all";
  return Status::ok();
}

// --log, --eval-data, --eval-every, --export-dtype, --shuffle.
Status read_watch_flags(const Args& args, RunOptions* o) {
  o->log_path = args.get("log").value_or("");
  if (auto v = args.get("eval-data")) o->eval_paths = split(*v, ",");
  if (auto v = args.get("eval-every")) {
    SPPLAN_ASSIGN_OR_RETURN(o->eval_every, parse_int("--eval-every", *v, 1, 1000000));
    if (o->eval_paths.empty()) {
      return Status::invalid("--eval-every: value " + *v + " needs --eval-data FILE (allowed: with --eval-data)");
    }
  }
  if (auto v = args.get("export-dtype")) {
    if (*v != "fp32" && *v != "bf16") {
      return Status::invalid("--export-dtype: value \"" + *v + "\" is not allowed (allowed: fp32, bf16)");
    }
    if (!args.has("export-hf")) return Status::invalid("--export-dtype: value " + *v + " needs --export-hf DIR (allowed: with --export-hf)");
    o->export_bf16 = *v == "bf16";
  }
  o->export_trained_length = args.has("export-trained-length");
  if (o->export_trained_length && !args.has("export-hf")) {
    return Status::invalid("--export-trained-length: needs --export-hf DIR (allowed: with --export-hf)");
  }
  o->shuffle = args.has("shuffle");
  if (o->shuffle && o->data_paths.empty()) {
    return Status::invalid("--shuffle: needs --data FILE (synthetic tokens have no order to shuffle; allowed: with --data)");
  }
  for (const char* flag : {"log", "eval-data"}) {
    if (args.has(flag) && args.get(flag)->empty()) {
      return Status::invalid(std::string("--") + flag + ": empty value (allowed: a path)");
    }
  }
  return read_decay_flag(args, o);
}

// --resume-or-init DIR: a resume when DIR holds a checkpoint, a fresh start when it is new or
// empty; anything else in it is refused rather than guessed at.
Status read_resume_or_init(const Args& args, RunOptions* o) {
  const auto dir = args.get("resume-or-init");
  if (!dir) return Status::ok();
  if (args.has("resume")) {
    return Status::invalid("--resume-or-init: not allowed with --resume (allowed: one of them)");
  }
  o->resume_or_init = true;
  o->resume_or_init_dir = *dir;
  if (o->save_dir.empty()) o->save_dir = *dir;
  SPPLAN_ASSIGN_OR_RETURN(const bool holds, holds_checkpoint(*dir, "--resume-or-init"));
  if (holds) o->resume_dir = *dir;  // the checkpoint holds the weights: --init-from is not read
  return Status::ok();
}

Status read_run_flags(const Args& args, RunOptions* o) {
  if (auto v = args.get("nproc")) {
    SPPLAN_ASSIGN_OR_RETURN(o->nproc, parse_int("--nproc", *v, 1, 256));
  }
  if (auto v = args.get("steps")) {
    SPPLAN_ASSIGN_OR_RETURN(o->steps, parse_int("--steps", *v, 1, 1000000));
    o->steps_given = true;
  }
  if (auto v = args.get("seed")) {
    SPPLAN_ASSIGN_OR_RETURN(o->seed, parse_seed(*v));
  }
  if (auto v = args.get("save-every")) {
    SPPLAN_ASSIGN_OR_RETURN(o->save_every, parse_int("--save-every", *v, 1, 1000000));
  }
  if (auto v = args.get("gpu")) {
    SPPLAN_ASSIGN_OR_RETURN(o->gpu, load_gpu(*v, "--gpu"));
  }
  if (auto v = args.get("plan")) o->config_inputs.push_back({"--plan", *v, PathRole::kFile});
  for (const char* flag : {"model", "gpu"}) {  // a preset name is no path; a file or folder is
    const auto v = args.get(flag);
    const PathKind kind = v ? look_at(*v).kind : PathKind::kMissing;
    if (kind == PathKind::kFile || kind == PathKind::kDirectory) {
      o->config_inputs.push_back({std::string("--") + flag, *v, kind == PathKind::kFile ? PathRole::kFile : PathRole::kFolder});
    }
  }
  if (auto v = args.get("data")) o->data_paths = split(*v, ",");
  if (auto v = args.get("eos-id")) {
    SPPLAN_ASSIGN_OR_RETURN(o->eos_id, parse_int("--eos-id", *v, 0, int64_t{1} << 32));  // vocab: data.cpp
  }
  o->plan.packed_documents = args.has("eos-id");  // positions and attention per document: priced
  // A plan made for a corpus keeps its documents ([documents]), but this run trains on --data (or
  // random tokens, one document a sequence): its prediction is of what it runs, not of the corpus.
  o->plan.documents = {};
  o->save_dir = args.get("save").value_or("");
  o->resume_dir = args.get("resume").value_or("");
  o->init_from = args.get("init-from").value_or("");
  o->export_hf = args.get("export-hf").value_or("");
  o->model_from_flag = args.has("model");
  o->json = args.has("json");
  SPPLAN_RETURN_IF_ERROR(read_resume_or_init(args, o));  // may name --save
  if (o->save_every > 0 && o->save_dir.empty()) {
    return Status::invalid("--save-every: value " + std::to_string(o->save_every) + " needs --save DIR (allowed: with --save)");
  }
  if (!o->init_from.empty() && !o->resume_dir.empty()) {
    return Status::invalid("--init-from: not allowed with --resume (the checkpoint holds the weights; allowed: one of "
                           "them, or --resume-or-init DIR with --init-from)");
  }
  for (const char* flag : {"data", "save", "resume", "init-from", "export-hf", "resume-or-init"}) {
    if (args.has(flag) && args.get(flag)->empty()) {
      return Status::invalid(std::string("--") + flag + ": empty value (allowed: a path)");
    }
  }
  for (const std::string& path : o->data_paths) {
    if (path.empty()) {
      return Status::invalid("--data: value \"" + *args.get("data") + "\" has an empty path (allowed: paths separated by commas)");
    }
  }
  if (!args.positional().empty()) {
    return Status::invalid("run: unexpected argument \"" + args.positional().front() + "\" (allowed: flags only)");
  }
  return Status::ok();
}

// The speed switches a GPU measurement sets in the environment (fused_kernels.hpp, attention.hpp):
// a typo must not silently measure the default.
Status check_speed_environment() {
  const struct {
    const char* variable;
    std::vector<std::string> allowed;
  } switches[] = {{"SPPLAN_ENGINE_FUSED_KERNELS", {"auto", "aten"}},
                  {"SPPLAN_ENGINE_SDPA_BACKEND", {"cudnn", "flash", "libtorch"}},
                  {"SPPLAN_ENGINE_KERNEL_CLOCK", {"0", "1", "cpu"}}};
  for (const auto& sw : switches) {
    const char* value = std::getenv(sw.variable);
    if (value == nullptr || *value == 0) continue;
    if (std::find(sw.allowed.begin(), sw.allowed.end(), value) != sw.allowed.end()) continue;
    std::string allowed;
    for (const std::string& a : sw.allowed) allowed += (allowed.empty() ? "" : ", ") + a;
    return Status::invalid(std::string(sw.variable) + ": value \"" + value + "\" is not allowed (allowed: " + allowed + ")");
  }
  return Status::ok();
}

}  // namespace

Result<RunOptions> parse_run_options(int argc, const char* const* argv, int first) {
  SPPLAN_ASSIGN_OR_RETURN(const Args args, Args::parse(argc, argv, first, run_flag_specs()));
  SPPLAN_RETURN_IF_ERROR(check_speed_environment());
  RunOptions o;
  if (auto path = args.get("plan")) {
    o.plan_path = *path;
    SPPLAN_ASSIGN_OR_RETURN(o.plan, plan_from_file(args, *path));
  } else {
    SPPLAN_ASSIGN_OR_RETURN(o.plan, plan_from_flags(args));
    if (!args.has("sp")) return Status::invalid("--sp: missing (required: the Ulysses degree P, e.g. --sp 2)");
  }
  SPPLAN_RETURN_IF_ERROR(apply_knob_flags(args, &o.plan.knobs));
  for (const auto& spec : knob_flag_specs()) {
    if (args.has(spec.name)) o.knob_flags_given.push_back(spec.name);
  }
  if (args.has("prefetch-bucket")) {
    return Status::invalid("--prefetch-bucket: not implemented yet in the engine (its ZeRO-3 gathers each layer "
                           "when it runs, without prefetch; allowed now: leave it out)");
  }
  SPPLAN_RETURN_IF_ERROR(read_run_flags(args, &o));
  SPPLAN_RETURN_IF_ERROR(read_watch_flags(args, &o));
  SPPLAN_RETURN_IF_ERROR(apply_optimizer_flags(args, &o.plan.optimizer));
  for (const std::string& key : optimizer_keys()) {
    const std::vector<std::string>& in_file = o.plan.optimizer_keys_in_file;
    if (args.has(optimizer_flag(key).substr(2))) {
      o.settings_given[key] = optimizer_flag(key);
    } else if (std::find(in_file.begin(), in_file.end(), key) != in_file.end()) {
      o.settings_given[key] = o.plan_path + ": key \"optimizer." + key + "\"";
    }
  }
  // --train-steps sets the warm-up to its default unless --warmup-steps is given: that is given too.
  if (args.has("train-steps") && !o.given("warmup_steps")) o.settings_given["warmup_steps"] = "--train-steps";
  // A plan that knows its length runs it unless --steps says how far to go this time.
  if (!args.has("steps") && o.plan.optimizer.train_steps > 0) o.steps = o.plan.optimizer.train_steps;
  o.schedule_steps = o.plan.optimizer.train_steps > 0 ? o.plan.optimizer.train_steps : o.steps;
  const auto where = [&](const std::string& key) {
    const std::string flag = optimizer_flag(key);
    return o.plan_path.empty() || args.has(flag.substr(2)) ? flag : o.plan_path + ": key \"optimizer." + key + "\"";
  };
  SPPLAN_RETURN_IF_ERROR(check_optimizer(o.plan.optimizer, where));
  // A warm-up longer than the schedule never reaches the peak rate: the schedule the user asked for
  // does not happen. With --train-steps the horizon is that (check_optimizer compares them; a run of
  // fewer --steps is a try of its first steps); else --steps, checked only when given (a resume
  // takes the checkpoint's horizon, a convert-only --resume trains no step).
  if (o.plan.optimizer.train_steps == 0 && o.steps_given && o.resume_dir.empty() &&
      o.plan.optimizer.warmup_steps > o.steps) {
    return Status::invalid(where("warmup_steps") + ": value " + std::to_string(o.plan.optimizer.warmup_steps) +
                           " is more than --steps " + std::to_string(o.steps) + " (allowed: 0 to " +
                           std::to_string(o.steps) + ", or --train-steps for a longer schedule)");
  }
  return o;
}


std::string RunOptions::where(const std::string& key) const {
  const std::string flag = flag_where(key);  // "--zero" for "zero_stage"
  const bool from_flag = std::find(knob_flags_given.begin(), knob_flags_given.end(), flag.substr(2)) != knob_flags_given.end();
  if (plan_path.empty() || from_flag) return flag;
  if (key == "seq_len") return plan_path + ": key \"seq_len\"";
  return plan_path + ": key \"knobs." + key + "\"";
}

namespace {

// "not implemented yet" for one knob value; `allowed` lists what the engine runs today.
Status not_yet(const RunOptions& o, const std::string& key, const std::string& value, const std::string& allowed) {
  return Status::invalid(o.where(key) + ": value " + value + " is not implemented yet in the engine (allowed now: " +
                         allowed + ")");
}

// `"name"`; built with += because GCC 12 warns (-Wrestrict, a false positive) on "\"" + string.
std::string quoted(const std::string& name) {
  std::string q(1, '"');
  q += name;
  q += '"';
  return q;
}

// The engine's host tier is RAM (engine/parallel/offload.hpp); it has no NVMe tier. Checked before the
// plan rules, which would ask the (unnamed) engine device for NVMe drives.
Status check_no_nvme(const RunOptions& o) {
  const Knobs& k = o.plan.knobs;
  if (k.offload_optimizer == OffloadDevice::kNvme) return not_yet(o, "offload_optimizer", "\"nvme\"", "none, cpu");
  if (k.offload_params == OffloadDevice::kNvme) return not_yet(o, "offload_params", "\"nvme\"", "none, cpu");
  return Status::ok();
}

// Ring attention (parallel/ring_attention.hpp) passes K/V around the ring (packed documents too:
// each block masked per document).
Status check_ring(const RunOptions& o) {
  const Knobs& k = o.plan.knobs;
  if (k.cp == 1) return Status::ok();
  if (k.cp_comm != CpComm::kRing) {
    return not_yet(o, "cp_comm", quoted(to_string(k.cp_comm)), "ring");
  }
  return Status::ok();
}

}  // namespace

Status check_run_options(RunOptions* o, int64_t world) {
  // A plan is priced for its GPU count: another world size is another data parallelism, another
  // global batch and memory than the plan says (`--nproc 3` on a 2-GPU plan once ran dp 3, unsaid).
  if (!o->plan_path.empty() && o->plan.cluster.num_gpus != world) {
    return Status::invalid("--nproc: value " + std::to_string(world) + " differs from " + o->plan_path +
                           ": key \"cluster.num_gpus\" " + std::to_string(o->plan.cluster.num_gpus) +
                           " (allowed: " + std::to_string(o->plan.cluster.num_gpus) +
                           ", or a plan made for " + std::to_string(world) + " GPUs: spplan plan --gpus " +
                           std::to_string(world) + ")");
  }
  o->plan.cluster.num_gpus = world;
  const int64_t sp = o->plan.knobs.sp;
  if (sp > world || world % sp != 0) {
    return Status::invalid(o->where("sp") + ": value " + std::to_string(sp) + " does not divide the " +
                           std::to_string(world) + " ranks (--nproc or WORLD_SIZE) (allowed sp: " +
                           join_ints(valid_sp_degrees(o->plan.model, world)) + ")");
  }
  SPPLAN_RETURN_IF_ERROR(check_ring(*o));
  SPPLAN_RETURN_IF_ERROR(check_no_nvme(*o));
  // The plan's rules as the engine runs it: its own trainer stack, whose rules (check_trainer_runs)
  // are what the engine does not run (a plan made for ArcticTraining keeps its knobs, and the
  // engine, not ArcticTraining, runs its ring when it has one).
  PlanSpec as_run = o->plan;
  as_run.stack = trainer_stack("engine");
  return check_plan(as_run, [o](const std::string& key) { return o->where(key); });
}

}  // namespace spplan::engine
