// Network atomics, target side: the engine's atomic unit executes
// fetch-and-add, compare-and-swap and swap on 8 aligned bytes of this node's
// memory for AtomicRequest packets (ExaNet type 3), through the engine's
// memory port (and so the SMMU, in the context of the receiving channel's
// protection domain), and answers each with an AtomicReply (type 4) carrying
// the old value. The unit is in order: one read-modify-write at a time, no
// other atomic of this engine in between, so atomics are atomic with respect
// to each other. Its accesses carry the stream ID of the receiving channel
// (the target channel of the request's domain), i.e. that process's address
// space. A terminate-mode fault (fault-tolerant engine) holds the unit until
// the fault's outcome (fault_resolved, matched by stream and 4 KiB page) and
// the atomic is then executed from its read again: a faulted access wrote
// nothing, so the update is applied exactly once. Stall mode needs nothing
// (the access waits in the SMMU); the original engine answers a fault with an
// error. The initiator side (doorbell, request packet, completion with the
// old value) is in channel_registers.* and transmit.*. README.md "Network
// atomics".
#pragma once

#include <cstdint>
#include <deque>

#include <systemc>
#include <tlm>

#include "src/core/lazy_event.hpp"
#include "src/core/lazy_thread.hpp"
#include "models/dma/channel_registers.hpp"
#include "models/dma/control_packets.hpp"
#include "models/dma/memory_port.hpp"
#include "models/dma/params.hpp"
#include "models/dma/stats.hpp"
#include "models/interconnect/exanet_packet.hpp"
#include "src/core/lazy_deque.hpp"

namespace vrdmasim {

bool is_atomic(DescOp op);
const char* atomic_name(DescOp op);
// The value an atomic writes, given the old one (nullopt-like: `write` false
// for a compare-and-swap whose compare failed: nothing is written).
std::uint64_t atomic_result(DescOp op, std::uint64_t old, std::uint64_t operand, std::uint64_t compare, bool& write);

// The payloads on the wire (little-endian): request 32 B, reply 24 B.
struct AtomicRequestWire {
    std::uint64_t id = 0;   // the initiator's transfer id
    std::uint32_t op = 0;   // DescOp
    std::uint32_t pad = 0;
    std::uint64_t operand = 0;   // addend, new value (swap, compare-and-swap)
    std::uint64_t compare = 0;   // compare-and-swap
};
static_assert(sizeof(AtomicRequestWire) == 32, "atomic request layout");
struct AtomicReplyWire {
    std::uint64_t id = 0;
    std::uint32_t status = 0;   // kStatusOk / kStatusError
    std::uint32_t pad = 0;
    std::uint64_t old = 0;   // the value before the operation
};
static_assert(sizeof(AtomicReplyWire) == 24, "atomic reply layout");

class AtomicUnit {
public:
    AtomicUnit(ChannelRegisters& channels, MemoryPort& memory, ControlPackets& control, const PldmaConfig& params,
               PldmaStats& stats, PldmaTrace& trace);
    AtomicUnit(const AtomicUnit&) = delete;
    AtomicUnit& operator=(const AtomicUnit&) = delete;

    // An AtomicRequest packet arrived (its tail at `tail`): queued for the
    // unit, in arrival order.
    void request(const tlm::tlm_generic_payload& gp, const ExanetPacket& p, sc_core::sc_time tail);
    // The fault library's outcome for `page` of stream `sid`: true if the
    // unit waited on it.
    bool fault_resolved(std::uint32_t sid, std::uint64_t page, bool resolved, sc_core::sc_time at);
    // The atomic thread: executes the queued atomics one after the other.
    void run();
    // Notified when a request is queued (the thread's first activation).
    WakeEvent& queued() { return queued_; }

private:
    struct Request {
        AtomicRequestWire wire;
        std::uint64_t va = 0;
        std::uint16_t pd = 0;
        int channel = -1;   // receiving channel (by protection domain); -1: none
        std::uint32_t sid = 0;   // its stream ID: the read-modify-write's
        unsigned src_node = 0;
        std::uint32_t src_coord = 0;
        sc_core::sc_time arrived;
        Tracer::Cause story;   // the atomic's start at its initiator (narrated story)
    };
    enum class Outcome { Done, Fault, Error };
    // One attempt of the read-modify-write from `at`; `at` becomes its end.
    // Fault: a terminate-mode fault the fault-tolerant engine waits on
    // (`fault_page` its page); nothing was written.
    Outcome attempt(const Request& r, sc_core::sc_time& at, std::uint64_t& old, std::uint64_t& fault_page);
    // Wait for the outcome of the fault on `page` (or dma.fault-timeout);
    // false: not resolved. `at` becomes the time to retry.
    bool wait_outcome(std::uint64_t page, sc_core::sc_time& at);
    void reply(const Request& r, bool ok, std::uint64_t old, sc_core::sc_time at);
    void trace(const Request& r, bool ok, std::uint64_t old, sc_core::sc_time start, sc_core::sc_time end);

    ChannelRegisters& channels_;
    MemoryPort& memory_;
    ControlPackets& control_;
    const PldmaConfig& params_;
    PldmaStats& stats_;
    PldmaTrace& trace_;
    LazyDeque<Request> queue_;
    WakeEvent queued_;   // the atomic thread's wake-up, made when the first request is queued
    LazyEvent outcome_;   // made when first waited for or notified
    sc_core::sc_time free_;   // the unit finishes its current atomic
    // The page of the atomic being executed, watched for its fault's outcome
    // from its first access until the outcome is taken.
    bool watching_ = false, outcome_done_ = false, outcome_resolved_ = false;
    std::uint64_t wait_page_ = 0;
    std::uint32_t wait_sid_ = 0;
    sc_core::sc_time outcome_at_;
    tlm::tlm_generic_payload reply_gp_;
    ExanetPacket& reply_pkt_;   // owned by reply_gp_
    AtomicReplyWire reply_wire_;
};

}   // namespace vrdmasim
