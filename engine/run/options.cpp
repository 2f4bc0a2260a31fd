#include "engine/run/options.hpp"

#include <cstdlib>

#include <algorithm>

#include "planner/config/knob_flags.hpp"
#include "planner/config/loaders.hpp"
#include "planner/config/optimizer_spec.hpp"
#include "planner/config/plan_rules.hpp"
#include "planner/core/args.hpp"
#include "planner/core/parse.hpp"

namespace spplan::engine {
namespace {

std::vector<FlagSpec> run_flag_specs() {
  std::vector<FlagSpec> specs{{"plan"},  {"model"}, {"seq"},  {"nproc"},      {"steps"},  {"data"},
                              {"seed"},  {"save"},  {"save-every"}, {"resume"}, {"gpu"}, {"json", false},
                              {"init-from"}, {"export-hf"}, {"eos-id"}};  // hf_weights.hpp; data.hpp
  for (const auto& k : knob_flag_specs()) specs.push_back(k);
  for (const auto& k : optimizer_flag_specs()) specs.push_back(k);
  return specs;
}

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

// "a,b,c" -> {"a", "b", "c"}; empty items are kept (and refused by the caller).
std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  size_t start = 0;
  for (size_t comma = text.find(','); comma != std::string::npos; comma = text.find(',', start)) {
    items.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  items.push_back(text.substr(start));
  return items;
}

Result<uint64_t> parse_seed(const std::string& text) {
  SPPLAN_ASSIGN_OR_RETURN(const int64_t seed, parse_int("--seed", text, 0, int64_t{1} << 62));
  return static_cast<uint64_t>(seed);
}

Status read_run_flags(const Args& args, RunOptions* o) {
  if (auto v = args.get("nproc")) {
    SPPLAN_ASSIGN_OR_RETURN(o->nproc, parse_int("--nproc", *v, 1, 256));
  }
  if (auto v = args.get("steps")) {
    SPPLAN_ASSIGN_OR_RETURN(o->steps, parse_int("--steps", *v, 1, 1000000));
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
  if (auto v = args.get("data")) o->data_paths = split_list(*v);
  if (auto v = args.get("eos-id")) {
    SPPLAN_ASSIGN_OR_RETURN(o->eos_id, parse_int("--eos-id", *v, 0, int64_t{1} << 32));  // vocab: data.cpp
  }
  o->save_dir = args.get("save").value_or("");
  o->resume_dir = args.get("resume").value_or("");
  o->init_from = args.get("init-from").value_or("");
  o->export_hf = args.get("export-hf").value_or("");
  o->model_from_flag = args.has("model");
  o->json = args.has("json");
  if (o->save_every > 0 && o->save_dir.empty()) {
    return Status::invalid("--save-every: value " + std::to_string(o->save_every) + " needs --save DIR (allowed: with --save)");
  }
  if (!o->init_from.empty() && !o->resume_dir.empty()) {
    return Status::invalid("--init-from: not allowed with --resume (the checkpoint holds the weights; allowed: one of them)");
  }
  for (const char* flag : {"data", "save", "resume", "init-from", "export-hf"}) {
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
  SPPLAN_RETURN_IF_ERROR(apply_optimizer_flags(args, &o.plan.optimizer));
  SPPLAN_RETURN_IF_ERROR(check_optimizer(o.plan.optimizer, [&](const std::string& key) {
    const std::string flag = optimizer_flag(key);
    return o.plan_path.empty() || args.has(flag.substr(2)) ? flag : o.plan_path + ": key \"optimizer." + key + "\"";
  }));
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

Status check_implemented(const RunOptions& o) {
  const Knobs& k = o.plan.knobs;
  // ZeRO-3 gathers each layer inside its checkpointed-layer function, forward and recompute
  // (model.cpp); without checkpointing every gathered layer would stay alive until its backward.
  if (k.zero_stage == 3 && k.act_ckpt == ActCkpt::kNone) {
    return Status::invalid(o.where("act_ckpt") + ": value \"none\" is not implemented yet in the engine with "
                           "zero_stage 3 (allowed now: full, offload, or zero_stage 0, 1, 2)");
  }
  // With the parameter shards on the host, AdamW steps there too (the moments follow the shards).
  if (k.offload_params == OffloadDevice::kCpu && k.offload_optimizer != OffloadDevice::kCpu) {
    return Status::invalid(o.where("offload_params") + ": value \"cpu\" is not implemented yet in the engine with "
                           "offload_optimizer " + quoted(to_string(k.offload_optimizer)) +
                           " (allowed now: none, or cpu with offload_optimizer cpu)");
  }
  return Status::ok();
}

}  // namespace

Status check_run_options(RunOptions* o, int64_t world) {
  o->plan.cluster.num_gpus = world;
  const int64_t sp = o->plan.knobs.sp;
  if (sp > world || world % sp != 0) {
    return Status::invalid(o->where("sp") + ": value " + std::to_string(sp) + " does not divide the " +
                           std::to_string(world) + " ranks (--nproc or WORLD_SIZE) (allowed sp: " +
                           join_ints(valid_sp_degrees(o->plan.model, world)) + ")");
  }
  SPPLAN_RETURN_IF_ERROR(check_no_nvme(*o));
  SPPLAN_RETURN_IF_ERROR(check_plan(o->plan, [o](const std::string& key) { return o->where(key); }));
  return check_implemented(*o);
}

}  // namespace spplan::engine
