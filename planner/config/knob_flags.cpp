#include "planner/config/knob_flags.hpp"

#include "planner/core/parse.hpp"

namespace spplan {

std::vector<FlagSpec> knob_flag_specs() {
  const std::string offload = join(offload_device_names());
  const Knobs d;  // the defaults, as Knobs has them
  return {
      {"sp", true, "the Ulysses sequence-parallel degree P: each of P GPUs holds 1/P of the sequence",
       "a divisor of the GPU count that the attention heads allow (heads % P == 0)", "required"},
      {"cp", true, "the ring-attention (context-parallel) degree R: K/V chunks pass around R GPUs; GPUs = dp x sp x cp",
       "an integer >= 1; sp x cp divides the GPU count and the sequence is a multiple of 2 x sp x cp", std::to_string(d.cp)},
      {"cp-comm", true, "how the ring moves K/V: one chunk per hop behind attention, or one all-gather",
       join(cp_comm_names()), "the trainer's: ring where it runs it, else the variant it runs"},
      {"zero", true, "the DeepSpeed ZeRO stage: what dp x sp shards (1 optimizer, 2 + gradients, 3 + parameters)",
       "0, 1, 2, 3", std::to_string(d.zero_stage)},
      {"offload-optimizer", true, "where the optimizer state and its step live", offload, to_string(d.offload_optimizer)},
      {"offload-params", true, "where the ZeRO-3 parameter shards live", offload, to_string(d.offload_params)},
      {"act-ckpt", true, "activation checkpointing: none, one hidden state per layer, or those moved to host memory",
       join(act_ckpt_names()), to_string(d.act_ckpt)},
      {"tiled-mlp", false, "TiledMLP (ALST): the MLP in sequence chunks, one chunk's intermediate alive", "", "",
       "no-tiled-mlp"},
      {"tiled-loss", false, "tiled loss: logits and cross-entropy in token chunks (Liger fused linear cross-entropy)", "",
       "", "no-tiled-loss"},
      {"no-tiled-mlp", false, "no TiledMLP: the whole sequence's MLP intermediate at once (fixes tiling off)"},
      {"no-tiled-loss", false, "no tiled loss: the whole [tokens x vocab] logits at once (fixes it off)"},
      {"micro-batch", true, "sequences per SP group per micro step", "an integer >= 1", std::to_string(d.micro_batch)},
      {"grad-accum", true, "micro steps per optimizer step", "an integer >= 1", std::to_string(d.grad_accum_steps)},
      {"sp-comm-dtype", true, "the data type gradients are reduced in when sp > 1 (DeepSpeed's seq_parallel_communication_data_type)", join(comm_dtype_names()), to_string(d.sp_comm_dtype)},
      {"precision", true, "the training precision of weights and activations", join(precision_names()), to_string(d.precision)},
      {"reduce-bucket", true, "DeepSpeed reduce_bucket_size, in elements (ZeRO gradient reduction buffer)",
       "a number >= 1, e.g. 5e8", format_number(d.reduce_bucket_elems)},
      {"prefetch-bucket", true, "DeepSpeed stage3_prefetch_bucket_size, in elements (ZeRO-3 gathers ahead of use)",
       "a number >= 0, e.g. 5e7", format_number(d.prefetch_bucket_elems)}};
}

bool has_knob_flags(const Args& args) {
  for (const auto& spec : knob_flag_specs()) {
    if (spec.name != "sp" && spec.name != "cp" && args.has(spec.name)) return true;
  }
  return false;
}

Status apply_knob_flags(const Args& args, Knobs* k) {
  if (auto v = args.get("sp")) {
    SPPLAN_ASSIGN_OR_RETURN(k->sp, parse_in("--sp", *v, kKnobRanges.sp));
  }
  if (auto v = args.get("cp")) {
    SPPLAN_ASSIGN_OR_RETURN(k->cp, parse_in("--cp", *v, kKnobRanges.cp));
  }
  if (auto v = args.get("cp-comm")) {
    SPPLAN_ASSIGN_OR_RETURN(const size_t i, parse_choice("--cp-comm", *v, cp_comm_names()));
    k->cp_comm = static_cast<CpComm>(i);
  }
  if (auto v = args.get("zero")) {
    SPPLAN_ASSIGN_OR_RETURN(k->zero_stage, parse_in("--zero", *v, kKnobRanges.zero_stage));
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
  // A switch and its opposite together are refused by Args::parse (FlagSpec::opposite).
  for (const auto& [flag, value] : {std::pair{"tiled-mlp", &k->tiled_mlp}, std::pair{"tiled-loss", &k->tiled_loss}}) {
    if (args.has(flag)) *value = true;
    if (args.has(std::string("no-") + flag)) *value = false;
  }
  if (auto v = args.get("micro-batch")) {
    SPPLAN_ASSIGN_OR_RETURN(k->micro_batch, parse_in("--micro-batch", *v, kKnobRanges.micro_batch));
  }
  if (auto v = args.get("grad-accum")) {
    SPPLAN_ASSIGN_OR_RETURN(k->grad_accum_steps, parse_in("--grad-accum", *v, kKnobRanges.grad_accum_steps));
  }
  if (auto v = args.get("reduce-bucket")) {
    SPPLAN_ASSIGN_OR_RETURN(k->reduce_bucket_elems, parse_in("--reduce-bucket", *v, kKnobRanges.reduce_bucket_elems));
  }
  if (auto v = args.get("prefetch-bucket")) {
    SPPLAN_ASSIGN_OR_RETURN(k->prefetch_bucket_elems, parse_in("--prefetch-bucket", *v, kKnobRanges.prefetch_bucket_elems));
  }
  return Status::ok();
}

}  // namespace spplan
