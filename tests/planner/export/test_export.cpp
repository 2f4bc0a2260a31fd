// export: the DeepSpeed JSON parses and carries the plan's numbers; the YAMLs hold the expected
// key lines; torchrun starts the plan's process counts; bad formats and plans are clear errors.
#include "planner/export/export.hpp"

#include <algorithm>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "planner/config/loaders.hpp"
#include "planner/config/trainer_rules.hpp"

namespace spplan {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

PlanSpec base_plan(int64_t num_gpus) {
  PlanSpec p;
  p.model = load_model("llama-3.1-8b").value();  // 32 heads, 8 KV heads
  p.cluster.gpu = load_gpu("h100-80gb").value(); // 8 GPUs per node
  p.cluster.num_gpus = num_gpus;
  p.seq_len = 1 << 20;
  return p;
}

// One node, all ALST features: sp 8, ZeRO-3, optimizer on the CPU, checkpoints offloaded, tiling.
PlanSpec alst_plan() {
  PlanSpec p = base_plan(8);
  p.knobs.sp = 8;
  p.knobs.zero_stage = 3;
  p.knobs.offload_optimizer = OffloadDevice::kCpu;
  p.knobs.act_ckpt = ActCkpt::kOffload;
  p.knobs.tiled_mlp = p.knobs.tiled_loss = true;
  return p;
}

// Two nodes, sp 4 x dp 4, ZeRO-2, no offload, fp32 all-to-all, micro batch 2 x 4 accumulation steps.
PlanSpec two_node_plan() {
  PlanSpec p = base_plan(16);
  p.seq_len = 131072;
  p.knobs.sp = 4;
  p.knobs.zero_stage = 2;
  p.knobs.act_ckpt = ActCkpt::kFull;
  p.knobs.micro_batch = 2;
  p.knobs.grad_accum_steps = 4;
  p.knobs.sp_comm_dtype = CommDtype::kFp32;
  p.knobs.reduce_bucket_elems = 2e8;
  return p;
}

// The plan on a trainer whose record lists the format (configs/trainers): kept where its own does;
// else ArcticTraining for its recipe, Megatron-LM for its script, TRL for its YAML, and for the Hugging Face Trainer's
// formats "hf", or "liger" when the plan tiles its loss (the Trainer's tiled loss is Liger's).
PlanSpec launched_by(PlanSpec plan, ExportFormat format) {
  const std::string name = to_string(format);
  const auto& formats = record_of(plan).formats;
  if (std::any_of(formats.begin(), formats.end(), [&](const FormatRecord& f) { return f.name == name; })) return plan;
  switch (format) {
    case ExportFormat::kArctic: plan.stack = trainer_stack("arctic"); break;
    case ExportFormat::kMegatron: plan.stack = trainer_stack("megatron"); break;
    case ExportFormat::kTorchtitan: plan.stack = trainer_stack("torchtitan"); break;
    case ExportFormat::kSwift: plan.stack = trainer_stack("usp"); break;
    case ExportFormat::kAxolotl: plan.stack = trainer_stack("axolotl"); break;
    case ExportFormat::kTrl: plan.stack = trainer_stack("trl"); break;
    default: plan.stack = trainer_stack(plan.knobs.tiled_loss ? "liger" : "hf");
  }
  return plan;
}

std::string exported(const PlanSpec& given, ExportFormat format) {
  const PlanSpec plan = launched_by(given, format);
  auto text = export_plan(plan, format);
  EXPECT_TRUE(text.ok()) << text.status().message();
  return text.ok() ? *text : std::string();
}

nlohmann::json deepspeed(const PlanSpec& plan) { return nlohmann::json::parse(exported(plan, ExportFormat::kDeepSpeed)); }

TEST(ExportDeepSpeed, AlstPlanOnOneNode) {
  const nlohmann::json j = deepspeed(alst_plan());
  EXPECT_TRUE(j["bf16"]["enabled"].get<bool>());
  EXPECT_EQ(j["sequence_parallel_size"], 8);
  EXPECT_EQ(j["seq_parallel_communication_data_type"], "bf16");
  EXPECT_EQ(j["train_micro_batch_size_per_gpu"], 1);
  EXPECT_EQ(j["gradient_accumulation_steps"], 1);
  // DeepSpeed derives train_batch_size (1 x 1 x dp 1); transformers would count sp as dp.
  EXPECT_FALSE(j.contains("train_batch_size"));
  const auto& z = j["zero_optimization"];
  EXPECT_EQ(z["stage"], 3);
  EXPECT_TRUE(z["overlap_comm"].get<bool>());
  EXPECT_EQ(z["reduce_bucket_size"], 500000000);
  EXPECT_EQ(z["stage3_prefetch_bucket_size"], 50000000);
  EXPECT_EQ(z["offload_optimizer"]["device"], "cpu");
  EXPECT_TRUE(z["offload_optimizer"]["pin_memory"].get<bool>());
  EXPECT_FALSE(z.contains("offload_param"));
  EXPECT_TRUE(j["activation_checkpointing"]["cpu_checkpointing"].get<bool>());
  EXPECT_EQ(j["optimizer"]["type"], "AdamW");
}

TEST(ExportDeepSpeed, TwoNodeZero2Plan) {
  const nlohmann::json j = deepspeed(two_node_plan());
  EXPECT_EQ(j["sequence_parallel_size"], 4);
  EXPECT_EQ(j["seq_parallel_communication_data_type"], "fp32");
  EXPECT_EQ(j["train_micro_batch_size_per_gpu"], 2);
  EXPECT_EQ(j["gradient_accumulation_steps"], 4);
  EXPECT_FALSE(j.contains("train_batch_size"));  // DeepSpeed: 2 x 4 x dp 4 = 32
  const auto& z = j["zero_optimization"];
  EXPECT_EQ(z["stage"], 2);
  EXPECT_FALSE(z["overlap_comm"].get<bool>());
  EXPECT_EQ(z["reduce_bucket_size"], 200000000);
  EXPECT_FALSE(z.contains("stage3_prefetch_bucket_size"));
  EXPECT_FALSE(z.contains("offload_optimizer"));
  EXPECT_FALSE(j["activation_checkpointing"]["cpu_checkpointing"].get<bool>());
}

TEST(ExportDeepSpeed, NvmeOffloadUsesPlaceholderPathAndNoCkptSectionWithoutCkpt) {
  PlanSpec p = alst_plan();
  p.knobs.offload_optimizer = p.knobs.offload_params = OffloadDevice::kNvme;
  p.knobs.act_ckpt = ActCkpt::kNone;
  const nlohmann::json j = deepspeed(p);
  EXPECT_EQ(j["zero_optimization"]["offload_param"]["device"], "nvme");
  EXPECT_EQ(j["zero_optimization"]["offload_param"]["nvme_path"], "/local_nvme");
  EXPECT_EQ(j["zero_optimization"]["offload_optimizer"]["nvme_path"], "/local_nvme");
  EXPECT_FALSE(j.contains("activation_checkpointing"));
}

TEST(ExportAccelerate, ConfigLinesMatchThePlan) {
  const std::string y = exported(two_node_plan(), ExportFormat::kAccelerate);
  for (const char* line : {"\ndistributed_type: DEEPSPEED\n", "\n  deepspeed_config_file: ds_config.json\n",
                           "\nnum_machines: 2\n", "\nnum_processes: 16\n", "\n  parallelism_config_sp_size: 4\n",
                           "\n  parallelism_config_dp_shard_size: 4\n", "\n  parallelism_config_sp_backend: deepspeed\n",
                           "\ncompute_environment: LOCAL_MACHINE\n"}) {
    EXPECT_THAT(y, HasSubstr(line));
  }
  EXPECT_THAT(y, Not(HasSubstr("mixed_precision:")));  // Accelerate rejects it next to a config file
}

TEST(ExportArctic, RecipeLinesMatchThePlan) {
  const std::string y = exported(alst_plan(), ExportFormat::kArctic);
  for (const char* line : {"\ntype: sft\n", "\nsequence_parallel_size: 8\n", "\nactivation_checkpoint_cpu_offload: true\n",
                           "\ntiled_mlp_compute: true\n", "\nmicro_batch_size: 1\n", "\ndeepspeed:\n  zero_optimization:\n    stage: 3\n",
                           "\n    offload_optimizer:\n      device: cpu\n", "\n  seq_parallel_communication_data_type: bf16\n",
                           "\n  type: cpu_adam\n  learning_rate: 0.001\n  weight_decay: 0.1\n", "\n  type: liger\n  name_or_path: llama-3.1-8b\n",
                           "\n  max_length: 1048576\n"}) {
    EXPECT_THAT(y, HasSubstr(line));
  }
  PlanSpec two = two_node_plan();
  two.knobs.micro_batch = 1;  // ArcticTraining packs samples: micro batch 1 only
  const std::string plain = exported(two, ExportFormat::kArctic);
  EXPECT_THAT(plain, HasSubstr("\nactivation_checkpoint_cpu_offload: false\n"));
  EXPECT_THAT(plain, Not(HasSubstr("liger")));
  EXPECT_THAT(plain, Not(HasSubstr("cpu_adam")));
}

// The ALST plan without the tiled MLP, which no Trainer argument applies, on the Trainer with
// Liger-Kernel (whose fused linear cross-entropy is the tiled loss): what the HF Trainer runs.
PlanSpec hf_alst_plan() {
  PlanSpec p = alst_plan();
  p.knobs.tiled_mlp = false;
  p.stack = trainer_stack("liger");
  return p;
}

TEST(ExportTorchrun, ProcessCountsPerNode) {
  const std::string one = exported(hf_alst_plan(), ExportFormat::kTorchrun);
  EXPECT_THAT(one, HasSubstr("\ntorchrun --nnodes 1 --nproc-per-node 8 --rdzv-backend c10d --rdzv-endpoint "
                             "\"${MASTER_ADDR}:${MASTER_PORT:-29500}\" train.py --deepspeed ds_config.json "
                             "--per_device_train_batch_size 1 --gradient_accumulation_steps 1 --learning_rate 0.001 "
                             "--adam_beta1 0.9 --adam_beta2 0.95 --adam_epsilon 1e-08 --weight_decay 0.1 "
                             "--lr_scheduler_type constant_with_warmup --warmup_steps 0 --max_grad_norm 0 --bf16 "
                             "--gradient_checkpointing --gradient_checkpointing_kwargs '{\"offload\": true}' "
                             "--use_liger_kernel \"$@\"\n"));
  // transformers turns Ulysses on only through Accelerate's ParallelismConfig, read from these under torchrun.
  EXPECT_THAT(one, HasSubstr("\nexport ACCELERATE_USE_PARALLELISM_CONFIG=true\n"));
  EXPECT_THAT(one, HasSubstr("\nexport PARALLELISM_CONFIG_SP_SIZE=8\n"));
  EXPECT_THAT(one, HasSubstr("\nexport PARALLELISM_CONFIG_SP_BACKEND=deepspeed\n"));
  EXPECT_THAT(one, HasSubstr("DeepSpeedCPUAdam"));
  const std::string two = exported(two_node_plan(), ExportFormat::kTorchrun);
  EXPECT_THAT(two, HasSubstr("torchrun --nnodes 2 --nproc-per-node 8 "));
  EXPECT_THAT(two, Not(HasSubstr("--use_liger_kernel")));
  PlanSpec small = base_plan(4);
  small.knobs.sp = 4;
  EXPECT_THAT(exported(small, ExportFormat::kTorchrun), HasSubstr("--nnodes 1 --nproc-per-node 4 "));
}

// The user's train.py loads the model: the export names the kernel the plan was priced with, and for
// gpt-oss that it is the one that trains the sinks.
TEST(ExportTorchrun, NamesTheAttentionKernelItIsPricedWith) {
  EXPECT_THAT(exported(two_node_plan(), ExportFormat::kTorchrun),
              HasSubstr("\n# train.py loads the model with attn_implementation=\"flash_attention_2\" (the kernel this plan "
                        "is priced with).\n"));
  PlanSpec p = base_plan(8);
  p.model = load_model("gpt-oss-20b").value();
  p.seq_len = 16384;
  p.knobs.zero_stage = 3;
  p.knobs.act_ckpt = ActCkpt::kFull;
  p.stack = trainer_stack("hf");
  settle_layout_attention(&p);
  for (ExportFormat format : {ExportFormat::kTorchrun, ExportFormat::kAccelerate}) {
    EXPECT_THAT(exported(p, format), HasSubstr("# train.py loads the model with attn_implementation=\"flex_attention\" (the "
                                               "kernel this plan is priced with; the one that trains its attention sinks).\n"));
  }
  // A mixture's load-balancing loss is the model config's: the export says which the plan priced.
  EXPECT_THAT(exported(p, ExportFormat::kTorchrun), HasSubstr("\n# ... and output_router_logits=False (no load-balancing "
                                                              "loss is priced;"));
  p.model.output_router_logits = true;
  EXPECT_THAT(exported(p, ExportFormat::kTorchrun),
              HasSubstr("\n# ... and output_router_logits=True, router_aux_loss_coef=0.9 (the load-balancing loss this plan "
                        "prices: every layer's router logits kept to the loss).\n"));
  p.model = load_model("glm-4.5-air").value();  // it computes no load-balancing loss
  p.knobs.sp = 2;
  settle_layout_attention(&p);
  EXPECT_THAT(exported(p, ExportFormat::kTorchrun), Not(HasSubstr("output_router_logits")));
}

// A model AutoModelForCausalLM does not build (Mistral 3's multimodal config): every export that
// launches the user's train.py says which class loads it; a text model's says nothing of it.
TEST(ExportTorchrun, NamesTheClassAModelOnlyImageTextToTextBuilds) {
  PlanSpec p = base_plan(8);
  p.stack = trainer_stack("hf");
  p.knobs.sp = 8;
  settle_layout_attention(&p);
  EXPECT_THAT(exported(p, ExportFormat::kTorchrun), Not(HasSubstr("AutoModelForImageTextToText")));
  p.model.causal_lm_class = false;
  const std::string note = "# train.py loads it through AutoModelForImageTextToText: transformers maps this multimodal "
                           "config to no\n# causal-LM class, so AutoModelForCausalLM refuses it.\n";
  EXPECT_THAT(exported(p, ExportFormat::kTorchrun), HasSubstr(note));
  EXPECT_THAT(exported(p, ExportFormat::kAccelerate), HasSubstr(note));
  p.knobs.sp = 1;  // a ring through torch's context parallel on FSDP2
  p.knobs.cp = 8;
  settle_layout_attention(&p);
  EXPECT_THAT(exported(p, ExportFormat::kAccelerate), HasSubstr(note));
}

// Encoders priced frozen: the user's train.py freezes them (the Trainer optimizes every parameter
// that requires a gradient); priced trained, or a text model, nothing is said.
TEST(ExportTorchrun, SaysHowToFreezeTheEncodersAsPriced) {
  PlanSpec p = base_plan(8);
  p.stack = trainer_stack("hf");
  p.knobs.sp = 8;
  settle_layout_attention(&p);
  p.stack.freezes_encoders = true;
  EXPECT_THAT(exported(p, ExportFormat::kTorchrun), Not(HasSubstr("requires_grad_")));  // no encoders
  p.model.encoder_params = 4e8;
  const std::string note = "# train.py freezes the encoders before the Trainer builds its optimizer, as the plan was "
                           "priced (weights\n# only): model.model.vision_tower.requires_grad_(False), "
                           "model.model.multi_modal_projector.requires_grad_(False).\n";
  EXPECT_THAT(exported(p, ExportFormat::kTorchrun), HasSubstr(note));
  EXPECT_THAT(exported(p, ExportFormat::kAccelerate), HasSubstr(note));
  p.stack.freezes_encoders = false;
  EXPECT_THAT(exported(p, ExportFormat::kTorchrun), Not(HasSubstr("requires_grad_")));
}

// A plan priced for the engine exports the `spplan run` line that runs it, on one machine only.
TEST(ExportTorchrun, EnginePlansLaunchSpplanRun) {
  PlanSpec p = base_plan(4);
  p.knobs.sp = 4;
  p.stack = trainer_stack("engine");
  const std::string text = exported(p, ExportFormat::kTorchrun);
  // Without a file: the script asks for $PLAN; always for $STEPS; torchrun starts the ranks.
  EXPECT_THAT(text, HasSubstr("\nPLAN=\"${PLAN:?set PLAN to this plan's TOML file"));
  EXPECT_THAT(text, HasSubstr("\nSTEPS=\"${STEPS:?set STEPS to the optimizer steps to train"));
  EXPECT_THAT(text, HasSubstr("\ntorchrun --standalone --nnodes 1 --nproc-per-node 4 --no-python spplan run --plan \"$PLAN\" "
                              "--steps \"$STEPS\" --lr 0.001 --warmup-steps 0 "));
  EXPECT_THAT(text, HasSubstr(" \"$@\"\n"));
  const auto with_file = export_plan(p, ExportFormat::kTorchrun, "/plans/it's.toml");
  ASSERT_TRUE(with_file.ok());
  EXPECT_THAT(*with_file, HasSubstr("\nPLAN=${PLAN:-'/plans/it'\\''s.toml'}\n"));
  // Two nodes: each runs the same line and meets the first at its c10d rendezvous.
  PlanSpec two = two_node_plan();
  two.stack = trainer_stack("engine");
  const std::string multi = exported(two, ExportFormat::kTorchrun);
  EXPECT_THAT(multi, HasSubstr("\n: \"${MASTER_ADDR:?set MASTER_ADDR to the address of the first node}\"\n"));
  EXPECT_THAT(multi, HasSubstr("\ntorchrun --nnodes 2 --nproc-per-node 8 --rdzv-backend c10d --rdzv-endpoint "
                               "\"${MASTER_ADDR}:${MASTER_PORT:-29500}\" --no-python spplan run --plan \"$PLAN\" "));
  EXPECT_THAT(multi, HasSubstr("# Run this on each of the 2 nodes"));
}

// Names go into the summary comment; a newline in one (a config.json's folder name) would end the
// comment and make the rest of the name a command of the torchrun script.
TEST(ExportTorchrun, NamesWithNewlinesStayInsideTheComment) {
  PlanSpec p = hf_alst_plan();
  p.model.name = "x\ntouch /tmp/pwned #";
  // Megatron-LM cannot express this ALST plan's offloads and tiling: the same name in a plan it takes.
  PlanSpec megatron = p;
  megatron.knobs.offload_optimizer = OffloadDevice::kNone;
  megatron.knobs.act_ckpt = ActCkpt::kFull;
  megatron.knobs.tiled_mlp = megatron.knobs.tiled_loss = false;
  PlanSpec torchtitan = megatron;  // and TorchTitan and Axolotl, which have no Ulysses: data parallel
  torchtitan.knobs.sp = 1;
  torchtitan.knobs.zero_stage = 3;
  for (const std::string& name : export_format_names()) {
    const ExportFormat format = *parse_export_format(name);
    // ms-swift's stack runs Megatron's knob set (Ulysses 8 over Llama's 8 key-value heads) too.
    const bool no_offload = format == ExportFormat::kMegatron || format == ExportFormat::kSwift;
    const bool no_ulysses = format == ExportFormat::kTorchtitan || format == ExportFormat::kAxolotl;
    const PlanSpec& plan = no_offload ? megatron : no_ulysses ? torchtitan : p;
    const std::string text = exported(plan, format);
    EXPECT_THAT(text, Not(HasSubstr("\ntouch"))) << name;
  }
  EXPECT_THAT(exported(p, ExportFormat::kTorchrun), HasSubstr("# spplan export (torchrun): x\\x0atouch /tmp/pwned # on 8 x "));
}

// The plan's [optimizer] reaches every format: DeepSpeed's optimizer, scheduler and
// gradient_clipping, ArcticTraining's optimizer and scheduler, train.py's and the engine's flags.
// The plan's memory assumes the caching allocator's expandable segments (the H200 lease of 30 November measured
// what they give back at the limit): every script turns them on unless the user set the variable,
// and every config file, which cannot set it, says to launch with it.
TEST(ExportAllocator, EveryLaunchAsksForExpandableSegments) {
  PlanSpec p = base_plan(8);
  p.seq_len = 16384;
  p.knobs.zero_stage = 2;
  p.knobs.act_ckpt = ActCkpt::kFull;
  for (ExportFormat script : {ExportFormat::kTorchrun, ExportFormat::kMegatron, ExportFormat::kSwift}) {
    EXPECT_THAT(exported(p, script), HasSubstr("\nexport PYTORCH_CUDA_ALLOC_CONF=\"${PYTORCH_CUDA_ALLOC_CONF:-expandable_segments:True}\"\n"))
        << to_string(script);
  }
  for (ExportFormat config : {ExportFormat::kAccelerate, ExportFormat::kArctic, ExportFormat::kAxolotl, ExportFormat::kTorchtitan}) {
    PlanSpec q = p;
    if (config == ExportFormat::kTorchtitan) q.knobs.zero_stage = 3;  // FSDP2 is all it runs
    EXPECT_THAT(exported(q, config), HasSubstr("\n# Launch with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True: the memory"))
        << to_string(config);
  }
}

TEST(ExportOptimizer, EveryFormatCarriesThePlansSettings) {
  PlanSpec p = two_node_plan();
  p.optimizer.lr = 3e-4;
  p.optimizer.weight_decay = 0.01;
  p.optimizer.warmup_steps = 100;
  p.optimizer.lr_schedule = LrSchedule::kCosine;
  p.optimizer.min_lr = 3e-5;
  p.optimizer.grad_clip = 1.0;
  const auto j = nlohmann::json::parse(exported(p, ExportFormat::kDeepSpeed));
  EXPECT_DOUBLE_EQ(j["optimizer"]["params"]["lr"].get<double>(), 3e-4);
  EXPECT_DOUBLE_EQ(j["optimizer"]["params"]["weight_decay"].get<double>(), 0.01);
  EXPECT_DOUBLE_EQ(j["gradient_clipping"].get<double>(), 1.0);
  EXPECT_EQ(j["scheduler"]["type"], "WarmupCosineLR");
  EXPECT_EQ(j["scheduler"]["params"]["warmup_num_steps"], 100);
  EXPECT_EQ(j["scheduler"]["params"]["warmup_type"], "linear");
  EXPECT_DOUBLE_EQ(j["scheduler"]["params"]["cos_min_ratio"].get<double>(), 0.1);  // 3e-5 / 3e-4
  EXPECT_EQ(j["scheduler"]["params"]["total_num_steps"], "auto");

  p.optimizer.lr_schedule = LrSchedule::kLinear;
  const auto lin = nlohmann::json::parse(exported(p, ExportFormat::kDeepSpeed));
  EXPECT_EQ(lin["scheduler"]["type"], "WarmupDecayLR");
  EXPECT_DOUBLE_EQ(lin["scheduler"]["params"]["warmup_max_lr"].get<double>(), 3e-4);
  EXPECT_DOUBLE_EQ(lin["scheduler"]["params"]["warmup_min_lr"].get<double>(), 3e-5);
  p.optimizer.lr_schedule = LrSchedule::kConstant;
  EXPECT_EQ(nlohmann::json::parse(exported(p, ExportFormat::kDeepSpeed))["scheduler"]["type"], "WarmupLR");
  p.optimizer.warmup_steps = 0;
  EXPECT_FALSE(nlohmann::json::parse(exported(p, ExportFormat::kDeepSpeed)).contains("scheduler"));

  p.optimizer.lr_schedule = LrSchedule::kCosine;
  p.optimizer.warmup_steps = 100;
  p.knobs.micro_batch = 1;  // ArcticTraining packs samples: micro batch 1 only
  const std::string arctic = exported(p, ExportFormat::kArctic);
  EXPECT_THAT(arctic, HasSubstr("\n  learning_rate: 0.0003\n  weight_decay: 0.01\n"));
  EXPECT_THAT(arctic, HasSubstr("\nscheduler:\n  type: huggingface\n  name: cosine\n"));
  EXPECT_THAT(arctic, HasSubstr("\n  gradient_clipping: 1.0\n"));
  EXPECT_THAT(arctic, HasSubstr("# Warm-up: 100 steps"));
  const std::string sh = exported(p, ExportFormat::kTorchrun);
  EXPECT_THAT(sh, HasSubstr(" --learning_rate 0.0003 --adam_beta1 0.9 --adam_beta2 0.95 --adam_epsilon 1e-08 "
                            "--weight_decay 0.01 --lr_scheduler_type cosine --warmup_steps 100 --max_grad_norm 1"));
  EXPECT_THAT(sh, HasSubstr("spplan run --plan PLAN.toml --lr 0.0003 --warmup-steps 100 --lr-schedule cosine "
                            "--min-lr 3e-05 --weight-decay 0.01 --grad-clip 1 --adam-beta1 0.9 --adam-beta2 0.95 "
                            "--adam-eps 1e-08\n"));
}

// AdamW's betas and eps are the plan's (plan --adam-beta2 0.999 for a stack's
// own default), in every format that has them; ArcticTraining has no eps and refuses another.
TEST(ExportOptimizer, BetasAndEpsAreThePlans) {
  PlanSpec p = two_node_plan();
  p.knobs.micro_batch = 1;
  p.optimizer.adam_beta1 = 0.8;
  p.optimizer.adam_beta2 = 0.999;
  const auto j = nlohmann::json::parse(exported(p, ExportFormat::kDeepSpeed));
  EXPECT_DOUBLE_EQ(j["optimizer"]["params"]["betas"][0].get<double>(), 0.8);
  EXPECT_DOUBLE_EQ(j["optimizer"]["params"]["betas"][1].get<double>(), 0.999);
  EXPECT_THAT(exported(p, ExportFormat::kArctic), HasSubstr("\n  betas:\n    - 0.8\n    - 0.999\n"));
  const std::string sh = exported(p, ExportFormat::kTorchrun);
  EXPECT_THAT(sh, HasSubstr(" --adam_beta1 0.8 --adam_beta2 0.999 --adam_epsilon 1e-08 "));
  EXPECT_THAT(sh, HasSubstr(" --adam-beta1 0.8 --adam-beta2 0.999 --adam-eps 1e-08\n"));
  p.optimizer.adam_eps = 1e-6;
  EXPECT_THAT(nlohmann::json::parse(exported(p, ExportFormat::kDeepSpeed)).dump(), HasSubstr("\"eps\":1e-06"));
  const auto arctic = export_plan(p, ExportFormat::kArctic);
  ASSERT_FALSE(arctic.ok());
  EXPECT_EQ(arctic.status().message(),
            "key \"optimizer.adam_eps\": value 1e-06 cannot be expressed for ArcticTraining (its optimizer config has no "
            "eps: FusedAdam runs 1e-08; allowed: 1e-08, or another format)");
}

// With the run's length known (--train-steps), every export carries numbers its target takes as
// they are: plain deepspeed reads total_num_steps (no "auto"), transformers gets --max_steps (it
// refuses a written total that differs), ArcticTraining train_iters and the warm-up as a ratio.
TEST(ExportOptimizer, TrainStepsReplaceAutoWithTheRunsLength) {
  PlanSpec p = two_node_plan();
  p.knobs.micro_batch = 1;
  p.optimizer = fine_tuning_recipe();
  p.optimizer.train_steps = 1000;
  p.optimizer.warmup_steps = default_warmup_steps(1000);
  const auto j = nlohmann::json::parse(exported(p, ExportFormat::kDeepSpeed));
  EXPECT_EQ(j["scheduler"]["type"], "WarmupDecayLR");
  EXPECT_EQ(j["scheduler"]["params"]["total_num_steps"], 1000);
  EXPECT_EQ(j["scheduler"]["params"]["warmup_num_steps"], 100);
  EXPECT_DOUBLE_EQ(j["optimizer"]["params"]["lr"].get<double>(), 1e-5);
  EXPECT_DOUBLE_EQ(j["gradient_clipping"].get<double>(), 1.0);
  EXPECT_EQ(j.dump().find("auto"), std::string::npos) << j.dump();
  const std::string arctic = exported(p, ExportFormat::kArctic);
  EXPECT_THAT(arctic, HasSubstr("\n  warmup_ratio: 0.1\n"));
  EXPECT_THAT(arctic, HasSubstr("\ntrain_iters: 1000\n"));
  EXPECT_THAT(arctic, Not(HasSubstr("# Warm-up:")));
  const std::string sh = exported(p, ExportFormat::kTorchrun);
  EXPECT_THAT(sh, HasSubstr("--lr_scheduler_type linear --warmup_steps 100 --max_grad_norm 1 --max_steps 1000"));
  EXPECT_THAT(sh, HasSubstr("--grad-clip 1 --train-steps 1000 --adam-beta1 0.9 --adam-beta2 0.95 --adam-eps 1e-08\n"));
}

TEST(ExportFormatNames, RoundTripAndUnknownIsAClearError) {
  for (const std::string& name : export_format_names()) {
    auto f = parse_export_format(name);
    ASSERT_TRUE(f.ok());
    EXPECT_EQ(to_string(*f), name);
  }
  auto bad = parse_export_format("nemo", "--format");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Status::Code::kInvalidInput);
  EXPECT_EQ(bad.status().message(),
            "--format: value \"nemo\" is not a known format (allowed: deepspeed, accelerate, arctic, torchrun, megatron, "
            "torchtitan, swift, axolotl, trl)");
}

