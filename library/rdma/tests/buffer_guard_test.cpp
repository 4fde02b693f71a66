// BufferGuard and Vm::guard_user over a real Vm (page tables in a sparse
// fake DRAM, as strategy/tests/strategy_env.hpp): the AP bits each guard writes, what the
// CPU (EL0) may do, leaves made later in a guarded range, THP blocks split,
// the cost of an install, the bookkeeping of records and pages.
#include <catch2/catch.hpp>

#include <memory>
#include <string>

#include <systemc>

#include "debug_memory.hpp"
#include "model_env.hpp"
#include "models/os/vm.hpp"
#include "library/rdma/buffer_guard.hpp"
#include "library/rdma/registrar.hpp"
#include "library/rdma/process.hpp"

using namespace vrdmasim;
using sc_core::sc_time;

namespace {

sc_time ns(double v) { return sc_time::from_value(static_cast<sc_dt::uint64>(v * 1e3 + 0.5)); }
const sc_time T0 = sc_core::SC_ZERO_TIME;
constexpr std::uint64_t MiB = 1024 * 1024, kPage = 4096;

const vrdmasim_test::ParamDecls kParams = {CpuCores::declare_params, Vm::declare_params, Ssd::declare_params,
                                           RdmaParams::declare_params};

struct Env : vrdmasim_test::ModelEnv {
    vrdmasim_test::DebugMemory mem;
    FrameAllocator frames;
    std::unique_ptr<CpuCores> cpu;
    std::unique_ptr<Vm> vm;
    std::unique_ptr<BufferGuard> guard;
    int pid = 0;
    explicit Env(const vrdmasim_test::Settings& s = {})
        : ModelEnv(kParams, {{"vm.syscall", "500ns"},
                             {"vm.pte-update", "20ns"},
                             {"vm.thp", "never"},
                             {"rdma.buffer-guard", "mprotect"},
                             {"rdma.guard-tlbi-page", "10ns"}}),
          frames(0, 64 * MiB) {
        set(s);
        cpu = std::make_unique<CpuCores>(ctx, "node0.cpu", "node0");
        vm = std::make_unique<Vm>(ctx, "node0.vm", "node0", mem, frames, *cpu);
        pid = vm->create_process("app");
        guard = std::make_unique<BufferGuard>(ctx, "node0.rdma.guard", *vm, pid);
    }
    std::uint64_t mmap(std::uint64_t bytes, bool populate) {
        const VmResult m = vm->mmap(pid, bytes, Prot::ReadWrite, populate, T0);
        REQUIRE(m.ok());
        return m.value;
    }
};

}   // namespace

TEST_CASE("buffer guard: parameters", "[userlib][guard]") {
    Env e;
    CHECK(buffer_guard_on(e.cfg));
    const ParamDecl* p = e.cfg.registry().find("rdma.buffer-guard");
    REQUIRE(p);
    CHECK(p->default_text == "none");
    CHECK(p->choices == std::vector<std::string>{"none", "mprotect"});
    CHECK_THROWS_AS(e.cfg.set("rdma.buffer-guard", "mlock", "test"), ConfigError);
}

