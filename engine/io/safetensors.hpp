// The safetensors file format (huggingface/safetensors), read and written over plain bytes: an
// 8-byte little-endian header length N, N bytes of JSON {name: {dtype, shape, data_offsets:
// [begin, end)}, "__metadata__": {...}}, then the tensors' raw little-endian bytes, offsets
// counted from the end of the header. No LibTorch: the launcher checks a folder before any rank
// starts.
//
// Reading maps the file (mmap) and hands out views; converting a range of elements touches only
// those bytes' pages, so a ZeRO-3 rank reading its shard reads only its shard. The engine takes
// F32, BF16 and F16 and converts them to fp32 (then to the model dtype); other dtypes are listed
// (a folder check names them) but cannot be converted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "planner/core/status.hpp"

namespace spplan::engine {

struct StTensorView {
  std::string name;
  std::string dtype;            // as in the header: "F32", "BF16", "F16", "I64", ...
  std::vector<int64_t> shape;
  const unsigned char* data = nullptr;  // into the mapping; valid while its SafetensorsFile lives
  size_t bytes = 0;

  int64_t numel() const;
};

// True for the dtypes convert_to_f32 takes: F32, BF16, F16.
bool convertible_dtype(const std::string& dtype);

class SafetensorsFile {
 public:
  // Maps `path` and checks the header: its length fits the file, every entry has a dtype, a shape
  // and data_offsets that lie in the data and hold exactly numel * element size bytes. Errors name
  // the file and, where there is one, the tensor.
  static Result<SafetensorsFile> open(const std::string& path);

  SafetensorsFile(SafetensorsFile&&) noexcept;
  SafetensorsFile& operator=(SafetensorsFile&&) noexcept;
  ~SafetensorsFile();

  const std::string& path() const { return path_; }
  const std::vector<StTensorView>& tensors() const { return tensors_; }  // in header (name) order
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

 private:
  struct Mapping;
  SafetensorsFile() = default;
  std::string path_;
  std::unique_ptr<Mapping> mapping_;
  std::vector<StTensorView> tensors_;
  std::map<std::string, std::string> metadata_;
};

// Elements [first, first + count) of `t` (row-major) as fp32 into out[0, count).
// REQUIRES: convertible_dtype(t.dtype) and the range inside the tensor.
void convert_to_f32(const StTensorView& t, int64_t first, int64_t count, float* out);

// One tensor to write: fp32 values, row-major, `data` holding the product of `shape` floats.
struct StTensorOut {
  std::string name;
  std::vector<int64_t> shape;
  const float* data = nullptr;
};

// Writes an F32 (or, with bf16, BF16) safetensors file atomically: a temporary file beside `path`,
// fsync'ed, renamed into place (a crash leaves the old file or none, never half a file). BF16 is
// each fp32 value rounded to nearest, ties to even, as torch's .to(torch.bfloat16) rounds.
// `metadata` goes to "__metadata__" (transformers wants {"format": "pt"}).
Status write_safetensors(const std::string& path, const std::vector<StTensorOut>& tensors,
                         const std::map<std::string, std::string>& metadata, bool bf16 = false);

// fp32 -> bf16 bits, round to nearest even; a NaN stays a (quiet) NaN.
uint16_t bf16_bits(float value);

}  // namespace spplan::engine
