// `vrdmasim run`: one simulation, from configuration to output directory.
#pragma once

#include <string>
#include <vector>

namespace vrdmasim {

class ParamRegistry;

// Exit statuses of the vrdmasim executable.
constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;   // data mismatch, unfinished workload, simulation error
constexpr int kExitBadConfig = 2;   // bad command line or configuration: nothing simulated, nothing written
constexpr int kExitTransferErrors = 3;   // simulated to the end, all checks passed, but transfers failed

// Runs `vrdmasim run ARGS...` (ARGS without "run"); returns the exit status.
int run_command(const ParamRegistry& reg, const std::vector<std::string>& args);

}   // namespace vrdmasim
