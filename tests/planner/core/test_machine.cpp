// planner/core/machine: this machine's RAM from /proc/meminfo's format.
#include "planner/core/machine.hpp"

#include <cstdio>
#include <fstream>

#include <gtest/gtest.h>

namespace spplan {
namespace {

TEST(MachineRam, MemTotalInKibibytes) {
  const std::string path = ::testing::TempDir() + "/meminfo";
  std::ofstream(path) << "MemFree:         1024 kB\nMemTotal:       24567 kB\nMemAvailable:    2048 kB\n";
  ASSERT_TRUE(machine_ram_bytes(path).has_value());
  EXPECT_DOUBLE_EQ(*machine_ram_bytes(path), 24567.0 * 1024);
  std::ofstream(path) << "MemFree: 1024 kB\n";  // no MemTotal line
  EXPECT_FALSE(machine_ram_bytes(path).has_value());
  std::ofstream(path) << "MemTotal: lots\n";
  EXPECT_FALSE(machine_ram_bytes(path).has_value());
  std::remove(path.c_str());
  EXPECT_FALSE(machine_ram_bytes(path).has_value());  // no file
#ifdef __linux__
  EXPECT_TRUE(machine_ram_bytes().has_value());  // this machine's own
#endif
}

}  // namespace
}  // namespace spplan
