// Peak memory per rank at 16K tokens falls with sp (each rank holds s/P tokens' activations and
// logits; parameters, gradients and AdamW state stay replicated at ZeRO 0).
#include <gtest/gtest.h>

#include "run_helpers.hpp"

namespace spplan::engine::testing {
namespace {

nlohmann::json run_16k(const std::string& sp) {
  return json_of(run_engine({"run", "--model", "tiny-llama", "--seq", "16k", "--sp", sp, "--nproc", sp, "--steps", "1",
                             "--seed", "7", "--json"}));
}

int64_t category_sum(const nlohmann::json& memory) {
  int64_t sum = 0;
  for (const auto& [key, value] : memory.items()) {
    if (key != "rank") sum += value.get<int64_t>();
  }
  return sum;
}

TEST(EngineMemory, PeakPerRankFallsWithSpAt16kTokens) {
  const nlohmann::json sp1 = run_16k("1");
  const nlohmann::json sp4 = run_16k("4");
  const auto peak1 = sp1["peak_memory_bytes"].get<double>(), peak4 = sp4["peak_memory_bytes"].get<double>();
  const double ratio = peak4 / peak1;
  std::cout << "peak memory per rank at 16K: sp1 " << peak1 / (1 << 20) << " MiB, sp4 " << peak4 / (1 << 20)
            << " MiB, ratio " << ratio << std::endl;
  EXPECT_LT(ratio, 0.5);
  // The breakdown accounts for every counted byte at the peak.
  EXPECT_EQ(category_sum(sp1["memory"]), sp1["peak_memory_bytes"].get<int64_t>());
  EXPECT_EQ(category_sum(sp4["memory"]), sp4["peak_memory_bytes"].get<int64_t>());
  EXPECT_EQ(sp4["memory"]["other_bytes"].get<int64_t>(), 0) << "an allocation escaped the categories";
}

}  // namespace
}  // namespace spplan::engine::testing
