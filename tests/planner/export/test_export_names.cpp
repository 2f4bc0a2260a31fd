// Exports of a model named after a Latin-1 folder ("mod\xe8le", as the GUI plans a config.json
// folder in memory): each format is a file its stack reads as UTF-8, so the name's byte is written
// as the text \xe8; the arctic and axolotl YAML, whose name is a JSON string, threw type_error 316.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "fixtures.hpp"
#include "planner/core/utf8_text.hpp"
#include "planner/export/export.hpp"

namespace spplan {
namespace {

TEST(ExportNames, ANameThatIsNotUtf8IsWrittenAsUtf8InEveryFormat) {
  const struct {
    const char* trainer;
    ExportFormat format;
    bool names_model;  // ds_config.json names no model
    int64_t sp = 8, cp = 1;  // axolotl and torchtitan run rings only
  } cases[] = {
      {"arctic", ExportFormat::kDeepSpeed, false}, {"arctic", ExportFormat::kArctic, true},
      {"hf", ExportFormat::kAccelerate, true},     {"engine", ExportFormat::kTorchrun, true},
      {"axolotl", ExportFormat::kAxolotl, true, 1, 8}, {"usp", ExportFormat::kSwift, true},
      {"torchtitan", ExportFormat::kTorchtitan, true, 1, 8},
  };
  for (const auto& c : cases) {
    PlanSpec p = testing_export::llama8b_on(c.trainer, 8, 65536);
    p.knobs.sp = c.sp;
    p.knobs.cp = c.cp;
    if (c.cp > 1) p.knobs.cp_comm = CpComm::kAllGather;  // the ring both run gathers K and V
    p.knobs.zero_stage = 3;
    settle_layout_attention(&p);
    p.model.name = "mod\xe8le";
    p.cluster.gpu.name = "h100 \xff";
    const auto text = export_plan(p, c.format);
    ASSERT_TRUE(text.ok()) << c.trainer << " " << to_string(c.format) << ": " << text.status().message();
    EXPECT_TRUE(is_utf8(*text)) << to_string(c.format);
    if (c.names_model) {
      EXPECT_NE(text->find("mod\\xe8le"), std::string::npos) << to_string(c.format) << ":\n" << *text;
    }
  }
}

}  // namespace
}  // namespace spplan
