// RDMA read: the request, its service at the responder and the reply's end
// at both engines (see read.hpp; README.md "RDMA read").
#include "models/dma/read.hpp"

#include <cstring>
#include <sstream>

#include "models/dma/receive.hpp"
#include "models/dma/transmit.hpp"

namespace vrdmasim {

using sc_core::sc_time;

ReadProtocol::ReadProtocol(ChannelRegisters& channels, Transmit& transmit, Receiver& receiver, ControlPackets& control,
                           PldmaStats& stats, PldmaTrace& trace, unsigned node,
                           const std::vector<std::uint32_t>& coord_of)
    : channels_(channels),
      transmit_(transmit),
      receiver_(receiver),
      control_(control),
      stats_(stats),
      trace_(trace),
      node_(node),
      coord_of_(coord_of) {}

// ---------------------------------------------------------------- initiator

void ReadProtocol::request(ExanetPacket& p, unsigned char* payload, unsigned c, const Descriptor& d) const {
    // Header: type 1, the responder's coordinate, the channel's protection
    // domain, the remote source VA where a write carries its destination;
    // footer: our coordinate. Payload: the transfer id, the length and our
    // destination VA.
    p.header = ExanetHeader{};
    p.header.type = PacketType::ReadRequest;
    p.header.dst_coord = coord_of_.at(d.dst_node);
    p.header.pdid = d.pd;
    p.header.vc = static_cast<std::uint8_t>(c & 0x1f);
    p.header.size = kRequestBytes;
    p.header.dst_va = d.src;
    p.footer = ExanetFooter{};
    p.footer.first = p.footer.last = true;
    p.footer.src_coord = coord_of_.at(node_);
    p.transfer = d.id;
    p.src_node = node_;
    p.dst_node = d.dst_node;
    std::memcpy(payload, &d.id, 8);
    std::memcpy(payload + 8, &d.len, 8);
    std::memcpy(payload + 16, &d.dst, 8);
}

int ReadProtocol::reply_channel(const ExanetPacket& p) {
    const Outstanding* o = transmit_.outstanding(p.transfer);
    if (!o || o->desc.op != DescOp::Read || o->desc.reply || o->desc.dst_node != p.src_node ||
        o->desc.pd != p.header.pdid)
        return -1;
    return static_cast<int>(o->desc.channel);
}

void ReadProtocol::reply_received(std::uint64_t id, bool ok, std::uint64_t bytes, sc_time at) {
    const Outstanding* o = transmit_.outstanding(id);
    if (!o || o->desc.op != DescOp::Read) return;   // completed already (the responder's error came first)
    transmit_.finish(id, ok ? kStatusOk : kStatusError, ok ? bytes : 0, at);
}

void ReadProtocol::responder_failed(const Descriptor& d) { receiver_.forget(InboundKey{d.dst_node, d.id}); }

// ---------------------------------------------------------------- responder

void ReadProtocol::error_response(std::uint64_t id, unsigned node, std::uint32_t coord, std::uint16_t pd, sc_time at) {
    ControlOut e;
    e.kind = ControlKind::ErrorAck;
    e.id = id;
    e.node = node;
    e.coord = coord;
    e.pd = pd;
    e.at = at;
    control_.queue(e);
}

void ReadProtocol::serve_request(const ExanetPacket& p, const unsigned char* data, unsigned len, sc_time tail) {
    stats_.read_requests.inc();
    Descriptor d;
    if (len >= kRequestBytes) {
        std::memcpy(&d.id, data, 8);
        std::memcpy(&d.len, data + 8, 8);
        std::memcpy(&d.dst, data + 16, 8);
    }
    d.src = p.header.dst_va;
    d.dst_node = p.src_node;
    d.pd = p.header.pdid;
    d.posted = tail;
    d.reply = true;
    const int c = channels_.by_domain(d.pd);
    if (c < 0 || len < kRequestBytes || d.len == 0 || d.id != p.transfer) {
        // No channel of that domain here (or a request no initiator sends):
        // nothing is read; the initiator completes with an error.
        if (c < 0) stats_.pd_violations.inc();
        else stats_.rx_errors.inc();
        stats_.read_replies_failed.inc();
        error_response(p.transfer, p.src_node, p.footer.src_coord, d.pd, tail);
        if (trace_.tracer.noting()) {
            std::ostringstream os;
            os << "read " << transfer_name(p.transfer) << " from node" << p.src_node << " REFUSED: "
               << (c < 0 ? "no channel of protection domain " + std::to_string(d.pd)
                         : std::string("malformed request"));
            trace_.tracer.note(Tracer::Track{}, "read refused", tail, sc_core::SC_ZERO_TIME, trace_.who, os.str(),
                               p.story);
        }
        return;
    }
    d.channel = static_cast<unsigned>(c);
    // The serving channel's stream ID: the reply's source reads (and a park
    // on their fault, matched by stream and page) are in the address space
    // of this domain's process here.
    d.sid = channels_[d.channel].sid;
    Work w;
    w.id = d.id;
    w.desc = d;
    w.earliest = tail;
    if (trace_.tracer.noting()) {
        std::ostringstream os;
        os << "read " << transfer_name(d.id) << " from node" << d.dst_node
           << ": the request arrives; the engine serves " << d.len << " B at 0x" << std::hex << d.src << std::dec
           << " on channel " << c << ", no software involved";
        w.story = trace_.tracer.note(trace_.track, "read request", tail, sc_core::SC_ZERO_TIME, trace_.who, os.str(),
                                     p.story, {{"transfer", Tracer::json_string(transfer_name(d.id))}});
    }
    channels_[d.channel].work.push_back(w);   // behind the channel's own work, in order
    channels_.doorbell().notify(from_now(tail));
}

void ReadProtocol::reply_finished(const Descriptor& d, bool ok, bool tell, sc_time at, const Tracer::Cause& story) {
    if (ok) stats_.read_requests_served.inc();
    else stats_.read_replies_failed.inc();
    if (!ok && tell) error_response(d.id, d.dst_node, coord_of_.at(d.dst_node), d.pd, at);
    Tracer& tracer = trace_.tracer;
    if (tracer.enabled())
        tracer.async_span(trace_.track, ok ? "read reply" : "read reply (error)", d.id, d.posted, at,
                          {{"id", Tracer::json_string(transfer_name(d.id))},
                           {"bytes", Tracer::json_number(d.len)},
                           {"channel", Tracer::json_number(static_cast<std::uint64_t>(d.channel))},
                           {"initiator", Tracer::json_number(static_cast<std::uint64_t>(d.dst_node))}});
    if (tracer.noting()) {
        std::ostringstream os;
        os << "read " << transfer_name(d.id) << " for node" << d.dst_node
           << (ok     ? ": reply acknowledged, "
               : tell ? ": reply FAILED here, error to the initiator, "
                      : ": reply FAILED at the initiator, ")
           << to_us(at - d.posted) << " us after the request";
        tracer.note(trace_.track, ok ? "reply acknowledged" : "reply failed", at, sc_core::SC_ZERO_TIME, trace_.who,
                    os.str(), story, {{"transfer", Tracer::json_string(transfer_name(d.id))}});
    }
}

}   // namespace vrdmasim
