// A Link in exact time order (router.link-order = exact): every hop an
// event of the kernel's HopQueue (hop_queue.hpp), README.md *Exact time
// order*. The packet waits in a queue at the link's input (one per VC of
// the far buffer, for packets routed here by a router; one per sending
// process, for a network interface's), and the link serves its wire when it
// is free: of the queues' first packets that are ready and have the credits
// they need, the one ready first, ties by queue (VC, or the sending
// process's name) and packet serial. A packet served at `start` ends at
// max(start + serialisation, its tail + a flit), reaches the far end a
// flit and the latency after its start, and frees its place where it
// waited at its end: a credit event the upstream link's latency later.
#include "models/interconnect/hop_link.hpp"

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <string>

#include "models/interconnect/exanet_packet.hpp"
#include "models/interconnect/router.hpp"
#include "src/core/ring_list.hpp"
#include "src/core/force_inline.hpp"
#include "src/core/sim_now.hpp"
#include "src/core/trace.hpp"

namespace vrdmasim {

using sc_core::sc_time;

Link::~Link() = default;

// The far buffer's VC a packet queued here occupies (queue_packet).
unsigned Link::vc_of(const HopPacket& hp) const { return hp.vc; }

// (Inline where it is called: mostly the credits are back.)
VRDMASIM_FORCE_INLINE sc_time Link::credits_for(unsigned vc, unsigned flits) const {
    const unsigned c = hop_->vc[vc].credits;
    if (c >= flits) return sc_core::SC_ZERO_TIME;
    return credits_on_way(vc, flits, c);
}

namespace {
// A stable order for a sending process's queue: a hash of its full name
// (FNV-1a), a function of the model, not of which process sent first.
std::uint64_t name_order(const char* name) {
    std::uint64_t h = 1469598103934665603ull;
    for (const char* c = name; *c; ++c) h = (h ^ static_cast<unsigned char>(*c)) * 1099511628211ull;
    return h | (1ull << 63);   // after the VC queues
}
}

void Link::use_hops(HopQueue& q, std::uint32_t number) {
    if (cut_ || lined_ || p_.time_order)
        throw std::logic_error(std::string(name()) + ": exact time order on a link of another order");
    hop_ = std::make_unique<Hops>();
    Hops& h = *hop_;
    h.q = &q;
    h.number = number;
    h.serve_key = HopQueue::key(HopQueue::Serve, number, 0);
    q.serve_link(number, *this);
    // The far router's input is measured here (Router::ExactHeld); a
    // network interface at the far end has none.
    if (far_) h.far_in = far_->exact_input(static_cast<unsigned>(far_port_));
    h.vc = std::make_unique<Hops::Vc[]>(std::max(p_.vcs, h.far_in.vcs));
    h.nvc = p_.vcs;
    for (unsigned v = 0; v < p_.vcs; ++v) {
        h.vc[v].credits = p_.buffer_flits;
        h.vc[v].hwm_stat = vcs_[v].hwm_stat;
        h.vc[v].queue.vc = v;
        h.vc[v].queue.order = v;
    }
    // A network interface's output queue per sending process holds as much
    // as the far buffer (*estimate*: the PLDMA's output buffering is
    // unpublished).
    h.ni_capacity = p_.buffer_flits;
    h.refused = &stats_->counter(std::string(name()) + ".refused", "",
                                 "packets the network interface at the far end refused, which their sender cannot be "
                                 "told of in exact time order: must stay 0");
    if (sink_) {
        const UnderModule under(this);
        h.lanes = std::make_unique<Hops::Lane[]>(p_.vcs);
        h.lane_count = p_.vcs;
        for (unsigned v = 0; v < p_.vcs; ++v) {
            Hops::Lane& lane = h.lanes[v];
            const std::string n = "deliver" + std::to_string(v);
            lane.thread = std::make_unique<LazyThread>(n.c_str(), lane.wake, [this, v] { deliver_run(v); });
            // The name its thread has (LazyThread: "<link>.<name>.run"),
            // whether or not it is ever spawned.
            lane.sender = HopQueue::Sender{&lane, std::string(name()) + "." + n + ".run"};
        }
    }
}

void Link::cut_hops_here() {
    if (!hop_ || !far_ || hop_cut_)
        throw std::logic_error(std::string(name()) +
                               ": a cut link in exact time order needs its hops and a router at its far end, once");
    hop_cut_far_ = std::make_unique<HopCutFar>(name(), p_.number, p_.latency);
    hop_cut_far_->attach(*hop_->q, hop_->number, *far_, far_port_);
    hop_cut_ = std::make_unique<HopCutNear>(*this, p_.number, *hop_cut_far_);
    hop_cut_far_->reply_to(*hop_cut_);
}

// A full queue's sender waits for room (not a delivery: a link that waits
// for its interface to send would stop draining, and the network with it:
// the consumption assumption of deadlock freedom). It looks again at its
// packet's head, so that what it finds is every start before then, whatever
// the kernel's time when it called (only it fills this queue: a queue with
// room now has room then), or at the first start after: a start wakes it at
// the later of its own time and the head (one wake-up, where going to the
// head and then waiting for a start were two).
void Link::Hops::wait_for_room(const Link& link, NiQueue& q, const sc_core::sc_object* proc, unsigned flits,
                               sc_time& head) {
    if (!proc || sc_core::sc_get_curr_simcontext()->get_curr_proc_info()->kind != sc_core::SC_THREAD_PROC_)
        throw std::logic_error(std::string(link.name()) + ": a network interface's queue is full and its sender (" +
                               (proc ? std::string(proc->name()) : std::string("no process")) +
                               ") is not a thread that can wait");
    q.wait_from = head;
    while (q.flits > 0 && q.flits + flits > ni_capacity) {
        q.waiting = true;
        sc_core::wait(q.started.get());
        this->q->resume();   // (woken by woke_resuming)
    }
    q.waiting = false;
    head = std::max(head, sim_now());   // (woken at the head or after)
}

bool Link::inject(tlm::tlm_generic_payload& gp, ExanetPacket& pkt, sc_time& delay, PacketTrain* src) {
    transactions_.inc();
    const unsigned flits = pkt.flits();
    if (flits > p_.buffer_flits) {
        gp.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
        return false;
    }
    const unsigned vc = p_.vcs == 1 ? 0u : pkt.header.vc;
    if (vc >= p_.vcs) {
        vc_errors_.inc();
        gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
        return false;
    }
    // Where it is going must be known now: its sender is not told later.
    if (far_ && !far_->routes(static_cast<unsigned>(far_port_), pkt)) {
        far_->count_unroutable();
        gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return false;
    }
    Hops& h = *hop_;
    const sc_time t0 = sim_now();
    sc_time head = t0 + delay;
    unsigned qi = p_.vcs;
    const sc_core::sc_object* proc = nullptr;
    if (h.pulling >= 0) {
        // A source's next packet (admit()): its queue, at the time its
        // sender would have run (woken then, it sent at that time).
        qi = static_cast<unsigned>(h.pulling);
        head = std::max(head, h.pull_at);
    } else {
        // The sending process's queue (a delivery lane's, while it delivers).
        const HopQueue::Sender* lane = h.q->acting();
        proc = lane ? nullptr : sc_core::sc_get_current_process_b();
        const void* who = lane ? lane->id : proc;
        // (Among the network interface's queues, after the VCs'.)
        const auto find = [&h](const void* w) {
            std::size_t i = 0;
            while (i < h.queues.size() && h.queues[i]->proc != w) ++i;
            return h.nvc + static_cast<unsigned>(i);
        };
        qi = find(who);
        if (qi == h.queue_count() && !lane && (lane = h.q->receiver(proc))) {
            // A lane's delivery thread: the lane's queue.
            who = lane->id;
            qi = find(who);
        }
        if (qi == h.queue_count()) {
            if (qi - p_.vcs >= 255)
                throw std::logic_error(std::string(name()) + ": more than 255 processes send on one link");
            Hops::NiQueue& added = *h.queues.emplace_back(std::make_unique<Hops::NiQueue>());
            added.proc = who;
            added.vc = vc;
            added.order = name_order(lane ? lane->name.c_str() : proc ? proc->name() : "");
            added.unbounded = lane != nullptr;
        }
    }
    Hops::NiQueue& q = h.ni(qi);
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
    // Full: the sender waits for room (not a delivery), or its source goes
    // on from the link's context once there is room (keep(), admit()).
    if (!q.unbounded && q.flits > 0 && q.flits + flits > h.ni_capacity) {
        if (src) {
            keep(qi, gp, pkt, head, *src);
            if (h.pulling >= 0) return true;   // (its source's next() returns)
            h.wait_for_source(*this, q, proc);
            delay = q.free_opt - t0;
            return true;
        }
        if (h.pulling >= 0) throw std::logic_error(std::string(name()) + ": a source's packet with no source to go on");
        h.wait_for_room(*this, q, proc, flits, head);
    }
    HopPacket& hp = h.q->take_packet();
    hp.take(gp, pkt);
    enter(qi, hp, head, h.pulling >= 0 ? h.pull_at : sim_now());
    delay = q.free_opt - t0;
    return false;
}

// (Inline in inject() and admit().)
VRDMASIM_FORCE_INLINE void Link::enter(unsigned qi, HopPacket& hp, sc_time head, sc_time now) {
    Hops& h = *hop_;
    Hops::NiQueue& q = h.ni(qi);
    const ExanetPacket& pkt = *hp.pkt;
    const unsigned flits = hp.flits;
    hp.ready = head;
    hp.up = nullptr;
    hp.queue = qi;
    hp.serial = (std::uint64_t(h.number) << 40) | (std::uint64_t(qi - p_.vcs) << 32) | q.count++;
    q.flits += flits;
    queue_packet(qi, hp);
    // Behind another of its queue: served when that one is (a link only
    // ever starts a queue's first).
    if (q.fifo.front() == &hp) {
        // When its credits are back (not all on their way: when given).
        const sc_time t = credits_for(vc_of(hp), flits);
        if (!is_max_sim_time(t)) post_serve(std::max(std::max(hp.ready, now), std::max(t, h.wire_free)));
    }
    // Its sender may present the next when this one's tail could be out,
    // had it the wire to itself from its head (or from its queue's last).
    q.free_opt = std::max(std::max(head, q.free_opt) + serialise_last(flits), pkt.tail + flit_time_);
}

// The packet of a full queue whose sender has a source: copied in now (as
// it would have been once taken in: its sender, waiting, changes nothing),
// taken in when there is room (room_for_kept, admit).
HopPacket& Link::keep(unsigned qi, tlm::tlm_generic_payload& gp, ExanetPacket& pkt, sc_time head, PacketTrain& src) {
    Hops& h = *hop_;
    Hops::NiQueue& q = h.ni(qi);
    HopPacket& hp = h.q->take_packet();
    hp.take(gp, pkt);
    hp.ready = head;
    q.kept = &hp;
    q.source = &src;
    q.wait_from = head;
    q.admit_posted = false;
    return hp;
}

// A thread whose packet was kept: it goes on when its source has ended, at
// that time (admit), as it would have after its last packet.
void Link::Hops::wait_for_source(const Link& link, NiQueue& q, const sc_core::sc_object* proc) {
    if (!proc || sc_core::sc_get_curr_simcontext()->get_curr_proc_info()->kind != sc_core::SC_THREAD_PROC_)
        throw std::logic_error(std::string(link.name()) + ": a network interface's queue is full and its sender (" +
                               (proc ? std::string(proc->name()) : std::string("no process")) +
                               ") is not a thread that can wait");
    while (!q.source_ended) {
        sc_core::wait(q.started.get());
        this->q->resume();   // (woken by woke_resuming)
    }
    q.source_ended = false;
}

// A start of queue `qi`'s packet at `start`: its kept packet is taken in
// once it fits, at the later of the start and its head, when its sender,
// waiting, would have been woken (wait_for_room): now, or by an Admit event
// (the first of its time, as that thread ran before the queue's other
// events of its time).
void Link::room_for_kept(unsigned qi, sc_time start) {
    Hops& h = *hop_;
    Hops::NiQueue& q = h.ni(qi);
    if (q.admit_posted || (q.flits > 0 && q.flits + q.kept->flits > h.ni_capacity)) return;
    q.admit_posted = true;
    const sc_time at = std::max(start, q.wait_from);
    // Now, where its Admit event would be the next served (this serving's
    // time, the queue going on): at the end of this serving, which is the
    // same place in the order, without the event (admit_now).
    if (at == start && h.q->serves_next_at(start)) {
        h.admit_now.insert(std::lower_bound(h.admit_now.begin(), h.admit_now.end(), qi), qi);
        return;
    }
    h.post_admit(qi, at);
}

// The kept packets room_for_kept took in at the end of this serving at
// `now`, in their Admit events' order (by queue); one whose event would no
// longer be the next served (a process woken for now runs first: the
// queue stops) is posted as that event after all.
void Link::admit_now(sc_time now) {
    Hops& h = *hop_;
    // (admit() serves no link: nothing joins the list meanwhile.)
    for (const unsigned qi : h.admit_now) {
        if (h.q->serves_next_at(now)) admit(qi, now);
        else h.post_admit(qi, now);
    }
    h.admit_now.clear();
}

// The kept packet taken in at `at`; its source then books it and sends its
// next, taken in at once (then again) or kept, or ends: its thread is woken.
void Link::admit(unsigned qi, sc_time at) {
    Hops& h = *hop_;
    Hops::NiQueue& q = h.ni(qi);
    HopPacket& hp = *q.kept;
    q.kept = nullptr;
    q.admit_posted = false;
    enter(qi, hp, std::max(hp.ready, at), at);
    for (;;) {
        h.pulling = static_cast<int>(qi);
        h.pull_at = at;
        const bool more = q.source->next(q.free_opt);
        h.pulling = -1;
        if (!more) {
            q.source = nullptr;
            q.source_ended = true;
            q.started.get().notify(at - sim_now());
            h.q->woke_resuming(at);
            return;
        }
        if (q.kept) return;   // full again: taken in at a later start
    }
}

VRDMASIM_FORCE_INLINE void Link::queue_packet(unsigned qi, HopPacket& hp) {
    Hops& h = *hop_;
    hp.vc = static_cast<std::uint8_t>(p_.vcs == 1 ? 0u : hp.pkt->header.vc);
    auto& fifo = h.queue(qi).fifo;
    auto at = fifo.end();
    while (at != fifo.begin()) {
        const HopPacket* b = *(at - 1);
        if (b->ready < hp.ready || (b->ready == hp.ready && b->serial < hp.serial)) break;
        --at;
    }
    if (at == fifo.end()) fifo.push_back(&hp);   // (the usual case: after the last)
    else fifo.insert(at, &hp);
    ++h.waiting;
    h.queued_flits += hp.flits;
}

VRDMASIM_FORCE_INLINE void Link::enqueue(HopPacket& hp, bool arriving) {
    if (arriving) transactions_.inc();   // (made ahead: counted by arrive_ahead)
    Hops& h = *hop_;
    const unsigned vc = p_.vcs == 1 ? 0u : hp.pkt->header.vc;
    if (vc >= p_.vcs || hp.flits > p_.buffer_flits)
        throw std::logic_error(std::string(name()) + ": a packet routed here on VC " + std::to_string(vc) + " of " +
                               std::to_string(hp.flits) + " flits, which its far buffer cannot take");
    queue_packet(vc, hp);
    // Behind another of its VC: served when that one is (a link only ever
    // starts a queue's first; before, a third of the servings were such
    // arrivals at a link whose first packet waited for credits).
    if (h.vc[vc].queue.fifo.front() != &hp) return;
    // When its credits are back (not all on their way: when given).
    const sc_time now = hp.ready, t = credits_for(vc, hp.flits);
    if (is_max_sim_time(t)) return;
    // Made ahead, it is ready later than now: a Serve event, never at once.
    if (arriving && h.wire_free <= now && t <= now) serve_soon(now);
    else post_serve(std::max(now, std::max(t, h.wire_free)));
}

void Link::post_serve(sc_time at) {
    Hops& h = *hop_;
    if (at >= h.serve_at) return;
    h.serve_at = at;
    h.q->post(HopQueue::Event{at, h.serve_key, 0, nullptr});
}

void Link::serve_soon(sc_time now) {
    if (hop_->q->more_at(now)) post_serve(now);
    else serve(now);
}

VRDMASIM_FORCE_INLINE void Link::give_credit_inline(unsigned vc, unsigned flits, sc_time at) {
    Hops& h = *hop_;
    auto& list = h.pending;
    // By time, usually the latest: then, with every credit before it
    // earlier than it, a first packet's credits are complete at `at`
    // exactly when those of its VC before it fall short and this one
    // makes them up (no walk of the list: credits_on_way).
    const unsigned before = h.vc[vc].on_way;
    h.vc[vc].on_way += flits;
    bool last = false;
    if (list.empty() || !(list.back().at > at)) {
        last = list.empty() || list.back().at < at;
        list.push_back(Hops::Pending{at, vc, flits});
    } else {
        std::size_t i = list.size() - 1;
        while (i > 0 && list[i - 1].at > at) --i;
        list.insert(list.begin() + static_cast<std::ptrdiff_t>(i), Hops::Pending{at, vc, flits});
    }
    // A first packet of this VC whose credits this one completes: served
    // when it may start. The time a packet's credits suffice moves only to
    // this credit's time or later (it adds to none before); earlier, it was
    // already so, and its serving posted (serve()). Of the VC queues only
    // queue `vc` holds this VC's packets; a network interface's queues
    // (after them) may hold any VC's.
    const auto completes = [&](const Hops::Queue& q) VRDMASIM_FORCE_INLINE_LAMBDA {
        const HopPacket& f = *q.fifo.front();
        if (last) {
            // (Complete before it, with those on their way before it, or
            // not even with it.)
            const unsigned had = h.vc[vc].credits + before;
            if (had >= f.flits || had + flits < f.flits) return;
            post_serve(std::max(std::max(at, f.ready), h.wire_free));
            return;
        }
        const sc_time t = credits_for(vc, f.flits);
        if (!is_max_sim_time(t) && t >= at) post_serve(std::max(std::max(t, f.ready), h.wire_free));
    };
    if (!h.vc[vc].queue.fifo.empty()) completes(h.vc[vc].queue);
    for (const auto& q : h.queues)
        if (!q->fifo.empty() && vc_of(*q->fifo.front()) == vc) completes(*q);
}

void Link::give_credit(unsigned vc, unsigned flits, sc_time at) { give_credit_inline(vc, flits, at); }

sc_time Link::credits_on_way(unsigned vc, unsigned flits, unsigned c) const {
    const Hops& h = *hop_;
    for (const Hops::Pending& p : h.pending) {
        if (p.vc != vc) continue;
        c += p.flits;
        if (c >= flits) return p.at;
    }
    return max_sim_time();
}

VRDMASIM_FORCE_INLINE void Link::take_credits(sc_time now) {
    Hops& h = *hop_;
    while (!h.pending.empty() && h.pending.front().at <= now) {
        const Hops::Pending c = h.pending.front();
        h.pending.pop_front();
        h.vc[c.vc].credits += c.flits;
        h.vc[c.vc].on_way -= c.flits;
    }
}

VRDMASIM_FORCE_INLINE void Link::on_hop_event(std::uint64_t key, void* what) {
    switch (static_cast<HopQueue::Kind>(key >> 62)) {
    case HopQueue::Admit: admit(static_cast<unsigned>(key & 0xffffffu), hop_->q->time()); break;
    case HopQueue::Deliver: {
        HopPacket& hp = *static_cast<HopPacket*>(what);
        --hop_->lanes[hp.up_vc].posted;
        hop_->q->delivery_served();
        deliver(hp);
        break;
    }
    case HopQueue::Arrival: {
        // (A link cut in one process: its far end's arrival, from a message.)
        if (hop_cut_far_) {
            hop_cut_far_->on_hop_event(*hop_->q, key, what, 0);
            break;
        }
        HopPacket& hp = *static_cast<HopPacket*>(what);
        arrive(hp, hp.ready);
        break;
    }
    case HopQueue::Serve: {
        const sc_time now = hop_->q->time();
        if (now == hop_->serve_at) hop_->serve_at = max_sim_time();
        start_packets_inline(now);
        if (!hop_->admit_now.empty()) admit_now(now);
        break;
    }
    }
}

// The hop queue's serving loop (HopQueue::serve), here so that a link's
// handling of its events is inline in it (the queue's other handlers, a
// cut link's far end or a test's, through their virtual call).
void HopQueue::serve_events() {
    Event e;
    while (pop_before(horizon_, e)) {
        ++served_;
        current_ = e.t;
        const std::uint32_t n = link_of(e.key);
        if (Link* const l = links_of_[n]) l->on_hop_event(e.key, e.what);
        else handlers_[n]->on_hop_event(*this, e.key, e.what, static_cast<std::uint32_t>(e.key & 0xffffffu));
    }
}

// The link's arbitration among the first packets that are ready and have
// their credits: the one ready first, then by queue order and serial.
VRDMASIM_FORCE_INLINE Link::Hops::Queue* Link::Hops::arbitrate(const Link& link, sc_time now) const {
    Queue* best = nullptr;
    const auto consider = [&](Queue* q) {
        if (q->fifo.empty()) return;
        const HopPacket& c = *q->fifo.front();
        if (c.ready > now || vc[link.vc_of(c)].credits < c.flits) return;
        if (!best) {
            best = q;
            return;
        }
        const HopPacket& b = *best->fifo.front();
        if (c.ready < b.ready ||
            (c.ready == b.ready && (q->order < best->order || (q->order == best->order && c.serial < b.serial))))
            best = q;
    };
    // (The VC queues, then the network interface's, in queue order.)
    for (unsigned v = 0; v < nvc; ++v) consider(&vc[v].queue);
    for (const auto& q : queues) consider(q.get());
    return best;
}

// A router's parts of a hop in exact time order, here (not in router.cpp)
// so that a link's arrival and start inline them: its input's occupancy
// at a head, and an arrival made ahead.
VRDMASIM_FORCE_INLINE void Router::exact_hold_inline(ExactHeld* held, unsigned in_flits, unsigned vc,
                                                     sc_core::sc_time head, unsigned flits) {
    if (!held) return;
    const unsigned occ = held->take(head, flits);
    if (occ > in_flits) count_overflow(head + pipeline_);
    if (occ > held->most) {
        held->most = occ;
        if (occ > occ_max_[vc]) {
            occ_max_[vc] = occ;
            occ_stats_[vc]->set(occ);
        }
    }
}

// By its time, though counted later where the arrival was made ahead: a
// region of interest reads it there. (Out of line: it never happens where
// the credits keep the buffer.)
void Router::count_overflow(sc_core::sc_time at) { ctx_.stats.count_at(overflows_, 1, at.value(), sim_now().value()); }

void Router::count_routed(sc_core::sc_time at) { ctx_.stats.count_at(packets_, 1, at.value(), sim_now().value()); }

VRDMASIM_FORCE_INLINE Link& Router::exact_ahead_inline(int id, HopPacket& hp, sc_core::sc_time head, bool held_counts) {
    ExanetPacket& pkt = *hp.pkt;
    const Choice c = dor_ ? dimension_order(static_cast<unsigned>(id), pkt) : Choice{route(pkt.dst_node), -1};
    Link* const l = c.port >= 0 && c.port < static_cast<int>(direct_out_.size()) ? direct_out_[c.port] : nullptr;
    if (!l || !l->exact())
        throw std::logic_error(std::string(name()) + ": a packet for " + std::to_string(pkt.dst_node) +
                               " has no route here in exact time order (port " + std::to_string(c.port) +
                               "; its injection link checked its first hop only)");
    if (!held_counts) packets_.inc();
    else count_routed(head + pipeline_);
    if (c.vc >= 0) pkt.header.vc = static_cast<std::uint8_t>(c.vc);
    pkt.tail += pipeline_;
    hp.ready = head + pipeline_;
    return *l;
}

// A packet whose head reaches the far router at `head`, at its start here
// (dimension order: Router::exact_ahead_ok). Queued at its output link
// now, ready from its arrival there, as the Arrival event would have
// queued it then: until then no serving of that link can start it (it is
// not ready), and every serving from then on sees it, as they would have
// (an Arrival event came before the Serve events of its time). Nothing
// else reads it there before its time. It is counted (the router's
// packets, the output link's transactions) at its arrival's time
// (StatRegistry::count_at); its router input's occupancy at its head waits
// for settle_ahead(), since it needs every freeing before then, some of
// which may still come.
VRDMASIM_FORCE_INLINE void Link::arrive_ahead(HopPacket& hp, sc_time head) {
    Hops& h = *hop_;
    const bool held_counts = h.direct == 2;
    Link& out = far_->exact_ahead_inline(far_port_, hp, head, held_counts);
    if (!held_counts) out.transactions_.inc();
    else out.count_transaction_at(hp.ready);
    hp.held_due = true;
    h.ahead.push_back(&hp);
    out.enqueue(hp, false);
}

void Link::count_transaction_at(sc_time at) { stats_->count_at(transactions_, 1, at.value(), sim_now().value()); }

// One arrival made ahead counted in the far router's input: its
// occupancy at the packet's head.
VRDMASIM_FORCE_INLINE void Link::settle_one(HopPacket& hp) {
    Hops& h = *hop_;
    hp.held_due = false;
    const int v = h.far_in.arriving(hp.up_vc);
    far_->exact_hold_inline(v < 0 ? nullptr : &h.vc[unsigned(v)].far, h.far_in.flits, v < 0 ? 0u : unsigned(v),
                            hp.ready - far_->pipeline(), hp.flits);
}

// At `upto`'s start on its output link (its head came in by then): the
// arrivals from this link before it and its own, in their order. Every
// freeing of the input at or before their heads is known: a packet frees
// its space at the end of its start, a flit at least after it, and every
// start before this one has been served.
void Link::settle_ahead(const HopPacket& upto) {
    Hops& h = *hop_;
    while (!h.ahead.empty()) {
        HopPacket& hp = *h.ahead.front();
        h.ahead.pop_front();
        settle_one(hp);
        if (&hp == &upto) return;
    }
    throw std::logic_error(std::string(name()) + ": a packet started beyond its router without its arrival there");
}

void Link::settle_ahead_until(sc_time t) {
    if (!hop_) return;
    Hops& h = *hop_;
    while (!h.ahead.empty() && h.ahead.front()->ready <= t) {
        HopPacket& hp = *h.ahead.front();
        h.ahead.pop_front();
        settle_one(hp);
    }
}

// A packet started at `start` on this link: its place where it waited is
// free when its tail has left, at `end` (the upstream link's far buffer, a
// cut link's, or its network interface's queue, hp.queue).
VRDMASIM_FORCE_INLINE void Link::free_where_waited(HopPacket& hp, sc_time start, sc_time end) {
    Hops& h = *hop_;
    const unsigned flits = hp.flits;
    if (hp.up) {
        Link& up = *hp.up;
        Hops& u = *up.hop_;
        // Its arrival made ahead and not yet counted in the router's
        // input (with an earlier one's): that count first, and those of
        // the packets from that link before it, as its freeing comes
        // after its arrival.
        if (hp.held_due) {
            if (u.ahead.front() == &hp) {   // (the usual case: the first from there)
                u.ahead.pop_front();
                up.settle_one(hp);
            } else {
                up.settle_ahead(hp);
            }
        }
        if (const int v = u.far_in.freeing(hp.up_vc); v >= 0) u.vc[unsigned(v)].far.freed(end, flits);
        up.give_credit_inline(hp.up_vc, flits, end + up.p_.latency);
    } else if (hp.cut) {
        hp.cut->freed(hp, end);
    } else {
        Hops::NiQueue& q = h.ni(hp.queue);
        q.flits -= flits;
        if (q.kept) {
            room_for_kept(hp.queue, start);
        } else if (q.waiting) {
            const sc_time at = std::max(start, q.wait_from);
            q.started.get().notify(at - sim_now());
            h.q->woke_resuming(at);
        }
    }
}

void Link::serve(sc_time now) {
    start_packets(now);
    if (!hop_->admit_now.empty()) admit_now(now);
}

void Link::start_packets(sc_time now) { start_packets_inline(now); }

// (Inline in a Serve event's handling: one frame fewer an event.)
VRDMASIM_FORCE_INLINE void Link::start_packets_inline(sc_time now) {
    Hops& h = *hop_;
    if (!h.pending.empty() && h.pending.front().at <= now) take_credits(now);
    while (h.waiting > 0 && h.wire_free <= now) {
        Hops::Queue* const best = h.arbitrate(*this, now);
        if (!best) break;
        HopPacket& hp = *best->fifo.front();
        best->fifo.pop_front();
        --h.waiting;
        h.queued_flits -= hp.flits;
        const unsigned vc = vc_of(hp), flits = hp.flits;
        ExanetPacket& pkt = *hp.pkt;
        const sc_time start = now, ser = serialise_last(flits);
        const sc_time end = std::max(start + ser, pkt.tail + flit_time_);
        // Waited with the wire free and the packet ready: for credits.
        const sc_time free_from = std::max(hp.ready, h.wire_free);
        if (free_from < start) credit_stall_us_.add(to_us(start - free_from));
        h.wire_free = end;
        Hops::Vc& v = h.vc[vc];
        v.credits -= flits;
        v.raise_hwm(p_.buffer_flits - v.credits);
        served(pkt, flits, hp.ready, start, end);
        free_where_waited(hp, start, end);
        const sc_time head = start + flit_time_ + p_.latency;
        if (hop_cut_) {
            // A cut link: the far end takes it from its message.
            hop_cut_->send(hp, vc, head);
            h.q->give_back(hp);
            continue;
        }
        hp.up = this;
        hp.cut = nullptr;
        hp.up_vc = vc;
        hp.in_port = far_port_;
        hp.ready = head;
        // (Decided at the first start: routing and a region of interest
        // are set up by then.)
        if (h.direct < 0) h.direct = !far_ || !far_->exact_ahead_ok() ? 0 : stats_->will_be_read() ? 2 : 1;
        if (h.direct) {
            arrive_ahead(hp, head);
            continue;
        }
        h.q->post(HopQueue::Event{head + (far_ ? far_->pipeline() : sc_core::SC_ZERO_TIME),
                                  HopQueue::key(HopQueue::Arrival, h.number, vc), hp.serial, &hp});
    }
    if (h.waiting == 0) return;
    // The next time a first packet may start: its head there, the wire
    // free and its credits back (those on their way counted at their
    // times). One whose credits are not all on their way yet is served
    // when they are given (give_credit). Not simply when the wire comes
    // free: a third of the servings then found their first packet waiting
    // for credits.
    sc_time next = max_sim_time();
    const auto first_may_start = [&](const Hops::Queue& q) {
        if (q.fifo.empty()) return;
        const HopPacket& f = *q.fifo.front();
        const sc_time t = credits_for(vc_of(f), f.flits);
        if (!is_max_sim_time(t)) next = std::min(next, std::max(f.ready, t));
    };
    for (unsigned v = 0; v < h.nvc; ++v) first_may_start(h.vc[v].queue);
    for (const auto& q : h.queues) first_may_start(*q);
    if (!is_max_sim_time(next)) post_serve(std::max(next, h.wire_free));
}

// A router's part of a hop in exact time order (its arrival), here (not in
// router.cpp) so that a link's arrival inlines it and the output link's
// enqueue() in it.
VRDMASIM_FORCE_INLINE void Router::exact_arrive_inline(int id, HopPacket& hp, sc_core::sc_time head, ExactHeld* held,
                                                       unsigned in_flits, unsigned vc) {
    ExanetPacket& pkt = *hp.pkt;
    const unsigned port = static_cast<unsigned>(id);
    const sc_core::sc_time now = head + pipeline_;
    exact_hold_inline(held, in_flits, vc, head, hp.flits);
    bool adaptive = false, chose = false;
    // Dimension order (every hop of the default routing) inline: what
    // route_packet() would give, without its two calls.
    const Choice c = dor_ && !topology_ ? dimension_order(port, pkt)
                                        : route_packet(port, pkt, now, pkt.tail + pipeline_, adaptive, chose);
    Link* const l = c.port >= 0 && c.port < static_cast<int>(direct_out_.size()) ? direct_out_[c.port] : nullptr;
    if (!l || !l->exact())
        throw std::logic_error(std::string(name()) + ": a packet for " + std::to_string(pkt.dst_node) +
                               " has no route here in exact time order (port " + std::to_string(c.port) +
                               "; its injection link checked its first hop only)");
    packets_.inc();
    if (chose) (adaptive ? adaptive_hops_ : escape_hops_)->inc();
    if (c.vc >= 0) pkt.header.vc = static_cast<std::uint8_t>(c.vc);
    pkt.tail += pipeline_;
    hp.ready = now;
    l->enqueue(hp, true);
}

void Router::exact_arrive(int id, HopPacket& hp, sc_core::sc_time head, ExactHeld* held, unsigned in_flits,
                          unsigned vc) {
    exact_arrive_inline(id, hp, head, held, in_flits, vc);
}

VRDMASIM_FORCE_INLINE void Link::arrive(HopPacket& hp, sc_time head) {
    if (far_) {
        // The far input's buffer is measured here, beside this link's own
        // credits for it (Router::ExactHeld).
        Hops& h = *hop_;
        const int v = h.far_in.arriving(hp.up_vc);
        far_->exact_arrive_inline(far_port_, hp, head, v < 0 ? nullptr : &h.vc[unsigned(v)].far, h.far_in.flits,
                                  v < 0 ? 0u : unsigned(v));
        return;
    }
    if (!sink_)
        throw std::logic_error(std::string(name()) + ": exact time order needs a router or an NI at the far end");
    // Delivered at `head`, at the kernel's time then (the interface reads
    // it), before anything else of that time: the queue serves nothing from
    // `head` on ahead of the kernel. At once if the kernel is there (what
    // else of that time comes from other links and routers, and commutes
    // with a delivery, which reaches only its interface, and through it the
    // interface's own link and processes).
    Hops::Lane& lane = hop_->lanes[hp.up_vc];
    if (lane.posted == 0 && !lane.busy && lane.fifo.empty() && !sink_->accept_may_wait()) {
        deliver_here(hp, head);
        return;
    }
    if (head == sc_core::sc_time_stamp()) {
        deliver(hp);
        return;
    }
    HopQueue& q = *hop_->q;
    ++lane.posted;
    q.post_delivery(HopQueue::Event{head, HopQueue::key(HopQueue::Deliver, hop_->number, hp.up_vc), hp.serial, &hp});
    q.woke(head);
}

// In the queue's method, its head at `head` (at or after the kernel's
// time: the call's delay): the interface cannot wait.
void Link::deliver_here(HopPacket& hp, sc_time head) {
    Hops& h = *hop_;
    Hops::Lane& lane = h.lanes[hp.up_vc];
    const sc_time t0 = sim_now();
    sc_time d = head - t0;
    {
        const HopQueue::ActingAs acting(*h.q, lane.sender);
        const Tracer::ActingAs tracing(lane.sender.name.c_str());
        sink_->accept(hp.gp, *hp.pkt, d);
    }
    if (!hp.gp.is_response_ok()) h.refused->inc();
    // Its space in the interface's buffer is free at t0 + d (link.hpp);
    // the credit comes back a latency later.
    give_credit_inline(hp.up_vc, hp.flits, t0 + d + p_.latency);
    h.q->give_back(hp);
    h.q->reach(head);
    // What it woke runs before anything else the queue serves from then on.
    h.q->recheck();
}

void Link::deliver(HopPacket& hp) {
    Hops& h = *hop_;
    Hops::Lane& lane = h.lanes[hp.up_vc];
    const sc_time now = sim_now();
    // At the kernel's time (arrive() stops serving ahead at it): the
    // interface it calls reads it.
    if (hp.ready != now)
        throw std::logic_error(std::string(name()) + ": a packet due at " + hp.ready.to_string() + " delivered at " +
                               now.to_string());
    if (lane.busy || !lane.fifo.empty() || sink_->accept_may_wait()) {
        // Its thread, which may wait (behind one that waits, in order).
        lane.fifo.push_back(&hp);
        if (!lane.busy && lane.fifo.size() == 1) {
            lane.wake.notify(sc_core::SC_ZERO_TIME);
            h.q->woke(now);
        }
        return;
    }
    deliver_here(hp, now);
}

void Link::deliver_run(unsigned vc) {
    Hops& h = *hop_;
    Hops::Lane& lane = h.lanes[vc];
    h.q->add_receiver(sc_core::sc_get_current_process_b(), lane.sender);
    for (;;) {
        while (lane.fifo.empty()) sc_core::wait(lane.wake.get());
        HopPacket& hp = *lane.fifo.front();
        // The queue serves ahead of the kernel: a packet listed here may
        // arrive later than this one's call returned.
        if (hp.ready > sim_now()) {
            sc_core::wait(hp.ready - sim_now());
            continue;
        }
        lane.fifo.pop_front();
        lane.busy = true;
        const sc_time t0 = sim_now();
        sc_time d = sc_core::SC_ZERO_TIME;
        sink_->accept(hp.gp, *hp.pkt, d);
        if (!hp.gp.is_response_ok()) h.refused->inc();
        lane.busy = false;
        // Its space in the interface's buffer is free at t0 + d (relative
        // to the call's start, link.hpp); the credit comes back a latency
        // later.
        give_credit(vc, hp.flits, std::max(t0 + d, sim_now()) + p_.latency);
        h.q->give_back(hp);
    }
}

sc_time Link::earliest_exact(unsigned vc, unsigned flits, sc_time head) const {
    // An estimate from what the link holds now: its wire's end and the
    // packets queued before this one; a VC without the credits for this
    // one and those queued on it, never.
    const Hops& h = *hop_;
    unsigned vc_queued = 0;
    for (const HopPacket* p : h.vc[vc].queue.fifo) vc_queued += p->flits;
    const sc_time credited = credits_for(vc, vc_queued + flits);
    if (is_max_sim_time(credited) || credited > head) return max_sim_time();
    return std::max(head, h.wire_free) + flit_time_ * static_cast<double>(h.queued_flits);
}

std::size_t Link::exact_waiting() const {
    if (!hop_) return 0;
    std::size_t n = hop_->waiting;
    for (unsigned v = 0; v < hop_->lane_count; ++v) n += hop_->lanes[v].fifo.size() + (hop_->lanes[v].busy ? 1 : 0);
    for (const auto& q : hop_->queues) n += q->kept ? 1 : 0;   // (kept for its train)
    if (hop_cut_far_) n += hop_cut_far_->arriving();
    return n;
}

// Not back yet (neither taken nor on their way), and any difference
// between a VC's count of its credits on their way (Vc::on_way, which
// give_credit's answer rests on) and the list's: a count that drifted shows
// here, as credits not back.
std::size_t Link::exact_credits_out() const {
    if (!hop_) return 0;
    std::size_t n = 0;
    for (unsigned v = 0; v < p_.vcs; ++v) {
        unsigned listed = 0;
        for (const Hops::Pending& p : hop_->pending)
            if (p.vc == v) listed += p.flits;
        const unsigned counted = hop_->vc[v].on_way;
        n += p_.buffer_flits - hop_->vc[v].credits - listed;
        n += listed > counted ? listed - counted : counted - listed;
    }
    return n;
}

unsigned Link::buffer_hwm(unsigned vc) const {
    if (hop_) return vc < p_.vcs ? hop_->vc[vc].hwm : 0;
    return vc < vcs_.size() ? vcs_[vc].hwm : 0;
}

std::uint64_t Link::exact_refused() const { return hop_ ? hop_->refused->value() : 0; }

}   // namespace vrdmasim
