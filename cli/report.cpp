#include "cli/report.hpp"

#include <cmath>
#include <iostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cli/common.hpp"
#include "planner/config/json_file.hpp"
#include "planner/config/rope_scaling.hpp"
#include "planner/config/trainer_rules.hpp"
#include "planner/costmodel/priced_model.hpp"
#include "planner/core/parse.hpp"
#include "planner/core/units.hpp"

namespace spplan::cli {
namespace {

// What the whole cluster costs per hour at the plan's price.
double cluster_usd_per_hour(const PlanSpec& p) {
  return static_cast<double>(p.cluster.num_gpus) * p.cluster.gpu.price_per_gpu_hour;
}


std::string price_text(const PlanSpec& p, const costmodel::Estimate& e) {
  std::string text = "  price: " + format_number("$%.2f", p.cluster.gpu.price_per_gpu_hour) + " per GPU-hour, " +
                     format_number("$%.2f", cluster_usd_per_hour(p)) + " per hour for " +
                     std::to_string(p.cluster.num_gpus) + " GPUs (--price-per-gpu-hour or --price-per-node-hour sets it)\n";
  if (p.optimizer.train_steps > 0 && e.fits) {
    const double seconds = static_cast<double>(p.optimizer.train_steps) * e.time.step_time_s;
    text += "  run of " + std::to_string(p.optimizer.train_steps) + " steps (--train-steps): " + duration_text(seconds) +
            ", " + dollars_text(cluster_usd_per_hour(p) * seconds / 3600.0) + "\n";
  }
  return text;
}

// "  corpus: 1,210 sequences an epoch, 98.1% of their tokens real: 10,230 real tokens/s;
//   epoch: 412 steps, 2 h 10 min, $38.20" (nothing without documents).
std::string corpus_lines(const PlanSpec& p, const costmodel::Estimate& e) {
  if (p.documents.empty()) return "";
  const double slots = static_cast<double>(p.documents.sequences) * static_cast<double>(p.seq_len);
  std::string text = "  corpus: " + std::to_string(p.documents.sequences) + " sequences an epoch, " +
                     format_number("%.1f%%", 100.0 * p.documents.real_tokens() / slots) + " of their tokens real: " +
                     format_number("%.0f real tokens/s", e.real_tokens_per_s) + "; attention " +
                     (e.attention_per_document ? "per document"
                                               : "priced as one document a sequence (trainer \"" + p.stack.trainer +
                                                     "\"'s packed attention was not read)") +
                     "\n";
  if (e.fits) {
    text += "  epoch: " + format_number("%.0f steps, ", e.epoch_steps) + duration_text(e.epoch_s) + ", " +
            dollars_text(e.usd_per_epoch) + "\n";
  }
  return text;
}

// {"verdict": "fits" | "fits_inside_error" | "does_not_fit", "margin_pct", "memory_error_max_pct"
// (null: not measured), "measured_runs", "measured_on", "words"}.
nlohmann::json verdict_json(const MemoryVerdict& v) {
  return {{"verdict", to_string(v.verdict)},
          {"margin_pct", v.margin_pct},
          {"memory_error_max_pct", v.error.count > 0 ? nlohmann::json(v.error.max_abs_pct) : nlohmann::json()},
          {"measured_runs", v.error.count},
          {"measured_on", v.scope},
          {"words", v.words}};
}

// {"steps", "seconds", "usd"} of the run --train-steps gives; null without it, or when nothing fits.
nlohmann::json run_json(const PlanSpec& p, const costmodel::Estimate& e) {
  if (p.optimizer.train_steps <= 0 || !e.fits) return nullptr;
  const double seconds = static_cast<double>(p.optimizer.train_steps) * e.time.step_time_s;
  return {{"steps", p.optimizer.train_steps}, {"seconds", seconds}, {"usd", cluster_usd_per_hour(p) * seconds / 3600.0}};
}

}  // namespace

std::string knobs_text(const Knobs& k) {
  std::string tiled;
  if (k.tiled_mlp) tiled += "mlp";
  if (k.tiled_loss) tiled += tiled.empty() ? "loss" : ",loss";
  if (tiled.empty()) tiled = "none";
  // The ring degree shows once there is a ring (cp 1 plans read as they always have).
  std::string ring;
  if (k.cp > 1) ring = " cp=" + std::to_string(k.cp) + (k.cp_comm == CpComm::kAllGather ? "(allgather)" : "");
  return "sp=" + std::to_string(k.sp) + ring + " zero=" + std::to_string(k.zero_stage) +
         " opt=" + to_string(k.offload_optimizer) + " params=" + to_string(k.offload_params) +
         " ckpt=" + to_string(k.act_ckpt) + " tiled=" + tiled + " mb=" + std::to_string(k.micro_batch) +
         (k.grad_accum_steps > 1 ? " ga=" + std::to_string(k.grad_accum_steps) : std::string());
}

// The peak's moment: the phase, the decoder layer running then (null outside a layer), and the
// tensors alive, largest first, each with its category.
nlohmann::json peak_json(const costmodel::MemoryBreakdown& m) {
  nlohmann::json tensors = nlohmann::json::array();
  for (int i = 0; i < m.term_count; ++i) tensors.push_back({{"name", m.terms[i].name}, {"gib", gib(m.terms[i].bytes)}});
  std::stable_sort(tensors.begin(), tensors.end(),
                   [](const nlohmann::json& a, const nlohmann::json& b) { return a["gib"] > b["gib"]; });
  return {{"phase", m.peak_phase},
          {"layer", m.peak_layer >= 0 ? nlohmann::json(m.peak_layer) : nlohmann::json(nullptr)},
          {"tensors", tensors}};
}

static nlohmann::json optimizer_json(const OptimizerSpec& o) {
  nlohmann::json j{{"lr", o.lr},         {"warmup_steps", o.warmup_steps}, {"lr_schedule", to_string(o.lr_schedule)},
                   {"min_lr", o.min_lr}, {"weight_decay", o.weight_decay}, {"grad_clip", o.grad_clip}};
  j["train_steps"] = o.train_steps > 0 ? nlohmann::json(o.train_steps) : nlohmann::json();
  return j;
}

static std::string optimizer_text(const OptimizerSpec& o) {
  return "AdamW lr " + format_number(o.lr) + ", " + std::to_string(o.warmup_steps) + " warm-up steps, " +
         to_string(o.lr_schedule) + " to " + format_number(o.min_lr) + ", weight decay " + format_number(o.weight_decay) +
         ", grad clip " + format_number(o.grad_clip) +
         (o.train_steps > 0 ? ", " + std::to_string(o.train_steps) + " steps" : std::string(", steps not set"));
}

nlohmann::json band_json(const MemoryBand& band, double edge_headroom) {
  nlohmann::json j{{"scope", band.scope},
                   {"memory_runs", band.error.count},
                   {"memory_under_pct_max", band.error.max_under_pct},
                   {"memory_over_pct_max", band.error.max_over_pct},
                   {"edge_headroom", edge_headroom},
                   {"words", band.words()}};
  if (band.longest_runs.count > 0) {
    j["published_longest_runs"] = {
        {"count", band.longest_runs.count}, {"ratio_min", band.longest_runs.min}, {"ratio_max", band.longest_runs.max}};
  }
  return j;
}

// What a plan over a corpus (PlanSpec::documents) answers: null without one.
nlohmann::json corpus_json(const PlanSpec& p, const costmodel::Estimate& e) {
  if (p.documents.empty()) return nullptr;
  return {{"sequences", p.documents.sequences},
          {"real_tokens", p.documents.real_tokens()},
          {"real_tokens_per_s", e.real_tokens_per_s},
          {"attention", e.attention_per_document ? "per document" : "as one document a sequence (the trainer's packed attention not read)"},
          {"epoch_steps", e.epoch_steps},
          {"epoch_s", e.epoch_s},
          {"usd_per_epoch", e.usd_per_epoch}};
}

nlohmann::json estimate_json(const PlanSpec& p, const costmodel::Estimate& e) {
  const auto& m = e.memory;
  nlohmann::json memory = {
      {"total_gib", gib(m.total_bytes())},
      {"allocated_gib", gib(m.total_bytes() - m.overhead_bytes)},
      {"needed_gib", gib(m.needed_bytes())},
      {"capacity_gib", gib(e.capacity_bytes)},
      {"params_gib", gib(m.params_bytes)},
      {"grads_gib", gib(m.grads_bytes)},
      {"optimizer_gib", gib(m.optimizer_bytes)},
      {"activations_gib", gib(m.activations_bytes)},
      {"logits_gib", gib(m.logits_bytes)},
      {"buffers_gib", gib(m.buffers_bytes)},
      {"overhead_gib", gib(m.overhead_bytes)},
      {"peak_phase", m.peak_phase},
      {"peak", peak_json(m)}};
  const auto& t = e.time;
  // Each of the trainer's formats: null when it launches this plan, else why not (so that a
  // knob set no format launches says so).
  nlohmann::json exports = nlohmann::json::object();
  for (const auto& [format, why] : format_verdicts(p)) exports[format] = why.empty() ? nlohmann::json() : nlohmann::json(why);
  return {{"model", p.model.name},
          {"gpu", p.cluster.gpu.name},
          {"gpus", p.cluster.num_gpus},
          {"seq", p.seq_len},
          {"trainer", p.stack.trainer},
          {"attention", to_string(p.stack.attention)},
          {"exports", exports},
          {"launchable", some_format_launches(p)},
          {"knobs", knobs_json(p.knobs)},
          {"rope", rope_text(p.model.rope_scaling)},
          {"priced_model", costmodel::priced_model_lines(p).present()},  // the report's model lines
          {"encoder_params", p.model.encoder_params},
          {"encoders_left_out", p.model.encoders_left_out},
          {"encoders_frozen", p.encoders_frozen()},
          {"optimizer", optimizer_json(p.optimizer)},
          {"dp", p.dp()},
          {"global_batch", search::global_batch(p)},  // sequences per optimizer step: micro batch x accumulation x dp
          {"fits", e.fits},
          {"reason", e.reason()},
          {"memory", memory},
          {"host_memory_gib_per_node", gib(e.host.total_bytes())},
          {"host_memory", {{"optimizer_gib", gib(e.host.optimizer_bytes)},
                           {"params_gib", gib(e.host.params_bytes)},
                           {"activations_gib", gib(e.host.activations_bytes)},
                           {"capacity_gib", gib(e.host_capacity_bytes)},
                           {"nvme_gib", gib(e.host.nvme_bytes)}}},
          {"step_time_s", t.step_time_s},
          {"serial_step_time_s", t.serial_step_time_s},
          {"time", {{"compute_s", t.compute_s}, {"a2a_s", t.a2a_s}, {"cp_comm_s", t.cp_comm_s},
                    {"exposed_cp_s", t.exposed_cp_s}, {"zero_comm_s", t.zero_comm_s},
                    {"offload_s", t.offload_s}, {"optimizer_s", t.optimizer_s},
                    {"exposed_a2a_s", t.exposed_a2a_s}, {"exposed_zero_s", t.exposed_zero_s},
                    {"exposed_offload_s", t.exposed_offload_s}}},
          {"tokens_per_step", e.tokens_per_step},
          {"tokens_per_s", e.tokens_per_s},
          {"tflops_per_gpu", e.tflops_per_gpu},
          {"mfu", e.mfu},
          {"usd_per_million_tokens", e.usd_per_million_tokens},
          {"corpus", corpus_json(p, e)},
          {"price_per_gpu_hour", p.cluster.gpu.price_per_gpu_hour},
          {"usd_per_hour", cluster_usd_per_hour(p)},
          {"run", run_json(p, e)},
          {"verdict", verdict_json(verdict_of(p, e))},
          // The ranking's group (search.hpp is_safe): null when it does not fit.
          {"group", e.fits ? nlohmann::json(e.free_memory_pct() > search::safe_margin_pct(p) ? "safe" : "risky")
                           : nlohmann::json()}};
}

// "  exports: torchrun, accelerate" or, when none launches the plan, each format with why not.
std::string exports_text(const PlanSpec& p) {
  std::vector<std::string> launch, refuse;
  for (const auto& [format, why] : format_verdicts(p)) {
    if (why.empty()) {
      launch.push_back(format);
    } else {
      refuse.push_back(format + ": " + why);
    }
  }
  std::string text = "  exports: " + (launch.empty() ? std::string("none") : join(launch, ", ")) + "\n";
  if (!some_format_launches(p)) {
    text += "  warning: no format of trainer \"" + p.stack.trainer + "\" launches this plan (" + join(refuse, "; ") + ")\n";
  }
  return text;
}

std::string estimate_text(const PlanSpec& p, const costmodel::Estimate& e) {
  const auto& m = e.memory;
  std::ostringstream o;
  o << p.model.name << " on " << p.cluster.num_gpus << "x " << p.cluster.gpu.name << ", seq " << p.seq_len
    << " tokens, " << p.stack.trainer << ", dp=" << p.dp() << " " << knobs_text(p.knobs) << "\n";
  for (const std::string& line : costmodel::priced_model_lines(p).present()) o << "  " << line << "\n";
  o << "  optimizer: " << optimizer_text(p.optimizer) << "\n";
  o << exports_text(p);
  o << "  fits: " << (e.fits ? "yes" : "NO (" + e.reason() + ")") << "\n";
  if (e.fits) o << "  verdict: " << verdict_of(p, e).words << "\n";
  // With expandable segments the step needs less than the peak a run reserves when memory is
  // plentiful: the first is what fits is judged on, the second is said beside it.
  o << "  GPU memory per GPU: " << format_number("%.1f", gib(m.needed_bytes())) << " of "
    << format_number("%.1f", gib(e.capacity_bytes)) << " GiB, peak at " << m.peak_phase
    << (m.peak_layer >= 0 ? " of layer " + std::to_string(m.peak_layer) : std::string()) << "\n";
  if (m.slack_given_back_bytes > 0) {
    o << "    " << format_number("%.1f", gib(m.total_bytes())) << " GiB reserved where memory is plentiful: the allocator's "
      << format_number("%.2f", gib(m.slack_given_back_bytes)) << " GiB more slack, given back near the limit (expandable segments)\n";
  }
  const std::pair<const char*, double> rows[] = {
      {"params", m.params_bytes},           {"grads", m.grads_bytes},   {"optimizer", m.optimizer_bytes},
      {"activations", m.activations_bytes}, {"logits", m.logits_bytes}, {"buffers", m.buffers_bytes},
      {"overhead", m.overhead_bytes}};
  for (const auto& [name, bytes] : rows) {
    o << "    " << name << std::string(12 - std::string(name).size(), ' ') << format_number("%8.2f GiB", gib(bytes))
      << "\n";
  }
  std::vector<costmodel::MemoryTerm> terms(m.terms.begin(), m.terms.begin() + m.term_count);
  std::stable_sort(terms.begin(), terms.end(), [](const auto& a, const auto& b) { return a.bytes > b.bytes; });
  o << "  at the peak:\n";
  for (const auto& t : terms) o << "    " << format_number("%8.2f GiB", gib(t.bytes)) << "  " << t.name << "\n";
  o << "  host memory per node: " << format_number("%.1f", gib(e.host.total_bytes())) << " of "
    << format_number("%.0f", gib(e.host_capacity_bytes)) << " GiB\n";
  if (e.host.nvme_bytes > 0) {
    o << "  NVMe per node: " << format_number("%.1f", gib(e.host.nvme_bytes))
      << " GiB (what ZeRO-Infinity swaps to the drives: optimizer state, parameter partitions)\n";
  }
  o << "  step time: " << format_number("%.3f s", e.time.step_time_s)
    << (e.time.step_time_s >= 60 ? " = " + duration_text(e.time.step_time_s) : std::string()) << " (serial "
    << format_number("%.3f s", e.time.serial_step_time_s) << "; exposed a2a "
    << format_number("%.3f s", e.time.exposed_a2a_s)
    << (p.knobs.cp > 1 ? ", ring " + format_number("%.3f s", e.time.exposed_cp_s) + " of " +
                             format_number("%.3f s", e.time.cp_comm_s)
                       : std::string())
    << ", zero " << format_number("%.3f s", e.time.exposed_zero_s)
    << ", offload " << format_number("%.3f s", e.time.exposed_offload_s) << ", optimizer "
    << format_number("%.3f s", e.time.optimizer_s) << ")\n";
  o << "  throughput: " << format_number("%.0f tokens/s", e.tokens_per_s) << ", "
    << format_number("%.1f TFLOPs/GPU", e.tflops_per_gpu) << ", MFU " << format_number("%.1f%%", 100 * e.mfu) << ", "
    << format_number("$%.3f", e.usd_per_million_tokens) << " per million tokens\n";
  o << price_text(p, e);
  o << corpus_lines(p, e);
  return o.str();
}

namespace {

struct Safety {
  ErrorStats error;   // count 0: not measured, the default headroom holds
  std::string scope;  // "arctic on h100-80gb": whose runs measured it
  int safe = 0, risky = 0;
  const search::RankedPlan* fastest_risky = nullptr;  // faster than the best safe plan
  size_t fastest_risky_rank = 0;
};

Safety safety_of(const std::vector<search::RankedPlan>& ranked) {
  Safety s;
  const PlanSpec& plan = ranked.front().plan;
  s.error = measured_memory_error(plan, measured_accuracy(), &s.scope);
  if (s.error.count == 0) s.scope = plan.stack.trainer + " on " + plan.cluster.gpu.measured_as();
  for (const auto& p : ranked) ++(search::is_safe(p) ? s.safe : s.risky);
  s.fastest_risky = search::fastest_risky_beyond_best_safe(ranked);
  if (s.fastest_risky != nullptr) s.fastest_risky_rank = static_cast<size_t>(s.fastest_risky - ranked.data()) + 1;
  return s;
}

// Under --risky with a risky row 1: the best safe plan and its rank (null: none, or row 1 is safe).
const search::RankedPlan* safe_below_risky_row_one(const std::vector<search::RankedPlan>& ranked, size_t* rank) {
  if (search::is_safe(ranked.front())) return nullptr;
  for (size_t i = 0; i < ranked.size(); ++i) {
    if (search::is_safe(ranked[i])) {
      *rank = i + 1;
      return &ranked[i];
    }
  }
  return nullptr;
}

const search::RankedPlan* best_safe(const std::vector<search::RankedPlan>& ranked) {
  for (const auto& p : ranked) {
    if (search::is_safe(p)) return &p;
  }
  return nullptr;
}

double speed_gain_pct(const search::RankedPlan& faster, const search::RankedPlan& slower) {
  return 100.0 * (faster.estimate.tokens_per_s / slower.estimate.tokens_per_s - 1.0);
}

}  // namespace

std::string safety_text(const std::vector<search::RankedPlan>& ranked, search::Ranking ranking) {
  if (ranked.empty()) return "";
  const Safety s = safety_of(ranked);
  const PlanSpec& plan = ranked.front().plan;
  const std::string pct = format_number("%.1f%%", search::safe_margin_pct(plan));
  std::string text = "safe: more than " + pct + " of GPU memory free, ";
  text += s.error.count > 0 ? "the largest memory error measured (" + std::to_string(s.error.count) +
                                  (s.error.count == 1 ? " run of " : " runs of ") + s.scope + ")"
                            : "a default headroom: no memory error was measured for " + s.scope +
                                  " (the largest measured for any trainer on any GPU, rounded up)";
  text += "; " + std::to_string(s.safe) + " safe, " + std::to_string(s.risky) + " risky (may not fit when it runs)";
  text += ranking == search::Ranking::kSpeedOnly ? "; --risky: ranked by speed alone\n" : "; safe plans rank first (--risky ranks by speed alone)\n";
  size_t safe_rank = 0;
  if (s.safe == 0) {
    text += "no plan is safe: each leaves at most " + pct + " of GPU memory free (--headroom or more GPUs)\n";
  } else if (ranking == search::Ranking::kSpeedOnly) {
    if (const search::RankedPlan* safe = safe_below_risky_row_one(ranked, &safe_rank)) {
      text += "best safe plan: rank " + std::to_string(safe_rank) + ", " + knobs_text(safe->plan.knobs) + ": " +
              format_number("%.0f%%", 100.0 * (1.0 - safe->estimate.tokens_per_s / ranked.front().estimate.tokens_per_s)) +
              " slower than rank 1, " + format_number("%.1f%%", safe->estimate.free_memory_pct()) + " free\n";
    }
  } else if (s.fastest_risky != nullptr) {
    const search::RankedPlan& r = *s.fastest_risky;
    text += "fastest risky plan: rank " + std::to_string(s.fastest_risky_rank) + ", " + knobs_text(r.plan.knobs) + ": " +
            search::risky_beside_safe_words(r, *best_safe(ranked)) + "\n";
  }
  return text;
}

nlohmann::json safety_json(const std::vector<search::RankedPlan>& ranked, search::Ranking ranking) {
  if (ranked.empty()) return nullptr;
  const Safety s = safety_of(ranked);
  nlohmann::json j{{"ranking", ranking == search::Ranking::kSpeedOnly ? "speed_only" : "safe_first"},
                   {"margin_pct", search::safe_margin_pct(ranked.front().plan)},
                   {"measured", s.error.count > 0},
                   {"measured_runs", s.error.count},
                   {"measured_on", s.scope},
                   {"safe", s.safe},
                   {"risky", s.risky},
                   {"words", safety_text(ranked, ranking)},
                   {"fastest_risky", nullptr}};
  size_t safe_rank = 0;
  const search::RankedPlan* safe =
      ranking == search::Ranking::kSpeedOnly ? safe_below_risky_row_one(ranked, &safe_rank) : nullptr;
  j["best_safe"] = nullptr;
  if (safe != nullptr) {
    j["best_safe"] = {{"rank", safe_rank},
                      {"knobs", knobs_text(safe->plan.knobs)},
                      {"speed_loss_pct", 100.0 * (1.0 - safe->estimate.tokens_per_s / ranked.front().estimate.tokens_per_s)},
                      {"margin_pct", safe->estimate.free_memory_pct()}};
  }
  if (s.fastest_risky != nullptr && ranking == search::Ranking::kSafeFirst) {
    const search::RankedPlan& r = *s.fastest_risky;
    j["fastest_risky"] = {{"rank", s.fastest_risky_rank},
                          {"knobs", knobs_text(r.plan.knobs)},
                          {"speed_gain_pct", speed_gain_pct(r, *best_safe(ranked))},
                          {"margin_pct", r.estimate.free_memory_pct()},
                          {"held_against_pct", search::safe_margin_pct(r.plan)}};
  }
  return j;
}

std::string dollars_text(double usd) { return usd < 100 ? format_number("$%.2f", usd) : "$" + count_text(usd); }

std::string json_text(nlohmann::json j) { return dump_utf8(std::move(j), 2); }

void print_json(nlohmann::json j) { std::cout << json_text(std::move(j)) << "\n"; }

}  // namespace spplan::cli
