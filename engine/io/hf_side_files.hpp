// The files of a Hugging Face model folder besides the weights, carried from --init-from through
// every checkpoint to --export-hf: config.json (bos/eos ids, max_position_embeddings and every key
// the engine does not read), generation_config.json and the tokenizer's files.
//
// Why carry them: a run resumed from a checkpoint has no --init-from folder (without them the export
// after --resume lost bos_token_id and eos_token_id and had max_position_embeddings set to the
// training length). The checkpoint stores each file as a blob "hf.NAME" (checkpoint_io.hpp), so
// resuming on another machine, without the original folder, still exports the same folder.
//
// config.json is written back with only what training changes: the dtype of the weights written.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/io/checkpoint_io.hpp"
#include "planner/core/status.hpp"

namespace spplan::engine {

using HfSideFiles = std::map<std::string, std::string>;  // file name ("config.json") -> its bytes

// The names carried, in the order they are looked for.
const std::vector<std::string>& hf_side_file_names();

// Those of hf_side_file_names() present in `dir` (none is required). An unreadable file is an
// error naming it.
Result<HfSideFiles> read_hf_side_files(const std::string& dir);

// The side files a checkpoint's blobs hold ("hf.config.json" -> "config.json").
HfSideFiles hf_side_files_of(const std::map<std::string, std::string>& blobs);
// Blobs pointing into `files` (which must outlive them), named "hf." + name.
std::vector<BlobRef> hf_side_file_blobs(const HfSideFiles& files);

// config.json for an export: `original` (the carried file's text, "" when there is none: then
// `from_spec`) with "dtype" set to the weights' dtype ("float32" or "bfloat16") and the older
// "torch_dtype" removed (transformers 5 reads "dtype"); with `max_position_embeddings` > 0
// (--export-trained-length) that key raised to it when it is lower. Nothing else changes.
Result<std::string> exported_config(const std::string& original, const nlohmann::json& from_spec, bool bf16,
                                    int64_t max_position_embeddings = 0);

// Writes every side file but config.json into `dir`, each atomically.
Status write_hf_side_files(const std::string& dir, const HfSideFiles& files);

}  // namespace spplan::engine
