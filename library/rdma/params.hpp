// The parameters of the RDMA user library: section [rdma], declared in
// params.cpp (every part of the library reads them through
// params_of<RdmaParams>()) but for the registration strategies' keys
// (library/rdma/strategy/strategy.hpp), and section [node] (node.processes).
#pragma once

#include "src/core/params.hpp"

namespace vrdmasim {

struct RdmaParams {
    RdmaParams();
    // Sections noise, node and rdma.
    static void declare_params(ParamRegistry& reg);
    ParamSet set;
    // The process API: posting and completion (process.hpp).
    TimeParam post_overhead;
    TimeParam completion_overhead;
    EnumParam completion;
    TimeParam store_issue;
    TimeParam poll_interval;
    TimeParam irq_wakeup;
    TimeParam handler_dispatch;
    TimeParam handler_cpu;
    EnumParam notify;
    IntParam channels;
    // The registration strategies' keys come next in section rdma
    // (StrategyParams, library/rdma/strategy/strategy.hpp); then the
    // library's other policies.
    ParamSet policies;
    // The buffer guard (buffer_guard.hpp).
    EnumParam buffer_guard;
    TimeParam guard_fault;
    TimeParam guard_tlbi_page;
    // Physical-address mode (physical.hpp).
    TimeParam translate_page;
    // Prefetch advice (prefetch.hpp).
    EnumParam prefetch;
    SizeParam prefetch_distance;
    TimeParam prefetch_call;

private:
    // The constructor's groups of parameters, declared in this order.
    void declare_process_api();
    void declare_buffer_guard();
    void declare_physical_mode();
    void declare_prefetch();
};

// Section [node]: the processes the kernel of each node starts.
struct NodeParams {
    NodeParams();
    ParamSet set;
    IntParam processes;
};

}   // namespace vrdmasim
