// Axolotl's YAML (axolotl 0.19.0, utils/schemas/config.py AxolotlInputConfig). Its ring is
// context_parallel_size over packed rows with ring-flash-attn's llama3 all-gather (ring_attn_func
// varlen_llama3) gathering heads_k_stride key-value heads per call, the record's
// allgather_kv_heads_per_call; DeepSpeed comes as the deepspeed export's config inline (its
// `deepspeed` key takes a path or a mapping). What the format cannot express is in
// configs/trainers/axolotl.toml.
#include "planner/core/parse.hpp"
#include "planner/costmodel/memory.hpp"
#include "planner/export/export_internal.hpp"

namespace spplan::export_internal {
namespace {

using Json = nlohmann::ordered_json;

std::string launch_comment(const PlanSpec& plan) {
  const int64_t nodes = plan.cluster.num_nodes(), per_node = plan.cluster.num_gpus / nodes;
  std::string c = "# Launch: axolotl train THIS.yaml --launcher torchrun -- --nproc_per_node " + std::to_string(per_node);
  if (nodes > 1) {
    c += " --nnodes " + std::to_string(nodes) + " --node_rank NODE_RANK --rdzv_backend c10d --rdzv_endpoint " +
         main_process_ip_placeholder() + ":" + std::to_string(rdzv_port()) + "\n#   (on each node; NODE_RANK 0, 1, ...)";
  }
  return c + "\n";
}

// The ring: contiguous shards of one packed row, the llama3 all-gather (the record's only variant).
void ring_keys(const PlanSpec& plan, Json* j) {
  if (plan.knobs.cp == 1) return;
  (*j)["context_parallel_size"] = plan.knobs.cp;
  (*j)["ring_attn_func"] = "varlen_llama3";
  (*j)["heads_k_stride"] = plan.stack.allgather_kv_heads_per_call;
}

// The tiled loss is Liger's fused linear cross-entropy with Liger's RoPE, RMSNorm and SwiGLU (what
// the record's fused_layer_kernels_with_tiled_loss prices), through Axolotl's LigerPlugin.
void tiled_keys(const PlanSpec& plan, Json* j) {
  const Knobs& k = plan.knobs;
  if (k.tiled_mlp) {
    (*j)["tiled_mlp"] = true;
    // Axolotl's own count is ceil(s / 32768) (monkeypatch/tiled_mlp/patch.py); the plan is priced
    // with DeepSpeed's ceil(s / h), so the count is written.
    (*j)["tiled_mlp_num_shards"] = costmodel::tiled_mlp_shards(plan);
    // The model's own MLP in each shard (Liger's SwiGLU with the tiled loss: the record's
    // tiled_mlp_fused_swiglu), not Axolotl's torch.compiled generic one; its Liger validator
    // wants the key written whenever liger_glu_activation is (integrations/liger/args.py).
    (*j)["tiled_mlp_use_original_mlp"] = true;
  }
  if (k.tiled_loss) {
    (*j)["plugins"] = Json::array({"axolotl.integrations.liger.LigerPlugin"});
    for (const char* key : {"liger_rope", "liger_rms_norm", "liger_glu_activation", "liger_fused_linear_cross_entropy"}) {
      (*j)[key] = true;
    }
  }
}

// The plan with the warm-up Axolotl runs: it turns a 1-step warm-up into 2 (core/builders/base.py
// _configure_warmup_and_logging), so the DeepSpeed scheduler must say 2 as well or transformers
// refuses the config (found by tests/scripts/export_check_axolotl.py). DeepSpeed's schedules hold a
// warm-up of 2 steps at least anyway (export.cpp exported_warmup_steps): nothing trains differently.
PlanSpec with_axolotl_warmup(PlanSpec plan) {
  if (hf_warmup_steps(plan.optimizer) == 1) plan.optimizer.warmup_steps = 2;
  return plan;
}

// The Trainer's optimizer settings, equal to the inline DeepSpeed config's (transformers refuses a
// DeepSpeed value that differs from its argument: HfTrainerDeepSpeedConfig).
void optimizer_keys(const PlanSpec& plan, Json* j) {
  const OptimizerSpec& o = plan.optimizer;
  (*j)["learning_rate"] = o.lr;
  (*j)["adam_beta1"] = o.adam_beta1;
  (*j)["adam_beta2"] = o.adam_beta2;
  (*j)["adam_epsilon"] = o.adam_eps;
  (*j)["weight_decay"] = o.weight_decay;
  (*j)["lr_scheduler"] = hf_lr_scheduler_name(o);
  (*j)["warmup_steps"] = hf_warmup_steps(o);
  (*j)["max_grad_norm"] = o.grad_clip;
  if (o.train_steps > 0) (*j)["max_steps"] = o.train_steps;
}

}  // namespace

std::string axolotl_yaml(const PlanSpec& priced) {
  const PlanSpec plan = with_axolotl_warmup(priced);
  const Knobs& k = plan.knobs;
  Json j;
  j["base_model"] = plan.model.name;
  j["datasets"] = Json::array({Json{{"path", "HuggingFaceH4/ultrachat_200k"}, {"type", "chat_template"}, {"split", "train_sft"}}});
  j["output_dir"] = "./outputs/spplan";
  j["sequence_len"] = plan.seq_len;
  j["sample_packing"] = true;  // rows of sequence_len tokens, as priced; the llama3 ring needs them
  j["micro_batch_size"] = k.micro_batch;
  j["gradient_accumulation_steps"] = k.grad_accum_steps;
  ring_keys(plan, &j);
  j["attn_implementation"] = attn_implementation_name(plan);
  j["bf16"] = k.precision == Precision::kBf16;
  j["gradient_checkpointing"] = k.act_ckpt == ActCkpt::kFull;
  tiled_keys(plan, &j);
  // A multimodal model's vision tower and projector, frozen as priced (axolotl/utils/freeze.py
  // freeze_mm_modules: vision_tower and multi_modal_projector parameters set requires_grad False).
  if (plan.model.has_encoders()) j["freeze_mm_modules"] = plan.stack.freezes_encoders;
  optimizer_keys(plan, &j);
  j["deepspeed"] = deepspeed_config(plan);

  std::string head = summary_text(plan, ExportFormat::kAxolotl);
  head += "# Placeholders: base_model (the model's folder or Hub id; the plan was priced for " +
          printable(plan.model.name) + "), datasets.\n";
  if (k.offload_optimizer == OffloadDevice::kNvme || k.offload_params == OffloadDevice::kNvme) {
    head += "# Placeholder: deepspeed's nvme_path: put a local NVMe mount of every node.\n";
  }
  head += launch_comment(plan);
  return yaml_text(head, j);
}

}  // namespace spplan::export_internal
