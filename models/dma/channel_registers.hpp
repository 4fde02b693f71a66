// The engine's virtual channels and their registers: the register map
// (pldma_reg), the descriptor software stages and queues with a doorbell,
// each channel's state (Channel), and the MMIO decode of the channel pages
// and the kernel's control page (ChannelRegisters). README.md "Registers".
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include <systemc>
#include <tlm>

#include "models/dma/event_counters.hpp"
#include "models/dma/params.hpp"
#include "models/dma/records.hpp"
#include "models/dma/sequence_window.hpp"
#include "models/dma/stats.hpp"
#include "src/core/lazy_deque.hpp"
#include "src/core/lazy_thread.hpp"

namespace vrdmasim {

// Register map. Channel c's registers fill one 4 KiB page at c * kChannelStride
// (the page the kernel maps into the process that owns the channel: posting
// needs no system call); the kernel's page at kKernelBase holds each
// channel's control word (protection domain, enable), never mapped for a
// process.
namespace pldma_reg {
constexpr std::uint64_t kDescSrc = 0x00;   // 64: source address
constexpr std::uint64_t kDescDst = 0x08;   // 64: destination address (at the destination node)
constexpr std::uint64_t kDescLen = 0x10;   // 64: bytes
constexpr std::uint64_t kDescDstNode = 0x18;   // 32: destination node index
constexpr std::uint64_t kDescFlags = 0x1c;   // 32: kFlagNotify, kFlagNotifyPacket
constexpr std::uint64_t kDescCompl = 0x20;   // 64: address of the sender's completion record
constexpr std::uint64_t kDescTag = 0x28;   // 64: software's cookie, echoed in the record
constexpr std::uint64_t kDoorbell = 0x30;   // write: queue the staged descriptor
constexpr std::uint64_t kStatus = 0x38;   // 32 read: [15:0] queued, bit 31 last doorbell refused
constexpr std::uint64_t kRxRingBase = 0x40;   // 64: receive notification ring
constexpr std::uint64_t kRxRingEntries = 0x48;   // 32
constexpr std::uint64_t kRxProduced = 0x50;   // 64 read: notification records written so far
constexpr std::uint64_t kTxCompleted = 0x58;   // 64 read: completion records written so far
constexpr std::uint64_t kEventCount = 0x60;   // 64 read: notifications delivered (with or without a ring)
constexpr std::uint64_t kDescOp = 0x68;   // 32: the operation (DescOp); reset 0, a write
constexpr std::uint64_t kDescCmp = 0x70;   // 64: compare value of a compare-and-swap
constexpr std::uint64_t kDescCounter = 0x78;   // 32: event counter a kFlagCounter write increments at the receiver
// 64 rw at kEventCounterBase + 8 i (i < dma.event-counters): EVENT_COUNTER[i],
// incremented when a write naming counter i has fully landed here.
constexpr std::uint64_t kEventCounterBase = 0x800;
constexpr std::uint64_t kChannelStride = 0x1000;
constexpr unsigned kMaxChannels = 1024;
constexpr std::uint64_t kKernelBase = kChannelStride * kMaxChannels;   // 4 MiB
// 32 rw at kKernelBase + 8 * c: [15:0] protection domain, bit 16 enabled,
// [29:24] the AXI ID the engine puts on the channel's memory traffic (its
// stream ID is dma.smmu-tbu << 10 | this). Reset: enabled, domain 0, AXI ID
// dma.axi-id.
constexpr std::uint64_t kChannelCtrl = 0x0;
constexpr std::uint32_t kCtrlEnable = 1u << 16;
constexpr unsigned kCtrlAxiShift = 24;
constexpr std::uint32_t kCtrlAxiMask = 0x3fu << kCtrlAxiShift;
constexpr std::uint64_t kWindowSize = kKernelBase + 8 * kMaxChannels;
}   // namespace pldma_reg

// Descriptor flags.
constexpr std::uint32_t kFlagNotify = 1u << 0;   // the last packet tells the receiver (footer)
constexpr std::uint32_t kFlagNotifyPacket = 1u << 1;   // after the ACK, a notification packet (type 6)
constexpr std::uint32_t kFlagCounter = 1u << 2;   // the receiver increments EVENT_COUNTER[DESC_COUNTER]

// DESC_OP: what a descriptor asks of the engine. An operation the engine
// does not implement is refused at the doorbell (STATUS bit 31,
// `doorbells_refused`), never run as something else.
enum class DescOp : std::uint32_t {
    Write = 0,   // RDMA write: DESC_SRC local -> DESC_DST at DESC_DST_NODE
    Read = 1,   // RDMA read: DESC_SRC at DESC_DST_NODE -> DESC_DST local
    FetchAdd = 2,   // network atomics on the 8 bytes at DESC_DST of DESC_DST_NODE;
    CompareSwap = 3,   // DESC_SRC is the operand, DESC_CMP the compare value;
    Swap = 4,   // the old value comes back in the completion record
};
constexpr std::uint32_t kDescOpCount = 5;

struct Descriptor {
    std::uint64_t src = 0, dst = 0, len = 0, compl_addr = 0, tag = 0;
    std::uint64_t compare = 0;
    std::uint32_t dst_node = 0, flags = 0;
    std::uint32_t counter = 0;   // DESC_COUNTER: with kFlagCounter, the receiver's counter to increment
    std::uint64_t nseq = 0;   // notification sequence number plus one (dma.notify-window; 0: none)
    DescOp op = DescOp::Write;
    std::uint64_t id = 0;
    unsigned channel = 0;
    std::uint16_t pd = 0;
    std::uint32_t sid = 0;   // the channel's stream ID when posted: its source reads and completion record
    sc_core::sc_time posted;
    // Responder side of an RDMA read (read.*): this work sends the region a
    // read request asked for back to its initiator (dst_node) as a write;
    // `id` is the initiator's transfer id, and it ends without a record.
    bool reply = false;
};

// One piece of a channel's work: send transfer `id` from packet `next`.
struct Work {
    std::uint64_t id = 0;
    std::uint64_t next = 0;   // next packet index to send
    std::uint64_t epoch = 0;
    bool started = false;   // setup done (a resend starts anew)
    bool resend = false;
    sc_core::sc_time earliest;
    Descriptor desc;   // new transfers: the descriptor until started
    // A numbered write waiting for room in its sequence window, since when.
    bool window_blocked = false;
    sc_core::sc_time blocked_since;
    Tracer::Cause story;   // the step it follows (a resend: the retransmit request)
};

struct Channel {
    std::uint16_t pd = 0;
    bool enabled = true;
    std::uint32_t axi_id = 0;   // control word [29:24]
    std::uint32_t sid = 0;   // stream ID of its memory traffic: dma.smmu-tbu << 10 | axi_id
    Descriptor staged;
    bool last_refused = false;
    LazyDeque<Work> work;   // front first; retransmissions go to the front
    unsigned queued = 0;   // descriptors not started yet
    // Parked on a source fault (fault-tolerant; fault_recovery.*).
    bool parked = false;
    std::uint64_t park_page = 0;
    std::uint32_t park_sid = 0;   // stream of the faulting read (outcomes match by stream and page)
    sc_core::sc_time park_since, park_deadline;
    bool park_done = false, park_resolved = false;
    sc_core::sc_time park_at;
    Tracer::Cause park_story, park_outcome;   // the park's step, and the fault outcome's
    // Receive side.
    std::uint64_t rx_ring_base = 0;
    std::uint32_t rx_ring_entries = 0;
    std::uint64_t rx_written = 0;
    CompletionSignal tx, rx;
    CompletionSignal records;   // notification records written into the ring
    EventCounters counters;   // EVENT_COUNTER[i] (event_counters.*)
    CompletionSignal counted;   // one per counter increment: the rx interrupt line raised for counters
};

class ChannelRegisters {
public:
    // `node` numbers transfer ids; `nodes` bounds DESC_DST_NODE.
    // `windows` numbers notifying writes at their doorbell (dma.notify-window).
    ChannelRegisters(const PldmaConfig& params, PldmaStats& stats, unsigned node, std::size_t nodes,
                     SendWindows& windows);

