// RdmaProcess in physical-address mode (app.hpp, library/rdma/physical.hpp): the
// library's look-ups of physical frames and its posting of one descriptor
// per physically contiguous run. The rest of the library (registration,
// records, waiting) is app.cpp's.
#include "library/rdma/process.hpp"

#include "src/core/format.hpp"

#include <algorithm>
#include <map>
#include <sstream>
#include <stdexcept>

namespace vrdmasim {

namespace {

constexpr std::uint64_t kPage = 4096;

}   // namespace

void RdmaProcess::set_physical(PhysicalKeys& keys) {
    if (!physical_) throw std::logic_error(group_ + ": set_physical outside physical-address mode");
    keys_ = &keys;
    translate_page_ = ctx_.config[params_of<RdmaParams>().translate_page];
}

std::uint64_t RdmaProcess::lookup_frame(std::uint64_t va, bool write) {
    if (!vm_ || !keys_) throw std::logic_error(group_ + ": physical look-up without a process or keys");
    const std::uint64_t page = va & ~(kPage - 1);
    run_on_core("translate", translate_page_);
    std::uint64_t pa = 0;
    // Not present (a strategy that registered it makes it present: this is
    // the library touching it first). A major fault's page is mapped when
    // its read completes, and memory pressure may take it again before the
    // library looks: it faults again, as the CPU would.
    for (int attempt = 0; !vm_->translate(pid_, page, pa); ++attempt) {
        if (attempt >= 4)
            throw std::logic_error(group_ + ": page " + hex(page) + " not present after " + std::to_string(attempt) +
                                   " faults");
        const VmResult r = vm_->fault_in(pid_, page, kPage, write, now());
        if (!r.ok())
            throw std::runtime_error(group_ + ": physical-address mode: page " + hex(page) +
                                     " cannot be faulted in: " + to_string(r.error));
        if (r.done > now()) qk().set(r.done - sc_core::sc_time_stamp());
        await_read(page);
    }
    keys_->handed(node_, pid_, page, pa);
    return pa;
}

std::uint64_t RdmaProcess::locked_frame(std::uint64_t va) const {
    auto it = locked_frames_.find(va & ~(kPage - 1));
    if (it == locked_frames_.end())
        throw std::logic_error(group_ + ": physical-address mode: " + hex(va) + " is not in locked memory");
    return it->second + (va & (kPage - 1));
}

bool RdmaProcess::send_physical(Message& m) {
    m.parts = 0;
    m.chunks = 0;
    m.failed = false;
    if (m.len == 0) throw std::logic_error(group_ + ": physical-address mode: an empty message is not built");
    const std::uint64_t n = chunks_for(m.len);
    const std::uint64_t chunk = n == 1 ? m.len : pipeline_chunk_;
    const std::uint64_t most = records_for(m.len);
    for (std::uint64_t k = 0; k < n; ++k) {
        const std::uint64_t off = k * chunk;
        const std::uint64_t len = std::min(chunk, m.len - off);
        const RegResult r = reg_acquire(m.src + off, len, false);
        if (!r.ok) {
            m.failed = true;
            m.error = r.error;
            return false;
        }
        ++m.chunks;
        // The chunk's source frames, each looked up once, now (after the
        // registration); the destination's from the receiver's keys.
        std::map<std::uint64_t, std::uint64_t> src_frames;
        auto src_at = [&](std::uint64_t pos) {
            const std::uint64_t va = m.src + pos;
            auto it = src_frames.find(va & ~(kPage - 1));
            if (it == src_frames.end()) it = src_frames.emplace(va & ~(kPage - 1), lookup_frame(va, false)).first;
            return it->second + (va & (kPage - 1));
        };
        auto dst_at = [&](std::uint64_t pos) {
            std::uint64_t pa = 0;
            if (!keys_->lookup(m.dst_node, m.dst + pos, pa))
                throw std::logic_error(group_ + ": physical-address mode: destination " + hex(m.dst + pos) +
                                       " of node " + std::to_string(m.dst_node) +
                                       " was never registered by its receiver (no key published)");
            return pa;
        };
        const std::uint64_t end = off + len;
        for (std::uint64_t pos = off; pos < end;) {
            const std::uint64_t src = src_at(pos), dst = dst_at(pos);
            // The run: as long as both sides stay physically contiguous.
            std::uint64_t run = 0;
            for (;;) {
                const std::uint64_t at = pos + run;
                const std::uint64_t step =
                    std::min({end - at, kPage - ((m.src + at) & (kPage - 1)), kPage - ((m.dst + at) & (kPage - 1))});
                run += step;
                if (pos + run >= end) break;
                if (src_at(pos + run) != src + run || dst_at(pos + run) != dst + run) break;
            }
            if (m.parts >= most)
                throw std::logic_error(group_ + ": physical-address mode: more runs than records_for() allows");
            const std::uint64_t record = m.records + m.parts * sizeof(CompletionRecord);
            const bool last = pos + run >= end && k + 1 == n;
            const std::uint32_t flags = last ? m.flags : 0u;   // the receiver hears of the last run
            while (!post_write(src, m.dst_node, dst, run, m.tag, record, flags)) {
                // The channel's queue is full: wait for one more completion on it.
                const unsigned c = last_post_;
                const std::uint64_t done = mmio_read_on(c, pldma_reg::kTxCompleted, 8);
                wait_for(
                    dma_.tx_signal(c), [&] { return mmio_read_on(c, pldma_reg::kTxCompleted, 8) >= done + 1; },
                    "wait tx");
            }
            ++m.parts;
            pos += run;
        }
    }
    return true;
}

}   // namespace vrdmasim
