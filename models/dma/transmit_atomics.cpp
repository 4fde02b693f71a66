// The transmit scheduler's side of network atomics: the request packet, the
// reply that completes the atomic, and its trace (see transmit.hpp and
// atomics.hpp; models/dma/README.md "Network atomics").
#include <cstring>
#include <sstream>

#include "models/dma/atomics.hpp"
#include "models/dma/transmit.hpp"

namespace vrdmasim {

using sc_core::sc_time;

void Transmit::send_atomic(Channel& ch, unsigned c, Work& w, const Descriptor& d) {
    ExanetPacket& p = tx_pkt_;
    prepare_header(p, c, d);
    p.header.type = PacketType::AtomicRequest;
    p.header.dst_va = d.dst;
    AtomicRequestWire req;
    req.id = d.id;
    req.op = static_cast<std::uint32_t>(d.op);
    req.operand = d.src;
    req.compare = d.compare;
    std::memcpy(atomic_buf_, &req, sizeof req);
    p.header.size = sizeof req;
    p.footer.first = p.footer.last = true;
    const Outstanding* o = outstanding(d.id);
    p.story = o ? o->story : Tracer::Cause{};   // the target's execution follows the atomic's start
    if (send_packet(atomic_buf_, sizeof req, w.earliest)) drop(ch, &w);   // the reply completes it
    else fail(ch, w, send_free_);
    qk_.set(from_now(send_free_));
    if (qk_.need_sync()) qk_.sync();
}

void Transmit::atomic_reply(std::uint64_t id, std::uint32_t status, std::uint64_t old, sc_time tail) {
    auto it = outstanding_.find(id);
    if (it == outstanding_.end() || !is_atomic(it->second.desc.op)) {
        stats_.rx_errors.inc();   // for nothing we sent
        return;
    }
    const Descriptor d = it->second.desc;
    finishing_ = it->second.story;   // its completion's step follows its start
    outstanding_.erase(it);
    const bool ok = status == kStatusOk;
    complete(d, ok ? kStatusOk : kStatusError, ok ? 8 : 0, tail, ok ? old : 0);
}

void Transmit::trace_atomic(const Descriptor& d, std::uint32_t status, std::uint64_t old, sc_time done) {
    Tracer& tracer = trace_.tracer;
    if (tracer.enabled()) {
        tracer.async_span(trace_.track, status == kStatusOk ? "atomic" : "atomic (error)", d.id, d.posted, done,
                          {{"id", Tracer::json_string(transfer_name(d.id))},
                           {"op", Tracer::json_string(atomic_name(d.op))},
                           {"old", Tracer::json_number(old)},
                           {"channel", Tracer::json_number(static_cast<std::uint64_t>(d.channel))},
                           {"dst_node", Tracer::json_number(static_cast<std::uint64_t>(d.dst_node))}});
    }
    if (tracer.noting()) {
        std::ostringstream os;
        os << "atomic " << transfer_name(d.id) << " " << atomic_name(d.op);
        if (status == kStatusOk) os << " complete: old value " << old;
        else os << " FAILED";
        os << ", latency " << to_us(done - d.posted) << " us";
        tracer.note(Tracer::Track{}, status == kStatusOk ? "atomic complete" : "atomic failed", done,
                    sc_core::SC_ZERO_TIME, trace_.who, os.str(), finishing_);
    }
    finishing_ = {};
}

}   // namespace vrdmasim
