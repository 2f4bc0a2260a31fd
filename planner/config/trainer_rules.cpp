#include "planner/config/trainer_rules.hpp"

#include <algorithm>
#include <functional>
#include <numeric>

#include "planner/config/loaders.hpp"
#include "planner/core/parse.hpp"

namespace spplan {
namespace {

// The value a rule's key has in the plan: an index for named values and booleans, else the number.
int64_t value_of(RuleKey key, const PlanSpec& plan) {
  const Knobs& k = plan.knobs;
  switch (key) {
    case RuleKey::kLayout: return static_cast<int64_t>(layout_of(k));
    case RuleKey::kSp: return k.sp;
    case RuleKey::kCp: return k.cp;
    case RuleKey::kCpComm: return static_cast<int64_t>(k.cp_comm);
    case RuleKey::kZeroStage: return k.zero_stage;
    case RuleKey::kOffloadOptimizer: return static_cast<int64_t>(k.offload_optimizer);
    case RuleKey::kOffloadParams: return static_cast<int64_t>(k.offload_params);
    case RuleKey::kActCkpt: return static_cast<int64_t>(k.act_ckpt);
    case RuleKey::kTiledMlp: return k.tiled_mlp ? 1 : 0;
    case RuleKey::kTiledLoss: return k.tiled_loss ? 1 : 0;
    case RuleKey::kMicroBatch: return k.micro_batch;
    case RuleKey::kGradAccumSteps: return k.grad_accum_steps;
    case RuleKey::kPrecision: return static_cast<int64_t>(k.precision);
    case RuleKey::kNodes: return plan.cluster.num_nodes();
    case RuleKey::kAttention: return static_cast<int64_t>(plan.stack.attention);
    case RuleKey::kExperts: return plan.model.num_experts;
    case RuleKey::kSandwichNorms: return plan.model.sandwich_norms ? 1 : 0;
    case RuleKey::kAttentionSinks: return plan.model.attention_sinks ? 1 : 0;
    case RuleKey::kGlmMixture: return plan.model.glm_mixture() ? 1 : 0;
    case RuleKey::kPartialRope: return plan.model.partial_rotary_factor < 1.0 ? 1 : 0;
    case RuleKey::kWindowedAndFullLayers: {
      const ModelSpec& m = plan.model;
      return m.windows(plan.seq_len) && m.full_attention_layers > 0 ? 1 : 0;
    }
    case RuleKey::kMultimodalEncoders: return plan.model.has_encoders() ? 1 : 0;
    case RuleKey::kCausalLmClass: return plan.model.causal_lm_class ? 1 : 0;
    case RuleKey::kFreezeEncoders: return plan.encoders_frozen() ? 1 : 0;
  }
  return 0;
}

// The refusal lists a verdict reads: the trainer's, and a format's besides for an export.
using RuleSets = std::vector<const std::vector<Refusal>*>;

bool holds(const RuleTest& t, int64_t v) {
  switch (t.op) {
    case RuleTest::Op::kIn: return std::find(t.values.begin(), t.values.end(), v) != t.values.end();
    case RuleTest::Op::kGreater: return v > t.values[0];
    case RuleTest::Op::kLess: return v < t.values[0];
    case RuleTest::Op::kAtLeast: return v >= t.values[0];
    case RuleTest::Op::kAtMost: return v <= t.values[0];
    case RuleTest::Op::kNot: return v != t.values[0];
  }
  return false;
}

bool holds(const Refusal& r, const PlanSpec& plan) {
  if (!r.applies) return false;
  for (const RuleTest& t : r.when) {
    if (!holds(t, value_of(t.key, plan))) return false;
  }
  return true;
}

const Refusal* first_holding(const std::vector<Refusal>& rules, const PlanSpec& plan) {
  for (const Refusal& r : rules) {
    if (holds(r, plan)) return &r;
  }
  return nullptr;
}

}  // namespace

const TrainerRecord& record_of(const PlanSpec& plan) {
  if (plan.stack.record) return *plan.stack.record;
  if (plan.stack.trainer == "arctic") {
    static const std::shared_ptr<const TrainerRecord> kArctic = trainer_stack("arctic").record;
    return *kArctic;
  }
  return *trainer_stack(plan.stack.trainer).record;  // the loader's cache keeps it past the temporary stack
}

std::string trainer_quoted(const PlanSpec& plan) {
  const std::string& name = plan.stack.record ? plan.stack.record->name : plan.stack.trainer;
  const std::string quoted = "trainer \"" + name + "\"";
  return name == plan.stack.trainer ? quoted : quoted + " (" + plan.stack.trainer + ")";
}

const LayoutRecord& layout_record(const PlanSpec& plan) {
  return record_of(plan).layouts[static_cast<size_t>(layout_of(plan.knobs))];
}

namespace {

// The names a named key's values go by; empty for numbers.
const std::vector<std::string>& names_of(RuleKey key) {
  static const std::vector<std::string> kBool{"false", "true"}, kNone;
  if (rule_key_is_boolean(key)) return kBool;
  switch (key) {
    case RuleKey::kLayout: return layout_names();
    case RuleKey::kCpComm: return cp_comm_names();
    case RuleKey::kOffloadOptimizer:
    case RuleKey::kOffloadParams: return offload_device_names();
    case RuleKey::kActCkpt: return act_ckpt_names();
    case RuleKey::kPrecision: return precision_names();
    case RuleKey::kAttention: return attention_kernel_names();
    default: return kNone;
  }
}

std::string value_text(RuleKey key, int64_t v) {
  const auto& names = names_of(key);
  if (names.empty()) return std::to_string(v);
  const bool quoted = !rule_key_is_boolean(key);
  return quoted ? "\"" + names.at(static_cast<size_t>(v)) + "\"" : names.at(static_cast<size_t>(v));
}

// The plan key a rule key names in messages (plan_rules.hpp's WhereFn keys).
std::string plan_key(RuleKey key, const PlanSpec& plan) {
  switch (key) {
    case RuleKey::kLayout: return plan.knobs.cp > 1 ? "cp" : "sp";
    case RuleKey::kNodes: return "num_gpus";
    default: return rule_key_is_model(key) ? "model" : rule_key_names()[static_cast<size_t>(key)];
  }
}

// The test a refusal is reported by: its first on a knob the user sets (not the layout, the node
// count or the kernel, which follow from other choices), else its first.
// A rule on the model alone is reported by what the model has (a boolean key that is true), not
// by what it lacks (partial_rope true with glm_mixture false names the partial RoPE).
size_t reported_test(const Refusal& r) {
  for (size_t i = 0; i < r.when.size(); ++i) {
    const RuleKey k = r.when[i].key;
    if (k != RuleKey::kLayout && k != RuleKey::kNodes && k != RuleKey::kAttention && !rule_key_is_model(k)) return i;
  }
  for (size_t i = 0; i < r.when.size(); ++i) {
    const RuleTest& t = r.when[i];
    if (rule_key_is_model(t.key) && rule_key_is_boolean(t.key) && t.op == RuleTest::Op::kIn && t.values == std::vector<int64_t>{1}) {
      return i;
    }
  }
  return 0;
}

// Sets one named or small key of the plan (the ones "allowed:" enumerates); false for the others.
bool set_value(PlanSpec* plan, RuleKey key, int64_t v) {
  Knobs& k = plan->knobs;
  switch (key) {
    case RuleKey::kCpComm: k.cp_comm = static_cast<CpComm>(v); return true;
    case RuleKey::kZeroStage: k.zero_stage = v; return true;
    case RuleKey::kOffloadOptimizer: k.offload_optimizer = static_cast<OffloadDevice>(v); return true;
    case RuleKey::kOffloadParams: k.offload_params = static_cast<OffloadDevice>(v); return true;
    case RuleKey::kActCkpt: k.act_ckpt = static_cast<ActCkpt>(v); return true;
    case RuleKey::kTiledMlp: k.tiled_mlp = v != 0; return true;
    case RuleKey::kTiledLoss: k.tiled_loss = v != 0; return true;
    case RuleKey::kPrecision: k.precision = static_cast<Precision>(v); return true;
    case RuleKey::kAttention: plan->stack.attention = static_cast<AttentionKernel>(v); return true;
    case RuleKey::kFreezeEncoders: plan->stack.freezes_encoders = v != 0; return true;
    default: return false;
  }
}

// What the reported test's key (r.when[reported]) may be instead, the other knobs as in the plan:
// each value `passes` (the trainer runs it, or the format expresses it). Numbers the rule compares
// are said as the bound. Failing every value (other knobs refused too), it names the values no rule
// on this key refuses.
std::string allowed_text(const Refusal& r, size_t reported, const PlanSpec& plan,
                         const std::function<bool(const PlanSpec&)>& passes, const RuleSets& rules) {
  const RuleTest& t = r.when[reported];
  if (t.key == RuleKey::kExperts) return "a dense model, or a trainer that runs experts";
  if (t.key == RuleKey::kSandwichNorms) return "a model with two norms a layer, or a trainer that runs Gemma's four";
  // A model with sinks trains on flex alone (plan_rules.cpp check_attention_sinks): no other kernel is allowed.
  if (t.key == RuleKey::kAttentionSinks || (t.key == RuleKey::kAttention && plan.model.attention_sinks)) {
    return "a model without attention sinks, or the trainer hf at sp 1 with flex";
  }
  if (t.key == RuleKey::kGlmMixture) return "a Qwen3-MoE or Mixtral mixture, or a trainer that runs GLM-4.5's";
  if (t.key == RuleKey::kPartialRope) return "a model that rotates whole heads, or a trainer that runs partial RoPE";
  if (t.key == RuleKey::kWindowedAndFullLayers) {
    return "at most " + std::to_string(plan.model.sliding_window) + " tokens, or a trainer that windows some layers only";
  }
  if (t.key == RuleKey::kMultimodalEncoders) {
    return "the language model's own config (its text_config alone), or a trainer that loads the multimodal model";
  }
  if (t.key == RuleKey::kFreezeEncoders) {
    return "the encoders trained (--train-encoders; a plan file's freeze_encoders = false), or a trainer that freezes "
           "them";
  }
  if (t.key == RuleKey::kCausalLmClass) {
    return "a model AutoModelForCausalLM builds, or a trainer that loads it through AutoModelForImageTextToText";
  }
  if (t.key == RuleKey::kNodes && t.op == RuleTest::Op::kGreater) {  // a GPU count on that many whole nodes
    return "at most " + std::to_string(t.values[0] * plan.cluster.gpus_per_node()) + " GPUs (" +
           std::to_string(t.values[0]) + " node" + (t.values[0] == 1 ? "" : "s") + ")";
  }
  switch (t.op) {
    case RuleTest::Op::kGreater: return "at most " + std::to_string(t.values[0]);
    case RuleTest::Op::kLess: return "at least " + std::to_string(t.values[0]);
    case RuleTest::Op::kAtLeast: return "below " + std::to_string(t.values[0]);
    case RuleTest::Op::kAtMost: return "above " + std::to_string(t.values[0]);
    case RuleTest::Op::kNot: return std::to_string(t.values[0]);
    case RuleTest::Op::kIn: break;
  }
  if (t.key == RuleKey::kLayout) {  // the trainer's layouts this rule leaves
    std::vector<std::string> ok;
    for (size_t l = 0; l < layout_names().size(); ++l) {
      const bool refused = std::find(t.values.begin(), t.values.end(), static_cast<int64_t>(l)) != t.values.end();
      if (record_of(plan).layouts[l].runs && !refused) ok.push_back(layout_names()[l]);
    }
    return "the layouts " + join(ok, ", ");
  }
  const auto& names = names_of(t.key);
  const int64_t count = t.key == RuleKey::kZeroStage ? 4 : static_cast<int64_t>(names.size());
  if (count == 0) return "other than " + join_ints(t.values);
  const auto key_clear = [&](const PlanSpec& p) {
    for (const std::vector<Refusal>* list : rules) {
      for (const Refusal& o : *list) {
        const bool on_key = std::any_of(o.when.begin(), o.when.end(), [&](const RuleTest& u) { return u.key == t.key; });
        if (on_key && holds(o, p)) return false;
      }
    }
    return true;
  };
  std::vector<std::string> ok, lifted;
  for (int64_t v = 0; v < count; ++v) {
    PlanSpec other = plan;
    if (!set_value(&other, t.key, v)) continue;
    const std::string name = names.empty() ? std::to_string(v) : names[static_cast<size_t>(v)];
    if (passes(other)) ok.push_back(name);
    if (key_clear(other)) lifted.push_back(name);
  }
  if (!ok.empty()) return join(ok, ", ");
  if (!lifted.empty()) return join(lifted, ", ") + " (the plan has other refused knobs too)";
  return "no value of " + rule_key_names()[static_cast<size_t>(t.key)] + " with the other knobs as they are";
}

// `where(key): value V [with k2 V2, ...]`: the knob set a rule matched, named as the user gave it,
// by its test r.when[reported].
std::string matched_text(const Refusal& r, size_t reported, const PlanSpec& plan, const WhereFn& where) {
  const RuleKey key = r.when[reported].key;
  std::string value = value_text(key, value_of(key, plan));
  if (key == RuleKey::kNodes) {
    value = std::to_string(plan.cluster.num_gpus) + " (" + std::to_string(plan.cluster.num_nodes()) + " nodes)";
  } else if (key == RuleKey::kLayout) {
    value = std::to_string(plan.knobs.cp > 1 ? plan.knobs.cp : plan.knobs.sp) + " (layout " + to_string(layout_of(plan.knobs)) + ")";
  } else if (key == RuleKey::kExperts) {
    value = "\"" + printable(plan.model.name) + "\" (" + std::to_string(plan.model.num_experts) + " experts)";
  } else if (key == RuleKey::kSandwichNorms) {
    value = "\"" + printable(plan.model.name) + "\" (four norms a layer: sandwich_norms)";
  } else if (key == RuleKey::kAttentionSinks) {
    value = "\"" + printable(plan.model.name) + "\" (a sink logit per head: attention_sinks)";
  } else if (key == RuleKey::kGlmMixture) {
    value = "\"" + printable(plan.model.name) + "\" (GLM-4.5's mixture: a shared expert, dense first layers, a sigmoid router)";
  } else if (key == RuleKey::kPartialRope) {
    value = "\"" + printable(plan.model.name) + "\" (RoPE on " + format_number(plan.model.partial_rotary_factor) +
            " of each head: partial_rotary_factor)";
  } else if (key == RuleKey::kWindowedAndFullLayers) {
    const ModelSpec& m = plan.model;
    value = "\"" + printable(m.name) + "\" (a " + std::to_string(m.sliding_window) + "-token window on " +
            std::to_string(m.windowed_layers()) + " of " + std::to_string(m.num_hidden_layers) + " layers)";
  } else if (key == RuleKey::kMultimodalEncoders) {
    value = "\"" + printable(plan.model.name) + "\" (a multimodal config: encoders beside the language model)";
  } else if (key == RuleKey::kAttention && !plan.attention_named && plan.model.attention_sinks) {
    value += " (the kernel " + printable(plan.model.name) + "'s attention sinks train on: attention_sinks)";
  } else if (key == RuleKey::kCausalLmClass) {
    value = "\"" + printable(plan.model.name) + "\" (a multimodal config AutoModelForCausalLM does not build)";
  }
  std::string text = where(plan_key(key, plan)) + ": value " + value;
  std::string others;
  for (size_t i = 0; i < r.when.size(); ++i) {
    if (i == reported) continue;
    const RuleKey k = r.when[i].key;
    others += (others.empty() ? " with " : ", ") + rule_key_names()[static_cast<size_t>(k)] + " " +
              (k == RuleKey::kLayout ? to_string(layout_of(plan.knobs)) : value_text(k, value_of(k, plan)));
  }
  return text + others;
}

std::string refusal_text(const Refusal& r, size_t reported, const PlanSpec& plan, const WhereFn& where,
                         const std::string& verb, const std::function<bool(const PlanSpec&)>& passes,
                         const RuleSets& rules) {
  return matched_text(r, reported, plan, where) + " " + verb + " (" + r.why +
         "; allowed: " + allowed_text(r, reported, plan, passes, rules) + ")";
}


// The bundled trainers whose records run `layout`, for a message that names where to go instead.
std::string trainers_running(Layout layout) {
  std::vector<std::string> names;
  for (const std::string& name : trainer_presets()) {
    auto stack = load_trainer(name);
    if (stack.ok() && stack->record->layouts[static_cast<size_t>(layout)].runs) names.push_back(name);
  }
  return names.empty() ? "none bundled" : join(names, ", ");
}

bool flavor_matches(const ModelFlavor& f, const ModelSpec& m) {
  return f.num_hidden_layers == m.num_hidden_layers && f.hidden_size == m.hidden_size &&
         f.num_attention_heads == m.num_attention_heads && f.num_key_value_heads == m.num_key_value_heads &&
         f.head_dim == m.head_dim && f.intermediate_size == m.intermediate_size && f.vocab_size == m.vocab_size &&
         f.tie_word_embeddings == m.tie_word_embeddings && f.qk_norm == m.qk_norm && f.rope_theta == m.rope_theta &&
         !m.attention_bias && !m.is_moe() && m.sliding_window == 0 && !m.sandwich_norms;
}

// A trainer that builds its models by name runs only those.
bool model_built(const PlanSpec& plan) { return record_of(plan).models.empty() || model_flavor(plan) != nullptr; }

Status check_model_built(const PlanSpec& plan, const WhereFn& where) {
  if (model_built(plan)) return Status::ok();
  std::vector<std::string> names;
  for (const ModelFlavor& f : record_of(plan).models) names.push_back(f.name + " " + f.flavor);
  // printable(): a config.json's "name" is the user's text, newlines and all (one line, STYLE.md).
  return Status::invalid(where("model") + ": value \"" + printable(plan.model.name) + "\" is not a model " +
                         trainer_quoted(plan) +
                         " builds (it builds its models by name, and none has this one's shape; allowed: " +
                         join(names, ", ") + ")");
}

// The layout, its ring variant and Ulysses' split: what every trainer's record states.
Status check_layout(const PlanSpec& plan, const WhereFn& where) {
  const Knobs& k = plan.knobs;
  const Layout layout = layout_of(k);
  const LayoutRecord& l = layout_record(plan);
  if (!l.runs) {
    const std::string key = k.cp > 1 ? "cp" : "sp";
    return Status::invalid(where(key) + ": value " + std::to_string(key == "cp" ? k.cp : k.sp) + " makes the layout " +
                           to_string(layout) + " (sp " + std::to_string(k.sp) + ", cp " + std::to_string(k.cp) +
                           "), which " + trainer_quoted(plan) + " does not run (its layouts: " +
                           layouts_run(record_of(plan)) + "; trainers that run " + to_string(layout) + ": " +
                           trainers_running(layout) + ")");
  }
  if (k.cp > 1 && std::find(l.cp_comm.begin(), l.cp_comm.end(), k.cp_comm) == l.cp_comm.end()) {
    std::vector<std::string> names;
    for (CpComm c : l.cp_comm) names.push_back(to_string(c));
    return Status::invalid(where("cp_comm") + ": value \"" + to_string(k.cp_comm) + "\" is not run by " +
                           trainer_quoted(plan) + " under layout " + to_string(layout) + " (allowed: " + join(names, ", ") +
                           ")");
  }
  if (k.sp > 1 && !l.pads && plan.seq_len % k.sp != 0) {
    return Status::invalid(where("seq_len") + ": value " + std::to_string(plan.seq_len) + " is not divisible by sp " +
                           std::to_string(k.sp) + " (" + trainer_quoted(plan) + " splits each sequence evenly over the " +
                           "Ulysses ranks and does not pad; allowed: a multiple of " + std::to_string(k.sp) + ")");
  }
  return Status::ok();
}

bool layout_runs(const PlanSpec& plan) {
  const Knobs& k = plan.knobs;
  const LayoutRecord& l = layout_record(plan);
  if (!l.runs) return false;
  if (k.cp > 1 && std::find(l.cp_comm.begin(), l.cp_comm.end(), k.cp_comm) == l.cp_comm.end()) return false;
  return !(k.sp > 1 && !l.pads && plan.seq_len % k.sp != 0);
}

// The Ulysses degree a format's tool picks for the plan's sequence-parallel ranks (sp x cp).
int64_t tool_ulysses_degree(const FormatRecord& f, const PlanSpec& plan) {
  const int64_t ranks = plan.knobs.sp * plan.knobs.cp;
  return f.ulysses_from_kv_heads ? std::gcd(plan.model.num_key_value_heads, ranks) : plan.knobs.sp;
}

bool split_expressed(const FormatRecord& f, const PlanSpec& plan) { return tool_ulysses_degree(f, plan) == plan.knobs.sp; }

Status check_split_expressed(const FormatRecord& f, const PlanSpec& plan, const WhereFn& where) {
  if (split_expressed(f, plan)) return Status::ok();
  const int64_t ranks = plan.knobs.sp * plan.knobs.cp, ulysses = tool_ulysses_degree(f, plan);
  return Status::invalid(where("sp") + ": value " + std::to_string(plan.knobs.sp) + " with cp " +
                         std::to_string(plan.knobs.cp) + " cannot be expressed for --format " + f.name +
                         " (it takes " + std::to_string(ranks) + " sequence-parallel ranks and runs Ulysses over gcd(" +
                         std::to_string(plan.model.num_key_value_heads) + " key-value heads, " + std::to_string(ranks) +
                         ") = " + std::to_string(ulysses) + " of them, a ring over the rest; allowed: sp " +
                         std::to_string(ulysses) + ", cp " + std::to_string(ranks / ulysses) + ")");
}

const FormatRecord* format_record(const PlanSpec& plan, const std::string& format) {
  for (const FormatRecord& f : record_of(plan).formats) {
    if (f.name == format) return &f;
  }
  return nullptr;
}

std::string format_names(const TrainerRecord& record) {
  std::vector<std::string> names;
  for (const FormatRecord& f : record.formats) names.push_back(f.name);
  return join(names, ", ");
}

}  // namespace

std::string layouts_run(const TrainerRecord& record) {
  std::vector<std::string> names;
  for (size_t i = 0; i < record.layouts.size(); ++i) {
    if (record.layouts[i].runs) names.push_back(layout_names()[i]);
  }
  return join(names, ", ");
}

const ModelFlavor* model_flavor(const PlanSpec& plan) {
  for (const ModelFlavor& f : record_of(plan).models) {
    if (flavor_matches(f, plan.model)) return &f;
  }
  return nullptr;
}

Status check_trainer_runs(const PlanSpec& plan, const WhereFn& where) {
  SPPLAN_RETURN_IF_ERROR(check_model_built(plan, where));
  SPPLAN_RETURN_IF_ERROR(check_layout(plan, where));
  if (const Refusal* r = first_holding(record_of(plan).refuses, plan)) {
    return Status::invalid(refusal_text(*r, reported_test(*r), plan, where, "is not run by " + trainer_quoted(plan),
                                        trainer_runs, {&record_of(plan).refuses}));
  }
  return Status::ok();
}

namespace {

// The first of `rules` that holds on the plan and tests keys `fixed` says are fixed only: it holds
// on every knob set that varies the other keys.
const Refusal* fixed_refusal(const std::vector<Refusal>& rules, const PlanSpec& plan,
                             const std::function<bool(RuleKey)>& fixed) {
  for (const Refusal& r : rules) {
    const auto on_fixed_key = [&](const RuleTest& t) { return fixed(t.key); };
    if (std::all_of(r.when.begin(), r.when.end(), on_fixed_key) && holds(r, plan)) return &r;
  }
  return nullptr;
}

// The test a fixed refusal is said by: the kernel's where it tests one (the choice the user can
// change: `--attention flash2 with layout ring`), else the one any refusal is said by.
size_t fixed_refusal_test(const Refusal& r) {
  for (size_t i = 0; i < r.when.size(); ++i) {
    if (r.when[i].key == RuleKey::kAttention) return i;
  }
  return reported_test(r);
}

// Why `f` cannot launch the plan whatever the varied keys are: its split (the pair's), or one of
// its refusals on fixed keys; "" when it may.
std::string fixed_format_reason(const FormatRecord& f, const PlanSpec& plan, const std::function<bool(RuleKey)>& fixed,
                                const WhereFn& where) {
  if (!split_expressed(f, plan)) return check_split_expressed(f, plan, where).message();
  const Refusal* r = fixed_refusal(f.refuses, plan, fixed);
  if (r == nullptr) return "";
  const auto expresses = [&](const PlanSpec& p) {
    return fixed_refusal(record_of(p).refuses, p, fixed) == nullptr && fixed_refusal(f.refuses, p, fixed) == nullptr;
  };
  return refusal_text(*r, fixed_refusal_test(*r), plan, where, "cannot be expressed for --format " + f.name, expresses,
                      {&record_of(plan).refuses, &f.refuses});
}

}  // namespace

Status check_fixed_refusals(const PlanSpec& plan, const std::function<bool(RuleKey)>& fixed, const WhereFn& where) {
  const TrainerRecord& record = record_of(plan);
  SPPLAN_RETURN_IF_ERROR(check_model_built(plan, where));  // the model's: fixed
  if (fixed(RuleKey::kLayout)) SPPLAN_RETURN_IF_ERROR(check_layout(plan, where));
  if (const Refusal* r = fixed_refusal(record.refuses, plan, fixed)) {
    // allowed: the values no such refusal holds for (the varied knobs are not the plan's to name).
    const auto runs = [&](const PlanSpec& p) { return fixed_refusal(record_of(p).refuses, p, fixed) == nullptr; };
    return Status::invalid(refusal_text(*r, fixed_refusal_test(*r), plan, where, "is not run by " + trainer_quoted(plan),
                                        runs, {&record.refuses}));
  }
  // The trainer may run it: refused still when every format that launches would refuse it.
  std::string reasons;
  for (const FormatRecord& f : record.formats) {
    if (f.component) continue;
    const std::string reason = fixed_format_reason(f, plan, fixed, where);
    if (reason.empty()) return Status::ok();
    reasons += (reasons.empty() ? "" : "; ") + reason;
  }
  return Status::invalid("no format of " + trainer_quoted(plan) + " launches what the flags ask: " + reasons);
}

bool trainer_runs(const PlanSpec& plan) {
  return model_built(plan) && layout_runs(plan) && first_holding(record_of(plan).refuses, plan) == nullptr;
}

const void* first_refusal(const PlanSpec& plan) {
  const Knobs& k = plan.knobs;
  const LayoutRecord& l = layout_record(plan);
  if (!model_built(plan)) return &record_of(plan).models;
  if (!l.runs) return &l.runs;
  if (k.cp > 1 && std::find(l.cp_comm.begin(), l.cp_comm.end(), k.cp_comm) == l.cp_comm.end()) return &l.cp_comm;
  if (k.sp > 1 && !l.pads && plan.seq_len % k.sp != 0) return &l.pads;
  return first_holding(record_of(plan).refuses, plan);
}

std::vector<const void*> format_refusals(const PlanSpec& plan) {
  std::vector<const void*> out;
  for (const FormatRecord& f : record_of(plan).formats) {
    out.push_back(split_expressed(f, plan) ? static_cast<const void*>(first_holding(f.refuses, plan))
                                           : &f.ulysses_from_kv_heads);
  }
  return out;
}

Status check_format_expresses(const PlanSpec& plan, const std::string& format, const WhereFn& where) {
  const FormatRecord* f = format_record(plan, format);
  if (f == nullptr) {
    return Status::invalid(where("trainer") + ": value \"" + plan.stack.trainer + "\" is not launched by --format " +
                           format + " (its formats: " + format_names(record_of(plan)) + ")");
  }
  SPPLAN_RETURN_IF_ERROR(check_split_expressed(*f, plan, where));
  if (const Refusal* r = first_holding(f->refuses, plan)) {
    const auto expresses = [f](const PlanSpec& p) {
      return trainer_runs(p) && split_expressed(*f, p) && first_holding(f->refuses, p) == nullptr;
    };
    return Status::invalid(refusal_text(*r, reported_test(*r), plan, where, "cannot be expressed for --format " + format,
                                        expresses, {&record_of(plan).refuses, &f->refuses}));
  }
  return Status::ok();
}

bool some_format_launches(const PlanSpec& plan) {
  for (const FormatRecord& f : record_of(plan).formats) {
    if (!f.component && split_expressed(f, plan) && first_holding(f.refuses, plan) == nullptr) return true;
  }
  return false;
}

std::vector<std::pair<std::string, std::string>> format_verdicts(const PlanSpec& plan) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const FormatRecord& f : record_of(plan).formats) {
    const Refusal* r = first_holding(f.refuses, plan);
    const Status split = check_split_expressed(f, plan, [](const std::string& key) { return key; });
    out.emplace_back(f.name, !split.is_ok() ? split.message() : r == nullptr ? std::string() : r->why);
  }
  return out;
}

