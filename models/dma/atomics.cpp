// The engine's atomic unit (see atomics.hpp; README.md "Network atomics").
#include "models/dma/atomics.hpp"

#include <cstring>
#include <sstream>

namespace vrdmasim {

using sc_core::sc_time;

bool is_atomic(DescOp op) { return op == DescOp::FetchAdd || op == DescOp::CompareSwap || op == DescOp::Swap; }

const char* atomic_name(DescOp op) {
    switch (op) {
    case DescOp::FetchAdd: return "fetch-add";
    case DescOp::CompareSwap: return "compare-swap";
    case DescOp::Swap: return "swap";
    default: return "not an atomic";
    }
}

std::uint64_t atomic_result(DescOp op, std::uint64_t old, std::uint64_t operand, std::uint64_t compare, bool& write) {
    write = true;
    switch (op) {
    case DescOp::FetchAdd: return old + operand;   // modulo 2^64
    case DescOp::Swap: return operand;
    case DescOp::CompareSwap: write = old == compare; return write ? operand : old;
    default: break;
    }
    write = false;
    return old;
}

AtomicUnit::AtomicUnit(ChannelRegisters& channels, MemoryPort& memory, ControlPackets& control,
                       const PldmaConfig& params, PldmaStats& stats, PldmaTrace& trace)
    : channels_(channels),
      memory_(memory),
      control_(control),
      params_(params),
      stats_(stats),
      trace_(trace),
      reply_pkt_(*new ExanetPacket) {
    reply_gp_.set_extension(&reply_pkt_);
}

void AtomicUnit::request(const tlm::tlm_generic_payload& gp, const ExanetPacket& p, sc_time tail) {
    Request r;
    if (gp.get_data_length() >= sizeof(AtomicRequestWire)) {
        std::memcpy(&r.wire, gp.get_data_ptr(), sizeof r.wire);
    } else {
        r.wire.id = p.transfer;
        r.wire.op = 0;   // malformed: answered with an error below
    }
    r.va = p.header.dst_va;
    r.pd = p.header.pdid;
    r.channel = channels_.by_domain(p.header.pdid);
    if (r.channel >= 0) r.sid = channels_[static_cast<unsigned>(r.channel)].sid;
    r.src_node = p.src_node;
    r.src_coord = p.footer.src_coord;
    r.arrived = tail;
    r.story = p.story;
    queue_.push_back(r);
    queued_.notify(sc_core::SC_ZERO_TIME);
}

bool AtomicUnit::fault_resolved(std::uint32_t sid, std::uint64_t page, bool resolved, sc_time at) {
    if (!watching_ || outcome_done_ || page != wait_page_ || sid != wait_sid_) return false;
    outcome_done_ = true;
    outcome_resolved_ = resolved;
    outcome_at_ = at;
    outcome_.notify(sc_core::SC_ZERO_TIME);
    return true;
}

void AtomicUnit::run() {
    for (;;) {
        while (queue_.empty()) sc_core::wait(queued_.get());
        const Request r = queue_.front();
        queue_.pop_front();
        // In order: the unit starts an atomic once it has arrived and the
        // previous one is done; it runs at its own time, so what it reads is
        // memory as of then.
        sc_time at = max_time(r.arrived, free_);
        if (at > sc_core::sc_time_stamp()) sc_core::wait(at - sc_core::sc_time_stamp());
        const sc_time start = at;
        bool ok = false;
        std::uint64_t old = 0;
        const auto op = static_cast<DescOp>(r.wire.op);
        if (r.channel < 0) {
            stats_.pd_violations.inc();   // no channel of the request's domain here: nothing touched
        } else if (!is_atomic(op) || r.va % 8 != 0) {
            stats_.rx_errors.inc();   // the initiator's doorbell refuses these: a malformed packet
        } else {
            for (;;) {
                std::uint64_t page = 0;
                const Outcome o = attempt(r, at, old, page);
                if (o == Outcome::Done) {
                    ok = true;
                    break;
                }
                if (o == Outcome::Error || !wait_outcome(page, at)) break;
            }
        }
        if (ok) stats_.atomics_executed.inc();
        free_ = at;
        trace(r, ok, old, start, at);
        reply(r, ok, ok ? old : 0, at);
    }
}

AtomicUnit::Outcome AtomicUnit::attempt(const Request& r, sc_time& at, std::uint64_t& old, std::uint64_t& fault_page) {
    const auto op = static_cast<DescOp>(r.wire.op);
    // The receiving channel's access (r.channel): its stream ID, so the
    // target process's address space and context bank.
    auto access = [&](tlm::tlm_command cmd, std::uint64_t& v) {
        SmmuFaultExtension fx;
        bool ok = true;
        unsigned char buf[8];
        if (cmd == tlm::TLM_WRITE_COMMAND) std::memcpy(buf, &v, 8);
        at = memory_.access(r.sid, cmd, r.va, buf, 8, at, ok, &fx);
        if (ok) {
            if (cmd == tlm::TLM_READ_COMMAND) std::memcpy(&v, buf, 8);
            return Outcome::Done;
        }
        if (fx.type == FaultType::None) return Outcome::Error;
        stats_.atomic_faults.inc();
        if (!params_.fault_tolerant) return Outcome::Error;
        fault_page = fx.address >> 12;
        return Outcome::Fault;
    };
    // Watch the word's page from before the first access: the fault library
    // may report its outcome while the faulting access is still returning
    // (a translation that waited in the SMMU), before wait_outcome.
    watching_ = true;
    outcome_done_ = false;
    wait_page_ = r.va >> 12;
    wait_sid_ = r.sid;
    std::uint64_t v = 0;
    Outcome o = access(tlm::TLM_READ_COMMAND, v);
    if (o != Outcome::Fault) watching_ = false;
    if (o != Outcome::Done) return o;
    bool write = false;
    std::uint64_t nv = atomic_result(op, v, r.wire.operand, r.wire.compare, write);
    if (write) {
        // A faulted write wrote nothing: the whole read-modify-write runs
        // again after the outcome, reading afresh, so the update is applied
        // once and the old value returned is the one it was applied to.
        o = access(tlm::TLM_WRITE_COMMAND, nv);
        if (o != Outcome::Fault) watching_ = false;
        if (o != Outcome::Done) return o;
    }
    old = v;
    return Outcome::Done;
}

bool AtomicUnit::wait_outcome(std::uint64_t page, sc_time& at) {
    wait_page_ = page;   // the word's page (an aligned word never crosses one)
    const sc_time deadline = at + params_.fault_timeout;
    for (;;) {
        if (outcome_done_) break;
        const sc_time now = sc_core::sc_time_stamp();
        if (deadline <= now) {
            // No outcome (FSR.MULTI): try again; a fresh fault if still absent.
            stats_.fault_timeouts.inc();
            watching_ = false;
            at = max_time(at, now);
            return true;
        }
        sc_core::wait(deadline - now, outcome_.get());
    }
    watching_ = false;
    at = max_time(max_time(at, outcome_at_), sc_core::sc_time_stamp());
    if (at > sc_core::sc_time_stamp()) sc_core::wait(at - sc_core::sc_time_stamp());
    return outcome_resolved_;
}

void AtomicUnit::reply(const Request& r, bool ok, std::uint64_t old, sc_time at) {
    reply_wire_ = AtomicReplyWire{};
    reply_wire_.id = r.wire.id;
    reply_wire_.status = ok ? kStatusOk : kStatusError;
    reply_wire_.old = old;
    control_.emit(reply_gp_, reply_pkt_, reinterpret_cast<unsigned char*>(&reply_wire_), sizeof reply_wire_,
                  PacketType::AtomicReply, r.src_coord, r.src_node, r.wire.id, 0, r.pd, 0, at);
}

void AtomicUnit::trace(const Request& r, bool ok, std::uint64_t old, sc_time start, sc_time end) {
    Tracer& tracer = trace_.tracer;
    const char* name = atomic_name(static_cast<DescOp>(r.wire.op));
    if (tracer.enabled())
        tracer.async_span(trace_.track, ok ? "atomic exec" : "atomic exec (error)", r.wire.id, start, end,
                          {{"id", Tracer::json_string(transfer_name(r.wire.id))},
                           {"op", Tracer::json_string(name)},
                           {"va", Tracer::json_hex(r.va)},
                           {"old", Tracer::json_number(old)},
                           {"src_node", Tracer::json_number(static_cast<std::uint64_t>(r.src_node))}});
    if (tracer.noting()) {
        std::ostringstream os;
        os << "atomic " << transfer_name(r.wire.id) << " from node" << r.src_node << ": " << name << " at 0x"
           << std::hex << r.va << std::dec;
        if (ok) os << " executed, old value " << old;
        else os << " FAILED (" << (r.channel < 0 ? "no channel of its domain" : "fault or error") << ")";
        os << ", " << to_us(end - start) << " us in the unit";
        tracer.note(Tracer::Track{}, ok ? "atomic executed" : "atomic failed", end, sc_core::SC_ZERO_TIME, trace_.who,
                    os.str(), r.story);
    }
}

}   // namespace vrdmasim
