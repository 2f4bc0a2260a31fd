// JSON files in and out. In: a file read whole into one object (a Hugging Face config.json), with
// what JSON leaves to the reader decided: a key given twice in one object is refused, and so is
// nesting deeper than any real config's, before anything walks the value. Out: text that is UTF-8
// whatever bytes the strings hold.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "planner/core/status.hpp"

namespace spplan {

// The deepest nesting of objects and arrays a file may have, its top-level object counted.
// transformers' configs nest a few levels (text_config.rope_scaling, quantization_config's
// lists); every walk over a value that recurses once a level (dump(), a copy) overflowed the
// stack on an array nested 100,000 deep, 200 KB of text.
inline constexpr int kMaxJsonNesting = 64;

// The top-level object of the JSON file at `path`. Refused in one line naming the file: a file
// check_input_file refuses; a syntax error (the byte where parsing stopped); a number out of
// range; nesting deeper than kMaxJsonNesting (the top-level key under which it happened); a key
// given twice in one object; a top level that is not an object.
Result<nlohmann::json> read_json_object(const std::string& path);

// `j` as spplan writes JSON (dump(indent): -1 compact, else indented so), each string and key at
// any depth made UTF-8 first (utf8_text: a byte that is not is written \xNN, as messages show it),
// where dump() throws type_error 316: a model named after a Latin-1 folder, a CSV cell, a path.
std::string dump_utf8(nlohmann::json j, int indent = -1);

}  // namespace spplan
