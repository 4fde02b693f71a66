// WireCalendar: when a time-ordered link's wire is taken (README.md "In
// time order"). Each reservation is an interval [start, end), disjoint
// from the others; a packet takes the earliest idle interval at or after
// its head that holds it, even before intervals reserved by earlier calls.
//
// What that needs is only when the wire is busy: the union of the
// reservations, kept as busy blocks (a reservation that starts where
// another ends extends it), sorted by start in a vector, from first_ on.
// Packets queued back to back are one block, so a packet's search walks
// the blocks after its head, not every packet queued ahead of it; it
// usually extends the last block or appends, and the past leaves at the
// front, without a tree node made and freed per packet as a std::map
// would.
#pragma once

#include <utility>
#include <vector>

#include <systemc>

#include "src/core/force_inline.hpp"

namespace vrdmasim {

class WireCalendar {
public:
    // Forgets the reservations that ended by `now` (no later packet's head
    // is before it).
    VRDMASIM_FORCE_INLINE void forget(sc_core::sc_time now) {
        if (now == forgot_at_ && !exact_) return;   // nothing more to forget (what is reserved meanwhile is later)
        forgot_at_ = now;
        std::size_t f = first_;
        const std::size_t n = r_.size();
        while (f < n && r_[f].second <= now) ++f;
        first_ = f;
        if (f == n) {
            r_.clear();
            first_ = 0;
        } else if (f >= 16 && f * 2 >= n) {
            compact();
        }
    }

    // The earliest time >= s at which the wire is idle for `ser` and until
    // at least `min_end` (a packet's serialisation, and its tail's arrival
    // plus a flit: the link cannot send the tail before it has it).
    VRDMASIM_FORCE_INLINE sc_core::sc_time gap_from(sc_core::sc_time s, sc_core::sc_time ser,
                                                    sc_core::sc_time min_end) const {
        if (r_.empty() || r_.back().second <= s) return s;   // idle from s on
        if (r_.back().first <= s) return r_.back().second;   // in the last: idle from its end on
        return gap_among(s, ser, min_end);
    }

    // Takes [start, end), which overlaps no reservation.
    VRDMASIM_FORCE_INLINE void reserve(sc_core::sc_time start, sc_core::sc_time end) {
        if (r_.empty() || r_.back().second < start) r_.emplace_back(start, end);
        else if (r_.back().second == start && !exact_) r_.back().second = end;   // back to back: one block
        else insert(start, end);
    }

    // Busy blocks kept.
    std::size_t size() const { return r_.size() - first_; }

    // Keeps every reservation as it was made, and forgets at every call,
    // even at the same present: for a link whose calls may wait (a system
    // with cut links), where a call that waited may search for a time
    // before the present of a later call's forget, and must then find what
    // that forget left (exactly the reservations that end after it), as
    // before the blocks.
    void keep_every_reservation() { exact_ = true; }

private:
    // The blocks from first_ on are kept; forget() empties the vector when
    // it keeps none, so that none is kept exactly when it is empty (a
    // compare of two pointers, not a size against first_).
    std::vector<std::pair<sc_core::sc_time, sc_core::sc_time>> r_;
    std::size_t first_ = 0;
    sc_core::sc_time forgot_at_;   // the last forget's present
    bool exact_ = false;   // keep_every_reservation()

    void compact();
    void insert(sc_core::sc_time start, sc_core::sc_time end);
    sc_core::sc_time gap_among(sc_core::sc_time s, sc_core::sc_time ser, sc_core::sc_time min_end) const;
};

}   // namespace vrdmasim
