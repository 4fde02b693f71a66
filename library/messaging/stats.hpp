// Statistics of one node's two-sided library ("node3.msg.*") and the
// summary columns computed from them.
#pragma once

#include <functional>
#include <string>

#include "src/core/context.hpp"
#include "src/core/metrics.hpp"

namespace vrdmasim {

struct MsgStats {
    MsgStats(StatRegistry& s, const std::string& prefix);
    // Summary columns (msg_*), present in runs where `used` holds (the
    // workloads say which use the two-sided library): 0 in the others.
    static void declare_metrics(MetricRegistry& reg, const std::function<bool(const Config&)>& used);

    Counter& eager_sends;   // messages sent eagerly
    Counter& eager_bytes;
    Counter& rendezvous_sends;   // messages sent by rendezvous
    Counter& rendezvous_bytes;
    Counter& self_sends;   // messages to the process itself (copied, no RDMA)
    Counter& receives;   // receives completed
    Counter& unexpected;   // messages that arrived before a receive matched them
    Counter& unexpected_hits;   // receives matched from the unexpected queue when posted
    Counter& copy_bytes;   // payload bytes copied by the CPU (bounce in, slot out, unexpected out)
    Counter& control;   // RTS, CTS and FIN messages sent
    Counter& credit_updates;   // explicit credit returns (RDMA writes of the freed count)
    Counter& credit_stalls;   // messages that waited for an eager credit
    Counter& match_searched;   // queue entries looked at while matching
    Counter& ring_gaps;   // ring entries counted but not written yet when looked at
};

}   // namespace vrdmasim
