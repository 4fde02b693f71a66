// Cut links: a board link whose two ends talk only by messages
// (board-link.handoff = message; README.md "Cut links").
//
// With handoff = call, a Link hands a packet to the far router inside its
// own call (link.hpp). A partitioned run cannot: the far board may be
// another process's. So a cut link's near end (the Link, which reserves the
// wire as always) posts a PacketMessage to the far end's delivery queue
// (CutLinkFar, through a PacketPort) and returns; the far end's delivery
// thread hands the packet to the far router when the simulation reaches its
// head's arrival, and posts a CreditMessage back (through a CreditPort) when
// the far router says its space is free, stamped a latency later. The near
// end (CutLinkNear) counts that space free only once the simulation reaches
// the stamp: a caller whose packet needs a credit not delivered yet waits
// for it, so that the start it gets is the one full knowledge of the
// credits would give.
//
// The two halves share nothing but the two ports, and the messages are
// plain data, so that a later step can put the halves in different
// processes (docs/scaling.md).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "src/core/context.hpp"
#include "src/core/lazy_event.hpp"
#include "src/core/lazy_thread.hpp"
#include "models/interconnect/exanet_packet.hpp"
#include "models/interconnect/packet_target.hpp"

namespace vrdmasim {

class Router;

// A packet crossing a cut link: what the far end needs to hand it on as the
// near end's call would have.
struct PacketMessage {
    std::uint32_t link = 0;   // the link's number (System: its index among the links)
    std::uint64_t seq = 0;   // per link, from 0, in the order the near end posts
    // Exact time order (hop_cut.hpp): the packet's serial, its identity among
    // same-time events (HopPacket::serial); 0 otherwise.
    std::uint64_t serial = 0;
    std::uint32_t vc = 0;   // the far-end VC buffer it occupies (0 on a one-VC link)
    std::uint32_t flits = 0;
    sc_core::sc_time head;   // absolute: the head reaches the far input buffer
    sc_core::sc_time tail;   // absolute: the tail does
    // The ExanetPacket extension: header, footer and the simulator's
    // bookkeeping (README.md "ExaNet packets"), the story included.
    ExanetHeader header;
    ExanetFooter footer;
    std::uint64_t transfer = 0;
    std::int32_t counter = -1;
    std::uint64_t nseq = 0;
    std::uint32_t src_node = 0, dst_node = 0, hops = 0;
    sc_core::sc_time injected;   // absolute: the packet's ExanetPacket::injected
    Tracer::Cause story;
    // The generic payload: command, address and the payload's bytes.
    tlm::tlm_command command = tlm::TLM_WRITE_COMMAND;
    std::uint64_t address = 0;
    std::vector<unsigned char> data;

