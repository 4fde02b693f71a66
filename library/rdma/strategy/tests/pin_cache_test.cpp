// pin-cache (library/rdma/strategy/pin_cache.hpp): hits, misses, LRU
// eviction, room made under RLIMIT_MEMLOCK, the MMU notifier, release_all.
#include "strategy_env.hpp"
#include "library/rdma/strategy/pin_cache.hpp"

using namespace vrdmasim_test;

TEST_CASE("userlib: pin-cache pins at each post and declares its hit and miss counts", "[userlib]") {
    const StrategyKind& k = registration_strategies::of("pin-cache");
    CHECK(k.makes_present);
    CHECK(k.pins_per_post);
    MetricRegistry reg;
    REQUIRE(k.declare_metrics);
    k.declare_metrics(reg, {});
    CHECK(reg.find("pin_cache_hits"));
    CHECK(reg.find("pin_cache_misses"));
}

TEST_CASE("userlib: pin-cache: a miss pins, a hit costs only the lookup", "[userlib]") {
    Env e("pin-cache");
    const std::uint64_t va = e.mmap(16);
    const RegResult a = e.r().acquire(va, 4 * kPage, true, us(10));
    REQUIRE(a.ok);
    CHECK(a.done == us(10) + kLookup + pin_cost(4, 4));
    CHECK(e.counter("cache_misses") == 1);
    CHECK(e.counter("registrations") == 1);
    CHECK(e.as<PinCache>().cached_pages() == 4);
    // Lazy deregistration: release keeps the pins.
    const RegResult r = e.r().release(va, 4 * kPage, us(100));
    REQUIRE(r.ok);
    CHECK(r.done == us(100));
    CHECK(e.pins(va, 4) == all(1, 4));
    CHECK(e.counter("deregistrations") == 0);
    // Hit: the same range, and a part of it.
    const RegResult h = e.r().acquire(va, 4 * kPage, true, us(200));
    REQUIRE(h.ok);
    CHECK(h.done - us(200) == kLookup);
    const RegResult h2 = e.r().acquire(va + kPage + 8, 100, false, us(300));
    CHECK(h2.done == us(300) + kLookup);
    CHECK(e.pins(va, 4) == all(1, 4));
    CHECK(e.counter("cache_hits") == 2);
    CHECK(e.counter("registrations") == 1);
    CHECK(e.cpu->busy("registration") == times(kLookup, 3));
    // A range only partly covered is a miss: a new entry, overlapping pages pinned twice.
    const RegResult m = e.r().acquire(va + 2 * kPage, 4 * kPage, true, us(400));
    CHECK(m.done == us(400) + kLookup + pin_cost(2, 4) + times(ns(100), 2));
    CHECK(e.pins(va, 7) == std::vector<unsigned>{1, 1, 2, 2, 1, 1, 0});
    CHECK(e.counter("cache_misses") == 2);
    CHECK(e.as<PinCache>().cached_pages() == 8);
    CHECK(e.as<PinCache>().entries() == 2);
    CHECK(e.scalar("pinned_bytes_peak") == 8.0 * kPage);
    // Releasing what was never acquired is an error.
    CHECK(e.r().release(va + 10 * kPage, kPage, us(500)).error == VmError::Invalid);
}

