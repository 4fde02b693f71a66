// The state of a Link in exact time order (router.link-order = exact),
// served by hop_link.cpp: its queues, credits and wire, and the delivery
// lanes of a network interface at its far end.
#pragma once

#include <deque>
#include <memory>
#include <vector>

#include <systemc>

#include "models/interconnect/hop_queue.hpp"
#include "models/interconnect/link.hpp"
#include "models/interconnect/router.hpp"
#include "src/core/ring_list.hpp"
#include "src/core/sim_now.hpp"
#include "src/core/lazy_event.hpp"
#include "src/core/lazy_thread.hpp"

namespace vrdmasim {

// A FIFO of packets in flight (ring_list.hpp): it keeps its space
// when it drains, allocates nothing while empty (a std::deque allocates a
// map and a block at once: some 600 bytes a queue, on every link's every
// VC), and a packet served from it moves nothing (a ring).
using PacketFifo = RingList<HopPacket*>;

struct alignas(64) Link::Hops {
    // A queue of packets waiting to start: one per VC of the far buffer
    // (in `vc`, for the packets routed here by a router), one per sending
    // process of a network interface (NiQueue).
    struct Queue {
        PacketFifo fifo;   // by (ready, serial)
        unsigned vc = 0;
        std::uint64_t order = 0;   // among first packets ready at the same time: lower first
    };
    // A network interface's: its sending process (or delivery lane:
    // HopQueue::Sender::id), the flits it holds, its count of packets,
    // when its sender may present the next, and the sender waiting for
    // room (apart from the VC queues', which a hop reads beside their
    // credits).
    struct NiQueue : Queue {
        const void* proc = nullptr;
        unsigned flits = 0;
        std::uint32_t count = 0;
        sc_core::sc_time free_opt;
        bool waiting = false;
        sc_core::sc_time wait_from;   // the waiting sender's head: a start wakes it then at the earliest
        bool unbounded = false;   // its sender is a delivery lane (HopQueue::acting)
        LazyEvent started;
        // A packet kept for its source while the queue is full (Link::keep),
        // whether its taking in is posted, and whether its source has ended
        // (its thread then goes on).
        HopPacket* kept = nullptr;
        PacketTrain* source = nullptr;
        bool admit_posted = false;
        bool source_ended = false;
    };
    // Per VC of the far buffer, what a start and an arrival read together
    // (one array: on a large torus a hop's state is where its time goes,
    // in misses of the caches): its free flits (credits), its high-water
    // mark (VcBuffer's, kept here in this order), the queue of the packets
    // routed here on it (queue number vc: queue(); its first fields share the
    // credits' line), and what the far router's input holds of it
    // (Router::ExactHeld; its VC `far_in` gives).
    struct alignas(64) Vc {
        unsigned credits = 0;
        unsigned hwm = 0;
        unsigned on_way = 0;   // flits of its credits on their way (in `pending`)
        Queue queue;
        Scalar* hwm_stat = nullptr;
        Router::ExactHeld far;
        void raise_hwm(unsigned occ) {
            if (occ > hwm) {
                hwm = occ;
                hwm_stat->set(hwm);
            }
        }
    };
    // Credits on their way back, by time (give_credit; taken into `credits`
    // when the link serves at or after their time).
    struct Pending {
        sc_core::sc_time at;
        unsigned vc, flits;
    };
    // A network interface at the far end: a delivery lane per VC. Its
    // packets are delivered in the hop queue's method where the interface
    // cannot wait (PacketTarget::accept_may_wait), else by its thread
    // (Link::deliver_run), which is spawned only then.
    struct Lane {
        PacketFifo fifo;   // for the thread
        WakeEvent wake;
        std::unique_ptr<LazyThread> thread;
        HopQueue::Sender sender;
        unsigned posted = 0;   // its Deliver events queued
        bool busy = false;
    };

    // What a start reads (its link's, and the links before and after it),
    // in the first two lines: the queue, the VC buffers and the network
    // interface's queues, the wire; then the credits on their way; the
    // arrivals made ahead in the third.
    HopQueue* q = nullptr;
    // As many as the link's VCs or its far input's, whichever is more
    // (made once: its queues are pointed to).
    std::unique_ptr<Vc[]> vc;
    // A network interface's queues, one per sending process (inject());
    // each made alone (most links have none, and an empty std::deque
    // allocates some 600 bytes).
    std::vector<std::unique_ptr<NiQueue>> queues;
    // The queues by number: 0 .. nvc - 1 the VCs' (in `vc`), then the
    // network interface's (in `queues`). Reached through `vc` (where a
    // vector of every queue's address was a line more a hop read: a miss
    // at scale).
    unsigned nvc = 0;
    Queue& queue(unsigned qi) { return qi < nvc ? vc[qi].queue : *queues[qi - nvc]; }
    const Queue& queue(unsigned qi) const { return qi < nvc ? vc[qi].queue : *queues[qi - nvc]; }
    std::size_t queue_count() const { return nvc + queues.size(); }
    NiQueue& ni(unsigned qi) { return *queues[qi - nvc]; }
    unsigned waiting = 0;   // packets in the queues
    sc_core::sc_time wire_free;
    sc_core::sc_time serve_at = max_sim_time();   // a Serve event is queued for then
    unsigned queued_flits = 0;
    std::uint32_t number = 0;
    std::uint64_t serve_key = 0;   // its Serve events' (HopQueue::key)
    Router::ExactInput far_in;   // the far router's input (none: 0 flits)
    RingList<Pending> pending;
    // Whether this link makes its arrivals at the far router ahead (-1:
    // not known yet, decided at its first start, once routing and a region
    // of interest are set up; 0: no, Arrival events; 1: yes; 2: yes, their
    // counts held for a region of interest, StatRegistry::count_at), and
    // those arrivals (Link::arrive_ahead), by head, not yet counted in its
    // input.
    int direct = -1;
    PacketFifo ahead;
    // Queues whose kept packet is taken in at the end of the serving that
    // made room (Link::room_for_kept), in queue order.
    std::vector<unsigned> admit_now;
    unsigned ni_capacity = 0;   // flits a sending process's queue holds before its sender waits
    // While a source's next() runs (Link::admit): its queue and the time.
    int pulling = -1;
    sc_core::sc_time pull_at;
    // One lane per VC where a network interface is at the far end (none
    // elsewhere: an empty std::deque allocated some 600 bytes on every
    // link).
    std::unique_ptr<Lane[]> lanes;
    unsigned lane_count = 0;
    Counter* refused = nullptr;

    // The steps of Link::serve and Link::inject (hop_link.cpp): the queue
    // whose first packet starts next (none: nullptr), and a full queue's
    // sender waiting for room, `head` then its packet's head.
    Queue* arbitrate(const Link& link, sc_core::sc_time now) const;
    void wait_for_room(const Link& link, NiQueue& q, const sc_core::sc_object* proc, unsigned flits,
                       sc_core::sc_time& head);
    // Queue `qi`'s kept packet taken in at `at`, as an Admit event.
    void post_admit(unsigned qi, sc_core::sc_time at) {
        q->post(HopQueue::Event{at, HopQueue::key(HopQueue::Admit, number, qi), 0, nullptr});
    }
    // A thread whose packet was kept for its source, until the source ends.
    void wait_for_source(const Link& link, NiQueue& q, const sc_core::sc_object* proc);
};

}   // namespace vrdmasim
