// PacketTarget: a network interface's packet input that the Link in front of
// it calls directly (Link::connect(socket, sink)), the same call as through
// its target socket without the socket's indirections or a second lookup of
// the packet's extension (models/interconnect/README.md, "Direct calls").
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

protected:
    ~PacketTarget() = default;
};

}  // namespace vrdmasim
