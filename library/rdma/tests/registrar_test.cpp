// Registrar: the RDMA user library's registration strategies over a real Vm
// (page tables in a sparse fake DRAM, as in models/os/tests/vm_test.cpp).
// Plain objects: no elaboration, no sc_start. Costs are set to round
// numbers so that every time below is an exact sum.
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <systemc>
#include <tlm>

#include "debug_memory.hpp"
#include "model_env.hpp"
#include "models/os/vm.hpp"
#include "library/rdma/registrar.hpp"
#include "library/rdma/process.hpp"

using namespace vrdmasim;
using sc_core::sc_time;

namespace {

using vrdmasim_test::Settings;

sc_time us(double v) { return sc_time::from_value(static_cast<sc_dt::uint64>(v * 1e6 + 0.5)); }
sc_time ns(double v) { return sc_time::from_value(static_cast<sc_dt::uint64>(v * 1e3 + 0.5)); }
sc_time times(sc_time t, unsigned n) { return sc_time::from_value(t.value() * n); }
const sc_time T0 = sc_core::SC_ZERO_TIME;
constexpr std::uint64_t KiB = 1024, MiB = 1024 * KiB, kPage = 4096;

using FakeMemory = vrdmasim_test::DebugMemory;

const vrdmasim_test::ParamDecls kParams = {CpuCores::declare_params, Vm::declare_params, Ssd::declare_params,
                                           RdmaParams::declare_params};

ParamRegistry params() { return vrdmasim_test::params_of(kParams); }

// Exact, simple costs (as vm_test.cpp): a 4 KiB fault is 3.02 us, a pin call
// 20 us + 0.5 us per page, an unpin call the same without faults.
const Settings kCosts = {
    {"vm.minor-fault", "2us"},         {"vm.zero-fill-page", "1us"}, {"vm.huge-zero-fill", "500us"},
    {"vm.syscall", "500ns"},           {"vm.pte-update", "20ns"},    {"vm.pin-call", "20us"},
    {"vm.pin-page", "500ns"},          {"vm.user-access", "100ns"},  {"vm.thp", "never"},
    {"rdma.pin-cache-lookup", "100ns"}};
const sc_time kFault = us(2) + us(1) + ns(20);
const sc_time kLookup = ns(100);
sc_time pin_cost(unsigned faulted, unsigned pages) { return us(20) + times(kFault, faulted) + times(ns(500), pages); }
sc_time unpin_cost(unsigned pages) { return us(20) + times(ns(500), pages); }

struct Env : vrdmasim_test::ModelEnv {
    FakeMemory mem;
    FrameAllocator frames;
    std::unique_ptr<CpuCores> cpu;
    std::unique_ptr<Vm> vm;
    std::unique_ptr<Registrar> reg_;
    int pid = 0;
    explicit Env(const std::string& strategy, const Settings& settings = {})
        : ModelEnv(kParams, kCosts), frames(0, 64 * MiB) {
        cfg.set("rdma.strategy", strategy, "test");
        set(settings);
        cpu = std::make_unique<CpuCores>(ctx, "node0.cpu", "node0");
        vm = std::make_unique<Vm>(ctx, "node0.vm", "node0", mem, frames, *cpu);
        pid = vm->create_process("app");
        reg_ = std::make_unique<Registrar>(ctx, "node0.rdma", *vm, pid, *cpu);
        Registrar* r = reg_.get();
        vm->add_invalidate([r](int p, std::uint16_t asid, std::uint64_t va, std::uint64_t len, sc_time at) {
            return r->invalidate(p, asid, va, len, at);
        });
    }
    Registrar& r() { return *reg_; }
    std::uint64_t mmap(std::uint64_t pages) {
        const VmResult m = vm->mmap(pid, pages * kPage, Prot::ReadWrite, false, T0);
        REQUIRE(m.ok());
        return m.value;
    }
    std::uint64_t counter(const std::string& n) const {
        const Counter* c = stats.find_counter("node0.rdma." + n);
        return c ? c->value() : ~0ull;
    }
    double scalar(const std::string& n) const {
        const Scalar* s = stats.find_scalar("node0.rdma." + n);
        return s ? s->value() : -1.0;
    }
    // pin counts of `pages` pages from va
    std::vector<unsigned> pins(std::uint64_t va, unsigned pages) const {
        std::vector<unsigned> v;
        for (unsigned i = 0; i < pages; ++i) v.push_back(vm->pin_count(pid, va + i * kPage));
        return v;
    }
};

std::vector<unsigned> all(unsigned n, unsigned pages) { return std::vector<unsigned>(pages, n); }

}   // namespace

