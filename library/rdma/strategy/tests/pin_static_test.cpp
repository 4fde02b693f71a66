// pin-static (library/rdma/strategy/pin_static.cpp, whole_buffers.hpp).
#include "strategy_env.hpp"

using namespace vrdmasim_test;

TEST_CASE("userlib: pin-static pins at allocation, not at a post, without a thread", "[userlib]") {
    const StrategyKind& k = registration_strategies::of("pin-static");
    CHECK(k.makes_present);
    CHECK_FALSE(k.pins_per_post);
    CHECK_FALSE(k.registration_thread);
    Env e("pin-static");
    const std::uint64_t va = e.mmap(4);
    REQUIRE(e.r().on_alloc(va, 4 * kPage, us(10)).ok);
    CHECK_FALSE(e.r().background_pending());   // pinned already: nothing for a thread
}

TEST_CASE("userlib: pin-static pins a buffer whole at alloc, messages cost nothing, release_all unpins", "[userlib]") {
    Env e("pin-static");
    const std::uint64_t va = e.mmap(16);
    const RegResult g = e.r().on_alloc(va, 16 * kPage, us(10));
    REQUIRE(g.ok);
    CHECK(g.done == us(10) + pin_cost(16, 16));   // one pin of the whole buffer, every page faulted in
    CHECK(e.pins(va, 16) == all(1, 16));
    CHECK(e.counter("registrations") == 1);
    for (int k = 0; k < 4; ++k) {   // four messages in it: no registration
        const RegResult a = e.r().acquire(va + k * 4 * kPage, 4 * kPage, false, us(1000 + k));
        REQUIRE(a.ok);
        CHECK(a.done == us(1000 + k));
        const RegResult r = e.r().release(va + k * 4 * kPage, 4 * kPage, us(2000 + k));
        REQUIRE(r.ok);
        CHECK(r.done == us(2000 + k));
    }
    CHECK(e.counter("registrations") == 1);
    CHECK(e.counter("deregistrations") == 0);
    CHECK(e.pins(va, 16) == all(1, 16));
    // A range outside every allocated buffer is a library bug.
    const std::uint64_t other = e.mmap(4);
    CHECK_THROWS_AS(e.r().acquire(other, kPage, false, us(3000)), std::logic_error);
    CHECK_FALSE(e.r().release(other, kPage, us(3000)).ok);
    const RegResult z = e.r().release_all(us(5000));
    CHECK(z.done == us(5000) + unpin_cost(16));
    CHECK(e.counter("deregistrations") == 1);
    CHECK(e.vm->pinned_bytes(e.pid) == 0);
    CHECK(e.scalar("deferred_wait") == 0.0);
}

TEST_CASE("userlib: pin-static beyond RLIMIT_MEMLOCK: the refusal is remembered for every message", "[userlib]") {
    Env e("pin-static", {{"vm.memlock-limit", "64KiB"}});
    const std::uint64_t va = e.mmap(17);
    const RegResult g = e.r().on_alloc(va, 17 * kPage, us(10));
    CHECK_FALSE(g.ok);
    CHECK(g.error == VmError::MemlockLimit);
    CHECK(g.done == us(10) + us(20));   // the refused pin call is charged
    CHECK(e.counter("registration_failures") == 1);
    const RegResult a = e.r().acquire(va, kPage, false, us(100));
    CHECK_FALSE(a.ok);
    CHECK(a.error == VmError::MemlockLimit);
    CHECK(a.done == us(100));   // no new pin attempt
    CHECK(e.counter("registration_failures") == 2);
    CHECK(e.vm->pinned_bytes(e.pid) == 0);
    CHECK(e.r().release_all(us(200)).done == us(200));   // nothing pinned, nothing to unpin
}
