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
#include "models/smmu/smmu500.hpp"

namespace vrdmasim {

// Register offsets in the PLDMA's MMIO window.
namespace pldma_reg {
constexpr std::uint64_t kDescSrc = 0x00;        // 64: source address
constexpr std::uint64_t kDescDst = 0x08;        // 64: destination address (at the destination node)
constexpr std::uint64_t kDescLen = 0x10;        // 64: bytes
constexpr std::uint64_t kDescDstNode = 0x18;    // 32: destination node index
constexpr std::uint64_t kDescFlags = 0x1c;      // 32: bit 0 notify the receiver
constexpr std::uint64_t kDescCompl = 0x20;      // 64: address of the sender's completion record
constexpr std::uint64_t kDescTag = 0x28;        // 64: software's cookie, echoed in the record
constexpr std::uint64_t kDoorbell = 0x30;       // write: queue the staged descriptor
constexpr std::uint64_t kStatus = 0x38;         // 32 read: [15:0] queued, bit 31 last doorbell refused
constexpr std::uint64_t kRxRingBase = 0x40;     // 64: receive notification ring
constexpr std::uint64_t kRxRingEntries = 0x48;  // 32
constexpr std::uint64_t kRxProduced = 0x50;     // 64 read: notification records written so far
constexpr std::uint64_t kTxCompleted = 0x58;    // 64 read: completion records written so far
constexpr std::uint64_t kWindowSize = 0x1000;
}  // namespace pldma_reg

constexpr std::uint32_t kFlagNotify = 1u << 0;

// 32-byte records written by the engine into memory (little-endian).
struct CompletionRecord {
    std::uint64_t tag = 0;          // tx: descriptor tag; rx: transfer sequence number
    std::uint32_t status = 0;       // kStatusOk / kStatusError
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

private:
    std::deque<sc_core::sc_time> pending_;   // sorted
    std::uint64_t done_ = 0;                 // records already visible and dropped from pending_
    sc_core::sc_event event_;
};

class Pldma : public sc_core::sc_module {
public:
    tlm_utils::simple_target_socket<Pldma> mmio;         // registers
    tlm_utils::simple_initiator_socket<Pldma> mem;       // source reads, payload and record writes
    tlm_utils::simple_initiator_socket<Pldma> net_out;   // packets to the router
    tlm_utils::simple_target_socket<Pldma> net_in;       // packets from the router

    CompletionSignal tx_irq;   // completion records written (sender side)
    CompletionSignal rx_irq;   // notification records written (receiver side)

    static void declare_params(ParamRegistry& reg);
    // `node` is this engine's node index, `coord` its ExaNet coordinate;
    // `coord_of` maps node index to coordinate for packet headers.
    Pldma(sc_core::sc_module_name name, const SimContext& ctx, const std::string& group,
          unsigned node, std::vector<std::uint32_t> coord_of);

    // The stream ID on the engine's memory transactions (dma.smmu-tbu, dma.axi-id).
    std::uint32_t stream_id() const { return stream_id_; }

    // dma.fault-tolerant
    bool fault_tolerant() const { return fault_tolerant_; }

