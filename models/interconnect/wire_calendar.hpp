// WireCalendar: when a time-ordered link's wire is taken (README.md "In
// time order"). Each reservation is an interval [start, end), disjoint
// from the others; a packet takes the earliest idle interval at or after
// its head that holds it, even before intervals reserved by earlier calls.
//
// The reservations are kept sorted by start (so by end too: they are
// disjoint) in a vector, from first_ on: a packet usually reserves after
// every other, so it appends, and the past leaves at the front, without a
// tree node made and freed per packet as a std::map would.
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
        if (first_ == r_.size() || r_.back().second <= s) return s;   // idle from s on
        return gap_among(s, ser, min_end);
    }

    // Takes [start, end), which overlaps no reservation.
    VRDMASIM_FORCE_INLINE void reserve(sc_core::sc_time start, sc_core::sc_time end) {
        if (first_ == r_.size() || r_.back().first < start) r_.emplace_back(start, end);
        else insert(start, end);
    }

    std::size_t size() const { return r_.size() - first_; }

private:
    std::vector<std::pair<sc_core::sc_time, sc_core::sc_time>> r_;
    std::size_t first_ = 0;

    void compact();
    void insert(sc_core::sc_time start, sc_core::sc_time end);
    sc_core::sc_time gap_among(sc_core::sc_time s, sc_core::sc_time ser, sc_core::sc_time min_end) const;
};

}   // namespace vrdmasim
