// Bad flags and files: exit 2 and exactly one line on stderr naming the flag or file, the value
// found and what is allowed. Nothing is started for these (the launcher checks before forking).
#include <gtest/gtest.h>

#include "engine/measure/calibrate_flags.hpp"
#include "engine/measure/validate.hpp"
#include "engine/run/options.hpp"
#include "run_helpers.hpp"

namespace spplan::engine::testing {
namespace {

struct BadCase {
  std::vector<std::string> args;  // after "run"; "$D" is replaced by the fixture folder
  std::string expected;           // a substring of the one-line message
};

std::string fixtures() {
  static const std::string dir = [] {
    const std::string d = fresh_dir("bad_input");
    write_file(d, "bad.bin", "abc");
    write_file(d, "odd.u16.bin", "abc");
    write_file(d, "big.u32.bin", std::string("\x01\x00\x00\x00\x88\x13\x00\x00", 8));  // ids 1, 5000
    write_file(d, "bad.txt", "ok\xff\xfe");
    write_file(d, "ok.u16.bin", std::string("\x01\x00\x02\x00\x03\x00", 6));  // ids 1, 2, 3
    write_file(d, "empty.txt", "");
    write_file(d, "zero3.toml",
               "seq_len = 1024\n[model]\npreset = \"tiny-llama\"\n[gpu]\npreset = \"h100-80gb\"\n"
               "[cluster]\nnum_gpus = 2\n[knobs]\nsp = 2\nzero_stage = 3\nact_ckpt = \"none\"\n");
    write_file(d, "ckpt/LATEST", "");
    write_file(d, "corpus.jsonl", "{\"text\": \"hello\"}\n");
    write_file(d, "corpus.txt", "  {\"text\": \"hello\"}\n");
    write_file(d, "two.toml",
               "seq_len = 1024\n[model]\npreset = \"tiny-llama\"\n[gpu]\npreset = \"h100-80gb\"\n"
               "[cluster]\nnum_gpus = 2\n[knobs]\nsp = 2\nzero_stage = 0\nact_ckpt = \"none\"\n");
    return d;
  }();
  return dir;
}

std::vector<std::string> flags(std::initializer_list<std::string> more) {
  std::vector<std::string> a{"--model", "tiny-llama", "--seq", "4096", "--sp", "1", "--nproc", "1"};
  a.insert(a.end(), more);
  return a;
}

const std::vector<BadCase>& cases() {
  static const std::vector<BadCase> kCases = {
      {{}, "--model: missing (required"},
      {{"--model", "nope", "--seq", "4096", "--sp", "1", "--nproc", "1"}, "--model: value \"nope\" is not a preset or a file"},
      {{"--model", "tiny-llama", "--seq", "abc", "--sp", "1", "--nproc", "1"}, "--seq: value \"abc\" is not a sequence length"},
      {{"--model", "tiny-llama", "--seq", "4096", "--nproc", "1"}, "--sp: missing"},
      {{"--model", "tiny-llama", "--seq", "4096", "--sp", "3", "--nproc", "3"}, "--sp: value 3 is not valid for tiny-llama"},
      {{"--model", "tiny-llama", "--seq", "4096", "--sp", "2", "--nproc", "3"}, "--sp: value 2 does not divide the 3 ranks"},
      {{"--model", "tiny-llama", "--seq", "4096", "--sp", "1"}, "--nproc: missing"},
      {flags({"--nproc", "0"}), "--nproc: given twice"},
      {{"--model", "tiny-llama", "--seq", "4096", "--sp", "1", "--nproc", "0"}, "--nproc: value \"0\" is not allowed"},
      {flags({"--steps", "0"}), "--steps: value \"0\" is not allowed (allowed: a whole number from 1"},
      {flags({"--seed", "-1"}), "--seed: value \"-1\" is not allowed"},
      {flags({"--bogus"}), "--bogus: unknown flag (allowed: --plan"},
      {flags({"--zero", "3"}), "--act-ckpt: value \"none\" with zero_stage 3 is not run by trainer \"engine\""},
      {flags({"--act-ckpt", "some"}), "--act-ckpt: value \"some\""},
      {flags({"--offload-params", "cpu"}), "--offload-params: value \"cpu\" needs ZeRO stage 3, found stage 0"},
      {flags({"--zero", "3", "--act-ckpt", "full", "--offload-params", "cpu"}),
       "--offload-optimizer: value \"none\" with offload_params \"cpu\" is not run by trainer \"engine\" (with the "
       "parameter shards on the host its AdamW steps there too"},
      {flags({"--zero", "1", "--offload-optimizer", "nvme"}),
       "--offload-optimizer: value \"nvme\" is not implemented yet in the engine (allowed now: none, cpu"},
      {flags({"--prefetch-bucket", "1e6"}), "--prefetch-bucket: not implemented yet"},
      {flags({"--cp", "2"}), "--cp: value 2 with sp 1 does not divide 1 GPUs into dp x sp x cp (allowed cp: 1)"},
      {{"--model", "tiny-llama", "--seq", "4098", "--sp", "1", "--cp", "2", "--nproc", "2"},
       "--seq: value 4098 is not divisible by 2 x sp x cp = 4 (the zigzag split of ring attention; allowed: a multiple of 4)"},
      {{"--model", "tiny-llama", "--seq", "4096", "--sp", "1", "--cp", "2", "--nproc", "2", "--cp-comm", "allgather"},
       "--cp-comm: value \"allgather\" is not implemented yet in the engine (allowed now: ring)"},
      {flags({"--save-every", "2"}), "--save-every: value 2 needs --save DIR"},
      {flags({"--data", "$D/none.txt"}), "--data: $D/none.txt: cannot open"},
      {flags({"--data", "$D/bad.bin"}), "bad.bin: unknown token format (allowed: *.u16.bin, *.u32.bin"},
      {flags({"--data", "$D/odd.u16.bin"}), "odd.u16.bin: size 3 bytes is not a multiple of 2"},
      {flags({"--data", "$D/big.u32.bin"}), "big.u32.bin: token 1 has id 5000 (allowed: ids below the model's vocab_size 4096)"},
      {flags({"--data", "$D/bad.txt"}), "bad.txt: byte 2 is not valid UTF-8"},
      {flags({"--data", "$D/empty.txt"}), "empty.txt: empty file"},
      // Too short for one sequence: wrapping around would train on the same 3 tokens over and over.
      {flags({"--data", "$D/ok.u16.bin"}),
       "--data: the files hold 3 tokens, fewer than one sequence of 4096 plus its last label (allowed: at least 4097 "
       "tokens, or a shorter --seq)"},
      {flags({"--data", "$D/ckpt"}), "--data: $D/ckpt: cannot open (a directory; allowed: a file)"},
      // Paths std::filesystem's throwing calls aborted on (found by fuzzing): a name too long for the file system.
      {flags({"--data", std::string(300, 'x')}), "--data: " + std::string(300, 'x') + ": cannot open (File name too long)"},
      {flags({"--init-from", std::string(300, 'x')}),
       "--init-from: " + std::string(300, 'x') + ": cannot open (File name too long)"},
      {flags({"--resume", std::string(300, 'x')}), "--resume: " + std::string(300, 'x') + ": cannot open (File name too long)"},
      {{"--plan", std::string(300, 'x') + ".toml", "--nproc", "1"}, std::string(300, 'x') + ".toml: cannot open (File name too long)"},
      {flags({"--gpu", std::string(300, 'x')}), "--gpu: value \"" + std::string(300, 'x') + "\" is not a preset or a file"},
      // A list is checked file by file; the message names the file and the token within it.
      {flags({"--data", "$D/ok.u16.bin,$D/none.u16.bin"}), "--data: $D/none.u16.bin: cannot open"},
      {flags({"--data", "$D/ok.u16.bin,$D/big.u32.bin"}),
       "--data: $D/big.u32.bin: token 1 has id 5000 (allowed: ids below the model's vocab_size 4096)"},
      {flags({"--data", "$D/ok.u16.bin,"}), "--data: value \"$D/ok.u16.bin,\" has an empty path"},
      {flags({"--data", "$D/ok.u16.bin", "--eos-id", "4096"}),
       "--eos-id: value 4096 is not below the model's vocab_size 4096 (allowed: 0 to 4095)"},
      {flags({"--eos-id", "-1"}), "--eos-id: value \"-1\" is not allowed"},
      {flags({"--lr", "0"}), "--lr: value \"0\" is not allowed (allowed: a number from 1e-15 to 1)"},
      {flags({"--lr-schedule", "step"}), "--lr-schedule: value \"step\" is not allowed (allowed: constant, cosine, linear)"},
      {flags({"--lr", "0.1", "--min-lr", "0.5"}), "--min-lr: value 0.5 is above the learning rate 0.1 (allowed: 0 to lr)"},
      {flags({"--grad-clip", "-1"}), "--grad-clip: value \"-1\" is not allowed"},
      {flags({"--warmup-steps", "x"}), "--warmup-steps: value \"x\" is not allowed"},
      {flags({"--resume", "$D/none"}), "--resume: $D/none: no such folder"},
      {flags({"--resume", "$D/ckpt"}), "--resume: $D/ckpt: no LATEST file or manifest.json"},
      {{"--plan", "$D/none.toml", "--nproc", "1"}, "none.toml: cannot open"},
      {{"--plan", "$D/zero3.toml", "--nproc", "2"}, "zero3.toml: key \"knobs.act_ckpt\": value \"none\" with zero_stage 3 is not run by trainer \"engine\""},
      {{"--plan", "$D/zero3.toml", "--model", "tiny-llama", "--nproc", "2"}, "--model: not allowed with --plan"},
      // Silent mistakes refused. A corpus is not tokens: the message names the script.
      // The command printed runs as printed (once it lacked --eos-token): the folder's tokenizer and its EOS.
      {flags({"--data", "$D/corpus.jsonl"}),
       "--data: $D/corpus.jsonl: JSON lines, not token ids (allowed: *.u16.bin / *.u32.bin; make one with "},
      {flags({"--data", "$D/corpus.jsonl"}), "tokenize.py --tokenizer YOUR_MODEL_FOLDER --out $D/corpus $D/corpus.jsonl)"},
      {flags({"--data", "$D/corpus.txt"}), "--data: $D/corpus.txt: JSON, not token ids"},
      {flags({"--eval-data", "$D/corpus.jsonl"}), "--eval-data: $D/corpus.jsonl: JSON lines, not token ids"},
      {flags({"--warmup-steps", "10", "--steps", "5"}),
       "--warmup-steps: value 10 is more than --steps 5 (allowed: 0 to 5, or --train-steps for a longer schedule)"},
      {flags({"--warmup-steps", "10", "--steps", "5", "--train-steps", "8"}),
       "--warmup-steps: value 10 is longer than train_steps 8 (allowed: 0 to train_steps)"},
      {{"--plan", "$D/two.toml", "--nproc", "3"},
       "--nproc: value 3 differs from $D/two.toml: key \"cluster.num_gpus\" 2 (allowed: 2, or a plan made for 3 GPUs"},
      {flags({"--adam-beta1", "1"}), "--adam-beta1: value \"1\" is not allowed"},
      {flags({"--adam-eps", "0"}), "--adam-eps: value \"0\" is not allowed"},
      {flags({"--export-dtype", "fp16", "--export-hf", "$D/out"}), "--export-dtype: value \"fp16\" is not allowed (allowed: fp32, bf16)"},
      {flags({"--export-dtype", "bf16"}), "--export-dtype: value bf16 needs --export-hf DIR"},
      {flags({"--eval-every", "2"}), "--eval-every: value 2 needs --eval-data FILE"},
      {flags({"--shuffle"}), "--shuffle: needs --data FILE"},
      {flags({"--log", "$D"}), "--log: $D: a folder (allowed: a file path, new or existing)"},
      // Every output checked before the first step; an input is never an output.
      {flags({"--save", "$D/bad.bin"}), "--save: $D/bad.bin: a file (allowed: a folder, new or existing)"},
      {flags({"--export-hf", "$D"}), "--export-hf: $D holds \""},
      {flags({"--data", "$D/ok.u16.bin", "--log", "$D/ok.u16.bin"}),
       "--log: $D/ok.u16.bin is the --data file $D/ok.u16.bin (an input is never written"},
      {flags({"--resume-or-init", "$D"}), "--resume-or-init: $D holds \""},
      {flags({"--resume-or-init", "$D/new", "--resume", "$D/ckpt"}), "--resume-or-init: not allowed with --resume"},
      {flags({"--export-trained-length"}), "--export-trained-length: needs --export-hf DIR"},
  };
  return kCases;
}

std::string expand(std::string s) {
  for (size_t at = s.find("$D"); at != std::string::npos; at = s.find("$D")) s.replace(at, 2, fixtures());
  return s;
}

TEST(EngineBadInput, EachCaseExits2WithOneLineNamingTheProblem) {
  for (const BadCase& c : cases()) {
    std::vector<std::string> args{"run"};
    for (const auto& a : c.args) args.push_back(expand(a));
    const RunResult r = run_engine(args, {}, 60);
    const std::string expected = expand(c.expected);
    EXPECT_EQ(r.exit_code, 2) << expected << "\n" << r.err;
    EXPECT_NE(r.err.find(expected), std::string::npos) << "expected: " << expected << "\nfound: " << r.err;
    EXPECT_EQ(r.err.rfind("spplan: ", 0), 0u) << "the CLI's prefix (issue 27): " << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "not one line: " << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

// The GPU speed switches are environment variables; a misspelt value is refused like a bad flag.
TEST(EngineBadInput, SpeedSwitchesInTheEnvironmentAreChecked) {
  const std::vector<std::string> args{"run", "--model", "tiny-llama", "--seq", "512", "--sp", "1", "--nproc", "1"};
  const RunResult sdpa = run_engine(args, {{"SPPLAN_ENGINE_SDPA_BACKEND", "math"}}, 60);
  EXPECT_EQ(sdpa.exit_code, 2);
  EXPECT_EQ(sdpa.err, "spplan: SPPLAN_ENGINE_SDPA_BACKEND: value \"math\" is not allowed (allowed: cudnn, flash, libtorch)\n");
  const RunResult fused = run_engine(args, {{"SPPLAN_ENGINE_FUSED_KERNELS", "off"}}, 60);
  EXPECT_EQ(fused.exit_code, 2);
  EXPECT_EQ(fused.err, "spplan: SPPLAN_ENGINE_FUSED_KERNELS: value \"off\" is not allowed (allowed: auto, aten)\n");
  const RunResult clock = run_engine(args, {{"SPPLAN_ENGINE_KERNEL_CLOCK", "yes"}}, 60);
  EXPECT_EQ(clock.exit_code, 2);
  EXPECT_EQ(clock.err, "spplan: SPPLAN_ENGINE_KERNEL_CLOCK: value \"yes\" is not allowed (allowed: 0, 1, cpu)\n");
}

TEST(EngineBadInput, UnknownSubcommand) {
  const RunResult r = run_engine({"walk"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "spplan: subcommand \"walk\" of spplan-engine is not known (allowed: run, calibrate, validate)\n");
}

// run --help lists the table parse_run_options reads, each flag with its meaning, allowed values
// and default; --version names the commit. Neither starts LibTorch's work nor needs a flag.
TEST(EngineHelp, RunHelpListsEveryFlagAndVersionNamesTheCommit) {
  const RunResult help = run_engine({"run", "--help"});
  EXPECT_EQ(help.exit_code, 0) << help.err;
  for (const FlagSpec& f : run_flag_specs()) {
    EXPECT_NE(help.out.find("  --" + f.name + (f.takes_value ? " V" : "")), std::string::npos) << f.name;
    EXPECT_FALSE(f.help.empty()) << f.name;
    if (f.takes_value) EXPECT_FALSE(f.allowed.empty() || f.default_value.empty()) << f.name;
  }
  EXPECT_NE(help.out.find("default: 0 (the engine's default)"), std::string::npos) << help.out;
  const RunResult version = run_engine({"--version"});
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_EQ(version.out.rfind("spplan-engine 0.", 0), 0u) << version.out;
  EXPECT_EQ(run_engine({"--help"}).exit_code, 0);
}

// calibrate and validate engine print the tables their parsers read, the same way.
TEST(EngineHelp, CalibrateAndValidateHelpListTheirParsersTables) {
  const struct {
    std::vector<std::string> args;
    std::vector<FlagSpec> specs;
  } commands[] = {{{"calibrate", "--help"}, calibrate_flag_specs()},
                  {{"validate", "engine", "--help"}, validate_flag_specs()}};
  for (const auto& c : commands) {
    const RunResult help = run_engine(c.args);
    EXPECT_EQ(help.exit_code, 0) << help.err;
    for (const FlagSpec& f : c.specs) {
      EXPECT_NE(help.out.find("  --" + f.name + (f.takes_value ? " V" : "")), std::string::npos) << f.name;
      EXPECT_FALSE(f.help.empty()) << f.name;
      if (f.takes_value) EXPECT_FALSE(f.allowed.empty() || f.default_value.empty()) << f.name;
    }
  }
}

}  // namespace
}  // namespace spplan::engine::testing
