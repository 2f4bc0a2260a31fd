#include "planner/config/knobs.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "planner/config/loaders.hpp"
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
const std::vector<std::string>& cp_comm_names() {
  static const std::vector<std::string> kNames{"ring", "allgather"};
  return kNames;
}
const std::vector<std::string>& precision_names() {
  static const std::vector<std::string> kNames{"bf16", "fp32"};
  return kNames;
}
std::vector<std::string> trainer_names() { return trainer_presets(); }

TrainingStack trainer_stack(const std::string& name) {
  Result<TrainingStack> stack = load_trainer(name, "trainer");
  if (!stack.ok()) {  // the presets ship with the program: their absence is a broken install
    std::fprintf(stderr, "spplan: %s\n", stack.status().message().c_str());
    std::exit(2);
  }
  return std::move(stack).value();
}

std::string to_string(Precision precision) { return precision_names()[static_cast<size_t>(precision)]; }
std::string to_string(CpComm comm) { return cp_comm_names()[static_cast<size_t>(comm)]; }
std::string to_string(OffloadDevice device) { return offload_device_names()[static_cast<size_t>(device)]; }
std::string to_string(ActCkpt mode) { return act_ckpt_names()[static_cast<size_t>(mode)]; }
std::string to_string(CommDtype dtype) { return comm_dtype_names()[static_cast<size_t>(dtype)]; }

}  // namespace spplan
