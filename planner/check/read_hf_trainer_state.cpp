// trainer_state.json as transformers 5.24.0 writes it (trainer_callback.py TrainerState.save_to_json;
// the entries are Trainer.log's: trainer.py, "step" added to each). TRL's trainers subclass the
// Trainer and write the same file.
#include "planner/check/json_text.hpp"
#include "planner/check/readers.hpp"

namespace spplan::check {
namespace {

constexpr const char* kAllowed = "(allowed: a trainer_state.json the HF Trainer wrote)";

// With skip_memory_metrics=False the train metrics carry TrainerMemoryTracker's deltas
// (trainer_utils.py): the train stage's peak is its start (the init stage's end: what loading the
// model allocated) plus alloc_delta plus peaked_delta.
std::optional<double> gpu_peak_bytes(const nlohmann::json& train, const nlohmann::json& init) {
  const auto alloc = number_at(train, "train_mem_gpu_alloc_delta");
  const auto peaked = number_at(train, "train_mem_gpu_peaked_delta");
  if (!alloc || !peaked) return std::nullopt;
  return number_at(init, "init_mem_gpu_alloc_delta").value_or(0) + *alloc + *peaked;
}

}  // namespace

Result<RunMeasurements> read_hf_trainer_state(const std::string& where, const nlohmann::json& state) {
  const auto history = state.find("log_history");
  if (history == state.end() || !history->is_array()) {
    return Status::invalid(where + ": key \"log_history\": missing or not an array " + std::string(kAllowed));
  }
  RunMeasurements run;
  run.formats = {"hf-trainer-state"};
  nlohmann::json init;  // the entry holding the init stage's memory, when logged
  for (size_t i = 0; i < history->size(); ++i) {
    const nlohmann::json& entry = (*history)[i];
    if (!entry.is_object()) {
      return Status::invalid(where + ": key \"log_history[" + std::to_string(i) + "]\": not an object " + kAllowed);
    }
    // A step count beyond any run's (1e12) is no count: converting it to an integer would overflow.
    std::optional<double> step = number_at(entry, "step");
    if (step && !(*step >= 0 && *step <= 1e12)) step.reset();
    if (auto loss = number_at(entry, "loss")) run.train_loss = loss;
    if (auto eval = number_at(entry, "eval_loss")) run.eval_loss = eval;
    if (auto tokens = number_at(entry, "num_input_tokens_seen"); tokens && step && *step >= 1) {
      run.tokens_seen = tokens;
      run.steps = static_cast<int64_t>(*step);
    }
    if (entry.contains("init_mem_gpu_alloc_delta")) init = entry;
    const auto runtime = number_at(entry, "train_runtime");
    if (!runtime) continue;
    // The last entry: the whole train() call, its first step's warm-up included.
    if (step && *step >= 1 && *runtime > 0) run.step_times_s = {*runtime / *step};
    if (auto tps = number_at(entry, "train_tokens_per_second")) run.tokens_per_s = tps;
    if (auto peak = gpu_peak_bytes(entry, init.is_null() ? entry : init)) run.peak_allocated_bytes = peak;
  }
  return run;
}

}  // namespace spplan::check
