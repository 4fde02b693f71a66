// The NetVM receive buffer (see netvm_buffer.hpp; README.md "Fault tolerance").
#include "models/dma/netvm_buffer.hpp"

#include <algorithm>

namespace vrdmasim {

using sc_core::sc_time;

NetvmBuffer::NetvmBuffer(MemoryPort& memory, Receiver& receiver, const PldmaConfig& params, PldmaStats& stats)
    : memory_(memory), receiver_(receiver), params_(params), stats_(stats) {}

bool NetvmBuffer::pending(std::uint32_t sid, std::uint64_t va, std::uint64_t len) const {
    return copy_ && (pages_.count({sid, va >> 12}) || pages_.count({sid, (va + len - 1) >> 12}));
}

void NetvmBuffer::put(const InboundKey& key, std::uint32_t sid, std::uint64_t va, const unsigned char* data,
                      std::uint64_t len) {
    Buffered bf;
    bf.key = key;
    bf.sid = sid;
    bf.va = va;
    bf.data.assign(data, data + len);
    buf_.push_back(std::move(bf));
    used_ += len;
    ++puts_;
    stats_.netvm_peak.set(std::max(stats_.netvm_peak.value(), static_cast<double>(used_)));
    stats_.netvm_packets.inc();
}

sc_time NetvmBuffer::flush(const SidPage& page, bool resolved, bool by_engine, sc_time at) {
    // Buffered packets of `page`, oldest first: copied in by the kernel
    // (resolved), written by the engine itself (by_engine: the page turned
    // out present), or dropped (not resolved: their transfers fail).
    sc_time t = at;
    for (auto it = buf_.begin(); it != buf_.end();) {
        const std::uint64_t first = it->va >> 12, last = (it->va + it->data.size() - 1) >> 12;
        if (it->sid != page.first || (first != page.second && last != page.second)) {
            ++it;
            continue;
        }
        Inbound* in = receiver_.find_inbound(it->key);
        if (resolved && !by_engine) {
            t = copy_(it->sid, it->va, it->data.data(), it->data.size(), t);
            memory_.watch().wrote(it->sid, it->va, it->data.data(), it->data.size(), t);
            stats_.netvm_bytes.inc(it->data.size());
            stats_.bytes_received.inc(it->data.size());
        } else if (by_engine) {
            bool ok = true;
            t = memory_.access(it->sid, tlm::TLM_WRITE_COMMAND, it->va, it->data.data(), it->data.size(), t, ok);
            if (ok) stats_.bytes_received.inc(it->data.size());
            else if (in) in->error = true;
        } else if (in) {
            in->error = true;
            stats_.rx_errors.inc();
        }
        used_ -= it->data.size();
        if (credits_) credits_->placed(it->key.first, it->data.size(), t);
        if (in && --in->buffered == 0 && in->last_seen) receiver_.finish_later(it->key, *in, t);
        it = buf_.erase(it);
    }
    space_ev_.notify(from_now(t));
    return t;
}

bool NetvmBuffer::fault_resolved(std::uint32_t sid, std::uint64_t page, bool resolved, sc_time at) {
    const SidPage key{sid, page};
    auto np = pages_.find(key);
    if (np == pages_.end()) return false;
    pages_.erase(np);
    flush(key, resolved, false, at);
    return true;
}

sc_time NetvmBuffer::deadline() const {
    sc_time deadline = sc_core::sc_max_time();
    for (const auto& kv : pages_) deadline = std::min(deadline, kv.second);
    return deadline;
}

void NetvmBuffer::expire(sc_time now) {
    std::vector<SidPage> expired;
    for (const auto& kv : pages_)
        if (kv.second <= now) expired.push_back(kv.first);
    for (const SidPage& page : expired) {
        stats_.fault_timeouts.inc();
        // Probe the page with a one-byte read through the SMMU: present
        // now (another fault's touch-ahead) -> the engine writes the
        // buffered packets itself; still absent -> the probe raised a
        // fresh fault, whose outcome will flush them.
        unsigned char probe = 0;
        bool ok = true;
        SmmuFaultExtension fx;
        memory_.access(page.first, tlm::TLM_WRITE_COMMAND, page.second << 12, &probe, 0, now, ok, &fx);
        pages_[page] = sc_core::sc_time_stamp() + params_.fault_timeout;
        if (ok) {
            pages_.erase(page);
            flush(page, true, true, sc_core::sc_time_stamp());
        }
    }
}

}   // namespace vrdmasim
