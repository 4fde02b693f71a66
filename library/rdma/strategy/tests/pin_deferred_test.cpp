// pin-deferred (library/rdma/strategy/pin_deferred.cpp, whole_buffers.hpp):
// the registration thread's chunks and the posts that meet them.
#include "strategy_env.hpp"

using namespace vrdmasim_test;

TEST_CASE("userlib: pin-deferred runs the registration thread and declares its wait", "[userlib]") {
    const StrategyKind& k = registration_strategies::of("pin-deferred");
    CHECK(k.registration_thread);
    CHECK(k.makes_present);
    CHECK_FALSE(k.pins_per_post);
    MetricRegistry reg;
    REQUIRE(k.declare_metrics);
    k.declare_metrics(reg, {});
    CHECK(reg.find("deferred_pin_wait_us"));
}

TEST_CASE("userlib: pin-deferred: the thread pins chunks in order, a post pins or waits only for what is left",
          "[userlib]") {
    Env e("pin-deferred", {{"rdma.pipeline-chunk", "16KiB"}});   // 4 pages a chunk
    const std::uint64_t va = e.mmap(16);
    const RegResult g = e.r().on_alloc(va, 16 * kPage, us(10));
    REQUIRE(g.ok);
    CHECK(g.done == us(10));   // queued only
    CHECK(e.pins(va, 16) == all(0, 16));
    REQUIRE(e.r().background_pending());
    // The thread, woken earlier than the allocation, starts no sooner than it.
    const sc_time c0 = e.r().background_step(us(0));
    CHECK(c0 == us(10) + pin_cost(4, 4));
    CHECK(e.pins(va, 4) == all(1, 4));
    // A post in chunk 0 while the thread pins it waits for that pin to end.
    const RegResult a = e.r().acquire(va, 2 * kPage, false, us(12));
    REQUIRE(a.ok);
    CHECK(a.done == c0);
    // A post in chunk 2, not reached by the thread: pins it itself.
    const RegResult b = e.r().acquire(va + 8 * kPage, 4 * kPage, false, us(100));
    REQUIRE(b.ok);
    CHECK(b.done == us(100) + pin_cost(4, 4));
    CHECK(e.counter("foreground_pins") == 1);
    // The thread goes on with chunk 1, then chunk 3 (chunk 2 is done).
    const sc_time c1 = e.r().background_step(c0);
    CHECK(c1 == c0 + pin_cost(4, 4));
    const sc_time c3 = e.r().background_step(c1);
    CHECK(c3 == c1 + pin_cost(4, 4));
    CHECK(e.pins(va, 16) == all(1, 16));   // every page pinned once
    CHECK_FALSE(e.r().background_pending());
    CHECK(e.counter("background_pins") == 3);
    CHECK(e.counter("registrations") == 4);
    // Everything pinned: a post costs nothing.
    CHECK(e.r().acquire(va, 16 * kPage, false, us(1000)).done == us(1000));
    CHECK(e.scalar("deferred_wait") == Approx(to_us(c0 - us(12)) + to_us(pin_cost(4, 4))).epsilon(1e-12));
    CHECK(e.scalar("background_pin_time") == Approx(3 * to_us(pin_cost(4, 4))).epsilon(1e-12));
    const RegResult z = e.r().release_all(us(5000));
    CHECK(z.done == us(5000) + times(unpin_cost(4), 4));
    CHECK(e.counter("deregistrations") == 4);
    CHECK(e.vm->pinned_bytes(e.pid) == 0);
}
