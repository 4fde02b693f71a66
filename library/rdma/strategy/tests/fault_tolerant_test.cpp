// fault-tolerant (library/rdma/strategy/fault_tolerant.cpp): nothing to do,
// nothing implied.
#include "strategy_env.hpp"

using namespace vrdmasim_test;

TEST_CASE("userlib: fault-tolerant does nothing and costs nothing", "[userlib]") {
    check_registers_nothing("fault-tolerant");
}

TEST_CASE("userlib: fault-tolerant implies nothing and needs no SMMU", "[userlib]") {
    const StrategyKind& k = registration_strategies::of("fault-tolerant");
    CHECK(k.implies.empty());
    CHECK_FALSE(k.makes_present);
    CHECK_FALSE(k.needs_smmu);
    CHECK_FALSE(k.redirects_faulted_packets);
    CHECK_FALSE(k.registration_thread);
    CHECK_FALSE(k.chunked);
    CHECK_FALSE(k.pins_per_post);
}
