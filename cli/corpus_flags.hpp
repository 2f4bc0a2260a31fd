// The corpus flags of plan, fit, rent and estimate: --lengths FILE (the documents' lengths, as
// `spplan lengths` writes them), --packing (how they fill the plan's sequences) and --epochs.
// With them a plan's attention is priced per document and its answer is an epoch's time and price.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "planner/config/plan_spec.hpp"
#include "planner/core/args.hpp"
#include "planner/corpus/corpus.hpp"

namespace spplan::cli {

std::vector<FlagSpec> corpus_flag_specs();

struct CorpusOptions {
  std::string path;                      // --lengths
  std::optional<corpus::Corpus> corpus;  // absent without --lengths
  corpus::Packing packing = corpus::Packing::kBfd;
  int64_t epochs = 1;
};

// The flags read: the lengths file loaded; --packing or --epochs without --lengths refused.
Result<CorpusOptions> corpus_options(const Args& args);

// The corpus packed at plan->seq_len into plan->documents (packed_documents unless the packing is
// none); nothing without a corpus. Returns what the packing left (padding, tokens cut).
std::optional<corpus::PackedCorpus> apply_corpus(const CorpusOptions& options, PlanSpec* plan);

// "corpus: 4,812 documents (lengths.csv), 61.2M tokens, longest 131072; packed bfd into 931
// sequences of 65536 tokens: 0.3% padding", and a second clause for documents cut or left out.
std::string corpus_text(const CorpusOptions& options, const PlanSpec& plan, const corpus::PackedCorpus& packed);

}  // namespace spplan::cli
