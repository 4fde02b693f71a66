// Software takes turns: the threads that model a node's software (its
// programs, their library's threads, its kernel threads) act at one
// simulated instant in an order of the model, never of the host.
//
// Two processes of a node that wake at the same picosecond both take page
// frames, post to the engine, book a core: whoever runs first gets the
// first frame, channel and core. SystemC runs them in an order of its own
// (src/sim/event_order.hpp), so without a rule the figures moved with
// sim.event-order and its seed (measured: 178 of the composition matrix's
// runs with node.processes = 2). Here, a marked thread that wakes (any
// sc_core::wait returns: this file defines those functions, which calls of
// this program reach before libsystemc's) waits for its turn. At the end of
// the instant (instant_end.hpp: nothing else pending at the present), the
// threads waiting in each group (a node) go one at a time, by a key drawn
// from the thread's name and the time (a permutation that changes with the
// time, as a round-robin arbiter's: no thread wins every tie), each before
// the next is let go once it has waited again and the instant has settled.
// A thread that wakes again at the same instant goes after those already
// waiting (its round is later). Threads of different groups never meet at
// one instant (only through the network, which takes time), so a group's
// first goes with the other groups' firsts.
//
// Software at an instant thus acts after the hardware's threads and
// methods of that instant (the engine, the SMMU, the links' deliveries),
// and before the network's hop queue serves it (InstantEnd's priority), as
// a program woken at a time ran before the hop queue did.
#pragma once

#include <cstdint>
#include <string>

namespace vrdmasim::software_turns {

// The calling thread (an SC_THREAD, or a spawned thread) models software of
// group `group` (a node's name): from now on it takes turns after every
// wait, and it takes one now. Call it first thing in the thread's body.
void enter(const std::string& group);

// The calling thread ends (a spawned one, about to return): it takes turns
// no more, and a thread made later at its address is a new one.
void leave();

// The key of thread `name` at instant `at`: at one instant, the threads of
// a group waiting for their turn go in increasing order of it.
std::uint64_t order_key(const char* name, std::uint64_t at_ps);

// The group of a thread whose statistics are under `prefix` ("node3.proc1",
// "x1y0z0f3.hog"): its node, the name before the first dot.
inline std::string node_of(const std::string& prefix) { return prefix.substr(0, prefix.find('.')); }

// Turns taken, and turns that waited behind another thread's at the same
// instant (the ties a rule broke).
std::uint64_t turns();
std::uint64_t ties();

}   // namespace vrdmasim::software_turns
