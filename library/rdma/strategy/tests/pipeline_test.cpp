// pipeline (library/rdma/strategy/pipeline.cpp): each chunk the library
// registers is pinned and unpinned as `pin` does a transfer.
#include "strategy_env.hpp"

using namespace vrdmasim_test;

TEST_CASE("userlib: pipeline pins each registration and unpins after it", "[userlib]") {
    check_pin_per_call("pipeline");
}

TEST_CASE("userlib: pipeline is the one strategy whose library registers transfers in chunks", "[userlib]") {
    for (const StrategyKind& k : registration_strategies::all()) CHECK(k.chunked == (k.name == "pipeline"));
    const StrategyKind& k = registration_strategies::of("pipeline");
    CHECK(k.makes_present);
    CHECK(k.pins_per_post);
    CHECK(k.implies.empty());
}
