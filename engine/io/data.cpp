#include "engine/io/data.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <limits>

#include "engine/io/checkpoint_io.hpp"  // fnv1a64
#include "planner/core/parse.hpp"
#include "planner/core/path_info.hpp"
#include "planner/core/utf8_text.hpp"

namespace spplan::engine {

// Token files are read as little-endian by copying bytes into integers (token()): right only on a
// little-endian host, which every machine the engine targets is (x86-64, aarch64 Linux).
static_assert(std::endian::native == std::endian::little, "token files are little-endian");

// A read-only private mapping of a whole file; the pages come from the page cache on demand and
// are shared by every rank on the machine. An empty file has no mapping (data() is null).
namespace {

// What a SIGBUS handler can read without allocating: the mapped ranges and their paths, in a
// fixed table (a run maps a few files; past the table a bus error is reported without a name).
struct MappedRange {
  std::atomic<const unsigned char*> begin{nullptr};
  size_t size = 0;
  char path[480] = {};
};
MappedRange g_mapped[64];

void write_stderr(const char* text) {
  for (size_t left = std::strlen(text); left > 0;) {
    const ssize_t n = ::write(STDERR_FILENO, text, left);
    if (n <= 0) return;
    text += n, left -= static_cast<size_t>(n);
  }
}

// SIGBUS from reading a mapping whose file shrank: one line naming the file, then the default
// action (the process dies of SIGBUS, which the launcher reports as the signal).
extern "C" void on_bus_error(int sig, siginfo_t* info, void*) {
  const auto* address = static_cast<const unsigned char*>(info->si_addr);
  for (const MappedRange& r : g_mapped) {
    const unsigned char* begin = r.begin.load();
    if (begin == nullptr || address < begin || address >= begin + r.size) continue;
    write_stderr("spplan-engine: bus error reading ");
    write_stderr(r.path);
    write_stderr(": the file shrank while the run read it (another program truncated or rewrote it; a run "
                 "never writes its own inputs)\n");
    break;
  }
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void watch_mapping(const unsigned char* begin, size_t size, const std::string& path) {
  static const bool installed = [] {
    struct sigaction action {};
    action.sa_sigaction = on_bus_error;
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    return ::sigaction(SIGBUS, &action, nullptr) == 0;
  }();
  (void)installed;
  for (MappedRange& r : g_mapped) {
    if (r.begin.load() != nullptr) continue;
    r.size = size;
    std::snprintf(r.path, sizeof r.path, "%s", path.c_str());
    r.begin.store(begin);  // last: the handler reads a complete entry
    return;
  }
}

void unwatch_mapping(const unsigned char* begin) {
  for (MappedRange& r : g_mapped) {
    if (r.begin.load() == begin) r.begin.store(nullptr);
  }
}

}  // namespace

class MappedFile {
 public:
  static Result<std::shared_ptr<const MappedFile>> open(const std::string& path) {
    SPPLAN_RETURN_IF_ERROR(check_readable_file(path, "--data: "));
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Status::invalid("--data: " + path + ": cannot open (" + std::strerror(errno) + ")");
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd);
      return Status::invalid("--data: " + path + ": cannot open (not a regular file)");
    }
    auto file = std::shared_ptr<MappedFile>(new MappedFile());
    file->size_ = static_cast<size_t>(st.st_size);
    if (file->size_ > 0) {
      void* p = ::mmap(nullptr, file->size_, PROT_READ, MAP_PRIVATE, fd, 0);
      if (p == MAP_FAILED) {
        const std::string why = std::strerror(errno);
        ::close(fd);
        return Status::invalid("--data: " + path + ": cannot map (" + why + ")");
      }
      file->data_ = static_cast<const unsigned char*>(p);
      watch_mapping(file->data_, file->size_, path);
    }
    ::close(fd);  // the mapping keeps the file
    return std::shared_ptr<const MappedFile>(std::move(file));
  }
  ~MappedFile() {
    if (data_ == nullptr) return;
    unwatch_mapping(data_);
    ::munmap(const_cast<unsigned char*>(data_), size_);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const unsigned char* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  MappedFile() = default;
  const unsigned char* data_ = nullptr;
  size_t size_ = 0;
};

namespace {

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Offset of the first byte that is not part of valid UTF-8, or -1. ASCII runs are skipped 8
// bytes at a time: text corpora are mostly ASCII, and this scan runs over the whole mapping.
int64_t first_invalid_utf8(const unsigned char* b, size_t size) {
  size_t i = 0;
  while (i < size) {
    if (i + 8 <= size) {
      uint64_t word;
      std::memcpy(&word, b + i, 8);
      if ((word & 0x8080808080808080ULL) == 0) {
        i += 8;
        continue;
      }
    }
    const unsigned char c = b[i];
    const size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    if (n == 0 || i + n > size) return static_cast<int64_t>(i);
    for (size_t k = 1; k < n; ++k) {
      if ((b[i + k] >> 6) != 0x2) return static_cast<int64_t>(i);
    }
    i += n;
  }
  return -1;
}

// Index of the first of the n little-endian T ids at `bytes` that is >= limit, or -1. Each block
// is reduced to its largest id first, a loop the compiler vectorises (the scan then runs at memory
// speed); only a block holding a bad id is searched one id at a time.
template <typename T>
int64_t first_id_at_least(const unsigned char* bytes, int64_t n, uint64_t limit) {
  if (limit > std::numeric_limits<T>::max()) return -1;  // every T is below it
  constexpr int64_t kBlock = int64_t{1} << 16;
  const auto bound = static_cast<T>(limit);
  for (int64_t begin = 0; begin < n; begin += kBlock) {
    const int64_t end = std::min(n, begin + kBlock);
    T high = 0;
    for (int64_t i = begin; i < end; ++i) {
      T v;
      std::memcpy(&v, bytes + i * static_cast<int64_t>(sizeof(T)), sizeof(T));
      high = std::max(high, v);
    }
    if (high < bound) continue;
    for (int64_t i = begin; i < end; ++i) {
      T v;
      std::memcpy(&v, bytes + i * static_cast<int64_t>(sizeof(T)), sizeof(T));
      if (v >= bound) return i;
    }
  }
  return -1;
}

uint64_t read_id(const unsigned char* p, int width) {
  if (width == 1) return *p;
  if (width == 2) {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return v;
  }
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// What a file that is a corpus, not tokens, is: "JSON lines" for *.jsonl, and so on; "" for a file
// the engine reads. Named by the ending, and a text file whose first non-blank byte opens a JSON
// object is JSON too: read as bytes it would train on the markup, silently.
std::string corpus_kind(const std::string& path, const MappedFile& file) {
  static const struct {
    const char* ending;
    const char* kind;
  } kEndings[] = {{".jsonl", "JSON lines"}, {".json-lines", "JSON lines"}, {".json", "JSON"},
                  {".csv", "CSV"},          {".tsv", "TSV"},               {".parquet", "Parquet"},
                  {".arrow", "Arrow"},      {".npy", "NumPy"},             {".pt", "a PyTorch tensor file"},
                  {".gz", "compressed"},    {".zst", "compressed"},        {".bz2", "compressed"},
                  {".xz", "compressed"},    {".zip", "compressed"}};
  for (const auto& e : kEndings) {
    if (ends_with(path, e.ending)) return e.kind;
  }
  for (size_t i = 0; i < file.size() && i < 4096; ++i) {
    const unsigned char c = file.data()[i];
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    return c == '{' ? "JSON" : "";
  }
  return "";
}

// scripts/tokenize.py beside this executable's source tree (build/ is a folder of the checkout),
// relative to the working folder when it lies below it; else as the README names it.
std::string tokenize_script() {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (fs::path dir = exe.parent_path(); !dir.empty() && dir != dir.root_path(); dir = dir.parent_path()) {
      const fs::path script = dir / "scripts" / "tokenize.py";
      if (look_at(script.string()).kind == PathKind::kFile) {
        const fs::path relative = script.lexically_relative(fs::current_path(ec));
        return !ec && !relative.empty() && *relative.begin() != ".." ? relative.string() : script.string();
      }
    }
  }
  return "scripts/tokenize.py";
}

// Checks one mapped file and returns its token width.
Result<int> check_file(const std::string& path, const MappedFile& file, int64_t vocab_size) {
  const int width = token_width(path);
  if (file.size() == 0) return Status::invalid("--data: " + path + ": empty file (allowed: at least 2 tokens)");
  if (width == 1) {
    if (ends_with(path, ".bin")) {
      return Status::invalid("--data: " + path + ": unknown token format (allowed: *.u16.bin, *.u32.bin, or UTF-8 text)");
    }
    if (const std::string kind = corpus_kind(path, file); !kind.empty()) {
      return Status::invalid("--data: " + path + ": " + kind + ", not token ids (allowed: *.u16.bin / *.u32.bin; make one with " +
                             tokenize_command(path, "") + ")");
    }
    if (const int64_t at = first_invalid_utf8(file.data(), file.size()); at >= 0) {
      return Status::invalid("--data: " + path + ": byte " + std::to_string(at) +
                             " is not valid UTF-8 (allowed: UTF-8 text, or token ids in *.u16.bin / *.u32.bin)");
    }
    if (vocab_size < 256) {
      return Status::invalid("--data: " + path + ": byte-level text needs vocab_size >= 256, the model has " +
                             std::to_string(vocab_size) + " (allowed: a *.u16.bin / *.u32.bin file)");
    }
    return width;
  }
  if (file.size() % static_cast<size_t>(width) != 0) {
    return Status::invalid("--data: " + path + ": size " + std::to_string(file.size()) + " bytes is not a multiple of " +
                           std::to_string(width) + " (allowed: whole uint" + std::to_string(8 * width) + " token ids)");
  }
  const auto n = static_cast<int64_t>(file.size()) / width;
  const auto limit = static_cast<uint64_t>(vocab_size);
  const int64_t bad = width == 2 ? first_id_at_least<uint16_t>(file.data(), n, limit)
                                 : first_id_at_least<uint32_t>(file.data(), n, limit);
  if (bad >= 0) {
    return Status::invalid("--data: " + path + ": token " + std::to_string(bad) + " has id " +
                           std::to_string(read_id(file.data() + bad * width, width)) +
                           " (allowed: ids below the model's vocab_size " + std::to_string(vocab_size) + ")");
  }
  return width;
}

}  // namespace

int token_width(const std::string& path) { return ends_with(path, ".u16.bin") ? 2 : ends_with(path, ".u32.bin") ? 4 : 1; }

std::string tokenize_command(const std::string& path, const std::string& tokenizer_dir) {
  std::string base = path;
  for (const char* ending : {".gz", ".jsonl", ".json-lines", ".json", ".txt", ".parquet", ".csv"}) {
    if (ends_with(base, ending) && base.size() > std::strlen(ending)) base.resize(base.size() - std::strlen(ending));
  }
  const std::string tokenizer = tokenizer_dir.empty() ? "YOUR_MODEL_FOLDER" : shell_word(tokenizer_dir);
  return tokenize_script() + " --tokenizer " + tokenizer + " --out " + shell_word(base) + " " + shell_word(path);
}

Result<TokenSource> TokenSource::open(const std::vector<std::string>& paths, int64_t vocab_size, int64_t eos_id,
                                      uint64_t seed, bool shuffle) {
  if (eos_id != kNoEos && (eos_id < 0 || eos_id >= vocab_size)) {
    return Status::invalid("--eos-id: value " + std::to_string(eos_id) + " is not below the model's vocab_size " +
                           std::to_string(vocab_size) + " (allowed: 0 to " + std::to_string(vocab_size - 1) + ")");
  }
  TokenSource s = synthetic(seed, vocab_size);
  s.eos_id_ = eos_id;
  s.shuffle_ = shuffle && !paths.empty();
  for (const std::string& path : paths) {
    SPPLAN_ASSIGN_OR_RETURN(std::shared_ptr<const MappedFile> file, MappedFile::open(path));
    SPPLAN_ASSIGN_OR_RETURN(const int width, check_file(path, *file, vocab_size));
    const auto tokens = static_cast<int64_t>(file->size()) / width;
    s.segments_.push_back({std::filesystem::path(path).filename().string(), std::move(file), width, s.total_tokens_, tokens});
    s.total_tokens_ += tokens;
  }
  if (!paths.empty() && s.total_tokens_ < 2) {
    return Status::invalid("--data: " + paths.back() + ": 1 token (allowed: at least 2 tokens)");
  }
  return s;
}

TokenSource TokenSource::synthetic(uint64_t seed, int64_t vocab_size) {
  TokenSource s;
  s.seed_ = seed;
  s.vocab_size_ = vocab_size;
  return s;
}

int64_t TokenSource::token(const Segment& s, int64_t position) const {
  return static_cast<int64_t>(read_id(s.file->data() + (position - s.first) * s.width, s.width));
}

const std::vector<int64_t>& TokenSource::permutation(int64_t pass, int64_t windows) const {
  if (perm_pass_ == pass && static_cast<int64_t>(perm_.size()) == windows) return perm_;
  perm_.resize(static_cast<size_t>(windows));
  for (int64_t i = 0; i < windows; ++i) perm_[static_cast<size_t>(i)] = i;
  uint64_t state = splitmix64(seed_ ^ splitmix64(static_cast<uint64_t>(pass) + 0x5eedULL));
  __extension__ using Wide = unsigned __int128;
  for (int64_t i = windows - 1; i > 0; --i) {  // Fisher-Yates; j uniform in [0, i] by a 64x64 -> 128 multiply
    state = splitmix64(state);
    const auto j = static_cast<int64_t>((static_cast<Wide>(state) * static_cast<Wide>(i + 1)) >> 64);
    std::swap(perm_[static_cast<size_t>(i)], perm_[static_cast<size_t>(j)]);
  }
  perm_pass_ = pass;
  return perm_;
}

double TokenSource::passes(int64_t sequences, int64_t seq_len) const {
  if (total_tokens_ == 0) return 0;
  if (shuffle_) return static_cast<double>(sequences) / static_cast<double>((total_tokens_ - 1) / seq_len);
  return static_cast<double>(sequences) * static_cast<double>(seq_len) / static_cast<double>(total_tokens_);
}

std::string TokenSource::fingerprint() const {
  if (segments_.empty()) return "synthetic";
  std::string f;
  for (const Segment& s : segments_) {
    const size_t head = std::min<size_t>(s.file->size(), size_t{64} << 10);
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(fnv1a64(s.file->data(), head)));
    // The name as UTF-8 (\xNN for a byte that is not): the checkpoint's manifest is JSON, and a
    // resumed run compares its own fingerprint with the one written there.
    f += (f.empty() ? "" : "; ") + utf8_text(s.name) + " " + std::to_string(s.tokens) + " tokens " + hex;
  }
  return shuffle_ ? f + "; shuffled" : f;
}

