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
//
// This file is the module: its sockets, its public interface and the wiring
// of its parts, each in its own file: channel_registers.* (registers and
// doorbells), transmit.* (the transmit scheduler), receive.* (the receiver),
// fault_recovery.* (park, NACK, retransmit, timeouts), netvm_buffer.* (the
// NetVM receive buffer), control_packets.* (responses and control packets),
// records.* (completion records and signals), memory_port.* (the memory
// port), params.* and stats.*.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/passthrough_target_socket.h>

#include "src/core/context.hpp"
#include "src/core/lazy_thread.hpp"
#include "models/common/smmu_fault.hpp"
#include "models/common/stream_id.hpp"
#include "models/dma/atomics.hpp"
#include "models/dma/channel_registers.hpp"
#include "models/dma/control_packets.hpp"
#include "models/dma/fault_recovery.hpp"
#include "models/dma/memory_port.hpp"
#include "models/dma/netvm_buffer.hpp"
#include "models/dma/params.hpp"
#include "models/dma/read.hpp"
#include "models/dma/receive.hpp"
#include "models/dma/records.hpp"
#include "models/dma/sequence_window.hpp"
#include "models/dma/stats.hpp"
#include "models/dma/transmit.hpp"
#include "models/interconnect/exanet_packet.hpp"
#include "models/interconnect/packet_target.hpp"

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
    EnumParam park;
    IntParam event_counters;
    IntParam notify_window;

private:
    // The constructor's groups of parameters, declared in this order.
    void declare_datapath();
    void declare_waits_and_latencies();
    void declare_smmu_port();
    void declare_design_choices();
};

class Pldma : public sc_core::sc_module, public PacketTarget {
public:
    tlm_utils::passthrough_target_socket<Pldma> mmio;   // registers
    tlm_utils::simple_initiator_socket<Pldma> mem;   // source reads, payload and record writes
    tlm_utils::simple_initiator_socket<Pldma> net_out;   // packets to the router
    tlm_utils::passthrough_target_socket<Pldma> net_in;   // packets from the router

    // Binds net_out to `socket` and sends through `target`, its owner, directly
    // (a Link: PacketTarget).
    void connect(tlm::tlm_target_socket<>& socket, PacketTarget& target);

    static void declare_params(ParamRegistry& reg);
    // Its columns of summary.csv (stats.cpp, next to its statistics).
    static void declare_metrics(MetricRegistry& reg);
    // `node` is this engine's node index; `coord_of` maps node index to
    // ExaNet coordinate for packet headers (one table shared by every
    // engine of a system: it has an entry per node).
    Pldma(sc_core::sc_module_name name, const SimContext& ctx, const std::string& group, unsigned node,
          std::shared_ptr<const std::vector<std::uint32_t>> coord_of);

    unsigned channels() const { return static_cast<unsigned>(channels_.size()); }
    // Completion records written for channel c (its sender-side interrupt),
    // and notifications delivered to it (receiver side).
    CompletionSignal& tx_signal(unsigned c) { return channels_.at(c).tx; }
    // Largest payload of one packet (dma.packet-size).
    std::uint32_t packet_size() const { return params_.packet_size; }
    // When the engine's latest completion record at virtual address `addr`
    // is complete in memory (false if it never wrote one there): software
    // that sees the record earlier saw it before it happened.
    bool record_done_at(std::uint32_t sid, std::uint64_t addr, sc_core::sc_time& at) const {
        return records_.done_at(sid, addr, at);
    }
    CompletionSignal& rx_signal(unsigned c) { return channels_.at(c).rx; }
    // Channel c's rx interrupt line for its event counters: raised once per
    // counter increment, at the time it becomes visible.
    CompletionSignal& counter_signal(unsigned c) { return channels_.at(c).counted; }
    unsigned event_counters() const { return params_.event_counters; }
    // Ordered notifications (dma.notify-window; README.md "Ordered
    // notifications"): numbers this engine assigned that its receivers have
    // not answered yet, and notifications it holds for earlier ones. Both 0
    // at the end of a run whose transfers all completed.
    unsigned notify_window() const { return params_.notify_window; }
    std::uint64_t window_unanswered() const { return send_windows_.unanswered(); }
    std::uint64_t notifications_held() const { return order_.held(); }
    // Words software polls without a notification (README.md "Polled
    // words"): watch the 8-byte words of [va, va + len) written with stream
    // `sid` (zero until the engine first writes them), and read what a load
    // at time `t` sees of one, given `now`, the value in memory at the call
    // (false: not watched).
    void watch_writes(std::uint32_t sid, std::uint64_t va, std::uint64_t len) { memory_.watch().watch(sid, va, len); }
    bool polled_value(std::uint32_t sid, std::uint64_t va, sc_core::sc_time t, std::uint64_t now, std::uint64_t& value,
                      sc_core::sc_time* written = nullptr) const {
        return memory_.watch().visible(sid, va, t, now, value, written);
    }

    // The stream ID of a channel at reset (dma.smmu-tbu, dma.axi-id): every
    // channel's until the kernel writes another AXI ID into its control word.
    std::uint32_t stream_id() const { return params_.stream_id; }
    // The stream ID a channel's control word gives its memory traffic now.
    std::uint32_t channel_stream_id(unsigned c) const { return channels_[c].sid; }
    // Whether `sid` is a stream of this engine (its TBU field, dma.smmu-tbu).
    bool own_stream(std::uint32_t sid) const { return (sid >> 10) == params_.tbu; }

    // dma.fault-tolerant
    bool fault_tolerant() const { return params_.fault_tolerant; }