TEST_CASE("buffer guard: sources and destinations are no access for EL0, the engine keeps both, lifting restores",
          "[userlib][guard]") {
    Env e;
    const std::uint64_t src = e.mmap(4 * kPage, true), dst = e.mmap(4 * kPage, true);
    for (std::uint64_t a : {src, dst}) {
        CHECK(e.vm->user_permits(e.pid, a, false));
        CHECK(e.vm->user_permits(e.pid, a, true));
    }
    sc_time done;
    const std::uint64_t gs = e.guard->install(src + 100, 3 * kPage, false, {0x1000}, T0, done);
    // syscall + 4 PTEs (the range widened to whole pages: 100 .. 3 pages + 100) + 4 TLBIs
    CHECK(done == ns(500) + ns(4 * 20) + ns(4 * 10));
    for (unsigned i = 0; i < 4; ++i) {
        CHECK_FALSE(e.vm->user_permits(e.pid, src + i * kPage, false));
        CHECK_FALSE(e.vm->user_permits(e.pid, src + i * kPage, true));
    }
    const std::uint64_t gd = e.guard->install(dst, kPage, true, {0x2000, 0x2020}, done, done);
    CHECK_FALSE(e.vm->user_permits(e.pid, dst, false));
    CHECK_FALSE(e.vm->user_permits(e.pid, dst, true));
    CHECK(e.vm->user_permits(e.pid, dst + kPage, true));   // the next page is not guarded
    // The engine's (privileged) access is untouched: the leaves stay
    // present and writable at EL1 (AP[2] clear), a source's as a
    // destination's: ARMv8 has no EL0-read-only mapping that EL1 may write,
    // and an engine write into another buffer on a source's page must not
    // fault.
    VmLeaf l;
    REQUIRE(e.vm->present_leaf(e.pid, dst, l));
    CHECK(l.writable);
    REQUIRE(e.vm->present_leaf(e.pid, src, l));
    CHECK(l.writable);
    CHECK(e.guard->covering(src + 3 * kPage + 5) != nullptr);
    CHECK(e.guard->covering(src + 4 * kPage) == nullptr);
    // A second buffer in flight on a guarded page: no mprotect, and the page
    // stays guarded until both are lifted.
    const std::uint64_t before = e.counter("node0.rdma.guard.mprotects");
    sc_time shared_done;
    const std::uint64_t g2 = e.guard->install(dst + 8, 8, false, {0x3000}, done, shared_done);
    CHECK(shared_done == done);
    CHECK(e.counter("node0.rdma.guard.mprotects") == before);
    e.guard->lift(gd, done);
    CHECK_FALSE(e.vm->user_permits(e.pid, dst, true));
    CHECK(e.guard->covering(dst) == e.guard->find(g2));
    e.guard->lift(g2, done);
    CHECK(e.vm->user_permits(e.pid, dst, true));
    // Records: the guard is due for lifting once all of its records are seen.
    CHECK(e.guard->record_seen(0x9999) == 0);
    CHECK(e.guard->record_seen(0x1000) == gs);
    e.guard->lift(gs, done);
    for (std::uint64_t a : {src, dst}) {
        CHECK(e.vm->user_permits(e.pid, a, false));
        CHECK(e.vm->user_permits(e.pid, a, true));
    }
    CHECK(e.guard->active() == 0);
    CHECK(e.guard->installed() == 3);
    CHECK(e.guard->lifted() == 3);
    CHECK(e.counter("node0.rdma.guard.mprotects") == 4);   // two installs and two lifts made calls
    CHECK(e.counter("node0.vm.mprotects") == 4);
    CHECK_THROWS_AS(e.guard->lift(gs, done), std::logic_error);
}

TEST_CASE("buffer guard: pages faulted in later in a guarded range get the guard and absent pages still fault",
          "[userlib][guard]") {
    Env e;
    const std::uint64_t dst = e.mmap(4 * kPage, false);   // cold
    sc_time done;
    const std::uint64_t g = e.guard->install(dst, 4 * kPage, true, {}, T0, done);
    CHECK_FALSE(e.vm->present(e.pid, dst));   // nothing made present: the SMMU still faults on it
    // The fault library's get_user_pages (the SMMU's fault path) brings
    // two pages in: they come guarded.
    REQUIRE(e.vm->fault_in(e.pid, dst, 2 * kPage, true, done).ok());
    CHECK(e.vm->present(e.pid, dst));
    CHECK_FALSE(e.vm->user_permits(e.pid, dst, false));
    CHECK_FALSE(e.vm->user_permits(e.pid, dst + kPage, true));
    VmLeaf l;
    REQUIRE(e.vm->present_leaf(e.pid, dst, l));
    CHECK(l.writable);   // EL1 read/write: the privileged engine writes
    e.guard->lift(g, done);
    CHECK(e.vm->user_permits(e.pid, dst + kPage, true));
    // A page faulted in after the lift is an ordinary one.
    REQUIRE(e.vm->fault_in(e.pid, dst + 3 * kPage, kPage, true, done).ok());
    CHECK(e.vm->user_permits(e.pid, dst + 3 * kPage, true));
}

TEST_CASE("buffer guard: a huge page partly guarded is split and a whole one keeps its block", "[userlib][guard]") {
    Env e(vrdmasim_test::Settings{{"vm.thp", "always"}});
    const std::uint64_t buf = e.mmap(4 * MiB, true);   // 2 MiB aligned: two blocks
    VmLeaf l;
    REQUIRE(e.vm->present_leaf(e.pid, buf, l));
    REQUIRE(l.size == 2 * MiB);
    sc_time done;
    const std::uint64_t part = e.guard->install(buf + 64 * 1024, 64 * 1024, false, {}, T0, done);
    REQUIRE(e.vm->present_leaf(e.pid, buf + 64 * 1024, l));
    CHECK(l.size == kPage);   // split
    CHECK(e.vm->user_permits(e.pid, buf, true));
    CHECK_FALSE(e.vm->user_permits(e.pid, buf + 64 * 1024, true));
    CHECK(e.vm->user_permits(e.pid, buf + 128 * 1024, true));
    const std::uint64_t whole = e.guard->install(buf + 2 * MiB, 2 * MiB, true, {}, done, done);
    REQUIRE(e.vm->present_leaf(e.pid, buf + 2 * MiB, l));
    CHECK(l.size == 2 * MiB);
    CHECK_FALSE(e.vm->user_permits(e.pid, buf + 3 * MiB, false));
    e.guard->lift(part, done);
    e.guard->lift(whole, done);
    CHECK(e.vm->user_permits(e.pid, buf + 64 * 1024, true));
    CHECK(e.vm->user_permits(e.pid, buf + 3 * MiB, true));
}
