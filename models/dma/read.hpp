// RDMA read (DESC_OP = Read): the initiator's channel sends a read request
// (ExaNet type 1) naming the remote source, its length and the initiator's
// destination; the responder serves it on its channel of the request's
// protection domain as a write back to the initiator, through the same
// transmit scheduler (so a source fault parks that channel, stalls, or
// fails) and the initiator's receiver (so a destination fault is NACKed and
// retransmitted, or NetVM-buffered). The reply's packets carry the
// initiator's transfer id and the footer's reply bit; once the last byte is
// in the initiator's memory the initiator completes the read (record,
// interrupt) and acknowledges the reply, which ends the responder's work
// without a record. Any failure (no channel of the domain, a fault not
// resolved, a bad address) completes the read with an error at the
// initiator. README.md "RDMA read".
#pragma once

#include <cstdint>
#include <vector>

#include <systemc>

#include "models/dma/channel_registers.hpp"
#include "models/dma/control_packets.hpp"
#include "models/dma/params.hpp"
#include "models/dma/stats.hpp"
#include "models/interconnect/exanet_packet.hpp"

namespace vrdmasim {

class Transmit;
class Receiver;

class ReadProtocol {
public:
    // The read request's payload: transfer id, length, initiator's destination VA.
    static constexpr unsigned kRequestBytes = 24;

    ReadProtocol(ChannelRegisters& channels, Transmit& transmit, Receiver& receiver, ControlPackets& control,
                 PldmaStats& stats, PldmaTrace& trace, unsigned node, const std::vector<std::uint32_t>& coord_of);
    ReadProtocol(const ReadProtocol&) = delete;
    ReadProtocol& operator=(const ReadProtocol&) = delete;

    // Initiator: fill the read request of descriptor `d` (on channel `c`):
    // header and footer into `p`, kRequestBytes of payload into `payload`.
    // `at`: when it leaves (narration).
    void request(ExanetPacket& p, unsigned char* payload, unsigned c, const Descriptor& d) const;

    // Responder: a read request arrived, its tail at `tail`. Queued as reply
    // work on the channel of its protection domain; none (or a malformed
    // request): an error response to the initiator.
    void serve_request(const ExanetPacket& p, const unsigned char* data, unsigned len, sc_core::sc_time tail);
    // Responder: the reply `d` ended at `at`: acknowledged by the initiator
    // (`ok`), or failed. `tell`: the failure is this engine's (its source
    // read failed, the network refused a packet): the initiator hears of it
    // through an error response; otherwise the failure came from the
    // initiator, which knows.
    void reply_finished(const Descriptor& d, bool ok, bool tell, sc_core::sc_time at, const Tracer::Cause& story);

    // Initiator: the channel of the outstanding read reply packet `p`
    // belongs to (same id, asked of p's sender, same protection domain);
    // -1: no such read (the reply is not written).
    int reply_channel(const ExanetPacket& p);
    // Initiator: the reply of read `id` is all in memory (`ok`, `bytes`) or
    // failed, at `at`: the read completes (record, interrupt).
    void reply_received(std::uint64_t id, bool ok, std::uint64_t bytes, sc_core::sc_time at);
    // Initiator: the responder answered read `d` with an error: forget what
    // of its reply arrived (nothing more will).
    void responder_failed(const Descriptor& d);

private:
    void error_response(std::uint64_t id, unsigned node, std::uint32_t coord, std::uint16_t pd, sc_core::sc_time at);

    ChannelRegisters& channels_;
    Transmit& transmit_;
    Receiver& receiver_;
    ControlPackets& control_;
    PldmaStats& stats_;
    PldmaTrace& trace_;
    const unsigned node_;
    const std::vector<std::uint32_t>& coord_of_;
};

}   // namespace vrdmasim