    // Fills the packet's fields from `gp` and `pkt` (data copied into
    // `data`, whose storage is reused).
    void take(const tlm::tlm_generic_payload& gp, const ExanetPacket& pkt);
    // Writes them back into `gp` (data pointing at `data`) and `pkt`.
    void give(tlm::tlm_generic_payload& gp, ExanetPacket& pkt);
};

// The far end's answer: packet `seq`'s space in VC buffer `vc` is free,
// as far as the near end may know, from `at` on (the far router's freeing
// time plus the link's latency).
struct CreditMessage {
    std::uint32_t link = 0;
    std::uint64_t seq = 0;
    std::uint32_t vc = 0;
    std::uint32_t flits = 0;
    sc_core::sc_time at;
};

// Where a near end posts its packets (a far end's delivery queue).
class PacketPort {
public:
    // Takes `m`'s contents; `m` is left with storage to reuse.
    virtual void post(PacketMessage& m) = 0;

protected:
    ~PacketPort() = default;
};

// Where a far end posts its credits (a near end's inbox).
class CreditPort {
public:
    virtual void post(const CreditMessage& c) = 0;

protected:
    ~CreditPort() = default;
};

// The statistics of a link's line(s) (board-link.handoff = message).
struct LineStats {
    LineStats(const std::string& link, const SimContext& ctx);
    const std::string link;   // the link's name, for errors
    Counter& waits;
    Scalar& wait_us;
    Counter& moved;
};

// A link's line. With cut links a link's call may wait inside (for a cut
// link's credit, its own or one further on): a caller that comes meanwhile
// must not compute with the waiting packet's state half made, so it waits
// until that call is over, and callers that came before it go first. Every
// link of a system with cut links has one (LinkParams::may_wait); a cut
// link one per VC, so that a packet waiting for a credit of one VC holds
// back only the later packets of that VC (as the far end's VC buffers are
// separate, so are the waits for them).
class Turnstile {
public:
    explicit Turnstile(LineStats& stats) : stats_(stats) {}
    // Before a call reads the link's state: waits while another call is
    // inside or callers wait in line.
    void enter();
    // The call inside is about to wait (for a credit): std::logic_error if
    // it cannot (require_thread).
    void waiting(const char* why);
    // Whether the call inside has waited, in line or for a credit.
    bool waited() const { return waited_; }
    // Its packet was ready before its turn came, and is taken as ready then.
    void moved_head() { stats_.moved.inc(); }
    // When the call is over.
    void leave();
    // std::logic_error naming the caller and the link if it cannot wait
    // (an SC_METHOD, or code outside any process); `why`: what it would
    // wait for.
    void require_thread(const char* why) const;
    // Whether a call is inside, or callers wait in line (at the end of a
    // run: none may).
    bool busy() const { return inside_ || in_line_ > 0; }

private:
    LineStats& stats_;
    bool inside_ = false;
    std::uint64_t next_ticket_ = 0, serving_ = 0;
    unsigned in_line_ = 0;
    bool waited_ = false;   // the call inside has waited, since since_
    sc_core::sc_time since_;
    LazyEvent turn_ev_;   // the call inside left
};

// The near end's side of the protocol besides the Link's own reservation:
// the packet messages it posts, the credits it is told, and waiting for
// them. The Link keeps its credit ledger (which packets are in which VC
// buffer) and its lines; `ledger` is told every credit.
class CutLinkNear : public CreditPort {
public:
    // Records credit `c` in the link's ledger (the packet's entry gets its
    // stamp); false if no entry has that sequence number.
    using Ledger = std::function<bool(const CreditMessage&)>;
    CutLinkNear(const std::string& link_name, std::uint32_t number, const SimContext& ctx, unsigned vcs, Ledger ledger);

    void connect(PacketPort& far) { far_ = &far; }

    // The caller inside `line` (VC `vc`'s) waits until the simulation
    // reaches `at` (a credit's stamp: it is then delivered) or, `or_post`,
    // until the next credit of that VC is posted, whichever comes first;
    // at = sc_max_time: until the next post. std::logic_error naming the
    // process and the link if the caller cannot wait (an SC_METHOD, or no
    // process at all).
    void wait_for(Turnstile& line, unsigned vc, sc_core::sc_time at, bool or_post);
    // The same for the credit of packet `seq` alone (call order: the FIFO
    // front), not posted yet: the caller wakes once, at its stamp.
    void wait_for_credit(Turnstile& line, unsigned vc, std::uint64_t seq);
    // Posts packet `gp` / `pkt` to the far end; returns its sequence
    // number.
    std::uint64_t post(const tlm::tlm_generic_payload& gp, const ExanetPacket& pkt, unsigned vc, unsigned flits,
                       sc_core::sc_time head, sc_core::sc_time tail);

    // CreditPort.
    void post(const CreditMessage& c) override;

    std::uint64_t packets_posted() const { return posted_.value(); }
    std::uint64_t credits_received() const { return credits_.value(); }

private:
    const std::string link_name_;
    const std::uint32_t number_;
    Ledger ledger_;
    PacketPort* far_ = nullptr;
    PacketMessage out_;   // reused for every post
    std::uint64_t next_seq_ = 0;
    // Per VC: a caller waits for the next credit posted, and its event.
    struct Waiter {
        bool want_post = false;
        bool want_seq = false;   // only the credit of packet `seq`, notified at its stamp
        std::uint32_t seq = 0;
        LazyEvent posted;
    };
    std::deque<Waiter> waiters_;
    Counter& posted_;
    Counter& credits_;
};

// The far end: the link's delivery queues, one per VC buffer, each with its
// thread, which hands each packet to the far router (or network interface)
// at its head's arrival and posts its credit. One per VC: a packet that
// cannot go on yet (its call waits for a credit further on) holds back the
// packets of its own VC buffer only, as in the switch.
class CutLinkFar : public PacketPort {
public:
    // In a module's constructor (the delivery threads are LazyThreads of
    // that module, each spawned at its VC's first message). `latency`: the
    // credit's way back (*estimate*: the link's own latency).
    CutLinkFar(const std::string& link_name, std::uint32_t number, const SimContext& ctx, unsigned vcs,
               sc_core::sc_time latency);

