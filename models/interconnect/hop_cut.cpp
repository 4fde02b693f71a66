#include "models/interconnect/hop_cut.hpp"

#include <stdexcept>
#include <utility>

#include "models/interconnect/link.hpp"
#include "models/interconnect/router.hpp"

namespace vrdmasim {

using sc_core::sc_time;

HopCutNear::HopCutNear(Link& link, std::uint32_t number, PacketPort& far) : link_(link), number_(number), far_(far) {}

void HopCutNear::send(const HopPacket& hp, unsigned vc, sc_time head) {
    PacketMessage& m = out_;
    m.take(hp.gp, *hp.pkt);
    m.link = number_;
    m.seq = posted_;
    m.serial = hp.serial;
    m.vc = vc;
    m.flits = hp.flits;
    m.head = head;
    m.tail = hp.pkt->tail;
    ++posted_;
    far_.post(m);
}

void HopCutNear::post(const CreditMessage& c) {
    ++credits_;
    link_.give_credit(c.vc, c.flits, c.at);
}

HopCutFar::HopCutFar(const std::string& link_name, std::uint32_t number, sc_time latency)
    : link_name_(link_name), number_(number), latency_(latency) {}

void HopCutFar::attach(HopQueue& q, std::uint32_t hop_number, Router& router, int port) {
    q_ = &q;
    hop_number_ = hop_number;
    // (In one process the cut link itself serves its number, and hands
    // this end its arrivals: Link::cut_hops_here.)
    if (!q.serves(hop_number)) q.serve_link(hop_number, *this);
    router_ = &router;
    port_ = port;
    in_ = router.exact_input(static_cast<unsigned>(port));
    held_.assign(in_.vcs, Router::ExactHeld{});
}

void HopCutFar::post(PacketMessage& m) {
    if (!q_ || !near_)
        throw std::logic_error(link_name_ + ": a cut link's far end got a packet before it was attached");
    HopPacket& hp = q_->take_packet();
    m.give(hp.gp, *hp.pkt);
    // The bytes are the packet's now; the message keeps the packet's old
    // storage, to reuse.
    hp.data.swap(m.data);
    hp.gp.set_data_ptr(hp.data.data());
    hp.gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    hp.serial = m.serial;
    hp.flits = m.flits;
    hp.ready = m.head;
    hp.up = nullptr;
    hp.cut = this;
    hp.up_vc = m.vc;
    hp.in_port = port_;
    ++taken_;
    // The event the link's own arrival would have been: the same time, key
    // and serial.
    q_->post(HopQueue::Event{m.head + router_->pipeline(), HopQueue::key(HopQueue::Arrival, hop_number_, m.vc),
                             m.serial, &hp});
}

void HopCutFar::on_hop_event(HopQueue&, std::uint64_t, void* what, std::uint32_t) {
    HopPacket& hp = *static_cast<HopPacket*>(what);
    ++delivered_;
    const int v = in_.arriving(hp.up_vc);
    router_->exact_arrive(port_, hp, hp.ready, v < 0 ? nullptr : &held_[unsigned(v)], in_.flits,
                          v < 0 ? 0u : unsigned(v));
}

void HopCutFar::freed(const HopPacket& hp, sc_time end) {
    if (const int v = in_.freeing(hp.up_vc); v >= 0) held_[unsigned(v)].freed(end, hp.flits);
    ++credits_;
    near_->post(CreditMessage{number_, 0, hp.up_vc, hp.flits, end + latency_});
}

RemoteHopLink::RemoteHopLink(sc_core::sc_module_name name, std::uint32_t number, sc_time latency)
    : sc_module(name), out("out"), far_(this->name(), number, latency) {}

void RemoteHopLink::connect(Router& router) {
    out.bind(router.in);
    router_ = &router;
    port_ = static_cast<int>(router.in.size()) - 1;
}

void RemoteHopLink::attach(HopQueue& q, std::uint32_t hop_number) {
    if (!router_) throw std::logic_error(std::string(name()) + ": attached before it was connected to its router");
    far_.attach(q, hop_number, *router_, port_);
}

}   // namespace vrdmasim
