#include "models/interconnect/cut_link.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "models/interconnect/router.hpp"
#include "src/core/sim_now.hpp"

namespace vrdmasim {

using sc_core::sc_time;

// ---------------------------------------------------------------- messages

void PacketMessage::take(const tlm::tlm_generic_payload& gp, const ExanetPacket& pkt) {
    header = pkt.header;
    footer = pkt.footer;
    transfer = pkt.transfer;
    counter = pkt.counter;
    nseq = pkt.nseq;
    src_node = pkt.src_node;
    dst_node = pkt.dst_node;
    hops = pkt.hops;
    injected = pkt.injected;
    story = pkt.story;
    command = gp.get_command();
    address = gp.get_address();
    const unsigned char* p = gp.get_data_ptr();
    data.assign(p, p + gp.get_data_length());   // the vector's storage is kept: no allocation once it is large enough
}

void PacketMessage::give(tlm::tlm_generic_payload& gp, ExanetPacket& pkt) {
    pkt.header = header;
    pkt.footer = footer;
    pkt.transfer = transfer;
    pkt.counter = counter;
    pkt.nseq = nseq;
    pkt.src_node = src_node;
    pkt.dst_node = dst_node;
    pkt.hops = hops;
    pkt.injected = injected;
    pkt.story = story;
    pkt.tail = tail;
    gp.set_command(command);
    gp.set_address(address);
    gp.set_data_ptr(data.data());
    gp.set_data_length(static_cast<unsigned>(data.size()));
    gp.set_streaming_width(static_cast<unsigned>(data.size()));
    gp.set_byte_enable_ptr(nullptr);
    gp.set_byte_enable_length(0);
    gp.set_dmi_allowed(false);
    gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
}

// ---------------------------------------------------------------- lines

LineStats::LineStats(const std::string& name, const SimContext& ctx)
    : link(name),
      waits(ctx.stats.counter(name + ".handoff.waits", "",
                              "packets whose call waited: behind an earlier call that waited, or (a cut link) for a "
                              "credit not delivered yet (board-link.handoff = message)")),
      wait_us(ctx.stats.scalar(name + ".handoff.wait_time", "us",
                               "simulated time those calls waited (it delays the call; the packet's times are "
                               "computed as before, unless handoff.moved_heads)",
                               Scalar::Kind::Sum)),
      moved(ctx.stats.counter(name + ".handoff.moved_heads", "",
                              "packets ready before their call's turn came (it waited in line), taken as ready then")) {
}

void Turnstile::require_thread(const char* why) const {
    const sc_core::sc_process_handle h = sc_core::sc_get_current_process_handle();
    if (h.valid() && h.proc_kind() != sc_core::SC_METHOD_PROC_) return;
    const std::string who = h.valid() ? "SC_METHOD " + std::string(h.name()) : std::string("code outside any process");
    throw std::logic_error(who + " sends a packet on link " + stats_.link + ", which " + why +
                           " (board-link.handoff = message): only a thread can wait");
}

void Turnstile::enter() {
    if (!inside_ && in_line_ == 0) {
        inside_ = true;
        waited_ = false;
        return;
    }
    // Another call is inside, waiting: this one goes after it, and after
    // those already in line, in their order.
    require_thread("must wait behind an earlier packet's call that waits for a cut link's credit");
    const sc_time since = sim_now();
    const std::uint64_t ticket = next_ticket_++;
    ++in_line_;
    while (inside_ || serving_ != ticket) sc_core::wait(turn_ev_.get());
    --in_line_;
    ++serving_;
    inside_ = true;
    waited_ = true;
    since_ = since;
}

void Turnstile::waiting(const char* why) {
    require_thread(why);
    if (waited_) return;
    waited_ = true;
    since_ = sim_now();
}

void Turnstile::leave() {
    if (waited_) {
        stats_.waits.inc();
        stats_.wait_us.add(to_us(sim_now() - since_));
        waited_ = false;
    }
    inside_ = false;
    if (in_line_ > 0) turn_ev_.get().notify(sc_core::SC_ZERO_TIME);
}

// ---------------------------------------------------------------- near end

CutLinkNear::CutLinkNear(const std::string& link_name, std::uint32_t number, const SimContext& ctx, unsigned vcs,
                         Ledger ledger)
    : link_name_(link_name),
      number_(number),
      ledger_(std::move(ledger)),
      waiters_(vcs),
      posted_(
          ctx.stats.counter(link_name + ".handoff.packets_posted", "",
                            "packets this cut link's near end posted to its far end (board-link.handoff = message)")),
      credits_(ctx.stats.counter(link_name + ".handoff.credits_received", "",
                                 "credit messages the near end received from the far end")) {}

void CutLinkNear::wait_for(Turnstile& line, unsigned vc, sc_time at, bool or_post) {
    line.waiting("needs a credit not delivered yet");
    const sc_time now = sim_now();
    Waiter& w = waiters_[vc];
    // Every wake-up through the one event, whatever woke it: whether a
    // credit was posted before the wait began (its stamp then is `at`) or
    // during it (its post notifies) depends on where the far end is (in
    // one process, or on another rank whose credits come at a window's
    // end), and a timeout would be another event, another place among the
    // same time's (src/sim/event_order.hpp).
    sc_core::sc_event& ev = w.posted.get();
    if (at != max_sim_time()) ev.notify(at - now);
    w.want_post = or_post || at == max_sim_time();
    sc_core::wait(ev);
    w.want_post = false;
    ev.cancel();   // a later credit's wake-up still pending is not for the next wait
}

void CutLinkNear::wait_for_credit(Turnstile& line, unsigned vc, std::uint64_t seq) {
    line.waiting("needs a credit not delivered yet");
    Waiter& w = waiters_[vc];
    w.want_seq = true;
    w.seq = static_cast<std::uint32_t>(seq);
    sc_core::wait(w.posted.get());
}

std::uint64_t CutLinkNear::post(const tlm::tlm_generic_payload& gp, const ExanetPacket& pkt, unsigned vc,
                                unsigned flits, sc_time head, sc_time tail) {
    out_.take(gp, pkt);
    out_.link = number_;
    out_.seq = next_seq_++;
    out_.vc = vc;
    out_.flits = flits;
    out_.head = head;
    out_.tail = tail;
    posted_.inc();
    const std::uint64_t seq = out_.seq;
    far_->post(out_);
    return seq;
}

void CutLinkNear::post(const CreditMessage& c) {
    if (c.at < sim_now())
        throw std::logic_error("cut link " + link_name_ + ": the credit of packet " + std::to_string(c.seq) +
                               " is stamped " + c.at.to_string() + ", before the present " + sim_now().to_string());
    if (c.vc >= waiters_.size() || !ledger_(c))
        throw std::logic_error("cut link " + link_name_ + ": a credit for packet " + std::to_string(c.seq) +
                               ", which holds no space");
    credits_.inc();
    Waiter& w = waiters_[c.vc];
    if (w.want_seq && w.seq == static_cast<std::uint32_t>(c.seq)) {
        // The caller waits for this one: it wakes when it is delivered.
        w.want_seq = false;
        w.posted.get().notify(c.at - sim_now());
    } else if (w.want_post) {
        // At its stamp, not now: when a credit is posted is not something
        // the near end can know (behind a cut between ranks it comes at the
        // end of a window), only when it counts. Of several posted before
        // the caller wakes, the earliest stamp wakes it (an event keeps its
        // earliest notification).
        w.posted.get().notify(c.at - sim_now());
    }
}

// ---------------------------------------------------------------- far end

CutLinkFar::CutLinkFar(const std::string& link_name, std::uint32_t number, const SimContext& ctx, unsigned vcs,
                       sc_time latency)
    : link_name_(link_name),
      number_(number),
      latency_(latency),
      lanes_(vcs),
      delivered_(ctx.stats.counter(link_name + ".handoff.packets_delivered", "",
                                   "packets the far end handed on at their head's arrival (board-link.handoff = "
                                   "message)")),
      credits_(ctx.stats.counter(link_name + ".handoff.credits_posted", "", "credit messages the far end posted back")),
      late_(ctx.stats.counter(link_name + ".handoff.late_deliveries", "",
                              "packets handed on after their head's arrival: the delivery thread of their VC was still "
                              "busy with an earlier packet (its call waited for a credit further on), or the packet "
                              "was posted late (handoff.moved_heads)")),
      late_us_(ctx.stats.scalar(link_name + ".handoff.late_time", "us", "how late those packets were handed on, in all",
                                Scalar::Kind::Sum)),
      refused_(ctx.stats.counter(link_name + ".handoff.refused", "",
                                 "packets the far end refused (no route, too large), which their sender cannot be "
                                 "told of: must stay 0")) {
    for (unsigned v = 0; v < vcs; ++v) {
        Lane& lane = lanes_[v];
        lane.pkt = new ExanetPacket;
        lane.gp.set_extension(lane.pkt);
        const std::string name = "deliver" + std::to_string(v);
        lane.thread = std::make_unique<LazyThread>(name.c_str(), lane.wake, [this, &lane] { run(lane); });
    }
}

void CutLinkFar::connect(Router& router, int port) {
    router_ = &router;
    port_ = port;
}

void CutLinkFar::connect(PacketTarget& sink) { sink_ = &sink; }

std::size_t CutLinkFar::queued() const {
    std::size_t n = 0;
    for (const Lane& l : lanes_) n += l.heap.size();
    return n;
}

bool CutLinkFar::delivering() const {
    for (const Lane& l : lanes_)
        if (l.busy) return true;
    return false;
}

namespace {
// Min-heap order of slots by (head, seq).
struct Later {
    const std::deque<PacketMessage>& slots;
    bool operator()(std::uint32_t a, std::uint32_t b) const {
        const PacketMessage& x = slots[a];
        const PacketMessage& y = slots[b];
        return x.head > y.head || (x.head == y.head && x.seq > y.seq);
    }
};
}   // namespace

void CutLinkFar::post(PacketMessage& m) {
    std::uint32_t slot;
    if (free_.empty()) {
        slot = static_cast<std::uint32_t>(slots_.size());
        slots_.emplace_back();
    } else {
        slot = free_.back();
        free_.pop_back();
    }
    // The message moves in; `m` gets the slot's old storage to reuse.
    std::swap(slots_[slot], m);
    Lane& lane = lanes_[slots_[slot].vc < lanes_.size() ? slots_[slot].vc : 0];
    lane.heap.push_back(slot);
    std::push_heap(lane.heap.begin(), lane.heap.end(), Later{slots_});
    if (lane.heap.front() == slot) {
        // The earliest now: the thread wakes at its head (an earlier
        // notification stands, a later one is replaced).
        const sc_time now = sim_now();
        lane.wake.notify(slots_[slot].head > now ? slots_[slot].head - now : sc_core::SC_ZERO_TIME);
    }
}

void CutLinkFar::run(Lane& lane) {
    for (;;) {
        while (lane.heap.empty()) sc_core::wait(lane.wake.get());
        const std::uint32_t slot = lane.heap.front();
        const sc_time now = sim_now();
        if (slots_[slot].head > now) {
            lane.wake.notify(slots_[slot].head - now);
            sc_core::wait(lane.wake.get());
            continue;
        }
        std::pop_heap(lane.heap.begin(), lane.heap.end(), Later{slots_});
        lane.heap.pop_back();
        lane.busy = true;
        deliver(lane, slots_[slot]);
        lane.busy = false;
        free_.push_back(slot);
    }
}

void CutLinkFar::deliver(Lane& lane, PacketMessage& m) {
    const sc_time t0 = sim_now();
    if (t0 > m.head) {
        late_.inc();
        late_us_.add(to_us(t0 - m.head));
    }
    m.give(lane.gp, *lane.pkt);
    // The slot stays this lane's until the call returns (the payload's
    // bytes are in it).
    CreditMessage c{number_, m.seq, m.vc, m.flits, sc_time()};
    sc_time d = sc_core::SC_ZERO_TIME;
    if (router_) router_->forward(port_, lane.gp, lane.pkt, d);
    else if (sink_) sink_->accept(lane.gp, *lane.pkt, d);
    else (*out_)->b_transport(lane.gp, d);
    delivered_.inc();
    if (!lane.gp.is_response_ok()) refused_.inc();
    // The far router has freed the packet's space at t0 + d (delays are
    // relative to the call's start, link.hpp); the near end learns it a
    // latency later.
    c.at = t0 + d + latency_;
    credits_.inc();
    near_->post(c);
}

}   // namespace vrdmasim

namespace vrdmasim {

CutLinkEnd::CutLinkEnd(sc_core::sc_module_name name, const std::string& link_name, std::uint32_t number,
                       const SimContext& ctx, unsigned vcs, sc_core::sc_time latency)
    : sc_module(name), out("out"), far_(link_name, number, ctx, vcs, latency) {
    far_.connect(out);
}

void CutLinkEnd::connect(Router& router) {
    out.bind(router.in);
    far_.connect(router, static_cast<int>(router.in.size()) - 1);
}

void CutLinkEnd::connect(tlm::tlm_target_socket<>& socket, PacketTarget& sink) {
    out.bind(socket);
    far_.connect(sink);
}

}   // namespace vrdmasim