TEST_CASE("userlib: parameters, strategy names, strategy_from", "[userlib]") {
    ParamRegistry reg = params();   // section rdma: library/rdma/params.cpp
    const ParamDecl* s = reg.find("rdma.strategy");
    REQUIRE(s);
    CHECK(s->default_text == "fault-tolerant");
    CHECK(s->choices == std::vector<std::string>{"fault-tolerant", "pin", "pin-cache", "prefault", "pipeline", "netvm",
                                                 "pin-static", "pin-deferred"});
    REQUIRE(reg.find("rdma.pin-cache-pages"));
    CHECK(reg.find("rdma.pin-cache-pages")->default_text == "16384");
    CHECK(reg.find("rdma.pin-cache-pages")->max == 1099511627776.0);
    CHECK(reg.find("rdma.pin-cache-lookup")->default_text == "100ns");
    CHECK(reg.find("rdma.pipeline-chunk")->default_text == "256KiB");
    CHECK(reg.find("rdma.post-overhead"));
    Config cfg(reg);
    CHECK(strategy_from(cfg) == Strategy::FaultTolerant);
    CHECK_THROWS_AS(cfg.set("rdma.pipeline-chunk", "2KiB", "test"), ConfigError);
    CHECK_THROWS_AS(cfg.set("rdma.pin-cache-pages", "0", "test"), ConfigError);
    CHECK_THROWS_AS(cfg.set("rdma.strategy", "pinned", "test"), ConfigError);
    for (Strategy x : {Strategy::FaultTolerant, Strategy::Pin, Strategy::PinCache, Strategy::Prefault,
                       Strategy::Pipeline, Strategy::Netvm, Strategy::PinStatic, Strategy::PinDeferred}) {
        cfg.set("rdma.strategy", to_string(x), "test");
        CHECK(strategy_from(cfg) == x);
    }
    CHECK(std::string(to_string(Strategy::PinCache)) == "pin-cache");
    CHECK(std::string(to_string(Strategy::FaultTolerant)) == "fault-tolerant");
}

TEST_CASE("userlib: fault-tolerant and netvm do nothing and cost nothing", "[userlib]") {
    for (const char* name : {"fault-tolerant", "netvm"}) {
        Env e(name);
        const std::uint64_t va = e.mmap(8);
        const RegResult a = e.r().acquire(va, 8 * kPage, true, us(5));
        CHECK(a.ok);
        CHECK(a.done == us(5));
        CHECK_FALSE(e.vm->present(e.pid, va));
        CHECK(e.pins(va, 8) == all(0, 8));
        const RegResult r = e.r().release(va, 8 * kPage, us(7));
        CHECK(r.done == us(7));
        CHECK(e.r().release_all(us(9)).done == us(9));
        CHECK(e.counter("registrations") == 0);
        CHECK(e.counter("deregistrations") == 0);
        CHECK(e.scalar("registration_time") == 0.0);
        CHECK(e.scalar("pinned_bytes_peak") == 0.0);
        CHECK(e.cpu->busy("pin") == T0);
        CHECK(e.cpu->busy("registration") == T0);
        CHECK(e.counter("cache_misses") == 0);
    }
}

