// What the registration strategies' tests share: a Registrar over a real Vm
// (page tables in a sparse fake DRAM, as in models/os/tests/vm_test.cpp)
// under the strategy a test names. Plain objects: no elaboration, no
// sc_start. Costs are set to round numbers so that every time in the tests
// is an exact sum.
#pragma once

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
#include "library/rdma/params.hpp"
#include "library/rdma/registrar.hpp"

namespace vrdmasim_test {

using namespace vrdmasim;
using sc_core::sc_time;

inline sc_time us(double v) { return sc_time::from_value(static_cast<sc_dt::uint64>(v * 1e6 + 0.5)); }
inline sc_time ns(double v) { return sc_time::from_value(static_cast<sc_dt::uint64>(v * 1e3 + 0.5)); }
inline sc_time times(sc_time t, unsigned n) { return sc_time::from_value(t.value() * n); }
const sc_time T0 = sc_core::SC_ZERO_TIME;
constexpr std::uint64_t KiB = 1024, MiB = 1024 * KiB, kPage = 4096;

using FakeMemory = vrdmasim_test::DebugMemory;

const vrdmasim_test::ParamDecls kParams = {CpuCores::declare_params, Vm::declare_params, Ssd::declare_params,
                                           RdmaParams::declare_params};

inline ParamRegistry params() { return vrdmasim_test::params_of(kParams); }

// Exact, simple costs (as vm_test.cpp): a 4 KiB fault is 3.02 us, a pin call
// 20 us + 0.5 us per page, an unpin call the same without faults.
const Settings kCosts = {
    {"vm.minor-fault", "2us"},         {"vm.zero-fill-page", "1us"}, {"vm.huge-zero-fill", "500us"},
    {"vm.syscall", "500ns"},           {"vm.pte-update", "20ns"},    {"vm.pin-call", "20us"},
    {"vm.pin-page", "500ns"},          {"vm.user-access", "100ns"},  {"vm.thp", "never"},
    {"rdma.pin-cache-lookup", "100ns"}};
const sc_time kFault = us(2) + us(1) + ns(20);
const sc_time kLookup = ns(100);
inline sc_time pin_cost(unsigned faulted, unsigned pages) {
    return us(20) + times(kFault, faulted) + times(ns(500), pages);
}
inline sc_time unpin_cost(unsigned pages) { return us(20) + times(ns(500), pages); }

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
    // The strategy's hooks, as the class a test knows them by.
    template <class S>
    const S& as() const {
        return dynamic_cast<const S&>(reg_->strategy());
    }
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

inline std::vector<unsigned> all(unsigned n, unsigned pages) { return std::vector<unsigned>(pages, n); }

// A strategy that registers nothing (fault-tolerant, netvm): every call
// is done at once, nothing is faulted in, pinned or counted.
inline void check_registers_nothing(const char* name) {
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

// A pin per call (pin, pipeline): each acquire pins its pages (faulting
// them in), each release unpins them; nothing is cached.
inline void check_pin_per_call(const char* name) {
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
    const double expect = to_us(pin_cost(4, 4)) + to_us(pin_cost(0, 4) + times(ns(100), 4)) + 2 * to_us(unpin_cost(4));
    CHECK(e.scalar("registration_time") == Approx(expect).epsilon(1e-12));
}

}   // namespace vrdmasim_test
