// netvm (library/rdma/strategy/netvm.cpp): the library does nothing; what it
// needs of the machine is declared (System::resolve applies it).
#include "strategy_env.hpp"

using namespace vrdmasim_test;

TEST_CASE("userlib: netvm does nothing and costs nothing", "[userlib]") { check_registers_nothing("netvm"); }

TEST_CASE("userlib: netvm needs the SMMU, terminate mode and the fault-tolerant engine, which redirects", "[userlib]") {
    const StrategyKind& k = registration_strategies::of("netvm");
    REQUIRE(k.implies.size() == 2);
    CHECK(k.implies[0].key == "smmu-driver.fault-mode");
    CHECK(k.implies[0].value == "terminate");
    CHECK(k.implies[1].key == "dma.fault-tolerant");
    CHECK(k.implies[1].value == "true");
    CHECK(k.implies_why.find("redirect the packet") != std::string::npos);
    CHECK(k.needs_smmu);
    CHECK(k.redirects_faulted_packets);
    CHECK_FALSE(k.makes_present);
    CHECK_FALSE(k.pins_per_post);
}
