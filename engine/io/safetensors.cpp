#include "engine/io/safetensors.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include <nlohmann/json.hpp>

#include "planner/config/config_keys.hpp"  // short_dump: a value quoted in a message, cut short
#include "planner/core/parse.hpp"          // printable: a key shown escaped

namespace spplan::engine {
namespace {

// The header is JSON text; the format caps it at 100 MB, which also bounds what a corrupt length
// makes us parse.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

size_t element_bytes(const std::string& dtype) {
  if (dtype == "F64" || dtype == "I64" || dtype == "U64") return 8;
  if (dtype == "F32" || dtype == "I32" || dtype == "U32") return 4;
  if (dtype == "F16" || dtype == "BF16" || dtype == "I16" || dtype == "U16") return 2;
  if (dtype == "I8" || dtype == "U8" || dtype == "BOOL" || dtype == "F8_E4M3" || dtype == "F8_E5M2") return 1;
  return 0;
}

uint64_t read_u64_le(const unsigned char* p) {
  uint64_t v = 0;
  for (int k = 0; k < 8; ++k) v |= uint64_t{p[k]} << (8 * k);
  return v;
}

uint16_t read_u16_le(const unsigned char* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }

float bits_to_float(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// IEEE half -> float, subnormals and inf/NaN included.
float half_to_float(uint16_t h) {
  const uint32_t sign = uint32_t{h & 0x8000u} << 16;
  const uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ffu;
  if (exp == 0x1f) return bits_to_float(sign | 0x7f800000u | (mant << 13));
  if (exp != 0) return bits_to_float(sign | ((exp + 112) << 23) | (mant << 13));
  const float magnitude = static_cast<float>(mant) * 5.9604644775390625e-8f;  // mant * 2^-24
  return sign ? -magnitude : magnitude;
}

Status bad(const std::string& path, const std::string& what) {
  return Status::invalid(path + ": " + what + " (allowed: a safetensors file)");
}

Status bad_tensor(const std::string& path, const std::string& name, const std::string& what) {
  return Status::invalid(path + ": tensor \"" + name + "\": " + what + " (the safetensors header is corrupted)");
}

Result<StTensorView> parse_entry(const std::string& path, const std::string& name, const nlohmann::json& e,
                                 const unsigned char* data, uint64_t data_bytes) {
  if (!e.is_object() || !e.contains("dtype") || !e["dtype"].is_string() || !e.contains("shape") ||
      !e["shape"].is_array() || !e.contains("data_offsets") || !e["data_offsets"].is_array() ||
      e["data_offsets"].size() != 2) {
    return bad_tensor(path, name, "lacks a dtype, a shape or two data_offsets");
  }
  StTensorView t;
  t.name = name;
  t.dtype = e["dtype"].get<std::string>();
  for (const auto& dim : e["shape"]) {
    if (!dim.is_number_unsigned()) return bad_tensor(path, name, "shape " + short_dump(e["shape"]) + " is not whole numbers");
    t.shape.push_back(dim.get<int64_t>());
  }
  const auto& off = e["data_offsets"];
  if (!off[0].is_number_unsigned() || !off[1].is_number_unsigned()) {
    return bad_tensor(path, name, "data_offsets " + short_dump(off) + " are not whole numbers");
  }
  const auto begin = off[0].get<uint64_t>(), end = off[1].get<uint64_t>();
  if (begin > end || end > data_bytes) {
    return bad_tensor(path, name, "data_offsets " + short_dump(off) + " lie outside the " + std::to_string(data_bytes) +
                                      " data bytes");
  }
  const size_t width = element_bytes(t.dtype);
  if (width == 0) return bad_tensor(path, name, "unknown dtype \"" + t.dtype + "\"");
  if (end - begin != static_cast<uint64_t>(t.numel()) * width) {
    return bad_tensor(path, name, "data_offsets " + short_dump(off) + " hold " + std::to_string(end - begin) +
                                      " bytes, shape and dtype need " + std::to_string(t.numel() * width));
  }
  t.data = data + begin;
  t.bytes = end - begin;
  return t;
}

}  // namespace

int64_t StTensorView::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

bool convertible_dtype(const std::string& dtype) { return dtype == "F32" || dtype == "BF16" || dtype == "F16"; }

struct SafetensorsFile::Mapping {
  void* address = MAP_FAILED;
  size_t bytes = 0;
  ~Mapping() {
    if (address != MAP_FAILED) ::munmap(address, bytes);
  }
};

SafetensorsFile::~SafetensorsFile() = default;
SafetensorsFile::SafetensorsFile(SafetensorsFile&&) noexcept = default;
SafetensorsFile& SafetensorsFile::operator=(SafetensorsFile&&) noexcept = default;

Result<SafetensorsFile> SafetensorsFile::open(const std::string& path) {
  SafetensorsFile f;
  f.path_ = path;
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return Status::invalid(path + ": cannot open (" + std::strerror(errno) + ")");
  struct stat st {};
  if (::fstat(fd, &st) != 0 || st.st_size < 8) {
    ::close(fd);
    return bad(path, "shorter than the 8-byte header length");
  }
  f.mapping_ = std::make_unique<Mapping>();
  f.mapping_->bytes = static_cast<size_t>(st.st_size);
  f.mapping_->address = ::mmap(nullptr, f.mapping_->bytes, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);  // the mapping keeps the file
  if (f.mapping_->address == MAP_FAILED) return Status::invalid(path + ": cannot map (" + std::strerror(errno) + ")");
  const auto* base = static_cast<const unsigned char*>(f.mapping_->address);
  const uint64_t header_bytes = read_u64_le(base);
  if (header_bytes > kMaxHeaderBytes || header_bytes > f.mapping_->bytes - 8) {
    return bad(path, "header length " + std::to_string(header_bytes) + " does not fit the file of " +
                         std::to_string(f.mapping_->bytes) + " bytes");
  }
  const nlohmann::json header = nlohmann::json::parse(base + 8, base + 8 + header_bytes, nullptr, false);
  if (header.is_discarded() || !header.is_object()) return bad(path, "header is not a JSON object");
  const unsigned char* data = base + 8 + header_bytes;
  const uint64_t data_bytes = f.mapping_->bytes - 8 - header_bytes;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object()) return bad(path, "__metadata__ is not an object");
      // The format's metadata maps strings to strings (safetensors' Python API takes Dict[str, str]);
      // another value is refused, never dumped: dump() recurses once a level of its nesting.
      for (const auto& [k, v] : entry.items()) {
        if (!v.is_string()) return bad(path, "__metadata__ value of \"" + printable(k) + "\" is not a string");
        f.metadata_[k] = v.get<std::string>();
      }
      continue;
    }
    SPPLAN_ASSIGN_OR_RETURN(StTensorView t, parse_entry(path, name, entry, data, data_bytes));
    f.tensors_.push_back(std::move(t));
  }
  return f;
}

