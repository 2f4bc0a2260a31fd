// Where this process stands in the job: its rank, the world, its rank on this machine and the
// rendezvous address (torchrun's RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT). The
// launcher (run/launcher.hpp) reads it from the environment; Comm (comm.hpp) joins the group with it.
#pragma once

#include <cstdint>
#include <string>

namespace spplan::engine {

struct DistEnv {
  int64_t rank = 0;
  int64_t world = 1;
  int64_t local_rank = 0;
  std::string master_addr = "127.0.0.1";
  int master_port = 0;
};

}  // namespace spplan::engine
