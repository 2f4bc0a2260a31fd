// The `spplan` command as scripts call it: exit codes, one-line errors, the JSON schema.
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

namespace {

struct CliRun {
  int exit_code;
  std::string out, err;
};

// `env`: "NAME=value ..." for the command's environment.
CliRun run_spplan(const std::string& args, const std::string& env = "") {
  // ctest runs each case as its own process, in parallel: one stderr file per process.
  const std::string err_path = testing::TempDir() + "/spplan_err." + std::to_string(getpid()) + ".txt";
  const std::string cmd = (env.empty() ? "" : "env " + env + " ") + std::string(SPPLAN_BINARY_DIR) + "/spplan " + args +
                          " 2>" + err_path;
  FILE* pipe = popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) out.append(buf.data(), n);
  const int status = pclose(pipe);
  std::string err;
  if (FILE* f = fopen(err_path.c_str(), "r")) {
    while ((n = fread(buf.data(), 1, buf.size(), f)) > 0) err.append(buf.data(), n);
    fclose(f);
  }
  return {WEXITSTATUS(status), out, err};
}

const char* kBase = "--model qwen3-4b --gpu h100-80gb --gpus 4 ";

TEST(Cli, EstimateJsonHasTheDesignSchema) {
  const CliRun r = run_spplan(std::string("estimate ") + kBase + "--seq 128k --sp 4 --tiled-loss --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  for (const char* key : {"fits", "host_memory_gib_per_node", "step_time_s", "serial_step_time_s", "tokens_per_s",
                          "tflops_per_gpu", "mfu", "usd_per_million_tokens"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  for (const char* key : {"total_gib", "capacity_gib", "params_gib", "grads_gib", "optimizer_gib", "activations_gib",
                          "logits_gib", "buffers_gib", "overhead_gib"}) {
    EXPECT_TRUE(j["memory"].contains(key)) << key;
  }
}

// Hugging Face Trainer frees the logits before backward; ArcticTraining holds the bf16 logits
// (2 B per token per vocabulary entry) until backward returns. Untiled loss, peak at the loss.
TEST(Cli, TrainerHfDropsTheHeldLogits) {
  const std::string args = std::string("estimate ") + kBase + "--seq 32k --sp 4 --zero 3 --act-ckpt full --json";
  const CliRun arctic = run_spplan(args), hf = run_spplan(args + " --trainer hf");
  ASSERT_EQ(arctic.exit_code, 0) << arctic.err;
  ASSERT_EQ(hf.exit_code, 0) << hf.err;
  const auto a = nlohmann::json::parse(arctic.out), h = nlohmann::json::parse(hf.out);
  EXPECT_EQ(a["trainer"], "arctic");
  EXPECT_EQ(h["trainer"], "hf");
  const double held_gib = 2.0 * (32768 / 4) * 151936 / (1024.0 * 1024 * 1024);  // qwen3-4b vocab
  EXPECT_NEAR(a["memory"]["logits_gib"].get<double>() - h["memory"]["logits_gib"].get<double>(), held_gib, 1e-6);
}

TEST(Cli, FitExitCodes) {
  EXPECT_EQ(run_spplan(std::string("fit ") + kBase + "--seq 32k").exit_code, 0);
  const CliRun no = run_spplan("fit --model llama-3.1-70b --gpu h100-80gb --gpus 1 --seq 1M --json");
  EXPECT_EQ(no.exit_code, 1);
  const auto j = nlohmann::json::parse(no.out);
  EXPECT_FALSE(j["fits"].get<bool>());
  EXPECT_GT(j["smallest_gpus_that_fit"].get<int>(), 1);
}

TEST(Cli, PlanWritesAPlanThatEstimateAgreesWith) {
  const std::string out = testing::TempDir() + "/best.toml";
  const CliRun r = run_spplan(std::string("plan ") + kBase + "--seq 128k --top 3 --json --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_FALSE(j["plans"].empty());
  EXPECT_TRUE(j["plans"][0]["fits"].get<bool>());
  const CliRun d = run_spplan("export --plan " + out + " --format deepspeed");
  EXPECT_EQ(d.exit_code, 0) << d.err;
}

TEST(Cli, MaxSeqJson) {
  const CliRun r = run_spplan(std::string("max-seq ") + kBase + "--sp 4 --tiled-loss --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_GT(j["max_seq"].get<long>(), 65536);
  // The margin: the same search without the allocator slack allowance finds a longer sequence.
  EXPECT_GT(j["max_seq_without_allocator_slack"].get<long>(), j["max_seq"].get<long>());
  EXPECT_DOUBLE_EQ(j["allocator_fragmentation"].get<double>(), 0.05);
}

TEST(Cli, MaxSeqStatesItsMargin) {
  const CliRun r = run_spplan(std::string("max-seq ") + kBase + "--sp 4 --tiled-loss");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\nmargin: counts 5% allocator slack on the memory freed within a step; without it "),
            std::string::npos)
      << r.out;
}

// Bad input: exit 2, nothing on stdout, exactly one line on stderr naming flag/file, value, allowed.
TEST(Cli, BadInputTable) {
  const struct {
    std::string args, expected;
  } cases[] = {
      {std::string("estimate ") + kBase + "--seq 12x --sp 4",
       "spplan: --seq: value \"12x\" is not a sequence length (allowed: a positive token count, optionally with k = 1024 or M = 1048576, e.g. 131072, 128k, 1.5M)"},
      {std::string("estimate ") + kBase + "--seq 128k --sp 3",
       "spplan: --sp: value 3 is not valid for qwen3-4b (32 heads, 8 kv heads) on 4 GPUs (allowed sp: 1, 2, 4)"},
      {std::string("estimate ") + kBase + "--seq 128k --sp 4 --zero 5",
       "spplan: --zero: value \"5\" is not allowed (allowed: a whole number from 0 to 3)"},
      {std::string("estimate ") + kBase + "--seq 128k --sp 4 --act-ckpt maybe",
       "spplan: --act-ckpt: value \"maybe\" is not allowed (allowed: none, full, offload)"},
      {std::string("estimate ") + kBase + "--seq 128k --sp 4 --zero 2 --offload-params cpu",
       "spplan: --offload-params: value \"cpu\" needs ZeRO stage 3, found stage 2 (allowed with this stage: none)"},
      {"estimate --model qwen3-4b --gpu h100-80gb --gpus 4 --seq 128k",
       "spplan: --sp: missing (required: the Ulysses degree, e.g. --sp 4)"},
      {"estimate --model nope --gpu h100-80gb --gpus 4 --seq 1k --sp 1",
       "spplan: --model: value \"nope\" is not a preset or a file (allowed presets: "},
      {"plan --model qwen3-4b --gpu h100-80gb --gpus 4 --seq 1k --bogus 1", "spplan: --bogus: unknown flag (allowed: "},
      {"simulate --plan /nonexistent/plan.toml", "spplan: /nonexistent/plan.toml: cannot open (no such file)"},
      {"export --plan /nonexistent/plan.toml --format deepspeed", "spplan: /nonexistent/plan.toml: cannot open (no such file)"},
      {"validate published /nonexistent.csv", "spplan: /nonexistent.csv: cannot open (no such file)"},
      {"frobnicate", "spplan: command \"frobnicate\" is not known (allowed: "},
      {"", "spplan: command: missing (allowed: estimate, plan, fit, max-seq, sweep, export, simulate, run, validate, calibrate; see spplan --help)"},
      // A stray word was silently ignored; a flag after a flag that wants a value was taken as the value.
      {std::string("estimate ") + kBase + "--seq 128k --sp 4 extra",
       "spplan: estimate: unexpected argument \"extra\" (allowed: flags only)"},
      {std::string("plan ") + kBase + "--seq 1k --out --json",
       "spplan: --out: missing value, found the flag \"--json\" (allowed: --out VALUE or --out=VALUE)"},
      {std::string("estimate ") + kBase + "--seq 1e15 --sp 4",
       "spplan: --seq: value \"1e15\" is too long (allowed: at most 1000000000000 tokens)"},
      {std::string("estimate ") + kBase + "--seq \"$(printf '1\\n2')\" --sp 4",
       "spplan: --seq: value \"1\\x0a2\" is not a sequence length (allowed: "},
      // 2^36 GPUs: the searches walk every GPU count and never finished.
      {"plan --model qwen3-4b --gpu h100-80gb --nodes 1048576 --gpus-per-node 65536 --seq 1k",
       "spplan: --nodes: value 1048576 x 65536 GPUs per node is 68719476736 GPUs (allowed: at most 16777216 GPUs in all)"},
      {std::string("sweep ") + kBase + "--csv --json", "spplan: --csv: not allowed with --json (allowed: one output format)"},
      {std::string("estimate ") + kBase + "--seq 1k --sp 4 --trainer megatron",
       "spplan: --trainer: value \"megatron\" is not allowed (allowed: arctic, hf, liger, engine)"},
      {std::string("estimate ") + kBase + "--seq 1k --sp 4 --attention flash3",
       "spplan: --attention: value \"flash3\" is not allowed (allowed: flash2, sdpa)"},
      {std::string("max-seq ") + kBase + "--granularity 128M",
       "spplan: --granularity: value 134217728 is above the longest sequence searched (allowed: at most 67108864 tokens)"},
      // A device never ends (validate read /dev/zero until std::bad_alloc); a directory is no file.
      {"estimate --model /dev/zero --gpu h100-80gb --gpus 4 --seq 1k --sp 1",
       "spplan: /dev/zero: cannot open (not a regular file; allowed: a file)"},
      {"validate published /dev/zero", "spplan: /dev/zero: cannot open (not a regular file; allowed: a file)"},
      {std::string("validate published ") + SPPLAN_SOURCE_DIR + "/tests/cli/data",
       std::string("spplan: ") + SPPLAN_SOURCE_DIR + "/tests/cli/data: cannot open (a directory; allowed: a file)"},
      // toml++ overflowed the stack on a key of tens of thousands of dotted parts.
      {std::string("estimate --model ") + SPPLAN_SOURCE_DIR +
           "/tests/planner/config/data/deep_key.toml --gpu h100-80gb --gpus 4 --seq 1k --sp 1",
       std::string("spplan: ") + SPPLAN_SOURCE_DIR +
           "/tests/planner/config/data/deep_key.toml:2: more than 256 dots outside strings (allowed: "},
      {std::string("simulate --plan ") + SPPLAN_SOURCE_DIR + "/configs/plans/qwen3-4b-128k-4xh100.toml --trace \"\"",
       "spplan: \"\": cannot write (an empty file name; allowed: a path to a file)"},
  };
  for (const auto& c : cases) {
    const CliRun r = run_spplan(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args;
    EXPECT_TRUE(r.out.empty()) << c.args;
    EXPECT_EQ(r.err.rfind(c.expected, 0), 0u) << c.args << "\n got: " << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line: " << r.err;
  }
}

std::string read_text(const std::string& path) {
  std::string text;
  if (FILE* f = fopen(path.c_str(), "r")) {
    std::array<char, 4096> buf{};
    size_t n = 0;
    while ((n = fread(buf.data(), 1, buf.size(), f)) > 0) text.append(buf.data(), n);
    fclose(f);
  }
  return text;
}

void write_text(const std::string& path, const std::string& text) {
  FILE* f = fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr) << path;
  fputs(text.c_str(), f);
  fclose(f);
}

// An output that is an input (same file) would destroy the input: exit 2, the file unchanged.
TEST(Cli, OutputThatIsAnInputIsRefused) {
  const std::string plan = testing::TempDir() + "/out_is_input_plan.toml";
  const std::string model = testing::TempDir() + "/out_is_input_model.toml";
  write_text(plan, read_text(std::string(SPPLAN_SOURCE_DIR) + "/configs/plans/qwen3-4b-128k-4xh100.toml"));
  write_text(model, read_text(std::string(SPPLAN_SOURCE_DIR) + "/configs/models/qwen3-4b.toml"));
  const std::string plan_text = read_text(plan), model_text = read_text(model);
  const struct {
    std::string args, expected;
  } cases[] = {
      {"export --plan " + plan + " --format deepspeed --out " + plan, "spplan: --out: value \"" + plan + "\" is the input file "},
      {"simulate --plan " + plan + " --trace " + plan, "spplan: --trace: value \"" + plan + "\" is the input file "},
      {"plan --model " + model + " --gpu h100-80gb --gpus 4 --seq 1k --out " + model,
       "spplan: --out: value \"" + model + "\" is the input file "},
  };
  for (const auto& c : cases) {
    const CliRun r = run_spplan(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args;
    EXPECT_EQ(r.err.rfind(c.expected, 0), 0u) << r.err;
  }
  EXPECT_EQ(read_text(plan), plan_text);
  EXPECT_EQ(read_text(model), model_text);
}

// A preset name is a file too: --out onto the GPU preset's file would replace the preset. Run
// against a copy of the configs folder, so a regression cannot damage the source tree.
TEST(Cli, OutputThatIsAPresetFileIsRefused) {
  const std::string configs = testing::TempDir() + "/out_is_preset_configs";
  ASSERT_EQ(std::system(("rm -rf " + configs + " && cp -r " + SPPLAN_SOURCE_DIR + "/configs " + configs).c_str()), 0);
  const std::string preset = configs + "/gpus/h100-80gb.toml", text = read_text(preset);
  const CliRun r = run_spplan("plan --model qwen3-4b --gpu h100-80gb --gpus 4 --seq 1k --out " + preset,
                              "SPPLAN_CONFIG_DIR=" + configs);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("spplan: --out: value \"" + preset + "\" is the input file ", 0), 0u) << r.err;
  EXPECT_EQ(read_text(preset), text);
}

// Nothing fits: the old --out file stays, and the report says it was not written.
TEST(Cli, PlanLeavesOutAloneWhenNothingFits) {
  const std::string out = testing::TempDir() + "/nothing_fits.toml";
  write_text(out, "ORIGINAL\n");
  const CliRun r = run_spplan("plan --model llama-3.1-70b --gpu a100-40gb --gpus 1 --seq 1M --out " + out);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("nothing fits: " + out + " not written"), std::string::npos) << r.out;
  EXPECT_EQ(read_text(out), "ORIGINAL\n");
}

// --out naming a symbolic link: the plan goes into the file the link names; the link stays.
TEST(Cli, PlanOutThroughASymbolicLinkKeepsTheLink) {
  const std::string target = testing::TempDir() + "/linked_plan_target.toml";
  const std::string link = testing::TempDir() + "/linked_plan.toml";
  write_text(target, "ORIGINAL\n");
  std::remove(link.c_str());
  ASSERT_EQ(symlink(target.c_str(), link.c_str()), 0);
  const CliRun r = run_spplan(std::string("plan ") + kBase + "--seq 128k --out " + link);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  char buf[4096];
  const ssize_t n = readlink(link.c_str(), buf, sizeof buf);
  ASSERT_GT(n, 0) << "the link was replaced by a file";
  EXPECT_EQ(std::string(buf, static_cast<size_t>(n)), target);
  EXPECT_NE(read_text(target).find("[knobs]"), std::string::npos);
}

// Without --sp every knob set is searched; it once found none (the plan rules refused seq 0).
TEST(Cli, MaxSeqSearchedFindsALength) {
  const CliRun r = run_spplan(std::string("max-seq ") + kBase + "--json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GT(nlohmann::json::parse(r.out)["max_seq"].get<long>(), 65536);
}

TEST(Cli, ValidatePublishedPrintsTheTable) {
  const CliRun r = run_spplan(std::string("validate published ") + SPPLAN_SOURCE_DIR + "/validation/published_visible.csv --json");
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["rows"].size(), 14u);
  // Every fit / OOM verdict of the visible rows is right (issue 2 target), and peak memory within
  // 10% on every row that reports it (issue 11, with the HF blog rows read as their note says).
  EXPECT_EQ(j["summary"]["fit_verdict_misses"].get<int>(), 0);
  EXPECT_LE(j["summary"]["memory_pct"]["max_abs"].get<double>(), 10.0);
  EXPECT_EQ(j["summary"]["throughput_inconsistent_rows"].get<int>(), 4);
}

// The runs on one H100 (validation/gpu_h100_measured.csv): the issue 11 target, step time within
// 10% on average with the preset. A costmodel change that breaks it must say why.
TEST(Cli, ValidateGpuRowsStepTimeWithinTenPercentOnAverage) {
  const CliRun r = run_spplan(std::string("validate published ") + SPPLAN_SOURCE_DIR + "/validation/gpu_h100_measured.csv --json");
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_GE(j["summary"]["step_time_pct"]["count"].get<int>(), 20);
  EXPECT_LE(j["summary"]["step_time_pct"]["mean_abs"].get<double>(), 10.0);
}

}  // namespace
