// HopQueue: the kernel's queue of hop events for links served in exact time
// order (README.md, *Exact time order*). A packet's arrival at a link, the
// wire coming free, a credit coming back: each is an event at its own
// simulated time, and events are served by one method process, in the order
// of (time, key, serial), once nothing else is runnable at their time. So
// every event a process posts for a time t (a sender running ahead of the
// kernel posts for its own local time, never before the kernel's) is in the
// queue before any event at t is served, and two events at the same time
// are served in an order the model gives them (their key: the kind of event,
// the link, the VC; then the packet's serial), never in the order in which
// the host happened to run their posters.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

#include <systemc>
#include <tlm>

#include "models/interconnect/exanet_packet.hpp"
#include "src/core/force_inline.hpp"
#include "src/core/instant_end.hpp"

namespace vrdmasim {

class HopQueue;
class HopCutFar;
class Link;

// A packet in flight in exact time order: its payload's bytes and its
// extension, copied in by the network interface that sent it and owned by
// the kernel's HopQueue until the one that takes it has returned. It moves
// from hop to hop without being copied again.
struct alignas(64) HopPacket {
    HopPacket();
    ~HopPacket();
    HopPacket(const HopPacket&) = delete;
    HopPacket& operator=(const HopPacket&) = delete;
    // What a hop reads, first, and its packet's header and times right
    // after (`own`): the arbitration, the routing and the queues touch one
    // or two cache lines of a packet, not three or four in three places
    // (at 1,296 MPSoCs a hop's loads of its packet missed the caches most).
    // Its identity among same-time events: the injection link's number (high
    // 24 bits), its queue there (8) and the queue's count (32).
    std::uint64_t serial = 0;
    sc_core::sc_time ready;   // it may start on the link it waits at from then
    unsigned flits = 0;
    // What holds its space until its tail leaves the link it waits at: the
    // far buffer of link `up` (VC up_vc; input `in_port` of up's far
    // router); that of a cut link whose near end is reached by messages
    // (`cut`, its far end here: hop_cut.hpp); or (both null) queue `queue`
    // of the network interface.
    unsigned up_vc = 0;
    Link* up = nullptr;
    HopCutFar* cut = nullptr;
    int in_port = -1;
    unsigned queue = 0;
    // Its arrival at the router after `up` was made at its start there
    // (Link::arrive_ahead), and the router's input has yet to count it
    // (Link::settle_ahead).
    bool held_due = false;
    // The VC of the far buffer it takes on the link it waits at (set as
    // it joins that link's queue: Link::vc_of reads it there, not through
    // `pkt`).
    std::uint8_t vc = 0;
    ExanetPacket* pkt;   // `own`: gp's extension
    ExanetPacket own;
    tlm::tlm_generic_payload gp;   // data pointing at `data`, `pkt` its extension
    std::vector<unsigned char> data;
    // Fills it from a sender's payload (bytes copied).
    void take(const tlm::tlm_generic_payload& from, const ExanetPacket& p);
};

// What an event is served by: a link or a router (or a test).
class HopHandler {
public:
    virtual ~HopHandler() = default;
    virtual void on_hop_event(HopQueue& q, std::uint64_t key, void* what, std::uint32_t arg) = 0;

protected:
    HopHandler() = default;
    HopHandler(const HopHandler&) = default;
    HopHandler& operator=(const HopHandler&) = default;
};

class HopQueue : public sc_core::sc_module {
public:
    // 32 bytes: two to a cache line's half (the calendar copies each in
    // and out; its handler is the one its key's link serves with,
    // serve_link()).
    struct Event {
        sc_core::sc_time t;   // absolute
        std::uint64_t key;   // the model's order among events at the same time (lower first): key()
        std::uint64_t serial;   // then this (a packet's identity: its NI and its count there)
        void* what;   // the handler's own (a packet)
    };
    static_assert(sizeof(Event) == 32, "an event in 32 bytes");

    explicit HopQueue(sc_core::sc_module_name name);

