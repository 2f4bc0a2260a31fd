// TorchTitan's TOML job config (torchtitan 0.2.2, config/job_config.py). TorchTitan builds its own
// model from a named flavour: the record's [[models]] entry of the plan's model (the plan rules
// refuse a model it does not build). What the format cannot express is in
// configs/trainers/torchtitan.toml.
#include <sstream>

#include "planner/config/trainer_rules.hpp"
#include "planner/core/parse.hpp"
#include "planner/export/export_internal.hpp"

namespace spplan::export_internal {
namespace {

// Only the record's own names are quoted: no user text reaches the file.
std::string quoted(const std::string& s) { return "\"" + s + "\""; }

std::string schedule_lines(const OptimizerSpec& o) {
  std::ostringstream t;
  t << "\n[lr_scheduler]\nwarmup_steps = " << o.warmup_steps << "\n";
  if (o.lr_schedule == LrSchedule::kConstant) {
    t << "decay_ratio = 0.0               # no decay phase: the rate stays at lr after the warm-up\n";
  } else {
    t << "decay_type = " << quoted(to_string(o.lr_schedule)) << "\nmin_lr_factor = " << format_number(o.min_lr / o.lr)
      << "\n";
  }
  return t.str();
}

}  // namespace

std::string torchtitan_toml(const PlanSpec& plan) {
  const Knobs& k = plan.knobs;
  const OptimizerSpec& o = plan.optimizer;
  const ModelFlavor& f = *model_flavor(plan);
  const int64_t nodes = plan.cluster.num_nodes(), per_node = plan.cluster.num_gpus / nodes;
  std::ostringstream t;
  t << "# Launch (on each node): torchrun --nnodes " << nodes << " --nproc_per_node " << per_node
    << (nodes > 1 ? " --rdzv_backend c10d --rdzv_endpoint " + std::string(main_process_ip_placeholder()) + ":" +
                        std::to_string(rdzv_port())
                  : std::string())
    << " -m torchtitan.train --job.config_file THIS.toml\n"
    << "# Placeholders: model.hf_assets_path (the model's tokenizer) and training.dataset.\n"
    << "# Eager, bf16 linears: compile and Float8 stay off, as the plan was priced.\n"
    << "\n[job]\ndump_folder = \"./outputs\"\ndescription = " << quoted("spplan plan: " + f.name + " " + f.flavor) << "\n"
    << "\n[model]\nname = " << quoted(f.name) << "\nflavor = " << quoted(f.flavor) << "\nhf_assets_path = "
    << quoted("./assets/hf/" + f.name + "-" + f.flavor) << "\n"
    << "\n[optimizer]\nname = \"AdamW\"\nlr = " << format_number(o.lr) << "\nbeta1 = " << format_number(o.adam_beta1)
    << "\nbeta2 = " << format_number(o.adam_beta2) << "\neps = " << format_number(o.adam_eps)
    << "\nweight_decay = " << format_number(o.weight_decay) << "\n"
    << schedule_lines(o)
    << "\n[training]\nlocal_batch_size = " << k.micro_batch
    << "\nglobal_batch_size = " << k.micro_batch * k.grad_accum_steps * plan.dp()
    << "                # local x gradient accumulation x data-parallel degree\nseq_len = " << plan.seq_len
    // TorchTitan always clips (train.py): an infinite norm is no clipping, where 0 would zero the gradients.
    << "\nmax_norm = " << (o.grad_clip > 0 ? format_number(o.grad_clip) : std::string("inf")) << "\n";
  if (o.train_steps > 0) t << "steps = " << o.train_steps << "\n";
  t << "mixed_precision_param = " << quoted(k.precision == Precision::kBf16 ? "bfloat16" : "float32")
    << "\nmixed_precision_reduce = \"float32\"\nenable_cpu_offload = "
    << (k.offload_optimizer == OffloadDevice::kCpu ? "true" : "false") << "\ndataset = \"c4\"\n"
    << "\n[parallelism]\ndata_parallel_replicate_degree = 1\ndata_parallel_shard_degree = " << plan.dp()
    << "\nfsdp_reshard_after_forward = \"default\"\ntensor_parallel_degree = 1\npipeline_parallel_degree = 1"
    << "\ncontext_parallel_degree = " << k.cp << "\ncontext_parallel_rotate_method = \"allgather\"\n"
    << "\n[activation_checkpoint]\nmode = " << quoted(k.act_ckpt == ActCkpt::kFull ? "full" : "none") << "\n"
    << "\n[compile]\nenable = false\n";
  return summary_text(plan, ExportFormat::kTorchtitan) + t.str();
}

}  // namespace spplan::export_internal
