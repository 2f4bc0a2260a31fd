// The packings of corpus.hpp, worked on the length histogram. The reference semantics are TRL's
// (trl/data_utils.py at release 1.14.2: _pack_wrapped, and _pack_bfd with
// on_seq_length_overflow="split", which SFTConfig calls packing_strategy="bfd_split"); what differs
// is said at each packing and in docs/lengths.md.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <unordered_map>
#include <utility>
#include <vector>

#include "planner/corpus/corpus.hpp"

namespace spplan::corpus {
namespace {

// Pieces gathered by length; ascending with every count >= 1 once taken.
class PieceTally {
 public:
  void add(int64_t length, int64_t count) {
    if (length > 0 && count > 0) counts_[length] += count;
  }
  std::vector<std::pair<int64_t, int64_t>> take() { return {counts_.begin(), counts_.end()}; }

 private:
  std::map<int64_t, int64_t> counts_;
};

// The costmodel walks the pieces' lengths in every estimate, and a search makes thousands: a
// million-document corpus has some 150,000 distinct piece lengths, 1.5 s a search. Past
// kMaxPricedLengths the lengths above kExactLengths share bins 1/1024 wide, each priced at its
// pieces' root-mean-square length (rounded to a token), which keeps their sum of squares, the
// attention, within 0.1% and their tokens within 0.05%; the padding is counted before.
constexpr size_t kMaxPricedLengths = 4096;
constexpr int64_t kExactLengths = 1024;

std::vector<std::pair<int64_t, int64_t>> binned(std::vector<std::pair<int64_t, int64_t>> lengths) {
  if (lengths.size() <= kMaxPricedLengths) return lengths;
  std::vector<std::pair<int64_t, int64_t>> out;
  size_t i = 0;
  for (; i < lengths.size() && lengths[i].first <= kExactLengths; ++i) out.push_back(lengths[i]);
  while (i < lengths.size()) {
    const double start = static_cast<double>(lengths[i].first), end = start * (1.0 + 1.0 / kExactLengths);
    double squares = 0, count = 0;
    for (; i < lengths.size() && static_cast<double>(lengths[i].first) < end; ++i) {
      const double n = static_cast<double>(lengths[i].first), c = static_cast<double>(lengths[i].second);
      squares += n * n * c;
      count += c;
    }
    out.emplace_back(std::llround(std::sqrt(squares / count)), static_cast<int64_t>(count));
  }
  return out;
}

PackedCorpus packed(PieceTally* pieces, int64_t sequences, int64_t seq_len, double tokens_cut) {
  PackedCorpus p;
  p.pieces.length_counts = pieces->take();
  p.pieces.sequences = sequences;
  p.tokens_cut = tokens_cut;
  p.padding_tokens = static_cast<double>(sequences) * static_cast<double>(seq_len) - p.pieces.real_tokens();
  p.pieces.length_counts = binned(std::move(p.pieces.length_counts));
  return p;
}

// none: each document its own sequence, cut at seq_len (TRL without packing truncates each example
// to max_length, keeping its start: SFTTrainer's truncation_mode "keep_start").
PackedCorpus pack_none(const Corpus& corpus, int64_t seq_len) {
  PieceTally pieces;
  double cut = 0;
  for (const auto& [length, count] : corpus.length_counts) {
    pieces.add(std::min(length, seq_len), count);
    if (length > seq_len) cut += static_cast<double>(length - seq_len) * static_cast<double>(count);
  }
  return packed(&pieces, corpus.documents(), seq_len, cut);
}

// A uniform draw from [0, bound), the same on every platform: mt19937_64's outputs are fixed by
// the C++ standard ([rand.predef]), uniform_int_distribution's mapping of them is each library's
// own. Draws past the last whole multiple of `bound` below 2^64 are drawn again, so that every
// value is equally likely. REQUIRES: bound >= 1.
uint64_t uniform_below(std::mt19937_64* rng, uint64_t bound) {
  const uint64_t excess = (UINT64_MAX % bound + 1) % bound;  // 2^64 mod bound
  for (;;) {
    const uint64_t r = (*rng)();
    if (excess == 0 || r <= UINT64_MAX - excess) return r % bound;
  }
}

// The documents left to draw, by histogram bin: a Fenwick tree over the bins' counts, so that the
// bin of the k-th document left is found, and one document taken from it, in O(log bins).
class DocumentsLeft {
 public:
  explicit DocumentsLeft(const Corpus& corpus) : tree_(corpus.length_counts.size() + 1, 0) {
    for (size_t i = 0; i < corpus.length_counts.size(); ++i) add(i, corpus.length_counts[i].second);
    while (top_ * 2 < tree_.size()) top_ *= 2;
  }
  // The bin of the k-th document left (from 0), which it then leaves. REQUIRES: k < documents left.
  size_t take(int64_t k) {
    size_t at = 0;
    for (size_t step = top_; step > 0; step /= 2) {
      if (at + step < tree_.size() && tree_[at + step] <= k) {
        at += step;
        k -= tree_[at];
      }
    }
    add(at, -1);
    return at;
  }

