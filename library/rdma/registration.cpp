// RdmaProcess: messages registered as rdma.strategy says (send, complete,
// get, receive areas, the pin-deferred registration thread).
#include "library/rdma/process.hpp"

#include "src/core/sim_params.hpp"
#include "models/common/noise.hpp"

#include "src/core/format.hpp"
#include "src/core/software_turns.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace vrdmasim {

using sc_core::sc_time;

void RdmaProcess::prefetch_advise(std::uint64_t va, std::uint64_t len, bool ahead) {
    if (!prefetch_ || len == 0) return;
    std::uint64_t end = va + len;
    if (ahead) {
        // rdma.prefetch-distance beyond the message, within the buffer's mapping.
        for (const auto& [a, bytes] : allocations_)
            if (va >= a && va < a + bytes) {
                end = std::max(end, std::min(a + bytes, va + len + prefetch_->distance()));
                break;
            }
    }
    if (prefetch_->advise(va, end - va) == 0) return;
    run_on_core("prefetch-advise", prefetch_call_);
    prefetch_ev_.notify(now() - sc_core::sc_time_stamp());
}

void RdmaProcess::prefetch_thread() {
    software_turns::enter(software_turns::node_of(group_));
    // rdma.prefetch = advise: the worker the advice is handed to (the
    // kernel's work queue). Woken by an advice (at its time), it populates
    // the advised pages in order, a batch at a time, then sleeps until the
    // next advice.
    for (;;) {
        while (!prefetch_ || !prefetch_->pending()) sc_core::wait(prefetch_ev_.get());
        const sc_time t = sc_core::sc_time_stamp();
        const sc_time done = prefetch_->step(t);
        if (done > t) sc_core::wait(done - t);
    }
}

void RdmaProcess::registration_thread() {
    software_turns::enter(software_turns::node_of(group_));
    // pin-deferred: the library's registration thread. Woken when a buffer
    // is allocated (at the allocation's time), it pins the queued buffers
    // chunk by chunk on the node's cores (Vm::pin charges them) until none
    // is left, then sleeps until the next allocation.
    for (;;) {
        while (!registrar_ || !registrar_->background_pending()) sc_core::wait(background_ev_.get());
        const sc_time t = sc_core::sc_time_stamp();
        const sc_time done = registrar_->background_step(t);
        if (done > t) sc_core::wait(done - t);
    }
}

RegResult RdmaProcess::reg_acquire(std::uint64_t va, std::uint64_t len, bool write) {
    if (!registrar_) return RegResult{true, VmError::Ok, now()};
    const RegResult r = registrar_->acquire(va, len, write, now());
    if (r.done > now()) qk().set(r.done - sc_core::sc_time_stamp());
    if (qk().need_sync() || !thread_qks_.empty()) qk().sync();
    return r;
}

void RdmaProcess::reg_release(std::uint64_t va, std::uint64_t len) {
    if (!registrar_) return;
    const RegResult r = registrar_->release(va, len, now());
    if (r.done > now()) qk().set(r.done - sc_core::sc_time_stamp());
    if (qk().need_sync() || !thread_qks_.empty()) qk().sync();
}

std::uint64_t RdmaProcess::chunks_for(std::uint64_t len) const {
    if (!strategy_.chunked || len == 0) return 1;
    return (len + pipeline_chunk_ - 1) / pipeline_chunk_;
}

std::uint64_t RdmaProcess::records_for(std::uint64_t len) const {
    if (!physical_) return chunks_for(len);
    // Physical-address mode: one descriptor per physically contiguous run
    // of each chunk. A chunk of L bytes breaks at most at each source and
    // each destination page boundary inside it: 2 * ceil(L / 4 KiB) + 1
    // runs; summed over the chunks, at most this.
    return 2 * ((len + 4095) / 4096) + 3 * chunks_for(len);
}

bool RdmaProcess::send(Message& m) {
    prefetch_advise(m.src, m.len, true);
    if (physical_) return send_physical(m);
    m.parts = 0;
    m.failed = false;
    if (guard_ && m.len > 0) m.guard = guard_install(m.src, m.len, false, {});
    const std::uint64_t n = records_for(m.len);
    const std::uint64_t chunk = n == 1 ? std::max<std::uint64_t>(m.len, 1) : pipeline_chunk_;
    for (std::uint64_t k = 0; k < n; ++k) {
        const std::uint64_t off = k * chunk;
        const std::uint64_t len = n == 1 ? m.len : std::min(chunk, m.len - off);
        if (len > 0) {
            const RegResult r = reg_acquire(m.src + off, len, false);
            if (!r.ok) {
                m.failed = true;
                m.error = r.error;
                return false;
            }
        }
        const std::uint64_t record = m.records + k * sizeof(CompletionRecord);
        const std::uint32_t flags = k + 1 == n ? m.flags : 0u;   // the receiver hears of the last part
        // A message naming its own counter (kFlagCounter, m.counter) counts
        // there; post_write adds counter 0 to other notifying writes under
        // rdma.notify = counter.
        const std::uint32_t counter = (flags & kFlagCounter) ? m.counter : 0u;
        while (!post_write(m.src + off, m.dst_node, m.dst + off, len, m.tag, record, flags, counter)) {
            // The channel's queue is full: wait for one more completion on it.
            const unsigned c = last_post_;
            const std::uint64_t done = mmio_read_on(c, pldma_reg::kTxCompleted, 8);
            wait_for(
                dma_.tx_signal(c), [&] { return mmio_read_on(c, pldma_reg::kTxCompleted, 8) >= done + 1; }, "wait tx");
        }
        if (m.guard) guard_->add_record(m.guard, record);
        ++m.parts;
    }
    return true;
}

