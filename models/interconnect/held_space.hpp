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
// freed last) and forgotten from the front, in arrays that move only when
// full.
//
// What is held from a time s on is at most what is freed after s, which
// answers a credit query at once when the buffer is far from full. Beyond
// that it can only rise at a start after s, so each start is kept with
// what is held at it, counted when it is added (usually the last start:
// a packet that starts later does not change it, and one that starts
// earlier, rare, adds to those it is held over). The most held from s on
// is then held(s) or the most at a start after s, and the last start at
// which more than a room is held is found walking back from the last
// start: no sum is recomputed, and the starts after s are those of the
// packets queued ahead. A link's queries for one packet (its credits from
// its head, the most held from its start, its start's count when it is
// added) share a Cursor: where the last left off in the freeings. Every
// answer is exact, the same as sweeping every packet (HeldSpace::swept,
// which the tests compare it with).
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
        if (now == forgot_at_ && !exact_) return;   // (what is added meanwhile is later)
        forgot_at_ = now;
        freed_.forget(now);   // held(t >= now) counts no packet freed by now...
        in_.forget(now);   // ...and no start by now among those after t
    }
    // The same, keeping the starts after now less `shift`: for a reader
    // that counts each packet from `shift` after its start
    // (most_during_shifted).
    VRDMASIM_FORCE_INLINE void forget(sc_core::sc_time now, sc_core::sc_time shift) {
        if (now == forgot_at_ && !exact_) return;
        forgot_at_ = now;
        freed_.forget(now);
        if (shift <= now) in_.forget(now - shift);
    }

    // Where a link's queries for one packet left off in the freeings: the
    // first after `t` is at `i`, and `after` flits are freed after t; valid
    // while nothing is added (`version`). fits_from(head) sets it, and
    // most_from(start) and add(start) read it: a packet starts at its head
    // or a few freeings later.
    struct Cursor {   // (not initialised: set by fits_from, or none())
        sc_dt::uint64 t;   // sc_time::value()
        std::size_t i;
        unsigned after;
        std::uint64_t version;
        static constexpr Cursor none() { return Cursor{0, 0, 0, ~std::uint64_t{0}}; }
    };

    // Counts `flits` held over [in, freed) (in < freed).
    VRDMASIM_FORCE_INLINE void add(sc_core::sc_time in, sc_core::sc_time freed, unsigned flits) {
        add(in, freed, flits, Cursor::none());
    }
    // The same, `c` where the queries of this packet left off.
    VRDMASIM_FORCE_INLINE void add(sc_core::sc_time in, sc_core::sc_time freed, unsigned flits, const Cursor& c) {
        if (!(in < freed)) return;   // holds nothing
        // The last start: held at it is every packet freed after it (this
        // one too), and what is held at every earlier one is unchanged.
        const bool last = in_.empty() || in_.back_time() < in;
        unsigned at_in = 0;
        if (last) at_in = (c.version == version_ && c.t == in.value() ? c.after : freed_.after(in, kStart)) + flits;
        freed_.add(freed, flits);
        ++version_;
        if (last) in_.push_back(in, flits, at_in);
        else add_start(in, freed, flits);
    }

    // Forgets at every call, even at the same present: for a link whose
    // calls may wait (a system with cut links), as WireCalendar's
    // keep_every_reservation().
    void forget_every_time() { exact_ = true; }

    // Flits held at t.
    VRDMASIM_FORCE_INLINE unsigned held_at(sc_core::sc_time t) const {
        return freed_.after(t, kHead) - in_.after(t, kHead);
    }
    // Flits of the packets kept: at least what is held at any time from
    // the present on.
    VRDMASIM_FORCE_INLINE unsigned kept() const { return freed_.after_index(freed_.begin()); }
    // At least what is held at any time after s: what a cursor at or
    // before s left by its owner (a link, for its far router: leave()) found
    // freed after its time, if nothing was added since; else kept().
    VRDMASIM_FORCE_INLINE unsigned bound_after(sc_core::sc_time s) const {
        return left_.version == version_ && left_.t <= s.value() ? left_.after : kept();
    }
    VRDMASIM_FORCE_INLINE void leave(const Cursor& c) const { left_ = c; }

    // Most flits held at any time t >= s.
    VRDMASIM_FORCE_INLINE unsigned most_from(sc_core::sc_time s) const {
        Cursor c = Cursor::none();
        return most_from(s, c);
    }
    // The same, from where `c` left off (at or before s), and leaving it at s.
    VRDMASIM_FORCE_INLINE unsigned most_from(sc_core::sc_time s, Cursor& c) const {
        const std::size_t i =
            c.version == version_ && c.t <= s.value() ? freed_.upper_from(s, c.i) : freed_.upper(s, kStart);
        c = Cursor{s.value(), i, freed_.after_index(i), version_};
        const std::size_t j = in_.upper(s, kStart);
        const unsigned h = c.after - in_.after_index(j);
        if (j == in_.end()) return h;   // nothing starts after s: it only falls
        return std::max(h, most_at_starts(j));
    }
    // The earliest time >= s from which `flits` more fit in `capacity` for
    // good (a packet's credits: most_from(t) + flits <= capacity): s, or the
    // first freeing after it from which they fit (the last always does).
    VRDMASIM_FORCE_INLINE sc_core::sc_time fits_from(sc_core::sc_time s, unsigned flits, unsigned capacity) const {
        Cursor c;
        return fits_from(s, flits, capacity, c);
    }
    // The same, leaving `c` at the answer (c.after: at least most_from of
    // any later time).
    VRDMASIM_FORCE_INLINE sc_core::sc_time fits_from(sc_core::sc_time s, unsigned flits, unsigned capacity,
                                                     Cursor& c) const {
        const unsigned room = capacity - flits;   // callers refuse packets larger than the buffer
        const std::size_t i = freed_.upper(s, kHead);
        const unsigned freed_after = freed_.after_index(i);
        c = Cursor{s.value(), i, freed_after, version_};
        if (freed_after <= room) return s;   // not even every packet freed after s is over it
        // The last start after s at which more than `room` is held, walking
        // back over the starts after s (no search for the first of them:
        // the walk ends there): nothing fits before a freeing after it.
        const std::size_t b = in_.begin();
        std::size_t k = in_.end();
        while (k > b && s < in_.time(k - 1) && in_.held(k - 1) <= room) --k;
        if (k > b && s < in_.time(k - 1)) return first_fitting(freed_.upper(in_.time(k - 1), kWait), k, room, c);
        // No start after s holds more than `room` (k: the first after s):
        // s, if it fits then.
        if (freed_after - in_.after_index(k) <= room) return s;
        return first_fitting(i, k, room, c);
    }
    // The most flits held at any time in [head, until), a packet of `flits`
    // held over it included: a router's input buffer while that packet is
    // in it.
    VRDMASIM_FORCE_INLINE unsigned most_during(sc_core::sc_time head, sc_core::sc_time until, unsigned flits) const {
        const std::size_t j = in_.upper(head, kArrival);
        unsigned most = freed_.after(head, kArrival) - in_.after_index(j);
        for (std::size_t k = j; k < in_.end() && in_.time(k) < until; ++k) most = std::max(most, in_.held(k));
        return most + flits;
    }
    // most_during, each packet counted from `shift` after its `in` (and
    // freed at least then): a router's input buffer, which a packet enters
    // a flit and the wire's latency after its start on the link whose
    // credits these are (forgotten with forget(now, shift)).
    VRDMASIM_FORCE_INLINE unsigned most_during_shifted(sc_core::sc_time head, sc_core::sc_time until,
                                                       sc_core::sc_time shift, unsigned flits) const {
        const std::size_t j = head < shift ? in_.begin() : in_.upper(head - shift, kArrival);
        const unsigned most = freed_.after(head, kArrival) - in_.after_index(j);
        if (j == in_.end() || !(in_.time(j) + shift < until)) return most + flits;
        return most_at_shifted(most, j, until, shift) + flits;
    }

    // Forgets everything.
    void reset() {
        freed_.clear();
        in_.clear();
        forgot_at_ = sc_core::SC_ZERO_TIME;
        ++version_;
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
    // The kinds of time searched for (Times::upper's slots): a packet's
    // head, its start, its arrival at the far end, and the last start a
    // credit query waits for (apart from the heads: it is far after them,
    // and would send the next head's search from there).
    static constexpr int kHead = 0, kStart = 1, kArrival = 2, kWait = 3, kSlots = 4;

    // Times, sorted (ties in the order added), each with the flits of the
    // entries before it (and, for the starts, what is held at it), in one
    // array from `first` to `end`: the front is forgotten by moving
    // `first`, and the array is compacted only when it is full, so a
    // packet costs no allocation and no move once the array has grown to
    // the most the buffer holds.
    class Times {
    public:
        struct Entry {
            sc_core::sc_time t;
            // The flits of the entries added before it since the list was
            // made (forgotten ones too), modulo 2^32: only differences are
            // read.
            unsigned before;
            // The starts: the flits held at t, those of later entries at
            // the same time not counted (so the last of them has them all).
            unsigned held;
        };

        Times() = default;
        Times(Times&& o) noexcept { take(o); }
        Times& operator=(Times&& o) noexcept {
            take(o);
            return *this;
        }
        Times(const Times& o) { copy(o); }
        Times& operator=(const Times& o) {
            if (this != &o) copy(o);
            return *this;
        }

        // Forgets the entries at or before `now`.
        VRDMASIM_FORCE_INLINE void forget(sc_core::sc_time now) {
            std::size_t f = first_;
            const std::size_t n = end_;
            if (f == n || e_[f].t > now) return;
            do ++f;
            while (f < n && e_[f].t <= now);
            if (f == n) clear();
            else first_ = f;
        }
        // Appends (t at or after every entry).
        VRDMASIM_FORCE_INLINE void push_back(sc_core::sc_time t, unsigned flits, unsigned held = 0) {
            if (end_ == cap_) grow();
            Entry* const e = e_ + end_;
            e[0] = Entry{t, total_, held};
            total_ += flits;
            e[1].before = total_;
            ++end_;
        }
        VRDMASIM_FORCE_INLINE void add(sc_core::sc_time t, unsigned flits) {
            if (end_ == first_ || e_[end_ - 1].t <= t) push_back(t, flits);
            else insert(t, flits);
        }
        // Inserts after the entries at or before t; returns its index.
        std::size_t insert(sc_core::sc_time t, unsigned flits);

        // The first kept entry after t (end(): none). Starts are usually
        // all before t; otherwise the search begins where the last one
        // for the same kind of time (`slot`: a packet's head, its start,
        // its arrival at the far end) ended, as those follow each other
        // in about time order.
        VRDMASIM_FORCE_INLINE std::size_t upper(sc_core::sc_time t, int slot) const {
            const Entry* const e = e_;
            const std::size_t lo = first_, hi = end_;
            if (lo == hi || e[hi - 1].t <= t) return hi;
            // e[hi - 1] is after t: the answer is in [lo, hi - 1].
            std::size_t p = hint_[slot];
            if (p < lo) p = lo;
            else if (p > hi - 1) p = hi - 1;
            if (!(t < e[p].t)) {
                ++p;   // at most hi - 1
                if (!(t < e[p].t)) p = search(p + 1, hi - 1, t);
            } else if (p > lo && t < e[p - 1].t) {
                --p;
                if (p > lo && t < e[p - 1].t) p = search(lo, p - 1, t);
            }
            hint_[slot] = p;
            return p;
        }
        // The first entry from i on after t (i: at or before it).
        VRDMASIM_FORCE_INLINE std::size_t upper_from(sc_core::sc_time t, std::size_t i) const {
            while (i < end_ && e_[i].t <= t) ++i;
            return i;
        }
        bool empty() const { return first_ == end_; }
        std::size_t begin() const { return first_; }
        std::size_t end() const { return end_; }
        sc_core::sc_time time(std::size_t i) const { return e_[i].t; }
        sc_core::sc_time back_time() const { return e_[end_ - 1].t; }
        unsigned held(std::size_t i) const { return e_[i].held; }
        unsigned& held(std::size_t i) { return e_[i].held; }
        // Flits of the entries from i on (the end entry's: none); after t.
        VRDMASIM_FORCE_INLINE unsigned after_index(std::size_t i) const { return total_ - e_[i].before; }
        VRDMASIM_FORCE_INLINE unsigned after(sc_core::sc_time t, int slot) const { return after_index(upper(t, slot)); }
        std::size_t size() const { return end_ - first_; }
        void clear() {
            first_ = end_ = 0;
            e_[0].before = total_;
        }

    private:
        // The entries first_..end_ - 1 of buf_, then an end entry whose
        // `before` is the total (so after_index needs no test for the end);
        // room for cap_ entries and the end one. Before the first, e_ is
        // an empty list's end entry, shared (its `before` stays 0).
        std::vector<Entry> buf_;
        static inline Entry empty_end_{};
        Entry* e_ = &empty_end_;
        std::size_t cap_ = 0;
        std::size_t first_ = 0, end_ = 0;
        mutable std::size_t hint_[kSlots] = {};   // where upper() starts looking, per slot
        unsigned total_ = 0;   // flits of every entry
        // Makes room for one more at the end: moves the kept entries to the
        // front (of a larger array if they fill more than a quarter of
        // this one).
        void grow();
        // The first entry in [lo, hi] after t (e_[hi] is).
        std::size_t search(std::size_t lo, std::size_t hi, sc_core::sc_time t) const;
        // Everything but the array from `o`, once buf_ holds o's entries.
        void fields_from(const Times& o) {
            e_ = o.cap_ == 0 ? &empty_end_ : buf_.data();
            cap_ = o.cap_;
            first_ = o.first_;
            end_ = o.end_;
            total_ = o.total_;
            for (int k = 0; k < kSlots; ++k) hint_[k] = o.hint_[k];
        }
        void copy(const Times& o) {
            buf_ = o.buf_;
            fields_from(o);
        }
        void take(Times& o) {
            buf_ = std::move(o.buf_);   // the same array: e_ still points into it
            fields_from(o);
            o.e_ = &empty_end_;
            o.cap_ = o.first_ = o.end_ = 0;
            o.total_ = 0;
        }
    };
    Times freed_, in_;
    // The last forget's present: a call at the same time has nothing more
    // to forget (keeping an entry at or before the present changes no
    // answer from it on).
    sc_core::sc_time forgot_at_;
    bool exact_ = false;   // forget_every_time()
    std::uint64_t version_ = 0;   // packets added (Cursor)
    mutable Cursor left_ = Cursor::none();   // leave(), for bound_after()

    void add_start(sc_core::sc_time in, sc_core::sc_time freed, unsigned flits);
    VRDMASIM_FORCE_INLINE sc_core::sc_time first_fitting(std::size_t i, std::size_t next_start, unsigned room,
                                                         Cursor& c) const {
        const unsigned most = room + in_.after_index(next_start);
        if (i < freed_.end() && freed_.after_index(i + 1) <= most) {   // the next freeing (usually)
            const sc_core::sc_time t = freed_.time(i);
            const std::size_t e = freed_.upper_from(t, i + 1);   // past the packets freed at t too
            c = Cursor{t.value(), e, freed_.after_index(e), version_};
            return t;
        }
        return first_fitting_after(i, most, c);
    }
    sc_core::sc_time first_fitting_after(std::size_t i, unsigned most, Cursor& c) const;
    unsigned most_at_starts(std::size_t j) const;
    unsigned most_at_shifted(unsigned most, std::size_t j, sc_core::sc_time until, sc_core::sc_time shift) const;
};

}   // namespace vrdmasim
