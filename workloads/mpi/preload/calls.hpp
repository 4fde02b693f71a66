// What the preloaded library's wrappers share (calls.cpp, windows.cpp):
// a call to the simulation, the communicators it knows, a call's buffer.
#pragma once

#include <mpi.h>

#include <cstdint>

#include "workloads/mpi/preload/channel.hpp"

namespace vrdmasim {
namespace mpipreload {

// A call of operation `op` on the communicator of context `ctx`.
mpiwire::Call call(mpiwire::Op op, std::uint32_t ctx = 0);
// A call on `comm` is timed if the simulation knows `comm` (its context
// into `ctx`); one made by an untimed call (an intercommunicator,
// MPI_Comm_split_type, ...) makes the call `name` untimed (reported).
bool known(MPI_Comm comm, const char* name, std::uint32_t& ctx);
// A call's buffer into c.va and c.bytes: where its data lie, or (va 0,
// protocol.hpp) none for a non-contiguous datatype, whose data the library
// packs into a buffer of its own, as Open MPI's convertor does.
void buffer(mpiwire::Call& c, const void* buf, int count, MPI_Datatype type);
// Memory of the program's own heap (heap.cpp), for MPI_Win_allocate: at
// the same address in every run, as the program's malloc; and back.
void* program_alloc(std::size_t bytes);
void program_free(void* p);

}   // namespace mpipreload
}   // namespace vrdmasim
