// Prefetcher over a real Vm (page tables in a sparse fake DRAM, as
// buffer_guard_test.cpp): a page is advised once, overlapping advice queues
// only the gaps, the worker populates in order a batch at a time, at the
// cost of the Vm's MADV_POPULATE_WRITE, and counts only the pages it made
// present; a refused batch is counted and dropped.
#include <catch2/catch.hpp>

#include <memory>
#include <string>

#include <systemc>

#include "debug_memory.hpp"
#include "model_env.hpp"
#include "models/os/vm.hpp"
#include "library/rdma/prefetch.hpp"

using namespace vrdmasim;
using sc_core::sc_time;

namespace {

const sc_time T0 = sc_core::SC_ZERO_TIME;
constexpr std::uint64_t MiB = 1024 * 1024, kPage = 4096;

const vrdmasim_test::ParamDecls kParams = {CpuCores::declare_params, Vm::declare_params, Ssd::declare_params,
                                           RdmaParams::declare_params};

struct Env : vrdmasim_test::ModelEnv {
    vrdmasim_test::DebugMemory mem;
    FrameAllocator frames;
    std::unique_ptr<CpuCores> cpu;
    std::unique_ptr<Vm> vm;
    std::unique_ptr<Prefetcher> pf;
    int pid = 0;
    explicit Env(const vrdmasim_test::Settings& s = {})
        : ModelEnv(kParams, {{"vm.thp", "never"}, {"rdma.prefetch", "advise"}}), frames(0, 64 * MiB) {
        set(s);
        cpu = std::make_unique<CpuCores>(ctx, "node0.cpu", "node0");
        vm = std::make_unique<Vm>(ctx, "node0.vm", "node0", mem, frames, *cpu);
        pid = vm->create_process("app");
        pf = std::make_unique<Prefetcher>(ctx, "node0.rdma.prefetch", *vm, pid);
    }
    std::uint64_t mmap(std::uint64_t bytes) {
        const VmResult m = vm->mmap(pid, bytes, Prot::ReadWrite, false, T0);
        REQUIRE(m.ok());
        return m.value;
    }
    // Run the worker until its queue is empty; returns when it finished.
    sc_time drain(sc_time at) {
        while (pf->pending()) at = pf->step(at);
        return at;
    }
    unsigned present(std::uint64_t va, unsigned pages) {
        unsigned n = 0;
        for (unsigned i = 0; i < pages; ++i) n += vm->present(pid, va + i * kPage);
        return n;
    }
};

}   // namespace

TEST_CASE("prefetch: parameters and the default", "[userlib][prefetch]") {
    Env e;
    CHECK(prefetch_on(e.cfg));
    const ParamDecl* p = e.cfg.registry().find("rdma.prefetch");
    REQUIRE(p);
    CHECK(p->default_text == "none");
    CHECK(e.pf->distance() == 256 * 1024);
    CHECK_THROWS_AS(e.cfg.set("rdma.prefetch", "sync", "test"), ConfigError);
}

TEST_CASE("prefetch: a page is advised once and overlapping advice queues only the gaps", "[userlib][prefetch]") {
    Env e;
    const std::uint64_t a = e.mmap(64 * kPage);
    CHECK(e.pf->advise(a + 100, 2 * kPage) == 3);   // pages 0..2 (the range widened to whole pages)
    CHECK(e.pf->advise(a + 8 * kPage, 4 * kPage) == 4);   // pages 8..11
    CHECK(e.pf->advise(a, 16 * kPage) == 16 - 3 - 4);   // the gaps 3..7 and 12..15
    CHECK(e.pf->advise(a + kPage, 10 * kPage) == 0);   // all advised
    CHECK(e.pf->advise(a + 15 * kPage, 2 * kPage) == 1);   // page 16
    CHECK(e.pf->advise(a, 0) == 0);
    CHECK(e.pf->advised_pages() == 17);
    CHECK(e.stats.find_counter("node0.rdma.prefetch.advices")->value() == 4);
    CHECK(e.present(a, 17) == 0);   // asynchronous: nothing until the worker runs
}

TEST_CASE("prefetch: the worker populates in order a batch at a time and counts what it made present",
          "[userlib][prefetch]") {
    Env e;
    const std::uint64_t a = e.mmap(64 * kPage);
    // Page 20 made present by someone else first (an engine fault, a touch).
    REQUIRE(e.vm->madvise(e.pid, a + 20 * kPage, kPage, Advice::PopulateWrite, T0).ok());
    REQUIRE(e.pf->advise(a, 40 * kPage) == 40);
    // First batch: pages 0..15 only, at the cost of one MADV_POPULATE_WRITE of them.
    Env ref;
    const std::uint64_t b = ref.mmap(64 * kPage);
    const sc_time one = ref.vm->madvise(ref.pid, b, Prefetcher::kBatchPages * kPage, Advice::PopulateWrite, T0).done;
    const sc_time t1 = e.pf->step(T0);
    CHECK(t1 == one);
    CHECK(e.present(a, 16) == 16);
    CHECK(e.present(a + 16 * kPage, 24) == 1);   // only page 20, not the worker's yet
    e.drain(t1);
    CHECK(e.present(a, 40) == 40);
    CHECK(e.present(a + 40 * kPage, 24) == 0);   // nothing beyond the advice
    CHECK(e.pf->populated_pages() == 39);   // page 20 was present already
    CHECK(e.stats.find_scalar("node0.rdma.prefetch.worker_time")->value() > 0);
}

TEST_CASE("prefetch: a batch the Vm refuses is counted and dropped", "[userlib][prefetch]") {
    Env e;
    const std::uint64_t a = e.mmap(4 * kPage);
    REQUIRE(e.vm->munmap(e.pid, a, 4 * kPage, T0).ok());   // advised, then unmapped before the worker ran
    REQUIRE(e.pf->advise(a, 4 * kPage) == 4);
    e.drain(T0);
    CHECK_FALSE(e.pf->pending());
    CHECK(e.pf->populated_pages() == 0);
    CHECK(e.stats.find_counter("node0.rdma.prefetch.failed_batches")->value() == 1);
}
