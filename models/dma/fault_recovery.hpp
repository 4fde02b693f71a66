// The fault-recovery protocol of the fault-tolerant engine
// (dma.fault-tolerant, terminate-mode SMMU faults): a faulting source read
// parks its channel until the fault library's outcome (fault_resolved) or
// dma.fault-timeout, then re-reads or fails the transfer; a faulting payload
// write is NACKed, its later packets dropped, and once the fault is resolved
// (or timed out) the receiver asks the sender to retransmit from that
// packet; the sender stops at the NACK and resends ahead of its channel's
// other work. Outcomes also release faulted records (RecordWriter) and NetVM
// pages (NetvmBuffer). README.md "Fault tolerance".
#pragma once

#include <cstdint>

#include <systemc>

#include "src/core/lazy_event.hpp"
#include "models/dma/atomics.hpp"
#include "models/dma/channel_registers.hpp"
#include "models/dma/control_packets.hpp"
#include "models/dma/netvm_buffer.hpp"
#include "models/dma/params.hpp"
#include "models/dma/receive.hpp"
#include "models/dma/records.hpp"
#include "models/dma/stats.hpp"
#include "models/interconnect/exanet_packet.hpp"

namespace vrdmasim {

class Transmit;
struct Outstanding;

class FaultRecovery {
public:
    FaultRecovery(ChannelRegisters& channels, Transmit& transmit, Receiver& receiver, RecordWriter& records,
                  NetvmBuffer& netvm, ControlPackets& control, AtomicUnit& atomics, const PldmaConfig& params,
                  PldmaStats& stats, PldmaTrace& trace);
    FaultRecovery(const FaultRecovery&) = delete;
    FaultRecovery& operator=(const FaultRecovery&) = delete;

    // Sender: channel c's read of transfer `id` (stream `sid`) faulted at
    // `address`; park it from `since` until the outcome for that stream's
    // page (or the timeout).
    void park(Channel& ch, unsigned c, std::uint64_t id, std::uint32_t sid, std::uint64_t address,
              const Tracer::Cause& fault, sc_core::sc_time since);
    // Sender, parked channel c at `now`: Wait (no outcome yet), Resume
    // (resolved, or timed out: read again) or Fail (not resolved: the
    // caller fails the front transfer at `resume`).
    enum class Unpark { Wait, Resume, Fail };
    Unpark unpark(Channel& ch, unsigned c, sc_core::sc_time now, sc_core::sc_time& resume);
    // Earliest deadline of a parked channel still waiting (sc_max_time: none).
    sc_core::sc_time park_deadline() const;
    // Sender: a NACK for `o` came (the receiver's fault number `fault`; 0:
    // none): its work stops at its next packet, unless a retransmit request
    // answering that fault came first.
    void nack_received(Outstanding& o, std::uint64_t fault = 0);
    // Sender: a control packet (`word`: opcode) for transfer `id`; a
    // retransmit request resends from packet `index` at `tail` (answering
    // the receiver's NACKs up to number `fault`).
    void control_received(std::uint64_t id, std::uint32_t word, std::uint32_t index, sc_core::sc_time tail,
                          const Tracer::Cause& story = {}, std::uint64_t fault = 0);

    // Receiver: the payload write of `p` faulted at `address` at `done`:
    // NACK it and drop the transfer's packets until the outcome.
    void nack(Inbound& in, const ExanetPacket& p, std::uint64_t address, sc_core::sc_time done,
              const Tracer::Cause& fault = {});
    // A receiver-side fault deadline was set: the watchdog looks again.
    void watch() { watchdog_ev_.notify(sc_core::SC_ZERO_TIME); }

    // See Pldma::fault_resolved.
    // `story`: the outcome's step in the narrated story (what the engine's reaction follows).
    void fault_resolved(std::uint32_t sid, std::uint64_t address, bool write, bool resolved, sc_core::sc_time at,
                        const Tracer::Cause& story = {});
    // The watchdog thread: receiver-side faults whose outcome never came.
    void run_watchdog();

private:
    Tracer::Cause outcome_story_;   // the outcome fault_resolved is handing out
    void trace_unpark(const Channel& ch, unsigned c, sc_core::sc_time resume);
    // Source faults: release the channels parked on `page` of stream `sid`.
    bool resolve_parked(std::uint32_t sid, std::uint64_t page, bool resolved, sc_core::sc_time at);
    // Write faults: the receives NACKed on `page` of stream `sid` ask for
    // retransmission (resolved) or answer with an error ACK.
    bool resolve_inbound(std::uint32_t sid, std::uint64_t page, bool resolved, sc_core::sc_time at);
    // Send the NACKed transfer `key` a retransmit request (from its next
    // packet) or an error ACK.
    void answer(ControlKind kind, const InboundKey& key, const Inbound& in, sc_core::sc_time at);
    sc_core::sc_time inbound_deadline() const;
    void expire_inbound(sc_core::sc_time now);

    ChannelRegisters& channels_;
    Transmit& transmit_;
    Receiver& receiver_;
    RecordWriter& records_;
    NetvmBuffer& netvm_;
    ControlPackets& control_;
    AtomicUnit& atomics_;
    const PldmaConfig& params_;
    PldmaStats& stats_;
    PldmaTrace& trace_;
    LazyEvent watchdog_ev_;   // made when first waited for or notified (fault-tolerant engines only)
};

}   // namespace vrdmasim
