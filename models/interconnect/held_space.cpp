#include "models/interconnect/held_space.hpp"

#include <iterator>

#include "src/core/sim_now.hpp"

namespace vrdmasim {
using sc_core::sc_time;

void HeldSpace::Times::grow() {
    // The kept entries to the front, into an array at least four times as
    // large as they are (doubled if need be): the next move is as many
    // appends away as three times what it moves. The sums before each
    // entry stay as they are: differences of them are what is read, exact
    // in unsigned arithmetic even past a wrap.
    const std::size_t kept = end_ - first_;
    if (cap_ == 0 || kept * 4 > cap_) {
        const std::size_t cap = std::max<std::size_t>(16, 2 * cap_);
        std::vector<Entry> bigger(cap + 1);
        std::copy(e_ + first_, e_ + end_, bigger.begin());
        buf_.swap(bigger);
        e_ = buf_.data();
        cap_ = cap;
    } else {
        std::copy(e_ + first_, e_ + end_, e_);
    }
    end_ = kept;
    e_[end_].before = total_;
    for (std::size_t& h : hint_) h = h > first_ ? h - first_ : 0;
    first_ = 0;
}

std::size_t HeldSpace::Times::insert(sc_time t, unsigned flits) {
    if (end_ == cap_) grow();
    // Sorted, ties in the order added: from the back, moving each later
    // entry up one as it goes, with this entry's flits before it (a few:
    // it is usually near the back).
    // (The time in a register: sc_time, copied by a constructor of its
    // own, comes by reference, and each entry's store would reload it.)
    Entry* const e = e_;
    const sc_dt::uint64 v = t.value();
    const std::size_t first = first_;
    std::size_t at = end_;
    while (at > first && v < e[at - 1].t.value()) {
        e[at] = e[at - 1];
        e[at].before += flits;
        --at;
    }
    e[at] = Entry{t, at == end_ ? total_ : e[at + 1].before - flits, 0};
    ++end_;
    total_ += flits;
    e[end_].before = total_;
    return at;
}

std::size_t HeldSpace::Times::search(std::size_t lo, std::size_t hi, sc_time t) const {
    // A few steps from the hint (hi is after t): further, a binary search.
    const Entry* const e = e_;
    if (hi - lo <= 8) {
        while (lo < hi && !(t < e[lo].t)) ++lo;
        return lo;
    }
    return static_cast<std::size_t>(
        std::upper_bound(e + lo, e + hi, t, [](sc_time v, const Entry& x) { return v < x.t; }) - e);
}

// A start at or before the last one (rare: a packet that overtakes others,
// or starts with one): it is held over the later starts before its
// freeing, whose held space grows by its flits. (At an earlier start at
// the same time it counts as a later one: not there.)
void HeldSpace::add_start(sc_time in, sc_time freed, unsigned flits) {
    const std::size_t at = in_.insert(in, flits);
    for (std::size_t k = at + 1; k < in_.end() && in_.time(k) < freed; ++k) in_.held(k) += flits;
    // Held at it: freed after it (this packet included), less started
    // after it.
    in_.held(at) = freed_.after(in, kStart) - in_.after_index(at + 1);
}

// first_fitting (held_space.hpp, which tries the next freeing inline; this
// from there on): the first freeing from index i on at which at most
// `room` is held, no start from next_start on holding more, and
// next_start the first start after every freeing from i on before it. Before that start, what is held
// at a freeing is what is freed after it less the flits of next_start and
// those after it, a constant: the first freeing whose later ones sum to at
// most `room` plus those is the answer, a walk on the sums kept with the
// freeings (no start searched per freeing). From that start on, what is held
// is at most what its start holds (it falls between starts), within
// `room`: a freeing there fits, and so does the weaker test. `most`: room
// plus those flits.
sc_time HeldSpace::first_fitting_after(std::size_t i, unsigned most, Cursor& c) const {
    const std::size_t n = freed_.end();
    if (i >= n) return max_sim_time();   // not reached: nothing is held after the last
    // The first y > i from which at most `most` is freed (the end: 0): past
    // the freeing whose time it is. Often the next; further (a packet
    // waiting behind tens of freeings), by doubling steps, then halving.
    std::size_t y = i + 1;
    if (freed_.after_index(y) > most) {
        std::size_t lo = y, hi = y, step = 1;   // after_index(lo) > most
        for (;;) {
            hi = lo + step;
            if (hi >= n) {
                hi = n;
                break;
            }
            if (freed_.after_index(hi) <= most) break;
            lo = hi;
            step *= 2;
        }
        while (hi - lo > 1) {
            const std::size_t mid = lo + (hi - lo) / 2;
            if (freed_.after_index(mid) <= most) hi = mid;
            else lo = mid;
        }
        y = hi;
    }
    const sc_time t = freed_.time(y - 1);
    const std::size_t e = freed_.upper_from(t, y);   // past the packets freed at t too
    c = Cursor{t.value(), e, freed_.after_index(e), version_};
    return t;
}

unsigned HeldSpace::most_at_starts(std::size_t j) const {
    unsigned most = 0;
    for (std::size_t k = j; k < in_.end(); ++k) most = std::max(most, in_.held(k));
    return most;
}

// Of starts at the same time, only the last one's value counts every one
// of them as started; the others' are lower, so the most is unchanged.
unsigned HeldSpace::most_at_shifted(unsigned most, std::size_t j, sc_time until, sc_time shift) const {
    std::size_t f = freed_.upper(in_.time(j) + shift, kArrival);
    for (std::size_t k = j; k < in_.end(); ++k) {
        const sc_time t = in_.time(k) + shift;
        if (!(t < until)) break;
        f = freed_.upper_from(t, f);
        most = std::max(most, freed_.after_index(f) - in_.after_index(k + 1));
    }
    return most;
}

unsigned HeldSpace::swept::held_at(const std::vector<Packet>& v, sc_time t) {
    unsigned n = 0;
    for (const Packet& h : v)
        if (h.in <= t && h.freed > t) n += h.flits;
    return n;
}

unsigned HeldSpace::swept::most_from(const std::vector<Packet>& v, sc_time s) {
    // What is held at s, or at a packet's start after s (what is held only
    // falls between two starts; at equal times the freed space counts first).
    unsigned most = held_at(v, s);
    for (const Packet& a : v)
        if (a.in > s && a.freed > s) most = std::max(most, held_at(v, a.in));
    return most;
}

sc_time HeldSpace::swept::fits_from(const std::vector<Packet>& v, sc_time s, unsigned flits, unsigned capacity) {
    // most_from never grows with the time: the earliest of s and the times
    // space is freed after it at which the packet fits, in time order
    // (nothing is held after the last).
    sc_time t = s;
    for (;;) {
        if (most_from(v, t) + flits <= capacity) return t;
        bool any = false;
        sc_time next;
        for (const Packet& h : v)
            if (h.freed > t && (!any || h.freed < next)) {
                next = h.freed;
                any = true;
            }
        if (!any) return t;   // not reached: nothing is held after the last
        t = next;
    }
}

unsigned HeldSpace::swept::most_during(const std::vector<Packet>& v, sc_time head, sc_time until, unsigned flits) {
    // What is held at the head, or at an arrival before `until` (departures
    // only lower it; at equal times the freed space counts first).
    unsigned most = held_at(v, head);
    for (const Packet& a : v)
        if (a.in > head && a.in < until) most = std::max(most, held_at(v, a.in));
    return most + flits;
}

}   // namespace vrdmasim
