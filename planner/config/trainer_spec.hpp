// A training stack as a record: what ArcticTraining, the Hugging Face Trainer, Megatron-LM or
// spplan's engine hold, run and launch, loaded from configs/trainers/NAME.toml (or a user's file,
// `--trainer FILE`) like a model or a GPU. One record holds every fact of its stack, each with its
// source beside it in the file:
//   [stack]      what the software does that changes memory or time (TrainingStack)
//   [layouts.X]  the sequence layouts it runs (none, ulysses, ring, ulysses_ring), the attention
//                kernel under each, whether Ulysses pads a sequence sp does not divide, and which
//                ring variants (cp_comm) it has
//   [[refuse]]   knob sets it does not run, each with why, optionally only before a library version
//   [[formats]]  the export formats that launch it, each with the knob sets it cannot express
//   [[models]]   the models it builds itself by name, when it builds no other (TorchTitan)
// The search, the prices, the plan rules, the exports, the GUI and Python all read this record
// (trainer_rules.hpp), so a plan is one its stack runs and one of its formats launches.
// Configuration file reading: trainer_loader.cpp; the schema's manual: configs/trainers/README.md.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "planner/config/knobs.hpp"

namespace spplan {

// Which causal attention kernel the stack runs. Its rate is a fact about the kernel on the GPU
// (GpuSpec), the choice a fact about the software: FlashAttention 2.x as a library (ALST's
// FlashAttention 2.7.4, transformers' attn_implementation="flash_attention_2"), PyTorch's
// scaled_dot_product_attention, which picks cuDNN's kernel on Hopper in bf16 (LibTorch 2.5+), or
// FlashAttention 3 (flash_attention_3: Hopper; ArcticTraining's H200 recipes). FlashAttention 2
// indexes in 32 bits, the other two in 64 (software_facts.hpp kFlash2MaxTensorElements).
// kFlex: torch's flex_attention (transformers' attn_implementation "flex_attention"), the one
// long-context kernel of transformers 5.24 that trains gpt-oss's attention sinks.
enum class AttentionKernel { kFlash2, kSdpa, kFlash3, kFlex };
const std::vector<std::string>& attention_kernel_names();  // "flash2", "sdpa", "flash3", "flex"
std::string to_string(AttentionKernel kernel);

// How a stack's attention runs over documents packed into one sequence (positions restarting at
// each document):
//   kUnread       nobody read it for the record: priced as one document a sequence (the slowest
//                 it can be with a causal kernel), and said;
//   kVarlen       the documents' boundaries reach the kernel as cumulative lengths (FlashAttention's
//                 flash_attn_varlen_func): one call computes each document's causal pairs;
//   kPerDocument  one kernel call per document, and on a ring per document's part of a chunk pair
//                 (the engine's attention): the same pairs, each call's fixed cost besides.
enum class PackedAttention { kUnread, kVarlen, kPerDocument };
const std::vector<std::string>& packed_attention_names();  // "unread", "varlen", "per_document"
std::string to_string(PackedAttention mode);

// How a plan splits each sequence: not at all, over heads (Ulysses, sp > 1), in ring blocks (cp >
// 1), or both.
enum class Layout { kNone, kUlysses, kRing, kUlyssesRing };
const std::vector<std::string>& layout_names();  // "none", "ulysses", "ring", "ulysses_ring"
std::string to_string(Layout layout);
Layout layout_of(const Knobs& knobs);

struct TrainerRecord;

// What the training software does that changes memory or time and is not a knob ([stack]).
struct TrainingStack {
  std::string trainer = "arctic";  // the record's name, or the file a user's record came from
  // ZeRO-3 keeps a gathered parameter while it is reused within stage3_max_reuse_distance
  // elements and fewer than stage3_max_live_parameters are gathered (both 1e9), and parameters
  // below stage3_param_persistence_threshold (1e5) elements gathered always (DeepSpeed
  // zero/config.py, MEMORY-FACTS 1.1, 2.1, 2.2).
  double zero3_reuse_window_elems = 1e9;
  double zero3_persistence_threshold_elems = 1e5;
  // DeepSpeed's ZeRO-3 gathers up to stage3_prefetch_bucket_size elements ahead of use (the knob
  // prefetch_bucket_elems); a stack that gathers a unit only when it runs holds no prefetch.
  bool zero3_prefetches = true;
  // The training loop holds the model outputs (the logits) until backward returns (ArcticTraining:
  // MEMORY-FACTS 10.5); the Hugging Face Trainer drops them before backward.
  bool loop_holds_logits = true;
  // With act_ckpt offload, how many layer inputs stay on the GPU, and whether those are inputs of
  // running layers only (copies made inside the layer's forward and backward: at the loss, where no
  // layer runs, none is on the device, as measured) or kept whether a layer runs or not (DeepSpeed's
  // offload context, keep_last_count).
  int64_t offloaded_checkpoints_on_device = 1;
  bool offloaded_checkpoints_only_while_running = true;
  // Activation checkpointing through a reentrant checkpoint: its backward holds the recomputed
  // layer output and the incoming gradient until the whole layer's backward returns.
  bool reentrant_checkpoint = true;
  // The attention kernel of this plan's layout ([layouts.X].attention, or --attention).
  AttentionKernel attention = AttentionKernel::kFlash2;
  // LibTorch's CPU flash kernel runs the attention (a host CPU: costmodel/host_cpu.hpp). Its output
  // is [b, s, heads, d] under a transposed view, so o_proj reads it without a copy, and its
  // backward accumulates dq, dk, dv in place in their own dtype with per-thread block buffers only
  // (aten/src/ATen/native/cpu/FlashAttentionKernel.cpp, cpu_flash_attention_backward): none of
  // FlashAttention-2's per-token fp32 dq accumulator, GQA-expanded dk/dv or softmax_d.
  bool cpu_flash_attention = false;
  // The threads of the process running that CPU kernel (at::get_num_threads()): its backward
  // allocates its block buffers for every thread of the pool at once (memory_activations.cpp
  // cpu_flash_backward_scratch_bytes). Read only with cpu_flash_attention; 0: the host's threads
  // over its ranks (costmodel/host_cpu.hpp as_priced sets it).
  int64_t cpu_flash_threads = 0;
  // The plan has been through costmodel::as_priced on a host CPU (its share of the machine taken):
  // pricing it again changes nothing.
  bool priced_on_host_cpu = false;
  // One kernel per op and pass for RMSNorm, RoPE and SwiGLU (Liger-Kernel's Triton kernels), reading
  // and writing each tensor once; without them the layers run eager modules, a chain of PyTorch
  // kernels per op (layer_kernels.hpp counts them).
  bool fused_layer_kernels = false;
  // The same fused layer ops, but only with the tiled loss (the engine's --tiled-loss brings its
  // fused CUDA kernels; on a CPU their blockwise ATen references run: host_cpu.hpp turns it off).
  bool fused_layer_kernels_with_tiled_loss = false;
  // How the tiled loss runs. False: Liger's fused linear cross-entropy, which computes the hidden
  // states' and the head's gradients chunk by chunk in the forward and keeps them for the backward.
  // True: the head and cross-entropy run per chunk of tiled_loss_chunk_tokens tokens under a
  // checkpoint, so the forward keeps only the hidden states and the backward recomputes each chunk
  // (TRL's chunked_nll, trl 1.7-1.14 sft_trainer.py _chunked_cross_entropy_loss).
  bool tiled_loss_recomputes_chunks = false;
  // The tokens of one recomputed chunk (TRL's _CHUNKED_LM_HEAD_CHUNK_SIZE: 256); 0 unless
  // tiled_loss_recomputes_chunks.
  int64_t tiled_loss_chunk_tokens = 0;
  // The optimizer step upcasts the rank's whole gradient partition into one fp32 buffer, where
  // DeepSpeed flattens one sub-group at a time (MEMORY-FACTS 2.4).
  bool step_upcasts_whole_partition = false;
  // fp32 layers normalise with a fused rms_norm that saves the input and the reciprocal RMS only,
  // not the normalised value the eager chain keeps (on a CPU the composite: host_cpu.hpp).
  bool fp32_norms_fused_on_gpu = false;
  // Whether TiledMLP's shards keep the fused SwiGLU that comes with the tiled loss or run the eager one.
  bool tiled_mlp_fused_swiglu = false;
  // Ulysses' backward all-to-all of dq, dk, dv in one buffer (else one gradient at a time).
  bool ulysses_one_exchange = false;
  // Every run of the stack sets PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True itself, so near the
  // device's limit its caching allocator gives back all but kAllocatorSlackAtLimit of its slack
  // (software_facts.hpp); without it the whole allowance is needed (the allocator splits segments
  // and strands them: engine/device/alloc_conf.hpp). Optional in a record, false when absent.
  bool expandable_segments = false;
  // RoPE's cos and sin as [s, d/2] tables (else repeated to [s, d]).
  bool rope_half_tables = false;
  // A model's sliding window reaches the FlashAttention kernel (window_size), so a sequence longer
  // than the window runs windowed attention; without it only sequences inside the window are run.
  bool sliding_window_attention = false;
  // Its ring hands the window to the kernel at each query's place in the whole sequence (keys
  // gathered from the sequence's start, the causal mask aligned to the last key), so a ring runs
  // windowed attention; without it a ring over a window is refused (plan_rules.cpp).
  bool ring_sliding_window = false;
  // A window runs as one kernel call per w queries over the 2w - 1 keys they may see, under a band
  // mask the kernel computes whole (SDPA takes no window: the engine's window_attention.hpp), not
  // a kernel that skips what the window leaves out: n (n + w - 1) pairs a block (costmodel/
  // compute.hpp computed_window_pairs), ceil(s / w) calls a layer.
  bool window_in_masked_blocks = false;
  // Its ring applies the window only where a rank's shard is longer than the window (it compares the
  // rank's own key count to it), so a sequence longer than the window over shards within it would
  // run full causal attention: such a plan is refused.
  bool ring_window_past_shard_only = false;
  // Below ZeRO 2, gradients reduced after the backward bucket by bucket through converted copies
  // freed at once, where DeepSpeed keeps its IPG bucket allocated and reduces during the backward.
  bool reduces_after_backward = false;
  // The ring's ranks hold contiguous shards of a sequence (rank r the r-th cp-th), not the zigzag's
  // chunk pairs: causal attention is unbalanced, and the last rank, which every other waits for at
  // the next collective, computes (2 cp - 1) / cp of a balanced rank's (ring.hpp).
  bool ring_contiguous_shards = false;
  // The all-gather ring variant runs per group of this many key-value heads: gather the group's K/V,
  // one attention call over the whole gathered key range, the next group's gather behind it
  // (ring-flash-attn's llama3 variant, heads_k_stride). 0: all heads at once, the attention in cp
  // blocks (torch's context parallel).
  int64_t allgather_kv_heads_per_call = 0;
  // Under sequence parallel (sp x cp > 1) the loss runs its cross-entropy on the logits in their own
  // dtype (ms-swift's per_token_loss_func_sp: CrossEntropyLoss on the model's bf16 logits), where
  // transformers' ForCausalLMLoss upcasts them to fp32 first (costmodel/dtype.hpp).
  bool sp_loss_in_logits_dtype = false;
  // A mixture's experts run one after another (an index into each expert's tokens, its SwiGLU, and
  // index_add_ of the weighted output: transformers' eager experts, the engine's moe.cpp), where
  // transformers 5 defaults to one grouped GEMM over the tokens sorted by expert (grouped_mm,
  // integrations/moe.py): the loop's index_add_ keeps each slot's weighted output besides
  // (memory_activations.cpp moe_routing_saved_per_token).
  bool moe_expert_loop = false;
  // Its attention over packed documents (above), without a ring and on a ring (cp > 1): a ring is
  // often another library's (ring-flash-attn, torch's context_parallel) with its own rules.
  // Optional in a record: absent, not read.
  PackedAttention packed_attention = PackedAttention::kUnread;
  PackedAttention ring_packed_attention = PackedAttention::kUnread;
  // A multimodal model's encoders (ModelSpec::encoder_params) are frozen in full training: their
  // weights are held (ZeRO-3 partitions them with the rest) but take no gradients, optimizer state
  // or optimizer step (ms-swift's freeze_vit and freeze_aligner, true by default), where transformers
  // leaves every parameter trainable. The record's default; a plan may set it (--freeze-encoders,
  // --train-encoders), and a trainer that cannot freeze them refuses it (rule key freeze_encoders).
  bool freezes_encoders = false;
  // The record this stack came from: its layouts, refusals and formats (trainer_rules.hpp). Shared:
  // the search copies plans by the thousand.
  std::shared_ptr<const TrainerRecord> record;
};

// The knobs a rule reads, with the plan facts that are not knobs (the node count, the attention).
enum class RuleKey {
  kLayout, kSp, kCp, kCpComm, kZeroStage, kOffloadOptimizer, kOffloadParams, kActCkpt, kTiledMlp, kTiledLoss,
  kMicroBatch, kGradAccumSteps, kPrecision, kNodes, kAttention,
  kExperts,  // the model's: num_experts (0 for a dense model), so a record can refuse mixtures
  kSandwichNorms,  // the model's: Gemma 2's and 3's four norms a layer (ModelSpec::sandwich_norms)
  kAttentionSinks,  // the model's: gpt-oss's learned sink logit per head (ModelSpec::attention_sinks)
  kGlmMixture,      // the model's: GLM-4.5's mixture (a shared expert, dense first layers, a sigmoid router)
  kPartialRope,     // the model's: RoPE on part of each head (ModelSpec::partial_rotary_factor below 1)
  // The model's at the plan's length: some layers attend over a sliding window shorter than the
  // sequence, the others fully (Gemma 3, gpt-oss, Qwen2's max_window_layers)
  kWindowedAndFullLayers,
  // The model's: a multimodal config's encoders beside the language model, counted or not
  // (ModelSpec::encoder_params, encoders_left_out): a stack that builds the language model alone
  // trains another model
  kMultimodalEncoders,
  // The model's: transformers' AutoModelForCausalLM builds it (ModelSpec::causal_lm_class): a
  // stack that loads through that class cannot start a Mistral 3 config
  kCausalLmClass,
  // The plan's: a multimodal model's encoders frozen (TrainingStack::freezes_encoders, the trainer's
  // default or --freeze-encoders / --train-encoders); false for a model without encoders
  kFreezeEncoders
};
const std::vector<std::string>& rule_key_names();  // "layout", "sp", ..., the plan keys' names
bool rule_key_is_boolean(RuleKey key);  // tiled_mlp, tiled_loss and the model's but experts: true or false
bool rule_key_is_model(RuleKey key);    // experts, sandwich_norms, attention_sinks, glm_mixture, partial_rope: no knob

// One condition of a rule: a key and the values that match it. Named values (layouts, devices,
// modes, kernels) and booleans are kept as their index (false 0, true 1); numbers as numbers.
struct RuleTest {
  enum class Op { kIn, kGreater, kLess, kAtLeast, kAtMost, kNot };
  RuleKey key = RuleKey::kLayout;
  Op op = Op::kIn;
  std::vector<int64_t> values;  // kIn: any of them; the comparisons: values[0]
};

// A knob set a trainer does not run, or a format cannot express: every test holds. `before`:
// the rule holds only while the record's pinned version of each named library is older (a feature
// that came with a release); resolved when the record is loaded (`applies`), as is `stack`.
struct Refusal {
  std::string key;  // where it was read ("refuse[2]", "formats[1].refuse[1]"), for messages
  std::vector<RuleTest> when;
  std::string why;
  std::map<std::string, std::string> before;
  // `stack`: the rule holds only for a record whose [stack] flags are these (a rule of "hf" that
  // its child "liger", with Liger's fused layers, does not inherit); resolved with `before`.
  std::map<std::string, bool> stack;
  bool applies = true;
};

struct LayoutRecord {
  bool runs = false;
  AttentionKernel attention = AttentionKernel::kFlash2;  // what its plans run unless the search finds another faster
  // The other kernels the trainer runs on this layout (`also_attention`), which the search prices
  // too: the layout's default must not decide between layouts by its kernel alone.
  std::vector<AttentionKernel> also_attention;
  bool pads = true;               // Ulysses pads a sequence sp does not divide (else it must divide)
  std::vector<CpComm> cp_comm;    // the ring variants it has (ring layouts only)
  // The optimizer holds a gradient and state for a trainable parameter the step never runs (a
  // multimodal model's encoders on text): DeepSpeed ZeRO flattens every trainable parameter into its
  // gradient and fp32 partitions at start. False where the sharding reduces only gradients that
  // exist and the optimizer makes state at a parameter's first gradient (FSDP2 with torch's AdamW).
  bool state_for_unrun_params = true;
};

// An export format that launches the trainer ([[formats]]). `component`: a file of a launch (the
// ds_config.json another format's launch reads), exported on its own but not a launch itself.
struct FormatRecord {
  std::string name;               // one of launch_format_names()
  std::string program;            // torchrun: what each rank runs ("hf-trainer", "spplan-run")
  bool component = false;
  // `ulysses_degree = "gcd_kv_heads"`: the launched tool takes one sequence-parallel size and
  // splits it itself, Ulysses over gcd(key-value heads, sp x cp) ranks and a ring over the rest
  // (ms-swift's SequenceParallel._init_device_mesh): it expresses only plans split that way.
  bool ulysses_from_kv_heads = false;
  std::vector<Refusal> refuses;
};

// A model a trainer builds itself by name, where others read any model's config.json (TorchTitan's
// flavours: models/llama3, models/qwen3): its name, and every shape the costmodel prices, in the
// model file's key names ([[models]]).
struct ModelFlavor {
  std::string name;    // TorchTitan's model.name: "llama3"
  std::string flavor;  // its model.flavor: "8B"
  int64_t num_hidden_layers = 0, hidden_size = 0, num_attention_heads = 0, num_key_value_heads = 0, head_dim = 0,
          intermediate_size = 0, vocab_size = 0;
  bool tie_word_embeddings = false, qk_norm = false;
  double rope_theta = 0;
};

struct TrainerRecord {
  std::string name;               // "hf"; a user's file: its name key
  std::string source;             // the file read, for messages
  // Every file the record was read from, each absolute: its own first, then its base's, that
  // base's base, ... (a preset's file under configs/trainers/ too). A command refuses to write
  // any of them (path_guard.hpp), and a plan file names a user's record by the first.
  std::vector<std::string> files;
  std::string description;
  std::map<std::string, std::string> versions;  // library -> the release the facts were read from
  TrainingStack facts;            // [stack] (its record pointer empty)
  std::array<LayoutRecord, 4> layouts;  // by Layout
  std::vector<Refusal> refuses;
  std::vector<FormatRecord> formats;
  std::vector<ModelFlavor> models;  // empty: the trainer runs any model it is given
};

// The export formats a record may name (planner/export implements each).
const std::vector<std::string>& launch_format_names();  // deepspeed, accelerate, arctic, torchrun, megatron, torchtitan, swift
// The programs a torchrun format may run.
const std::vector<std::string>& torchrun_program_names();  // hf-trainer, spplan-run

// Dotted release numbers compared part by part as numbers ("5.9.0" < "5.17.0"); a part that is
// not a number compares after every number (a build of this checkout is newer than any release).
bool version_less(const std::string& a, const std::string& b);

}  // namespace spplan
