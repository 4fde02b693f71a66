#include "src/core/sim_params.hpp"

namespace vrdmasim {

SimParams::SimParams()
    : set("sim", "the simulation run"),
      seed(set.integer("seed", "1", "seed for every pseudo-random choice (data patterns, ...)")
               .range("0", "9223372036854775807")),
      quantum(set.time("quantum", "1us",
                       "global quantum of temporal decoupling: how far a process may run ahead of the others")
                  .range("1ns", "1ms")),
      time_limit(set.time("time-limit", "10s", "simulated time after which the run stops with an error")
                     .range("1ns", "100000s")) {}

}   // namespace vrdmasim