 private:
  void add(size_t bin, int64_t delta) {
    for (size_t i = bin + 1; i < tree_.size(); i += i & (~i + 1)) tree_[i] += delta;
  }
  std::vector<int64_t> tree_;  // 1-based
  size_t top_ = 1;
};

// wrapped: the documents in a random order, concatenated, cut every seq_len tokens; the last
// sequence is padded (TRL's _pack_wrapped leaves it short, once per batch of its datasets.map).
// TRL concatenates in the dataset's order, shuffled first only with shuffle_dataset=True; the
// planner knows no order, so it draws one: each document in turn uniformly from those left, which
// is a uniform random order of the multiset of lengths (as a Fisher-Yates shuffle of the expanded
// list would give) without holding one entry per document.
PackedCorpus pack_wrapped(const Corpus& corpus, int64_t seq_len) {
  constexpr uint64_t kSeed = 0x5350504C414E;  // "SPPLAN": one fixed order for one corpus, everywhere
  std::mt19937_64 rng(kSeed);
  DocumentsLeft left(corpus);
  std::vector<int64_t> whole(corpus.length_counts.size(), 0);  // documents kept whole, by bin
  std::unordered_map<int64_t, int64_t> cut_pieces;              // parts of documents a cut fell in
  int64_t full_cut_pieces = 0;                                  // ... of exactly seq_len
  int64_t offset = 0;                                           // tokens of the open sequence so far
  for (int64_t n = corpus.documents(); n > 0; --n) {
    const size_t bin = left.take(static_cast<int64_t>(uniform_below(&rng, static_cast<uint64_t>(n))));
    const int64_t length = corpus.length_counts[bin].first;
    if (offset + length <= seq_len) {
      ++whole[bin];
      offset = (offset + length) % seq_len;
      continue;
    }
    const int64_t rest = length - (seq_len - offset);  // past the open sequence's end
    ++cut_pieces[seq_len - offset];
    full_cut_pieces += rest / seq_len;
    offset = rest % seq_len;
    if (offset > 0) ++cut_pieces[offset];
  }
  PieceTally pieces;
  for (size_t i = 0; i < whole.size(); ++i) pieces.add(corpus.length_counts[i].first, whole[i]);
  for (const auto& [length, count] : cut_pieces) pieces.add(length, count);
  pieces.add(seq_len, full_cut_pieces);
  const auto tokens = static_cast<int64_t>(corpus.tokens());  // <= 2^50: exact in a double
  return packed(&pieces, (tokens + seq_len - 1) / seq_len, seq_len, 0);
}

// The open sequences of best-fit decreasing: free space (1..seq_len - 1) -> sequences with it.
using OpenSequences = std::map<int64_t, int64_t>;

void add_open(OpenSequences* open, int64_t space, int64_t sequences) {
  if (space > 0 && sequences > 0) (*open)[space] += sequences;
}

void take_open(OpenSequences* open, int64_t space, int64_t sequences) {
  if (((*open)[space] -= sequences) == 0) open->erase(space);
}

// `count` pieces of `length` (< seq_len) placed one at a time, each into the open sequence with
// the least free space that holds it, else a new one; returns the sequences opened. Done in groups:
// while the best space r takes a piece, the one left (r - length) is the best for the next one
// (nothing lay between length and r), so each sequence of space r takes floor(r / length) pieces
// in a row, and so does each new sequence.
int64_t place(OpenSequences* open, int64_t length, int64_t count, int64_t seq_len) {
  int64_t opened = 0;
  while (count > 0) {
    const auto best = open->lower_bound(length);
    if (best == open->end()) {
      const int64_t per_sequence = seq_len / length;
      add_open(open, seq_len - per_sequence * length, count / per_sequence);
      if (count % per_sequence > 0) add_open(open, seq_len - (count % per_sequence) * length, 1);
      return opened + (count + per_sequence - 1) / per_sequence;
    }
    const int64_t space = best->first, sequences = best->second, per_sequence = space / length;
    const int64_t filled = std::min(sequences, count / per_sequence);
    if (filled > 0) {
      take_open(open, space, filled);
      add_open(open, space - per_sequence * length, filled);
      count -= filled * per_sequence;
    }
    if (count > 0 && filled < sequences) {  // fewer than per_sequence left: one more sequence takes them
      take_open(open, space, 1);
      add_open(open, space - count * length, 1);
      count = 0;
    }
  }
  return opened;
}

// bfd: TRL's "bfd_split": a document longer than seq_len is split into seq_len pieces and its rest
// (the fragments TRL places like any document; a full one fills a sequence of its own), then every
// piece, longest first, goes to the open sequence with the least free space that holds it (TRL's
// _SegmentTree finds that space). TRL's "bfd", its default, truncates at seq_len instead.
PackedCorpus pack_bfd(const Corpus& corpus, int64_t seq_len) {
  PieceTally pieces;
  int64_t sequences = 0;
  std::vector<std::pair<int64_t, int64_t>> rests;  // ascending, as the histogram is
  for (const auto& [length, count] : corpus.length_counts) {
    const int64_t full = length / seq_len * count, rest = length % seq_len;
    pieces.add(seq_len, full);
    sequences += full;
    pieces.add(rest, count);
    if (rest > 0) rests.emplace_back(rest, count);
  }
  std::sort(rests.begin(), rests.end());
  OpenSequences open;
  for (auto it = rests.rbegin(); it != rests.rend();) {  // longest first, equal rests merged
    const int64_t length = it->first;
    int64_t count = 0;
    for (; it != rests.rend() && it->first == length; ++it) count += it->second;
    sequences += place(&open, length, count, seq_len);
  }
  return packed(&pieces, sequences, seq_len, 0);
}

}  // namespace

PackedCorpus pack(const Corpus& corpus, int64_t seq_len, Packing packing) {
  switch (packing) {
    case Packing::kWrapped: return pack_wrapped(corpus, seq_len);
    case Packing::kBfd: return pack_bfd(corpus, seq_len);
    case Packing::kNone: break;
  }
  return pack_none(corpus, seq_len);
}

}  // namespace spplan::corpus
