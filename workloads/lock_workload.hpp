// lock: every node runs one process per job, and the processes of a job
// contend for one lock or semaphore held in the memory of lock.home-node
// (its own process takes it through its own engine: loopback). With
// node.processes = P there are P jobs (process p of every node forms job p)
// and P locks, one per job, all at the home node: a process's engine
// operations reach only the processes of its own job (its protection
// domain), so the jobs do not share a lock; they share the engines, the
// home's atomic unit, the cores and the links. Each process takes its job's
// lock lock.acquisitions times, spends lock.critical-section of CPU inside
// and, for a lock, increments its job's shared counter in the home node's
// memory by a plain RDMA read and write; then lock.think-time outside.
// Mutual exclusion is checked per job, three ways: the counter must equal
// the job's acquisitions, the holding intervals (grant seen to release
// posted, in simulated time) may overlap at most semaphore-count deep, and
// the lock's words must say "free" at the end; and the engine operations
// the job's library posted must equal the completions the engines counted
// on the job's own channels (the sum over jobs is checked against the
// engines' posted counts by the run's invariants). Any failure is a
// mismatch (exit status 1) of that job. Reports acquire latency, engine
// operations per acquisition and fairness (Jain's index of the job's
// processes' mean acquire latencies), each job under its own statistics
// (Workload::stats_prefix). workloads/README.md "The lock workload".
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "src/core/metrics.hpp"
#include "library/locks/lock.hpp"
#include "workloads/workload.hpp"

namespace vrdmasim {

// The parameters of section [lock], declared with the workload's.
struct LockParams {
    LockParams();
    ParamSet set;
    EnumParam kind;
    IntParam home_node;
    IntParam acquisitions;
    TimeParam critical_section;
    TimeParam think_time;
    IntParam semaphore_count;
    TimeParam backoff;
    TimeParam backoff_max;
};

class LockWorkload : public Workload {
public:
    static void declare_metrics(MetricRegistry& reg);
    // Job `job`: process `job` of every node (apps, index = node).
    LockWorkload(const SimContext& ctx, const std::vector<RdmaProcess*>& apps, unsigned job = 0);
    std::string kind() const override { return "lock"; }
    std::string partition_refusal() const override;
    bool finished() const override { return ended_ == apps_.size(); }
    // The progress line's total (the self-check planned-transfers holds it
    // to it): every process's acquisitions.
    std::uint64_t planned_transfers() const override { return apps_.size() * acquisitions_; }
    // An acquisition carries no payload (network atomics).
    std::int64_t planned_bytes() const override { return 0; }
    // The job's end compares the engines' completions on its channels
    // (count_engine_completions) with library_operations().
    // Engine operations this job's processes posted (once they have ended).
    std::uint64_t library_operations() const { return library_ops_; }
    // All of the job's engine traffic is its lock operations.
    std::int64_t engine_operations() const override { return static_cast<std::int64_t>(library_ops_); }

private:
    void program(RdmaProcess& app);
    // The last program's checks and figures.
    void conclude(RdmaProcess& home);
    void fail(const std::string& what);

    std::vector<RdmaProcess*> apps_;
    const std::string lock_kind_;
    const std::uint64_t acquisitions_;
    const sc_core::sc_time critical_, think_;
    const bool exclusive_;   // a lock, or a semaphore of count 1: the counter is checked
    LockSite site_;
    std::uint64_t counter_ = 0;   // the shared counter's address in the home process
    std::vector<std::uint64_t> initial_;
    unsigned ended_ = 0;
    struct Held {
        sc_core::sc_time from, to;
    };
    std::vector<Held> held_;
    std::vector<double> latency_sum_us_;   // per process
    std::uint64_t library_ops_ = 0;   // engine operations this job's processes posted

    Counter& acquired_;
    Histogram& acquire_us_;
    Counter& lock_ops_;
    Counter& cs_ops_;
    Counter& violations_;
    Scalar& ops_per_acquire_;
    Scalar& fairness_;
    Scalar& max_holders_;
    Scalar& final_counter_;
};

}   // namespace vrdmasim
