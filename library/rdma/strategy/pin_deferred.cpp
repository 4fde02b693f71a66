// pin-deferred: every buffer the application allocates is queued; the
// library's registration thread pins it rdma.pipeline-chunk by
// rdma.pipeline-chunk in the background; a post pins (or waits for) only
// the chunks of its range not pinned yet; unpinned at the program's end
// (whole_buffers.hpp).
#include "library/rdma/strategy/whole_buffers.hpp"

namespace vrdmasim {
namespace {

const StrategyKind::Declare declared([] {
    StrategyKind k;
    k.name = "pin-deferred";
    k.order = 80;
    k.help =
        "pin-deferred: every buffer queued when allocated and pinned in "
        "rdma.pipeline-chunk pieces by the library's registration thread on the node's cores "
        "while the application computes; a post pins itself, or waits for, only the chunks of "
        "its range not pinned yet; unpinned at the end";
    k.create = [](const StrategyEnv& env) {
        return std::make_unique<WholeBuffers>(env, "pin-deferred",
                                              env.config[params_of<StrategyParams>().pipeline_chunk]);
    };
    k.makes_present = true;
    k.registration_thread = true;
    k.declare_metrics = [](MetricRegistry& reg, const MetricRegistry::Presence& present) {
        reg.sum_scalars("deferred_pin_wait_us", "us",
                        "Time posts waited for pin-deferred registration (chunks of their range the registration "
                        "thread had not pinned yet, pinned by the post or waited for; `*.rdma.deferred_wait`).",
                        "rdma.deferred_wait", 6, present);
    };
    return k;
}());

}   // namespace
}   // namespace vrdmasim