AttentionKernel layout_attention(const PlanSpec& plan) {
  if (plan.knobs.precision == Precision::kFp32) return AttentionKernel::kSdpa;
  return layout_record(plan).attention;
}

// A model with attention sinks runs flex_attention, the one priced kernel that trains them
// (plan_rules.cpp check_attention_sinks); a trainer that cannot run it refuses the model.
void settle_layout_attention(PlanSpec* plan) {
  if (plan->attention_named) return;
  plan->stack.attention = plan->model.attention_sinks ? AttentionKernel::kFlex : layout_attention(*plan);
}

std::vector<AttentionKernel> searched_attention(const PlanSpec& plan) {
  std::vector<AttentionKernel> kernels{plan.stack.attention};
  if (plan.attention_named || plan.knobs.precision == Precision::kFp32 || plan.model.attention_sinks) return kernels;
  for (AttentionKernel k : layout_record(plan).also_attention) kernels.push_back(k);
  return kernels;
}

CpComm searched_cp_comm(const PlanSpec& plan) {
  const std::vector<CpComm>& runs = layout_record(plan).cp_comm;
  if (runs.empty() || std::find(runs.begin(), runs.end(), CpComm::kRing) != runs.end()) return CpComm::kRing;
  return runs.front();
}

bool sequence_padded(const PlanSpec& plan) { return layout_record(plan).pads; }

std::string torchrun_program(const PlanSpec& plan) {
  const FormatRecord* f = format_record(plan, "torchrun");
  return f == nullptr ? std::string() : f->program;
}

}  // namespace spplan
