// The program's own use of its memory between two MPI calls
// (workloads/mpi/README.md "The program's memory"): the pages it touched
// first since the last call, as the kernel made them resident
// (mincore(2)), and the large blocks it freed, whose mappings the heap
// unmapped. Both go with the next call, so that the rank's simulated
// process makes the same pages present, and unmaps the same ranges,
// before the call is carried out (mpi.program-memory = observed).
//
// Watched: the program's writable segments (data and bss), its stack
// (from the stack pointer up) and its heap (heap.cpp). Pages real MPI
// wrote are not the program's: those of a call's buffers are taken as
// known when the call returns (settle), and those of a real receive
// posted and not yet complete are left until it is.
#pragma once

#include <cstdint>
#include <vector>

namespace vrdmasim {
namespace mpipreload {

// Start watching (MPI_Init, once connected): what is resident now is known.
void watch();
bool watching();
// Runs {va, len, ...}: the mappings unmapped since the last call, and the
// pages first touched since then (page aligned, in address order).
void since_last_call(std::vector<std::uint64_t>& unmapped, std::vector<std::uint64_t>& touched);
// After a call's real work: every page resident now is known. All the
// watched memory, not the call's buffers alone: in a call real MPI writes
// the call's buffers, those of the requests it progresses meanwhile (a
// non-blocking collective's receive buffer, posted in an earlier call and
// not listed by receiving()), and its own allocations in the program's
// heap and stack; none of it is the program's touch. The program's own
// touches before the call were taken by since_last_call() at its start,
// and no code of the program's runs in between (its other threads: not
// observed, README "The program's memory").
void settle();
// A real receive into [va, va + len) posted to real MPI, and its end: real
// MPI writes those pages meanwhile, in host time.
void receiving(std::uint64_t va, std::uint64_t len);
void received(std::uint64_t va, std::uint64_t len);

}   // namespace mpipreload
}   // namespace vrdmasim
