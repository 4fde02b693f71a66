// Pldma: the ExaNeSt RDMA engine. Software posts a descriptor
// through MMIO registers and a doorbell; the engine reads the source in
// blocks through its memory port, cuts each block into ExaNet packets and
// sends them through its network port. The receiving engine writes each
// payload into its memory, and after the last packet writes a notification
// record (if asked) and answers with an acknowledgement; the sender then
// writes the completion record and raises its completion interrupt.
// With dma.fault-tolerant, terminate-mode SMMU faults park a source read
// (until fault_resolved) or NACK a payload write (the sender retransmits from
// that packet). See models/dma/README.md for the register map, records,
// fault tolerance and timing.
#pragma once

#include <cstdint>
#include <deque>
#include <unordered_map>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <tlm_utils/tlm_quantumkeeper.h>

#include "core/context.hpp"
#include "models/interconnect/exanet_packet.hpp"
#include "models/common/smmu_fault.hpp"
#include "models/common/stream_id.hpp"

namespace vrdmasim {

// The parameters of section [dma], declared in pldma.cpp; read
// through params_of<PldmaParams>().
struct PldmaParams {
    PldmaParams();
    ParamSet set;
    SizeParam block_size;
    SizeParam packet_size;
    IntParam block_buffers;
    IntParam queue_depth;
    IntParam channels;
    IntParam channel_blocks;
    TimeParam fault_timeout;
    SizeParam netvm_buffer;
    TimeParam setup_time;
    TimeParam mmio_latency;
    IntParam smmu_tbu;
    IntParam axi_id;
    BoolParam fault_tolerant;
};

// Register map. Channel c's registers fill one 4 KiB page at c * kChannelStride
// (the page the kernel maps into the process that owns the channel: posting
// needs no system call); the kernel's page at kKernelBase holds each
// channel's control word (protection domain, enable), never mapped for a
// process.
namespace pldma_reg {
constexpr std::uint64_t kDescSrc = 0x00;        // 64: source address
constexpr std::uint64_t kDescDst = 0x08;        // 64: destination address (at the destination node)
constexpr std::uint64_t kDescLen = 0x10;        // 64: bytes
constexpr std::uint64_t kDescDstNode = 0x18;    // 32: destination node index
constexpr std::uint64_t kDescFlags = 0x1c;      // 32: kFlagNotify, kFlagNotifyPacket
constexpr std::uint64_t kDescCompl = 0x20;      // 64: address of the sender's completion record
constexpr std::uint64_t kDescTag = 0x28;        // 64: software's cookie, echoed in the record
constexpr std::uint64_t kDoorbell = 0x30;       // write: queue the staged descriptor
constexpr std::uint64_t kStatus = 0x38;         // 32 read: [15:0] queued, bit 31 last doorbell refused
constexpr std::uint64_t kRxRingBase = 0x40;     // 64: receive notification ring
constexpr std::uint64_t kRxRingEntries = 0x48;  // 32
constexpr std::uint64_t kRxProduced = 0x50;     // 64 read: notification records written so far
constexpr std::uint64_t kTxCompleted = 0x58;    // 64 read: completion records written so far
constexpr std::uint64_t kEventCount = 0x60;     // 64 read: notifications delivered (with or without a ring)
constexpr std::uint64_t kChannelStride = 0x1000;
constexpr unsigned kMaxChannels = 1024;
constexpr std::uint64_t kKernelBase = kChannelStride * kMaxChannels;   // 4 MiB
// 32 rw at kKernelBase + 8 * c: [15:0] protection domain, bit 16 enabled.
// Reset: enabled, domain 0.
constexpr std::uint64_t kChannelCtrl = 0x0;
constexpr std::uint32_t kCtrlEnable = 1u << 16;
constexpr std::uint64_t kWindowSize = kKernelBase + 8 * kMaxChannels;
}  // namespace pldma_reg

// Descriptor flags.
constexpr std::uint32_t kFlagNotify = 1u << 0;         // the last packet tells the receiver (footer)
constexpr std::uint32_t kFlagNotifyPacket = 1u << 1;   // after the ACK, a notification packet (type 6)

// 32-byte records written by the engine into memory (little-endian).
struct CompletionRecord {
    std::uint64_t tag = 0;          // tx: descriptor tag; rx: transfer id
    std::uint32_t status = 0;       // kStatusOk / kStatusError (0: not written yet)
    std::uint32_t node = 0;         // tx: destination node; rx: source node
    std::uint64_t bytes = 0;        // bytes delivered
    std::uint64_t addr = 0;         // tx: source address; rx: destination address
};
static_assert(sizeof(CompletionRecord) == 32, "record layout");
constexpr std::uint32_t kStatusOk = 1;
constexpr std::uint32_t kStatusError = 2;
// Only in a response packet (NACK), fault-tolerant mode: the receiver's
// payload write faulted at the sequence number carried with it.
constexpr std::uint32_t kStatusFault = 3;
// Control packet (ExaNet type 2) opcodes, fault-tolerant mode.
constexpr std::uint32_t kControlRetransmit = 1;

// An interrupt line together with the count register software reads: each
// record becomes visible at its own time; `event` fires at (or before) the
// next one.
class CompletionSignal {
public:
    void raise_at(sc_core::sc_time at);
    std::uint64_t count_at(sc_core::sc_time at);
    // Earliest pending record time after `at`, or SC_ZERO_TIME if none.
    bool next_after(sc_core::sc_time at, sc_core::sc_time& next) const;
    sc_core::sc_event& event() { return event_; }
    // Records raised so far, whatever their time: a waiter that remembers
    // it when it looks can tell whether anything was raised since.
    std::uint64_t raised() const { return raised_; }

private:
    std::uint64_t raised_ = 0;
    std::deque<sc_core::sc_time> pending_;   // sorted
    std::uint64_t done_ = 0;                 // records already visible and dropped from pending_
    sc_core::sc_event event_;
};

// The kernel's copy for NetVM-style receives: copy `len` bytes into user
// memory at `va` from time `at` (CPU work); returns when done.
using NetvmCopyFn = std::function<sc_core::sc_time(std::uint64_t va, const unsigned char* data,
                                                   std::uint64_t len, sc_core::sc_time at)>;

class Pldma : public sc_core::sc_module {
public:
    tlm_utils::simple_target_socket<Pldma> mmio;         // registers
    tlm_utils::simple_initiator_socket<Pldma> mem;       // source reads, payload and record writes
    tlm_utils::simple_initiator_socket<Pldma> net_out;   // packets to the router
    tlm_utils::simple_target_socket<Pldma> net_in;       // packets from the router

