// A plan file's [documents] table: what its sequences hold when it was planned for a corpus
// (spplan plan --lengths), so that estimate, simulate and check of the saved plan price attention
// per document as the plan command did. Without the table each sequence is one document.
//
//   [documents]
//   packed = true                          # several documents share a sequence (position ids)
//   sequences = 171                        # an epoch's sequences
//   pieces = [[2000, 900], [30000, 100]]   # [length, count], ascending by length
#pragma once

#include <string>

#include <toml++/toml.h>

#include "planner/config/plan_spec.hpp"
#include "planner/core/status.hpp"

namespace spplan {

// The table into plan->documents and plan->packed_documents (seq_len already read); absent: left
// as they are. A bad value fails in one line naming `path`, the key and what is allowed.
Status read_documents_table(const std::string& path, const toml::table& root, PlanSpec* plan);

// The table as plan_to_toml writes it, or "" when the plan holds no documents.
std::string documents_toml(const PlanSpec& plan);

}  // namespace spplan
