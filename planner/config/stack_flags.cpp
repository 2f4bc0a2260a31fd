#include "planner/config/stack_flags.hpp"

#include "planner/core/parse.hpp"

namespace spplan {

std::vector<FlagSpec> stack_flag_specs() {
  return {{"attention", true, "the attention kernel, overriding the trainer's", join(attention_kernel_names()),
           "the trainer's (sdpa with --precision fp32)"},
          {"freeze-encoders", false,
           "a multimodal model's vision tower and projector frozen: weights only, no gradients or optimizer state", "",
           "the trainer's (usp freezes them, as ms-swift does; the others train them)", "train-encoders"},
          {"train-encoders", false, "a multimodal model's vision tower and projector trained with the language model",
           "", "the trainer's"}};
}

Status apply_stack_flags(const Args& args, TrainingStack* stack) {
  if (auto v = args.get("attention")) {
    SPPLAN_ASSIGN_OR_RETURN(const size_t kernel, parse_choice("--attention", *v, attention_kernel_names()));
    stack->attention = static_cast<AttentionKernel>(kernel);
  }
  // Both encoder flags together are refused by Args::parse (FlagSpec::opposite).
  if (args.has("freeze-encoders")) stack->freezes_encoders = true;
  if (args.has("train-encoders")) stack->freezes_encoders = false;
  return Status::ok();
}

}  // namespace spplan