TEST_CASE("userlib: pin-cache evicts least-recently-used unused entries beyond its capacity", "[userlib]") {
    Env e("pin-cache", {{"rdma.pin-cache-pages", "8"}});
    const std::uint64_t va = e.mmap(32);
    const std::uint64_t A = va, B = va + 8 * kPage, C = va + 16 * kPage;
    for (std::uint64_t x : {A, B}) {
        REQUIRE(e.r().acquire(x, 4 * kPage, true, us(x == A ? 10 : 100)).ok);
        REQUIRE(e.r().release(x, 4 * kPage, us(x == A ? 50 : 150)).ok);
    }
    REQUIRE(e.r().acquire(A, 4 * kPage, true, us(200)).done == us(200) + kLookup);   // hit: A most recent
    REQUIRE(e.r().release(A, 4 * kPage, us(210)).ok);
    CHECK(e.as<PinCache>().cached_pages() == 8);
    // C: 12 pages > 8: the LRU entry, B, goes (unpinned), A stays.
    const RegResult c = e.r().acquire(C, 4 * kPage, true, us(300));
    REQUIRE(c.ok);
    CHECK(c.done == us(300) + kLookup + pin_cost(4, 4) + unpin_cost(4));
    CHECK(e.pins(A, 4) == all(1, 4));
    CHECK(e.pins(B, 4) == all(0, 4));
    CHECK(e.pins(C, 4) == all(1, 4));
    CHECK(e.vm->present(e.pid, B));   // evicted means unpinned, not unmapped
    CHECK(e.counter("cache_evictions") == 1);
    CHECK(e.counter("deregistrations") == 1);
    CHECK(e.counter("cache_over_capacity") == 0);
    CHECK(e.as<PinCache>().cached_pages() == 8);
    // B again: a miss; now A is the LRU one and goes.
    REQUIRE(e.r().release(C, 4 * kPage, us(400)).ok);
    REQUIRE(e.r().acquire(B, 4 * kPage, true, us(500)).ok);
    CHECK(e.pins(A, 4) == all(0, 4));
    CHECK(e.pins(B, 4) == all(1, 4));
    CHECK(e.pins(C, 4) == all(1, 4));
    CHECK(e.counter("cache_evictions") == 2);
    CHECK(e.counter("cache_misses") == 4);
    CHECK(e.scalar("pinned_bytes_peak") == 8.0 * kPage);   // measured after each call: after the eviction
}

TEST_CASE("userlib: pin-cache never evicts entries in use, the cache may exceed its capacity", "[userlib]") {
    Env e("pin-cache", {{"rdma.pin-cache-pages", "4"}});
    const std::uint64_t va = e.mmap(32);
    const std::uint64_t A = va, B = va + 8 * kPage, C = va + 16 * kPage;
    REQUIRE(e.r().acquire(A, 4 * kPage, true, us(10)).ok);
    const RegResult b = e.r().acquire(B, 4 * kPage, true, us(100));   // A in use: kept
    REQUIRE(b.ok);
    CHECK(b.done == us(100) + kLookup + pin_cost(4, 4));   // no eviction
    CHECK(e.as<PinCache>().cached_pages() == 8);
    CHECK(e.counter("cache_over_capacity") == 1);
    CHECK(e.counter("cache_evictions") == 0);
    CHECK(e.pins(A, 4) == all(1, 4));
    REQUIRE(e.r().release(A, 4 * kPage, us(200)).ok);
    // C: A (unused, LRU) goes; B is in use, so the cache stays over.
    REQUIRE(e.r().acquire(C, 4 * kPage, true, us(300)).ok);
    CHECK(e.pins(A, 4) == all(0, 4));
    CHECK(e.pins(B, 4) == all(1, 4));
    CHECK(e.pins(C, 4) == all(1, 4));
    CHECK(e.as<PinCache>().cached_pages() == 8);
    CHECK(e.counter("cache_evictions") == 1);
    CHECK(e.counter("cache_over_capacity") == 2);
    // One entry bigger than the whole cache: pinned all the same.
    REQUIRE(e.r().release(B, 4 * kPage, us(400)).ok);
    REQUIRE(e.r().release(C, 4 * kPage, us(410)).ok);
    REQUIRE(e.r().acquire(va + 24 * kPage, 8 * kPage, true, us(500)).ok);
    CHECK(e.as<PinCache>().cached_pages() == 8);   // B and C evicted, the new entry alone
    CHECK(e.counter("cache_evictions") == 3);
    CHECK(e.counter("cache_over_capacity") == 3);
}

