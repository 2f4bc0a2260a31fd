// The documents of token files as scripts/tokenize.py writes them (and spplan run --data reads
// them, engine/io/data.hpp): *.u16.bin / *.u32.bin, little-endian token ids, each document ended
// by the EOS id. What `spplan lengths` counts; streamed in blocks, never held whole.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "planner/corpus/corpus.hpp"

namespace spplan::corpus {

struct TokenDocuments {
  Corpus corpus;
  int64_t eos_tokens = 0;      // EOS ids seen: 0 says the id is likely not the data's EOS
  int64_t trailing_tokens = 0; // tokens after the last EOS (counted as the last document)
};

// The documents of `paths`, read in order as one stream, as spplan run reads them: a document ends
// at each `eos_id`, which is its last token; tokens after the last EOS of a file continue into the
// next file, and after the last file they are one more document. Fails in one line naming the
// file: not a readable regular file; a name that is not *.u16.bin / *.u32.bin (a corpus the
// message says how to tokenize, or any other); empty; a size that is not whole ids; an eos_id that
// the file's ids cannot hold; the corpus past its bounds (corpus.hpp).
// REQUIRES: eos_id >= 0.
Result<TokenDocuments> count_token_documents(const std::vector<std::string>& paths, int64_t eos_id);

// The command that turns a corpus file into token ids, for messages:
// "scripts/tokenize.py --tokenizer YOUR_MODEL_FOLDER --out BASE PATH" (BASE: PATH without its
// corpus ending), as spplan run's own message words it (engine/io/data.cpp tokenize_command).
std::string tokenize_hint(const std::string& path);

}  // namespace spplan::corpus
