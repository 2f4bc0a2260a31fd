// Trainer records (planner/config/trainer_spec.hpp, configs/trainers): the presets load and say
// what each stack runs; a user's record may extend one; a record with an unknown key, a value
// outside its names or a contradiction is one line naming the file and the key.
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "planner/config/loaders.hpp"
#include "planner/config/trainer_rules.hpp"
#include "tests/scratch_dir.hpp"

namespace spplan {
namespace {

std::string write_record(const std::string& name, const std::string& text) {
  static const testing_scratch::ScratchDir dir("trainer_records");
  const std::string path = dir.path() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

// The working folder moved inside a test's own scratch folder, and back when it ends.
class InFolder {
 public:
  explicit InFolder(const std::string& folder) : old_(std::filesystem::current_path()) {
    std::filesystem::current_path(folder);
  }
  ~InFolder() { std::filesystem::current_path(old_); }
  InFolder(const InFolder&) = delete;
  InFolder& operator=(const InFolder&) = delete;

 private:
  std::filesystem::path old_;
};

PlanSpec plan_on(const std::string& trainer, int64_t sp, int64_t cp) {
  PlanSpec p;
  p.model = *load_model("llama-3.1-8b");
  p.cluster.gpu = *load_gpu("h100-80gb");
  p.cluster.num_gpus = 8;
  p.seq_len = 1 << 20;
  p.knobs.sp = sp;
  p.knobs.cp = cp;
  p.knobs.zero_stage = 3;
  p.knobs.act_ckpt = ActCkpt::kFull;
  p.stack = *load_trainer(trainer);
  settle_layout_attention(&p);
  return p;
}

TEST(TrainerRecords, PresetsSayWhatEachStackRunsAndLaunches) {
  EXPECT_EQ(trainer_names(), (std::vector<std::string>{"arctic", "axolotl", "engine", "hf", "liger", "megatron", "torchtitan", "trl", "usp"}));
  for (const std::string& name : trainer_names()) {
    const auto stack = load_trainer(name);
    ASSERT_TRUE(stack.ok()) << stack.status().message();
    EXPECT_EQ(stack->trainer, name);
    ASSERT_NE(stack->record, nullptr);
  }
  EXPECT_EQ(layouts_run(*load_trainer("arctic")->record), "none, ulysses");
  EXPECT_EQ(layouts_run(*load_trainer("hf")->record), "none, ulysses, ring");
  EXPECT_EQ(layouts_run(*load_trainer("engine")->record), "none, ulysses, ring, ulysses_ring");
  // The kernel is the layout's: torch's context parallel runs SDPA under the HF Trainer's ring.
  EXPECT_EQ(plan_on("hf", 8, 1).stack.attention, AttentionKernel::kFlash2);
  EXPECT_EQ(plan_on("hf", 1, 8).stack.attention, AttentionKernel::kSdpa);
  EXPECT_EQ(torchrun_program(plan_on("hf", 8, 1)), "hf-trainer");
  EXPECT_EQ(torchrun_program(plan_on("engine", 8, 1)), "spplan-run");
  EXPECT_EQ(torchrun_program(plan_on("arctic", 8, 1)), "");
  // liger is hf with Liger's kernels: the base's rules and formats, its own facts.
  const auto liger = load_trainer("liger");
  EXPECT_TRUE(liger->fused_layer_kernels);
  EXPECT_FALSE(load_trainer("hf")->fused_layer_kernels);
  EXPECT_EQ(liger->record->formats.size(), load_trainer("hf")->record->formats.size());
}

TEST(TrainerRecords, FormatsExpressOrSayWhyNot) {
  const PlanSpec ring = plan_on("hf", 1, 8);
  EXPECT_TRUE(some_format_launches(ring));
  EXPECT_TRUE(check_format_expresses(ring, "accelerate", flag_where).is_ok());
  EXPECT_EQ(check_format_expresses(ring, "torchrun", flag_where).message(),
            "--cp: value 8 (layout ring) cannot be expressed for --format torchrun (it runs the Trainer on DeepSpeed, "
            "which has no ring attention; --format accelerate launches the ring on FSDP2; allowed: the layouts none, "
            "ulysses)");
  EXPECT_EQ(check_format_expresses(ring, "megatron", flag_where).message(),
            "--trainer: value \"hf\" is not launched by --format megatron (its formats: torchrun, accelerate, deepspeed)");
  PlanSpec arctic = plan_on("arctic", 8, 1);
  arctic.knobs.micro_batch = 2;
  EXPECT_FALSE(some_format_launches(arctic));  // its recipe packs samples: micro batch 1
  arctic.knobs.micro_batch = 1;
  arctic.knobs.grad_accum_steps = 2;
  EXPECT_TRUE(some_format_launches(arctic));
  PlanSpec multi_node = plan_on("engine", 8, 1);
  multi_node.cluster.num_gpus = 16;
  EXPECT_TRUE(check_format_expresses(multi_node, "torchrun", flag_where).is_ok());  // torchrun's c10d rendezvous
  // A user's record of a cluster whose launcher starts one node: its format refuses more.
  const std::string one_node = write_record(
      "one-node.toml", "name = \"one-node\"\nbase = \"engine\"\n[[formats]]\nname = \"torchrun\"\nprogram = \"spplan-run\"\n"
                       "[[formats.refuse]]\nwhen = { nodes = \">1\" }\nwhy = \"this cluster's scheduler gives one node a job\"\n");
  multi_node.stack = *load_trainer(one_node);
  EXPECT_EQ(check_format_expresses(multi_node, "torchrun", flag_where).message(),
            "--gpus: value 16 (2 nodes) cannot be expressed for --format torchrun (this cluster's scheduler gives one "
            "node a job; allowed: at most 8 GPUs (1 node))");
}

// Ulysses on DeepSpeed does not pad: the sequence divides by sp; the engine pads.
TEST(TrainerRecords, DeepSpeedUlyssesNeedsTheSequenceDivisibleBySp) {
  PlanSpec p = plan_on("arctic", 8, 1);
  p.seq_len = (1 << 20) + 4;
  EXPECT_EQ(check_trainer_runs(p, flag_where).message(),
            "--seq: value 1048580 is not divisible by sp 8 (trainer \"arctic\" splits each sequence evenly over the "
            "Ulysses ranks and does not pad; allowed: a multiple of 8)");
  p.stack = *load_trainer("engine");
  EXPECT_TRUE(check_trainer_runs(p, flag_where).is_ok());
}

// A version-bound rule: checkpoint offload came with transformers 5.17.0; a record pinned below it
// refuses it, the preset (5.24.0) runs it.
TEST(TrainerRecords, ARuleBeforeAReleaseFollowsThePinnedVersion) {
  PlanSpec p = plan_on("hf", 8, 1);
  p.knobs.act_ckpt = ActCkpt::kOffload;
  EXPECT_TRUE(check_trainer_runs(p, flag_where).is_ok());
  const std::string old = write_record("hf-5.10.toml", "name = \"hf-5.10\"\nbase = \"hf\"\n[versions]\ntransformers = \"5.10.0\"\n");
  p.stack = *load_trainer(old);
  EXPECT_EQ(p.stack.trainer, old);  // a user's record goes by its path
  EXPECT_EQ(check_trainer_runs(p, flag_where).message(),
            "--act-ckpt: value \"offload\" is not run by trainer \"hf-5.10\" (" + old +
                ") (activation_checkpointing_kwargs {\"offload\": true} came with transformers 5.17.0; allowed: none, "
                "full)");
  EXPECT_TRUE(version_less("5.9.0", "5.17.0"));
  EXPECT_FALSE(version_less("5.17.0", "5.17"));
  EXPECT_TRUE(version_less("0.16.1", "this build"));
}

// `base = "parent.toml"` is the file beside the record that names it, whatever the working folder;
// the record's files are its own, then each base's (a preset's too), each absolute.
TEST(TrainerRecords, ABaseIsReadBesideTheRecordThatNamesIt) {
  namespace fs = std::filesystem;
  const testing_scratch::ScratchDir scratch("trainer_base_beside");
  const std::string root = fs::path(scratch.path()).lexically_normal().string();  // as the loader writes it
  const std::string records = root + "/records", elsewhere = root + "/elsewhere";
  fs::create_directories(records);
  fs::create_directories(elsewhere);
  std::ofstream(records + "/parent.toml") << "name = \"parent\"\nbase = \"hf\"\n[versions]\ntransformers = \"5.10.0\"\n";
  std::ofstream(records + "/child.toml") << "name = \"child\"\nbase = \"parent.toml\"\n";
  const InFolder cwd(elsewhere);
  const auto stack = load_trainer("../records/child.toml");
  ASSERT_TRUE(stack.ok()) << stack.status().message();
  EXPECT_EQ(stack->record->name, "child");
  EXPECT_EQ(stack->record->versions.at("transformers"), "5.10.0");  // the parent's
  EXPECT_EQ(stack->record->files,
            (std::vector<std::string>{records + "/child.toml", records + "/parent.toml",
                                      fs::path(configs_dir() + "/trainers/hf.toml").lexically_normal().string()}));
}

// A plan file names a user's record by its absolute path: read from another folder, it finds it.
TEST(TrainerRecords, APlanMadeWithAUsersRecordReadsFromAnyFolder) {
  namespace fs = std::filesystem;
  const testing_scratch::ScratchDir scratch("trainer_plan_folders");
  const std::string root = fs::path(scratch.path()).lexically_normal().string();  // as the loader writes it
  const std::string made = root + "/made", read = root + "/read";
  fs::create_directories(made);
  fs::create_directories(read);
  std::ofstream(made + "/mine.toml") << "name = \"mine\"\nbase = \"hf\"\n";
  {
    const InFolder cwd(made);
    const PlanSpec plan = plan_on("mine.toml", 8, 1);
    ASSERT_TRUE(write_file_atomically("plan.toml", plan_to_toml(plan)).is_ok());
  }
  const InFolder cwd(read);
  const auto back = load_plan("../made/plan.toml");
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_NE(back->stack.record, nullptr);
  EXPECT_EQ(back->stack.record->name, "mine");
  EXPECT_EQ(back->stack.trainer, made + "/mine.toml");
}

TEST(TrainerRecords, BadRecordsAreOneLineNamingFileAndKey) {
  const std::string complete_stack =
      "[stack]\nzero3_reuse_window_elems = 1e9\nzero3_persistence_threshold_elems = 1e5\nzero3_prefetches = true\n"
      "loop_holds_logits = true\noffloaded_checkpoints_on_device = 1\noffloaded_checkpoints_only_while_running = true\n"
      "reentrant_checkpoint = true\nfused_layer_kernels = false\nfused_layer_kernels_with_tiled_loss = false\n"
      "tiled_loss_recomputes_chunks = false\nstep_upcasts_whole_partition = false\nfp32_norms_fused_on_gpu = false\ntiled_mlp_fused_swiglu = false\n"
      "ulysses_one_exchange = false\nrope_half_tables = false\nreduces_after_backward = false\nsliding_window_attention = false\n"
      "ring_sliding_window = false\nring_window_past_shard_only = false\nwindow_in_masked_blocks = false\n"
      "ring_contiguous_shards = false\nallgather_kv_heads_per_call = 0\nsp_loss_in_logits_dtype = false\n"
      "moe_expert_loop = false\nfreezes_encoders = false\n";
  const std::string one_format = "[layouts.none]\nattention = \"flash2\"\n[[formats]]\nname = \"arctic\"\n";
  const struct {
    const char* file;
    std::string text, expected;
  } cases[] = {
      {"typo.toml", "name = \"x\"\nbase = \"hf\"\n[stack]\nloop_holds_logit = true\n",
       "typo.toml: key \"stack.loop_holds_logit\": unknown key (allowed: "},
      {"typo_top.toml", "name = \"x\"\nbase = \"hf\"\nformat = 1\n", "typo_top.toml: key \"format\": unknown key"},
      {"no_name.toml", "base = \"hf\"\n", "no_name.toml: key \"name\": missing"},
      {"no_stack.toml", "name = \"x\"\n" + one_format, "no_stack.toml: key \"stack\": missing (required: the [stack] facts"},
      {"missing_fact.toml", "name = \"x\"\n[stack]\nloop_holds_logits = true\n" + one_format,
       "missing_fact.toml: key \"stack.zero3_reuse_window_elems\": missing"},
      {"knob.toml", "name = \"x\"\nbase = \"hf\"\n[[refuse]]\nwhen = { zero = 3 }\nwhy = \"w\"\n",
       "knob.toml: key \"refuse[1].when.zero\": unknown key (allowed: layout, sp, cp, cp_comm, zero_stage, "},
      {"value.toml", "name = \"x\"\nbase = \"hf\"\n[[refuse]]\nwhen = { act_ckpt = \"partial\" }\nwhy = \"w\"\n",
       "value.toml: key \"refuse[1].when.act_ckpt\": value \"partial\" is not allowed (allowed: none, full, offload)"},
      {"compare.toml", "name = \"x\"\nbase = \"hf\"\n[[refuse]]\nwhen = { micro_batch = \">x\" }\nwhy = \"w\"\n",
       "compare.toml: key \"refuse[1].when.micro_batch\": value \">x\" is not allowed (allowed: a whole number"},
      {"empty_when.toml", "name = \"x\"\nbase = \"hf\"\n[[refuse]]\nwhen = {}\nwhy = \"w\"\n",
       "empty_when.toml: key \"refuse[1].when\": missing or empty (required: the knobs this refuses"},
      {"unpinned.toml", "name = \"x\"\nbase = \"hf\"\n[[refuse]]\nwhen = { tiled_loss = true }\nbefore = { liger = \"1.0\" }\nwhy = \"w\"\n",
       "unpinned.toml: key \"refuse[1].before.liger\": \"liger\" is not in [versions]"},
      {"format.toml", "name = \"x\"\nbase = \"hf\"\n[[formats]]\nname = \"nemo\"\n",
       "format.toml: key \"formats[1].name\": value \"nemo\" is not allowed (allowed: deepspeed, accelerate, arctic, "
       "torchrun, megatron, torchtitan, swift, axolotl, trl)"},
      {"program.toml", "name = \"x\"\nbase = \"hf\"\n[[formats]]\nname = \"torchrun\"\n",
       "program.toml: key \"formats[1].program\": missing"},
      {"components.toml", "name = \"x\"\n" + complete_stack +
                              "[layouts.none]\nattention = \"flash2\"\n[[formats]]\nname = \"deepspeed\"\ncomponent = true\n",
       "components.toml: key \"formats\": no format launches trainer \"x\""},
      // A layout the trainer runs that its only format refuses outright: a plan that launches nowhere.
      {"contradiction.toml", "name = \"x\"\n" + complete_stack +
                                 "[layouts.none]\nattention = \"flash2\"\n[layouts.ring]\nattention = \"sdpa\"\n"
                                 "cp_comm = [\"ring\"]\n[[formats]]\nname = \"torchrun\"\nprogram = \"hf-trainer\"\n"
                                 "[[formats.refuse]]\nwhen = { layout = \"ring\" }\nwhy = \"no ring\"\n",
       "contradiction.toml: key \"layouts.ring\": the trainer runs it, but every format refuses it"},
      {"no_comm.toml", "name = \"x\"\nbase = \"hf\"\n[layouts.none]\nattention = \"flash2\"\n[layouts.ring]\nattention = \"sdpa\"\n",
       "no_comm.toml: key \"layouts.ring.cp_comm\": missing (required under a ring layout"},
      {"also_unknown.toml", "name = \"x\"\nbase = \"hf\"\n[layouts.none]\nattention = \"flash2\"\nalso_attention = [\"xformers\"]\n",
       "also_unknown.toml: key \"layouts.none.also_attention\": value \"xformers\" is not allowed (allowed: flash2, sdpa, "
       "flash3, flex, other than attention)"},
      {"also_default.toml", "name = \"x\"\nbase = \"hf\"\n[layouts.none]\nattention = \"sdpa\"\nalso_attention = [\"sdpa\"]\n",
       "also_default.toml: key \"layouts.none.also_attention\": value \"sdpa\" is not allowed"},
      {"loop.toml", "name = \"x\"\nbase = \"LOOP\"\n", "makes a chain of more than 8 bases (a loop?)"},
      {"models_key.toml", "name = \"x\"\nbase = \"torchtitan\"\n[[models]]\nname = \"llama3\"\nflavor = \"8B\"\n",
       "models_key.toml: key \"models[1].num_hidden_layers\": missing"},
      {"ulysses_degree.toml", "name = \"x\"\nbase = \"usp\"\n[[formats]]\nname = \"swift\"\nulysses_degree = \"kv\"\n",
       "ulysses_degree.toml: key \"formats[1].ulysses_degree\": value \"kv\" is not allowed (allowed: any, gcd_kv_heads)"},
      {"models_name.toml", "name = \"x\"\nbase = \"torchtitan\"\n[[models]]\nname = \"llama3\\\"\\n\"\nflavor = \"8B\"\n",
       "models_name.toml: key \"models[1].name\": value \"llama3\"\\x0a\" is not allowed (allowed: letters, digits, '.', "
       "'_' and '-')"},
      // A value with a newline is shown escaped: the message stays one line (found by fuzz_trainer_toml).
      {"newline.toml", "name = \"x\"\nbase = \"hf\"\n[[refuse]]\nwhen = { offload_optimizer = \"c\\npu\" }\nwhy = \"w\"\n",
       "newline.toml: key \"refuse[1].when.offload_optimizer\": value \"c\\x0apu\" is not allowed (allowed: none, cpu, nvme)"},
      {"expandable.toml", "name = \"x\"\nbase = \"hf\"\n[stack]\nexpandable_segments = 1\n",
       "expandable.toml: key \"stack.expandable_segments\": value 1 is not allowed (allowed: true, false)"},
      // A chunk size goes with a loss that recomputes its chunks, and that loss needs one.
      {"chunk_alone.toml", "name = \"x\"\nbase = \"hf\"\n[stack]\ntiled_loss_chunk_tokens = 256\n",
       "chunk_alone.toml: key \"stack.tiled_loss_chunk_tokens\": value 256 does not go with tiled_loss_recomputes_chunks = "
       "false (allowed: a chunk of 1 to 1048576 tokens with a loss that recomputes its chunks, else 0 or absent)"},
      {"no_chunk.toml", "name = \"x\"\nbase = \"hf\"\n[stack]\ntiled_loss_recomputes_chunks = true\n",
       "no_chunk.toml: key \"stack.tiled_loss_chunk_tokens\": value 0 does not go with tiled_loss_recomputes_chunks = true"},
      {"packed.toml", "name = \"x\"\nbase = \"hf\"\n[stack]\npacked_attention = \"masked\"\n",
       "packed.toml: key \"stack.packed_attention\": value \"masked\" is not allowed (allowed: unread, varlen, per_document)"},
      {"models_table.toml", "name = \"x\"\nbase = \"torchtitan\"\nmodels = 3\n",
       "models_table.toml: key \"models\": value 3 is not allowed (allowed: [[models]] tables)"},
  };
  for (const auto& c : cases) {
    std::string text = c.text;
    const std::string path = write_record(c.file, "");
    if (const auto at = text.find("LOOP"); at != std::string::npos) text.replace(at, 4, path);
    std::ofstream(path) << text;
    const auto stack = load_trainer(path);
    ASSERT_FALSE(stack.ok()) << c.file;
    const std::string& m = stack.status().message();
    EXPECT_NE(m.find(c.expected), std::string::npos) << c.file << "\n got: " << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
}

// TRL's SFTTrainer is the Trainer with its own loss: chunked_nll (trl 1.7-1.14's default), which
// recomputes 256-token chunks. The Trainer alone tiles its loss only with Liger's layers; TRL
// tiles it without them, and still computes the full logits when told loss_type "nll".
TEST(TrainerRecords, TrlRunsItsChunkedLossWithoutLigersLayers) {
  const auto trl = load_trainer("trl");
  ASSERT_TRUE(trl.ok()) << trl.status().message();
  EXPECT_TRUE(trl->tiled_loss_recomputes_chunks);
  EXPECT_EQ(trl->tiled_loss_chunk_tokens, 256);
  EXPECT_FALSE(trl->fused_layer_kernels);
  for (const char* name : {"arctic", "hf", "liger", "usp", "axolotl", "torchtitan", "megatron", "engine"}) {
    EXPECT_FALSE(load_trainer(name)->tiled_loss_recomputes_chunks) << name;
  }
  for (const bool tiled : {true, false}) {
    PlanSpec p = plan_on("trl", 8, 1);
    p.knobs.tiled_loss = tiled;
    EXPECT_TRUE(check_trainer_runs(p, flag_where).is_ok()) << tiled << ": " << check_trainer_runs(p, flag_where).message();
    p.stack = *load_trainer("hf");
    EXPECT_EQ(check_trainer_runs(p, flag_where).is_ok(), !tiled) << tiled;
  }
}

// Only the engine sets expandable segments in every run (engine/device/alloc_conf.hpp), so only
// its plans need no more than the slack the allocator keeps at the limit; a record may leave the
// fact out (complete_stack above has none), and then keeps the whole allowance.
TEST(TrainerRecords, OnlyTheEngineRunsWithExpandableSegments) {
  for (const char* name : {"arctic", "hf", "liger", "usp", "axolotl", "torchtitan", "megatron", "engine"}) {
    const auto stack = load_trainer(name);
    ASSERT_TRUE(stack.ok()) << name << ": " << stack.status().message();
    EXPECT_EQ(stack->expandable_segments, std::string(name) == "engine") << name;
  }
}

// How each record's attention runs packed documents, without a ring and on one: read where the
// record cites the code, inherited from a base (trl, liger from hf), else not read.
TEST(TrainerRecords, EachRecordSaysHowItsAttentionRunsPackedDocuments) {
  const struct {
    const char* name;
    PackedAttention alone, ring;
  } cases[] = {
      {"engine", PackedAttention::kPerDocument, PackedAttention::kPerDocument},
      {"hf", PackedAttention::kVarlen, PackedAttention::kUnread},
      {"trl", PackedAttention::kVarlen, PackedAttention::kUnread},
      {"liger", PackedAttention::kVarlen, PackedAttention::kUnread},
      {"arctic", PackedAttention::kVarlen, PackedAttention::kUnread},
      {"usp", PackedAttention::kVarlen, PackedAttention::kVarlen},
      {"axolotl", PackedAttention::kVarlen, PackedAttention::kVarlen},
      {"megatron", PackedAttention::kUnread, PackedAttention::kUnread},
      {"torchtitan", PackedAttention::kUnread, PackedAttention::kUnread},
  };
  for (const auto& c : cases) {
    const auto stack = load_trainer(c.name);
    ASSERT_TRUE(stack.ok()) << c.name << ": " << stack.status().message();
    EXPECT_EQ(stack->packed_attention, c.alone) << c.name;
    EXPECT_EQ(stack->ring_packed_attention, c.ring) << c.name;
  }
}

// TorchTitan builds its models by name ([[models]]): a plan of another model is refused
// with the flavours it builds, and the search never returns one.
TEST(TrainerRecords, TorchtitanRunsOnlyTheModelsItBuilds) {
  PlanSpec p = plan_on("torchtitan", 1, 4);
  p.knobs.cp_comm = CpComm::kAllGather;
  ASSERT_TRUE(check_trainer_runs(p, flag_where).is_ok()) << check_trainer_runs(p, flag_where).message();
  ASSERT_NE(model_flavor(p), nullptr);
  EXPECT_EQ(model_flavor(p)->name + " " + model_flavor(p)->flavor, "llama3 8B");
  p.model = *load_model("mistral-7b");
  EXPECT_FALSE(trainer_runs(p));
  EXPECT_NE(first_refusal(p), nullptr);
  const Status s = check_trainer_runs(p, flag_where);
  EXPECT_EQ(s.message(), "--model: value \"mistral-7b\" is not a model trainer \"torchtitan\" builds (it builds its "
                         "models by name, and none has this one's shape; allowed: llama3 8B, llama3 70B, llama3 405B, "
                         "qwen3 0.6B, qwen3 1.7B, qwen3 4B, qwen3 8B, qwen3 14B, qwen3 32B)");
  p.model.name = "x\nmodel";  // a config.json's own name: the message stays one line
  EXPECT_EQ(check_trainer_runs(p, flag_where).message().find('\n'), std::string::npos);
  p.model = *load_model("qwen3-4b");  // each Qwen3 size, with its tied head and q/k norms
  EXPECT_EQ(model_flavor(p)->flavor, "4B");
  p.model.tie_word_embeddings = false;  // a shape TorchTitan does not build
  EXPECT_EQ(model_flavor(p), nullptr);
  // A trainer without [[models]] runs any model.
  PlanSpec hf = plan_on("hf", 1, 1);
  hf.model = *load_model("mistral-7b");
  EXPECT_TRUE(trainer_runs(hf));
}

// A rule on the model alone names what the model has: the engine refuses partial RoPE outside
// GLM-4.5 (partial_rope true, glm_mixture false), and says so by the partial RoPE.
TEST(TrainerRecords, AModelRuleNamesWhatTheModelHas) {
  PlanSpec p = plan_on("engine", 1, 1);
  p.model.partial_rotary_factor = 0.5;
  EXPECT_EQ(check_trainer_runs(p, flag_where).message(),
            "--model: value \"" + p.model.name +
                "\" (RoPE on 0.5 of each head: partial_rotary_factor) with glm_mixture false is not run by trainer "
                "\"engine\" (of the Hugging Face families it reads and writes (hf_weights.cpp), only GLM-4.5 rotates "
                "part of each head: another model's --export-hf would lose it; allowed: a model that rotates whole "
                "heads, or a trainer that runs partial RoPE)");
  p.model = *load_model("tiny-glm-moe");  // GLM-4.5's own partial RoPE: run
  EXPECT_TRUE(check_trainer_runs(p, flag_where).is_ok()) << check_trainer_runs(p, flag_where).message();
}

// A multimodal config's model: the stacks that load it whole (transformers' class) run it with its
// encoders; those that build the language model alone (the engine, Megatron-LM's GPT, TorchTitan's
// flavors) would train another model, and say so.
TEST(TrainerRecords, StacksThatBuildTheLanguageModelAloneRefuseMultimodalConfigs) {
  const std::string config = std::string(SPPLAN_SOURCE_DIR) + "/tests/planner/config/data/mistral3_small_multimodal.json";
  for (const std::string trainer : {"arctic", "hf", "usp", "axolotl", "engine", "megatron", "torchtitan"}) {
    PlanSpec p = plan_on(trainer, 1, 1);
    p.model = *load_model(config);
    ASSERT_GT(p.model.encoder_params, 0.0);
    const Status s = check_trainer_runs(p, flag_where);
    const bool alone = trainer == "engine" || trainer == "megatron" || trainer == "torchtitan";
    const bool causal_lm_loader = trainer == "arctic";  // AutoModelForCausalLM builds no Mistral 3
    EXPECT_EQ(s.is_ok(), !alone && !causal_lm_loader) << trainer << ": " << s.message();
    if (trainer == "engine") {
      EXPECT_EQ(s.message(),
                "--model: value \"mistral3_small_multimodal\" (a multimodal config: encoders beside the language model) is "
                "not run by trainer \"engine\" (spplan run builds the language model alone (model.cpp): the encoders beside "
                "it would not be trained, another model than the config's; allowed: the language model's own config (its "
                "text_config alone), or a trainer that loads the multimodal model)");
    }
    if (causal_lm_loader) {
      EXPECT_EQ(s.message(),
                "--model: value \"mistral3_small_multimodal\" (a multimodal config AutoModelForCausalLM does not build) is "
                "not run by trainer \"arctic\" (its HF model factory builds every model through AutoModelForCausalLM "
                "(arctic_training/model/hf_factory.py), which transformers maps this multimodal config to no class of; "
                "allowed: a model AutoModelForCausalLM builds, or a trainer that loads it through "
                "AutoModelForImageTextToText)");
    }
  }
  // Gemma 3's multimodal config is one AutoModelForCausalLM builds (Gemma3ForConditionalGeneration).
  PlanSpec gemma = plan_on("arctic", 1, 1);
  gemma.model = *load_model(std::string(SPPLAN_SOURCE_DIR) + "/tests/planner/config/data/gemma3_4b_multimodal.json");
  EXPECT_TRUE(check_trainer_runs(gemma, flag_where).is_ok());
}

// Whether a layout's optimizer holds state for a parameter the step never runs: DeepSpeed's flat
// partitions do (every layout's default); hf's ring runs on FSDP2 with torch's AdamW, which does not.
TEST(TrainerRecords, LayoutsSayWhetherUnrunParametersHoldState) {
  const auto& hf = trainer_stack("hf").record->layouts;
  EXPECT_TRUE(hf[static_cast<size_t>(Layout::kUlysses)].state_for_unrun_params);
  EXPECT_FALSE(hf[static_cast<size_t>(Layout::kRing)].state_for_unrun_params);
  EXPECT_TRUE(trainer_stack("arctic").record->layouts[static_cast<size_t>(Layout::kUlysses)].state_for_unrun_params);
}

}  // namespace
}  // namespace spplan
