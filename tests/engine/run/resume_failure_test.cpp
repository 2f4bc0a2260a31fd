// Checkpoint/resume and failures: resume continues the same losses; a killed rank ends the run
// (launcher or ranks started by hand) with a message in bounded time; corruption is refused.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "engine/run/launcher.hpp"
#include "run_helpers.hpp"

namespace spplan::engine::testing {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> small(int steps, std::vector<std::string> more = {}) {
  std::vector<std::string> a{"run", "--model", "tiny-llama", "--seq", "1024", "--sp", "2", "--nproc", "2",
                             "--seed", "3", "--steps", std::to_string(steps)};
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

std::vector<double> tail(const std::vector<double>& v, size_t from) {
  return from <= v.size() ? std::vector<double>(v.begin() + static_cast<long>(from), v.end()) : std::vector<double>{};
}

TEST(EngineResume, ResumeContinuesTheUninterruptedLosses) {
  const auto full = losses_of(json_of(run_engine(small(4, {"--json"}))));
  const std::string dir = fresh_dir("ckpt_resume");
  const RunResult first = run_engine(small(2, {"--save", dir}));
  ASSERT_EQ(first.exit_code, 0) << first.err;
  ASSERT_TRUE(fs::exists(dir + "/LATEST"));
  const auto resumed = losses_of(json_of(run_engine(small(4, {"--resume", dir, "--json"}))));
  ASSERT_EQ(resumed.size(), 2u);
  EXPECT_LE(max_rel_diff(resumed, tail(full, 2)), 1e-6);
}

TEST(EngineFailure, KilledRankStopsTheRunAndTheLastCheckpointResumes) {
  const auto full = losses_of(json_of(run_engine(small(4, {"--json"}))));
  const std::string dir = fresh_dir("ckpt_killed");
  const RunResult killed = run_engine(small(4, {"--save", dir, "--save-every", "2"}), {{"SPPLAN_ENGINE_FAULT", "kill:1:4"}});
  EXPECT_NE(killed.exit_code, 0);
  EXPECT_LT(killed.seconds, 60.0);
  EXPECT_NE(killed.err.find("rank 1"), std::string::npos) << killed.err;
  EXPECT_NE(killed.err.find("signal 9"), std::string::npos) << killed.err;
  const auto resumed = losses_of(json_of(run_engine(small(4, {"--resume", dir, "--json"}))));
  EXPECT_LE(max_rel_diff(resumed, tail(full, 2)), 1e-6);
}

TEST(EngineFailure, RanksStartedByHandExitWhenAPeerDies) {
  // As under torchrun: no launcher to stop the survivors, so the collective timeout must.
  const std::string bin = SPPLAN_ENGINE_BIN;
  const std::string args = " run --model tiny-llama --seq 1024 --sp 2 --steps 4 --seed 3";
  const std::string env = "MASTER_ADDR=127.0.0.1 MASTER_PORT=" + std::to_string(free_port()) + " WORLD_SIZE=2 ";
  const std::string cmd = "{ " + env + "RANK=0 LOCAL_RANK=0 " + bin + args + " 2>&1; echo \"rank0 exit $?\"; } & " +
                          env + "RANK=1 LOCAL_RANK=1 SPPLAN_ENGINE_FAULT=kill:1:2 " + bin + args + " 2>/dev/null; wait";
  const RunResult r = run_shell(cmd, 120);
  EXPECT_LT(r.seconds, 60.0);
  EXPECT_EQ(r.out.find("rank0 exit 0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rank0 exit"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("spplan-engine: rank 0:"), std::string::npos) << r.out;
}

// SIGTERM to the launcher (the GUI's stop button, a scheduler): it stops its ranks, says so,
// exits 128 + 15 and removes its temp file; no rank is left running.
TEST(EngineFailure, SigtermToTheLauncherStopsEveryRankAndCleansUp) {
  const std::string tmp = fresh_dir("launcher_tmp");
  // The seed marks this run's processes: written as ${s}73 and matched as 91827[3], so neither
  // the shell's own command line nor pgrep's matches, only the launcher's and the ranks'.
  const std::string cmd = "s=9182; TMPDIR=" + tmp + " " + std::string(SPPLAN_ENGINE_BIN) +
                          " run --model tiny-llama --seq 1024 --sp 2 --nproc 2 --steps 1000 --seed ${s}73"
                          " 2>&1 & pid=$!; sleep 4; kill -TERM $pid; wait $pid; echo \"launcher exit $?\"; sleep 1; "
                          "pgrep -f 'seed 91827[3]' >/dev/null && echo 'ranks left' || echo 'no ranks left'";
  const RunResult r = run_shell(cmd, 120);
  EXPECT_NE(r.out.find("spplan-engine: stopped by signal 15"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("launcher exit 143"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("no ranks left"), std::string::npos) << r.out;
  EXPECT_TRUE(fs::is_empty(tmp)) << "the launcher's temp file was left in " << tmp;
}

// WORLD_SIZE=2 with one rank started: whichever rank it is (rank 0 hosts the store, rank 1
// connects to it) waits SPPLAN_ENGINE_COMM_TIMEOUT_S, then exits saying where it waited.
TEST(EngineFailure, ARankThatNeverJoinsEndsTheRendezvousWithAMessage) {
  const std::string bin = SPPLAN_ENGINE_BIN;
  for (const std::string rank : {"0", "1"}) {
    const std::string port = std::to_string(free_port());
    const std::string cmd = "MASTER_ADDR=127.0.0.1 MASTER_PORT=" + port + " WORLD_SIZE=2 RANK=" + rank +
                            " LOCAL_RANK=" + rank + " SPPLAN_ENGINE_COMM_TIMEOUT_S=3 " + bin +
                            " run --model tiny-llama --seq 1024 --sp 2 --steps 2 2>&1";
    const RunResult r = run_shell(cmd, 120);
    EXPECT_EQ(r.exit_code, 1) << r.out;
    EXPECT_LT(r.seconds, 30.0) << "the 3 s timeout did not end the wait";
    EXPECT_NE(r.out.find("spplan-engine: rank " + rank + ": rendezvous at 127.0.0.1:" + port + " failed within 3 s: "),
              std::string::npos) << r.out;
    EXPECT_NE(r.out.find("(allowed: all 2 ranks started with the same MASTER_ADDR and MASTER_PORT;"
                         " SPPLAN_ENGINE_COMM_TIMEOUT_S sets the wait)"),
              std::string::npos) << r.out;
  }
}

// The newest checkpoint damaged on disk (here truncated, as by a copy cut short): the resume
// refuses it, says so, and continues from the one before with the same losses as a run never
// interrupted.
TEST(EngineFailure, DamagedNewestCheckpointResumesFromThePrevious) {
  const auto full = losses_of(json_of(run_engine(small(4, {"--json"}))));
  const std::string dir = fresh_dir("ckpt_damaged_newest");
  ASSERT_EQ(run_engine(small(2, {"--save", dir, "--save-every", "1"})).exit_code, 0);
  const std::string newest = dir + "/ckpt-000002/params.f32";
  ASSERT_TRUE(fs::exists(dir + "/ckpt-000001/manifest.json"));
  fs::resize_file(newest, fs::file_size(newest) / 2);
  const RunResult resumed = run_engine(small(4, {"--resume", dir, "--json"}));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.err.find("spplan-engine: warning: --resume: " + newest + ": size "), std::string::npos)
      << resumed.err;
  EXPECT_NE(resumed.err.find("resuming from the previous checkpoint " + dir + "/ckpt-000001 (step 1)"),
            std::string::npos) << resumed.err;
  EXPECT_LE(max_rel_diff(losses_of(json_of(resumed)), tail(full, 1)), 1e-6);
}

TEST(EngineFailure, CorruptedCheckpointIsRefusedWithOneLine) {
  const std::string dir = fresh_dir("ckpt_corrupt");
  const std::vector<std::string> args{"run", "--model", "tiny-llama", "--seq", "256", "--sp", "1", "--nproc", "1"};
  auto with = [&](std::vector<std::string> more) {
    auto a = args;
    a.insert(a.end(), more.begin(), more.end());
    return a;
  };
  ASSERT_EQ(run_engine(with({"--steps", "1", "--save", dir})).exit_code, 0);
  std::string latest;
  std::ifstream(dir + "/LATEST") >> latest;
  {
    std::fstream f(dir + "/" + latest + "/params.f32", std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(1000);
    const char byte = static_cast<char>(f.get());
    f.seekp(1000);
    f.put(static_cast<char>(byte ^ 0x01));  // one flipped bit
  }
  const RunResult r = run_engine(with({"--steps", "2", "--resume", dir}));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("params.f32: checksum"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("corrupted"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "expected one line: " << r.err;
}

}  // namespace
}  // namespace spplan::engine::testing
