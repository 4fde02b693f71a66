// The preloaded library's side of the wire (workloads/mpi/README.md):
// the connection to the simulation, the rank's simulated clock, and the
// real MPI requests the library keeps progressing on the program's behalf.
#pragma once

#include <mpi.h>

#include <sys/time.h>
#include <time.h>

#include <cstdint>
#include <vector>

#include "workloads/mpi/protocol.hpp"

namespace vrdmasim {
namespace mpipreload {

// True between MPI_Init (once connected) and MPI_Finalize.
bool connected();
// Connect to the simulation (MPI_Init, after PMPI_Init).
void connect(int rank, int size);
// Send `c` (its compute filled in here) and wait for the reply, driving the
// real MPI's progress meanwhile; the rank's clock is the reply's time from
// then. A reply with an error ends the process (the simulation stopped).
// `ids`: c.count values sent after the call (Waitany's, Testany's and
// Testall's request ids, a v-variant's blocks, a post's or start's group).
mpiwire::Reply exchange(mpiwire::Call c, const std::uint64_t* ids = nullptr);
// A question to the simulation inside a call (Op::Matched): no compute
// is charged and the clock does not move.
mpiwire::Reply question(mpiwire::Call c);
// The clock at the end of a wrapper (its real work done): compute is
// measured from here. `at_mark` (if set) runs first (calls.cpp: the
// receives the program freed, posted to real MPI once matched).
void mark();
extern void (*at_mark)();
// The rank's simulated time now, in picoseconds (the last reply's time plus
// the compute since, as the compute mode says).
std::uint64_t now_ps();
// A call the simulation does not time: refused (the simulation stops the
// run naming it) or counted, as VRDMASIM_MPI_UNTIMED says.
void untimed(const char* name);
// A call that cannot run untimed either (it would break what this library
// does underneath): the simulation stops the run naming it, whatever
// VRDMASIM_MPI_UNTIMED says (`why` kErroneous: a call MPI makes
// erroneous, `name` saying by which rule). Never returns.
[[noreturn]] void cannot_run(const char* name, std::int32_t why = mpiwire::kCannotRun);

// A real request the program no longer sees (a send from a copy, a
// collective whose result this rank does not wait for): progressed while
// the library waits, and completed at MPI_Finalize. `copy` is freed then.
void keep(MPI_Request r, void* copy);
// Progress the kept requests once.
void progress();
// Wait for every kept request (MPI_Finalize).
void drain();
// MPI_Comm_free of a communicator, once no kept request is left (one may
// be on it: a collective this rank did not wait for; Open MPI would free
// the communicator under it).
void free_later(MPI_Comm comm);
// A copy of what `count` elements of `type` at `buf` occupy, laid out as
// there: the buffer to send from, and in `owned` the block to free.
const void* copy_of(const void* buf, int count, MPI_Datatype type, void** owned);

// The bytes `count` elements of `type` carry, and the span of memory they
// occupy from `buf` (first byte, length), as the datatype lays them out.
std::uint64_t data_bytes(int count, MPI_Datatype type);
void span(const void* buf, int count, MPI_Datatype type, std::uint64_t& va, std::uint64_t& len);

// The host's own clocks (the C library's, not this library's
// replacements): for measuring compute, and for MPI's own callers.
int real_clock_gettime(clockid_t id, struct timespec* ts);
int real_gettimeofday(struct timeval* tv, void* tz);

// Stop the process with a message (a broken protocol, a call outside
// what this library can do).
[[noreturn]] void fail(const char* what);

}   // namespace mpipreload
}   // namespace vrdmasim
