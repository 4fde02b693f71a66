// RdmaProcess: the process's memory: mmap, mlock, timed user loads and
// stores (faulting pages in), polled words.
#include "library/rdma/process.hpp"

#include "src/core/sim_params.hpp"
#include "models/common/noise.hpp"

#include "src/core/format.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>

namespace vrdmasim {

using sc_core::sc_time;

BufferAdvice buffer_advice(const std::string& name) {
    if (name == "none") return BufferAdvice::None;
    if (name == "hugepage") return BufferAdvice::HugePage;
    if (name == "nohugepage") return BufferAdvice::NoHugePage;
    throw std::invalid_argument("buffer advice '" + name + "': none, hugepage or nohugepage");
}

std::uint64_t RdmaProcess::alloc(std::uint64_t bytes, bool populate, BufferAdvice advice) {
    if (vm_) {
        const std::uint64_t len = std::max<std::uint64_t>(bytes, 1);
        const bool advise = advice != BufferAdvice::None;
        // With advice, the mapping is populated only after madvise(): pages
        // faulted in by MAP_POPULATE would already be 4 KiB ones.
        const VmResult r = vm_->mmap(pid_, len, Prot::ReadWrite, populate && !advise, now());
        if (!r.ok())
            throw OutOfMemory(group_ + ": mmap of " + std::to_string(bytes) + " B failed: " + to_string(r.error));
        if (r.done > now()) qk().set(r.done - sc_core::sc_time_stamp());
        if (advise) {
            const std::uint64_t span = (len + 4095) & ~std::uint64_t(4095);
            const VmResult a = vm_->madvise(
                pid_, r.value, span, advice == BufferAdvice::HugePage ? Advice::HugePage : Advice::NoHugePage, now());
            if (!a.ok())
                throw OutOfMemory(group_ + ": madvise of " + std::to_string(bytes) +
                                  " B failed: " + to_string(a.error));
            if (a.done > now()) qk().set(a.done - sc_core::sc_time_stamp());
            if (populate) {   // best effort, as MAP_POPULATE: a page left out faults later
                const VmResult f = vm_->madvise(pid_, r.value, span, Advice::PopulateWrite, now());
                if (f.done > now()) qk().set(f.done - sc_core::sc_time_stamp());
            }
        }
        allocated(r.value, len, bytes);
        return r.value;
    }
    const std::uint64_t page = 4096;
    const std::uint64_t size = (bytes + page - 1) / page * page;
    if (size > heap_end_ - heap_next_)
        throw OutOfMemory(group_ + ": out of memory for buffers (" + std::to_string(bytes) + " B asked, " +
                          std::to_string(heap_end_ - heap_next_) + " B left)");
    const std::uint64_t a = heap_next_;
    heap_next_ += size;
    allocations_.emplace_back(a, bytes);
    return a;
}

void RdmaProcess::allocated(std::uint64_t va, std::uint64_t len, std::uint64_t bytes) {
    allocations_.emplace_back(va, bytes);
    if (registrar_ && !allocating_locked_) {   // pin-static: pinned now; pin-deferred: queued
        const RegResult g = registrar_->on_alloc(va, len, now());
        if (g.done > now()) qk().set(g.done - sc_core::sc_time_stamp());
        if (strategy_.registration_thread) background_ev_.notify(now() - sc_core::sc_time_stamp());
    }
}

std::uint64_t RdmaProcess::alloc_at(std::uint64_t va, std::uint64_t bytes) {
    if (!vm_) throw std::logic_error(group_ + ": alloc_at needs the process in a Vm (smmu.enabled = true)");
    const VmResult r = vm_->mmap_fixed(pid_, va, std::max<std::uint64_t>(bytes, 1), Prot::ReadWrite, false, now());
    if (!r.ok())
        throw OutOfMemory(group_ + ": mmap of " + std::to_string(bytes) + " B at " + hex(va) +
                          " failed: " + to_string(r.error));
    if (r.done > now()) qk().set(r.done - sc_core::sc_time_stamp());
    allocated(va, std::max<std::uint64_t>(bytes, 1), bytes);
    return va;
}

void RdmaProcess::unmap(std::uint64_t va, std::uint64_t bytes) {
    if (!vm_) throw std::logic_error(group_ + ": unmap needs the process in a Vm (smmu.enabled = true)");
    const VmResult r = vm_->munmap(pid_, va, bytes, now());
    if (!r.ok())
        throw std::runtime_error(group_ + ": munmap of " + std::to_string(bytes) + " B at " + hex(va) +
                                 " failed: " + to_string(r.error));
    if (r.done > now()) qk().set(r.done - sc_core::sc_time_stamp());
}

std::uint64_t RdmaProcess::alloc_locked(std::uint64_t bytes) {
    // Records are mlocked, not registered as buffers (pin-static, pin-deferred).
    allocating_locked_ = true;
    std::uint64_t a = 0;
    try {
        a = alloc(bytes, true);
    } catch (...) {
        allocating_locked_ = false;
        throw;
    }
    allocating_locked_ = false;
    if (vm_) {
        const VmResult r =
            vm_->mlock(pid_, a, (std::max<std::uint64_t>(bytes, 1) + 4095) & ~std::uint64_t(4095), now());
        if (!r.ok())
            throw OutOfMemory(group_ + ": mlock of " + std::to_string(bytes) +
                              " B of completion records failed: " + to_string(r.error));
        if (r.done > now()) qk().set(r.done - sc_core::sc_time_stamp());
        if (physical_) {
            // The engine gets these frames once, when they are locked: they
            // are pinned too (mlock keeps them in memory, but compaction may
            // still move a locked page), as RDMA libraries register their
            // completion queues.
            const std::uint64_t span = (std::max<std::uint64_t>(bytes, 1) + 4095) & ~std::uint64_t(4095);
            const VmResult p = vm_->pin(pid_, a, span, now());
            if (!p.ok())
                throw OutOfMemory(group_ + ": pinning " + std::to_string(bytes) +
                                  " B of completion records failed: " + to_string(p.error));
            if (p.done > now()) qk().set(p.done - sc_core::sc_time_stamp());
            for (std::uint64_t page = a; page < a + span; page += 4096) locked_frames_[page] = lookup_frame(page, true);
        }
    }
    return a;
}

bool RdmaProcess::access(tlm::tlm_command cmd, std::uint64_t addr, unsigned char* data, unsigned len, bool posted) {
    // A library thread of this process (enter_thread) may run while this
    // access waits in the interconnect: each access then its own payload
    // (made only then: a payload's making and unmaking allocate and free
    // its extensions' array, some 2,000 instructions a message of an
    // alltoall when every access made one).
    std::optional<tlm::tlm_generic_payload> own;
    tlm::tlm_generic_payload& gp = thread_qks_.empty() ? gp_ : own.emplace();
    gp.set_command(cmd);
    gp.set_address(addr);
    gp.set_data_ptr(data);
    gp.set_data_length(len);
    gp.set_streaming_width(len);
    gp.set_byte_enable_ptr(nullptr);
    gp.set_dmi_allowed(false);
    gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    const sc_time issued = qk().get_local_time();
    sc_time d = issued;
    cpu->b_transport(gp, d);
    // A posted store (Device-nGnRE registers, or normal memory through the
    // write buffer) lets the CPU go on once issued; loads wait for the data.
    qk().set(posted && cmd == tlm::TLM_WRITE_COMMAND ? issued + store_issue_ : d);
    if (qk().need_sync() || !thread_qks_.empty()) qk().sync();
    return gp.is_response_ok();
}

std::uint64_t RdmaProcess::physical(std::uint64_t addr, bool write) {
    if (!vm_) return addr;
    // A user load or store: the CPU's own MMU translates a present page at
    // no software cost (the access itself is the bus transaction); a page
    // that is not present takes a fault first.
    // One walk when the page is present and allowed (the usual case): its
    // translation is the answer; after a fault, the page is walked again.
    std::uint64_t pa = 0;
    int faults = 0;
    for (int attempt = 0;; ++attempt) {
        // The access is retried after each fault, as the faulting
        // instruction is: reclaim may take the page again between the fault
        // handler's return and the retry (the page is then faulted in
        // again).
        while (!vm_->translate(pid_, addr, pa)) {   // Vm::present is this walk
            if (++faults > 8)
                throw std::runtime_error(group_ + ": user page at " + hex(addr) +
                                         " not present after 8 faults (reclaimed each time before the access)");
            const VmResult t = vm_->touch(pid_, addr, write, now());
            if (!t.ok())
                throw std::runtime_error(group_ + ": user access to " + hex(addr) + " failed: " + to_string(t.error));
            if (t.done > now()) qk().set(t.done - sc_core::sc_time_stamp());
            await_read(addr);
        }
        // The CPU's MMU checks the descriptor's AP bits for EL0: a guarded
        // page takes a permission fault (the library's handler waits for its
        // transfer and lifts the guard), and the access is retried (the page
        // may have been reclaimed meanwhile: it faults in again).
        if (!guard_ || vm_->user_permits(pid_, addr, write)) break;
        if (attempt >= 3) throw std::runtime_error(group_ + ": user access still denied after its guard fault");
        guard_fault(addr, write);
    }
    return pa;
}

void RdmaProcess::await_read(std::uint64_t addr) {
    // A major fault's page is mapped when its SSD read completes (the read
    // in flight, models/os/inflight.hpp), at the fault's `done`: the thread
    // sleeps until then (global time reaches its own), and the completion
    // due by now is written, so the access retries on the mapped page.
    if (vm_->present(pid_, addr)) return;
    qk().sync();
    vm_->complete_io(sc_core::sc_time_stamp());
}

std::uint64_t RdmaProcess::load(std::uint64_t addr) {
    std::uint64_t v = 0;
    if (!access(tlm::TLM_READ_COMMAND, physical(addr, false), reinterpret_cast<unsigned char*>(&v), 8))
        throw std::runtime_error(group_ + ": user load failed");
    return v;
}

void RdmaProcess::store(std::uint64_t addr, std::uint64_t value) {
    if (!access(tlm::TLM_WRITE_COMMAND, physical(addr, true), reinterpret_cast<unsigned char*>(&value), 8, true))
        throw std::runtime_error(group_ + ": user store failed");
}

void RdmaProcess::watch_polled(std::uint64_t va, std::uint64_t len) {
    dma_.watch_writes(dma_.channel_stream_id(channel_), va, len);
}

std::uint64_t RdmaProcess::load_polled(std::uint64_t addr, sc_time* written) {
    const sc_time issued = now();
    const std::uint64_t in_memory = load(addr);
    std::uint64_t v = 0;
    // Payload writes come with the receiving channel's stream ID: the
    // process's first channel.
    if (!dma_.polled_value(dma_.channel_stream_id(channel_), addr, issued, in_memory, v, written))
        throw std::logic_error(group_ + ": load_polled of a word never watched (RdmaProcess::watch_polled)");
    return v;
}

}   // namespace vrdmasim
