// `spplan` given names and cells that are not UTF-8 (a Latin-1 folder name, a CSV saved in
// Latin-1) and a CSV saved with a byte-order mark: every --json command prints JSON a reader can
// parse (nlohmann's dump() threw type_error 316 and the command aborted), the text output and a
// plan of such a model work, and the byte-order mark is not part of the first column's name.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "run_spplan.hpp"
#include "tests/scratch_dir.hpp"

namespace {

namespace fs = std::filesystem;

using spplan::cli_test::CliRun;
using spplan::cli_test::run_spplan;
using spplan::testing_scratch::ScratchDir;

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A Qwen3 config.json in the folder "mod\xe8le" (è in Latin-1), which names the model.
std::string latin1_model(const ScratchDir& dir) {
  const std::string folder = dir.path() + "/mod\xe8le";
  fs::create_directories(folder);
  fs::copy_file(std::string(SPPLAN_SOURCE_DIR) + "/tests/planner/config/data/config.json", folder + "/config.json");
  return "'" + folder + "'";
}

// The output parses as JSON (nlohmann's parser refuses any byte that is not UTF-8).
nlohmann::json parsed(const CliRun& r, const std::string& command) {
  const nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << command << ": " << r.out;
  return j;
}

TEST(CliHostile, JsonOfAModelNamedNotInUtf8IsValidJson) {
  const ScratchDir dir("cli_latin1_json");
  const std::string model = latin1_model(dir), base = " --gpu h100-80gb --gpus 4 --json";
  const struct {
    std::string command;
    const char* model_key;  // where the output names the model; "" where it does not
  } cases[] = {
      {"estimate --model " + model + base + " --seq 64k --sp 4", "model"},
      {"plan --model " + model + base + " --seq 64k --top 2", ""},
      {"fit --model " + model + base + " --seq 64k", ""},
      {"max-seq --model " + model + base + " --sp 4", ""},
      {"sweep --model " + model + base + " --seq-from 64k --seq-to 128k", ""},
  };
  for (const auto& c : cases) {
    const CliRun r = run_spplan(c.command);
    EXPECT_EQ(r.exit_code, 0) << c.command << ": " << r.err;
    const nlohmann::json j = parsed(r, c.command);
    if (*c.model_key != '\0' && j.is_object()) {
      EXPECT_EQ(j[c.model_key], "mod\\xe8le") << c.command;
    }
    EXPECT_NE(r.out.find("mod\\\\xe8le"), std::string::npos) << c.command << ": the name, its byte shown";
  }
  const CliRun text = run_spplan("estimate --model " + model + " --gpu h100-80gb --gpus 4 --seq 64k --sp 4");
  EXPECT_EQ(text.exit_code, 0) << text.err;
}

// plan --out writes the name as UTF-8 TOML (the byte as the text \xe8); export and simulate read it.
TEST(CliHostile, APlanOfAModelNamedNotInUtf8ReadsBack) {
  const ScratchDir dir("cli_latin1_plan");
  const std::string plan = dir.path() + "/p.toml";
  const CliRun written =
      run_spplan("plan --model " + latin1_model(dir) + " --gpu h100-80gb --gpus 4 --seq 64k --out " + plan);
  ASSERT_EQ(written.exit_code, 0) << written.err;
  EXPECT_NE(read(plan).find("\nname = \"mod\\\\xe8le\"\n"), std::string::npos) << read(plan);
  for (const std::string& command : {"export --plan " + plan + " --format deepspeed",
                                     "export --plan " + plan + " --format arctic", "simulate --plan " + plan}) {
    const CliRun r = run_spplan(command);
    EXPECT_EQ(r.exit_code, 0) << command << ": " << r.err;
  }
  const CliRun simulated = run_spplan("simulate --plan " + plan + " --json");
  EXPECT_EQ(simulated.exit_code, 0) << simulated.err;
  parsed(simulated, "simulate --json");
}

const std::string kOneRow = std::string(SPPLAN_SOURCE_DIR) + "/tests/cli/data/one_row.csv";

// "CSV UTF-8" as spreadsheets save it: a byte-order mark first. It reads as the file without one.
// A user's trainer record in a Latin-1 folder: the plan file stays TOML (UTF-8, the byte as \xNN),
// and reading it back refuses the record path it cannot name in one line, exit 2.
TEST(CliHostile, APlanOfARecordInAFolderNamedNotInUtf8IsTomlAndRefusedOnRead) {
  const ScratchDir dir("cli_latin1_record");
  const std::string folder = dir.path() + "/rec\xe9";
  fs::create_directories(folder);
  std::ofstream(folder + "/mine.toml") << "name = \"mine\"\nbase = \"hf\"\n";
  const std::string plan = dir.path() + "/p.toml";
  const CliRun made = run_spplan("plan --model qwen3-4b --gpu h100-80gb --gpus 4 --seq 64k --top 1 --trainer '" + folder +
                                 "/mine.toml' --out '" + plan + "'");
  ASSERT_EQ(made.exit_code, 0) << made.err;
  EXPECT_NE(read(plan).find("rec\\\\xe9/mine.toml"), std::string::npos) << read(plan);
  const CliRun r = run_spplan("export --plan '" + plan + "' --format deepspeed");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("rec\\xe9/mine.toml"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(CliHostile, ACsvWithAByteOrderMarkReadsAsWithout) {
  const ScratchDir dir("cli_bom_csv");
  const std::string csv = dir.path() + "/bom.csv";
  std::ofstream(csv, std::ios::binary) << "\xef\xbb\xbf" << read(kOneRow);
  for (const char* json : {"", " --json"}) {
    const CliRun plain = run_spplan("validate published " + kOneRow + json), bom = run_spplan("validate published " + csv + json);
    EXPECT_NE(plain.exit_code, 2) << plain.err;
    EXPECT_EQ(bom.exit_code, plain.exit_code) << bom.err;
    EXPECT_EQ(bom.out, plain.out);
  }
}

// A cell in Latin-1 ("r\xe9f", the id and the note): the JSON shows its byte as \xe9.
TEST(CliHostile, ACsvCellNotInUtf8GivesValidJson) {
  const ScratchDir dir("cli_latin1_csv");
  std::string text = read(kOneRow);
  text.replace(text.find("\n7,"), 3, "\n7\xe9,");
  text.replace(text.find("\"ALST"), 5, "\"\xe9 ALST");
  const std::string csv = dir.path() + "/latin1.csv";
  std::ofstream(csv, std::ios::binary) << text;
  const CliRun r = run_spplan("validate published " + csv + " --json");
  EXPECT_NE(r.exit_code, 2) << r.err;
  const nlohmann::json j = parsed(r, "validate published --json");
  ASSERT_TRUE(j.is_object() && j["rows"].is_array() && !j["rows"].empty()) << r.out;
  EXPECT_EQ(j["rows"][0]["id"], "7\\xe9");
  const CliRun table = run_spplan("validate published " + csv);
  EXPECT_EQ(table.exit_code, r.exit_code) << table.err;
}

}  // namespace