TEST_CASE("userlib: pin and pipeline pin for the transfer and unpin after it", "[userlib]") {
    for (const char* name : {"pin", "pipeline"}) {
        Env e(name);
        const std::uint64_t va = e.mmap(16);
        // 3 pages from va + 100 touch 4 pages: all faulted in and pinned.
        const RegResult a = e.r().acquire(va + 100, 3 * kPage, true, us(10));
        REQUIRE(a.ok);
        CHECK(a.done == us(10) + pin_cost(4, 4));
        CHECK(e.pins(va, 5) == std::vector<unsigned>{1, 1, 1, 1, 0});
        CHECK(e.vm->present(e.pid, va + 3 * kPage));
        CHECK_FALSE(e.vm->present(e.pid, va + 4 * kPage));
        CHECK(e.vm->pinned_bytes(e.pid) == 4 * kPage);
        // A second acquire of the same range pins again (no cache): faults already taken.
        const RegResult b = e.r().acquire(va + 100, 3 * kPage, false, us(100));
        CHECK(b.done == us(100) + pin_cost(0, 4) + times(ns(100), 4));   // user-access per present page
        CHECK(e.pins(va, 4) == all(2, 4));
        const RegResult r1 = e.r().release(va + 100, 3 * kPage, us(200));
        REQUIRE(r1.ok);
        CHECK(r1.done == us(200) + unpin_cost(4));
        REQUIRE(e.r().release(va + 100, 3 * kPage, us(300)).ok);
        CHECK(e.pins(va, 4) == all(0, 4));
        CHECK(e.vm->present(e.pid, va));   // unpinned pages stay mapped
        CHECK(e.vm->pinned_bytes(e.pid) == 0);
        CHECK(e.counter("registrations") == 2);
        CHECK(e.counter("deregistrations") == 2);
        // Every pin call's pages, a page pinned twice counted twice.
        CHECK(e.r().pages_pinned() == 8);
        CHECK(e.scalar("pinned_bytes_peak") == 8.0 * kPage);
        CHECK(e.r().pinned_bytes_peak() == 8 * kPage);
        // release_all: nothing to do
        CHECK(e.r().release_all(us(400)).done == us(400));
        const double expect =
            to_us(pin_cost(4, 4)) + to_us(pin_cost(0, 4) + times(ns(100), 4)) + 2 * to_us(unpin_cost(4));
        CHECK(e.scalar("registration_time") == Approx(expect).epsilon(1e-12));
    }
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

TEST_CASE("userlib: pin-cache: a miss pins, a hit costs only the lookup", "[userlib]") {
    Env e("pin-cache");
    const std::uint64_t va = e.mmap(16);
    const RegResult a = e.r().acquire(va, 4 * kPage, true, us(10));
    REQUIRE(a.ok);
    CHECK(a.done == us(10) + kLookup + pin_cost(4, 4));
    CHECK(e.counter("cache_misses") == 1);
    CHECK(e.counter("registrations") == 1);
    CHECK(e.r().cached_pages() == 4);
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
    CHECK(e.r().cached_pages() == 8);
    CHECK(e.r().cache_entries() == 2);
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
    CHECK(e.r().cached_pages() == 8);
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
    CHECK(e.r().cached_pages() == 8);
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

TEST_CASE("userlib: pin-cache never evicts entries in use; the cache may exceed its capacity", "[userlib]") {
    Env e("pin-cache", {{"rdma.pin-cache-pages", "4"}});
    const std::uint64_t va = e.mmap(32);
    const std::uint64_t A = va, B = va + 8 * kPage, C = va + 16 * kPage;
    REQUIRE(e.r().acquire(A, 4 * kPage, true, us(10)).ok);
    const RegResult b = e.r().acquire(B, 4 * kPage, true, us(100));   // A in use: kept
    REQUIRE(b.ok);
    CHECK(b.done == us(100) + kLookup + pin_cost(4, 4));   // no eviction
    CHECK(e.r().cached_pages() == 8);
    CHECK(e.counter("cache_over_capacity") == 1);
    CHECK(e.counter("cache_evictions") == 0);
    CHECK(e.pins(A, 4) == all(1, 4));
    REQUIRE(e.r().release(A, 4 * kPage, us(200)).ok);
    // C: A (unused, LRU) goes; B is in use, so the cache stays over.
    REQUIRE(e.r().acquire(C, 4 * kPage, true, us(300)).ok);
    CHECK(e.pins(A, 4) == all(0, 4));
    CHECK(e.pins(B, 4) == all(1, 4));
    CHECK(e.pins(C, 4) == all(1, 4));
    CHECK(e.r().cached_pages() == 8);
    CHECK(e.counter("cache_evictions") == 1);
    CHECK(e.counter("cache_over_capacity") == 2);
    // One entry bigger than the whole cache: pinned all the same.
    REQUIRE(e.r().release(B, 4 * kPage, us(400)).ok);
    REQUIRE(e.r().release(C, 4 * kPage, us(410)).ok);
    REQUIRE(e.r().acquire(va + 24 * kPage, 8 * kPage, true, us(500)).ok);
    CHECK(e.r().cached_pages() == 8);   // B and C evicted, the new entry alone
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
    CHECK(e.r().cache_entries() == 2);
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
    CHECK(e.r().cached_pages() == 8);
    const std::uint64_t free0 = e.vm->free_bytes();
    const VmResult u = e.vm->munmap(e.pid, m1, 4 * kPage, us(400));
    REQUIRE(u.ok());
    CHECK(u.done == us(400) + ns(500) + times(ns(20), 4) + us(3));   // the registrar's notifier takes no time
    REQUIRE(driver_calls.size() == 1);
    CHECK(e.counter("cache_invalidations") == 1);
    CHECK(e.r().cached_pages() == 4);
    CHECK(e.r().cache_entries() == 1);
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
    CHECK(e.r().cache_entries() == 1);
    // Another process's change does not touch this cache.
    CHECK(e.r().invalidate(e.pid + 1, 2, m2, 4 * kPage, us(900)) == us(900));
    CHECK(e.r().cache_entries() == 1);
}

TEST_CASE("userlib: an entry dropped while in use keeps its pins until its release", "[userlib]") {
    Env e("pin-cache");
    const std::uint64_t m0 = e.mmap(4);
    const std::uint64_t m1 = e.mmap(4);
    REQUIRE(e.r().acquire(m1, 4 * kPage, true, us(10)).ok);   // in use by the engine
    REQUIRE(e.vm->munmap(e.pid, m1, 4 * kPage, us(100)).ok());
    CHECK(e.r().cache_entries() == 0);
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
    CHECK(e.r().cached_pages() == 0);
    CHECK(e.r().cache_entries() == 0);
    CHECK(e.counter("deregistrations") == 3);
    CHECK(e.scalar("pinned_bytes_peak") == 14.0 * kPage);
    // After it, the cache starts empty.
    CHECK(e.r().acquire(va, 4 * kPage, true, us(2000)).done == us(2000) + kLookup + pin_cost(0, 4) + times(ns(100), 4));
    CHECK(e.counter("cache_misses") == 4);
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

TEST_CASE("userlib: pin-static pins a buffer whole at alloc; messages cost nothing; release_all unpins", "[userlib]") {
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
