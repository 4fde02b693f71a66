// The registry of registration strategies (library/rdma/strategy/strategy.hpp):
// rdma.strategy's choices and help are the declared strategies, the one
// lookup reads it, and a late or second declaration is refused.
#include "strategy_env.hpp"

#include <algorithm>
#include <stdexcept>

using namespace vrdmasim_test;

TEST_CASE("userlib: rdma.strategy's choices and help are the declared strategies", "[userlib]") {
    ParamRegistry reg = params();   // section rdma: library/rdma/params.cpp, strategy/strategy.cpp
    const ParamDecl* s = reg.find("rdma.strategy");
    REQUIRE(s);
    CHECK(s->default_text == "fault-tolerant");
    CHECK(s->choices == std::vector<std::string>{"fault-tolerant", "pin", "pin-cache", "prefault", "pipeline", "netvm",
                                                 "pin-static", "pin-deferred"});
    for (const StrategyKind& k : registration_strategies::all()) {
        CHECK(k.help.rfind(k.name + ": ", 0) == 0);   // "name: what it does"
        CHECK(s->help.find(k.help) != std::string::npos);
    }
    REQUIRE(reg.find("rdma.pin-cache-pages"));
    CHECK(reg.find("rdma.pin-cache-pages")->default_text == "16384");
    CHECK(reg.find("rdma.pin-cache-pages")->max == 1099511627776.0);
    CHECK(reg.find("rdma.pin-cache-lookup")->default_text == "100ns");
    CHECK(reg.find("rdma.pipeline-chunk")->default_text == "256KiB");
    CHECK(reg.find("rdma.post-overhead"));
    Config cfg(reg);
    CHECK(registration_strategies::of(cfg).name == "fault-tolerant");
    CHECK_THROWS_AS(cfg.set("rdma.pipeline-chunk", "2KiB", "test"), ConfigError);
    CHECK_THROWS_AS(cfg.set("rdma.pin-cache-pages", "0", "test"), ConfigError);
    CHECK_THROWS_AS(cfg.set("rdma.strategy", "pinned", "test"), ConfigError);
    for (const StrategyKind& k : registration_strategies::all()) {
        cfg.set("rdma.strategy", k.name, "test");
        CHECK(&registration_strategies::of(cfg) == &k);
        CHECK(&registration_strategies::of(k.name) == &k);
    }
    CHECK_THROWS_AS(registration_strategies::of("pinned"), std::logic_error);
}

TEST_CASE("userlib: section rdma keeps its order: the strategies' keys after the process API's", "[userlib]") {
    const ParamRegistry reg = params();
    std::vector<std::string> keys;
    for (const ParamDecl& d : reg.all())
        if (d.section == "rdma") keys.push_back(d.key);
    const auto at = [&](const std::string& k) { return std::find(keys.begin(), keys.end(), k) - keys.begin(); };
    CHECK(at("strategy") == at("channels") + 1);
    CHECK(at("pipeline-chunk") == at("strategy") + 3);
    CHECK(at("buffer-guard") == at("pipeline-chunk") + 1);
}

TEST_CASE("userlib: a strategy declared once the strategies were read is refused", "[userlib]") {
    REQUIRE(!registration_strategies::all().empty());
    StrategyKind k;
    k.name = "late";
    k.order = 1000;
    k.create = [](const StrategyEnv&) { return std::make_unique<Unregistered>(); };
    CHECK_THROWS_AS(StrategyKind::Declare(k), std::logic_error);
    CHECK_THROWS_AS(registration_strategies::of("late"), std::logic_error);
}

TEST_CASE("userlib: every strategy builds its hooks, only the pinning ones make pages present", "[userlib]") {
    for (const StrategyKind& k : registration_strategies::all()) {
        Env e(k.name);
        CHECK(&e.r().kind() == &k);
        const std::uint64_t va = e.mmap(4);
        e.r().on_alloc(va, 4 * kPage, us(1));
        REQUIRE(e.r().acquire(va, 4 * kPage, true, us(10)).ok);
        CHECK(e.vm->present(e.pid, va) == k.makes_present);
        REQUIRE(e.r().release(va, 4 * kPage, us(500)).ok);
        CHECK(e.r().release_all(us(1000)).ok);
        CHECK(e.vm->pinned_bytes(e.pid) == 0);
    }
}
