#include "planner/search/seq_search.hpp"

#include <algorithm>
#include <set>

namespace spplan::search {
namespace {

int64_t round_up(int64_t n, int64_t multiple) { return (n + multiple - 1) / multiple * multiple; }

}  // namespace

std::vector<int64_t> candidate_seq_lengths(const corpus::Corpus& c, int64_t multiple) {
  multiple = std::max<int64_t>(1, multiple);
  std::set<int64_t> lengths;
  for (double q : {0.5, 0.9, 0.99, 1.0}) lengths.insert(round_up(std::max<int64_t>(1, c.quantile(q)), multiple));
  const int64_t longest = *lengths.rbegin();
  for (int64_t p = 1; p < longest && p < (int64_t{1} << 40); p *= 2) {
    if (p > *lengths.begin() && p % multiple == 0) lengths.insert(p);
  }
  std::vector<int64_t> out(lengths.begin(), lengths.end());
  if (out.size() > kMaxSeqCandidates) out.erase(out.begin(), out.end() - static_cast<long>(kMaxSeqCandidates));
  return out;
}

SeqSearch search_seq_lengths(const PlanSpec& base, const corpus::Corpus& c, corpus::Packing packing,
                             const KnobConstraints& constraints, int64_t multiple) {
  SeqSearch out;
  for (int64_t seq_len : candidate_seq_lengths(c, multiple)) {
    PlanSpec plan = base;
    plan.seq_len = seq_len;
    SeqChoice choice;
    choice.seq_len = seq_len;
    choice.packed = corpus::pack(c, seq_len, packing);
    plan.documents = choice.packed.pieces;
    plan.packed_documents = packing != corpus::Packing::kNone;
    choice.result = search_plans(plan, false, constraints);
    choice.documents_whole = c.documents_within(seq_len);
    out.choices.push_back(std::move(choice));
  }
  // Of the lengths that keep kWholeShare of the documents whole, the one with the most real tokens
  // a second: with wrapped and bfd packings every length trains every token, so that is the
  // soonest epoch; with none a shorter length cuts documents and trains less. A length that cuts
  // more documents trains another corpus (pieces of long documents, each apart), faster: it is
  // listed, not chosen, unless no length that keeps them fits. A tie keeps the shorter length.
  for (const bool whole_only : {true, false}) {
    double best_real_tokens_per_s = 0;
    for (size_t i = 0; i < out.choices.size(); ++i) {
      const SeqChoice& ch = out.choices[i];
      if (ch.result.feasible.empty()) continue;
      if (whole_only && static_cast<double>(ch.documents_whole) < kWholeShare * static_cast<double>(c.documents())) continue;
      const double rate = ch.result.feasible.front().estimate.real_tokens_per_s;
      if (out.best < 0 || rate > best_real_tokens_per_s) {
        out.best = static_cast<int>(i);
        best_real_tokens_per_s = rate;
      }
    }
    if (out.best >= 0) break;
  }
  return out;
}

}  // namespace spplan::search
