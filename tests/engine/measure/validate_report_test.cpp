// engine/measure/validate_report.hpp: a memory-only row (validate_cases.hpp, --long) prints "-" for
// its time columns and stays out of the time errors, while its memory error counts.
#include "engine/measure/validate_report.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace spplan::engine {
namespace {

nlohmann::json timed_row() {
  return {{"case", "tiny-llama s4k sp1"},          {"expect", "runs"},
          {"measured_peak_memory_bytes", 100.0},  {"predicted_peak_memory_bytes", 102.0},
          {"mem_error_pct", 2.0},                 {"measured_step_time_s", 1.0},
          {"predicted_step_time_s", 1.1},         {"time_error_pct", 10.0}};
}

nlohmann::json memory_only_row() {
  return {{"case", "micro-llama s64k sp1"},       {"expect", "runs"}, {"memory_only", true},
          {"measured_peak_memory_bytes", 200.0}, {"predicted_peak_memory_bytes", 196.0},
          {"mem_error_pct", -4.0}};
}

nlohmann::json layout_row(const std::string& name, int64_t sp, const std::vector<std::string>& knobs, double measured,
                          double predicted) {
  nlohmann::json r = timed_row();
  r.update({{"case", name}, {"model", "tiny-llama"}, {"seq", 8192}, {"world", 4}, {"sp", sp}, {"knobs", knobs},
            {"measured_step_time_s", measured}, {"predicted_step_time_s", predicted}});
  return r;
}

// Each ring case set beside the Ulysses case of its degree, model, length and knobs; a
// row of other knobs, another degree or no step time pairs with nothing.
TEST(ValidateReport, RingCasesPairWithUlyssesAtTheirDegree) {
  const std::vector<std::string> tiled = {"--act-ckpt", "full", "--tiled-loss"};
  const nlohmann::json rows = nlohmann::json::array({
      layout_row("cp4", 1, {"--cp", "4", "--act-ckpt", "full", "--tiled-loss"}, 9.0, 10.0),
      layout_row("sp2 cp2", 2, {"--cp", "2", "--act-ckpt", "full", "--tiled-loss"}, 8.0, 8.0),
      layout_row("sp4 other knobs", 4, {"--act-ckpt", "none"}, 1.0, 1.0),
      layout_row("sp2", 2, tiled, 1.0, 1.0),
      layout_row("sp4", 4, tiled, 10.0, 10.0),
      layout_row("cp2 of another length", 1, {"--cp", "2", "--act-ckpt", "full", "--tiled-loss"}, 1.0, 1.0),
      memory_only_row()});
  nlohmann::json with_other_seq = rows;
  with_other_seq[5]["seq"] = 4096;
  const std::vector<RingPair> pairs = ring_pairs(with_other_seq);
  ASSERT_EQ(pairs.size(), 2u);
  EXPECT_EQ(pairs[0].ring, "cp4");
  EXPECT_EQ(pairs[0].ulysses, "sp4");
  EXPECT_DOUBLE_EQ(pairs[0].measured_ratio, 0.9);
  EXPECT_DOUBLE_EQ(pairs[0].predicted_ratio, 1.0);
  EXPECT_NEAR(pairs[0].error_pct, 100.0 / 9.0, 1e-12);
  EXPECT_EQ(pairs[1].ring, "sp2 cp2");
  EXPECT_DOUBLE_EQ(pairs[1].measured_ratio, 0.8);
  // The --json object carries them.
  const nlohmann::json j = summary_json(summarize_cases(with_other_seq), Machines{}, with_other_seq);
  ASSERT_EQ(j["ring_vs_ulysses"].size(), 2u);
  EXPECT_EQ(j["ring_vs_ulysses"][1]["ulysses"], "sp4");
  EXPECT_DOUBLE_EQ(j["ring_vs_ulysses"][1]["predicted_ratio"].get<double>(), 0.8);
}

TEST(ValidateReport, AMemoryOnlyRowCountsForMemoryNotForTime) {
  const nlohmann::json rows = nlohmann::json::array({timed_row(), memory_only_row()});
  const CaseSummary s = summarize_cases(rows);
  EXPECT_EQ(s.ok, 2);
  EXPECT_EQ(s.failed, 0);
  EXPECT_EQ(s.mem.n, 2);
  EXPECT_DOUBLE_EQ(s.mem.max, 4.0);
  EXPECT_DOUBLE_EQ(s.mem.mean, 3.0);
  EXPECT_EQ(s.time.n, 1);
  EXPECT_DOUBLE_EQ(s.time.mean, 10.0);
}

TEST(ValidateReport, AMemoryOnlyRowPrintsDashesForTime) {
  const nlohmann::json rows = nlohmann::json::array({timed_row(), memory_only_row()});
  Machines m;
  m.device = "test CPU, 2 cores";
  ::testing::internal::CaptureStdout();
  print_table(rows, summarize_cases(rows), m);
  const std::string out = ::testing::internal::GetCapturedStdout();
  const size_t at = out.find("micro-llama s64k sp1");
  ASSERT_NE(at, std::string::npos) << out;
  const std::string line = out.substr(at, out.find('\n', at) - at);
  EXPECT_NE(line.find("-4.0"), std::string::npos) << line;
  EXPECT_EQ(line.find("out of memory"), std::string::npos) << line;
  // Three "-" time columns (measured, predicted, d %) and the host column.
  int dashes = 0;
  for (size_t p = line.find(" - "); p != std::string::npos; p = line.find(" - ", p + 1)) ++dashes;
  EXPECT_GE(dashes, 3) << line;
  EXPECT_NE(out.find("time 10.0 %"), std::string::npos) << out;  // the timed row alone
}

// The report keeps the rates it priced with (once, one calibration made on a loaded machine moved
// every row by 25 %): peak times efficiency per class and dtype, in the JSON and above the table.
TEST(ValidateReport, SaysTheRatesItPricedWith) {
  Machines m;
  m.calibrated.name = "cpu-host";
  m.calibrated.fp32_tflops = 0.128;
  m.calibrated.fp32_matmul_efficiency = 1.0;
  m.calibrated.fp32_attention_efficiency = 0.75;
  m.calibrated.fp32_attention_bwd_efficiency = 0.5;
  m.calibrated.bf16_tflops = 0.04;
  m.calibrated.matmul_efficiency = 0.5;
  m.calibrated.matmul_bwd_efficiency = 0.05;  // bf16 backward GEMMs measured apart; fp32's are not
  m.calibrated.hbm_GBps = 60;
  m.calibrated.elementwise_efficiency = 0.25;
  m.calibrated.fp32_elementwise_efficiency = 0.5;
  const nlohmann::json rows = nlohmann::json::array({timed_row()});
  const nlohmann::json j = summary_json(summarize_cases(rows), m, rows);
  EXPECT_DOUBLE_EQ(j["priced_with"]["fp32_gemm_tflops"].get<double>(), 0.128);
  EXPECT_DOUBLE_EQ(j["priced_with"]["fp32_attention_fwd_tflops"].get<double>(), 0.096);
  EXPECT_DOUBLE_EQ(j["priced_with"]["fp32_attention_bwd_tflops"].get<double>(), 0.064);
  EXPECT_DOUBLE_EQ(j["priced_with"]["bf16_gemm_tflops"].get<double>(), 0.02);
  EXPECT_DOUBLE_EQ(j["priced_with"]["fp32_gemm_bwd_tflops"].get<double>(), 0.128);  // the forward's
  EXPECT_DOUBLE_EQ(j["priced_with"]["bf16_gemm_bwd_tflops"].get<double>(), 0.002);
  EXPECT_DOUBLE_EQ(j["priced_with"]["elementwise_GBps"].get<double>(), 15.0);
  EXPECT_DOUBLE_EQ(j["priced_with"]["fp32_elementwise_GBps"].get<double>(), 30.0);
  ::testing::internal::CaptureStdout();
  print_table(rows, summarize_cases(rows), m);
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("priced with cpu-host: GEMM 0.128 / 0.128, attention 0.096 / 0.064 TFLOP/s, elementwise 30 GB/s "
                     "(fp32, forward / backward; bf16 0.02 / 0.002, "),
            std::string::npos)
      << out;
}

}  // namespace
}  // namespace spplan::engine
