// The receiver: data packets arriving from the network, their payload
// written into this node's memory at the virtual address the header carries
// (in sequence, per transfer), and the end of a transfer: the notification
// to the receiving channel (found by protection domain) and the ACK to the
// sender. A faulted payload write is handed to fault recovery (NACK) or,
// NetVM, to the kernel buffer. README.md "Protocol".
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include <systemc>
#include <tlm>

#include "models/dma/channel_registers.hpp"
#include "models/dma/control_packets.hpp"
#include "models/dma/memory_port.hpp"
#include "models/dma/params.hpp"
#include "models/dma/records.hpp"
#include "models/dma/sequence_window.hpp"
#include "models/dma/stats.hpp"
#include "models/interconnect/exanet_packet.hpp"

namespace vrdmasim {

class FaultRecovery;
class NetvmBuffer;
class ReadProtocol;

using InboundKey = std::pair<unsigned, std::uint64_t>;   // (source node, transfer id)

struct Inbound {   // being received
    std::uint64_t bytes = 0;
    std::uint64_t dst = 0;
    std::uint16_t next_seq = 0;
    bool error = false;
    int channel = -1;   // receiving channel (by protection domain); -1: none
    bool reply = false;   // the reply to one of this engine's reads (channel: the read's)
    std::uint32_t sid = 0;   // its stream ID: the payload writes' and the notification's
    std::uint64_t next_index = 0;   // packets accepted so far (the untruncated sequence number)
    // Fault-tolerant receive.
    bool faulted = false;   // a payload write faulted: dropping until the fault is resolved
    bool dead = false;   // fault not resolved: error ACK sent, drop everything
    std::uint64_t fault_page = 0;   // page of the faulting address
    std::uint32_t fault_sid = 0;   // and its stream
    sc_core::sc_time fault_deadline;
    Tracer::Cause fault_story;   // the NACK's step (then the fault outcome's)
    std::uint32_t src_coord = 0;
    // NetVM.
    unsigned buffered = 0;   // packets in the kernel buffer, not copied in yet
    bool last_seen = false;   // the last packet arrived (ACK once buffered == 0)
    bool notify = false;
    std::uint16_t last_seq = 0;
    int counter = -1;   // the event counter the last packet names (-1: none)
    std::uint64_t nseq = 0;   // its notification number plus one (dma.notify-window; 0: none)
    std::uint16_t pd = 0;   // its protection domain
    // Acceptance in any order (an adaptive network delivers the packets of
    // a transfer out of order in time; README.md "Out-of-order arrival"):
    // which packet indices have landed (written, buffered or refused with
    // an error), exactly once each; the index of the last packet once a
    // packet flagged last came; the latest time a packet landed (the
    // transfer completes then, not at the last-called packet's time); the
    // latest arrival so far (a packet arriving before it came out of order);
    // and, while faulted, the faulting packet's arrival (packets that
    // arrived before it are still written).
    std::vector<std::uint64_t> landed;   // bit i % 64 of word i / 64
    std::uint64_t landed_count = 0;
    std::uint64_t last_index = ~std::uint64_t{0};
    sc_core::sc_time landed_at;
    sc_core::sc_time newest;
    // The latest injection so far (its head onto the sender's NI link) and
    // when that packet arrived: a packet injected before it that arrives
    // after it came out of order (exact time order, where packets reach
    // the receiver in the order they arrive).
    sc_core::sc_time latest_sent, latest_sent_at;
    sc_core::sc_time fault_at;
    bool nacked = false;   // a resend was asked for: it may come after the transfer completed
    // NACKs sent for it so far: each carries its number, and so does the
    // retransmit request (or error ACK) that answers it, so that the sender
    // can tell a NACK that arrives after the request answering it (on
    // another path, or from a cut link's later delivery) from a new one.
    std::uint64_t faults = 0;
    bool has_landed(std::uint64_t i) const { return (i >> 6) < landed.size() && (landed[i >> 6] >> (i & 63) & 1); }
    void land(std::uint64_t i) {
        // Words of 64 packets, grown geometrically (vector<bool>'s bit
        // iterators cost several times these shifts per packet).
        if (landed.size() <= (i >> 6)) landed.resize(std::max<std::size_t>((i >> 6) + 1, 2 * landed.size()), 0);
        landed[i >> 6] |= std::uint64_t{1} << (i & 63);
        ++landed_count;
    }
    // The first packet index not landed (where a resend starts).
    std::uint64_t first_missing() const {
        std::uint64_t w = 0;
        while (w < landed.size() && landed[w] == ~std::uint64_t{0}) ++w;
        if (w == landed.size()) return w * 64;
        return w * 64 + static_cast<std::uint64_t>(__builtin_ctzll(~landed[w]));
    }
    bool complete() const { return last_index != ~std::uint64_t{0} && landed_count == last_index + 1; }
};

class Receiver {
public:
    Receiver(ChannelRegisters& channels, MemoryPort& memory, ControlPackets& control, RecordWriter& records,
             FaultRecovery& recovery, NetvmBuffer& netvm, ReadProtocol& reads, NotificationOrder& order,
             const PldmaConfig& params, PldmaStats& stats, PldmaTrace& trace);
    Receiver(const Receiver&) = delete;
    Receiver& operator=(const Receiver&) = delete;