    static void declare_params(ParamRegistry& reg);
    // Its columns of summary.csv, from the statistics it registers.
    static void declare_metrics(MetricRegistry& reg);
    // `node` is this engine's node index, `coord` its ExaNet coordinate;
    // `coord_of` maps node index to coordinate for packet headers.
    Pldma(sc_core::sc_module_name name, const SimContext& ctx, const std::string& group,
          unsigned node, std::vector<std::uint32_t> coord_of);

    unsigned channels() const { return static_cast<unsigned>(channels_.size()); }
    // Completion records written for channel c (its sender-side interrupt),
    // and notifications delivered to it (receiver side).
    CompletionSignal& tx_signal(unsigned c) { return channels_.at(c).tx; }
    // Largest payload of one packet (dma.packet-size).
    std::uint32_t packet_size() const { return packet_size_; }
    // When the engine's latest completion record at virtual address `addr`
    // is complete in memory (false if it never wrote one there): software
    // that sees the record earlier saw it before it happened.
    bool record_done_at(std::uint64_t addr, sc_core::sc_time& at) const {
        auto it = record_done_.find(addr);
        if (it == record_done_.end()) return false;
        at = it->second;
        return true;
    }
    CompletionSignal& rx_signal(unsigned c) { return channels_.at(c).rx; }

    // The stream ID on the engine's memory transactions (dma.smmu-tbu, dma.axi-id).
    std::uint32_t stream_id() const { return stream_id_; }

    // dma.fault-tolerant
    bool fault_tolerant() const { return fault_tolerant_; }

