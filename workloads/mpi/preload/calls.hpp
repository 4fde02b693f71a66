// What the timed MPI calls share (calls.cpp; the v-variants in
// vector_calls.cpp): a Call to fill, whether the simulation knows a
// communicator, and a collective posted in real MPI before the simulation
// is asked (workloads/mpi/README.md "What is timed").
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "workloads/mpi/protocol.hpp"

namespace vrdmasim {
namespace mpipreload {

// A Call of `op` on the communicator of context `ctx`.
mpiwire::Call call(mpiwire::Op op, std::uint32_t ctx = 0);
// A call on `comm` is timed if the simulation knows `comm` (its context
// into `ctx`); one made by an untimed call (an intercommunicator,
// MPI_Comm_split_type, ...) makes the call untimed (reported as `name`).
bool known(MPI_Comm comm, const char* name, std::uint32_t& ctx);
// A collective posted in real MPI (`real`) before the simulation is asked
// (`c`, followed by `values`): waited for when this rank's result depends
// on the others (`waits`), else kept (its input copied into `copy`).
int collective(mpiwire::Call c, MPI_Request real, bool waits, void* copy,
               const std::vector<std::uint64_t>& values = {});

// A datatype whose elements lie one after the other with no gap (extent =
// size, from its first byte; its size into `size`): a block's bytes and
// offset are its counts times the size.
bool dense(MPI_Datatype type, std::uint64_t& size);

}   // namespace mpipreload
}   // namespace vrdmasim