    // The kinds of event, in their order among events at the same time: a
    // packet kept for its source is taken into its network interface's
    // queue (first, as its sender's thread, woken then, ran before the
    // queue's other events of its time: Link::admit), a packet is delivered to a network interface (served only at the
    // kernel's time, before anything else of that time, as a delivery
    // thread would have been), a packet arrives, a link's wire is free (its
    // serving then sees every arrival of that time; credits are not
    // events: Link::give_credit).
    enum Kind : std::uint64_t { Admit = 0, Deliver = 1, Arrival = 2, Serve = 3 };
    // An event's key: its kind, then the link's number, then `sub` (a VC;
    // its handler's `arg`).
    static std::uint64_t key(Kind k, std::uint32_t link, std::uint32_t sub) {
        return (std::uint64_t(k) << 62) | (std::uint64_t(link) << 24) | (sub & 0xffffffu);
    }
    static std::uint32_t link_of(std::uint64_t key) { return static_cast<std::uint32_t>((key >> 24) & 0xffffffffu); }
    // Events whose key names link `number` are served by the link itself
    // (once: Link::use_hops; by Link::on_hop_event, inline in the serving
    // loop, serve_events) or by `h` (a cut link's far end,
    // HopCutFar::attach; a test's), through its virtual call.
    void serve_link(std::uint32_t number, Link& link) { serve_link(number, nullptr, &link); }
    void serve_link(std::uint32_t number, HopHandler& h) { serve_link(number, &h, nullptr); }
    bool serves(std::uint32_t number) const {
        return number < handlers_.size() && (handlers_[number] || links_of_[number]);
    }
    // The time of the event being served. The queue serves ahead of the
    // kernel: every event before the next time another process has
    // something to do (nothing else can post for those times), so a
    // handler reads this, not sc_time_stamp(), and whatever it makes
    // another process see (an event it notifies) it notifies for this time,
    // and says so with woke().
    sc_core::sc_time time() const { return current_; }
    // A handler notified a process for `at`: events from then on wait for it.
    void woke(sc_core::sc_time at) {
        if (at < horizon_) horizon_ = at;
        if (at < plain_) plain_ = at;
    }
    // The same for a thread that calls resume() once it runs (a full
    // queue's sender: Link::Hops::wait_for_room). A queue that stops for it
    // first is woken by it, a delta, instead of by a timed notification of
    // its own at its next event (one more entry in the kernel's heap of
    // timed notifications for every such stop: one a packet a sender sends
    // while its queue is full).
    void woke_resuming(sc_core::sc_time at) {
        if (at < horizon_) horizon_ = at;
        if (at < resuming_) resuming_ = at;
    }
    // The thread woken through woke_resuming() runs: a queue that stopped
    // for it serves again from the present, ahead of the kernel up to the
    // next activity of another process as ever (nothing else can post for
    // those times), once nothing else is pending now.
    void resume() {
        if (!await_resume_) return;
        await_resume_ = false;
        resumed_ = true;
        const sc_core::sc_time now = sc_core::sc_time_stamp();
        arm(now, now);
    }
    // A link's number among the events' keys, given by whoever builds the
    // links from the model (System: a node's injection and ejection links,
    // then the links between nodes, in the topology's order: the same on
    // every rank of a partitioned run); a test may take them in the order
    // it asks (enrol()).
    std::uint32_t enrol() { return links_++; }
    // Serves nothing at or after `t` until told otherwise: a partitioned
    // run's window ends there, and messages from other ranks may still come
    // for `t` and later (src/sim/parallel/windows.hpp). The kernel, stopped at the
    // window's end, knows no event there: the queue must not serve ahead
    // past it. max_sim_time(): no limit (one process).
    void serve_before(sc_core::sc_time t) { limit_ = t; }
    // Whether an event for the present is still queued (a handler serves
    // at once only when none is: each link's serving at a time then sees
    // every event of that time).
    bool more_at(sc_core::sc_time now) const { return count_ > 0 && front().t == now; }
    // Whether an event posted now for `t`, the first kind of its time,
    // would be the next this method serves: it serves at `t` and will go
    // on (a handler may then do that event's work itself, at the end of
    // its own, in the same order: Link::serve's admissions).
    bool serves_next_at(sc_core::sc_time t) const { return serving_ && t == current_ && t < horizon_; }