    // NetVM-style receive: a payload write that faults (terminate mode) is
    // kept in a kernel buffer of dma.netvm-buffer bytes instead of being
    // NACKed, and `copy` puts it in place once the fault is resolved. A full
    // buffer holds the next packet back (the link's credits back up).
    void enable_netvm(NetvmCopyFn copy);
    bool netvm() const { return static_cast<bool>(netvm_copy_); }

    // Terminate mode, fault-tolerant engine: the fault library finished with
    // the fault at `address` (an input address of this engine's stream;
    // `write` = FSYNR0.WNR) at time `at`. `resolved` false: the pages could
    // not be made present. A parked channel (write == false) re-reads or
    // fails its transfer; a receive that faulted (write == true) asks its
    // sender to retransmit (or, NetVM, has the kernel copy its buffered
    // packets in) or answers it with an error. Matched by 4 KiB page, so one
    // outcome releases everything waiting on that page. Outcomes that match
    // nothing are ignored (counted in `fault_outcomes_unmatched`). Ignored
    // when dma.fault-tolerant is false. Call from a thread or method at the
    // current simulated time (`at` may lie ahead of it); never blocks.
    void fault_resolved(std::uint64_t address, bool write, bool resolved, sc_core::sc_time at);

private:
    struct Descriptor {
        std::uint64_t src = 0, dst = 0, len = 0, compl_addr = 0, tag = 0;
        std::uint32_t dst_node = 0, flags = 0;
        std::uint64_t id = 0;
        unsigned channel = 0;
        std::uint16_t pd = 0;
        sc_core::sc_time posted;
    };
    struct Outstanding {            // started, waiting for the acknowledgement
        Descriptor desc;
        std::uint64_t epoch = 0;    // bumped by each NACK: work of an older epoch stops
    };
    // One piece of a channel's work: send transfer `id` from packet `next`.
    struct Work {
        std::uint64_t id = 0;
        std::uint64_t next = 0;     // next packet index to send
        std::uint64_t epoch = 0;
        bool started = false;       // setup done (a resend starts anew)
        bool resend = false;
        sc_core::sc_time earliest;
        Descriptor desc;            // new transfers: the descriptor until started
    };
    struct Channel {
        std::uint16_t pd = 0;
        bool enabled = true;
        Descriptor staged;
        bool last_refused = false;
        std::deque<Work> work;      // front first; retransmissions go to the front
        unsigned queued = 0;        // descriptors not started yet
        // Parked on a source fault (fault-tolerant).
        bool parked = false;
        std::uint64_t park_page = 0;
        sc_core::sc_time park_since, park_deadline;
        bool park_done = false, park_resolved = false;
        sc_core::sc_time park_at;
        // Receive side.
        std::uint64_t rx_ring_base = 0;
        std::uint32_t rx_ring_entries = 0;
        std::uint64_t rx_written = 0;
        CompletionSignal tx, rx;
        CompletionSignal records;   // notification records written into the ring
    };
    struct Inbound {                // being received
        std::uint64_t bytes = 0;
        std::uint64_t dst = 0;
        std::uint16_t next_seq = 0;
        bool error = false;
        int channel = -1;               // receiving channel (by protection domain); -1: none
        std::uint64_t next_index = 0;   // packets accepted so far (the untruncated sequence number)
        // Fault-tolerant receive.
        bool faulted = false;           // a payload write faulted: dropping until the fault is resolved
        bool dead = false;              // fault not resolved: error ACK sent, drop everything
        std::uint64_t fault_page = 0;   // page of the faulting address
        sc_core::sc_time fault_deadline;
        std::uint32_t src_coord = 0;
        // NetVM.
        unsigned buffered = 0;          // packets in the kernel buffer, not copied in yet
        bool last_seen = false;         // the last packet arrived (ACK once buffered == 0)
        bool notify = false;
        std::uint16_t last_seq = 0;
    };
    enum class ControlKind { Retransmit, ErrorAck, Ack, Notification };
    struct ControlOut {             // a packet the control thread sends
        ControlKind kind = ControlKind::Retransmit;
        std::uint64_t id = 0;
        std::uint64_t index = 0;
        std::uint64_t bytes = 0, dst = 0;   // Notification
        std::uint16_t pd = 0;
        unsigned node = 0;
        std::uint32_t coord = 0;
        bool ok = true, notify = false;     // Ack
        int channel = -1;                   // Ack: receiving channel for the notification
        sc_core::sc_time at;
    };
    struct Buffered {               // NetVM: a payload in the kernel buffer
        std::pair<unsigned, std::uint64_t> key;
        std::uint64_t va = 0;
        std::vector<unsigned char> data;
    };
    using Key = std::pair<unsigned, std::uint64_t>;   // (source node, transfer id)