TEST(ExportPlan, BadPlansAreErrorsNamingTheKey) {
  PlanSpec p = base_plan(8);
  p.knobs.sp = 3;  // does not divide 32 heads nor 8 GPUs
  auto r = export_plan(p, ExportFormat::kDeepSpeed);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("key \"knobs.sp\""));
  PlanSpec uneven = base_plan(17);  // 3 nodes of 8 cannot hold 17 evenly
  uneven.knobs.sp = 1;
  auto u = export_plan(uneven, ExportFormat::kTorchrun);
  ASSERT_FALSE(u.ok());
  EXPECT_THAT(u.status().message(), HasSubstr("key \"cluster.num_gpus\": value 17"));
}

TEST(ExportPlan, RoundTripThroughAPlanFile) {
  const std::string path = ::testing::TempDir() + "export_plan.toml";
  ASSERT_TRUE(write_file_atomically(path, plan_to_toml(two_node_plan())).is_ok());
  auto loaded = load_plan(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ(exported(*loaded, ExportFormat::kDeepSpeed), exported(two_node_plan(), ExportFormat::kDeepSpeed));
}

// transformers refuses a DeepSpeed value that differs from its TrainingArguments: the HF Trainer
// command lines pass the batch sizes, betas, eps and bf16 the JSON fixes (or the job stops at start-up).
TEST(ExportHfTrainer, CommandLinesMatchTheDeepSpeedConfig) {
  PlanSpec p = two_node_plan();  // micro batch 2 x 4 accumulation steps
  const auto ds = nlohmann::json::parse(exported(p, ExportFormat::kDeepSpeed));
  const std::string sh = exported(p, ExportFormat::kTorchrun);
  EXPECT_THAT(sh, HasSubstr(" --per_device_train_batch_size " + ds["train_micro_batch_size_per_gpu"].dump() +
                            " --gradient_accumulation_steps " + ds["gradient_accumulation_steps"].dump() + " "));
  EXPECT_THAT(sh, HasSubstr(" --adam_beta1 0.9 --adam_beta2 0.95 --adam_epsilon 1e-08 "));
  EXPECT_THAT(sh, HasSubstr(" --bf16"));
  EXPECT_THAT(exported(p, ExportFormat::kAccelerate), HasSubstr("#  --per_device_train_batch_size 2 "));
  p.knobs.precision = Precision::kFp32;
  p.stack.attention = AttentionKernel::kSdpa;
  EXPECT_THAT(exported(p, ExportFormat::kTorchrun), Not(HasSubstr("--bf16")));
  EXPECT_EQ(nlohmann::json::parse(exported(p, ExportFormat::kDeepSpeed))["bf16"]["enabled"], false);
}

// transformers 5.17 offloads checkpoints through gradient_checkpointing_kwargs {"offload": true}; a
// record of an older release (a user's file based on "hf") refuses the plan, naming the release.
TEST(ExportHfTrainer, CheckpointOffloadNeedsTransformers517) {
  const std::string path = ::testing::TempDir() + "hf_5_16.toml";
  ASSERT_TRUE(write_file_atomically(path, "name = \"hf-5.16\"\nbase = \"hf\"\n[versions]\ntransformers = \"5.16.0\"\n").is_ok());
  auto old = load_trainer(path);
  ASSERT_TRUE(old.ok()) << old.status().message();
  PlanSpec p = hf_alst_plan();
  p.stack = *old;
  p.knobs.tiled_loss = false;  // the Trainer tiles its loss with Liger's layers only ("liger")
  for (ExportFormat format : {ExportFormat::kAccelerate, ExportFormat::kTorchrun}) {
    const auto r = export_plan(p, format);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().message(),
              "key \"knobs.act_ckpt\": value \"offload\" is not run by trainer \"hf-5.16\" (" + path + ") (activation_checkpointing_kwargs "
              "{\"offload\": true} came with transformers 5.17.0; allowed: none, full)");
  }
  p.stack = trainer_stack("hf");
  EXPECT_THAT(exported(p, ExportFormat::kAccelerate), HasSubstr("--gradient_checkpointing_kwargs '{\"offload\": true}'"));
}

