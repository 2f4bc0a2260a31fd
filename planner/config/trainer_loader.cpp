// Trainer records (trainer_spec.hpp): configs/trainers/NAME.toml or a user's file -> TrainingStack
// with its record. Strict as every config file: an unknown key, a value outside its names, or a
// record that contradicts itself is one line naming the file and the key.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <mutex>
#include <set>
#include <utility>

#include "planner/config/loaders.hpp"
#include "planner/config/preset_path.hpp"
#include "planner/config/toml_reader.hpp"
#include "planner/config/trainer_rules.hpp"
#include "planner/core/parse.hpp"

namespace spplan {
namespace {

constexpr int kMaxBaseDepth = 8;  // base = "x" chains: a loop or an absurd chain is refused

Status bad(const std::string& path, const std::string& key, const std::string& what) {
  return Status::invalid(path + ": key \"" + key + "\": " + what);
}

// The [stack] flags by name: what read_stack reads and a refusal's `stack` condition compares.
struct StackFlag {
  const char* key;
  bool TrainingStack::*value;
};
constexpr StackFlag kStackFlags[] = {
    {"zero3_prefetches", &TrainingStack::zero3_prefetches},
    {"loop_holds_logits", &TrainingStack::loop_holds_logits},
    {"offloaded_checkpoints_only_while_running", &TrainingStack::offloaded_checkpoints_only_while_running},
    {"reentrant_checkpoint", &TrainingStack::reentrant_checkpoint},
    {"fused_layer_kernels", &TrainingStack::fused_layer_kernels},
    {"fused_layer_kernels_with_tiled_loss", &TrainingStack::fused_layer_kernels_with_tiled_loss},
    {"tiled_loss_recomputes_chunks", &TrainingStack::tiled_loss_recomputes_chunks},
    {"step_upcasts_whole_partition", &TrainingStack::step_upcasts_whole_partition},
    {"fp32_norms_fused_on_gpu", &TrainingStack::fp32_norms_fused_on_gpu},
    {"tiled_mlp_fused_swiglu", &TrainingStack::tiled_mlp_fused_swiglu},
    {"ulysses_one_exchange", &TrainingStack::ulysses_one_exchange},
    {"rope_half_tables", &TrainingStack::rope_half_tables},
    {"sliding_window_attention", &TrainingStack::sliding_window_attention},
    {"ring_sliding_window", &TrainingStack::ring_sliding_window},
    {"window_in_masked_blocks", &TrainingStack::window_in_masked_blocks},
    {"ring_window_past_shard_only", &TrainingStack::ring_window_past_shard_only},
    {"reduces_after_backward", &TrainingStack::reduces_after_backward},
    {"ring_contiguous_shards", &TrainingStack::ring_contiguous_shards},
    {"sp_loss_in_logits_dtype", &TrainingStack::sp_loss_in_logits_dtype},
    {"moe_expert_loop", &TrainingStack::moe_expert_loop},
    {"freezes_encoders", &TrainingStack::freezes_encoders}};

const StackFlag* stack_flag(const std::string& key) {
  for (const StackFlag& f : kStackFlags) {
    if (key == f.key) return &f;
  }
  return nullptr;
}

std::string stack_flag_names() {
  std::vector<std::string> names;
  for (const StackFlag& f : kStackFlags) names.emplace_back(f.key);
  return join(names);
}

// The [stack] facts. A record without a base states every one (each with its source); with a base
// only those that differ.
Status read_stack(const std::string& path, const toml::table& table, bool complete, TrainingStack* s) {
  KeyReader r(path, table, "stack.");
  const struct {
    const char* key;
    double* value;
  } numbers[] = {{"zero3_reuse_window_elems", &s->zero3_reuse_window_elems},
                 {"zero3_persistence_threshold_elems", &s->zero3_persistence_threshold_elems}};
  for (const auto& n : numbers) SPPLAN_RETURN_IF_ERROR(r.read_nonnegative(n.key, n.value, complete));
  SPPLAN_RETURN_IF_ERROR(r.read_int("offloaded_checkpoints_on_device", &s->offloaded_checkpoints_on_device, complete, 1, 1000));
  SPPLAN_RETURN_IF_ERROR(r.read_int("allgather_kv_heads_per_call", &s->allgather_kv_heads_per_call, complete, 0, 1024));
  for (const StackFlag& f : kStackFlags) SPPLAN_RETURN_IF_ERROR(r.read_bool(f.key, &(s->*f.value), complete));
  // Optional even without a base: a record written before it was a fact keeps the whole allowance.
  SPPLAN_RETURN_IF_ERROR(r.read_bool("expandable_segments", &s->expandable_segments, false));
  // Optional: a record that does not state them was not read for packed documents.
  for (auto [key, mode] : {std::pair{"packed_attention", &s->packed_attention},
                           std::pair{"ring_packed_attention", &s->ring_packed_attention}}) {
    size_t index = static_cast<size_t>(*mode);
    SPPLAN_RETURN_IF_ERROR(r.read_choice(key, &index, false, packed_attention_names()));
    *mode = static_cast<PackedAttention>(index);
  }
  // A chunk size belongs to a loss that recomputes its chunks, and that loss needs one.
  SPPLAN_RETURN_IF_ERROR(r.read_int("tiled_loss_chunk_tokens", &s->tiled_loss_chunk_tokens, false, 0, 1 << 20));
  if (s->tiled_loss_recomputes_chunks != (s->tiled_loss_chunk_tokens > 0)) {
    return bad(path, "stack.tiled_loss_chunk_tokens",
               "value " + std::to_string(s->tiled_loss_chunk_tokens) + " does not go with tiled_loss_recomputes_chunks = " +
                   (s->tiled_loss_recomputes_chunks ? "true" : "false") +
                   " (allowed: a chunk of 1 to 1048576 tokens with a loss that recomputes its chunks, else 0 or absent)");
  }
  return r.check_no_unknown_keys();
}

Result<std::vector<std::string>> string_list(const std::string& path, const std::string& key, const toml::node& node) {
  std::vector<std::string> out;
  if (auto s = node.value<std::string>()) return std::vector<std::string>{*s};
  const toml::array* array = node.as_array();
  if (array == nullptr || array->empty()) return bad(path, key, "value " + describe(node) + " is not allowed (allowed: a name or a list of names)");
  for (const toml::node& e : *array) {
    auto s = e.value<std::string>();
    if (!s) return bad(path, key, "value " + describe(e) + " is not allowed (allowed: a name or a list of names)");
    out.push_back(*s);
  }
  return out;
}

int64_t index_in(const std::vector<std::string>& names, const std::string& name) {
  const auto it = std::find(names.begin(), names.end(), name);
  return it == names.end() ? -1 : static_cast<int64_t>(it - names.begin());
}

// "> 1", ">=2", "<4", "<=4", "!=0": a comparison with one whole number.
bool parse_comparison(const std::string& text, RuleTest* t) {
  static const struct {
    const char* op;
    RuleTest::Op value;
  } kOps[] = {{">=", RuleTest::Op::kAtLeast}, {"<=", RuleTest::Op::kAtMost}, {"!=", RuleTest::Op::kNot},
              {">", RuleTest::Op::kGreater},  {"<", RuleTest::Op::kLess}};
  for (const auto& o : kOps) {
    const std::string op = o.op;
    if (text.rfind(op, 0) != 0) continue;
    const auto n = parse_int("", text.substr(op.size()), -(int64_t{1} << 40), int64_t{1} << 40);
    if (!n.ok()) return false;
    t->op = o.value;
    t->values = {*n};
    return true;
  }
  return false;
}

// One `when` entry: a named key takes a name or a list of names, a boolean key true or false, a
// number key a whole number, a list of them, or a comparison string.
Result<RuleTest> rule_test(const std::string& path, const std::string& where, const std::string& key,
                           const toml::node& node) {
  RuleTest t;
  const int64_t k = index_in(rule_key_names(), key);
  if (k < 0) return bad(path, where, "unknown key (allowed: " + join(rule_key_names()) + ")");
  t.key = static_cast<RuleKey>(k);
  const bool boolean = rule_key_is_boolean(t.key);
  static const std::vector<std::string> kBool{"false", "true"};
  const std::vector<std::string>* names =
      boolean                                  ? nullptr
      : t.key == RuleKey::kLayout              ? &layout_names()
      : t.key == RuleKey::kCpComm              ? &cp_comm_names()
      : t.key == RuleKey::kOffloadOptimizer || t.key == RuleKey::kOffloadParams ? &offload_device_names()
      : t.key == RuleKey::kActCkpt             ? &act_ckpt_names()
      : t.key == RuleKey::kPrecision           ? &precision_names()
      : t.key == RuleKey::kAttention           ? &attention_kernel_names()
                                               : nullptr;
  if (boolean) {
    const auto b = node.value<bool>();
    if (!b || !node.is_boolean()) return bad(path, where, "value " + describe(node) + " is not allowed (allowed: true, false)");
    t.values = {*b ? 1 : 0};
    return t;
  }
  if (names != nullptr) {
    SPPLAN_ASSIGN_OR_RETURN(const std::vector<std::string> list, string_list(path, where, node));
    for (const std::string& name : list) {
      const int64_t i = index_in(*names, name);
      if (i < 0) return bad(path, where, "value \"" + printable(name) + "\" is not allowed (allowed: " + join(*names) + ")");
      t.values.push_back(i);
    }
    return t;
  }
  const std::string numbers = "a whole number, a list of them, or a comparison such as \">1\"";
  if (auto s = node.value<std::string>(); s && node.is_string()) {
    if (!parse_comparison(*s, &t)) return bad(path, where, "value \"" + printable(*s) + "\" is not allowed (allowed: " + numbers + ")");
    return t;
  }
  if (node.is_integer()) {
    t.values = {*node.value<int64_t>()};
    return t;
  }
  const toml::array* array = node.as_array();
  if (array == nullptr || array->empty()) return bad(path, where, "value " + describe(node) + " is not allowed (allowed: " + numbers + ")");
  for (const toml::node& e : *array) {
    if (!e.is_integer()) return bad(path, where, "value " + describe(e) + " is not allowed (allowed: " + numbers + ")");
    t.values.push_back(*e.value<int64_t>());
  }
  return t;
}

// A [[refuse]] entry (or a format's): when (every test holds), why, and optionally before.
Result<Refusal> read_refusal(const std::string& path, const std::string& where, const toml::node& node) {
  const toml::table* table = node.as_table();
  if (table == nullptr) return bad(path, where, "value " + describe(node) + " is not allowed (allowed: a table)");
  KeyReader r(path, *table, where + ".");
  Refusal rule;
  rule.key = where;
  SPPLAN_RETURN_IF_ERROR(r.read_string("why", &rule.why, true));
  r.mark_read("when");
  r.mark_read("before");
  r.mark_read("stack");
  SPPLAN_RETURN_IF_ERROR(r.check_no_unknown_keys());
  const toml::table* when = table->get("when") != nullptr ? table->get("when")->as_table() : nullptr;
  if (when == nullptr || when->empty()) {
    return bad(path, where + ".when", "missing or empty (required: the knobs this refuses, e.g. { zero_stage = 3 }; an "
                                      "empty one would refuse every plan)");
  }
  for (const auto& [key, value] : *when) {
    SPPLAN_ASSIGN_OR_RETURN(RuleTest t, rule_test(path, where + ".when." + std::string(key.str()), std::string(key.str()), value));
    rule.when.push_back(std::move(t));
  }
  if (const toml::node* before = table->get("before")) {
    const toml::table* versions = before->as_table();
    if (versions == nullptr) return bad(path, where + ".before", "value " + describe(*before) + " is not allowed (allowed: a table of library = \"release\")");
    for (const auto& [library, release] : *versions) {
      auto text = release.value<std::string>();
      if (!text || !release.is_string()) return bad(path, where + ".before." + std::string(library.str()), "value " + describe(release) + " is not allowed (allowed: a release such as \"5.17.0\")");
      rule.before[std::string(library.str())] = *text;
    }
  }
  if (const toml::node* stack = table->get("stack")) {
    const toml::table* flags = stack->as_table();
    if (flags == nullptr) return bad(path, where + ".stack", "value " + describe(*stack) + " is not allowed (allowed: a table of [stack] flag = true or false)");
    for (const auto& [flag, value] : *flags) {
      const std::string name(flag.str());
      if (stack_flag(name) == nullptr) return bad(path, where + ".stack." + name, "unknown key (allowed: " + stack_flag_names() + ")");
      if (!value.is_boolean()) return bad(path, where + ".stack." + name, "value " + describe(value) + " is not allowed (allowed: true, false)");
      rule.stack[name] = value.value_or(false);
    }
  }
  return rule;
}

Result<std::vector<Refusal>> read_refusals(const std::string& path, const std::string& key, const toml::node* node) {
  std::vector<Refusal> out;
  if (node == nullptr) return out;
  const toml::array* array = node->as_array();
  if (array == nullptr) return bad(path, key, "value " + describe(*node) + " is not allowed (allowed: [[" + key + "]] tables)");
  for (size_t i = 0; i < array->size(); ++i) {
    SPPLAN_ASSIGN_OR_RETURN(Refusal r, read_refusal(path, key + "[" + std::to_string(i + 1) + "]", *array->get(i)));
    out.push_back(std::move(r));
  }
  return out;
}

Status read_layouts(const std::string& path, const toml::node& node, std::array<LayoutRecord, 4>* layouts) {
  const toml::table* table = node.as_table();
  if (table == nullptr) return bad(path, "layouts", "value " + describe(node) + " is not allowed (allowed: [layouts.NAME] tables)");
  for (const auto& [name_key, value] : *table) {
    const std::string name(name_key.str()), where = "layouts." + name;
    const int64_t i = index_in(layout_names(), name);
    if (i < 0) return bad(path, where, "unknown layout (allowed: " + join(layout_names()) + ")");
    const toml::table* l = value.as_table();
    if (l == nullptr) return bad(path, where, "value " + describe(value) + " is not allowed (allowed: a table)");
    KeyReader r(path, *l, where + ".");
    LayoutRecord rec;
    rec.runs = true;
    size_t attention = 0;
    SPPLAN_RETURN_IF_ERROR(r.read_choice("attention", &attention, true, attention_kernel_names()));
    rec.attention = static_cast<AttentionKernel>(attention);
    r.mark_read("also_attention");
    if (const toml::node* also = l->get("also_attention")) {
      SPPLAN_ASSIGN_OR_RETURN(const std::vector<std::string> list, string_list(path, where + ".also_attention", *also));
      for (const std::string& a : list) {
        const int64_t ai = index_in(attention_kernel_names(), a);
        if (ai < 0 || static_cast<AttentionKernel>(ai) == rec.attention) {
          return bad(path, where + ".also_attention", "value \"" + printable(a) + "\" is not allowed (allowed: " +
                                                          join(attention_kernel_names()) + ", other than attention)");
        }
        rec.also_attention.push_back(static_cast<AttentionKernel>(ai));
      }
    }
    const auto layout = static_cast<Layout>(i);
    const bool ulysses = layout == Layout::kUlysses || layout == Layout::kUlyssesRing;
    const bool ring = layout == Layout::kRing || layout == Layout::kUlyssesRing;
    if (ulysses) SPPLAN_RETURN_IF_ERROR(r.read_bool("pads", &rec.pads, false));
    SPPLAN_RETURN_IF_ERROR(r.read_bool("state_for_unrun_params", &rec.state_for_unrun_params, false));
    if (ring) {
      r.mark_read("cp_comm");
      const toml::node* comm = l->get("cp_comm");
      if (comm == nullptr) return bad(path, where + ".cp_comm", "missing (required under a ring layout: ring, allgather or both)");
      SPPLAN_ASSIGN_OR_RETURN(const std::vector<std::string> list, string_list(path, where + ".cp_comm", *comm));
      for (const std::string& c : list) {
        const int64_t ci = index_in(cp_comm_names(), c);
        if (ci < 0) return bad(path, where + ".cp_comm", "value \"" + printable(c) + "\" is not allowed (allowed: " + join(cp_comm_names()) + ")");
        rec.cp_comm.push_back(static_cast<CpComm>(ci));
      }
    }
    SPPLAN_RETURN_IF_ERROR(r.check_no_unknown_keys());
    (*layouts)[static_cast<size_t>(i)] = rec;
  }
  return Status::ok();
}

Result<FormatRecord> read_format(const std::string& path, const std::string& where, const toml::node& node) {
  const toml::table* table = node.as_table();
  if (table == nullptr) return bad(path, where, "value " + describe(node) + " is not allowed (allowed: a table)");
  KeyReader r(path, *table, where + ".");
  FormatRecord f;
  size_t name = 0;
  SPPLAN_RETURN_IF_ERROR(r.read_choice("name", &name, true, launch_format_names()));
  f.name = launch_format_names()[name];
  SPPLAN_RETURN_IF_ERROR(r.read_bool("component", &f.component, false));
  static const std::vector<std::string> kUlyssesDegrees{"any", "gcd_kv_heads"};
  size_t ulysses = 0;
  SPPLAN_RETURN_IF_ERROR(r.read_choice("ulysses_degree", &ulysses, false, kUlyssesDegrees));
  f.ulysses_from_kv_heads = ulysses == 1;
  if (f.name == "torchrun") {
    size_t program = 0;
    SPPLAN_RETURN_IF_ERROR(r.read_choice("program", &program, true, torchrun_program_names()));
    f.program = torchrun_program_names()[program];
  }
  r.mark_read("refuse");
  SPPLAN_RETURN_IF_ERROR(r.check_no_unknown_keys());
  SPPLAN_ASSIGN_OR_RETURN(f.refuses, read_refusals(path, where + ".refuse", table->get("refuse")));
  return f;
}

// One [[models]] entry: the name the trainer knows the model by and the shapes it builds.
Result<ModelFlavor> read_model_flavor(const std::string& path, const std::string& where, const toml::node& node) {
  const toml::table* table = node.as_table();
  if (table == nullptr) return bad(path, where, "value " + describe(node) + " is not allowed (allowed: a table)");
  KeyReader r(path, *table, where + ".");
  ModelFlavor m;
  constexpr int64_t kMaxShape = int64_t{1} << 24;
  SPPLAN_RETURN_IF_ERROR(r.read_string("name", &m.name, true));
  SPPLAN_RETURN_IF_ERROR(r.read_string("flavor", &m.flavor, true));
  // Both are written into the trainer's config file as quoted strings (TorchTitan's model.name and
  // model.flavor): the characters of its names, nothing that could end the string.
  for (const auto& [key, value] : {std::pair{"name", &m.name}, std::pair{"flavor", &m.flavor}}) {
    const bool plain = !value->empty() && std::all_of(value->begin(), value->end(), [](unsigned char c) {
      return std::isalnum(c) != 0 || c == '.' || c == '_' || c == '-';
    });
    if (!plain) {
      return bad(path, where + "." + key, "value \"" + printable(*value) +
                                              "\" is not allowed (allowed: letters, digits, '.', '_' and '-')");
    }
  }
  for (auto [key, out] : {std::pair{"num_hidden_layers", &m.num_hidden_layers}, std::pair{"hidden_size", &m.hidden_size},
                          std::pair{"num_attention_heads", &m.num_attention_heads},
                          std::pair{"num_key_value_heads", &m.num_key_value_heads}, std::pair{"head_dim", &m.head_dim},
                          std::pair{"intermediate_size", &m.intermediate_size}, std::pair{"vocab_size", &m.vocab_size}}) {
    SPPLAN_RETURN_IF_ERROR(r.read_int(key, out, true, 1, kMaxShape));
  }
  SPPLAN_RETURN_IF_ERROR(r.read_bool("tie_word_embeddings", &m.tie_word_embeddings, true));
  SPPLAN_RETURN_IF_ERROR(r.read_bool("qk_norm", &m.qk_norm, true));
  SPPLAN_RETURN_IF_ERROR(r.read_positive("rope_theta", &m.rope_theta, true));
  SPPLAN_RETURN_IF_ERROR(r.check_no_unknown_keys());
  return m;
}

Status read_model_flavors(const std::string& path, const toml::node& node, std::vector<ModelFlavor>* models) {
  const toml::array* array = node.as_array();
  if (array == nullptr) return bad(path, "models", "value " + describe(node) + " is not allowed (allowed: [[models]] tables)");
  models->clear();  // a child that names models names all it builds
  for (size_t i = 0; i < array->size(); ++i) {
    SPPLAN_ASSIGN_OR_RETURN(ModelFlavor m, read_model_flavor(path, "models[" + std::to_string(i + 1) + "]", *array->get(i)));
    models->push_back(std::move(m));
  }
  return Status::ok();
}

// Only the formats the child names are replaced (or added); the rest stay the base's.
void merge_format(std::vector<FormatRecord>* formats, FormatRecord f) {
  for (FormatRecord& existing : *formats) {
    if (existing.name == f.name) {
      existing = std::move(f);
      return;
    }
  }
  formats->push_back(std::move(f));
}

Status read_versions(const std::string& path, const toml::node& node, std::map<std::string, std::string>* versions) {
  const toml::table* table = node.as_table();
  if (table == nullptr) return bad(path, "versions", "value " + describe(node) + " is not allowed (allowed: a table of library = \"release\")");
  for (const auto& [library, release] : *table) {
    auto text = release.value<std::string>();
    if (!text || !release.is_string()) {
      return bad(path, "versions." + std::string(library.str()), "value " + describe(release) + " is not allowed (allowed: a release such as \"5.24.0\")");
    }
    (*versions)[std::string(library.str())] = *text;
  }
  return Status::ok();
}

// A refusal's before: each library must be pinned in [versions]; the rule applies while one of
// them is older than the release named, and while the record's [stack] flags are its `stack`.
Status resolve_before(const std::string& path, const std::string& where, const TrainerRecord& t, Refusal* r) {
  r->applies = r->before.empty();
  for (const auto& [library, release] : r->before) {
    const auto pinned = t.versions.find(library);
    if (pinned == t.versions.end()) {
      return bad(path, where + ".before." + library, "\"" + library + "\" is not in [versions] (allowed: a library the record pins, "
                                                     "whose release the rule compares with)");
    }
    if (version_less(pinned->second, release)) r->applies = true;
  }
  for (const auto& [flag, value] : r->stack) {
    if (t.facts.*(stack_flag(flag)->value) != value) r->applies = false;
  }
  return Status::ok();
}

// A refusal that names a layout and nothing else: it refuses every plan of those layouts.
bool refuses_layout_outright(const Refusal& r, Layout layout) {
  if (!r.applies || r.when.size() != 1 || r.when[0].key != RuleKey::kLayout || r.when[0].op != RuleTest::Op::kIn) return false;
  const auto& v = r.when[0].values;
  return std::find(v.begin(), v.end(), static_cast<int64_t>(layout)) != v.end();
}

// What a record must not say about itself: a layout it runs that no format launches, no format at all.
Status check_record(const std::string& path, TrainerRecord* t) {
  if (!t->layouts[static_cast<size_t>(Layout::kNone)].runs) {
    return bad(path, "layouts.none", "missing (required: every trainer runs a plan without sequence parallelism)");
  }
  for (Refusal& r : t->refuses) SPPLAN_RETURN_IF_ERROR(resolve_before(path, r.key, *t, &r));
  bool launched = false;
  for (FormatRecord& f : t->formats) {
    for (Refusal& r : f.refuses) SPPLAN_RETURN_IF_ERROR(resolve_before(path, r.key, *t, &r));
    launched = launched || !f.component;
  }
  if (!launched) {
    return bad(path, "formats", "no format launches trainer \"" + t->name + "\" (allowed: at least one [[formats]] entry that "
                                "is not a component)");
  }
  for (size_t l = 0; l < t->layouts.size(); ++l) {
    if (!t->layouts[l].runs) continue;
    const bool some = std::any_of(t->formats.begin(), t->formats.end(), [&](const FormatRecord& f) {
      return !f.component && std::none_of(f.refuses.begin(), f.refuses.end(), [&](const Refusal& r) {
               return refuses_layout_outright(r, static_cast<Layout>(l));
             });
    });
    if (!some) {
      return bad(path, "layouts." + layout_names()[l], "the trainer runs it, but every format refuses it (a plan of this "
                                                       "layout would launch nowhere; allowed: a format that expresses it, or "
                                                       "no [layouts." + layout_names()[l] + "])");
    }
  }
  return Status::ok();
}

Result<std::shared_ptr<const TrainerRecord>> load_record(const std::string& name_or_path, const std::string& flag, int depth);

// A base named by a relative path is found beside the record that names it, as a C #include is
// beside its file: the two travel together and read the same from any working folder. A preset's
// name ("hf") and an absolute path mean what they say.
std::string base_beside(const std::string& record_path, const std::string& base) {
  namespace fs = std::filesystem;
  if (is_preset_name(base) || fs::path(base).is_absolute()) return base;
  const fs::path folder = fs::path(record_path).parent_path();
  return folder.empty() ? base : (folder / base).string();
}

// `path` absolute and tidied ("a/./b" -> "a/b"), links kept: the name a plan file writes.
std::string absolute_path(const std::string& path) {
  std::error_code error;
  const std::filesystem::path absolute = std::filesystem::absolute(path, error);
  return error ? path : absolute.lexically_normal().string();
}

Result<TrainerRecord> read_record(const std::string& path, const toml::table& table, int depth) {
  KeyReader r(path, table);
  TrainerRecord t;
  std::string base;
  SPPLAN_RETURN_IF_ERROR(r.read_string("base", &base, false));
  if (!base.empty()) {
    if (depth >= kMaxBaseDepth) return bad(path, "base", "value \"" + printable(base) + "\" makes a chain of more than " + std::to_string(kMaxBaseDepth) + " bases (a loop?)");
    SPPLAN_ASSIGN_OR_RETURN(const auto parent, load_record(base_beside(path, base), path + ": key \"base\"", depth + 1));
    t = *parent;
  }
  t.files.insert(t.files.begin(), absolute_path(path));  // before its base's
  SPPLAN_RETURN_IF_ERROR(r.read_string("name", &t.name, true));
  SPPLAN_RETURN_IF_ERROR(r.read_string("description", &t.description, false));
  t.source = path;
  for (const char* key : {"versions", "stack", "layouts", "refuse", "formats", "models"}) r.mark_read(key);
  SPPLAN_RETURN_IF_ERROR(r.check_no_unknown_keys());
  if (const toml::node* v = table.get("versions")) SPPLAN_RETURN_IF_ERROR(read_versions(path, *v, &t.versions));
  const toml::node* stack = table.get("stack");
  if (stack == nullptr && base.empty()) return bad(path, "stack", "missing (required: the [stack] facts, or base = \"PRESET\")");
  if (stack != nullptr) {
    if (!stack->is_table()) return bad(path, "stack", "value " + describe(*stack) + " is not allowed (allowed: a table)");
    SPPLAN_RETURN_IF_ERROR(read_stack(path, *stack->as_table(), base.empty(), &t.facts));
  }
  if (const toml::node* l = table.get("layouts")) {
    if (!base.empty()) t.layouts = {};  // a child that names layouts names all it runs
    SPPLAN_RETURN_IF_ERROR(read_layouts(path, *l, &t.layouts));
  }
  SPPLAN_ASSIGN_OR_RETURN(std::vector<Refusal> refuses, read_refusals(path, "refuse", table.get("refuse")));
  for (Refusal& rule : refuses) t.refuses.push_back(std::move(rule));  // added to the base's
  if (const toml::node* formats = table.get("formats")) {
    const toml::array* array = formats->as_array();
    if (array == nullptr) return bad(path, "formats", "value " + describe(*formats) + " is not allowed (allowed: [[formats]] tables)");
    std::set<std::string> seen;
    for (size_t i = 0; i < array->size(); ++i) {
      SPPLAN_ASSIGN_OR_RETURN(FormatRecord f, read_format(path, "formats[" + std::to_string(i + 1) + "]", *array->get(i)));
      if (!seen.insert(f.name).second) return bad(path, "formats[" + std::to_string(i + 1) + "].name", "value \"" + f.name + "\" given twice (allowed: each format once)");
      merge_format(&t.formats, std::move(f));
    }
  }
  if (const toml::node* models = table.get("models")) SPPLAN_RETURN_IF_ERROR(read_model_flavors(path, *models, &t.models));
  t.facts.trainer = t.name;
  SPPLAN_RETURN_IF_ERROR(check_record(path, &t));
  return t;
}

// Records by file, loaded once: the GUI re-plans on every edit, the search copies stacks by the
// thousand. An entry is never replaced, so a record lives as long as the program (record_of hands
// out references to them).
std::mutex g_cache_mutex;
std::map<std::string, std::shared_ptr<const TrainerRecord>>& cache() {
  static std::map<std::string, std::shared_ptr<const TrainerRecord>> records;
  return records;
}

Result<std::shared_ptr<const TrainerRecord>> load_record(const std::string& name_or_path, const std::string& flag, int depth) {
  SPPLAN_ASSIGN_OR_RETURN(const std::string path,
                          resolve_preset("trainers", flag, name_or_path, trainer_presets(), "a trainer TOML file"));
  {
    const std::lock_guard<std::mutex> lock(g_cache_mutex);
    if (auto it = cache().find(path); it != cache().end()) return it->second;
  }
  SPPLAN_ASSIGN_OR_RETURN(const toml::table table, parse_toml_file(path));
  SPPLAN_ASSIGN_OR_RETURN(TrainerRecord record, read_record(path, table, depth));
  auto shared = std::make_shared<const TrainerRecord>(std::move(record));
  const std::lock_guard<std::mutex> lock(g_cache_mutex);
  return cache().try_emplace(path, std::move(shared)).first->second;  // a thread that loaded it first wins
}

}  // namespace

std::vector<std::string> trainer_presets() { return list_presets("trainers"); }

Result<TrainingStack> load_trainer(std::string_view name_or_path, const std::string& flag) {
  SPPLAN_ASSIGN_OR_RETURN(const auto record, load_record(std::string(name_or_path), flag, 0));
  TrainingStack stack = record->facts;
  // A preset goes by its name; a user's file by its path, so that a plan file written with it reads it again.
  stack.trainer = is_preset_name(name_or_path) ? record->name : std::string(name_or_path);
  stack.attention = record->layouts[static_cast<size_t>(Layout::kNone)].attention;  // settle_layout_attention picks per layout
  stack.record = record;
  return stack;
}

}  // namespace spplan