TEST_CASE("userlib: pin-cache makes room under RLIMIT_MEMLOCK by evicting unused entries", "[userlib]") {
    Env e("pin-cache", {{"vm.memlock-limit", "64KiB"}});
    const std::uint64_t va = e.mmap(64);
    const std::uint64_t A = va, B = va + 8 * kPage, C = va + 16 * kPage, D = va + 24 * kPage;
    REQUIRE(e.r().acquire(A, 8 * kPage, true, us(10)).ok);
    REQUIRE(e.r().release(A, 8 * kPage, us(100)).ok);
    REQUIRE(e.r().acquire(B, 8 * kPage, true, us(200)).ok);   // 16 pages: at the limit; B in use
    // C: refused, A evicted, retried: ok.
    const RegResult c = e.r().acquire(C, 4 * kPage, true, us(300));
    REQUIRE(c.ok);
    CHECK(c.done == us(300) + kLookup + us(20) + unpin_cost(8) + pin_cost(4, 4));
    CHECK(e.pins(A, 8) == all(0, 8));
    CHECK(e.pins(C, 4) == all(1, 4));
    CHECK(e.counter("cache_evictions") == 1);
    CHECK(e.vm->pinned_bytes(e.pid) == 12 * kPage);
    // D: refused, nothing unused to evict (B, C in use): fails cleanly.
    const RegResult d = e.r().acquire(D, 8 * kPage, true, us(400));
    CHECK_FALSE(d.ok);
    CHECK(d.error == VmError::MemlockLimit);
    CHECK(d.done == us(400) + kLookup + us(20) + us(20));   // two refused pin calls
    CHECK(e.pins(D, 8) == all(0, 8));
    CHECK_FALSE(e.vm->present(e.pid, D));
    CHECK(e.vm->pinned_bytes(e.pid) == 12 * kPage);
    CHECK(e.counter("registration_failures") == 1);
    CHECK(e.as<PinCache>().entries() == 2);
    CHECK(e.scalar("pinned_bytes_peak") == 16.0 * kPage);
}

TEST_CASE("userlib: pin-cache entries are dropped by munmap through the Vm notifier", "[userlib]") {
    Env e("pin-cache");
    // The SMMU driver's notifier comes first; the registrar's is chained after it.
    std::vector<sc_time> driver_calls;
    e.vm->set_invalidate([&](int, std::uint16_t, std::uint64_t, std::uint64_t, sc_time at) {
        driver_calls.push_back(at);
        return at + us(3);
    });
    const std::uint64_t m0 = e.mmap(4);
    const std::uint64_t m1 = e.mmap(4);
    REQUIRE(m1 + 4 * kPage == m0);   // top-down
    REQUIRE(e.r().acquire(m0, 4 * kPage, true, us(10)).ok);
    REQUIRE(e.r().release(m0, 4 * kPage, us(100)).ok);
    REQUIRE(e.r().acquire(m1, 4 * kPage, true, us(200)).ok);
    REQUIRE(e.r().release(m1, 4 * kPage, us(300)).ok);
    CHECK(e.as<PinCache>().cached_pages() == 8);
    const std::uint64_t free0 = e.vm->free_bytes();
    const VmResult u = e.vm->munmap(e.pid, m1, 4 * kPage, us(400));
    REQUIRE(u.ok());
    CHECK(u.done == us(400) + ns(500) + times(ns(20), 4) + us(3));   // the registrar's notifier takes no time
    REQUIRE(driver_calls.size() == 1);
    CHECK(e.counter("cache_invalidations") == 1);
    CHECK(e.as<PinCache>().cached_pages() == 4);
    CHECK(e.as<PinCache>().entries() == 1);
    // Vm: the pinned frames outlive munmap (pins found by the old VA); no unpin yet.
    CHECK(e.pins(m1, 4) == all(1, 4));
    CHECK(e.vm->pinned_bytes(e.pid) == 8 * kPage);
    CHECK(e.vm->free_bytes() == free0);
    CHECK(e.counter("deregistrations") == 0);
    // The next call (a hit on m0) first releases the dropped entry's pins.
    const RegResult h = e.r().acquire(m0, 4 * kPage, true, us(500));
    REQUIRE(h.ok);
    CHECK(h.done == us(500) + unpin_cost(4) + kLookup);
    CHECK(e.counter("cache_hits") == 1);
    CHECK(e.pins(m1, 4) == all(0, 4));
    CHECK(e.vm->free_bytes() == free0 + 4 * kPage);   // the old frames go at the last unpin
    CHECK(e.counter("deregistrations") == 1);
    // The range mapped again (the same VA): a miss, fresh pages.
    const std::uint64_t m2 = e.mmap(4);
    REQUIRE(m2 == m1);
    const RegResult a = e.r().acquire(m2, 4 * kPage, true, us(600));
    REQUIRE(a.ok);
    CHECK(a.done == us(600) + kLookup + pin_cost(4, 4));
    CHECK(e.counter("cache_misses") == 3);
    CHECK(e.pins(m2, 4) == all(1, 4));
    // mprotect is a mapping change too: the entry over m0 is dropped.
    REQUIRE(e.r().release(m0, 4 * kPage, us(700)).ok);
    REQUIRE(e.vm->mprotect(e.pid, m0, kPage, Prot::Read, us(800)).ok());
    CHECK(e.counter("cache_invalidations") == 2);
    CHECK(e.as<PinCache>().entries() == 1);
    // Another process's change does not touch this cache.
    CHECK(e.r().invalidate(e.pid + 1, 2, m2, 4 * kPage, us(900)) == us(900));
    CHECK(e.as<PinCache>().entries() == 1);
}