std::vector<int64_t> TokenSource::window_at(int64_t start, int64_t seq_len) const {
  std::vector<int64_t> w(static_cast<size_t>(seq_len + 1));
  int64_t pos = start % total_tokens_;
  // The segment holding `pos`: the last one starting at or before it.
  auto seg = std::prev(std::upper_bound(segments_.begin(), segments_.end(), pos,
                                        [](int64_t p, const Segment& s) { return p < s.first; }));
  for (int64_t& t : w) {
    t = token(*seg, pos);
    if (++pos == seg->first + seg->tokens) {  // into the next file, or around to the first
      if (++seg == segments_.end()) {
        seg = segments_.begin();
        pos = 0;
      }
    }
  }
  return w;
}

std::vector<int64_t> TokenSource::window(int64_t index, int64_t seq_len) const {
  if (!segments_.empty()) {
    // index * seq_len mod n, in 128 bits: the product of a late index and a long sequence overflows 64.
    __extension__ using Wide = unsigned __int128;  // GCC and Clang; __extension__: no -Wpedantic note
    auto pos = static_cast<int64_t>(static_cast<Wide>(index) * static_cast<Wide>(seq_len) % static_cast<Wide>(total_tokens_));
    if (shuffle_) {  // whole windows, each pass in its own order (data.hpp)
      const int64_t windows = (total_tokens_ - 1) / seq_len;  // >= 1: check_enough_tokens
      pos = permutation(index / windows, windows)[static_cast<size_t>(index % windows)] * seq_len;
    }
    return window_at(pos, seq_len);
  }
  std::vector<int64_t> w(static_cast<size_t>(seq_len + 1));
  const auto v = static_cast<uint64_t>(vocab_size_);
  uint64_t state = splitmix64(seed_ ^ splitmix64(static_cast<uint64_t>(index)));
  const uint64_t mul = 1 + 2 * (state % 7);  // a per-sequence rule the model can infer from context
  uint64_t tok = state % v;
  for (auto& t : w) {
    state = splitmix64(state);
    tok = (state % 10 == 0) ? (state >> 8) % v : (tok * mul + 3) % v;
    t = static_cast<int64_t>(tok);
  }
  return w;
}