    // Who sends while a link delivers a packet to its network interface
    // (Link::deliver, in this queue's method or in the link's delivery
    // thread): the delivery lane, one sender whichever process runs it, so
    // that what it sends (an ACK, a read's reply, a NACK) queues at the
    // interface's link as one sending process's packets do (Link::inject),
    // never held back for room there, since a delivery waiting for that
    // room would stop its link from draining.
    struct Sender {
        const void* id;   // the lane
        std::string name;   // its delivery thread's full name: the queue's order (a hash) and the trace's
    };
    const Sender* acting() const { return acting_; }
    // A lane's delivery thread, which delivers for it where the interface
    // may wait (and so cannot act as it across a wait: it is known as it
    // instead).
    void add_receiver(const sc_core::sc_object* thread, const Sender& s) { receivers_[thread] = &s; }
    const Sender* receiver(const sc_core::sc_object* p) const {
        const auto it = receivers_.find(p);
        return it == receivers_.end() ? nullptr : it->second;
    }
    class ActingAs {
    public:
        ActingAs(HopQueue& q, const Sender& s) : q_(q), before_(q.acting_) { q.acting_ = &s; }
        ~ActingAs() { q_.acting_ = before_; }
        ActingAs(const ActingAs&) = delete;
        ActingAs& operator=(const ActingAs&) = delete;

    private:
        HopQueue& q_;
        const Sender* before_;
    };
    // After a handler called into a model that may have woken a process
    // (a delivery): serving stops where that process has something to do.
    void recheck();
    // A handler acted at `t` ahead of the kernel for a model outside the
    // network (a delivery): the kernel still reaches `t`, even if nothing
    // else happens then, so that the run does not end before it (the
    // summary's simulated time is the kernel's).
    void reach(sc_core::sc_time t) {
        if (t > reach_) reach_ = t;
    }

    // Packets in flight (HopPacket), from a pool.
    HopPacket& take_packet();
    void give_back(HopPacket& p);
    std::size_t packets_in_flight() const { return pool_.size() - free_.size(); }

    // Queues `e` (e.t at or after the kernel's present: std::logic_error
    // otherwise, which would be a packet served before it was sent).
    void post(const Event& e) {
        // From a handler for its own time or later (the usual case): inline.
        if (serving_ && !(e.t < current_)) {
            push(e);
            return;
        }
        post_outside(e);
    }

    // post() for a Deliver event (Link::arrive), and its handler's word
    // that it is served: the queue is not resumed (resume()) while one is
    // queued.
    void post_delivery(const Event& e) {
        ++delivers_;
        post(e);
    }
    void delivery_served() { --delivers_; }

