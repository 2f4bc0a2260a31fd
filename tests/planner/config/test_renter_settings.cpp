// The renter's price and headroom, as the CLI's flags and the GUI's fields give them:
// one reader, the same values taken and the same words for the others.
#include <gtest/gtest.h>

#include "planner/config/renter_settings.hpp"

namespace spplan {
namespace {

TEST(RenterSettings, PricePerGpuHourReplacesTheFilesPrice) {
  GpuSpec gpu;
  gpu.price_per_gpu_hour = 3.0;
  ASSERT_TRUE(apply_price(std::string("2.25"), std::nullopt, &gpu).is_ok());
  EXPECT_DOUBLE_EQ(gpu.price_per_gpu_hour, 2.25);
}

TEST(RenterSettings, NodePriceIsSharedByItsGpus) {
  GpuSpec gpu;
  gpu.gpus_per_node = 8;
  ASSERT_TRUE(apply_price(std::nullopt, std::string("20"), &gpu).is_ok());
  EXPECT_DOUBLE_EQ(gpu.price_per_gpu_hour, 2.5);
}

TEST(RenterSettings, NeitherPriceKeepsTheFiles) {
  GpuSpec gpu;
  gpu.price_per_gpu_hour = 3.0;
  ASSERT_TRUE(apply_price(std::nullopt, std::nullopt, &gpu).is_ok());
  EXPECT_DOUBLE_EQ(gpu.price_per_gpu_hour, 3.0);
}

TEST(RenterSettings, BadPricesNameTheFlagAndWhatIsAllowed) {
  GpuSpec gpu;
  gpu.price_per_gpu_hour = 3.0;
  EXPECT_EQ(apply_price(std::string("2"), std::string("16"), &gpu).message(),
            "--price-per-node-hour: not allowed with --price-per-gpu-hour (allowed: one of them)");
  const Status negative = apply_price(std::string("-0.5"), std::nullopt, &gpu);
  EXPECT_NE(negative.message().find("--price-per-gpu-hour"), std::string::npos) << negative.message();
  EXPECT_NE(negative.message().find("\"-0.5\""), std::string::npos) << negative.message();
  EXPECT_FALSE(apply_price(std::nullopt, std::string("ten"), &gpu).is_ok());
  EXPECT_DOUBLE_EQ(gpu.price_per_gpu_hour, 3.0);  // a refused price changes nothing
}

TEST(RenterSettings, HeadroomIsAShareOfTheDevice) {
  PlanSpec plan;
  ASSERT_TRUE(apply_headroom("12.5", &plan).is_ok());
  EXPECT_DOUBLE_EQ(plan.memory_headroom, 0.125);
  ASSERT_TRUE(apply_headroom("0", &plan).is_ok());
  EXPECT_DOUBLE_EQ(plan.memory_headroom, 0.0);
}

TEST(RenterSettings, HeadroomBeyondHalfTheDeviceIsRefused) {
  PlanSpec plan;
  const Status over = apply_headroom("70", &plan);
  ASSERT_FALSE(over.is_ok());
  EXPECT_NE(over.message().find("--headroom"), std::string::npos) << over.message();
  EXPECT_NE(over.message().find("50"), std::string::npos) << over.message();
  EXPECT_FALSE(apply_headroom("-1", &plan).is_ok());
  EXPECT_FALSE(apply_headroom("nan", &plan).is_ok());
  EXPECT_DOUBLE_EQ(plan.memory_headroom, 0.0);
}

}  // namespace
}  // namespace spplan