Status check_enough_tokens(const TokenSource& data, int64_t seq_len) {
  const int64_t tokens = data.num_tokens();
  if (tokens == 0 || tokens > seq_len) return Status::ok();  // synthetic, or one window fits
  return Status::invalid("--data: the files hold " + std::to_string(tokens) + " tokens, fewer than one sequence of " +
                         std::to_string(seq_len) + " plus its last label (allowed: at least " +
                         std::to_string(seq_len + 1) + " tokens, or a shorter --seq)");
}

namespace {

// Where the documents of a window's first `tokens` positions start (0 first): token t starts one
// when token t - 1 is the EOS. Every rank derives the same list from the whole window.
std::vector<int64_t> doc_starts_of(const std::vector<int64_t>& window, int64_t tokens, int64_t eos_id) {
  const auto seq_len = static_cast<int64_t>(window.size()) - 1;
  std::vector<int64_t> starts{0};
  for (int64_t t = 1; t < tokens; ++t) {
    if (t - 1 < seq_len && window[static_cast<size_t>(t - 1)] == eos_id) starts.push_back(t);
  }
  return starts;
}

// Position t's position within its document.
int64_t position_in_document(const std::vector<int64_t>& starts, int64_t t) {
  return t - *(std::upper_bound(starts.begin(), starts.end(), t) - 1);
}

// The label of position i of the window: the next token, ignored where token i is the EOS (the
// next token starts another document).
int64_t label_at(const std::vector<int64_t>& window, int64_t i, int64_t eos_id) {
  const bool crosses = eos_id != kNoEos && window[static_cast<size_t>(i)] == eos_id;
  return crosses ? kIgnoreLabel : window[static_cast<size_t>(i + 1)];
}

}  // namespace

