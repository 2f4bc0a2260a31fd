// Every planner command at the slowest values its flags and files accept: the most GPUs
// (kMaxGpus), the longest sequence (kMaxSeqLen), the largest model preset, the largest
// grad_accum_steps in a plan file, rent's --nodes at its most counts, plan's --top at its most.
// Each must answer (exit 0, 1 or 2 with one line on stderr), never crash. The whole table is one
// ctest test under a generous TIMEOUT (300 s, tests/cli/CMakeLists.txt; it takes about 30 s here), so a command that stops being
// bounded fails it, while no assertion reads a clock and a loaded machine cannot fail it by luck.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "run_spplan.hpp"
#include "tests/scratch_dir.hpp"

namespace {

using spplan::cli_test::CliRun;
using spplan::cli_test::run_spplan;

// The largest model preset (94 layers of 128 experts), the longest sequence and the most GPUs
// any flag takes.
const std::string kModel = "--model qwen3-235b-a22b --gpu h100-80gb ";
const std::string kMostGpus = "--gpus 16777216 ";
const std::string kLongestSeq = "--seq 1000000000000 ";
const std::string kRings = "--model llama-3.1-70b --gpu h100-80gb --trainer engine ";

// Plans at the extremes a plan file takes: the largest model with the most micro steps
// (knob_flags.hpp KnobRanges); a dense model's tiled MLP and loss at the longest sequence (tiles
// grow with it); a ring of 2^20 ranks over the most GPUs.
std::string write_plan(const std::string& dir, const std::string& name, const std::string& text) {
  const std::string path = dir + "/" + name;
  std::ofstream(path) << text;
  return path;
}

const char* const kMostMicroSteps =
    "seq_len = 1048576\n[model]\npreset = \"qwen3-235b-a22b\"\n[gpu]\npreset = \"h100-80gb\"\n"
    "[cluster]\nnum_gpus = 64\n[knobs]\nsp = 4\nzero_stage = 3\nact_ckpt = \"offload\"\n"
    "offload_optimizer = \"cpu\"\ntiled_loss = true\ngrad_accum_steps = 1048576\n";
const char* const kLongestTiled =
    "seq_len = 1000000000000\n[model]\npreset = \"llama-3.1-70b\"\n[gpu]\npreset = \"h100-80gb\"\n"
    "[cluster]\nnum_gpus = 64\n[knobs]\nsp = 8\nzero_stage = 3\nact_ckpt = \"offload\"\n"
    "tiled_mlp = true\ntiled_loss = true\n";
const char* const kWidestRing =
    "seq_len = 549755813888\ntrainer = \"engine\"\n[model]\npreset = \"llama-3.1-70b\"\n[gpu]\n"
    "preset = \"h100-80gb\"\n[cluster]\nnum_gpus = 16777216\n[knobs]\nsp = 8\ncp = 1048576\n"
    "cp_comm = \"ring\"\nzero_stage = 3\nact_ckpt = \"full\"\ntiled_mlp = true\ntiled_loss = true\n"
    "grad_accum_steps = 1048576\n";

struct Extreme {
  std::string what;
  std::string args;
  int exit_code = -1;  // -1: any answer (0, 1 or 2)
};

std::vector<Extreme> extremes(const std::string& dir) {
  const std::string most = write_plan(dir, "most.toml", kMostMicroSteps),
                    longest = write_plan(dir, "longest.toml", kLongestTiled),
                    ring = write_plan(dir, "ring.toml", kWidestRing);
  const std::string accum = "--grad-accum 1048576 ";
  return {
      {"estimate at the most GPUs and the longest sequence",
       "estimate " + kModel + kMostGpus + kLongestSeq + "--sp 4 --json", 0},
      {"estimate at the most micro steps", "estimate " + kModel + kMostGpus + kLongestSeq + "--sp 4 " + accum, 0},
      {"plan at the most GPUs, the longest sequence and the most plans listed",
       "plan " + kModel + kMostGpus + kLongestSeq + "--top 1000 --json"},
      {"plan --simulate at the most GPUs and micro steps",
       "plan " + kModel + kMostGpus + "--seq 1M --top 1000 --simulate " + accum + "--json"},
      {"plan --simulate of a dense model at the longest sequence",
       "plan --model llama-3.1-70b --gpu h100-80gb " + kMostGpus + kLongestSeq + "--top 1000 --simulate --json"},
      {"fit at the most GPUs and the longest sequence", "fit " + kModel + kMostGpus + kLongestSeq + "--json"},
      {"fit of a sequence that fits nowhere", "fit " + kModel + "--gpus 8 " + kLongestSeq + "--json", 1},
      {"max-seq at the most GPUs", "max-seq " + kModel + kMostGpus + "--json"},
      // A trainer that runs rings: the search prices (sp, cp) pairs up to rings of millions of ranks.
      {"plan rings at the most GPUs, simulated, the most micro steps",
       "plan " + kRings + kMostGpus + "--seq 1024M --top 1000 --simulate " + accum + "--json", 0},
      {"fit rings at the most GPUs", "fit " + kRings + kMostGpus + "--seq 1024M --json", 0},
      {"fit rings at the most GPUs, the smallest count far up", "fit " + kRings + kMostGpus + "--seq 16384M --json", 0},
      {"max-seq rings at the most GPUs", "max-seq " + kRings + kMostGpus + "--json", 0},
      {"sweep rings at the most GPUs", "sweep " + kRings + kMostGpus + "--seq-from 1 --seq-to 1000000000000 --json", 0},
      {"max-seq at the most GPUs, knobs fixed", "max-seq " + kModel + kMostGpus + "--sp 4 --zero 3 " + accum + "--json"},
      {"sweep over every length at the most GPUs",
       "sweep " + kModel + kMostGpus + "--seq-from 1 --seq-to 1000000000000 --json"},
      {"rent at the most node counts, the largest of them, the longest sequence",
       "rent --model qwen3-235b-a22b " + kLongestSeq + "--nodes 128,127,126,125,124,123,122,121 --json"},
      {"rent at the most node counts and micro steps",
       "rent --model qwen3-235b-a22b --seq 1M --nodes 128,127,126,125,124,123,122,121 " + accum + "--json"},
      {"simulate the most micro steps, trace and picture",
       "simulate --plan " + most + " --trace " + dir + "/t.json --svg " + dir + "/t.svg --events 1000000000 --json", 0},
      {"simulate the most micro steps without overlap", "simulate --plan " + most + " --no-overlap", 0},
      {"simulate the longest sequence's tiles", "simulate --plan " + longest + " --svg " + dir + "/l.svg", 0},
      {"simulate the widest ring at the most micro steps", "simulate --plan " + ring + " --trace " + dir + "/r.json", 0},
      {"export the most micro steps to deepspeed", "export --plan " + most + " --format deepspeed", 0},
      {"export the widest ring to torchrun", "export --plan " + ring + " --format torchrun", 0},
  };
}

TEST(CliExtremes, EveryCommandAnswersAtItsSlowestExtremes) {
  const spplan::testing_scratch::ScratchDir dir("cli_extremes");
  for (const Extreme& e : extremes(dir.path())) {
    const CliRun r = run_spplan(e.args);
    if (e.exit_code >= 0) {
      EXPECT_EQ(r.exit_code, e.exit_code) << e.what << "\n" << r.err;
    } else {
      EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1 || r.exit_code == 2) << e.what << ": exit " << r.exit_code
                                                                             << "\n" << r.err;
    }
    if (r.exit_code == 2) EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << e.what << ": " << r.err;  // one line
  }
}

}  // namespace
