// Registrar: how the RDMA user library makes a user buffer usable by the
// engine (PLDMA + SMMU) before a transfer, and gives it back afterwards —
// the registration strategies compared by the simulator:
//
//   fault-tolerant  nothing: the engine takes (and survives) SMMU faults
//   pin             pin the buffer for each transfer, unpin after it
//   pin-cache       pin-down cache: pin on a miss, keep the pins (lazy
//                   deregistration, LRU eviction), drop entries on the MMU
//                   notifier
//   prefault        MADV_POPULATE_WRITE the buffer (present, not pinned)
//   pipeline        pin per chunk (the RdmaProcess splits transfers in
//                   rdma.pipeline-chunk pieces; per call it is `pin`)
//   netvm           nothing: the NI's own translation (modelled elsewhere)
//   pin-static      every buffer the application allocates is pinned whole
//                   at alloc, once; unpinned at the program's end
//   pin-deferred    every buffer allocated is queued at alloc; the RdmaProcess's
//                   registration thread pins it chunk by chunk in the
//                   background; a post pins (or waits for) only the chunks
//                   of its range not pinned yet; unpinned at the end
//
// Loosely timed like Vm: calls take the absolute time `at` and return when
// their work is done; they never wait(). See README.md for the design.
#pragma once

#include <cstdint>
#include <list>
#include <string>
#include <vector>

#include <systemc>

#include "src/core/context.hpp"
#include "library/rdma/params.hpp"
#include "models/os/cpu.hpp"
#include "models/os/vm.hpp"

namespace vrdmasim {

enum class Strategy { FaultTolerant, Pin, PinCache, Prefault, Pipeline, Netvm, PinStatic, PinDeferred };
// "fault-tolerant", "pin", "pin-cache", "prefault", "pipeline", "netvm",
// "pin-static", "pin-deferred"
const char* to_string(Strategy s);
// Reads rdma.strategy (library/rdma/params.hpp).
Strategy strategy_from(const Config& c);

struct RegResult {
    bool ok = true;
    VmError error = VmError::Ok;
    sc_core::sc_time done;   // absolute
};

class Registrar {
public:
    // Section "rdma": strategy, pin-cache-pages, pin-cache-lookup,
    // pipeline-chunk (the last only declared here; the RdmaProcess uses it).
    // Its columns of summary.csv, from the statistics it registers.
    static void declare_metrics(MetricRegistry& reg);

    // Statistics under `prefix` ("node0.rdma"). CPU work of its own (cache
    // lookups) runs on `cpu` as activity "registration"; Vm calls charge
    // their own costs (activities "pin", "syscall", ...).
    Registrar(const SimContext& ctx, const std::string& prefix, Vm& vm, int pid, CpuCores& cpu);

    Strategy strategy() const { return strategy_; }
    // 4 KiB pages this process's registrations pinned so far (every pin
    // call's pages, counted again when pinned again).
    // (A plain count, not a statistic: the Registrar is built at each
    // process's boot, inside the simulation loop the benchmark counts.)
    std::uint64_t pages_pinned() const { return pages_pinned_; }

    // Make [va, va+len) usable by the engine from `at`; `write`: the engine
    // will write it.
    RegResult acquire(std::uint64_t va, std::uint64_t len, bool write, sc_core::sc_time at);
    // The engine is done with [va, va+len).
    RegResult release(std::uint64_t va, std::uint64_t len, sc_core::sc_time at);
    // A buffer the application has just allocated (RdmaProcess::alloc), from `at`.
    // pin-static: pinned whole now (a refusal is remembered: every later
    // acquire in it fails with the same error, as `pin` fails per message);
    // pin-deferred: queued for the registration thread (not before `at`).
    // Other strategies: nothing. Returns when the call's work is done.
    RegResult on_alloc(std::uint64_t va, std::uint64_t len, sc_core::sc_time at);
    // pin-deferred: whether a chunk waits for the registration thread.
    bool background_pending() const;
    // pin-deferred: the registration thread pins the next pending chunk,
    // from `at` (not before its buffer was allocated); returns when done.
    sc_core::sc_time background_step(sc_core::sc_time at);
    // End of the program: every cache entry unpinned (pin-cache), every
    // buffer unpinned (pin-static, pin-deferred).
    RegResult release_all(sc_core::sc_time at);
    // The MMU notifier (bind with Vm::add_invalidate): entries of this pid
    // overlapping [va, va+len) leave the cache; their pins are released at
    // the start of the next acquire/release/release_all. Returns `at`.
    sc_core::sc_time invalidate(int pid, std::uint16_t asid, std::uint64_t va, std::uint64_t len, sc_core::sc_time at);

    // 4 KiB pages held by the entries now in the cache (not those dropped
    // and waiting for their unpin).
    std::uint64_t cached_pages() const { return cached_pages_; }
    std::uint64_t pinned_bytes_peak() const { return peak_; }
    // Entries in the cache (inspection, tests).
    std::size_t cache_entries() const { return cache_.size(); }

private:
    struct Entry {
        std::uint64_t start = 0, end = 0;   // page-aligned
        unsigned users = 0;   // acquires not yet released
        std::uint64_t pages() const { return (end - start) / 4096; }
    };
    using List = std::list<Entry>;
    // pin-static / pin-deferred: one allocated buffer, in chunks (one chunk
    // for pin-static; rdma.pipeline-chunk for pin-deferred).
    enum class ChunkState { Pending, Pinning, Failed };
    struct Chunk {
        std::uint64_t start = 0, end = 0;   // page-aligned
        ChunkState state = ChunkState::Pending;
        sc_core::sc_time done;   // Pinning: pinned from then on
        VmError error = VmError::Ok;   // Failed
    };
    struct Buffer {
        std::uint64_t start = 0, end = 0;   // page-aligned
        sc_core::sc_time queued;   // allocated at
        std::vector<Chunk> chunks;
    };
    RegResult acquire_whole(std::uint64_t va, std::uint64_t len, sc_core::sc_time at);
    RegResult release_whole(std::uint64_t va, std::uint64_t len, sc_core::sc_time at);
    // Pin one chunk at t (foreground or background); false if refused.
    bool pin_chunk(Chunk& c, sc_core::sc_time t);
    std::vector<Buffer> buffers_;
    std::size_t next_pending_ = 0;   // first buffer that may hold a pending chunk

    // Unpin one entry's range at t (a deregistration); returns the end.
    sc_core::sc_time unpin_entry(const Entry& e, sc_core::sc_time t);
    // Unpin the dropped entries that are no longer in use.
    sc_core::sc_time drain_dropped(sc_core::sc_time t);
    // Evict unused entries from the LRU end while `over()`; returns the end.
    template <typename Pred>
    sc_core::sc_time evict_while(Pred over, sc_core::sc_time t);
    RegResult finish(RegResult r, sc_core::sc_time at);

    Vm& vm_;
    int pid_;
    CpuCores& cpu_;
    Strategy strategy_;
    std::uint64_t capacity_pages_;
    std::uint64_t deferred_chunk_;
    sc_core::sc_time lookup_;
    List cache_;   // most recently used first
    List dropped_;   // invalidated, pins not yet released
    std::uint64_t cached_pages_ = 0;
    std::uint64_t peak_ = 0;

    Counter &registrations_, &deregistrations_, &hits_, &misses_, &evictions_, &invalidations_, &over_capacity_,
        &failures_, &background_pins_, &foreground_pins_;
    std::uint64_t pages_pinned_ = 0;
    Scalar &registration_time_, &pinned_peak_, &deferred_wait_, &background_time_;
};

}   // namespace vrdmasim
