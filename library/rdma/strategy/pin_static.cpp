// pin-static: every buffer the application allocates is pinned whole at
// its allocation, once, and unpinned at the program's end (whole_buffers.hpp).
#include "library/rdma/strategy/whole_buffers.hpp"

namespace vrdmasim {
namespace {

const StrategyKind::Declare declared([] {
    StrategyKind k;
    k.name = "pin-static";
    k.order = 70;
    k.help =
        "pin-static: every buffer pinned whole once when allocated, unpinned at the end (what "
        "most RDMA applications and NetVM's pinning baseline do: registration at setup, MPI/"
        "verbs ibv_reg_mr)";
    k.create = [](const StrategyEnv& env) { return std::make_unique<WholeBuffers>(env, "pin-static", 0); };
    k.makes_present = true;
    return k;
}());

}   // namespace
}   // namespace vrdmasim
