// The SystemC threads' share of the host's memory mappings.
//
// SystemC (2.3.4, QuickThreads) gives every SC_THREAD a stack of its own
// mmap()ed memory with a guard page at its end: two of the process's memory
// mappings, all made when the simulation starts. Linux allows a process
// vm.max_map_count mappings (65,530 by default): a torus whose threads need
// more either loses the guard pages (SystemC warning W518: a stack overflow
// then corrupts memory silently) or fails in std::bad_alloc with memory to
// spare, after minutes of elaboration and teardown. The stack arena
// (thread_stacks.hpp) puts every stack in a few mappings in all, and is
// used unless it cannot be (or VRDMASIM_STACK_GUARD_PAGES=1 asks for
// SystemC's own stacks). System checks the budget once the first node is
// built (every node has the same threads), counting what the mode in use
// maps, and refuses at once a configuration that cannot fit, saying how to
// raise the limit.
#pragma once

#include <cstddef>
#include <string>

#include <systemc>

namespace vrdmasim {

// SC_THREADs (and SC_CTHREADs) in the object tree under `root`, itself
// included, and the LazyThreads that may spawn one (core/lazy_thread.hpp):
// the worst case, every lazy thread spawned.
std::size_t thread_processes_under(const sc_core::sc_object& root);

// Throws ConfigError naming vm.max_map_count (and how to raise it) when
// `nodes` nodes of `threads_per_node` threads each, besides the mappings the
// process already has, would not fit under the limit with a margin for the
// rest of the run (large allocations are mappings too). `what` names the
// system ("a torus of 4,096 nodes"). Reads /proc; where it cannot (not
// Linux), checks nothing.
void check_thread_budget(std::size_t threads_per_node, std::size_t nodes, const std::string& what);

}   // namespace vrdmasim
