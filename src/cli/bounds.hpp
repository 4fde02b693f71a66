// `vrdmasim bounds`: the saturation-throughput bound (maximum channel load)
// and the zero-load latency of synthetic traffic on a configuration's
// network, computed from the simulator's own routing function and link
// parameters (src/sim/channel_load.hpp). Simulates nothing.
#pragma once

#include <string>
#include <vector>

namespace vrdmasim {

class ParamRegistry;

// Runs `vrdmasim bounds ARGS...` (ARGS without "bounds"); returns the exit status.
int bounds_command(const ParamRegistry& reg, const std::vector<std::string>& args);

}   // namespace vrdmasim
