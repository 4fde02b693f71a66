// An interrupt line in a loosely-timed model: raised at an absolute time
// (possibly ahead of the simulation time, under temporal decoupling), lowered
// by software. `event` fires when the line rises; `level(t)` says whether it
// is high at time t.
#pragma once

#include <systemc>

#include "src/core/lazy_thread.hpp"

namespace vrdmasim {

class IrqLine {
public:
    // Raise at absolute time `at` (now if `at` is in the past). Raising a
    // line that is already high (or already due to rise) keeps the earlier time.
    void raise_at(sc_core::sc_time at) {
        const sc_core::sc_time now = sc_core::sc_time_stamp();
        if (at < now) at = now;
        if (high_ && since_ <= at) return;
        high_ = true;
        since_ = at;
        ++raises_;
        event_.notify(at - now);
    }
    void lower() { high_ = false; }
    bool level(sc_core::sc_time at) const { return high_ && since_ <= at; }
    bool high() const { return high_; }
    sc_core::sc_time since() const { return since_; }
    // For waiters (made at first use).
    const sc_core::sc_event& event() { return event_.get(); }
    // The interrupt handler thread's wake-up (the same event).
    WakeEvent& wake() { return event_; }
    unsigned long raises() const { return raises_; }

private:
    bool high_ = false;
    sc_core::sc_time since_;
    unsigned long raises_ = 0;
    WakeEvent event_;   // made at the first raise, or when first waited for
};

}   // namespace vrdmasim
