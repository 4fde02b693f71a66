// The single-flit-payload packets the engine sends besides its data:
// responses to a transfer's last packet (ACK, error ACK) and to a faulted
// payload write (NACK), retransmit requests (ExaNet control packets, type 2)
// and notification packets (type 6). Responses to an arriving packet go out
// at once (send_response); the others queue for the control thread (queue,
// run). README.md "Protocol" and "Fault tolerance".
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include <systemc>
#include <tlm>

#include "models/dma/memory_port.hpp"
#include "models/dma/stats.hpp"
#include "models/interconnect/exanet_packet.hpp"
#include "models/interconnect/packet_target.hpp"
#include "src/core/lazy_deque.hpp"
#include "src/core/lazy_thread.hpp"

namespace vrdmasim {

// Control packet (ExaNet type 2) opcodes, fault-tolerant mode.
constexpr std::uint32_t kControlRetransmit = 1;
// NetVM sender credits returned (ni.translation = shadow, rdma.strategy =
// netvm): the bytes in the index field (credits.hpp).
constexpr std::uint32_t kControlCredit = 2;
// Ordered notifications (dma.notify-window): a numbered write failed at its
// sender; the receiver releases its number (bytes field) and answers with
// a response for the transfer id (sequence_window.hpp).
constexpr std::uint32_t kControlSkip = 3;

class Receiver;

// Response: an answer send_response() queues instead of sending it itself
// (respond_from_thread).
enum class ControlKind { Retransmit, ErrorAck, Ack, Notification, Credit, Skip, Response };
struct ControlOut {   // a packet the control thread sends
    ControlKind kind = ControlKind::Retransmit;
    std::uint64_t id = 0;
    std::uint64_t index = 0;
    std::uint64_t bytes = 0, dst = 0;   // Notification; Retransmit, ErrorAck, Response: the fault's number (VA field)
    std::uint16_t pd = 0;
    unsigned node = 0;
    std::uint32_t coord = 0;
    bool ok = true, notify = false;   // Ack
    int channel = -1;   // Ack: receiving channel for the notification
    int counter = -1;   // Ack, Notification: the event counter the write names (-1: none)
    std::uint64_t nseq = 0;   // Ack: the write's notification number plus one (0: none)
    std::uint16_t src_pd = 0;   // Ack: the write's protection domain (its notification's pair)
    std::uint32_t word = 0;   // Response: the status word
    std::uint16_t seq = 0;   // Response: the answered packet's footer sequence number
    sc_core::sc_time at;
    Tracer::Cause story;   // the step it follows (Retransmit: the fault's outcome)
};

class ControlPackets {
public:
    // `own_coord` is this node's ExaNet coordinate (the footer's source);
    // `receiver` notifies the receiving channel before a NetVM ACK.
    ControlPackets(PacketOut& net_out, unsigned node, std::uint32_t own_coord, PldmaStats& stats, PldmaTrace& trace,
                   Receiver& receiver);
    ControlPackets(const ControlPackets&) = delete;
    ControlPackets& operator=(const ControlPackets&) = delete;
    // A response's payload (transfer id 8 B, status 4 B, packet index 4 B):
    // one per transfer, from its receiver back to its sender, 3 flits with
    // header and footer (what the channel-load bound counts for it:
    // src/sim/channel_load.hpp).
    static constexpr unsigned kResponseBytes = 16;

    // Answer data packet `data`: `status` (kStatusOk, kStatusError,
    // kStatusFault) and, for a NACK, the packet index to resume from and
    // the fault's number for that transfer (`fault`, in the header's VA
    // field, unused in a response: FaultRecovery).
    void send_response(const ExanetPacket& data, std::uint32_t status, std::uint64_t index, sc_core::sc_time at,
                       std::uint64_t fault = 0);
    // Responses go out from the control thread (queued, at the same time)
    // instead of inside the call that delivered the packet they answer:
    // with cut links (board-link.handoff = message) that call is a link's
    // delivery thread, which must not wait for another link's credits
    // before it has returned the packet's own (models/interconnect/README.md
    // "Cut links").
    void respond_from_thread() { respond_from_thread_ = true; }
    void queue(const ControlOut& c);
    // The control thread: sends the queued packets in order.
    void run();
    // Notified when a control packet is queued: the sender thread's wake-up.
    WakeEvent& queued() { return control_ev_; }

    // Send one small packet (response, control, notification, atomic
    // reply) through `gp` / `k`, which the caller owns (one pair per thread).
    void emit(tlm::tlm_generic_payload& gp, ExanetPacket& k, unsigned char* payload, unsigned len, PacketType type,
              std::uint32_t coord, unsigned node, std::uint64_t id, std::uint16_t seq, std::uint16_t pd,
              std::uint64_t va, sc_core::sc_time at, const Tracer::Cause& story = {});

private:
    void send_control(ControlOut& c);
    Tracer::Cause trace_control(const ControlOut& c);

    PacketOut& net_out_;
    const unsigned node_;
    const std::uint32_t own_coord_;
    PldmaStats& stats_;
    PldmaTrace& trace_;
    Receiver& receiver_;
    bool respond_from_thread_ = false;
    LazyDeque<ControlOut> control_;
    WakeEvent control_ev_;   // made when the first control packet is queued
    tlm::tlm_generic_payload ack_gp_, ctl_gp_;
    ExanetPacket& ack_pkt_;   // owned by ack_gp_ (a payload frees its extensions)
    ExanetPacket& ctl_pkt_;   // owned by ctl_gp_
    unsigned char ack_payload_[kResponseBytes] = {};
    unsigned char ctl_payload_[24] = {};
};

}   // namespace vrdmasim
