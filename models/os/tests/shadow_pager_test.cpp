// The OS side of NetVM's NI (ShadowPager) over a Vm: every leaf made
// present is written into the shadow table and every unmapped or swapped
// page cleared, each entry charged ni.shadow-update on the cores; reclaim,
// compaction and khugepaged skip a page the NI holds locked, at the Vm's
// own time. Plain objects: no sc_start (the pager's miss thread never runs).
#include <catch2/catch.hpp>

#include <memory>
#include <string>

#include <systemc>

#include "debug_memory.hpp"
#include "model_env.hpp"
#include "models/common/shadow_table.hpp"
#include "models/os/shadow_pager.hpp"
#include "models/os/smmu_driver.hpp"
#include "models/os/vm.hpp"

using namespace vrdmasim;
using sc_core::sc_time;

namespace {

constexpr std::uint64_t KiB = 1024, MiB = 1024 * KiB;
const sc_time T0 = sc_core::SC_ZERO_TIME;

const vrdmasim_test::ParamDecls kParams = {CpuCores::declare_params,     Vm::declare_params,
                                           Ssd::declare_params,          SmmuDriver::declare_params,
                                           FaultLibrary::declare_params, ShadowPager::declare_params};

struct Env : vrdmasim_test::ModelEnv {
    vrdmasim_test::DebugMemory mem;
    FrameAllocator frames;
    std::unique_ptr<CpuCores> cpu;
    std::unique_ptr<Vm> vm;
    std::unique_ptr<Ssd> ssd;
    ShadowTable table;
    std::unique_ptr<ShadowPager> pager;
    int pid = 0;
    Env() : ModelEnv(kParams, {{"ni.shadow-update", "250ns"}, {"vm.thp", "never"}}), frames(0, 64 * MiB) {
        cpu = std::make_unique<CpuCores>(ctx, "node0.cpu", "node0");
        vm = std::make_unique<Vm>(ctx, "node0.vm", "node0", mem, frames, *cpu);
        ssd = std::make_unique<Ssd>(ctx, "node0.ssd", "node0");
        vm->set_swap(*ssd);
        pager = std::make_unique<ShadowPager>("shadow_pager", ctx, "node0", *vm, *cpu, table);
        pid = vm->create_process("app");
    }
};

}   // namespace

TEST_CASE(
    "shadow pager: a populated mapping's pages are written into the table, charged per entry, and munmap "
    "clears them",
    "[shadow][os]") {
    Env e;
    const VmResult m = e.vm->mmap(e.pid, 16 * KiB, Prot::ReadWrite, true, T0);
    REQUIRE(m.ok());
    const std::uint64_t va = m.value;
    CHECK(e.counter("node0.ni.shadow_installs") == 4);
    CHECK(e.counter("node0.ni.shadow_updates") == 4);
    CHECK(e.scalar("node0.cpu.ni-shadow-update.busy_time") == Approx(1.0));   // 4 x 250 ns
    for (std::uint64_t a = va; a < va + 16 * KiB; a += 4096) {
        std::uint64_t pa = 0;
        REQUIRE(e.vm->translate(e.pid, a, pa));
        const ShadowTable::Entry* x = e.table.lookup(e.pid, a, m.done);
        REQUIRE(x);
        CHECK(x->pa == pa);
        CHECK(x->writable);
        // The entries are valid once the mmap's work (and their writes) is done.
        CHECK(x->from <= m.done);
    }
    const VmResult u = e.vm->munmap(e.pid, va, 16 * KiB, m.done);
    REQUIRE(u.ok());
    CHECK(e.counter("node0.ni.shadow_removals") == 4);
    CHECK(e.counter("node0.ni.shadow_updates") == 8);
    CHECK(e.table.entries() == 0);
    CHECK(e.scalar("node0.ni.shadow_update_time") == Approx(2.0));
}

