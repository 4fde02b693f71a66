// pin (library/rdma/strategy/pin.cpp): a pin per call, and RLIMIT_MEMLOCK.
#include "strategy_env.hpp"

using namespace vrdmasim_test;

TEST_CASE("userlib: pin pins for the transfer and unpins after it", "[userlib]") { check_pin_per_call("pin"); }

TEST_CASE("userlib: pin makes pages present and pins at each post", "[userlib]") {
    const StrategyKind& k = registration_strategies::of("pin");
    CHECK(k.makes_present);
    CHECK(k.pins_per_post);
    CHECK_FALSE(k.chunked);
    CHECK_FALSE(k.registration_thread);
    CHECK(k.implies.empty());
}

TEST_CASE("userlib: pin beyond RLIMIT_MEMLOCK fails cleanly with nothing pinned", "[userlib]") {
    Env e("pin", {{"vm.memlock-limit", "64KiB"}});
    const std::uint64_t va = e.mmap(32);
    const RegResult a = e.r().acquire(va, 17 * kPage, true, us(10));
    CHECK_FALSE(a.ok);
    CHECK(a.error == VmError::MemlockLimit);
    CHECK(a.done == us(10) + us(20));   // the pin call is charged, nothing else
    CHECK(e.pins(va, 17) == all(0, 17));
    CHECK_FALSE(e.vm->present(e.pid, va));
    CHECK(e.vm->pinned_bytes(e.pid) == 0);
    CHECK(e.counter("registration_failures") == 1);
    CHECK(e.counter("registrations") == 0);
    REQUIRE(e.r().acquire(va, 16 * kPage, true, us(100)).ok);   // exactly at the limit
    CHECK(e.vm->pinned_bytes(e.pid) == 64 * KiB);
    CHECK(e.r().acquire(va + 16 * kPage, kPage, true, us(500)).error == VmError::MemlockLimit);
    CHECK(e.counter("registration_failures") == 2);
    CHECK(e.scalar("pinned_bytes_peak") == 64.0 * KiB);
}
