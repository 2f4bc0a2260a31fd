// Token sources and the batch layout every rank agrees on.
//
// File formats (chosen by the name's ending):
//   *.u16.bin  little-endian uint16 token ids      *.u32.bin  little-endian uint32 token ids
//   anything else: UTF-8 text, one token per byte (ids 0..255; needs vocab_size >= 256)
// Files are memory-mapped, never read whole into a rank's memory: opening one maps it and scans
// it once (every id < vocab_size, or valid UTF-8), and a window reads only its seq + 1 tokens.
// A mapped file that shrinks while a run reads it (truncated or rewritten by another program)
// raises SIGBUS on the next read; the rank then says which file before it dies (data.cpp).
// Several files (--data a.u16.bin,b.u16.bin) are one stream, concatenated in the order given;
// sequence i is the window [i*seq, i*seq + seq + 1) of that stream, wrapping around at its end
// (seq + 1 tokens: the labels are the inputs shifted by one).
// With --shuffle, the stream is cut into W = (n - 1) / seq whole windows (sequence k: tokens
// [k*seq, k*seq + seq + 1)), and each pass over them (sequences p*W .. p*W + W - 1) reads them in
// its own order: a Fisher-Yates permutation drawn from (seed, p), the same on every rank and on
// every machine (splitmix64, not std::shuffle, whose draws differ between standard libraries).
// Without --data, sequence i is synthetic: a deterministic function of (seed, i), structured
// enough that the loss falls (mostly an affine recurrence over token ids, 10% random tokens).
//
// Documents: with --eos-id E, a stream is documents each ended by token E. The label at position t
// is token t + 1; when token t is E, token t + 1 starts another document, so that label is
// ignored (kIgnoreLabel): no position learns to predict a document's first token from the one
// before. The E itself is still a label (a document learns to end). Positions restart at 0 after
// each E and attention stays inside each document (Shard::positions, doc_starts), as Hugging Face
// and ALST train packed sequences (position ids from the EOS boundaries, attention masked at them).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "planner/core/status.hpp"

namespace spplan::engine {

inline constexpr int64_t kNoEos = -1;

class MappedFile;  // data.cpp: a read-only mmap of one file

class TokenSource {
 public:
  // The run's tokens: the files in order (empty: synthetic tokens from `seed`), with eos_id
  // (kNoEos: none). Checks every file (format, size, every id < vocab_size) and eos_id <
  // vocab_size. Errors are one line naming the flag and the file, and for a bad id its token
  // index within that file.
  static Result<TokenSource> open(const std::vector<std::string>& paths, int64_t vocab_size, int64_t eos_id = kNoEos,
                                  uint64_t seed = 0, bool shuffle = false);
  static Result<TokenSource> from_file(const std::string& path, int64_t vocab_size) { return open({path}, vocab_size); }
  static TokenSource synthetic(uint64_t seed, int64_t vocab_size);

  // seq_len + 1 tokens of sequence `index`.
  std::vector<int64_t> window(int64_t index, int64_t seq_len) const;
  // Files read in order (no --shuffle): seq_len + 1 tokens from stream position `start` (wrapping
  // around at the end). Sequence i is window_at(i * seq_len); a run that changes its --seq on
  // resume continues at the token position its checkpoint saved (resume_settings.hpp).
  bool in_order() const { return !segments_.empty() && !shuffle_; }
  std::vector<int64_t> window_at(int64_t start, int64_t seq_len) const;
  int64_t eos_id() const { return eos_id_; }
  int64_t num_tokens() const { return total_tokens_; }  // 0 for synthetic data
  // How many times `sequences` sequences of seq_len read the data over (0 for synthetic data).
  double passes(int64_t sequences, int64_t seq_len) const;
  // What the data is, for a checkpoint to compare on resume: each file's name (not its folder: a
  // moved file is the same data), token count and the FNV-1a 64 of its first 64 KiB, then
  // "shuffled" when it is; "synthetic" without files.
  std::string fingerprint() const;

 private:
  const std::vector<int64_t>& permutation(int64_t pass, int64_t windows) const;