    // NetVM-style receive: a payload write that faults (terminate mode) is
    // kept in a kernel buffer of dma.netvm-buffer bytes instead of being
    // NACKed, and `copy` puts it in place once the fault is resolved. A full
    // buffer holds the next packet back (the link's credits back up).
    void enable_netvm(NetvmCopyFn copy) { netvm_.enable(std::move(copy)); }
    // Responses (ACK, NACK) from the control thread, not inside the call
    // that delivered the packet they answer (ControlPackets::
    // respond_from_thread): with cut links.
    void respond_from_thread() { control_.respond_from_thread(); }
    // Block I/O packets (PacketType::BlockRequest, BlockData; the OS's
    // RemoteBlock, models/os/remote_block.hpp) share this NI with the
    // engine: arriving ones go to `fn` (it returns when the packet has left
    // the NI's buffer); without a handler they count in rx_errors.
    using BlockPacketFn =
        std::function<sc_core::sc_time(tlm::tlm_generic_payload&, const ExanetPacket&, sc_core::sc_time tail)>;
    void on_block_packet(BlockPacketFn fn) { block_fn_ = std::move(fn); }
    // An observer of every data packet (RDMA write, PacketType::RdmaWrite:
    // a read's reply too) and every read request (PacketType::ReadRequest)
    // that reaches this engine: the packet, when it entered the network
    // (ExanetPacket::injected) and when its tail arrived here. Measurement
    // only (the synthetic workload's latencies, wired by src/sim/system.cpp);
    // it changes nothing the engine does.
    using DataArrivalFn = std::function<void(const ExanetPacket&, sc_core::sc_time tail)>;
    void on_data_arrival(DataArrivalFn fn) { data_fn_ = std::move(fn); }
    // Whether an access on `mem` may wait() (an SMMU that may stall it):
    // told by whoever binds `mem` (src/sim/system.cpp); until told, it may.
    // With it, accept_may_wait() can say no.
    void memory_may_wait(std::function<bool()> fn) { memory_may_wait_ = std::move(fn); }
    // Send a block I/O packet (header, footer and payload filled by the
    // caller) out of net_out, its head ready at `head` (absolute, not
    // before now); returns when its tail has left the NI (absolute).
    // std::logic_error if the network refuses it (no route, too large).
    sc_core::sc_time send_block_packet(tlm::tlm_generic_payload& gp, sc_core::sc_time head);
    // NetVM's sender credits (ni.translation = shadow with rdma.strategy =
    // netvm; credits.hpp): `per_destination` bytes per destination node;
    // statistics under this engine's name in `stats`.
    void enable_credits(StatRegistry& stats, std::uint64_t per_destination);
    bool credits() const { return credits_.active(); }
    bool netvm() const { return netvm_.enabled(); }

    // Terminate mode, fault-tolerant engine: the fault library finished with
    // the fault at `address` of stream `sid` (an input address in the
    // address space of the process whose channel made the access; `write` =
    // FSYNR0.WNR) at time `at`. `resolved` false: the pages could
    // not be made present. A parked channel (write == false) re-reads or
    // fails its transfer; a receive that faulted (write == true) asks its
    // sender to retransmit (or, NetVM, has the kernel copy its buffered
    // packets in) or answers it with an error. Matched by (stream, 4 KiB
    // page), so one outcome releases everything waiting on that page of that
    // process (the atomic unit's faulted read-modify-write and a parked read
    // reply included), and nothing of another process at the same address. Outcomes that match
    // nothing are ignored (counted in `fault_outcomes_unmatched`). Ignored
    // when dma.fault-tolerant is false. Call from a thread or method at the
    // current simulated time (`at` may lie ahead of it); never blocks.
    void fault_resolved(std::uint32_t sid, std::uint64_t address, bool write, bool resolved, sc_core::sc_time at,
                        const Tracer::Cause& story = {}) {
        recovery_.fault_resolved(sid, address, write, resolved, at, story);
    }

private:
    // The network target: data packets to the receiver, responses and
    // control packets to the sender, notification packets to a channel.
    void net_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    // net_transport of a packet whose extension is found (PacketTarget: the
    // ejection link's direct call).
    void accept(tlm::tlm_generic_payload& gp, ExanetPacket& pkt, sc_core::sc_time& delay) override;
    // A receive waits only for memory that stalls, for room in NetVM's
    // buffer, or in a block I/O handler (which this engine cannot see into).
    bool accept_may_wait() const override;
    void mmio_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) { channels_.transport(gp, delay); }
    void watchdog_thread() { recovery_.run_watchdog(); }

    const unsigned node_;
    const std::shared_ptr<const std::vector<std::uint32_t>> coord_table_;
    const std::vector<std::uint32_t>& coord_of_;   // *coord_table_
    const PldmaConfig params_;
    PldmaTrace trace_;
    PldmaStats stats_;
    PacketOut net_path_;   // net_out, or the Link behind it directly (connect())
    SenderCredits credits_;
    SendWindows send_windows_;
    NotificationOrder order_;
    MemoryPort memory_;
    RecordWriter records_;
    ChannelRegisters channels_;
    ControlPackets control_;
    AtomicUnit atomics_;
    NetvmBuffer netvm_;
    BlockPacketFn block_fn_;
    DataArrivalFn data_fn_;
    std::function<bool()> memory_may_wait_;
    Receiver receiver_;
    ReadProtocol reads_;
    FaultRecovery recovery_;
    Transmit transmit_;
    std::vector<std::unique_ptr<LazyThread>> threads_;   // engine, control, atomic (+ records)
};

}   // namespace vrdmasim
