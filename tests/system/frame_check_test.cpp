// The ownership check of the physical-address experiment (src/sim/frame_check.hpp)
// on its own: judge_frame and FrameCheck::inspect against frames whose owner
// the test arranges in a node's Vm. The kernel model has no page cache, so
// no frame is ever the page cache's; the kernel's own frames (page tables,
// memory below the page allocator) stand for the kernel's side.
#include <catch2/catch.hpp>

#include <memory>

#include "src/sim/system.hpp"
#include "system_sim.hpp"

using namespace vrdmasim;
using namespace sc_core;

namespace {

const Settings kPhysical{{"smmu.enabled", "false"},
                         {"rdma.strategy", "prefault"},
                         {"workload.total-bytes", "64KiB"},
                         {"workload.message-size", "64KiB"},
                         {"vm.thp", "never"}};

}   // namespace

TEST_CASE("ownership check: own page - another process - another own page - kernel - free", "[physical]") {
    SystemSim s(kPhysical);
    sc_start(1, SC_US);   // boot: the processes exist, their streams are known
    Node& n = s.sys->node(0);
    Vm& vm = n.vm;
    const int app = n.app.pid();
    REQUIRE(app > 0);
    REQUIRE(n.frame_check != nullptr);
    const sc_time t = sc_time_stamp();
    // Two pages of the application and one of another process.
    const VmResult mine = vm.mmap(app, 8192, Prot::ReadWrite, true, t);
    REQUIRE(mine.ok());
    const int other = vm.create_process("other");
    const VmResult theirs = vm.mmap(other, 4096, Prot::ReadWrite, true, t);
    REQUIRE(theirs.ok());
    std::uint64_t pa0 = 0, pa1 = 0, pa_other = 0;
    REQUIRE(vm.translate(app, mine.value, pa0));
    REQUIRE(vm.translate(app, mine.value + 4096, pa1));
    REQUIRE(vm.translate(other, theirs.value, pa_other));
    PhysicalKeys keys;
    keys.handed(0, app, mine.value, pa0);

    // The page handed, still mapped there: own.
    FrameVerdict v = judge_frame(vm, keys, 0, app, pa0 + 100);
    CHECK(v.use == FrameUse::Own);
    // Another process's frame.
    v = judge_frame(vm, keys, 0, app, pa_other);
    CHECK(v.use == FrameUse::OtherProcess);
    CHECK(v.now.pid == other);
    CHECK(v.now.va == theirs.value);
    // The same process's other page, never handed for it.
    v = judge_frame(vm, keys, 0, app, pa1);
    CHECK(v.use == FrameUse::OwnOtherPage);
    // Handed for the page, which now lives elsewhere: the frame was freed.
    const VmResult gone = vm.munmap(other, theirs.value, 4096, t);
    REQUIRE(gone.ok());
    keys.handed(0, app, 0x7000000000ull, pa_other);   // as if once handed for a page of app
    v = judge_frame(vm, keys, 0, app, pa_other);
    CHECK(v.use == FrameUse::Free);
    CHECK(v.handed);
    CHECK(vm.frame_owner(pa_other).kind == FrameOwner::Kind::Free);
    // The kernel: a page table of the process, and memory below the page allocator.
    v = judge_frame(vm, keys, 0, app, vm.root(app));
    CHECK(v.use == FrameUse::Kernel);
    v = judge_frame(vm, keys, 0, app, 0x1000);
    CHECK(v.use == FrameUse::Kernel);

    // FrameCheck counts what it finds, by kind and bytes, for the stream of process 0.
    FrameCheck& fc = *n.frame_check;
    const std::uint32_t sid = n.stream_of(0);
    CHECK(fc.inspect(true, pa1, 4096, sid, t) == 1);   // another own page
    CHECK(fc.inspect(true, pa_other + 4000, 96, sid, t) == 1);   // the last 96 B of a free frame
    CHECK(fc.inspect(false, pa_other, 64, sid, t) == 1);   // a stale source read of a free frame
    CHECK(s.counter("node0.frame_check.foreign_writes") == 2);
    CHECK(s.counter("node0.frame_check.foreign_write_bytes.own_other_page") == 4096);
    CHECK(s.counter("node0.frame_check.foreign_write_bytes.free") == 96);
    CHECK(s.counter("node0.frame_check.stale_reads") == 1);
    CHECK(s.counter("node0.frame_check.stale_read_bytes.free") == 64);
    // An access for a stream no process owns is a simulator bug, not a finding.
    CHECK_THROWS_AS(fc.inspect(true, pa0, 8, sid + 7, t), std::logic_error);
}
