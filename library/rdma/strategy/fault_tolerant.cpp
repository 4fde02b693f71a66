// fault-tolerant: the library registers nothing; the engine takes the SMMU
// faults of a buffer's missing pages and survives them (the fault-tolerant
// PLDMA, models/dma/README.md).
#include "library/rdma/strategy/strategy.hpp"

namespace vrdmasim {
namespace {

const StrategyKind::Declare declared([] {
    StrategyKind k;
    k.name = "fault-tolerant";
    k.order = 10;
    k.help = "fault-tolerant: nothing, the engine takes and survives SMMU faults";
    k.create = [](const StrategyEnv&) { return std::make_unique<Unregistered>(); };
    return k;
}());

}   // namespace
}   // namespace vrdmasim
