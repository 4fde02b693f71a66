#include "models/interconnect/held_space.hpp"

#include "src/core/sim_now.hpp"

namespace vrdmasim {

using sc_core::sc_time;

void HeldSpace::Times::compact() {
    // The sums before each entry stay as they are: differences of them are
    // what is read, exact in unsigned arithmetic even past a wrap.
    t_.erase(t_.begin(), t_.begin() + static_cast<std::ptrdiff_t>(first_));
    before_.erase(before_.begin(), before_.begin() + static_cast<std::ptrdiff_t>(first_));
    hint_ = hint_ > first_ ? hint_ - first_ : 0;
    first_ = 0;
}

void HeldSpace::Times::insert(sc_time t, unsigned flits) {
    // Sorted, ties in the order added: from the back.
    std::size_t at = t_.size();
    while (at > first_ && t_[at - 1] > t) --at;
    const unsigned before = before_[at];
    t_.insert(t_.begin() + static_cast<std::ptrdiff_t>(at), t);
    before_.insert(before_.begin() + static_cast<std::ptrdiff_t>(at), before);
    for (std::size_t i = at + 1; i < before_.size(); ++i) before_[i] += flits;
    total_ += flits;
}

// held(t) at the start in_[k], t = in_.time(k): the starts after it are
// those from k + 1 on (of starts at the same time, only the last one's
// value is held(t); the others' are lower, so the most is unchanged). The
// starts are walked in time order, and the freeings after each with them.
unsigned HeldSpace::most_from_starts(sc_time s, std::size_t j) const {
    std::size_t f = freed_.upper(s);
    unsigned most = freed_.after_index(f) - in_.after_index(j);
    for (std::size_t k = j; k < in_.end(); ++k) {
        f = freed_.upper_from(in_.time(k), f);
        most = std::max(most, freed_.after_index(f) - in_.after_index(k + 1));
    }
    return most;
}

unsigned HeldSpace::most_at_starts(std::size_t j, sc_time until) const {
    unsigned most = 0;
    std::size_t f = freed_.upper(in_.time(j));
    for (std::size_t k = j; k < in_.end() && in_.time(k) < until; ++k) {
        f = freed_.upper_from(in_.time(k), f);
        most = std::max(most, freed_.after_index(f) - in_.after_index(k + 1));
    }
    return most;
}

sc_time HeldSpace::first_freed_leaving(std::size_t i, unsigned room) const {
    // Nothing starts after these times: what is held after a freeing is
    // the flits freed later.
    while (i < freed_.end()) {
        const sc_time t = freed_.time(i);
        const std::size_t j = freed_.upper_from(t, i + 1);   // past the packets freed at t too
        if (freed_.after_index(j) <= room) return t;
        i = j;
    }
    return max_sim_time();   // not reached: nothing is held after the last
}

sc_time HeldSpace::fits_with_starts(sc_time s, unsigned room) const {
    // A time t fits when at most `room` is held at t and at every start
    // after it. So first the last start after s at which more is held
    // (walked from the end back, with the freeings after each: usually the
    // last start or the one before); the answer is s if there is none and
    // s itself fits, else the first freeing after that start (after s) at
    // which at most `room` is held.
    const std::size_t j = in_.upper(s);
    std::size_t k = in_.end(), f = freed_.end();
    bool over = false;
    while (k > j) {
        --k;
        const sc_time t = in_.time(k);
        while (f > freed_.begin() && freed_.time(f - 1) > t) --f;
        // Of starts at one time the last is walked first, and it alone
        // counts every one of them as started.
        if (freed_.after_index(f) - in_.after_index(k + 1) > room) {
            over = true;
            break;
        }
    }
    std::size_t i, next_start;
    if (!over) {
        i = freed_.upper(s);
        if (freed_.after_index(i) - in_.after_index(j) <= room) return s;
        next_start = j;
    } else {
        i = freed_.upper_from(in_.time(k), f);
        next_start = k + 1;
    }
    while (i < freed_.end()) {
        const sc_time t = freed_.time(i);
        const std::size_t e = freed_.upper_from(t, i + 1);   // past the packets freed at t too
        next_start = in_.upper_from(t, next_start);
        if (freed_.after_index(e) - in_.after_index(next_start) <= room) return t;
        i = e;
    }
    return max_sim_time();   // not reached: nothing is held after the last
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
