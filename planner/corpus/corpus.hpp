// A training corpus as the planner sees it: the lengths of its documents in tokens (read from a
// lengths file, or counted from token ids by `spplan lengths`), and how a packing strategy fills
// sequences of one length with them (the DocumentPieces the costmodel prices).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "planner/config/document_pieces.hpp"
#include "planner/core/status.hpp"

namespace spplan::corpus {

// The bounds every corpus keeps, whatever it was read from. The counts are far above any corpus
// trained today (Llama 3's 15T tokens are 2^43.8) and keep every sum in int64_t: documents x
// longest is at most 2^71, so the tokens are bounded on their own.
inline constexpr int64_t kMaxDocumentTokens = int64_t{1} << 40;  // one document
inline constexpr int64_t kMaxDocuments = int64_t{1} << 31;       // documents of a corpus
inline constexpr int64_t kMaxCorpusTokens = int64_t{1} << 50;    // tokens of a corpus
// Distinct lengths of a corpus: the histogram's entries, what its memory (and wrapped's) grows
// with. A corpus's lengths thin out past 10^5 tokens; 1 GiB of distinct numbers would be 10^8
// entries, gigabytes of histogram.
inline constexpr int64_t kMaxDistinctLengths = int64_t{1} << 24;
// A lengths file is read whole; a larger one is refused (a histogram, "length,count", is small).
inline constexpr int64_t kMaxLengthsFileBytes = int64_t{1} << 30;

// Document lengths as a histogram: (length in tokens, documents of that length), ascending by
// length, every length >= 1 and every count >= 1.
struct Corpus {
  std::vector<std::pair<int64_t, int64_t>> length_counts;
  int64_t documents() const;
  double tokens() const;
  int64_t longest() const;  // 0 when empty
  // Documents of at most seq_len tokens: those a sequence of that length holds whole.
  int64_t documents_within(int64_t seq_len) const;
  // The length below which `q` (0..1) of the documents lie (q = 1: the longest): the shortest
  // length L with at least ceil(q x documents) documents of length <= L (the nearest rank), so
  // that it is a length the corpus holds; q = 0 gives the shortest. 0 when empty.
  int64_t quantile(double q) const;
};

// The corpus of these document lengths (any order, repeats merged). REQUIRES: each >= 1.
Corpus corpus_of(const std::vector<int64_t>& lengths);

// The lengths file at `path` (its format: docs/lengths.md): CSV, one length a line or
// "length,count" lines (a header line allowed), or JSON, a list of lengths or {"length": count}.
// Fails in one line naming the file, the line or key, the value and what is allowed.
Result<Corpus> read_lengths_file(const std::string& path);
// The same on text already read; `where` names it in messages. The format is told by the content:
// JSON when the first byte that is not blank opens an array or an object, else CSV.
Result<Corpus> read_lengths_text(const std::string& where, std::string_view text);
// The corpus as a lengths file: `comment` (made one line) as a "#" line, the header
// "length,count", then one "length,count" line a length, ascending. read_lengths_text reads it
// back unchanged.
std::string lengths_csv(const Corpus& corpus, const std::string& comment);

// How documents fill sequences of seq_len tokens:
//   wrapped  concatenated in a shuffled order (a fixed seed: the same corpus packs the same way on
//            every machine) and cut at each sequence's end, the last sequence padded;
//   bfd      best-fit decreasing bins: each document into the fullest sequence it fits, a document
//            longer than seq_len cut into seq_len pieces and a rest first;
//   none     one document per sequence, padded to seq_len; a longer one cut to seq_len (its rest
//            not trained: counted in PackedCorpus::tokens_cut).
enum class Packing { kWrapped, kBfd, kNone };
const std::vector<std::string>& packing_names();  // wrapped, bfd, none
std::string to_string(Packing packing);
// One of packing_names(); else `what: value "x" is not allowed (allowed: wrapped, bfd, none)`.
Result<Packing> parse_packing(std::string_view what, std::string_view text);

struct PackedCorpus {
  // What each sequence holds (pieces.sequences: the epoch's sequences). Past 4,096 distinct piece
  // lengths those above 1,024 tokens share bins 1/1024 wide at their root-mean-square length
  // (packing.cpp binned: the attention within 0.1%), so an estimate walks a bounded list.
  DocumentPieces pieces;
  double tokens_cut = 0;      // tokens of documents not trained (none: past seq_len)
  double padding_tokens = 0;  // sequences x seq_len - real tokens
};

// REQUIRES: seq_len >= 1, and the corpus within the bounds above (every reader keeps them).
// Time: none and bfd work on the histogram (bfd: O(distinct lengths x log seq_len) for most
// corpora); wrapped draws every document once, O(documents x log distinct lengths), memory
// O(distinct lengths).
PackedCorpus pack(const Corpus& corpus, int64_t seq_len, Packing packing);

}  // namespace spplan::corpus
