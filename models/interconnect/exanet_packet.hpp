// ExaNet packets as TLM-2.0 payload extensions.
//
// A packet travels as a tlm_generic_payload (data pointer = payload bytes,
// length = payload size, address = destination virtual address) carrying an
// ExanetPacket extension with the header and footer fields of the ExaNet
// format (docs/references.md: 128-bit flits; header VC 5 b, protection domain 16 b,
// destination coordinate 22 b, type 5 b, size 14 b, destination VA 42-44 b,
// header CRC; footer sequence 14 b, first/last, notify, source coordinate,
// payload CRC) plus simulator bookkeeping.
#pragma once

#include <cstdint>

#include <systemc>
#include <tlm>

#include "src/core/trace.hpp"
#include "models/interconnect/transfer_id.hpp"

namespace vrdmasim {

// The header's 5-bit type. 0, 2, 6 and 10 are the ones the ExaNeSt
// engine's write path uses; the read request and the atomics' request and
// reply are numbers of this simulator's own choosing (the ExaNet documents
// we have do not give theirs).
enum class PacketType : std::uint8_t {
    RdmaWrite = 0,
    ReadRequest = 1,   // RDMA read: the responder sends the region back as writes
    Control = 2,
    AtomicRequest = 3,   // network atomic: executed by the target's engine
    AtomicReply = 4,   // its old value
    Completion = 6,
    Response = 10,   // ACK / NACK
    // Block I/O between the FPGAs of a QFDB (models/os/remote_block.hpp): a
    // file read command to the SSD's node, and its data coming back. Also
    // numbers of this simulator's choosing.
    BlockRequest = 12,
    BlockData = 13,
};

constexpr unsigned kFlitBytes = 16;   // 128-bit flits
constexpr std::uint32_t kMaxPacketPayload = (1u << 14) - 1;   // 14-bit size field

struct ExanetHeader {
    std::uint8_t vc = 0;   // 5 bits
    std::uint16_t pdid = 0;   // protection domain
    std::uint32_t dst_coord = 0;   // 22 bits
    PacketType type = PacketType::RdmaWrite;
    std::uint16_t size = 0;   // payload bytes, 14 bits
    std::uint64_t dst_va = 0;   // destination (virtual) address, 44 bits
};

struct ExanetFooter {
    std::uint16_t seq = 0;   // 14 bits, per transfer
    bool first = false;
    bool last = false;
    bool notify = false;
    // RDMA read: this data packet is part of the reply to a read request
    // of the receiving node (its transfer id is the initiator's). A spare
    // footer bit of this simulator's choosing, like the read request's type.
    bool reply = false;
    std::uint32_t src_coord = 0;   // 22 bits
};

class ExanetPacket : public tlm::tlm_extension<ExanetPacket> {
public:
    ExanetHeader header;
    // (The simulator's record of the hops, beside the header: a hop reads
    // both, and on a large torus each line of a packet it touches is a miss
    // of the caches.)
    // Absolute time at which the packet's tail flit is available at the hop
    // that currently holds it (a link may not finish sending before then).
    sc_core::sc_time tail;
    // How long the hop that last sent it took to serialise it (its bytes
    // come in over [tail - wire, tail] at the far end).
    sc_core::sc_time wire;
    // When its head started on the first link it crossed (its source's NI
    // link, `inject`): where it entered the network. Set by that link.
    sc_core::sc_time injected;
    unsigned hops = 0;
    ExanetFooter footer;

    // Simulator bookkeeping, not bits on the wire (or, for transfer, carried
    // in the payload of control packets in hardware):
    std::uint64_t transfer = 0;   // sender's transfer id
    // The event counter a write names (DESC_FLAGS kFlagCounter), in its last
    // packet; -1: none. On the wire: 8 spare footer bits (models/dma/README.md
    // "Event counters").
    std::int32_t counter = -1;
    // The notification sequence number of a numbered write, plus one (0:
    // none), in each of its packets (dma.notify-window; models/dma/README.md
    // "Ordered notifications": on the wire, log2(2 W) spare header bits).
    std::uint64_t nseq = 0;
    unsigned src_node = 0;   // node indices matching src/dst coordinates
    unsigned dst_node = 0;
    // The narrated story's step that sent it (a retransmit request's), if noted.
    Tracer::Cause story;

    // Header flit + payload flits + footer flit.
    unsigned flits() const { return 2u + (header.size + kFlitBytes - 1) / kFlitBytes; }

    tlm::tlm_extension_base* clone() const override { return new ExanetPacket(*this); }
    void copy_from(const tlm::tlm_extension_base& other) override { *this = static_cast<const ExanetPacket&>(other); }
};

}   // namespace vrdmasim