Shard shard_of(const std::vector<int64_t>& window, int64_t sp, int64_t sp_rank, int64_t eos_id, int64_t cp,
               int64_t cp_rank) {
  if (cp > 1) return zigzag_shard_of(window, sp, sp_rank, cp, cp_rank, eos_id);
  const auto seq_len = static_cast<int64_t>(window.size()) - 1;
  const int64_t local = (seq_len + sp - 1) / sp;  // padded to a multiple of sp
  Shard s;
  s.first_position = sp_rank * local;
  for (int64_t i = s.first_position; i < s.first_position + local; ++i) {
    const bool real = i < seq_len;
    s.inputs.push_back(real ? window[static_cast<size_t>(i)] : 0);
    s.labels.push_back(real ? label_at(window, i, eos_id) : kIgnoreLabel);
  }
  if (eos_id == kNoEos) return s;
  s.doc_starts = doc_starts_of(window, local * sp, eos_id);  // the padding extends the last document
  for (int64_t t = s.first_position; t < s.first_position + local; ++t) {
    s.positions.push_back(position_in_document(s.doc_starts, t));
  }
  return s;
}

std::vector<int64_t> zigzag_positions(int64_t seq_len, int64_t sp, int64_t sp_rank, int64_t cp, int64_t cp_rank) {
  const int64_t chunk = seq_len / (2 * cp), local = 2 * chunk / sp;
  std::vector<int64_t> ring_rank;  // the CP rank's tokens: chunk c, then chunk 2cp-1-c
  for (const int64_t c : {cp_rank, 2 * cp - 1 - cp_rank}) {
    for (int64_t i = 0; i < chunk; ++i) ring_rank.push_back(c * chunk + i);
  }
  return {ring_rank.begin() + sp_rank * local, ring_rank.begin() + (sp_rank + 1) * local};
}

Shard zigzag_shard_of(const std::vector<int64_t>& window, int64_t sp, int64_t sp_rank, int64_t cp, int64_t cp_rank,
                      int64_t eos_id) {
  const auto seq_len = static_cast<int64_t>(window.size()) - 1;
  Shard s;
  const std::vector<int64_t> global = zigzag_positions(seq_len, sp, sp_rank, cp, cp_rank);
  s.first_position = global.front();
  for (const int64_t i : global) {
    s.inputs.push_back(window[static_cast<size_t>(i)]);
    s.labels.push_back(label_at(window, i, eos_id));
  }
  if (eos_id == kNoEos) {
    s.positions = global;
    return s;
  }
  s.doc_starts = doc_starts_of(window, seq_len, eos_id);
  for (const int64_t t : global) s.positions.push_back(position_in_document(s.doc_starts, t));
  return s;
}

int64_t sequence_index(int64_t first_sequence, int64_t micro_step, int64_t dp, int64_t dp_rank, int64_t micro_batch,
                       int64_t slot) {
  return first_sequence + (micro_step * dp + dp_rank) * micro_batch + slot;
}

}  // namespace spplan::engine
