// The kernel clock (engine/run/kernel_clock.hpp): each ATen op's self time in its kernel class,
// inside the run, beside the costmodel's time for the same classes.
#include <gtest/gtest.h>

#include "engine/run/kernel_clock.hpp"
#include "run_helpers.hpp"

namespace spplan::engine::testing {
namespace {

TEST(KernelClass, OpsAndRegionsGoToTheCostmodelsClasses) {
  struct Case {
    const char* op;
    MemCategory region;
    const char* expected;
  };
  const Case cases[] = {
      {"aten::mm", MemCategory::kActivations, "gemm"},
      {"aten::addmm", MemCategory::kActivations, "gemm"},
      {"aten::linear", MemCategory::kBuffers, "gemm"},
      {"aten::_scaled_dot_product_flash_attention_for_cpu", MemCategory::kActivations, "attention_fwd"},
      {"aten::_scaled_dot_product_flash_attention_for_cpu_backward", MemCategory::kActivations, "attention_bwd"},
      {"aten::_scaled_dot_product_cudnn_attention_backward", MemCategory::kActivations, "attention_bwd"},
      {"aten::mul", MemCategory::kActivations, "elementwise"},
      {"aten::copy_", MemCategory::kBuffers, "elementwise"},
      {"MmBackward0", MemCategory::kActivations, "elementwise"},  // autograd's node: bookkeeping
      {"aten::mm", MemCategory::kLogits, "loss"},                 // the head's GEMM is the loss's
      {"aten::_fused_adamw_", MemCategory::kOptimizer, "optimizer"},
      {"c10d::alltoall_base_", MemCategory::kBuffers, "comm"},
      {"gloo:all_to_all", MemCategory::kLogits, "comm"},  // another thread, during the loss
  };
  for (const Case& c : cases) EXPECT_STREQ(kernel_class_of(c.op, c.region), c.expected) << c.op;
}

// Off unless asked; asked, every class of a tiny-llama step is there, they sum to most of the step
// (the rest is communication, the data and Python-free glue), and the prediction has the same classes.
TEST(EngineKernelClock, TimesEveryClassOfAStepBesideThePrediction) {
  const std::vector<std::string> args = {"run", "--model", "tiny-llama", "--seq", "1024", "--sp", "1", "--nproc", "1",
                                         "--steps", "2", "--gpu", "h100-80gb", "--json"};
  const nlohmann::json off = json_of(run_engine(args));
  ASSERT_TRUE(off.is_object());
  EXPECT_TRUE(off.at("kernel_classes_s").is_null());
  const nlohmann::json on = json_of(run_engine(args, {{"SPPLAN_ENGINE_KERNEL_CLOCK", "1"}}));
  ASSERT_TRUE(on.is_object());
  const nlohmann::json& measured = on.at("kernel_classes_s");
  const nlohmann::json& predicted = on.at("predicted_kernel_classes_s");
  ASSERT_TRUE(measured.is_object()) << on.dump();
  double sum = 0;
  for (const char* cls : {"gemm", "attention_fwd", "attention_bwd", "elementwise", "loss", "optimizer"}) {
    ASSERT_TRUE(measured.contains(cls)) << cls << ": " << measured.dump();
    EXPECT_GT(measured.at(cls).get<double>(), 0.0) << cls;
    EXPECT_GT(predicted.at(cls).get<double>(), 0.0) << cls;
    sum += measured.at(cls).get<double>();
  }
  const double step = on.at("step_time_s").get<double>();
  EXPECT_LT(sum, step);
  EXPECT_GT(sum, 0.5 * step);
  EXPECT_TRUE(on.at("kernel_top_ops_s").contains("gemm aten::mm")) << on.at("kernel_top_ops_s").dump();
  EXPECT_GE(on.at("kernel_top_ops_calls").at("gemm aten::mm").get<double>(), 1.0) << on.at("kernel_top_ops_calls").dump();
}

}  // namespace
}  // namespace spplan::engine::testing