  struct Segment {  // one file of the stream
    std::string name;        // the file's name without its folder
    std::shared_ptr<const MappedFile> file;
    int width = 1;           // bytes per token: 1 (text), 2, 4
    int64_t first = 0;       // its first token's position in the stream
    int64_t tokens = 0;
  };
  int64_t token(const Segment& s, int64_t position) const;

  std::vector<Segment> segments_;  // empty for synthetic data
  int64_t total_tokens_ = 0;
  uint64_t seed_ = 0;
  int64_t vocab_size_ = 0;
  int64_t eos_id_ = kNoEos;
  bool shuffle_ = false;
  // The permutation of the pass last read (window() is called in order, a pass at a time).
  mutable int64_t perm_pass_ = -1;
  mutable std::vector<int64_t> perm_;
};

// The width of a token file's ids by its name (2 for *.u16.bin, 4 for *.u32.bin), 1 for text read
// as bytes.
int token_width(const std::string& path);

// The command that turns `path` (text or a corpus) into a token file, printed where the engine
// refuses it: with --init-from's folder as the tokenizer (its EOS by default), else a placeholder
// for the user's model folder. It runs as printed.
std::string tokenize_command(const std::string& path, const std::string& tokenizer_dir);

// Files (not synthetic data) that hold fewer than seq_len + 1 tokens, one sequence and its last
// label, are refused: the wrap-around would train on the same few tokens repeated, which a
// too-short or truncated file should not silently do. One line naming --data and both counts.
Status check_enough_tokens(const TokenSource& data, int64_t seq_len);

// One rank's share of one sequence: inputs and labels (shifted before sharding; padding to a
// multiple of sp has label kIgnoreLabel, and so has a label whose input is eos_id: see above)
// and the global position of its first token.
inline constexpr int64_t kIgnoreLabel = -100;
struct Shard {
  std::vector<int64_t> inputs;
  std::vector<int64_t> labels;
  int64_t first_position = 0;
  // With an EOS id (else empty): each input's position within its document, and where the
  // documents of the whole padded sequence start (0 first; the padding extends the last one).
  std::vector<int64_t> positions;
  std::vector<int64_t> doc_starts;
};
// cp > 1: zigzag_shard_of(window, sp, sp_rank, cp, cp_rank, eos_id).
Shard shard_of(const std::vector<int64_t>& window, int64_t sp, int64_t sp_rank, int64_t eos_id = kNoEos,
               int64_t cp = 1, int64_t cp_rank = 0);

// Ring attention (cp > 1), the zigzag split: the sequence is cut into 2 cp equal chunks, CP rank c
// holds chunks c and 2cp-1-c in that order (every ring rank then has the same causal work), and
// those 2 s/(2cp) tokens are split contiguously over the sp Ulysses ranks. The global positions
// (sp_rank, cp_rank) holds, increasing. REQUIRES: seq_len % (2 sp cp) == 0.
std::vector<int64_t> zigzag_positions(int64_t seq_len, int64_t sp, int64_t sp_rank, int64_t cp, int64_t cp_rank);

// shard_of for cp > 1: the tokens at zigzag_positions, labels shifted on the whole sequence first;
// `positions` holds the global positions (RoPE's), `first_position` the first of them. With an EOS
// id the whole packed sequence is zigzagged as it is (not each document: ring_attention.hpp), and
// as shard_of: `positions` holds each token's position within its document, `doc_starts` the
// documents' starts in the whole sequence, labels after an EOS are ignored. REQUIRES: as
// zigzag_positions.
Shard zigzag_shard_of(const std::vector<int64_t>& window, int64_t sp, int64_t sp_rank, int64_t cp, int64_t cp_rank,
                      int64_t eos_id = kNoEos);

// Which sequence a rank reads. A step's global batch is dp * micro_batch * grad_accum consecutive
// sequences starting at `first_sequence`; micro step m of DP group g takes micro_batch of them.
// Ordered (micro step, DP group, batch slot) so that --nproc 1 with --micro-batch (or --grad-accum)
// D reads the same global batch as D data-parallel groups.
int64_t sequence_index(int64_t first_sequence, int64_t micro_step, int64_t dp, int64_t dp_rank,
                       int64_t micro_batch, int64_t slot);

}  // namespace spplan::engine