    // The MMIO target: one register access.
    void transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);

    // A channel's state is made at its first access (a register access, a
    // packet for it, ...): most of a large torus' channels are never used,
    // and one costs some 600 bytes. Made, it is as it was at reset.
    std::size_t size() const { return channels_.size(); }
    Channel& operator[](std::size_t c) const { return channels_[c] ? *channels_[c] : make(c); }
    Channel& at(std::size_t c) const {
        (void)channels_.at(c);   // std::out_of_range past the last channel
        return (*this)[c];
    }
    // Channel c if it was ever accessed, else null (a channel never accessed
    // is at reset: no work, not parked).
    Channel* made(std::size_t c) const { return channels_[c].get(); }
    // The enabled channel of protection domain `pd` (the receiving channel); -1: none.
    int by_domain(std::uint16_t pd) const;
    // Notified when a channel may have work: a doorbell, an outcome, a
    // retransmit request (the engine thread's wake-up).
    WakeEvent& doorbell() { return doorbell_; }

private:
    // The kernel's page: channel c's control word.
    void control_word(tlm::tlm_generic_payload& gp, std::uint64_t addr, bool w, std::uint64_t v);
    // A channel page register at `off`; false: the response status is set.
    bool channel_register(tlm::tlm_generic_payload& gp, unsigned c, std::uint64_t off, bool w, std::uint64_t& v,
                          sc_core::sc_time at, sc_core::sc_time delay);
    void ring_doorbell(unsigned c, sc_core::sc_time at, sc_core::sc_time delay);
    // Whether the engine carries out `op` (a doorbell with any other DESC_OP is refused).
    static bool implemented(DescOp op);
    // Whether staged descriptor `d` is one the engine carries out: an
    // implemented operation, for a read no flags (none is defined), and an
    // event counter (kFlagCounter) only on a write, below `counters`; with
    // ordered notifications (`ordered`) no notification packet (bit 1).
    static bool acceptable(const Descriptor& d, unsigned counters, bool ordered);

    const PldmaConfig& params_;
    PldmaStats& stats_;
    const unsigned node_;
    const std::size_t nodes_;
    Channel& make(std::size_t c) const;
    // The module under construction when the registers were: a channel made
    // later is made under it (its completion signals' events' parent).
    sc_core::sc_module* const owner_;
    mutable std::vector<std::unique_ptr<Channel>> channels_;
    SendWindows& windows_;
    std::uint64_t next_id_ = 1;
    WakeEvent doorbell_;   // made at the first doorbell: most engines of a large torus never send
};

}   // namespace vrdmasim