CompletionRecord RdmaProcess::complete(Message& m) {
    CompletionRecord out;
    out.tag = m.tag;
    out.node = m.dst_node;
    out.addr = m.src;
    bool ok = !m.failed;
    if (physical_) {
        // Every run's record, then each chunk acquired is released.
        for (unsigned k = 0; k < m.parts; ++k) {
            const CompletionRecord r = wait_record(m.records + k * sizeof(CompletionRecord));
            ok = ok && r.status == kStatusOk;
            out.bytes += r.status == kStatusOk ? r.bytes : 0;
        }
        const std::uint64_t n = chunks_for(m.len);
        const std::uint64_t chunk = n == 1 ? std::max<std::uint64_t>(m.len, 1) : pipeline_chunk_;
        for (unsigned k = 0; k < m.chunks; ++k) {
            const std::uint64_t off = k * chunk;
            const std::uint64_t len = std::min(chunk, m.len - off);
            if (len > 0) reg_release(m.src + off, len);
        }
        out.status = ok ? kStatusOk : kStatusError;
        return out;
    }
    const std::uint64_t chunk =
        m.parts <= 1 && records_for(m.len) == 1 ? std::max<std::uint64_t>(m.len, 1) : pipeline_chunk_;
    for (unsigned k = 0; k < m.parts; ++k) {
        const CompletionRecord r = wait_record(m.records + k * sizeof(CompletionRecord));
        ok = ok && r.status == kStatusOk;
        out.bytes += r.status == kStatusOk ? r.bytes : 0;
        const std::uint64_t off = k * chunk;
        const std::uint64_t len = std::min(chunk, m.len - off);
        if (len > 0) reg_release(m.src + off, len);   // pipeline: each chunk as it completes
    }
    if (m.guard) guard_lift(m.guard);   // lifted already once every record was seen; or none was posted
    out.status = ok ? kStatusOk : kStatusError;
    return out;
}

void RdmaProcess::get(unsigned src_node, std::uint64_t remote_src, std::uint64_t local_dst, std::uint64_t len,
                      std::uint64_t tag, std::uint64_t record) {
    prefetch_advise(local_dst, len, true);
    if (guard_ && len > 0) guard_install(local_dst, len, true, {record});   // lifted when the record is seen
    while (!post_read(src_node, remote_src, local_dst, len, tag, record)) {
        // The channel's queue is full: wait for one more completion on it.
        const unsigned c = last_post_;
        const std::uint64_t done = mmio_read_on(c, pldma_reg::kTxCompleted, 8);
        wait_for(
            dma_.tx_signal(c), [&] { return mmio_read_on(c, pldma_reg::kTxCompleted, 8) >= done + 1; }, "wait tx");
    }
}

bool RdmaProcess::register_receive(std::uint64_t va, std::uint64_t len) {
    if (len == 0) return true;
    prefetch_advise(va, len, false);
    if (!reg_acquire(va, len, true).ok) return false;
    if (physical_) {
        // The area's keys: the frame of each page now, published for the
        // senders (a snapshot, never looked up again).
        for (std::uint64_t page = va & ~std::uint64_t(4095); page < va + len; page += 4096)
            keys_->publish(node_, pid_, page, lookup_frame(page, true));
    }
    return true;
}

bool RdmaProcess::register_buffer(std::uint64_t va, std::uint64_t len, bool write, VmError* error) {
    if (len == 0) return true;
    prefetch_advise(va, len, true);
    const RegResult r = reg_acquire(va, len, write);
    if (error) *error = r.error;
    return r.ok;
}

void RdmaProcess::deregister(std::uint64_t va, std::uint64_t len) {
    if (len > 0) reg_release(va, len);
}

bool RdmaProcess::register_read_source(std::uint64_t va, std::uint64_t len) {
    if (len == 0) return true;
    return reg_acquire(va, len, false).ok;
}

void RdmaProcess::finish_registrations() {
    if (!registrar_) return;
    const RegResult r = registrar_->release_all(now());
    if (r.done > now()) qk().set(r.done - sc_core::sc_time_stamp());
}

}   // namespace vrdmasim
