// The energy model's arithmetic: each component's static power over the run
// and its energy per unit of work, from the declared coefficients.
#include <catch2/catch.hpp>

#include "src/core/params.hpp"
#include "models/power/power.hpp"

using namespace vrdmasim;

namespace {

ParamRegistry registry() {
    ParamRegistry reg;
    PowerModel::declare_params(reg);
    return reg;
}

RunActivity two_nodes() {
    RunActivity a;
    a.seconds = 0.01;
    a.nodes = 2;
    a.cores_per_node = 4;
    a.core_busy_seconds = 0.015;   // 1.5 of the 8 cores' 80 ms
    a.dram_bytes = 32e6;
    a.link_bits = 128e6;
    a.lane_seconds = 0.02;   // two lanes (one link each way)
    a.ssds = 1;
    a.ssd_bytes = 4096;
    a.packets = 65536;
    a.walks = 129;
    return a;
}

}   // namespace

TEST_CASE("energy: static power over the run plus energy per unit of work, per component", "[power]") {
    const ParamRegistry reg = registry();
    const Config cfg(reg);
    const Energy e = PowerModel(cfg).energy(two_nodes());
    REQUIRE(e.parts.size() == 5);
    // cpu: 8 cores x 10 ms idle at 20 mW, plus 15 ms busy at 350 - 20 mW.
    CHECK(e.parts[0].name == "cpu");
    CHECK(e.parts[0].static_j == Approx(8 * 0.01 * 0.020));
    CHECK(e.parts[0].dynamic_j == Approx(0.015 * 0.330));
    // dram: 2 x 350 mW x 10 ms, 32 MB x 8 x 20 pJ.
    CHECK(e.parts[1].static_j == Approx(2 * 0.35 * 0.01));
    CHECK(e.parts[1].dynamic_j == Approx(32e6 * 8 * 20e-12));
    // links: 0.02 lane-seconds x 200 mW, 128 Mbit x 2 pJ.
    CHECK(e.parts[2].static_j == Approx(0.02 * 0.2));
    CHECK(e.parts[2].dynamic_j == Approx(128e6 * 2e-12));
    // ssd, engine.
    CHECK(e.parts[3].static_j == Approx(0.01 * 0.05));
    CHECK(e.parts[3].dynamic_j == Approx(4096 * 5e-9));
    CHECK(e.parts[4].static_j == Approx(2 * 0.4 * 0.01));
    CHECK(e.parts[4].dynamic_j == Approx(65536 * 1e-9 + 129 * 0.5e-9));
    double sum = 0;
    for (const auto& p : e.parts) sum += p.total();
    CHECK(e.total() == Approx(sum));
}

TEST_CASE("energy: the coefficients are parameters, and no work costs only static power", "[power]") {
    const ParamRegistry reg = registry();
    Config cfg(reg);
    cfg.set("power.core-active-mw", "500", "test");
    cfg.set("power.dram-pj-per-bit", "0", "test");
    RunActivity a = two_nodes();
    const Energy e = PowerModel(cfg).energy(a);
    CHECK(e.parts[0].dynamic_j == Approx(0.015 * 0.480));
    CHECK(e.parts[1].dynamic_j == 0);
    a.core_busy_seconds = a.dram_bytes = a.link_bits = a.ssd_bytes = a.packets = a.walks = 0;
    for (const auto& p : PowerModel(cfg).energy(a).parts) {
        INFO(p.name);
        CHECK(p.dynamic_j == 0);
        CHECK(p.static_j > 0);
    }
}

TEST_CASE("energy: an idle core that draws more than a busy one is refused, naming the parameter", "[power]") {
    // It used to pass configuration and fail the run's energy self-check at
    // the end, naming no parameter.
    const ParamRegistry reg = registry();
    Config cfg(reg);
    cfg.set("power.core-idle-mw", "400", "test");
    CHECK_THROWS_WITH(PowerModel(cfg),
                      Catch::Contains("power.core-idle-mw") && Catch::Contains("above power.core-active-mw (350 mW)"));
    cfg.set("power.core-idle-mw", "350", "test");   // equal: a core whose busy time costs nothing extra
    CHECK_NOTHROW(PowerModel(cfg));
}
