// Cut links in exact time order (router.link-order = exact; README.md
// *Exact time order: cut links*): a link whose far end is reached by
// messages, the board links between two ranks of a partitioned run (and,
// with board-link.handoff = message, every board link of one process).
//
// The near end is the Link itself: it serves its wire as any link in exact
// time order, and the packet it starts goes to the far end as a
// PacketMessage (cut_link.hpp) instead of an arrival event of its own
// queue. The far end (HopCutFar) turns the message back into a packet of
// its kernel's HopQueue and posts its arrival at the far router, with the
// key and serial the link's own arrival would have had; when the packet's
// tail leaves the far router's input buffer it posts a CreditMessage back,
// stamped a latency later, which the near end gives the link as any
// credit (Link::give_credit). Every message is for a time at least the
// link's latency after its sender's: in a partitioned run it is delivered
// at the end of the window it was made in, before its time. A link in
// exact time order decides at a time only by what happened before then, so
// the figures are those of the same link served in one process: a cut
// link changes no figure, on any number of ranks. So it has no statistics
// of its own (a partitioned run's stats.json is one process's, byte for
// byte); what it counts is for the end-of-run check `hop-events`: nothing
// still on its way at the end.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <systemc>
#include <tlm_utils/simple_initiator_socket.h>

#include "models/interconnect/cut_link.hpp"
#include "models/interconnect/hop_queue.hpp"
#include "models/interconnect/router.hpp"

namespace vrdmasim {

class Link;
class Router;

// The near end's messages: packets out to the far end, credits in to the
// link.
class HopCutNear : public CreditPort {
public:
    // Link `link`, number `number` among the system's links (its messages
    // name it), posting to `far`.
    HopCutNear(Link& link, std::uint32_t number, PacketPort& far);
    // Posts packet `hp`, started on the link, to the far end: it occupies
    // VC `vc` of the far buffer and its head reaches it at `head`.
    void send(const HopPacket& hp, unsigned vc, sc_core::sc_time head);
    // CreditPort: the far end's credit, given to the link.
    void post(const CreditMessage& c) override;
    std::uint64_t packets_posted() const { return posted_; }
    std::uint64_t credits_received() const { return credits_; }

private:
    Link& link_;
    const std::uint32_t number_;
    PacketPort& far_;
    PacketMessage out_;   // reused for every post (its bytes' storage too)
    std::uint64_t posted_ = 0, credits_ = 0;
};

// The far end: packets from messages into the kernel's HopQueue, credits
// back as messages.
class HopCutFar : public PacketPort, public HopHandler {
public:
    // `latency`: the link's, the credits' way back (*estimate*, as
    // CutLinkFar's).
    HopCutFar(const std::string& link_name, std::uint32_t number, sc_core::sc_time latency);
    // Its packets arrive at input `port` of `router`, as events of `q`
    // under the link's number `hop_number` there (HopQueue::key).
    void attach(HopQueue& q, std::uint32_t hop_number, Router& router, int port);
    void reply_to(CreditPort& near) { near_ = &near; }
    // PacketPort: a packet the near end started; its arrival is posted
    // for its head's time plus the router's pipeline.
    void post(PacketMessage& m) override;
    // HopHandler: the arrival, handed to the router.
    void on_hop_event(HopQueue& q, std::uint64_t key, void* what, std::uint32_t arg) override;
    // Packet `hp`'s tail left the far router's input buffer at `end`: the
    // router's count, and a credit to the near end a latency later.
    void freed(const HopPacket& hp, sc_core::sc_time end);
    // Messages taken whose packet has not reached the router yet (at the
    // end of a run: none).
    std::uint64_t arriving() const { return taken_ - delivered_; }
    std::uint64_t packets_delivered() const { return delivered_; }
    std::uint64_t credits_posted() const { return credits_; }
    std::uint32_t number() const { return number_; }

private:
    const std::string link_name_;
    const std::uint32_t number_;
    const sc_core::sc_time latency_;
    HopQueue* q_ = nullptr;
    std::uint32_t hop_number_ = 0;
    Router* router_ = nullptr;
    int port_ = 0;
    // The router input's buffer, measured here as a link measures its far
    // input (Router::ExactHeld), per VC of it.
    Router::ExactInput in_;
    std::vector<Router::ExactHeld> held_;
    CreditPort* near_ = nullptr;
    std::uint64_t taken_ = 0, delivered_ = 0, credits_ = 0;
};

// A cut link's far end on the rank of a partitioned run that holds the far
// router but not the link, under the link's name. Its socket takes the
// router input the link's would have (so that the router's later inputs
// keep their numbers); nothing is sent through it.
class RemoteHopLink : public sc_core::sc_module {
public:
    tlm_utils::simple_initiator_socket<RemoteHopLink> out;
    RemoteHopLink(sc_core::sc_module_name name, std::uint32_t number, sc_core::sc_time latency);
    // Binds `out` to `router`'s next input.
    void connect(Router& router);
    // Then: its packets' events in `q` under `hop_number`.
    void attach(HopQueue& q, std::uint32_t hop_number);
    HopCutFar& far() { return far_; }
    const HopCutFar& far() const { return far_; }

private:
    HopCutFar far_;
    Router* router_ = nullptr;
    int port_ = 0;
};

}   // namespace vrdmasim
