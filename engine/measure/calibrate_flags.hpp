// The flags of `spplan-engine calibrate`, with their help: the table its parser reads and
// `spplan calibrate --help` prints. Apart from calibrate.cpp so that the LibTorch-free tests and the
// help read it without LibTorch.
#pragma once

#include <vector>

#include "planner/core/args.hpp"

namespace spplan::engine {

std::vector<FlagSpec> calibrate_flag_specs();

}  // namespace spplan::engine
