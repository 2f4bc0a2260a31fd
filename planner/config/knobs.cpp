#include "planner/config/knobs.hpp"

#include "planner/config/plan_spec.hpp"

namespace spplan {

const std::vector<std::string>& offload_device_names() {
  static const std::vector<std::string> kNames{"none", "cpu", "nvme"};
  return kNames;
}
const std::vector<std::string>& act_ckpt_names() {
  static const std::vector<std::string> kNames{"none", "full", "offload"};
  return kNames;
}
const std::vector<std::string>& comm_dtype_names() {
  static const std::vector<std::string> kNames{"bf16", "fp32"};
  return kNames;
}
const std::vector<std::string>& precision_names() {
  static const std::vector<std::string> kNames{"bf16", "fp32"};
  return kNames;
}
const std::vector<std::string>& trainer_names() {
  static const std::vector<std::string> kNames{"arctic", "hf"};
  return kNames;
}

TrainingStack trainer_stack(size_t index) {
  TrainingStack stack;
  stack.trainer = trainer_names().at(index);
  stack.loop_holds_logits = stack.trainer == "arctic";
  return stack;
}

std::string to_string(Precision precision) { return precision_names()[static_cast<size_t>(precision)]; }
std::string to_string(OffloadDevice device) { return offload_device_names()[static_cast<size_t>(device)]; }
std::string to_string(ActCkpt mode) { return act_ckpt_names()[static_cast<size_t>(mode)]; }
std::string to_string(CommDtype dtype) { return comm_dtype_names()[static_cast<size_t>(dtype)]; }

}  // namespace spplan