void convert_to_f32(const StTensorView& t, int64_t first, int64_t count, float* out) {
  const size_t n = static_cast<size_t>(count);
  if (t.dtype == "F32") {
    std::memcpy(out, t.data + 4 * first, 4 * n);  // the format is little-endian, as are x86 and ARM
    return;
  }
  const unsigned char* p = t.data + 2 * first;
  if (t.dtype == "BF16") {
    for (size_t i = 0; i < n; ++i) out[i] = bits_to_float(uint32_t{read_u16_le(p + 2 * i)} << 16);
    return;
  }
  for (size_t i = 0; i < n; ++i) out[i] = half_to_float(read_u16_le(p + 2 * i));  // F16
}

namespace {

Status write_error(const std::string& path, const std::string& what) {
  return Status::io_error(path + ": " + what + " (" + std::strerror(errno) + ")");
}

Status write_all(int fd, const std::string& path, const void* data, size_t bytes) {
  const auto* p = static_cast<const char*>(data);
  for (size_t done = 0; done < bytes;) {
    const ssize_t n = ::write(fd, p + done, bytes - done);
    if (n < 0) return write_error(path, "write failed");
    done += static_cast<size_t>(n);
  }
  return Status::ok();
}

std::string header_text(const std::vector<StTensorOut>& tensors, const std::map<std::string, std::string>& metadata,
                        bool bf16) {
  nlohmann::json header = nlohmann::json::object();
  uint64_t offset = 0;
  const uint64_t width = bf16 ? 2 : 4;
  for (const StTensorOut& t : tensors) {
    uint64_t numel = 1;
    for (int64_t d : t.shape) numel *= static_cast<uint64_t>(d);
    header[t.name] = {{"dtype", bf16 ? "BF16" : "F32"}, {"shape", t.shape}, {"data_offsets", {offset, offset + width * numel}}};
    offset += width * numel;
  }
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // the data starts 8-byte aligned, as the format recommends
  return text;
}

// One tensor's values as BF16, converted in blocks (no second copy of a large tensor).
Status write_bf16(int fd, const std::string& tmp, const float* data, size_t numel) {
  constexpr size_t kBlock = size_t{1} << 20;
  std::vector<uint16_t> out;
  for (size_t first = 0; first < numel; first += kBlock) {
    const size_t n = std::min(kBlock, numel - first);
    out.resize(n);
    for (size_t i = 0; i < n; ++i) out[i] = bf16_bits(data[first + i]);
    SPPLAN_RETURN_IF_ERROR(write_all(fd, tmp, out.data(), 2 * n));
  }
  return Status::ok();
}

}  // namespace

uint16_t bf16_bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  if ((bits & 0x7f800000u) == 0x7f800000u && (bits & 0x007fffffu) != 0) return static_cast<uint16_t>((bits >> 16) | 0x40);
  const uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);  // ties go to the even bf16
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

Status write_safetensors(const std::string& path, const std::vector<StTensorOut>& tensors,
                         const std::map<std::string, std::string>& metadata, bool bf16) {
  const std::string tmp = path + ".tmp-" + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return write_error(tmp, "cannot create");
  const std::string header = header_text(tensors, metadata, bf16);
  unsigned char length[8];
  for (int k = 0; k < 8; ++k) length[k] = static_cast<unsigned char>(uint64_t{header.size()} >> (8 * k));
  Status s = write_all(fd, tmp, length, sizeof length);
  if (s) s = write_all(fd, tmp, header.data(), header.size());
  for (const StTensorOut& t : tensors) {
    size_t numel = 1;
    for (int64_t d : t.shape) numel *= static_cast<size_t>(d);
    if (s) s = bf16 ? write_bf16(fd, tmp, t.data, numel) : write_all(fd, tmp, t.data, 4 * numel);
  }
  if (s && ::fsync(fd) != 0) s = write_error(tmp, "fsync failed");
  if (::close(fd) != 0 && s) s = write_error(tmp, "close failed");
  if (s && std::rename(tmp.c_str(), path.c_str()) != 0) s = write_error(path, "cannot rename into place");
  if (!s) {
    std::error_code ec;
    std::filesystem::remove(tmp, ec);
    return s;
  }
  const std::string dir = std::filesystem::path(path).parent_path().string();
  const int dfd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (dfd >= 0) {  // the rename itself survives a crash
    ::fsync(dfd);
    ::close(dfd);
  }
  return Status::ok();
}

}  // namespace spplan::engine
