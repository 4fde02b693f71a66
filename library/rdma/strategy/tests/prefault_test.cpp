// prefault (library/rdma/strategy/prefault.cpp): present, never pinned.
#include "strategy_env.hpp"

using namespace vrdmasim_test;

TEST_CASE("userlib: prefault makes pages present but pins nothing at a post", "[userlib]") {
    const StrategyKind& k = registration_strategies::of("prefault");
    CHECK(k.makes_present);
    CHECK_FALSE(k.pins_per_post);
    CHECK(k.implies.empty());
}

TEST_CASE("userlib: prefault makes pages present without pinning them", "[userlib]") {
    Env e("prefault");
    const std::uint64_t va = e.mmap(16);
    const RegResult a = e.r().acquire(va + 100, 3 * kPage, true, us(10));
    REQUIRE(a.ok);
    CHECK(a.done == us(10) + ns(500) + times(kFault, 4));   // syscall + 4 faults (page-aligned outward)
    for (unsigned i = 0; i < 4; ++i) CHECK(e.vm->present(e.pid, va + i * kPage));
    CHECK_FALSE(e.vm->present(e.pid, va + 4 * kPage));
    CHECK(e.pins(va, 4) == all(0, 4));
    CHECK(e.vm->pinned_bytes(e.pid) == 0);
    CHECK(e.counter("registrations") == 1);
    // Already present: the syscall and one user access per page.
    CHECK(e.r().acquire(va, 4 * kPage, true, us(100)).done == us(100) + ns(500) + times(ns(100), 4));
    CHECK(e.r().release(va, 4 * kPage, us(200)).done == us(200));
    CHECK(e.vm->present(e.pid, va));
    CHECK(e.counter("deregistrations") == 0);
    // Outside any mapping: the madvise error, counted.
    const RegResult bad = e.r().acquire(0x10000, kPage, true, us(300));
    CHECK_FALSE(bad.ok);
    CHECK(bad.error == VmError::NoMemory);
    CHECK(e.counter("registration_failures") == 1);
    CHECK(e.scalar("registration_time") ==
          Approx(to_us(ns(500) + times(kFault, 4)) + to_us(ns(500) + times(ns(100), 4)) + 0.5).epsilon(1e-12));
}
