// The fault-recovery protocol: park, NACK, retransmit, timeouts (see
// fault_recovery.hpp; README.md "Fault tolerance").
#include "models/dma/fault_recovery.hpp"

#include <algorithm>
#include <sstream>

#include "models/dma/pldma.hpp"
#include "models/dma/transmit.hpp"
#include "src/core/failure_causes.hpp"

namespace vrdmasim {

namespace {

// A run's failed transfers: SMMU faults, and whether the engine can survive
// them (dma.fault-tolerant).
const failure_causes::Declare kFaults(20, [](const Config& cfg, const StatRegistry& stats) {
    const std::uint64_t faults = stats.sum_counters("faults_translation") + stats.sum_counters("faults_access_flag") +
                                 stats.sum_counters("faults_permission") + stats.sum_counters("faults_external");
    if (!faults) return std::string();
    if (!cfg[params_of<PldmaParams>().fault_tolerant])
        return std::to_string(faults) +
               " SMMU fault(s) that the original engine (dma.fault-tolerant = false) cannot survive";
    return std::to_string(faults) + " SMMU fault(s)";
});

}   // namespace

using sc_core::sc_time;

FaultRecovery::FaultRecovery(ChannelRegisters& channels, Transmit& transmit, Receiver& receiver, RecordWriter& records,
                             NetvmBuffer& netvm, ControlPackets& control, AtomicUnit& atomics,
                             const PldmaConfig& params, PldmaStats& stats, PldmaTrace& trace)
    : channels_(channels),
      transmit_(transmit),
      receiver_(receiver),
      records_(records),
      netvm_(netvm),
      control_(control),
      atomics_(atomics),
      params_(params),
      stats_(stats),
      trace_(trace) {}

// ---------------------------------------------------------------- sender

void FaultRecovery::park(Channel& ch, unsigned c, std::uint64_t id, std::uint32_t sid, std::uint64_t address,
                         const Tracer::Cause& fault, sc_time since) {
    // Park this channel until the fault library's outcome for the
    // page (or the timeout); the others go on.
    stats_.parks.inc();
    ch.parked = true;
    ch.park_page = address >> 12;
    ch.park_sid = sid;
    ch.park_since = since;
    ch.park_deadline = since + params_.fault_timeout;
    ch.park_done = ch.park_resolved = false;
    ch.park_outcome = {};
    ch.park_story = {};
    if (trace_.tracer.noting())
        ch.park_story = trace_.tracer.note(
            trace_.track, "park", since, sc_core::SC_ZERO_TIME, trace_.who,
            "transfer " + transfer_name(id) + " parked on channel " + std::to_string(c) +
                ": its read of the source at " + Tracer::hex(address) +
                " was terminated by the SMMU; the channel waits for the fault's outcome (other channels go on)",
            fault, {{"transfer", Tracer::json_string(transfer_name(id))}, {"channel", Tracer::json_number(c)}});
}

FaultRecovery::Unpark FaultRecovery::unpark(Channel& ch, unsigned c, sc_time now, sc_time& resume) {
    if (ch.park_done) {
        ch.parked = false;
        resume = max_time(now, ch.park_at);
        stats_.park_us.add(to_us(resume - ch.park_since));
        trace_unpark(ch, c, resume);
        if (!ch.park_resolved) return Unpark::Fail;
        stats_.rereads.inc();
        ch.work.front().earliest = max_time(ch.work.front().earliest, resume);
        return Unpark::Resume;
    }
    if (ch.park_deadline <= now) {
        ch.parked = false;   // no outcome came: read again (a fresh fault if still absent)
        stats_.fault_timeouts.inc();
        ch.work.front().earliest = max_time(ch.work.front().earliest, now);
        return Unpark::Resume;
    }
    return Unpark::Wait;
}

void FaultRecovery::trace_unpark(const Channel& ch, unsigned c, sc_time resume) {
    Tracer& tracer = trace_.tracer;
    if (tracer.enabled())
        tracer.async_span(trace_.track, "parked", ch.work.front().id, ch.park_since, resume,
                          {{"channel", Tracer::json_number(static_cast<std::uint64_t>(c))}});
    if (tracer.noting()) {
        std::ostringstream os;
        os << "transfer " << transfer_name(ch.work.front().id) << " on channel " << c
           << (ch.park_resolved ? " resumes: source page resolved, " : " fails: source page NOT resolved, ")
           << "parked " << to_us(resume - ch.park_since) << " us"
           << (ch.park_resolved ? "; it re-reads the block that faulted" : "");
        tracer.note(trace_.track, ch.park_resolved ? "resume" : "fail", resume, sc_core::SC_ZERO_TIME, trace_.who,
                    os.str(), ch.park_outcome ? ch.park_outcome : ch.park_story,
                    {{"transfer", Tracer::json_string(transfer_name(ch.work.front().id))}});
    }
}

sc_time FaultRecovery::park_deadline() const {
    sc_time deadline = sc_core::sc_max_time();
    for (std::size_t c = 0; c < channels_.size(); ++c) {
        const Channel* made = channels_.made(c);   // a channel never accessed is not parked
        if (!made) continue;
        const Channel& ch = *made;
        if (ch.parked && !ch.park_done) deadline = std::min(deadline, ch.park_deadline);
    }
    return deadline;
}

void FaultRecovery::nack_received(Outstanding& o, std::uint64_t fault) {
    // A NACK the receiver has answered already (its retransmit request came
    // first): the resend under way must go on.
    if (fault != 0 && fault <= o.answered) {
        stats_.stale_nack();
        return;
    }
    // Stop sending it (at its next packet) and wait for the
    // retransmit request or an error ACK.
    ++o.epoch;
    stats_.nacks_received.inc();
}

void FaultRecovery::control_received(std::uint64_t id, std::uint32_t word, std::uint32_t index, sc_time tail,
                                     const Tracer::Cause& story, std::uint64_t fault) {
    Outstanding* o = transmit_.outstanding(id);
    if (!params_.fault_tolerant || word != kControlRetransmit || !o) {
        stats_.rx_errors.inc();
        return;
    }
    o->answered = std::max(o->answered, fault);
    // Retransmit request: resend from the packet index it carries, ahead
    // of the channel's other work; work of the older epoch stops.
    ++o->epoch;
    Work w;
    w.id = id;
    w.next = index;
    w.epoch = o->epoch;
    w.resend = true;
    w.earliest = tail;
    w.story = story;
    channels_[o->desc.channel].work.push_front(w);
    channels_.doorbell().notify(from_now(tail));
}

// ---------------------------------------------------------------- receiver

void FaultRecovery::nack(Inbound& in, const ExanetPacket& p, std::uint64_t address, sc_time done,
                         const Tracer::Cause& fault) {
    in.faulted = true;
    in.fault_page = address >> 12;
    in.fault_sid = in.sid;
    in.fault_deadline = done + params_.fault_timeout;
    stats_.nacks_sent.inc();
    Tracer& tracer = trace_.tracer;
    in.fault_story = {};
    if (tracer.noting())
        in.fault_story = tracer.note(
            trace_.track, "NACK", done, sc_core::SC_ZERO_TIME, trace_.who,
            "transfer " + transfer_name(p.transfer) + " from node" + std::to_string(p.src_node) + ": write fault at " +
                Tracer::hex(address) + ", NACK at packet " + std::to_string(in.first_missing()) +
                ": this packet and the rest of the transfer are dropped until the fault is resolved",
            fault,
            {{"transfer", Tracer::json_string(transfer_name(p.transfer))},
             {"packet", Tracer::json_number(in.first_missing())}});
    // Resend from the first packet not landed (later ones that landed,
    // out of order, are dropped as duplicates).
    ++in.faults;
    control_.send_response(p, kStatusFault, in.first_missing(), done, in.faults);
    watch();
}

void FaultRecovery::answer(ControlKind kind, const InboundKey& key, const Inbound& in, sc_time at) {
    ControlOut c;
    c.kind = kind;
    c.id = key.second;
    c.index = in.first_missing();
    c.node = key.first;
    c.coord = in.src_coord;
    c.dst = in.faults;   // the NACK it answers
    c.at = at;
    c.story = in.fault_story;
    control_.queue(c);
}

// ---------------------------------------------------------------- outcomes

void FaultRecovery::fault_resolved(std::uint32_t sid, std::uint64_t address, bool write, bool resolved, sc_time at,
                                   const Tracer::Cause& story) {
    if (!params_.fault_tolerant) return;
    outcome_story_ = story;   // what resolve_parked / resolve_inbound name
    at = max_time(at, sc_core::sc_time_stamp());
    const std::uint64_t page = address >> 12;
    bool matched = false;
    if (!write) {
        matched = resolve_parked(sid, page, resolved, at);
    } else {
        matched = resolve_inbound(sid, page, resolved, at);
        if (records_.fault_resolved(sid, page, resolved, at)) matched = true;
        if (netvm_.fault_resolved(sid, page, resolved, at)) matched = true;
    }
    // The atomic unit waits on a page (of its request's stream) whichever
    // access of its read-modify-write faulted.
    if (atomics_.fault_resolved(sid, page, resolved, at)) matched = true;
    if (!matched) stats_.unmatched.inc();
}

bool FaultRecovery::resolve_parked(std::uint32_t sid, std::uint64_t page, bool resolved, sc_time at) {
    bool matched = false;
    for (std::size_t c = 0; c < channels_.size(); ++c) {
        Channel* made = channels_.made(c);   // a channel never accessed is not parked
        if (!made) continue;
        Channel& ch = *made;
        if (!ch.parked || ch.park_done || ch.park_page != page || ch.park_sid != sid) continue;
        ch.park_done = true;
        ch.park_resolved = resolved;
        ch.park_at = at;
        ch.park_outcome = outcome_story_;
        matched = true;
    }
    if (matched) channels_.doorbell().notify(sc_core::SC_ZERO_TIME);
    return matched;
}

bool FaultRecovery::resolve_inbound(std::uint32_t sid, std::uint64_t page, bool resolved, sc_time at) {
    bool matched = false;
    receiver_.each_inbound([&](const InboundKey& key, Inbound& in) {
        if (!in.faulted || in.fault_page != page || in.fault_sid != sid) return;
        matched = true;
        in.faulted = false;
        if (outcome_story_) in.fault_story = outcome_story_;
        if (resolved) {
            stats_.retx_requests.inc();
        } else {
            in.dead = true;   // kept so that packets still in flight are dropped
            stats_.rx_errors.inc();
            receiver_.failed(key, in, at);   // a read's reply: the read fails
        }
        answer(resolved ? ControlKind::Retransmit : ControlKind::ErrorAck, key, in, at);
    });
    return matched;
}

// ---------------------------------------------------------------- timeouts

sc_time FaultRecovery::inbound_deadline() const {
    sc_time deadline = sc_core::sc_max_time();
    receiver_.each_inbound([&](const InboundKey&, const Inbound& in) {
        if (in.faulted && !in.dead) deadline = std::min(deadline, in.fault_deadline);
    });
    return deadline;
}

void FaultRecovery::expire_inbound(sc_time now) {
    receiver_.each_inbound([&](const InboundKey& key, Inbound& in) {
        if (!in.faulted || in.dead || in.fault_deadline > now) return;
        in.faulted = false;
        stats_.fault_timeouts.inc();
        stats_.retx_requests.inc();
        answer(ControlKind::Retransmit, key, in, now);
    });
}

void FaultRecovery::run_watchdog() {
    // Receiver-side faults whose outcome never came (a second fault while FSR
    // still held the first is only FSR.MULTI): after dma.fault-timeout, a
    // NACKed transfer asks for retransmission anyway (the resend faults again
    // if the page is still absent), and a NetVM page is written again.
    for (;;) {
        const sc_time deadline = std::min(inbound_deadline(), netvm_.deadline());
        const sc_time now = sc_core::sc_time_stamp();
        if (deadline == sc_core::sc_max_time()) {
            sc_core::wait(watchdog_ev_.get());
            continue;
        }
        if (deadline > now) {
            sc_core::wait(deadline - now, watchdog_ev_.get());
            continue;
        }
        expire_inbound(now);
        netvm_.expire(now);
    }
}

}   // namespace vrdmasim
