// Which plans a trainer runs and which of its export formats launch them, read from its record
// (trainer_spec.hpp). The one place the search, the plan rules, estimate's report and the exports
// ask; nothing else knows a trainer by name.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "planner/config/plan_rules.hpp"
#include "planner/config/plan_spec.hpp"

namespace spplan {

// The plan's trainer record: plan.stack.record, or for a stack built by hand (a default PlanSpec
// describes ArcticTraining) the bundled record of its name.
const TrainerRecord& record_of(const PlanSpec& plan);

// `trainer "hf"`, or for a user's record `trainer "hf-5.16" (/path/hf.toml)`: its name and its
// file, as messages name it.
std::string trainer_quoted(const PlanSpec& plan);

// Ok when the plan's trainer runs its knobs: its layout and ring variant, a sequence Ulysses
// splits evenly where the trainer does not pad, and none of its refusals holds. Else one line:
// `--cp: value 2 is not run by trainer "arctic" (it runs the layouts none, ulysses; ...)`.
Status check_trainer_runs(const PlanSpec& plan, const WhereFn& where);
// The same answer without building a message: the search asks it for every knob set.
bool trainer_runs(const PlanSpec& plan);
// Ok unless the trainer refuses the plan whatever a search varies: a model it does not build, its
// layout where `fixed` keeps the layout, a refusal whose tests are all on keys `fixed` says the
// search keeps (the model's experts on axolotl; hf's flash2 on a ring, at any ZeRO stage or
// offload), or such a refusal (or the split) of each format that launches (a named flash2 on
// megatron's script). Else its line, said by the kernel where the rule tests one:
// `--attention: value "flash2" with layout ring is not run by trainer "hf" (...; allowed: sdpa)`.
// The searching commands ask it before they search (knob_constraints.cpp), where their count of
// causes would name the most frequent of the other knobs the trainer refuses instead.
Status check_fixed_refusals(const PlanSpec& plan, const std::function<bool(RuleKey)>& fixed, const WhereFn& where);

// What stops the trainer running the plan, as an identity (the layout fact or the refusal), so
// that the search counts its exclusions by cause and writes each cause's message once; nullptr
// when the trainer runs it.
const void* first_refusal(const PlanSpec& plan);
// The same for its formats: each format's first refusal (nullptr where one expresses the plan).
std::vector<const void*> format_refusals(const PlanSpec& plan);

// Ok when `format` is one of the trainer's and expresses the plan; else one line naming the
// format, the knob and why (`key "knobs.cp": value 2 cannot be expressed for --format deepspeed
// (...)`).
Status check_format_expresses(const PlanSpec& plan, const std::string& format, const WhereFn& where);
// True when one of the trainer's launching formats (not a component) expresses the plan.
bool some_format_launches(const PlanSpec& plan);
// Each of the trainer's formats with "" when it expresses the plan, else why not: what estimate
// reports, so a knob set no format launches says so.
std::vector<std::pair<std::string, std::string>> format_verdicts(const PlanSpec& plan);

// The record of the plan's layout (ulysses, ring, ...) on its trainer: whether it runs, its kernel.
const LayoutRecord& layout_record(const PlanSpec& plan);

// The attention kernel the plan's layout runs on its trainer; SDPA for fp32 plans (FlashAttention
// 2 has no fp32 kernels).
AttentionKernel layout_attention(const PlanSpec& plan);
// Sets plan->stack.attention to layout_attention unless the user named the kernel
// (plan->attention_named).
void settle_layout_attention(PlanSpec* plan);
// The kernels the search prices a settled plan with: its own alone when it was named (or settled by
// precision or attention sinks), else its layout's default and the layout's also_attention.
std::vector<AttentionKernel> searched_attention(const PlanSpec& plan);

// The ring variant the search tries for the plan's layout when none is asked for: the ring where
// the trainer runs it (at least as fast and as small as the all-gather: its K/V hide behind the
// blocks and are not gathered whole), else the first variant it runs (TorchTitan: the all-gather).
CpComm searched_cp_comm(const PlanSpec& plan);

// Whether the trainer pads a sequence its Ulysses degree does not divide (else it must divide).
bool sequence_padded(const PlanSpec& plan);

// What the trainer's torchrun format runs on each rank ("hf-trainer", "spplan-run"); "" when it
// has no torchrun format.
std::string torchrun_program(const PlanSpec& plan);

// The record's model that is the plan's, for a trainer that builds its models by name
// (TrainerRecord::models); nullptr when it has none of that shape, or builds any model.
const ModelFlavor* model_flavor(const PlanSpec& plan);

// The layouts a trainer runs, for messages and the GUI: "none, ulysses, ring".
std::string layouts_run(const TrainerRecord& record);

}  // namespace spplan
