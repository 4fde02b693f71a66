// netvm: the library registers nothing; the NI translates itself (NetVM,
// models/dma/README.md): a packet for a non-resident destination page
// faults in terminate mode, the fault-tolerant engine survives it and
// redirects the packet into a kernel buffer, copied into place once the
// page is in.
#include "library/rdma/strategy/strategy.hpp"

namespace vrdmasim {
namespace {

const StrategyKind::Declare declared([] {
    StrategyKind k;
    k.name = "netvm";
    k.order = 60;
    k.help = "netvm: nothing, the NI translates itself";
    k.create = [](const StrategyEnv&) { return std::make_unique<Unregistered>(); };
    k.implies = {{"smmu-driver.fault-mode", "terminate"}, {"dma.fault-tolerant", "true"}};
    k.implies_why =
        "the receiving engine must see a fault on a non-resident page (terminate mode) and survive it "
        "(the fault-tolerant engine) to redirect the packet into the kernel buffer";
    k.needs_smmu = true;
    k.redirects_faulted_packets = true;
    return k;
}());

}   // namespace
}   // namespace vrdmasim
