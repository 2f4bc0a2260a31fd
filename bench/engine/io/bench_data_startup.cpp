// Start-up of a token file: TokenSource::from_file (memory-mapped, every id checked by one scan
// over the mapping) against the reader it replaced (the whole file read into memory and decoded
// into int64 ids, 4x the file in RAM for u16). Prints seconds, GB/s and the ratio; checks no time.
//
//   bench_data_startup [DIR] [MIB_LARGE]   (default /tmp, 2048: a 2 GiB u16 file, plus 256 MiB
//                                           for the side-by-side; the old reader is run on the
//                                           256 MiB file only: at 2 GiB it needs 10 GiB of RAM)
// The files are written first, so both readers find them in the page cache (a warm start); a
// cold start adds the disk's read time to the scan.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "engine/io/data.hpp"

namespace {

using Clock = std::chrono::steady_clock;
constexpr int64_t kVocab = 50000;  // ids below it; a Llama-2-sized vocabulary fits u16

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::string make_file(const std::string& dir, int64_t mib) {
  const std::string path = dir + "/spplan-bench-" + std::to_string(mib) + "m.u16.bin";
  std::ofstream out(path, std::ios::binary);
  std::vector<uint16_t> block(1 << 20);
  uint32_t x = 12345;
  for (int64_t m = 0; m < mib / 2; ++m) {  // 2 MiB per block
    for (auto& v : block) {
      x = x * 1664525u + 1013904223u;  // Numerical Recipes' LCG: cheap varied ids
      v = static_cast<uint16_t>((x >> 8) % kVocab);
    }
    out.write(reinterpret_cast<const char*>(block.data()), static_cast<std::streamsize>(block.size() * 2));
  }
  return path;
}

// The reader before memory mapping (engine/io/data.cpp at the parent commit), kept for the comparison.
double old_reader_s(const std::string& path) {
  const auto t0 = Clock::now();
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<int64_t> ids;
  for (size_t i = 0; i < bytes.size(); i += 2) {
    const uint64_t id = uint64_t{static_cast<unsigned char>(bytes[i])} | uint64_t{static_cast<unsigned char>(bytes[i + 1])} << 8;
    if (static_cast<int64_t>(id) >= kVocab) std::abort();
    ids.push_back(static_cast<int64_t>(id));
  }
  return seconds_since(t0);
}

double mapped_s(const std::string& path) {
  const auto t0 = Clock::now();
  const auto s = spplan::engine::TokenSource::from_file(path, kVocab);
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.status().message().c_str());
    std::exit(1);
  }
  const double t = seconds_since(t0);
  (void)s->window(s->num_tokens() / 3, 4096);  // a window reads its own pages only
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : "/tmp";
  const int64_t large_mib = argc > 2 ? std::atoll(argv[2]) : 2048;
  const std::string small = make_file(dir, 256), large = make_file(dir, large_mib);
  const double small_old = old_reader_s(small), small_map = mapped_s(small);
  const double large_map = mapped_s(large);
  std::printf("%-28s %12s %10s\n", "file (u16, warm cache)", "start-up s", "GB/s");
  std::printf("%-28s %12.3f %10.2f\n", "256 MiB, old reader", small_old, 256 * 1048576.0 / small_old / 1e9);
  std::printf("%-28s %12.3f %10.2f\n", "256 MiB, mapped + scan", small_map, 256 * 1048576.0 / small_map / 1e9);
  std::printf("%-28s %12.3f %10.2f\n", (std::to_string(large_mib) + " MiB, mapped + scan").c_str(), large_map,
              large_mib * 1048576.0 / large_map / 1e9);
  std::printf("start-up ratio old / mapped (256 MiB): %.1fx\n", small_old / small_map);
  std::remove(small.c_str());
  std::remove(large.c_str());
  return 0;
}