TEST_CASE("userlib: an entry dropped while in use keeps its pins until its release", "[userlib]") {
    Env e("pin-cache");
    const std::uint64_t m0 = e.mmap(4);
    const std::uint64_t m1 = e.mmap(4);
    REQUIRE(e.r().acquire(m1, 4 * kPage, true, us(10)).ok);   // in use by the engine
    REQUIRE(e.vm->munmap(e.pid, m1, 4 * kPage, us(100)).ok());
    CHECK(e.as<PinCache>().entries() == 0);
    // Another call: the dropped entry is still in use, so its pins stay.
    const RegResult a = e.r().acquire(m0, 4 * kPage, true, us(200));
    CHECK(a.done == us(200) + kLookup + pin_cost(4, 4));
    CHECK(e.pins(m1, 4) == all(1, 4));
    // Its release unpins it at once.
    const RegResult r = e.r().release(m1, 4 * kPage, us(300));
    REQUIRE(r.ok);
    CHECK(r.done == us(300) + unpin_cost(4));
    CHECK(e.pins(m1, 4) == all(0, 4));
    CHECK(e.counter("deregistrations") == 1);
}

TEST_CASE("userlib: release_all unpins every entry of the pin-down cache", "[userlib]") {
    Env e("pin-cache");
    const std::uint64_t va = e.mmap(32);
    REQUIRE(e.r().acquire(va, 4 * kPage, true, us(10)).ok);
    REQUIRE(e.r().release(va, 4 * kPage, us(100)).ok);
    REQUIRE(e.r().acquire(va + 8 * kPage, 2 * kPage, true, us(200)).ok);
    REQUIRE(e.r().acquire(va + 16 * kPage, 8 * kPage, true, us(300)).ok);   // still in use
    CHECK(e.vm->pinned_bytes(e.pid) == 14 * kPage);
    const RegResult r = e.r().release_all(us(1000));
    REQUIRE(r.ok);
    CHECK(r.done == us(1000) + unpin_cost(8) + unpin_cost(2) + unpin_cost(4));   // most recent first
    CHECK(e.vm->pinned_bytes(e.pid) == 0);
    CHECK(e.as<PinCache>().cached_pages() == 0);
    CHECK(e.as<PinCache>().entries() == 0);
    CHECK(e.counter("deregistrations") == 3);
    CHECK(e.scalar("pinned_bytes_peak") == 14.0 * kPage);
    // After it, the cache starts empty.
    CHECK(e.r().acquire(va, 4 * kPage, true, us(2000)).done == us(2000) + kLookup + pin_cost(0, 4) + times(ns(100), 4));
    CHECK(e.counter("cache_misses") == 4);
}
