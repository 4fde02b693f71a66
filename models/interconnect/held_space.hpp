// HeldSpace: how many flits of an input buffer are held over time, as
// time-ordered links count their credits and routers measure their inputs
// (README.md "In time order"). Each packet holds `flits` of the
// buffer from `in` (its start on the link, or its head's arrival at the
// router) until `freed` (its tail has left the buffer): the interval
// [in, freed). Calls come out of time order (a packet reserving after
// another may start before it, or be freed before it), so what the buffer
// holds at a time is a function of every packet counted, not a running
// count.
//
// What is held at t is the flits freed after t less the flits that start
// after t (a packet that starts after t is freed after it too):
//     held(t) = freed_after(t) - in_after(t).
// Both are sums over a list sorted by time (the packets' freeing times, and
// their starts), each kept with the flits before each entry, so either is
// one search; the lists are appended to (a new packet usually starts and is
// freed last) and forgotten from the front. What is held from a time s on
// can only rise at a start after s: the most held from s on is held(s) or
// held at one of those starts: none while packets come in time order, a
// few under congestion (the packets queued ahead of a new one: on a 256-MPSoC
// halo, 8 on average when there are any). Every answer is exact, the same as
// sweeping every packet (HeldSpace::swept, which the tests compare it with).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include <systemc>

#include "src/core/force_inline.hpp"

namespace vrdmasim {

class HeldSpace {
public:
    // Forgets what no query from `now` on needs.
    VRDMASIM_FORCE_INLINE void forget(sc_core::sc_time now) {
        freed_.forget(now);   // held(t >= now) counts no packet freed by now...
        in_.forget(now);   // ...and no start by now among those after t
    }

    // Counts `flits` held over [in, freed) (in < freed).
    VRDMASIM_FORCE_INLINE void add(sc_core::sc_time in, sc_core::sc_time freed, unsigned flits) {
        if (!(in < freed)) return;   // holds nothing
        freed_.add(freed, flits);
        in_.add(in, flits);
    }

    // Flits held at t.
    VRDMASIM_FORCE_INLINE unsigned held_at(sc_core::sc_time t) const { return freed_.after(t) - in_.after(t); }

    // Most flits held at any time t >= s.
    VRDMASIM_FORCE_INLINE unsigned most_from(sc_core::sc_time s) const {
        const std::size_t j = in_.upper(s);
        if (j == in_.end()) return freed_.after(s);   // nothing starts after s: it only falls
        return most_from_starts(s, j);
    }
    // The earliest time >= s from which `flits` more fit in `capacity` for
    // good (a packet's credits: most_from(t) + flits <= capacity): s, or the
    // first freeing after it from which they fit (the last always does).
    VRDMASIM_FORCE_INLINE sc_core::sc_time fits_from(sc_core::sc_time s, unsigned flits, unsigned capacity) const {
        const unsigned room = capacity - flits;   // callers refuse packets larger than the buffer
        if (in_.upper(s) == in_.end()) {
            std::size_t i = freed_.upper(s);
            if (freed_.after_index(i) <= room) return s;
            return first_freed_leaving(i, room);
        }
        return fits_with_starts(s, room);
    }
    // The most flits held at any time in [head, until), a packet of `flits`
    // held over it included: a router's input buffer while that packet is
    // in it.
    VRDMASIM_FORCE_INLINE unsigned most_during(sc_core::sc_time head, sc_core::sc_time until, unsigned flits) const {
        const std::size_t j = in_.upper(head);
        unsigned most = freed_.after(head) - in_.after_index(j);
        if (j != in_.end() && in_.time(j) < until) most = std::max(most, most_at_starts(j, until));
        return most + flits;
    }

    // Forgets everything.
    void reset() {
        freed_.clear();
        in_.clear();
    }
    // Entries kept (a measure of the cost of a query).
    std::size_t size() const { return freed_.size() + in_.size(); }

