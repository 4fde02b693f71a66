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
                     .range("1ns", "100000s")),
      event_order(set.choice("event-order", "heap", {"heap", "keyed"},
                             "which of two notifications of one simulated time SystemC runs first: heap (its own "
                             "binary heap's order, which depends on every other notification it holds) or keyed "
                             "(a permutation, drawn from the time and sim.event-order-seed, of keys made from the "
                             "events' names: the same whatever else is simulated, as a partitioned run needs; "
                             "docs/scaling.md)")),
      event_order_seed(set.integer("event-order-seed", "1",
                                   "which permutation sim.event-order = keyed breaks the ties of each simulated time "
                                   "by: another seed is another equally valid order of same-time events, with "
                                   "sim.seed's pseudo-random choices (data patterns, workloads' draws) unchanged; "
                                   "heap ignores it")
                           .range("0", "9223372036854775807")),
      partition(set.string("partition", "auto",
                           "how a run under `mpirun -np N` splits the torus's QFDB boards among its N ranks: auto "
                           "(blocks of contiguous boards, the most even, then the fewest board links cut) or "
                           "PXxPYxPZ blocks per dimension (2x1x1); the run's config.ini records the blocks chosen. "
                           "One process ignores it (docs/scaling.md)")) {}

}   // namespace vrdmasim