    // Where packets go: input `port` of `router`, a network interface, or
    // (neither given) the initiator port `out`.
    void connect(Router& router, int port);
    void connect(PacketTarget& sink);
    void connect(sc_core::sc_port_b<tlm::tlm_fw_transport_if<>>& out) { out_ = &out; }
    void reply_to(CreditPort& near) { near_ = &near; }

    // PacketPort.
    void post(PacketMessage& m) override;

    // Packets posted and not delivered yet, and whether a delivery's call
    // is under way.
    std::size_t queued() const;
    bool delivering() const;
    std::uint64_t packets_delivered() const { return delivered_.value(); }
    std::uint64_t credits_posted() const { return credits_.value(); }
    std::uint64_t refused() const { return refused_.value(); }

private:
    struct Lane;
    void run(Lane& lane);
    void deliver(Lane& lane, PacketMessage& m);

    const std::string link_name_;
    const std::uint32_t number_;
    const sc_core::sc_time latency_;
    Router* router_ = nullptr;
    int port_ = 0;
    PacketTarget* sink_ = nullptr;
    sc_core::sc_port_b<tlm::tlm_fw_transport_if<>>* out_ = nullptr;
    CreditPort* near_ = nullptr;
    // The messages in slots (reused, with their data buffers) and the free
    // ones. A deque: a new slot moves no other (the one being delivered
    // lends the far router its bytes, and more messages may come while its
    // call waits).
    std::deque<PacketMessage> slots_;
    std::vector<std::uint32_t> free_;
    // Per VC: a heap of its slots by (head, seq), its thread and the
    // payload it hands on.
    struct Lane {
        std::vector<std::uint32_t> heap;
        WakeEvent wake;
        std::unique_ptr<LazyThread> thread;
        tlm::tlm_generic_payload gp;
        ExanetPacket* pkt = nullptr;   // owned by gp
        bool busy = false;
    };
    std::deque<Lane> lanes_;
    Counter& delivered_;
    Counter& credits_;
    Counter& late_;
    Scalar& late_us_;
    Counter& refused_;
};

// A cut link's far end as a module of its own, "far" under the link: a
// child of the Link in one process, of a RemoteLink on the rank of a
// partitioned run that holds its far router but not the link. Its events
// and threads have the same names either way (the order of same-time
// events is keyed by them: src/sim/event_order.hpp), and its statistics
// are the link's (`link_name`), as in one process.
class CutLinkEnd : public sc_core::sc_module {
public:
    tlm_utils::simple_initiator_socket<CutLinkEnd> out;
    // `latency`: the link's (the credits' way back, as CutLinkFar's).
    CutLinkEnd(sc_core::sc_module_name name, const std::string& link_name, std::uint32_t number, const SimContext& ctx,
               unsigned vcs, sc_core::sc_time latency);
    // Binds `out` to `router`'s next input (as Link::connect), which it
    // then calls directly; or to a network interface's packet input.
    void connect(Router& router);
    void connect(tlm::tlm_target_socket<>& socket, PacketTarget& sink);
    CutLinkFar& far() { return far_; }
    const CutLinkFar& far() const { return far_; }

private:
    CutLinkFar far_;
};

// The far end alone, under the link's name (a partitioned run's rank that
// holds the far router, not the link).
class RemoteLink : public sc_core::sc_module {
public:
    RemoteLink(sc_core::sc_module_name name, std::uint32_t number, const SimContext& ctx, unsigned vcs,
               sc_core::sc_time latency)
        : sc_module(name), end("far", this->name(), number, ctx, vcs, latency) {}
    CutLinkEnd end;
};

}   // namespace vrdmasim