    std::size_t size() const { return count_; }
    // Events served, and times at which serving waited a delta for other
    // processes still runnable at that time.
    std::uint64_t served() const { return served_; }
    std::uint64_t deferrals() const { return deferrals_; }
    // Times the method ran (each a kernel wake-up).
    std::uint64_t wakes() const { return wakes_; }
    // The calendar's buckets' width now, in ps (its adaptation: tests).
    std::uint64_t bucket_ps() const { return std::uint64_t(1) << shift_; }

private:
    // A calendar of the events (Brown's calendar queue): nearly every event
    // is posted a link's latency or a packet's time ahead of the present,
    // so a ring of kBuckets buckets of 2^shift_ ps each, from the
    // present's, holds them; a bucket's few events are kept in (time, key,
    // serial) order, and a bitmap of the buckets that hold any finds the
    // next. An event beyond the ring waits in a binary heap (`far_`) and is
    // compared with the ring's first when it could be the earliest. The
    // order served is the same as one heap's, whatever the buckets' width.
    // The width follows the events' density, as Brown's resizes: a bucket
    // that holds many events costs sorting (an event posted into it before
    // others already there moves them: `steps_`), one that holds few a
    // search for the next bucket each (`drains_`). Once serving stops after
    // kAdaptEvery events served since it last looked, more than one move an event halves
    // the width (down to 256 ps: a 1,296-MPSoC halo, 6.7 % fewer
    // instructions than at 2,048), under 0.02 with a bucket drained for
    // nearly every event doubles it (up to 16,384 ps: a stream's events,
    // some 100 ns apart, found their next bucket beyond its word of the
    // bitmap at one event in three at 2,048), and the ring is sorted again
    // into the new buckets (rebucket()). The first width is 2,048 ps: a
    // halo's sparse start would leave its dense rounds in buckets too wide
    // for a while. Measured by callgrind (docs/performance.md).
    static constexpr unsigned kWidest = 14, kNarrowest = 8, kFirst = 11;   // 16,384 ps, 256 ps, 2,048 ps
    static constexpr std::uint64_t kAdaptEvery = 4096;
    unsigned shift_ = kFirst;
    std::uint64_t steps_ = 0, drains_ = 0;   // since the last look (adapt())
    std::uint64_t look_at_ = kAdaptEvery, looked_ = 0;   // served_ at the next look and at the last
    void adapt(sc_core::sc_time now);
    void rebucket(unsigned shift, sc_core::sc_time now);
    static constexpr std::uint64_t kBuckets = 4096;   // the ring: at least some 1 us ahead (256 ps buckets)
    static constexpr std::size_t kBucketKeeps = 16;   // events' space a drained bucket keeps
    // A bucket's first event is kept in it (most hold one at a time: its
    // push and pop touch the bucket alone), the rest in `more`, in order
    // from `head`.
    struct Bucket {
        Event first;   // (held > 0)
        std::uint32_t held = 0;   // events in all: first and more's from head
        std::uint32_t head = 0;
        std::vector<Event> more;
    };
    std::vector<Bucket> ring_;
    std::array<std::uint64_t, kBuckets / 64> nonempty_{};   // a bit per bucket (in the object: no pointer to load)
    std::uint64_t words_ = 0;   // a bit per word of nonempty_ that is not 0
    static_assert(kBuckets == 64 * 64, "one word of words_ covers the ring");
    std::uint64_t base_ = 0;   // the present's bucket number: the ring holds base_ .. base_ + kBuckets - 1
    std::uint64_t first_ = 0;   // the first bucket number holding an event (ring_count_ > 0)
    std::size_t ring_count_ = 0, count_ = 0;
    std::vector<Event> far_;   // a binary heap, earliest (t, key, serial) at the front
    std::uint64_t bucket_of(sc_core::sc_time t) const { return t.value() >> shift_; }
    const Event& front() const;   // the earliest event (count_ > 0)
    // Takes the earliest event into `e` if there is one before `horizon`
    // (one look at the calendar, where front() and a pop were two; inline
    // in serve_events(), its one caller).
    bool pop_before(sc_core::sc_time horizon, Event& e);
    // serve()'s loop: every event before the horizon, in order, to its
    // handler (in hop_link.cpp, so that a link's handling is inline in it).
    void serve_events();
    void post_outside(const Event& e);   // post() from outside a handler (or an error)
    // (Inline: every post is one.)
    void push(const Event& e) {
        ++count_;
        const std::uint64_t b = bucket_of(e.t);
        if (b - base_ >= kBuckets) {   // (before base_ too: the difference wraps)
            far_.push_back(e);
            std::push_heap(far_.begin(), far_.end(), Later{});
            return;
        }
        Bucket& k = ring_[b % kBuckets];
        // In order, usually the latest.
        if (k.held++ == 0) {
            k.first = e;
        } else {
            auto& v = k.more;
            if (k.held == 2 ? !Later{}(k.first, e) : !Later{}(v.back(), e)) {
                v.push_back(e);
            } else {
                // Before the last: its place among `more`'s, or first.
                std::size_t at = v.size();
                while (at > k.head && Later{}(v[at - 1], e)) --at;
                steps_ += v.size() - at;
                if (at == k.head && Later{}(k.first, e)) {
                    v.insert(v.begin() + static_cast<std::ptrdiff_t>(at), k.first);
                    k.first = e;
                } else {
                    v.insert(v.begin() + static_cast<std::ptrdiff_t>(at), e);
                }
            }
        }
        nonempty_[(b % kBuckets) >> 6] |= std::uint64_t(1) << (b % 64);
        words_ |= std::uint64_t(1) << ((b % kBuckets) >> 6);
        if (ring_count_++ == 0 || b < first_) first_ = b;
    }
    // first_ from bucket number `from` on: inline where the next bucket
    // that holds an event shares `from`'s word of the bitmap, else
    // find_first_beyond().
    void find_first(std::uint64_t from) {
        const std::uint64_t slot = from % kBuckets;
        if (const std::uint64_t bits = nonempty_[slot >> 6] >> (slot % 64))
            first_ = from + static_cast<std::uint64_t>(__builtin_ctzll(bits));
        else find_first_beyond(from);
    }
    void find_first_beyond(std::uint64_t from);   // (from's word holds none from it on)
    sc_core::sc_event wake_;
    bool armed_ = false;   // wake_ has a notification pending, at armed_at_
    sc_core::sc_time armed_at_;
    std::uint64_t served_ = 0, deferrals_ = 0;
    // Called back at the end of an instant the queue waited for.
    struct End final : InstantEnd::Client {
        HopQueue* q = nullptr;
        void at_instant_end() override { q->serve(); }
    } end_;
    std::uint32_t links_ = 0;
    // By link number (serve_link): the link whose own events they are, read
    // at every event (8 bytes each: on a large torus, fewer lines of the
    // table), or else their handler.
    std::vector<Link*> links_of_;
    std::vector<HopHandler*> handlers_;
    void serve_link(std::uint32_t number, HopHandler* h, Link* link);
    std::uint64_t wakes_ = 0;
    bool serving_ = false;
    sc_core::sc_time current_, horizon_, reach_;
    // The horizon but for woke_resuming(), and the earliest of those (while
    // serving); stopped for the latter, the queue waits for its resume()
    // (await_resume_), and then serves from that time (resumed_): not while
    // a delivery is queued (`delivers_`: post_delivery), which is served
    // only at the kernel's time.
    sc_core::sc_time plain_, resuming_;
    bool await_resume_ = false, resumed_ = false;
    std::size_t delivers_ = 0;
    // timed_notifications::made() when the kernel's next activity was last
    // read (recheck()).
    std::uint64_t timed_seen_ = 0;
    sc_core::sc_time limit_ = sc_core::sc_max_time();
    std::deque<HopPacket> pool_;
    std::vector<HopPacket*> free_;
    const Sender* acting_ = nullptr;
    std::unordered_map<const sc_core::sc_object*, const Sender*> receivers_;   // a map: thousands at scale

