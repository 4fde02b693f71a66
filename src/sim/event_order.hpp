// The order in which SystemC runs what happens at one simulated time.
//
// SystemC's kernel keeps timed notifications in a binary heap compared by
// time alone (sc_notify_time_compare, installed by sc_simcontext), so the
// order in which it pops two notifications of one time, and so runs the
// processes they wake, depends on the heap's shape: on every other
// notification the kernel holds and on the order they came in. Models of
// this simulator do depend on that order (two threads of one board that
// wake at the same picosecond reserve a link or book the DRAM in the order
// they run), so today's results change when an unrelated notification is
// added (measured: docs/scaling.md, "Same-time events").
//
// `sim.event-order = keyed` breaks those ties by a key of each notified
// event that does not depend on what else exists: its hierarchical name,
// or, for the kernel's events (a process's timeout event is named after its
// module alone) and for events made while the simulation runs (SystemC
// names none), that name with the name of the process being made or
// running, and how many events of that identity were made before. The
// order of a time's ties is a permutation of those keys drawn from the
// time and sim.event-order-seed (a hash): no event wins every tie, as no port of a round-robin
// arbiter does, and ordering by creation alone would favour the nodes built
// first (measured: a halo 13 % slower). The order in which the kernel runs
// the processes of a time is then a function of the events alone, and
// processes that share no state (the boards of a partitioned run, which
// meet only through time-stamped messages) cannot change each other's
// order. `heap` (the default) is SystemC's own order.
//
// How, without changing libsystemc (Debian's shared library): this file
// defines some of its exported functions, which the dynamic linker then
// takes from the executable for the library's own calls too (the library
// reaches each through its PLT or GOT):
//   - sc_core::sc_notify_time_compare, the heap's comparison;
//   - sc_core::sc_event's constructors, which key each event (a table from
//     the event's address to its key; an event made at the address of a
//     destroyed one takes its own);
//   - sc_core::sc_event_timed::allocate / deallocate, the pool of timed
//     notifications, so that each notification carries, in a word before
//     it, the key of its event, fixed at the first comparison: a cancelled
//     notification (SystemC clears its event pointer and leaves it in the
//     heap) keeps the key it was ordered by, as a heap needs;
//   - sc_core::sc_ppq_base's insert, extract_top and heapify, the kernel's
//     binary heap, unchanged but for the timed notifications' comparison,
//     inlined (the library calls it through a pointer at every level).
// A program that does not link this file keeps SystemC's own functions.
#pragma once

#include <cstdint>
#include <string>

namespace vrdmasim::event_order {

enum class Order { Heap, Keyed };

// The order ties are broken in from now on (the kernel's heap must hold no
// notification: set before the simulation starts); keyed: `seed` (sim.event-order-seed)
// chooses the permutations.
void set(Order o, std::uint64_t seed = 0);
Order current();

// The order a choice of sim.event-order names ("heap", "keyed"); anything
// else: std::invalid_argument.
Order parse(const std::string& choice);

// Events keyed so far (every sc_event made while the order is keyed).
std::uint64_t events_keyed();

// True when this process's SystemC calls reach the functions of this file
// (the dynamic linker took them from the executable): checked by the tests,
// and by set(Keyed), which refuses with std::runtime_error otherwise.
bool interposed();

}   // namespace vrdmasim::event_order