TEST_CASE("shadow pager: reclaim skips the page the NI holds locked at the reclaim's time", "[shadow][os]") {
    Env e;
    const VmResult m = e.vm->mmap(e.pid, 64 * KiB, Prot::ReadWrite, true, T0);
    REQUIRE(m.ok());
    const std::uint64_t va = m.value;
    const sc_time t = m.done + sc_time(1, sc_core::SC_MS);
    // The NI accesses the first page over [t, t + 1 s): locked for any reclaim then.
    e.table.lock(e.pid, va, t, t + sc_time(1, sc_core::SC_SEC));
    // A lock that ended before the reclaim runs does not protect the second page.
    e.table.lock(e.pid, va + 4096, T0, m.done);
    const VmResult r = e.vm->reclaim(e.vm->free_bytes() + 64 * MiB, t);   // more than there is
    CHECK(r.value > 0);
    CHECK(e.counter("node0.vm.reclaim_skipped_locked") > 0);
    CHECK(e.vm->present(e.pid, va));
    CHECK(e.vm->swapped(e.pid, va + 4096));
    // The swapped pages' entries are gone from the table; the locked one's stays.
    CHECK(e.table.lookup(e.pid, va + 4096, r.done) == nullptr);
    CHECK(e.table.lookup(e.pid, va, r.done) != nullptr);
    // A fault brings the page back and writes its entry again.
    const std::uint64_t before = e.counter("node0.ni.shadow_installs");
    const VmResult f = e.vm->fault_in(e.pid, va + 4096, 4096, true, r.done);
    REQUIRE(f.ok());
    // The swap-in maps the page (and the notifier installs its entry) when
    // its read completes (models/os/inflight.hpp).
    CHECK(e.counter("node0.ni.shadow_installs") == before);
    e.vm->complete_io(f.done);
    CHECK(e.counter("node0.ni.shadow_installs") == before + 1);
    CHECK(e.table.lookup(e.pid, va + 4096, f.done) != nullptr);
}

TEST_CASE("shadow pager: without the pager's lock check a run keeps its statistics (no lock counters)",
          "[shadow][os]") {
    vrdmasim_test::ModelEnv env({CpuCores::declare_params, Vm::declare_params, Ssd::declare_params});
    vrdmasim_test::DebugMemory mem;
    FrameAllocator frames(0, 64 * MiB);
    CpuCores cpu(env.ctx, "node0.cpu", "node0");
    Vm vm(env.ctx, "node0.vm", "node0", mem, frames, cpu);
    CHECK(env.stats.find_counter("node0.vm.reclaim_skipped_locked") == nullptr);
    const int pid = vm.create_process("app");
    REQUIRE(vm.mmap(pid, 16 * KiB, Prot::ReadWrite, true, T0).ok());   // no map notifier: nothing pending
}

TEST_CASE(
    "shadow pager: a miss writes the entries of every page its touch-ahead made accessed again, not only the "
    "missed one",
    "[shadow][os]") {
    // Reclaim's second chance clears the access flag of a page that stays
    // mapped and clears its entry (the NI's table has no access flag). A
    // miss on the first page of such a range touches fault-lib.ahead-pages
    // (16) pages: all of them present again with their access flags set, so
    // all of them need their entries back, or the NI misses once per page.
    Env e;   // fault-lib.policy = touch-ahead, ahead-pages = 16 (defaults)
    const VmResult m = e.vm->mmap(e.pid, 64 * KiB, Prot::ReadWrite, true, T0);
    REQUIRE(m.ok());
    const std::uint64_t va = m.value;
    // One page short: the clock's first lap clears every access flag (and
    // entry), its second lap swaps out the first page only.
    const VmResult r = e.vm->reclaim(e.vm->free_bytes() + 4096, m.done);
    REQUIRE(r.value == 1);
    REQUIRE(e.vm->swapped(e.pid, va));
    for (std::uint64_t a = va + 4096; a < va + 64 * KiB; a += 4096) {
        REQUIRE(e.vm->present(e.pid, a));
        REQUIRE(e.table.lookup(e.pid, a, r.done) == nullptr);
    }
    bool ok = false;
    const sc_time done = e.pager->resolve(e.pid, va, false, r.done, ok);
    REQUIRE(ok);
    e.vm->complete_io(done);   // the swap-in's PTE is written at its read's completion
    CHECK(e.counter("node0.vm.swap_ins") == 1);   // the missed page came back from swap
    CHECK(e.counter("node0.vm.faults_af") == 15);   // the others were only marked accessed
    for (std::uint64_t a = va; a < va + 64 * KiB; a += 4096) {
        std::uint64_t pa = 0;
        REQUIRE(e.vm->translate(e.pid, a, pa));
        const ShadowTable::Entry* x = e.table.lookup(e.pid, a, done);
        REQUIRE(x);
        CHECK(x->pa == pa);
    }
    CHECK(e.counter("node0.ni.shadow_refills") == 15);
}
