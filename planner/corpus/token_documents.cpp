#include "planner/corpus/token_documents.hpp"

#include <cstring>
#include <filesystem>
#include <fstream>

#include "planner/config/loaders.hpp"
#include "planner/core/parse.hpp"
#include "planner/corpus/tally.hpp"

namespace spplan::corpus {
namespace {

bool ends_with(const std::string& s, const char* ending) {
  const size_t n = std::strlen(ending);
  return s.size() >= n && s.compare(s.size() - n, n, ending) == 0;
}

// What a corpus file is, by its name, as spplan run's refusal names it (engine/io/data.cpp
// corpus_kind); "" for a name that is no corpus either.
std::string corpus_kind(const std::string& path) {
  static const struct {
    const char* ending;
    const char* kind;
  } kEndings[] = {{".jsonl", "JSON lines"}, {".json-lines", "JSON lines"}, {".ndjson", "JSON lines"},
                  {".json", "JSON"},        {".txt", "text"},              {".parquet", "Parquet"},
                  {".csv", "CSV"},          {".gz", "compressed"}};
  for (const auto& e : kEndings) {
    if (ends_with(path, e.ending)) return e.kind;
  }
  return "";
}

// Bytes a token id takes in `path`, told by its name; a name no token file has is refused.
Result<int> token_width(const std::string& path) {
  if (ends_with(path, ".u16.bin")) return 2;
  if (ends_with(path, ".u32.bin")) return 4;
  if (const std::string kind = corpus_kind(path); !kind.empty()) {
    return Status::invalid(printable(path) + ": " + kind + ", not token ids (allowed: *.u16.bin / *.u32.bin; make one with " +
                           tokenize_hint(path) + ")");
  }
  return Status::invalid(printable(path) + ": not a token file (allowed: *.u16.bin / *.u32.bin, little-endian token ids "
                                           "as scripts/tokenize.py writes them)");
}

// One file's ids, each document that ends in it added to `tally`; `run` carries the tokens of a
// document still open from file to file.
Status count_file(const std::string& path, int width, int64_t eos_id, int64_t* run, TokenDocuments* counted,
                  LengthTally* tally) {
  const std::string where = printable(path);
  if (width == 2 && eos_id > 0xFFFF) {
    return Status::invalid(where + ": EOS id " + std::to_string(eos_id) +
                           " is not a uint16 token id (allowed: 0 to 65535 in a *.u16.bin)");
  }
  std::error_code error;
  const auto size = std::filesystem::file_size(path, error);
  if (!error && size == 0) return Status::invalid(where + ": empty file (allowed: at least one token)");
  if (!error && size % static_cast<uintmax_t>(width) != 0) {
    return Status::invalid(where + ": size " + std::to_string(size) + " bytes is not a multiple of " + std::to_string(width) +
                           " (allowed: whole uint" + std::to_string(8 * width) + " token ids)");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::invalid(where + ": cannot be read (allowed: a readable token file)");
  std::vector<unsigned char> block(size_t{1} << 20);  // a multiple of 2 and 4: ids never straddle blocks
  const auto eos = static_cast<uint32_t>(eos_id);
  while (in.read(reinterpret_cast<char*>(block.data()), static_cast<std::streamsize>(block.size())) || in.gcount() > 0) {
    const auto bytes = static_cast<size_t>(in.gcount());
    if (bytes % static_cast<size_t>(width) != 0) {
      return Status::invalid(where + ": its size changed while it was read (allowed: a token file nothing writes to)");
    }
    for (size_t at = 0; at < bytes; at += static_cast<size_t>(width)) {
      const unsigned char* p = block.data() + at;
      const uint32_t id = width == 2 ? p[0] | uint32_t{p[1]} << 8
                                     : p[0] | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
      ++*run;
      if (id != eos) continue;
      if (*run > kMaxDocumentTokens) break;  // refused below
      ++counted->eos_tokens;
      SPPLAN_RETURN_IF_ERROR(tally->add(*run, 1, where));
      *run = 0;
    }
    if (*run > kMaxDocumentTokens) {
      return Status::invalid(where + ": a document of more than " + std::to_string(kMaxDocumentTokens) +
                             " tokens (allowed: documents up to 2^40 tokens; is the EOS id right?)");
    }
  }
  return Status::ok();
}

}  // namespace

std::string tokenize_hint(const std::string& path) {
  std::string base = path;
  for (const char* ending : {".gz", ".jsonl", ".json-lines", ".ndjson", ".json", ".txt", ".parquet", ".csv"}) {
    if (ends_with(base, ending) && base.size() > std::strlen(ending)) base.resize(base.size() - std::strlen(ending));
  }
  return "scripts/tokenize.py --tokenizer YOUR_MODEL_FOLDER --out " + shell_word(base) + " " + shell_word(path);
}

Result<TokenDocuments> count_token_documents(const std::vector<std::string>& paths, int64_t eos_id) {
  TokenDocuments counted;
  LengthTally tally;
  int64_t run = 0;
  for (const std::string& path : paths) {
    SPPLAN_RETURN_IF_ERROR(check_input_file(path));
    SPPLAN_ASSIGN_OR_RETURN(const int width, token_width(path));
    SPPLAN_RETURN_IF_ERROR(count_file(path, width, eos_id, &run, &counted, &tally));
  }
  if (run > 0) {
    counted.trailing_tokens = run;
    SPPLAN_RETURN_IF_ERROR(tally.add(run, 1, paths.empty() ? "" : printable(paths.back())));
  }
  counted.corpus = tally.take();
  return counted;
}

}  // namespace spplan::corpus