    // The definitions, swept over a list of packets: what a HeldSpace of
    // the same packets must answer (its tests compare the two).
    struct Packet {
        sc_core::sc_time in, freed;
        unsigned flits;
    };
    struct swept {
        static unsigned held_at(const std::vector<Packet>& v, sc_core::sc_time t);
        static unsigned most_from(const std::vector<Packet>& v, sc_core::sc_time s);
        static sc_core::sc_time fits_from(const std::vector<Packet>& v, sc_core::sc_time s, unsigned flits,
                                          unsigned capacity);
        static unsigned most_during(const std::vector<Packet>& v, sc_core::sc_time head, sc_core::sc_time until,
                                    unsigned flits);
    };

private:
    // Times, sorted (ties in the order added), each with the flits of the
    // entries before it; from `first` on (the front is forgotten).
    class Times {
    public:
        VRDMASIM_FORCE_INLINE void forget(sc_core::sc_time now) {
            std::size_t f = first_;
            const std::size_t n = t_.size();
            while (f < n && t_[f] <= now) ++f;
            first_ = f;
            if (f == n) clear();
            else if (f >= 8 && f * 2 >= n) compact();   // the dead front: at most half, and few
        }
        VRDMASIM_FORCE_INLINE void add(sc_core::sc_time t, unsigned flits) {
            if (t_.size() == first_ || t_.back() <= t) {
                t_.push_back(t);
                before_.push_back(total_);
                total_ += flits;
            } else {
                insert(t, flits);
            }
        }
        // The first kept entry after t (end(): none), found from where the
        // last search ended: queries come in about time order.
        VRDMASIM_FORCE_INLINE std::size_t upper(sc_core::sc_time t) const {
            const sc_core::sc_time* const b = t_.data();
            const sc_core::sc_time* const lo = b + first_;
            const sc_core::sc_time* const hi = b + t_.size();
            const sc_core::sc_time* p = b + hint_;
            if (p < lo) p = lo;
            if (p > hi) p = hi;
            // A step or two from the last answer; further, a binary search.
            if (p > lo && p[-1] > t) {
                if (p - 1 > lo && p[-2] > t) p = std::upper_bound(lo, p - 2, t);
                else --p;
            } else if (p < hi && *p <= t) {
                if (p + 1 < hi && p[1] <= t) p = std::upper_bound(p + 2, hi, t);
                else ++p;
            }
            hint_ = static_cast<std::size_t>(p - b);
            return hint_;
        }
        // The first entry from i on after t (i: at or before it).
        VRDMASIM_FORCE_INLINE std::size_t upper_from(sc_core::sc_time t, std::size_t i) const {
            while (i < t_.size() && t_[i] <= t) ++i;
            return i;
        }
        std::size_t begin() const { return first_; }
        std::size_t end() const { return t_.size(); }
        sc_core::sc_time time(std::size_t i) const { return t_[i]; }
        // Flits of the entries from i on; after t.
        VRDMASIM_FORCE_INLINE unsigned after_index(std::size_t i) const {
            return i == t_.size() ? 0u : total_ - before_[i];
        }
        VRDMASIM_FORCE_INLINE unsigned after(sc_core::sc_time t) const { return after_index(upper(t)); }
        std::size_t size() const { return t_.size() - first_; }
        void clear() {
            t_.clear();
            before_.clear();
            first_ = hint_ = 0;
            total_ = 0;
        }

    private:
        std::vector<sc_core::sc_time> t_;
        // Per entry, the flits of the entries added before it since the list
        // was last empty (forgotten ones too), modulo 2^32: only differences
        // are read.
        std::vector<unsigned> before_;
        std::size_t first_ = 0;   // t_[first_..] are kept
        mutable std::size_t hint_ = 0;   // where upper() starts looking
        unsigned total_ = 0;   // flits of every entry
        void compact();
        void insert(sc_core::sc_time t, unsigned flits);
    };
    Times freed_, in_;

    unsigned most_from_starts(sc_core::sc_time s, std::size_t j) const;
    unsigned most_at_starts(std::size_t j, sc_core::sc_time until) const;
    sc_core::sc_time first_freed_leaving(std::size_t i, unsigned room) const;
    sc_core::sc_time fits_with_starts(sc_core::sc_time s, unsigned room) const;
};

}   // namespace vrdmasim
