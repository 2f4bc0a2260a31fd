#include "cli/corpus_flags.hpp"

#include "planner/core/parse.hpp"
#include "planner/corpus/corpus_text.hpp"
#include "planner/corpus/plan_documents.hpp"

namespace spplan::cli {

std::vector<FlagSpec> corpus_flag_specs() {
  return {{"lengths", true, "the corpus's document lengths in tokens (spplan lengths writes them; docs/lengths.md)",
           "a CSV or JSON lengths file", "one document a sequence"},
          {"packing", true, "how documents fill each sequence: concatenated and cut (wrapped), best-fit decreasing bins (bfd), "
                            "or one document a sequence, padded (none)",
           join(corpus::packing_names()), "bfd"},
          {"epochs", true, "epochs to price (with --lengths)", "an integer 1..1000", "1"}};
}

Result<CorpusOptions> corpus_options(const Args& args) {
  CorpusOptions o;
  const auto lengths = args.get("lengths");
  for (const char* flag : {"packing", "epochs"}) {
    if (!lengths && args.get(flag)) {
      return Status::invalid(std::string("--") + flag + ": needs --lengths (allowed: with a corpus's lengths file)");
    }
  }
  if (!lengths) return o;
  o.path = *lengths;
  SPPLAN_ASSIGN_OR_RETURN(corpus::Corpus c, corpus::read_lengths_file(*lengths));
  o.corpus = std::move(c);
  if (auto v = args.get("packing")) {
    SPPLAN_ASSIGN_OR_RETURN(const size_t p, parse_choice("--packing", *v, corpus::packing_names()));
    o.packing = static_cast<corpus::Packing>(p);
  }
  if (auto v = args.get("epochs")) {
    SPPLAN_ASSIGN_OR_RETURN(o.epochs, parse_int("--epochs", *v, 1, 1000));
  }
  return o;
}

std::optional<corpus::PackedCorpus> apply_corpus(const CorpusOptions& o, PlanSpec* plan) {
  if (!o.corpus) return std::nullopt;
  return corpus::pack_into_plan(*o.corpus, o.packing, plan);  // the GUI's Corpus input takes the same step
}

std::string corpus_text(const CorpusOptions& o, const PlanSpec& plan, const corpus::PackedCorpus& packed) {
  const std::string longer = corpus::longer_text(*o.corpus, o.packing, plan.seq_len, packed);
  std::string text = "corpus: " + corpus::packed_text(*o.corpus, o.packing, plan.seq_len, packed, o.path) +
                     (longer.empty() ? "" : "; " + longer);
  // verl's dynamic context parallel picks a degree per micro batch by its longest sequence; none
  // of the stacks with a record does (Megatron lists it on its roadmap; its record pins
  // megatron_core 0.16.1), so one layout serves every sequence.
  return text + "; every sequence runs the plan's layout (no trainer record runs a layout per micro batch by length)";
}

}  // namespace spplan::cli
