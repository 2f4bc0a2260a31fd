#include "engine/run/report.hpp"

#include <cstdio>

#include <nlohmann/json.hpp>

#include "planner/config/json_file.hpp"
#include "planner/core/units.hpp"

namespace spplan::engine {
namespace {

nlohmann::json optional_number(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); }

}  // namespace

std::string progress_line(int64_t step, int64_t total_steps, double loss, double tokens_per_s, double step_time_s,
                          int64_t peak_memory_bytes, double lr, double grad_norm) {
  char buf[320];
  std::snprintf(buf, sizeof(buf),
                "step %lld/%lld  loss %.6f  lr %.3g  grad norm %.3f  tokens/s %.1f  step %.3f s  peak memory %.1f MiB",
                static_cast<long long>(step), static_cast<long long>(total_steps), loss, lr, grad_norm, tokens_per_s,
                step_time_s, static_cast<double>(peak_memory_bytes) / kMiB);
  return buf;
}

std::string to_json(const RunReport& r) {
  nlohmann::json j;
  j["losses"] = r.losses;
  j["tokens_per_s"] = r.tokens_per_s;
  j["step_time_s"] = r.step_time_s;
  j["step_times_s"] = r.step_times_s;
  j["lrs"] = r.lrs;
  j["grad_norms"] = r.grad_norms;
  j["peak_memory_bytes"] = r.peak_memory_bytes;
  j["peak_reserved_bytes"] = r.peak_reserved_bytes;
  j["device_used_bytes"] = r.device_used_bytes ? nlohmann::json(*r.device_used_bytes) : nlohmann::json();
  j["allocator_conf"] = r.alloc_conf.variable.empty()
                            ? nlohmann::json()
                            : nlohmann::json({{"variable", r.alloc_conf.variable},
                                              {"value", r.alloc_conf.value},
                                              {"set_by", r.alloc_conf.set_by_engine ? "spplan-engine" : "user"}});
  j["predicted_peak_memory_bytes"] = optional_number(r.prediction.peak_memory_bytes);  // as peak_memory_bytes
  j["predicted_device_memory_bytes"] = optional_number(r.prediction.device_memory_bytes);
  j["peak_host_memory_bytes"] = r.peak_host_memory_bytes;
  j["predicted_host_memory_bytes"] = optional_number(r.prediction.host_memory_bytes);
  j["predicted_step_time_s"] = optional_number(r.prediction.step_time_s);
  j["memory"] = r.memory_bytes;
  j["memory"]["rank"] = r.peak_rank;
  j["predicted_memory"] = r.prediction.memory_bytes;
  j["predicted_machine"] = r.prediction.machine;
  j["phases"] = r.phases_s;
  j["world"] = r.world;
  j["sp"] = r.sp;
  j["cp"] = r.cp;
  j["dp"] = r.dp;
  j["micro_batch"] = r.micro_batch;
  j["grad_accum"] = r.grad_accum;
  j["seq_len"] = r.seq_len;
  j["first_step"] = r.first_step;
  j["num_params"] = r.num_params;
  j["threads_per_rank"] = r.threads_per_rank;
  j["model"] = r.model;
  j["act_ckpt"] = r.act_ckpt;
  j["device"] = r.device;
  j["cpu_bf16_emulated"] = r.cpu_bf16_emulated ? nlohmann::json(*r.cpu_bf16_emulated) : nlohmann::json();
  j["attention_backend"] = r.attention_backend;
  j["attention_backend_choice"] = r.attention_backend_choice;
  j["fused_kernels"] = r.fused_kernels;
  j["ranks_on_host"] = r.ranks_on_host;
  // Measured MFU: the costmodel's model FLOPs over the measured mean step (predict.hpp mfu_step_s).
  j["mfu"] = r.prediction.mfu_step_s && r.step_time_s > 0 ? nlohmann::json(*r.prediction.mfu_step_s / r.step_time_s)
                                                          : nlohmann::json();
  j["settings"] = nlohmann::json::parse(r.settings, nullptr, false);
  j["stopped_by_signal"] = r.stopped_by_signal == 0 ? nlohmann::json() : nlohmann::json(r.stopped_by_signal);
  j["last_step"] = r.first_step + static_cast<int64_t>(r.losses.size()) - 1;
  j["kernel_classes_s"] = r.kernel_classes_s.empty() ? nlohmann::json() : nlohmann::json(r.kernel_classes_s);
  j["kernel_top_ops_s"] = r.kernel_top_ops_s.empty() ? nlohmann::json() : nlohmann::json(r.kernel_top_ops_s);
  j["kernel_top_ops_calls"] = r.kernel_top_ops_calls.empty() ? nlohmann::json() : nlohmann::json(r.kernel_top_ops_calls);
  j["peak_memory_ops"] = r.peak_memory_ops.empty() ? nlohmann::json() : nlohmann::json(r.peak_memory_ops);
  // As Hugging Face Trainer's metrics: eval_loss is the last evaluation's; eval_losses all of them.
  j["eval_loss"] = r.eval_losses.empty() ? nlohmann::json() : nlohmann::json(r.eval_losses.back());
  j["eval_tokens"] = r.eval_tokens.empty() ? nlohmann::json() : nlohmann::json(r.eval_tokens.back());
  j["eval_steps"] = r.eval_steps;
  j["eval_losses"] = r.eval_losses;
  j["predicted_kernel_classes_s"] = r.prediction.kernel_classes_s.empty()
                                        ? nlohmann::json()
                                        : nlohmann::json(r.prediction.kernel_classes_s);
  return dump_utf8(std::move(j));  // a model or path named in Latin-1 made dump() throw
}

}  // namespace spplan::engine