    void engine();
    void control_thread();
    void watchdog_thread();
    // Round robin over the channels with work that are not parked (parked
    // ones whose outcome came are released first). -1: none.
    int pick(sc_core::sc_time now);
    // Serve up to dma.channel-blocks blocks of channel c's front work.
    void serve(unsigned c);
    // Remove `w` from the channel's work (by address: the deque may have
    // grown at its front meanwhile).
    void drop(Channel& ch, const Work* w);
    // The transfer of `w` ends with an error completion at `at`.
    void fail(Channel& ch, Work& w, sc_core::sc_time at);
    void complete(const Descriptor& d, std::uint32_t status, std::uint64_t bytes, sc_core::sc_time at);
    // Send one single-flit-payload packet (response, control, notification).
    void emit(tlm::tlm_generic_payload& gp, ExanetPacket& k, unsigned char* payload, unsigned len, PacketType type,
              std::uint32_t coord, unsigned node, std::uint64_t id, std::uint16_t seq, std::uint16_t pd,
              std::uint64_t va, sc_core::sc_time at);
    void send_response(const ExanetPacket& data, std::uint32_t status, std::uint64_t index, sc_core::sc_time at);
    void queue_control(const ControlOut& c);
    // NetVM: put (or drop) the buffered packets of `page`; returns when done.
    sc_core::sc_time netvm_flush(std::uint64_t page, bool resolved, bool by_engine, sc_core::sc_time at);
    void mmio_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    void net_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    // The receive path for one data packet; returns when the packet's space
    // at the receiver is free again.
    sc_core::sc_time receive(tlm::tlm_generic_payload& gp, ExanetPacket& p, sc_core::sc_time tail);
    // NetVM: the transfer's last buffered packet is in place; the control
    // thread writes its notification and sends its ACK. Erases the state.
    void finish_later(const Key& key, Inbound& in, sc_core::sc_time at);
    void notify_receiver(int channel, std::uint64_t id, unsigned src_node, std::uint64_t bytes, std::uint64_t dst,
                         bool ok, sc_core::sc_time& at);
    int rx_channel(std::uint16_t pd) const;
    // Timed memory access at absolute time `at`; returns completion time,
    // with `ok` false on an error response (an SMMU fault included).
    // `fault`, when given, receives the SMMU's fault extension (type None
    // when there was no fault).
    sc_core::sc_time memory(tlm::tlm_command cmd, std::uint64_t addr, unsigned char* data,
                            std::uint64_t len, sc_core::sc_time at, bool& ok,
                            SmmuFaultExtension* fault = nullptr);
    void write_record(std::uint64_t addr, const CompletionRecord& r, sc_core::sc_time at, bool& ok,
                      sc_core::sc_time& done);
    // Write a record at `at` and raise `raise` when it is in memory; a
    // fault-tolerant engine whose write faults writes it again once the
    // fault is resolved (record_thread). Returns the first attempt's end.
    sc_core::sc_time post_record(std::uint64_t addr, const CompletionRecord& r, sc_core::sc_time at,
                                 std::vector<CompletionSignal*> raise);
    void record_thread();
    std::uint64_t packets_of(std::uint64_t len) const;

    const unsigned node_;
    const std::vector<std::uint32_t> coord_of_;
    const std::uint64_t block_size_;
    const std::uint32_t packet_size_;
    const std::uint64_t packets_per_block_;
    const unsigned block_buffers_;
    const unsigned queue_depth_;
    const unsigned channel_blocks_;
    const sc_core::sc_time setup_time_;
    const sc_core::sc_time mmio_latency_;
    const sc_core::sc_time fault_timeout_;
    const bool fault_tolerant_;
    const std::uint64_t netvm_capacity_;

