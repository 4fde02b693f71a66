// PacketTarget: a packet input called directly, the same call as through
// its target socket without the socket's indirections or a second lookup of
// the packet's extension (models/interconnect/README.md, "Direct calls"):
// a network interface's, by the Link in front of it (Link::connect(socket,
// sink)), and a Link's, by the network interface behind it (PacketOut).
#pragma once

#include <systemc>
#include <tlm>

#include "models/interconnect/exanet_packet.hpp"

namespace vrdmasim {

// A sender whose packets follow one another with nothing of it in between
// but its own arithmetic and a look at its own state (the PLDMA's packets
// of one block, models/dma/transmit.cpp). A target that would make it wait
// for room for a packet may instead keep that packet (accept_from()) and,
// when it takes the packet in, call next() at that simulated time, from its
// own context, as the sender would have gone on had it waited and been
// woken then: README.md, *Exact time order*.
class PacketTrain {
public:
    // The packet sent last was taken in; its sender may present the next
    // from `free` (the delay accept() would have returned, as a time).
    // Books it, then sends the next through the same target (accept_from,
    // which takes it in at once or keeps it) and returns true; or sends
    // none (all sent, or the sender stops) and returns false: the target
    // then wakes the sender's thread at this time.
    virtual bool next(sc_core::sc_time free) = 0;

protected:
    ~PacketTrain() = default;
};

class PacketTarget {
public:
    // What the socket's b_transport does with `gp`, whose ExanetPacket is
    // `pkt`.
    virtual void accept(tlm::tlm_generic_payload& gp, ExanetPacket& pkt, sc_core::sc_time& delay) = 0;
    // Whether accept() may wait() now, and so must be called from a thread
    // (a link in exact time order calls it from its hop queue's method
    // when not: README.md, *Exact time order*). Yes unless the target
    // knows better.
    virtual bool accept_may_wait() const { return true; }
    // accept() for a sender whose next packets `src` may send
    // (PacketTrain). False: as accept(). True: the packet was kept and
    // `src` went on from the time it was taken in until its next() returned
    // false; the caller (a thread) returns at that time, everything booked
    // by next(), `delay` the last packet's as accept() gives it.
    virtual bool accept_from(tlm::tlm_generic_payload& gp, ExanetPacket& pkt, sc_core::sc_time& delay,
                             PacketTrain& src) {
        (void)src;
        accept(gp, pkt, delay);
        return false;
    }

protected:
    ~PacketTarget() = default;
};

// A network interface's packet output: the initiator port its packets
// leave by and, once told (direct()), the PacketTarget bound at the port's
// other end, called instead of the port.
class PacketOut {
public:
    explicit PacketOut(sc_core::sc_port_b<tlm::tlm_fw_transport_if<>>& port) : port_(port) {}
    // `target` owns the socket the port is bound to (null: through the port).
    void direct(PacketTarget* target) { direct_ = target; }
    // The port's b_transport of `gp`, whose ExanetPacket is `pkt`.
    void send(tlm::tlm_generic_payload& gp, ExanetPacket& pkt, sc_core::sc_time& delay) {
        if (direct_) direct_->accept(gp, pkt, delay);
        else port_->b_transport(gp, delay);
    }
    // send() for a sender whose next packets `src` may send
    // (PacketTarget::accept_from; through the port: as send()).
    bool send_from(tlm::tlm_generic_payload& gp, ExanetPacket& pkt, sc_core::sc_time& delay, PacketTrain& src) {
        if (direct_) return direct_->accept_from(gp, pkt, delay, src);
        port_->b_transport(gp, delay);
        return false;
    }

private:
    sc_core::sc_port_b<tlm::tlm_fw_transport_if<>>& port_;
    PacketTarget* direct_ = nullptr;
};

}   // namespace vrdmasim
