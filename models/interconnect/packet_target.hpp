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

private:
    sc_core::sc_port_b<tlm::tlm_fw_transport_if<>>& port_;
    PacketTarget* direct_ = nullptr;
};

}   // namespace vrdmasim
