// What the preloaded library's wrappers share (calls.cpp, windows.cpp, the
// v-variants in vector_calls.cpp): a Call to fill, whether the simulation
// knows a communicator, a call's buffer, a collective posted in real MPI
// before the simulation is asked (workloads/mpi/README.md "What is timed").
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "workloads/mpi/preload/channel.hpp"

namespace vrdmasim {
namespace mpipreload {

// A Call of `op` on the communicator of context `ctx`.
mpiwire::Call call(mpiwire::Op op, std::uint32_t ctx = 0);
// A call on `comm` is timed if the simulation knows `comm` (its context
// into `ctx`); one made by an untimed call (an intercommunicator,
// MPI_Comm_split_type, ...) makes the call untimed (reported as `name`).
bool known(MPI_Comm comm, const char* name, std::uint32_t& ctx);
// A call's buffer into c.va and c.bytes: where its data lie, or (va 0,
// protocol.hpp) none for a non-contiguous datatype, whose data the library
// packs into a buffer of its own, as Open MPI's convertor does.
void buffer(mpiwire::Call& c, const void* buf, int count, MPI_Datatype type);
// The element `elements` elements of `type` (its extent apart) into `buf`:
// where an MPI_IN_PLACE root's own block lies in its receive (gather) or
// send (scatter) buffer.
const void* element_at(const void* buf, std::int64_t elements, MPI_Datatype type);
// Memory of the program's own heap (heap.cpp), for MPI_Win_allocate: at
// the same address in every run, as the program's malloc; and back.
void* program_alloc(std::size_t bytes);
void program_free(void* p);
// A collective posted in real MPI (`real`) before the simulation is asked
// (`c`, followed by `values`): waited for when this rank's result depends
// on the others (`waits`), else kept (its input copied into `copy`).
int collective(mpiwire::Call c, MPI_Request real, bool waits, void* copy,
               const std::vector<std::uint64_t>& values = {});

// A reduction's MPI_Op and datatype into c.reduce_op and c.datatype,
// `count` into c.elements, and its data (`count` elements from `buf`, laid
// out as the library lays them, a pair type's padding included) into c.va
// and c.bytes (reduction.cpp); a user-defined MPI_Op as a stand-in over
// its bytes (protocol.hpp kStandIn). False (the call reported untimed,
// with why) for a predefined operation on a datatype the collectives
// library does not have (a derived datatype, MPI_LONG_DOUBLE, the complex
// types, ...) or one MPI does not define it on.
bool reduction(mpiwire::Call& c, const char* name, MPI_Op op, MPI_Datatype type, std::uint64_t count, const void* buf);
// An MPI count as a count of elements (a negative one: none).
std::uint64_t count_of(int count);
// A non-blocking collective being started (nonblocking_calls.cpp): its
// wrapper makes one of these, then calls the blocking wrapper, whose
// collective() then starts it instead (the Call made the non-blocking
// one, the program's request a generalized one into `request`, which
// MPI_Wait and MPI_Test end once the simulation's and the real one have).
// started(): whether collective() did (a blocking wrapper that took its
// untimed way did not: the call is complete then).
class Starting {
public:
    explicit Starting(MPI_Request* request);
    ~Starting();
    Starting(const Starting&) = delete;
    Starting& operator=(const Starting&) = delete;
    bool started() const;
};

// A request-based one-sided operation the simulation posted as `sim`:
// `*request` (real MPI's request of it) kept, and the program's request a
// generalized one into `*request`, which MPI_Wait and MPI_Test end once
// the simulation's operation and the real one have completed.
void rma_started(MPI_Request* request, std::uint64_t sim);

// A datatype whose elements lie one after the other with no gap (extent =
// size, from its first byte; its size into `size`): a block's bytes and
// offset are its counts times the size.
bool dense(MPI_Datatype type, std::uint64_t& size);

}   // namespace mpipreload
}   // namespace vrdmasim
