// engine/measure/validate_cases.hpp: the GPU case list covers what the issue asks for, every case is a
// valid run, and the boundary cases sit on either side of the planner's max-seq. The verdict is
// checked against the engine's real out-of-memory report, emulated on this CPU.
#include "engine/measure/validate_cases.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "engine/io/data.hpp"
#include "engine/run/options.hpp"
#include "engine/run/predict.hpp"
#include "planner/config/loaders.hpp"
#include "run_helpers.hpp"

namespace spplan::engine {
namespace {

bool has(const ValidateCase& c, const std::string& a, const std::string& b = "") {
  for (size_t i = 0; i < c.knobs.size(); ++i) {
    if (c.knobs[i] == a && (b.empty() || (i + 1 < c.knobs.size() && c.knobs[i + 1] == b))) return true;
  }
  return false;
}

Status check(const ValidateCase& c) {
  const std::vector<std::string> args = run_args(c, 1);
  std::vector<const char*> argv = {"spplan-engine"};
  for (const auto& a : args) argv.push_back(a.c_str());
  auto opts = parse_run_options(static_cast<int>(argv.size()), argv.data(), 2);
  if (!opts.ok()) return opts.status();
  return check_run_options(&*opts, c.world);
}

TEST(ValidateCases, TheGpuListCoversModelsZeroOffloadTilingAndPrecisions) {
  const auto cases = gpu_cases(1, false);
  std::set<std::string> models, zero, names;
  bool offload_opt = false, offload_params = false, ckpt_offload = false, tiled_mlp = false, tiled_loss = false;
  bool bf16 = false, fp32 = false;
  int64_t min_seq = 1 << 30, max_seq = 0;
  for (const ValidateCase& c : cases) {
    models.insert(c.model);
    zero.insert(has(c, "--zero", "1") ? "1" : has(c, "--zero", "2") ? "2" : has(c, "--zero", "3") ? "3" : "0");
    offload_opt |= has(c, "--offload-optimizer", "cpu");
    offload_params |= has(c, "--offload-params", "cpu");
    ckpt_offload |= has(c, "--act-ckpt", "offload");
    tiled_mlp |= has(c, "--tiled-mlp");
    tiled_loss |= has(c, "--tiled-loss");
    bf16 |= has(c, "--precision", "bf16");
    fp32 |= has(c, "--precision", "fp32");
    min_seq = std::min(min_seq, c.seq);
    max_seq = std::max(max_seq, c.seq);
    EXPECT_TRUE(names.insert(case_name(c)).second) << "two cases named " << case_name(c);
    EXPECT_EQ(c.expect, ValidateCase::Expect::kRuns);
  }
  EXPECT_EQ(models, (std::set<std::string>{"qwen3-0.6b", "llama-3.2-1b", "qwen3-1.7b", "qwen3-4b", "llama-3.1-8b"}));
  EXPECT_EQ(zero, (std::set<std::string>{"0", "1", "2", "3"}));
  EXPECT_TRUE(offload_opt && offload_params && ckpt_offload && tiled_mlp && tiled_loss && bf16 && fp32);
  EXPECT_EQ(min_seq, 4096);
  EXPECT_GE(max_seq, 32768);
  // --quick is the list's head.
  const auto quick = gpu_cases(1, true);
  ASSERT_LT(quick.size(), cases.size());
  for (size_t i = 0; i < quick.size(); ++i) EXPECT_EQ(case_name(quick[i]), case_name(cases[i]));
}

TEST(ValidateCases, RingAndUlyssesTimesRingHaveACaseEach) {
  bool ring = false, hybrid = false;
  for (const ValidateCase& c : cpu_cases(false)) {
    if (!has(c, "--cp", "2")) continue;
    ring |= c.sp == 1;
    hybrid |= c.sp > 1;
  }
  EXPECT_TRUE(ring && hybrid);
  EXPECT_EQ(case_name(cpu_cases(false).back()), "tiny-llama s8k sp4 act-ckpt-full tiled-mlp tiled-loss");
  // --ring: every ring case has its Ulysses case of the same degree and knobs.
  const std::vector<ValidateCase> pairs = cpu_ring_cases();
  int rings = 0;
  for (const ValidateCase& c : pairs) {
    if (!has(c, "--cp")) continue;
    ++rings;
    const int64_t cp = std::stoll(std::find(c.knobs.begin(), c.knobs.end(), "--cp")[1]);
    std::vector<std::string> rest(c.knobs.begin() + 2, c.knobs.end());  // --cp N leads
    EXPECT_EQ(std::count_if(pairs.begin(), pairs.end(), [&](const ValidateCase& u) {
                return u.sp == c.sp * cp && u.world == c.world && u.seq == c.seq && u.knobs == rest;
              }), 1) << case_name(c);
  }
  EXPECT_EQ(rings, 3);
  const auto on8 = gpu_cases(8, false);
  EXPECT_EQ(case_name(on8.back()), "qwen3-1.7b s32k sp4 w8 act-ckpt-full precision-bf16 cp-2");
}

// A sliding window runs in the full list at sp 1 and 2, and in bf16; one case peaks at
// the attention's backward (checkpointed, tiled MLP and loss, sp 1), where the window's blocks
// add their band and gradients.
TEST(ValidateCases, SlidingWindowsHaveCases) {
  std::set<std::string> window, in_full;
  for (const ValidateCase& c : cpu_window_cases()) window.insert(case_name(c));
  for (const ValidateCase& c : cpu_cases(false)) {
    if (c.model == "tiny-mistral") in_full.insert(case_name(c));
  }
  EXPECT_EQ(window, in_full);
  EXPECT_EQ(window, (std::set<std::string>{"tiny-mistral s4k sp1 act-ckpt-none", "tiny-mistral s8k sp2 act-ckpt-full tiled-loss",
                                           "tiny-mistral s16k sp2 act-ckpt-full precision-bf16",
                                           "tiny-mistral s8k sp1 act-ckpt-full tiled-mlp tiled-loss"}));
}

// A mixture of experts runs untiled and sharded by ZeRO 3, at sp 1 and 2.
TEST(ValidateCases, MixturesOfExpertsHaveCases) {
  std::set<std::string> moe;
  for (const ValidateCase& c : cpu_cases(false)) {
    if (c.model == "tiny-qwen3-moe") moe.insert(case_name(c));
  }
  EXPECT_EQ(moe, (std::set<std::string>{"tiny-qwen3-moe s4k sp1 act-ckpt-none", "tiny-qwen3-moe s8k sp2 act-ckpt-full",
                                        "tiny-qwen3-moe s8k sp2 w4 act-ckpt-full zero-3 reduce-bucket-262144 tiled-loss"}));
}

// --packed: each ring case beside its Ulysses case at equal degree and knobs, all with documents
// (--eos-id and a token file); the run reads the file the case names, and the file holds documents
// of the case's length.
TEST(ValidateCases, PackedDocumentsRunOnARingUlyssesTimesRingAndUlysses) {
  const std::vector<ValidateCase> packed = cpu_packed_cases();
  std::set<std::string> names;
  for (ValidateCase c : packed) {
    EXPECT_TRUE(has(c, "--eos-id", std::to_string(kPackedEosId))) << case_name(c);
    EXPECT_EQ(c.doc_tokens, 1024) << case_name(c);
    names.insert(case_name(c));
    c.data = "docs.u16.bin";
    const std::vector<std::string> args = run_args(c, 3);
    const auto data = std::find(args.begin(), args.end(), "--data");
    ASSERT_NE(data, args.end()) << case_name(c);
    EXPECT_EQ(data[1], "docs.u16.bin");
  }
  EXPECT_EQ(names, (std::set<std::string>{
                       "tiny-llama s8k sp1 w2 cp-2 act-ckpt-full tiled-mlp tiled-loss eos-id-255 docs-1024",
                       "tiny-llama s8k sp2 act-ckpt-full tiled-mlp tiled-loss eos-id-255 docs-1024",
                       "tiny-llama s8k sp2 w4 cp-2 act-ckpt-full tiled-mlp tiled-loss eos-id-255 docs-1024",
                       "tiny-llama s8k sp4 act-ckpt-full tiled-mlp tiled-loss eos-id-255 docs-1024"}));
  const std::string path = testing::fresh_dir("packed_cases") + "/docs.u16.bin";
  ASSERT_TRUE(write_packed_data(path, 2 * 8 + 1, 8).is_ok());
  auto source = TokenSource::open({path}, 4096, kPackedEosId);
  ASSERT_TRUE(source.ok()) << source.status().message();
  const std::vector<int64_t> w = source->window_at(0, 16);
  for (size_t i = 0; i < w.size(); ++i) EXPECT_EQ(w[i] == kPackedEosId, (i + 1) % 8 == 0) << i;
  EXPECT_FALSE(write_packed_data(testing::fresh_dir("packed_cases_missing") + "/no/such/docs.u16.bin", 9, 8).is_ok());
}

TEST(ValidateCases, EveryCaseIsARunTheEngineAccepts) {
  for (int64_t gpus : {1, 8}) {
    for (const auto& list : {gpu_cases(gpus, false), gpu_boundary_plans(gpus, false), cpu_cases(false), cpu_cases(true),
                             long_cpu_cases(), cpu_packed_cases()}) {
      for (ValidateCase c : list) {
        if (c.seq == 0) c.seq = 8192;  // a boundary plan's placeholder
        const Status s = check(c);
        EXPECT_TRUE(s.is_ok()) << case_name(c) << ": " << s.message();
      }
    }
  }
  EXPECT_EQ(case_name(gpu_cases(8, false)[1]), "qwen3-0.6b s16k sp8 act-ckpt-full precision-bf16");
}

// --long (the regime ALST runs in): memory-only cases at 64K tokens and more, at sp 1, 2 and 4, with every
// ALST feature somewhere; the default lists have no memory-only case.
TEST(ValidateCases, TheLongListIsMemoryOnlyAtLongSequencesWithTheAlstFeatures) {
  std::set<int64_t> sps;
  int64_t longest = 0;
  std::set<std::string> names;
  bool ckpt_offload = false, tiled_mlp = false, tiled_loss = false, zero3 = false, offload_opt = false;
  for (const ValidateCase& c : long_cpu_cases()) {
    EXPECT_TRUE(c.memory_only) << case_name(c);
    EXPECT_GE(c.seq, 65536) << case_name(c);
    EXPECT_EQ(c.expect, ValidateCase::Expect::kRuns);
    EXPECT_TRUE(names.insert(case_name(c)).second) << "two cases named " << case_name(c);
    sps.insert(c.sp);
    longest = std::max(longest, c.seq);
    ckpt_offload |= has(c, "--act-ckpt", "offload");
    tiled_mlp |= has(c, "--tiled-mlp");
    tiled_loss |= has(c, "--tiled-loss");
    zero3 |= has(c, "--zero", "3");
    offload_opt |= has(c, "--offload-optimizer", "cpu");
  }
  EXPECT_EQ(sps, (std::set<int64_t>{1, 2, 4}));
  EXPECT_GE(longest, 131072);
  EXPECT_TRUE(ckpt_offload && tiled_mlp && tiled_loss && zero3 && offload_opt);
  for (const auto& list : {cpu_cases(false), cpu_cases(true), gpu_cases(1, false)}) {
    for (const ValidateCase& c : list) EXPECT_FALSE(c.memory_only) << case_name(c);
  }
}

// The planner's max-seq fits on the spec and 1.1x of it (rounded up to 1K) does not.
TEST(ValidateCases, BoundaryCasesSitEitherSideOfThePlannersMaxSeq) {
  const GpuSpec h100 = *load_gpu("h100-80gb");
  for (const ValidateCase& plan : gpu_boundary_plans(1, false)) {
    const auto b = boundary_cases(plan, h100, 1024);
    ASSERT_TRUE(b.ok()) << b.status().message();
    ASSERT_EQ(b->size(), 2u);
    const ValidateCase &fits = (*b)[0], &past = (*b)[1];
    EXPECT_EQ(fits.expect, ValidateCase::Expect::kFitsAtBoundary);
    EXPECT_EQ(past.expect, ValidateCase::Expect::kOomPastBoundary);
    EXPECT_EQ(fits.seq % 1024, 0);
    EXPECT_GE(past.seq * 10, fits.seq * 11);
    EXPECT_LT(past.seq * 10, fits.seq * 11 + 10 * 1024);
    EXPECT_GE(fits.seq, 16384) << "an H100 holds at least 16K of a <= 1.7B model with checkpointing";
    EXPECT_NE(case_name(past).find("(1.1x max-seq)"), std::string::npos);
    for (const ValidateCase& c : *b) {
      const std::vector<std::string> args = run_args(c, 1);
      std::vector<const char*> argv = {"spplan-engine"};
      for (const auto& a : args) argv.push_back(a.c_str());
      auto opts = parse_run_options(static_cast<int>(argv.size()), argv.data(), 2);
      ASSERT_TRUE(opts.ok());
      ASSERT_TRUE(check_run_options(&*opts, 1).is_ok());
      const double peak = *predict(opts->plan, Pricing{h100, true}).device_memory_bytes;
      const double capacity = h100.memory_gib * 1024 * 1024 * 1024;
      if (c.expect == ValidateCase::Expect::kFitsAtBoundary) {
        EXPECT_LE(peak, capacity) << case_name(c);
      } else {
        EXPECT_GT(peak, capacity) << case_name(c);
      }
    }
  }
  GpuSpec small = h100;
  small.memory_gib = 0.5;  // less than the CUDA context and the weights
  const auto none = boundary_cases(gpu_boundary_plans(1, true)[0], small, 1024);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("not even 1024 tokens fit on h100-80gb"), std::string::npos)
      << none.status().message();
}

TEST(ValidateCases, TheVerdictOfEachOutcome) {
  ValidateCase runs{"qwen3-0.6b", 4096, 1, 1, {}, ValidateCase::Expect::kRuns};
  ValidateCase fits = runs, past = runs;
  fits.expect = ValidateCase::Expect::kFitsAtBoundary;
  past.expect = ValidateCase::Expect::kOomPastBoundary;
  struct Row {
    const ValidateCase* c;
    RunOutcome r;
    const char* error;  // "" = right
  };
  const Row rows[] = {
      {&runs, {0, false}, ""},
      {&runs, {1, false}, "run failed: exit 1"},
      {&runs, {3, true}, "run failed: ran out of device memory (exit 3)"},
      {&fits, {0, false}, ""},
      {&fits, {3, true}, "at the planner's max-seq: run failed: ran out of device memory (exit 3)"},
      {&past, {3, true}, ""},
      {&past, {0, false},
       "expected the engine's out-of-memory report (exit 3, \"oom\": true) past the planner's max-seq, got a run that fit"},
      {&past, {1, false}, "expected the engine's out-of-memory report (exit 3, \"oom\": true) past the planner's max-seq, got exit 1"},
      {&past, {3, false}, "got exit 3"},
  };
  for (const Row& r : rows) {
    const std::string e = outcome_error(*r.c, r.r);
    if (std::string(r.error).empty()) {
      EXPECT_EQ(e, "") << r.r.exit_code;
    } else {
      EXPECT_NE(e.find(r.error), std::string::npos) << e;
    }
  }
}

// The verdict against the real engine: tiny-llama on a device emulated at 192 MiB
// (SPPLAN_ENGINE_DEVICE_MEMORY_LIMIT, oom_test.cpp). The planner's max-seq on a spec of that
// capacity without CUDA overheads; the run at 1.1x of it must end in the engine's OOM report.
TEST(ValidateCases, PastTheBoundaryTheEngineReportsOutOfMemory) {
  GpuSpec device = *load_gpu("h100-80gb");
  device.name = "emulated 192 MiB";
  device.memory_gib = 192.0 / 1024;
  device.cuda_context_gib = device.nccl_gib_per_group = device.nccl_a2a_gib_per_peer = 0;
  device.gemm_workspace_mib = device.allocator_fragmentation = 0;
  const ValidateCase plan{"tiny-llama", 0, 1, 1, {"--act-ckpt", "full"}, ValidateCase::Expect::kRuns};
  const auto b = boundary_cases(plan, device, 1024);
  ASSERT_TRUE(b.ok()) << b.status().message();
  const ValidateCase& past = (*b)[1];
  std::vector<std::string> args = run_args(past, 1);
  const auto r = testing::run_engine(args, {{"SPPLAN_ENGINE_DEVICE_MEMORY_LIMIT", std::to_string(192 << 20)}}, 120);
  const nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
  const RunOutcome outcome{r.exit_code, j.is_object() && j.value("oom", false)};
  EXPECT_EQ(outcome_error(past, outcome), "") << case_name(past) << "\n" << r.err;
}

}  // namespace
}  // namespace spplan::engine
