#include "planner/config/knob_flags.hpp"

#include "planner/core/parse.hpp"

namespace spplan {

std::vector<FlagSpec> knob_flag_specs() {
  return {{"sp"},          {"cp"},          {"cp-comm"},         {"zero"},        {"offload-optimizer"}, {"offload-params"},
          {"act-ckpt"},    {"tiled-mlp", false}, {"tiled-loss", false}, {"micro-batch"},
          {"grad-accum"},  {"sp-comm-dtype"}, {"precision"}, {"reduce-bucket"},      {"prefetch-bucket"}};
}

bool has_knob_flags(const Args& args) {
  for (const auto& spec : knob_flag_specs()) {
    if (spec.name != "sp" && spec.name != "cp" && args.has(spec.name)) return true;
  }
  return false;
}

Status apply_knob_flags(const Args& args, Knobs* k) {
  if (auto v = args.get("sp")) {
    SPPLAN_ASSIGN_OR_RETURN(k->sp, parse_int("--sp", *v, 1, 1 << 20));
  }
  if (auto v = args.get("cp")) {
    SPPLAN_ASSIGN_OR_RETURN(k->cp, parse_int("--cp", *v, 1, 1 << 20));
  }
  if (auto v = args.get("cp-comm")) {
    SPPLAN_ASSIGN_OR_RETURN(const size_t i, parse_choice("--cp-comm", *v, cp_comm_names()));
    k->cp_comm = static_cast<CpComm>(i);
  }
  if (auto v = args.get("zero")) {
    SPPLAN_ASSIGN_OR_RETURN(k->zero_stage, parse_int("--zero", *v, 0, 3));
  }
  if (auto v = args.get("offload-optimizer")) {
    SPPLAN_ASSIGN_OR_RETURN(const size_t i, parse_choice("--offload-optimizer", *v, offload_device_names()));
    k->offload_optimizer = static_cast<OffloadDevice>(i);
  }
  if (auto v = args.get("offload-params")) {
    SPPLAN_ASSIGN_OR_RETURN(const size_t i, parse_choice("--offload-params", *v, offload_device_names()));
    k->offload_params = static_cast<OffloadDevice>(i);
  }
  if (auto v = args.get("act-ckpt")) {
    SPPLAN_ASSIGN_OR_RETURN(const size_t i, parse_choice("--act-ckpt", *v, act_ckpt_names()));
    k->act_ckpt = static_cast<ActCkpt>(i);
  }
  if (auto v = args.get("sp-comm-dtype")) {
    SPPLAN_ASSIGN_OR_RETURN(const size_t i, parse_choice("--sp-comm-dtype", *v, comm_dtype_names()));
    k->sp_comm_dtype = static_cast<CommDtype>(i);
  }
  if (auto v = args.get("precision")) {
    SPPLAN_ASSIGN_OR_RETURN(const size_t i, parse_choice("--precision", *v, precision_names()));
    k->precision = static_cast<Precision>(i);
  }
  if (args.has("tiled-mlp")) k->tiled_mlp = true;
  if (args.has("tiled-loss")) k->tiled_loss = true;
  if (auto v = args.get("micro-batch")) {
    SPPLAN_ASSIGN_OR_RETURN(k->micro_batch, parse_int("--micro-batch", *v, 1, 1 << 20));
  }
  if (auto v = args.get("grad-accum")) {
    SPPLAN_ASSIGN_OR_RETURN(k->grad_accum_steps, parse_int("--grad-accum", *v, 1, 1 << 20));
  }
  if (auto v = args.get("reduce-bucket")) {
    SPPLAN_ASSIGN_OR_RETURN(k->reduce_bucket_elems, parse_double("--reduce-bucket", *v, 1.0));
  }
  if (auto v = args.get("prefetch-bucket")) {
    SPPLAN_ASSIGN_OR_RETURN(k->prefetch_bucket_elems, parse_double("--prefetch-bucket", *v, 0.0));
  }
  return Status::ok();
}

}  // namespace spplan