    void serve();   // the method process
    void arm(sc_core::sc_time at, sc_core::sc_time now);
    // The order of events (a type, so that the calendar's and the heap's code inline it).
    struct Later {
        bool operator()(const Event& a, const Event& b) const {
            if (a.t != b.t) return a.t > b.t;
            if (a.key != b.key) return a.key > b.key;
            return a.serial > b.serial;
        }
    };
};

// (Inline in serve_events(), its one caller: hop_link.cpp.)
VRDMASIM_FORCE_INLINE bool HopQueue::pop_before(sc_core::sc_time horizon, Event& e) {
    if (ring_count_ > 0) {
        Bucket& k = ring_[first_ % kBuckets];
        if (far_.empty() || !Later{}(k.first, far_.front())) {
            if (!(k.first.t < horizon)) return false;
            --count_;
            e = k.first;
            // The present moves to this bucket: later events may join the ring.
            base_ = first_;
            if (--k.held > 0) {
                k.first = k.more[k.head++];
                if (k.held == 1) {
                    // A burst's space is not kept: the ring's every bucket
                    // would come to hold the largest burst it saw.
                    if (k.more.capacity() > kBucketKeeps) std::vector<Event>().swap(k.more);
                    else k.more.clear();
                    k.head = 0;
                }
                --ring_count_;
            } else {
                std::uint64_t& w = nonempty_[(first_ % kBuckets) >> 6];
                w &= ~(std::uint64_t(1) << (first_ % 64));
                if (w == 0) words_ &= ~(std::uint64_t(1) << ((first_ % kBuckets) >> 6));
                if (--ring_count_ > 0) find_first(first_ + 1);
                ++drains_;
            }
            return true;
        }
    } else if (far_.empty()) {
        return false;
    }
    if (!(far_.front().t < horizon)) return false;
    --count_;
    std::pop_heap(far_.begin(), far_.end(), Later{});
    e = far_.back();
    far_.pop_back();
    // The present moves here too (not past the ring's first).
    base_ = std::max(base_, bucket_of(e.t));
    return true;
}

}   // namespace vrdmasim
