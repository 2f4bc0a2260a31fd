// cli/report.cpp: the words a person reads.
#include "cli/report.hpp"

#include <gtest/gtest.h>

namespace spplan::cli {
namespace {

TEST(Report, DurationsReadAsAPersonReadsThem) {
  EXPECT_EQ(duration_text(0.4234), "0.42 s");
  EXPECT_EQ(duration_text(28.14), "28.1 s");
  EXPECT_EQ(duration_text(725), "12 min 5 s");
  EXPECT_EQ(duration_text(28149.939), "7 h 49 min");  // a step the GUI showed as "28149.939" (issue 45)
  EXPECT_EQ(duration_text(3 * 86400 + 4 * 3600 + 100), "3 d 4 h");
  EXPECT_EQ(duration_text(-1), "-");
}

}  // namespace
}  // namespace spplan::cli
