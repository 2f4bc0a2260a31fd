// The two formats of a lengths file (docs/lengths.md), each read from text already in memory:
// lengths_file.cpp tells them apart and holds the CSV reader, lengths_json.cpp the JSON one.
#pragma once

#include <string>
#include <string_view>

#include "planner/corpus/corpus.hpp"

namespace spplan::corpus {

// What a value may be, as every message of both readers says it.
inline constexpr const char* kLengthAllowed = "a whole number of tokens from 1 to 1099511627776";
inline constexpr const char* kCountAllowed = "a whole number of documents from 1 to 2147483648";

// `text` digits only and from 1 to `max`; else -1.
int64_t whole_number(std::string_view text, int64_t max);
// `text` for a message: one line (printable), at most 40 characters of it and "..." after.
std::string shown(std::string_view text);
// "FILE: no documents (allowed: ...)": a file that parses but holds no document.
Status no_documents(const std::string& where);

Result<Corpus> read_lengths_csv(const std::string& where, std::string_view text);
Result<Corpus> read_lengths_json(const std::string& where, std::string_view text);

}  // namespace spplan::corpus
