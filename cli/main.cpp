// spplan: plan, simulate and run Ulysses sequence-parallel training (DESIGN.md command contract).
#include "cli/commands.hpp"

int main(int argc, char** argv) { return spplan::cli::run_command(argc, argv); }