// ArcticTraining's ModelConfig.dtype defaults to bf16: an fp32 plan writes its dtype, and SDPA
// (FlashAttention 2 has no fp32 kernels).
TEST(ExportArctic, Fp32PlanWritesItsDtypeAndSdpa) {
  PlanSpec p = two_node_plan();
  p.knobs.micro_batch = 1;
  EXPECT_THAT(exported(p, ExportFormat::kArctic), HasSubstr("\n  attn_implementation: flash_attention_2\n  dtype: bf16\n"));
  p.knobs.precision = Precision::kFp32;
  p.stack.attention = AttentionKernel::kSdpa;
  EXPECT_THAT(exported(p, ExportFormat::kArctic), HasSubstr("\n  attn_implementation: sdpa\n  dtype: fp32\n"));
}

// A multi-node Accelerate config needs main_process_ip; placeholders are said to be placeholders.
TEST(ExportAccelerate, MultiNodeHasMainProcessIpAndPlaceholdersAreFlagged) {
  const std::string y = exported(two_node_plan(), ExportFormat::kAccelerate);
  EXPECT_THAT(y, HasSubstr("\nmain_process_ip: MAIN_NODE_IP\nmain_process_port: 29500\n"));
  EXPECT_THAT(y, HasSubstr("# Placeholder: main_process_ip MAIN_NODE_IP: put the first node's address"));
  EXPECT_THAT(exported(base_plan(1), ExportFormat::kAccelerate), Not(HasSubstr("main_process_ip")));
  PlanSpec nvme = hf_alst_plan();
  nvme.cluster.gpu.nvme_GBps_per_node = 10;
  nvme.knobs.offload_optimizer = OffloadDevice::kNvme;
  for (ExportFormat format : {ExportFormat::kAccelerate, ExportFormat::kArctic, ExportFormat::kTorchrun}) {
    EXPECT_THAT(exported(nvme, format), HasSubstr("# Placeholder: nvme_path /local_nvme in ds_config.json")) << to_string(format);
  }
}

// A plan priced for 12 GPUs at 8 per node is no whole number of nodes: refused, not launched as 2 x 6.
TEST(ExportPlan, KeepsThePricedNodeShape) {
  PlanSpec p = base_plan(12);
  p.knobs.sp = 4;
  const auto r = export_plan(p, ExportFormat::kTorchrun);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("key \"cluster.num_gpus\": value 12 is not a whole number of nodes of 8 GPUs"));
}

// ArcticTraining's TrainerConfig asserts micro_batch_size 1 with pack_samples (its own config
// model says so: tests/scripts/export_check_test.py).
TEST(ExportArctic, MicroBatchAboveOneIsRefusedNamingWhatItLacks) {
  const auto r = export_plan(two_node_plan(), ExportFormat::kArctic);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "key \"knobs.micro_batch\": value 2 cannot be expressed for --format arctic (its recipe packs samples, and "
            "TrainerConfig asserts micro_batch_size 1 with pack_samples (arctic_training/config/trainer.py); "
            "grad_accum_steps gives a larger batch; allowed: at most 1)");
}

}  // namespace
}  // namespace spplan
