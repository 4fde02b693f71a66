// BufferGuard: the RDMA user library's guard over the buffers of transfers
// in flight (rdma.buffer-guard = mprotect; README.md "Buffer guard"). When a
// transfer is posted, the library takes the application's CPU access to its
// buffer away (no access, source and destination alike) with the Vm's
// guard_user (an mprotect that leaves the engine's privileged SMMU
// transactions their access); a CPU touch of a guarded page takes a
// permission fault, and the library's handler waits until that transfer
// has completed; on completion the library gives the access back.
//
// Bookkeeping and costs only, loosely timed like Vm (calls take `at` and
// return when done, never wait()); the RdmaProcess does the waiting.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <systemc>

#include "src/core/context.hpp"
#include "library/rdma/params.hpp"
#include "src/core/metrics.hpp"
#include "models/os/vm.hpp"

namespace vrdmasim {

// rdma.buffer-guard: "none" | "mprotect".
bool buffer_guard_on(const Config& c);

class BufferGuard {
public:
    static void declare_metrics(MetricRegistry& reg);
    // Statistics under `prefix` (e.g. "node0.rdma.guard").
    BufferGuard(const SimContext& ctx, const std::string& prefix, Vm& vm, int pid);

    // One guarded buffer: its page range, what the CPU may still do, and the
    // completion records whose writing ends the transfer.
    struct Guard {
        std::uint64_t va = 0, end = 0;   // whole pages
        bool engine_writes = false;   // a destination (the engine writes it) or a source (it reads it)
        std::vector<std::uint64_t> records;
        std::vector<bool> seen;
        // A guard whose transfer has no records of its own (a two-sided
        // request: its data moves later, in parts the library posts as the
        // protocol goes): a touch waits by running this (the library's
        // progress until the request completes, which lifts the guard).
        std::function<void()> wait;
        sc_core::sc_time installed;   // when the protection took effect
    };
    // Protect [va, va+len) (widened to whole pages) for a transfer whose
    // records are `records` (more may be added before it completes). Returns
    // the guard's id (>= 1); `done` when the mprotect call returned. Every
    // guard makes its pages no access for EL0 and keeps EL1's read and
    // write (the engine's privileged transactions): buffers in flight may
    // share a page, which stays guarded until its last guard is lifted
    // (only pages no guard held yet are mprotected).
    std::uint64_t install(std::uint64_t va, std::uint64_t len, bool engine_writes, std::vector<std::uint64_t> records,
                          sc_core::sc_time at, sc_core::sc_time& done, std::function<void()> wait = {});
    void add_record(std::uint64_t id, std::uint64_t record);
    // Give the access back (the transfer completed, or was never posted);
    // returns when the mprotect call returned.
    sc_core::sc_time lift(std::uint64_t id, sc_core::sc_time at);
    // Completion record `record` has been seen written: the id of the guard
    // all of whose records are now seen (to lift), or 0.
    std::uint64_t record_seen(std::uint64_t record);
    // The guard covering va's page (nullptr if none) and its id.
    const Guard* covering(std::uint64_t va, std::uint64_t* id = nullptr) const;
    const Guard* find(std::uint64_t id) const;
    // A CPU access hit a guarded page at `at`: the fault's CPU cost
    // (rdma.guard-fault) is counted; the caller charges it on a core and
    // waits for the transfer, then calls fault_done with the time it resumed.
    sc_core::sc_time fault_cost() const { return fault_; }
    void fault_taken(sc_core::sc_time at);
    void fault_done(sc_core::sc_time start, sc_core::sc_time end);
    // Guards installed and not lifted (must be 0 at the end of a run).
    std::uint64_t active() const { return guards_.size(); }
    std::uint64_t installed() const { return installed_.value(); }
    std::uint64_t lifted() const { return lifted_.value(); }
    std::uint64_t faults() const { return faults_.value(); }

private:
    Vm& vm_;
    const int pid_;
    const sc_core::sc_time fault_, tlbi_page_;
    std::uint64_t next_id_ = 1;
    std::map<std::uint64_t, Guard> guards_;   // by id
    std::multimap<std::uint64_t, std::uint64_t> by_page_;   // guarded page -> the ids of its guards
    // mprotect `runs` of pages to `access` from `at`, one call per run;
    // returns when the last returned.
    sc_core::sc_time protect(const std::vector<std::pair<std::uint64_t, std::uint64_t>>& runs, UserAccess access,
                             sc_core::sc_time at);
    std::map<std::uint64_t, std::uint64_t> by_record_;   // record -> guard id
    Counter &installed_, &lifted_, &faults_, &mprotects_;
    Scalar& mprotect_time_;
    Histogram& fault_wait_;
    Scalar* fault_wait_total_ = nullptr;
};

}   // namespace vrdmasim
