// Prefetcher: the RDMA library's prefetch advice (rdma.prefetch = advise;
// README.md "Prefetch advice"), what an on-demand-paging library offers with
// ibv_advise_mr(IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE) without the FLUSH flag:
// an asynchronous hint that makes a range present before the engine reaches
// it. The library advises, as it posts, the part of the buffer from the
// message to rdma.prefetch-distance beyond it (clipped to the buffer's
// mapping), and a receive area whole when it is registered; a worker (the
// kernel's work queue the advice is handed to) populates the advised pages
// in order, a batch at a time, on the node's cores (Vm::madvise
// MADV_POPULATE_WRITE), racing the engine's own faults. A page is advised
// once; the advice is best effort (a batch the Vm refuses is counted and
// dropped, as the kernel drops a failed prefetch work item).
//
// Bookkeeping and costs only, loosely timed like Vm (calls take `at` and
// return when done, never wait()); the RdmaProcess's prefetch thread does
// the waiting.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <utility>

#include <systemc>

#include "src/core/context.hpp"
#include "src/core/metrics.hpp"
#include "library/rdma/params.hpp"
#include "models/os/vm.hpp"

namespace vrdmasim {

// rdma.prefetch: "none" | "advise".
bool prefetch_on(const Config& c);

class Prefetcher {
public:
    // Pages the worker populates per Vm call (*estimate*: a work item's
    // hmm_range_fault loop handles a few page-table entries between
    // reschedule points; 16 pages bound how early a batch's pages are seen,
    // as a Vm call's pages are present from its start).
    static constexpr std::uint64_t kBatchPages = 16;

    static void declare_metrics(MetricRegistry& reg);
    // Statistics "<prefix>.*" (e.g. "node0.rdma.prefetch.*").
    Prefetcher(const SimContext& ctx, const std::string& prefix, Vm& vm, int pid);

    std::uint64_t distance() const { return distance_; }
    // Advise [va, va + len): the pages of it not advised before are queued
    // for the worker, in order. Returns the pages newly queued.
    std::uint64_t advise(std::uint64_t va, std::uint64_t len);
    bool pending() const { return !queue_.empty(); }
    // The worker populates the next batch from `at` (the queue not empty);
    // returns when the Vm call returned.
    sc_core::sc_time step(sc_core::sc_time at);

    std::uint64_t advised_pages() const { return advised_pages_.value(); }
    std::uint64_t populated_pages() const { return populated_.value(); }

private:
    Vm& vm_;
    const int pid_;
    const std::uint64_t distance_;
    std::map<std::uint64_t, std::uint64_t> advised_;   // page ranges advised: start -> end (merged)
    std::deque<std::pair<std::uint64_t, std::uint64_t>> queue_;   // page ranges to populate, in order
    Counter &advices_, &advised_pages_, &populated_, &failed_;
    Scalar& worker_time_;
};

}   // namespace vrdmasim
