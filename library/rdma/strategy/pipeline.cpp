// pipeline: pin and transfer chunk by chunk. The library splits each
// transfer in rdma.pipeline-chunk pieces (RdmaProcess), so that the pin of
// chunk i+1 overlaps the transfer of chunk i; each piece is pinned and
// unpinned as `pin` does a whole transfer.
#include "library/rdma/strategy/pin.hpp"

namespace vrdmasim {
namespace {

const StrategyKind::Declare declared([] {
    StrategyKind k;
    k.name = "pipeline";
    k.order = 50;
    k.help = "pipeline: pin and transfer chunk by chunk (rdma.pipeline-chunk)";
    k.create = [](const StrategyEnv& env) { return std::make_unique<PinPerCall>(env); };
    k.makes_present = true;
    k.chunked = true;
    k.pins_per_post = true;
    return k;
}());

}   // namespace
}   // namespace vrdmasim
