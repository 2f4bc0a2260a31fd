// engine/device/alloc_conf.hpp: expandable segments unless the user chose, set before any rank starts and
// reported in the run's JSON (checked end to end on a CPU run: the variable is what matters, and
// only LibTorch's CUDA allocator reads it).
#include "engine/device/alloc_conf.hpp"

#include <gtest/gtest.h>

#include "run_helpers.hpp"

namespace spplan::engine {
namespace {

TEST(AllocConf, TheUsersVariableWinsElseTheEngineSetsExpandableSegments) {
  const AllocConf none = choose_alloc_conf(nullptr, nullptr, nullptr);
  EXPECT_EQ(none.variable, "");  // apply_alloc_conf() sets it
  const AllocConf cuda = choose_alloc_conf("garbage_collection_threshold:0.6", "x", nullptr);
  EXPECT_EQ(cuda.variable, "PYTORCH_CUDA_ALLOC_CONF");  // LibTorch reads this one first
  EXPECT_EQ(cuda.value, "garbage_collection_threshold:0.6");
  EXPECT_FALSE(cuda.set_by_engine);
  const AllocConf generic = choose_alloc_conf(nullptr, "expandable_segments:False", nullptr);
  EXPECT_EQ(generic.variable, "PYTORCH_ALLOC_CONF");
  EXPECT_EQ(generic.value, "expandable_segments:False");
  const AllocConf empty = choose_alloc_conf("", nullptr, nullptr);  // set, even if empty: the user's
  EXPECT_EQ(empty.variable, "PYTORCH_CUDA_ALLOC_CONF");
  EXPECT_EQ(empty.value, "");
  const AllocConf inherited = choose_alloc_conf(kEngineAllocConf, nullptr, "1");  // a rank of the launcher
  EXPECT_TRUE(inherited.set_by_engine);
}

nlohmann::json allocator_conf_of_run(const std::map<std::string, std::string>& env) {
  const testing::RunResult r = testing::run_engine(
      {"run", "--model", "tiny-llama", "--seq", "512", "--sp", "2", "--nproc", "2", "--steps", "1", "--json"}, env);
  const nlohmann::json j = testing::json_of(r);
  return j.is_object() ? j.at("allocator_conf") : nlohmann::json();
}

TEST(AllocConf, EveryRankReportsTheSettingInForce) {
  const nlohmann::json engine = allocator_conf_of_run({});
  EXPECT_EQ(engine, nlohmann::json({{"variable", "PYTORCH_CUDA_ALLOC_CONF"},
                                    {"value", "expandable_segments:True"},
                                    {"set_by", "spplan-engine"}}));
  const nlohmann::json user = allocator_conf_of_run({{"PYTORCH_ALLOC_CONF", "expandable_segments:False"}});
  EXPECT_EQ(user, nlohmann::json({{"variable", "PYTORCH_ALLOC_CONF"},
                                  {"value", "expandable_segments:False"},
                                  {"set_by", "user"}}));
}

}  // namespace
}  // namespace spplan::engine
