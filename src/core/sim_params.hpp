// The parameters of the simulation run itself (section [sim]): the seed of
// every pseudo-random choice, the quantum of temporal decoupling, the time
// limit. Read by the runner and by models (the workloads' data patterns).
#pragma once

#include "src/core/params.hpp"

namespace vrdmasim {

// The parameters of section [sim], declared in sim_params.cpp; read
// through params_of<SimParams>().
struct SimParams {
    SimParams();
    ParamSet set;
    IntParam seed;
    TimeParam quantum;
    TimeParam time_limit;
    EnumParam event_order;
    IntParam event_order_seed;
    StringParam partition;
};

}   // namespace vrdmasim
