// Planner speed targets: >= 1,000,000 configuration evaluations per second on one core; `plan` and
// `max-seq` for Llama-3.1-70B on 1024 H100s at 1M tokens each under 100 ms; the same plan over a
// corpus's documents (--lengths) interactive, its time beside the single-length plan's.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <random>

#include "planner/config/loaders.hpp"
#include "planner/corpus/corpus.hpp"
#include "planner/search/search.hpp"

namespace {

spplan::PlanSpec llama70b_1024() {
  setenv("SPPLAN_CONFIG_DIR", SPPLAN_CONFIG_DIR_DEFAULT, 0);
  spplan::PlanSpec p;
  p.model = spplan::load_model("llama-3.1-70b").value();
  p.cluster.gpu = spplan::load_gpu("h100-80gb").value();
  p.cluster.num_gpus = 1024;
  p.seq_len = 1 << 20;
  p.knobs.sp = 16;
  p.knobs.tiled_loss = true;
  return p;
}

void BM_Estimate(benchmark::State& state) {
  spplan::PlanSpec p = llama70b_1024();
  for (auto _ : state) {
    p.seq_len += 1024;  // a different configuration every time
    benchmark::DoNotOptimize(spplan::costmodel::estimate(p));
  }
  state.SetItemsProcessed(state.iterations());  // items/s = evaluations per second
}
BENCHMARK(BM_Estimate);

void BM_PlanLlama70B_1024Gpus_1M(benchmark::State& state) {
  const spplan::PlanSpec p = llama70b_1024();
  for (auto _ : state) benchmark::DoNotOptimize(spplan::search::search_plans(p, true));
  state.counters["evaluations"] = static_cast<double>(spplan::search::search_plans(p, true).evaluated);
}
BENCHMARK(BM_PlanLlama70B_1024Gpus_1M)->Unit(benchmark::kMillisecond);

void BM_MaxSeqSearchedLlama70B_1024Gpus(benchmark::State& state) {
  const spplan::PlanSpec p = llama70b_1024();
  for (auto _ : state) benchmark::DoNotOptimize(spplan::search::max_seq_searched(p, 1024));
}
BENCHMARK(BM_MaxSeqSearchedLlama70B_1024Gpus)->Unit(benchmark::kMillisecond);

void BM_MaxSeqFixedLlama70B_1024Gpus(benchmark::State& state) {
  const spplan::PlanSpec p = llama70b_1024();
  for (auto _ : state) benchmark::DoNotOptimize(spplan::search::max_seq_fixed(p, 1024));
}
BENCHMARK(BM_MaxSeqFixedLlama70B_1024Gpus)->Unit(benchmark::kMillisecond);

}  // namespace

namespace {

// A long-tailed corpus of `documents` documents, lengths 256 to 1M tokens (a fixed lognormal: the
// same corpus every run), packed bfd at the plan's 1M tokens.
spplan::corpus::Corpus lognormal_corpus(int64_t documents) {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> length(9.5, 1.4);
  std::map<int64_t, int64_t> counts;
  for (int64_t i = 0; i < documents; ++i) ++counts[std::clamp<int64_t>(static_cast<int64_t>(length(rng)), 256, 1 << 20)];
  return {{counts.begin(), counts.end()}};
}

double plan_ms(const spplan::PlanSpec& p, int runs) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < runs; ++i) benchmark::DoNotOptimize(spplan::search::search_plans(p, true));
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() / runs;
}

// The same search as BM_PlanLlama70B_1024Gpus_1M over a corpus's documents; the counter
// vs_single_length is its time over the single-length plan's, measured in this process.
void BM_PlanCorpusLlama70B_1024Gpus_1M(benchmark::State& state) {
  spplan::PlanSpec p = llama70b_1024();
  const spplan::corpus::Corpus corpus = lognormal_corpus(state.range(0));
  p.documents = spplan::corpus::pack(corpus, p.seq_len, spplan::corpus::Packing::kBfd).pieces;
  p.packed_documents = true;
  for (auto _ : state) benchmark::DoNotOptimize(spplan::search::search_plans(p, true));
  state.counters["distinct_pieces"] = static_cast<double>(p.documents.length_counts.size());
  state.counters["vs_single_length"] = plan_ms(p, 3) / plan_ms(llama70b_1024(), 3);
}
BENCHMARK(BM_PlanCorpusLlama70B_1024Gpus_1M)->Arg(5000)->Arg(1000000)->Unit(benchmark::kMillisecond);

}  // namespace
