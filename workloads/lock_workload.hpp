// lock: every node runs one process, and all contend for one lock or
// semaphore held in the memory of lock.home-node (its own process takes it
// through its own engine: loopback). Each takes it lock.acquisitions times,
// spends lock.critical-section of CPU inside and, for a lock, increments a
// shared counter in the home node's memory by a plain RDMA read and write;
// then lock.think-time outside. Mutual exclusion is checked three ways: the
// counter must equal the acquisitions, the holding intervals (grant seen to
// release posted, in simulated time) may overlap at most semaphore-count
// deep, and the lock's words must say "free" at the end; the engine
// operations the library posted must equal the engines' own counts. Any
// failure is a mismatch (exit status 1). Reports acquire latency, engine
// operations per acquisition and fairness (Jain's index of the processes'
// mean acquire latencies). workloads/README.md "The lock workload".
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/metrics.hpp"
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
    LockWorkload(const SimContext& ctx, const std::vector<RdmaProcess*>& apps);
    std::string kind() const override { return "lock"; }
    bool finished() const override { return ended_ == apps_.size(); }

private:
    void program(RdmaProcess& app);
    // The last program's checks and figures.
    void conclude(RdmaProcess& home);
    void fail(const std::string& what);

    std::vector<RdmaProcess*> apps_;
    const std::string lock_kind_;
    const std::uint64_t acquisitions_;
    const sc_core::sc_time critical_, think_;
    const bool exclusive_;      // a lock, or a semaphore of count 1: the counter is checked
    LockSite site_;
    std::uint64_t counter_ = 0;   // the shared counter's address in the home process
    std::vector<std::uint64_t> initial_;
    unsigned ended_ = 0;
    struct Held {
        sc_core::sc_time from, to;
    };
    std::vector<Held> held_;
    std::vector<double> latency_sum_us_;   // per process
    std::uint64_t library_ops_ = 0;        // engine operations all processes posted

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

}  // namespace vrdmasim