    // The receive path for one data packet; returns when the packet's space
    // at the receiver is free again.
    sc_core::sc_time receive(tlm::tlm_generic_payload& gp, ExanetPacket& p, sc_core::sc_time tail);
    // A notification packet (type 6) naming transfer `id` of `p`'s sender.
    // `counter`: the event counter it names (-1: none).
    void notification_packet(const ExanetPacket& p, std::uint64_t id, std::uint64_t bytes, bool ok, int counter,
                             sc_core::sc_time& at);
    // Deliver a notification to receiving channel `channel` (none if < 0):
    // a record in its ring, or its event counter alone; `at` becomes the
    // time it is delivered.
    void notify_channel(int channel, std::uint64_t id, unsigned src_node, std::uint64_t bytes, std::uint64_t dst,
                        bool ok, sc_core::sc_time& at);
    // A transfer's notifications to receiving channel `channel` (none if <
    // 0): a record (`record`: notify_channel) and/or an increment of its
    // event counter `counter` (>= 0: count_event); `at` becomes the time
    // they are delivered.
    void deliver(int channel, bool record, int counter, std::uint64_t id, unsigned src_node, std::uint64_t bytes,
                 std::uint64_t dst, bool ok, sc_core::sc_time& at);
    void deliver(const PendingNotification& n, sc_core::sc_time& at) {
        const Tracer::Scope delivering(trace_.tracer, n.story);   // its counter's step follows the transfer
        deliver(n.channel, n.record, n.counter, n.id, n.src, n.bytes, n.dst, n.ok, at);
    }
    // Transfer `id` of node `src_node`, domain `pd`, has landed (ok or
    // not) at `at`: its notifications, if it asked for any, go to the
    // sequence window (sequence_window.hpp), which delivers them now (`at`
    // becomes their delivery time) or holds them for earlier ones.
    void landed(int channel, bool record, int counter, std::uint64_t id, unsigned src_node, std::uint16_t pd,
                std::uint64_t bytes, std::uint64_t dst, bool ok, std::uint64_t nseq, sc_core::sc_time& at);
    // A skip (control packet `p`): the sender's write numbered `nseq` failed
    // there; release the number and answer.
    void skip_received(const ExanetPacket& p, std::uint64_t nseq, sc_core::sc_time at);
    // Increment event counter `counter` of channel `channel` at `at` (a
    // failed transfer increments nothing) and raise its counter line.
    void count_event(int channel, int counter, bool ok, sc_core::sc_time at);
    // NetVM: the transfer's last buffered packet is in place; the control
    // thread writes its notification and sends its ACK. Erases the state.
    void finish_later(const InboundKey& key, Inbound& in, sc_core::sc_time at);
    // Fault recovery: the receive `in` failed for good at `at` (a fault
    // not resolved; its sender gets an error ACK): if it is the reply to
    // one of our reads, that read completes with an error.
    void failed(const InboundKey& key, const Inbound& in, sc_core::sc_time at);

    // Transfers being received, for fault recovery and the NetVM buffer:
    // one by key (null: none), each in turn (`f(key, inbound)`, which must
    // not end any), and one dropped (a read's responder that failed).
    Inbound* find_inbound(const InboundKey& key) {
        const auto it = inbound_.find(key);
        return it == inbound_.end() ? nullptr : &it->second;
    }
    template <class F>
    void each_inbound(F&& f) {
        for (auto& kv : inbound_) f(kv.first, kv.second);
    }
    void forget(const InboundKey& key) { erase_inbound(key); }

private:
    enum class Placement { Written, Buffered, Error, Nacked, Dropped };
    // The packet's untruncated index: its 14-bit sequence number taken
    // nearest to the index expected next in call order.
    static std::uint64_t index_of(const Inbound& in, const ExanetPacket& p);
    // Statistics of packets out of send order: one arriving before a packet
    // that came earlier in call order (the approximate link orders call the
    // receiver in send order), or after one injected after it (exact time
    // order calls it in arrival order).
    void order(Inbound& in, const ExanetPacket& p, sc_core::sc_time tail);
    // The transfer's state, fresh for its first packet.
    Inbound& arrival(const InboundKey& key, const ExanetPacket& p);
    // Fault-tolerant: a resent packet (index `i`) already landed.
    static bool duplicate(const Inbound& in, std::uint64_t i);
    // Write the payload, or (NetVM) put it in the kernel buffer; `done`
    // becomes the time the packet's space is free again.
    Placement place(const InboundKey& key, Inbound& in, tlm::tlm_generic_payload& gp, const ExanetPacket& p,
                    sc_core::sc_time tail, sc_core::sc_time& done);
    // Every packet of the transfer has landed (the last at `done`, the
    // latest landing time): notify and acknowledge (unless packets still
    // wait in the NetVM buffer).
    void last_packet(const InboundKey& key, Inbound& in, const ExanetPacket& p, sc_core::sc_time& done);

    ChannelRegisters& channels_;
    MemoryPort& memory_;
    ControlPackets& control_;
    RecordWriter& records_;
    FaultRecovery& recovery_;
    NetvmBuffer& netvm_;
    ReadProtocol& reads_;
    NotificationOrder& order_;
    const PldmaConfig& params_;
    PldmaStats& stats_;
    PldmaTrace& trace_;
    std::map<InboundKey, Inbound> inbound_;
    // The transfer the last packet was for (consecutive packets mostly
    // are for the same one): arrival() finds it without a lookup. Entries
    // leave inbound_ only through erase_inbound, which forgets it.
    InboundKey last_key_{};
    Inbound* last_ = nullptr;
    void erase_inbound(const InboundKey& key) {
        if (last_ && key == last_key_) last_ = nullptr;
        inbound_.erase(key);
    }
    // Transfers that completed while a resend was asked for: packets out of
    // order may all have landed before the resend comes, whose packets are
    // then duplicates of a finished transfer (dropped, never written again).
    std::set<InboundKey> resent_done_;
};

}   // namespace vrdmasim
