// The engine's responses, control and notification packets (see
// control_packets.hpp).
#include "models/dma/control_packets.hpp"

#include <cstring>
#include <sstream>

#include "models/dma/receive.hpp"
#include "models/dma/records.hpp"

namespace vrdmasim {

using sc_core::sc_time;

ControlPackets::ControlPackets(PacketOut& net_out, unsigned node, std::uint32_t own_coord, PldmaStats& stats,
                               PldmaTrace& trace, Receiver& receiver)
    : net_out_(net_out),
      node_(node),
      own_coord_(own_coord),
      stats_(stats),
      trace_(trace),
      receiver_(receiver),
      ack_pkt_(*new ExanetPacket),
      ctl_pkt_(*new ExanetPacket) {
    ack_gp_.set_extension(&ack_pkt_);
    ctl_gp_.set_extension(&ctl_pkt_);
}

void ControlPackets::emit(tlm::tlm_generic_payload& gp, ExanetPacket& k, unsigned char* payload, unsigned len,
                          PacketType type, std::uint32_t coord, unsigned node, std::uint64_t id, std::uint16_t seq,
                          std::uint16_t pd, std::uint64_t va, sc_time at, const Tracer::Cause& story) {
    k.header = ExanetHeader{};
    k.header.type = type;
    k.header.dst_coord = coord;
    k.header.size = static_cast<std::uint16_t>(len);
    k.header.pdid = pd;
    k.header.dst_va = va;
    k.footer = ExanetFooter{};
    k.footer.first = k.footer.last = true;
    k.footer.seq = static_cast<std::uint16_t>(seq & 0x3fff);
    k.footer.src_coord = own_coord_;
    k.transfer = id;
    k.src_node = node_;
    k.dst_node = node;
    k.hops = 0;
    k.tail = at;
    k.story = story;
    gp.set_command(tlm::TLM_WRITE_COMMAND);
    gp.set_address(va);
    gp.set_data_ptr(payload);
    gp.set_data_length(len);
    gp.set_streaming_width(len);
    gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    sc_time d = from_now(at);
    net_out_.send(gp, k, d);
    if (!gp.is_response_ok()) stats_.rx_errors.inc();
}

void ControlPackets::send_response(const ExanetPacket& data, std::uint32_t status, std::uint64_t index, sc_time at,
                                   std::uint64_t fault) {
    if (respond_from_thread_) {
        ControlOut c;
        c.kind = ControlKind::Response;
        c.id = data.transfer;
        c.word = status;
        c.index = index;
        c.seq = data.footer.seq;
        c.pd = data.header.pdid;
        c.node = data.src_node;
        c.coord = data.footer.src_coord;
        c.dst = fault;
        c.at = at;
        queue(c);
        return;
    }
    const std::uint64_t id = data.transfer;
    const auto index32 = static_cast<std::uint32_t>(index);
    std::memcpy(ack_payload_, &id, 8);
    std::memcpy(ack_payload_ + 8, &status, 4);
    std::memcpy(ack_payload_ + 12, &index32, 4);
    emit(ack_gp_, ack_pkt_, ack_payload_, sizeof ack_payload_, PacketType::Response, data.footer.src_coord,
         data.src_node, id, data.footer.seq, data.header.pdid, fault, at);
}

void ControlPackets::queue(const ControlOut& c) {
    control_.push_back(c);
    control_ev_.notify(sc_core::SC_ZERO_TIME);
}

void ControlPackets::run() {
    for (;;) {
        while (control_.empty()) sc_core::wait(control_ev_.get());
        ControlOut c = control_.front();
        control_.pop_front();
        send_control(c);
    }
}

void ControlPackets::send_control(ControlOut& c) {
    std::uint32_t word = 0;
    PacketType type = PacketType::Response;
    switch (c.kind) {
    case ControlKind::Retransmit:
        type = PacketType::Control;
        word = kControlRetransmit;
        break;
    case ControlKind::ErrorAck: word = kStatusError; break;
    case ControlKind::Ack:
        word = c.ok ? kStatusOk : kStatusError;
        receiver_.landed(c.channel, c.notify, c.counter, c.id, c.node, c.src_pd, c.bytes, c.dst, c.ok, c.nseq, c.at);
        break;
    case ControlKind::Notification:
        type = PacketType::Completion;
        word = kStatusOk;
        break;
    case ControlKind::Credit:
        type = PacketType::Control;
        word = kControlCredit;
        break;
    case ControlKind::Skip:
        type = PacketType::Control;
        word = kControlSkip;
        break;
    case ControlKind::Response: {
        // send_response's packet, as it would have sent it.
        const auto index32 = static_cast<std::uint32_t>(c.index);
        std::memcpy(ack_payload_, &c.id, 8);
        std::memcpy(ack_payload_ + 8, &c.word, 4);
        std::memcpy(ack_payload_ + 12, &index32, 4);
        emit(ack_gp_, ack_pkt_, ack_payload_, sizeof ack_payload_, PacketType::Response, c.coord, c.node, c.id, c.seq,
             c.pd, c.dst, c.at);
        return;
    }
    }
    // A notification packet's index word carries the event counter it names, plus one (0: none).
    const auto index32 = c.kind == ControlKind::Notification ? static_cast<std::uint32_t>(c.counter + 1)
                                                             : static_cast<std::uint32_t>(c.index);
    std::memset(ctl_payload_, 0, sizeof ctl_payload_);
    std::memcpy(ctl_payload_, &c.id, 8);
    std::memcpy(ctl_payload_ + 8, &word, 4);
    std::memcpy(ctl_payload_ + 12, &index32, 4);
    std::memcpy(ctl_payload_ + 16, &c.bytes, 8);
    const Tracer::Cause story = trace_control(c);
    const unsigned len = c.kind == ControlKind::Notification || c.kind == ControlKind::Skip ? 24u : 16u;
    emit(ctl_gp_, ctl_pkt_, ctl_payload_, len, type, c.coord, c.node, c.id, static_cast<std::uint16_t>(c.index), c.pd,
         c.dst, c.at, story);
}

Tracer::Cause ControlPackets::trace_control(const ControlOut& c) {
    Tracer& tracer = trace_.tracer;
    static const char* const names[] = {"retransmit request",  "error ACK",     "ACK (NetVM)",
                                        "notification packet", "credit return", "notification skip"};
    if (tracer.noting()) {
        std::ostringstream os;
        os << "transfer " << transfer_name(c.id);
        switch (c.kind) {
        case ControlKind::Retransmit:
            os << " from node" << c.node << ": retransmit request from packet " << c.index;
            break;
        case ControlKind::ErrorAck: os << " from node" << c.node << ": fault NOT resolved, error ACK"; break;
        case ControlKind::Ack: os << " from node" << c.node << ": every buffered packet copied in, ACK"; break;
        case ControlKind::Notification: os << ": notification packet to node" << c.node; break;
        case ControlKind::Credit:
            os.str("");
            os << c.index << " B of NetVM credit returned to node" << c.node;
            break;
        case ControlKind::Skip:
            os << " FAILED: skip of its notification number " << c.bytes - 1 << " to node" << c.node;
            break;
        case ControlKind::Response: return {};   // sent by send_control itself, not narrated (as send_response)
        }
        return tracer.note(
            trace_.track, names[static_cast<int>(c.kind)], c.at, sc_core::SC_ZERO_TIME, trace_.who, os.str(), c.story,
            {{"transfer", Tracer::json_string(transfer_name(c.id))}, {"packet", Tracer::json_number(c.index)}});
    }
    return {};
}

}   // namespace vrdmasim