    // Terminate mode, fault-tolerant engine: the fault library finished with
    // the fault at `address` (an input address of this engine's stream;
    // `write` = FSYNR0.WNR) at time `at`. `resolved` false: the pages could
    // not be made present. A parked source read (write == false) re-reads or
    // fails; a receive that faulted (write == true) asks its sender to
    // retransmit or answers it with an error. Matched by 4 KiB page, so one
    // outcome releases every transfer waiting on that page. Outcomes that
    // match nothing are ignored (counted in `fault_outcomes_unmatched`).
    // Ignored when dma.fault-tolerant is false. Call from a thread or method
    // at the current simulated time (`at` may lie ahead of it).
    void fault_resolved(std::uint64_t address, bool write, bool resolved, sc_core::sc_time at);

private:
    struct Descriptor {
        std::uint64_t src = 0, dst = 0, len = 0, compl_addr = 0, tag = 0;
        std::uint32_t dst_node = 0, flags = 0;
        std::uint64_t id = 0;
        sc_core::sc_time posted;
    };
    struct Outstanding {            // sent, waiting for the acknowledgement
        Descriptor desc;
        bool read_error = false;
        std::uint64_t epoch = 0;    // bumped by each NACK: a send pass of an older epoch stops
        bool stopped = false;       // NACKed, waiting for the retransmit request (or an error ACK)
    };
    struct Inbound {                // being received
        std::uint64_t bytes = 0;
        std::uint64_t dst = 0;
        std::uint16_t next_seq = 0;
        bool error = false;
        // Fault-tolerant receive.
        std::uint64_t next_index = 0;   // packets written so far (the untruncated sequence number)
        bool faulted = false;           // a payload write faulted: dropping until the fault is resolved
        bool dead = false;              // fault not resolved: error ACK sent, drop everything
        std::uint64_t fault_page = 0;   // page of the faulting address
        std::uint32_t src_coord = 0;
    };
    struct Resend {                 // a retransmit request to serve
        std::uint64_t id = 0;
        std::uint64_t from = 0;     // first packet index to send again
        sc_core::sc_time at;
    };
    struct ControlOut {             // a packet the control thread sends (fault-tolerant receive)
        bool retransmit = false;    // true: Control retransmit request; false: error ACK
        std::uint64_t id = 0;
        std::uint64_t index = 0;
        unsigned node = 0;
        std::uint32_t coord = 0;
        sc_core::sc_time at;
    };

    void engine();
    void control_thread();
    // Send packets `from` .. end of `d` (from = 0: the whole transfer).
    // Send packets `from` .. end of `d`, starting no earlier than `earliest`;
    // `resend`: serving a retransmit request (the transfer is outstanding).
    void send_transfer(Descriptor& d, std::uint64_t from, bool resend, sc_core::sc_time earliest);
    void send_response(const ExanetPacket& data, std::uint32_t status, std::uint64_t index, sc_core::sc_time at);
    void complete(const Descriptor& d, std::uint32_t status, std::uint64_t bytes, sc_core::sc_time at);
    void send_ack(const ExanetPacket& data, bool ok, sc_core::sc_time at);
    void mmio_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    void net_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    // Timed memory access at absolute time `at`; returns completion time,
    // with `ok` false on an error response (an SMMU fault included).
    // `fault`, when given, receives the SMMU's fault extension (type None
    // when there was no fault).
    sc_core::sc_time memory(tlm::tlm_command cmd, std::uint64_t addr, unsigned char* data,
                            std::uint64_t len, sc_core::sc_time at, bool& ok,
                            SmmuFaultExtension* fault = nullptr);
    void write_record(std::uint64_t addr, const CompletionRecord& r, sc_core::sc_time at, bool& ok,
                      sc_core::sc_time& done);

    const unsigned node_;
    const std::vector<std::uint32_t> coord_of_;
    const std::uint64_t block_size_;
    const std::uint32_t packet_size_;
    const unsigned block_buffers_;
    const unsigned queue_depth_;
    const sc_core::sc_time setup_time_;
    const sc_core::sc_time mmio_latency_;
    const bool fault_tolerant_;

    Descriptor staged_;
    std::deque<Descriptor> queue_;
    std::uint64_t next_id_ = 1;
    bool last_doorbell_refused_ = false;
    sc_core::sc_event doorbell_;
    std::map<std::uint64_t, Outstanding> outstanding_;                // by transfer id
    std::map<std::pair<unsigned, std::uint64_t>, Inbound> inbound_;  // (source node, transfer id)
    std::uint64_t rx_ring_base_ = 0;
    std::uint32_t rx_ring_entries_ = 0;
    std::uint64_t rx_written_ = 0;

    // Fault-tolerant state.
    struct Park {                   // the engine's source read waiting on a fault
        bool active = false;
        std::uint64_t page = 0;
        bool done = false, resolved = false;
        sc_core::sc_time at;
    } park_;
    sc_core::sc_event park_ev_;
    std::deque<Resend> resend_;     // retransmit requests, served before new descriptors
    std::deque<ControlOut> control_;
    sc_core::sc_event control_ev_;
    tlm::tlm_generic_payload ctl_gp_;
    unsigned char ctl_payload_[16] = {};

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
};

}  // namespace vrdmasim
