// Event identities: what a model says an sc_event it makes lazily, while
// the simulation runs, is, so that its identity does not depend on which
// process happens to make it (src/sim/event_order.hpp keys same-time events
// by identity). A LazyEvent (lazy_event.hpp) is made by whoever first
// notifies or waits for it: in one process a packet's sender may make the
// far end's event in its own call, in a partitioned run the window loop
// does, outside any process. Its identity is fixed at elaboration instead:
// its owner module's name and how many LazyEvents that owner had before.
#pragma once

#include <cstdint>

namespace vrdmasim::event_identity {

// Whether identities are wanted (sim.event-order = keyed); set before the
// system is built. Off, nothing is counted or remembered.
void enable(bool on);
bool enabled();
// The identity of the next event made (0: none, its maker's is used).
void set_next(std::uint64_t identity);
// Takes it (the event order's constructor hook, src/sim/event_order.cpp).
std::uint64_t take_next();

}   // namespace vrdmasim::event_identity