    std::vector<Channel> channels_;
    unsigned rr_next_ = 0;
    std::uint64_t next_id_ = 1;
    sc_core::sc_event doorbell_;
    std::map<std::uint64_t, Outstanding> outstanding_;   // by transfer id
    std::map<Key, Inbound> inbound_;
    // The engine's datapath: its read port, its network port and its block buffers.
    sc_core::sc_time read_free_, send_free_;
    std::vector<sc_core::sc_time> buffer_free_;
    std::uint64_t blocks_read_ = 0;

    std::deque<ControlOut> control_;
    sc_core::sc_event control_ev_;
    sc_core::sc_event watchdog_ev_;
    tlm::tlm_generic_payload ctl_gp_;
    unsigned char ctl_payload_[24] = {};

    // Records whose write faulted (fault-tolerant), written again in order.
    std::unordered_map<std::uint64_t, sc_core::sc_time> record_done_;   // record address -> written by
    struct RecordRetry {
        std::uint64_t addr = 0;
        CompletionRecord record;
        std::vector<CompletionSignal*> raise;
        sc_core::sc_time at;
    };
    std::deque<RecordRetry> record_retry_;
    sc_core::sc_event record_ev_;
    bool record_waiting_ = false, record_wait_done_ = false, record_wait_resolved_ = false;
    std::uint64_t record_wait_page_ = 0;
    sc_core::sc_time record_wait_at_;

    // NetVM.
    NetvmCopyFn netvm_copy_;
    std::uint64_t netvm_used_ = 0;
    std::deque<Buffered> netvm_buf_;
    std::map<std::uint64_t, sc_core::sc_time> netvm_pages_;   // pending page -> deadline
    sc_core::sc_event netvm_space_ev_;

    tlm_utils::tlm_quantumkeeper qk_;
    std::vector<unsigned char> block_;
    tlm::tlm_generic_payload tx_gp_, ack_gp_;
    // Memory payloads: the engine's reads and the receive path's writes may
    // be in flight at once (a stalled read lets other threads deliver
    // packets), so each access takes its own payload from a small pool. Each
    // carries the engine's stream ID and a fault extension the SMMU fills.
    struct MemPayload {
        tlm::tlm_generic_payload gp;
        StreamIdExtension* sid;
        SmmuFaultExtension* fault;
    };
    std::vector<std::unique_ptr<MemPayload>> mem_pool_;
    std::vector<MemPayload*> mem_free_;
    const std::uint32_t stream_id_;
    ExanetPacket& tx_pkt_;    // owned by tx_gp_ (a payload frees its extensions)
    ExanetPacket& ack_pkt_;   // owned by ack_gp_
    ExanetPacket& ctl_pkt_;   // owned by ctl_gp_
    unsigned char ack_payload_[16] = {};

    Tracer& tracer_;
    Tracer::Track track_;
    std::string who_;
    Counter& posted_;
    Counter& refused_;
    Counter& completed_;
    Counter& failed_;
    Counter& packets_sent_;
    Counter& packets_received_;
    Counter& bytes_sent_;
    Counter& bytes_received_;
    Counter& rx_errors_;
    Counter& transactions_;
    Counter& smmu_faults_;
    Histogram& latency_us_;
    Counter& parks_;
    Counter& rereads_;
    Histogram& park_us_;
    Counter& nacks_sent_;
    Counter& nacks_received_;
    Counter& retx_requests_;
    Counter& retransmissions_;
    Counter& retx_bytes_;
    Counter& duplicates_;
    Counter& fault_dropped_;
    Counter& unmatched_;
    Counter& fault_timeouts_;
    Counter& record_retries_;
    Counter& pd_violations_;
    Counter& notifications_;
    Counter& netvm_packets_;
    Counter& netvm_bytes_;
    Counter& netvm_full_;
    Scalar& netvm_peak_;
    Scalar& rx_stalled_us_;
};

}  // namespace vrdmasim
