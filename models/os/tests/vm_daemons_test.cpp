// VmDaemons: kswapd, khugepaged and kcompactd as SC_THREADs over a Vm whose
// work runs on CpuCores; they run at their intervals and end on stop(), so
// sc_start() returns by starvation. One elaboration per case.
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
#include "models/os/vm_daemons.hpp"

using namespace vrdmasim;
using sc_core::sc_time;

namespace {

constexpr std::uint64_t MiB = 1024 * 1024, P = 4096;
sc_time ms(double v) { return sc_time(v, sc_core::SC_MS); }

using PageMemory = vrdmasim_test::DebugMemory;

// The workload: runs `body` in an SC_THREAD.
struct Program : sc_core::sc_module {
    std::function<void()> body;
    explicit Program(sc_core::sc_module_name n) : sc_module(n) {
        SC_HAS_PROCESS(Program);
        SC_THREAD(run);
    }
    void run() { body(); }
};

struct Bench : vrdmasim_test::ModelEnv {
    PageMemory mem;
    FrameAllocator frames{0, 16 * MiB};
    std::unique_ptr<CpuCores> cpu;
    std::unique_ptr<Ssd> ssd;
    std::unique_ptr<Vm> vm;
    std::unique_ptr<VmDaemons> daemons;
    Program program{"program"};
    explicit Bench(const vrdmasim_test::Settings& settings)
        : ModelEnv({CpuCores::declare_params, Vm::declare_params, Ssd::declare_params}, {}, settings) {
        cpu = std::make_unique<CpuCores>(ctx, "node0.cpu", "node0");
        ssd = std::make_unique<Ssd>(ctx, "node0.ssd", "node0");
        vm = std::make_unique<Vm>(ctx, "node0.vm", "node0", mem, frames, *cpu);
        vm->set_swap(*ssd);
        daemons = std::make_unique<VmDaemons>("vmd", ctx, "node0.vmd", *vm);
    }
    std::uint64_t counter(const std::string& n) const {
        const Counter* c = stats.find_counter(n);
        return c ? c->value() : ~0ull;
    }
};

}   // namespace

TEST_CASE("vm daemons: kswapd, khugepaged and kcompactd run at their intervals on CpuCores and stop",
          "[os][vm-daemons]") {
    Bench b({{"vm.thp", "madvise"},
             {"vm.low-watermark", "4MiB"},
             {"vm.high-watermark", "6MiB"},
             {"vm.kswapd-interval", "1ms"},
             {"khugepaged.scan-sleep", "10ms"},
             {"khugepaged.alloc-sleep", "60ms"},
             {"vm.compact-interval", "5ms"},
             {"vm.compact-pages", "16"}});
    bool woke_at_once = false, idle_seen = false;
    std::uint64_t free_after_kswapd = 0;
    sc_time faulted_at;
    b.program.body = [&] {
        const int pid = b.vm->create_process("app");
        // A range for khugepaged: one 4 KiB page, then MADV_HUGEPAGE.
        const auto h = b.vm->mmap(pid, 2 * MiB, Prot::ReadWrite, false, sc_core::sc_time_stamp());
        const unsigned char x = 'h';
        b.vm->write_user(pid, h.value, &x, 1);
        b.vm->madvise(pid, h.value, 2 * MiB, Advice::HugePage, sc_core::sc_time_stamp());
        // 12 MiB of 4 KiB pages in 16 MiB: free memory falls below the low
        // watermark inside the call, which wakes kswapd.
        const auto m = b.vm->mmap(pid, 12 * MiB, Prot::ReadWrite, false, sc_core::sc_time_stamp());
        b.vm->madvise(pid, m.value, 12 * MiB, Advice::NoHugePage, sc_core::sc_time_stamp());
        const auto r = b.vm->fault_in(pid, m.value, 12 * MiB, true, sc_core::sc_time_stamp());
        REQUIRE(r.ok());
        REQUIRE(b.vm->free_bytes() < b.vm->low_watermark());
        wait(sc_core::SC_ZERO_TIME);   // kswapd woke in this delta, not at its next poll
        wait(sc_core::SC_ZERO_TIME);
        free_after_kswapd = b.vm->free_bytes();
        woke_at_once = b.counter("node0.vmd.kswapd_runs") == 1;
        faulted_at = r.done;
        wait(ms(25) - sc_core::sc_time_stamp());
        b.daemons->stop();
        wait(b.daemons->idle());
        idle_seen = true;
    };
    sc_core::sc_start();   // returns by starvation once the daemons exited

    CHECK(woke_at_once);
    CHECK(free_after_kswapd >= b.vm->high_watermark());
    CHECK(b.counter("node0.vmd.kswapd_runs") == 1);   // above the low watermark since
    CHECK(b.counter("node0.vm.swap_outs") > 0);
    CHECK(b.counter("node0.vmd.khugepaged_runs") == 2);   // at 10 ms and just after 20 ms
    CHECK(b.counter("node0.vm.collapses") == 1);
    CHECK(b.counter("node0.vmd.kcompactd_runs") == 4);   // 5, 10, 15, 20 ms (plus run times)
    CHECK(b.counter("node0.vm.compactions") == 4);
    CHECK(b.cpu->busy("kswapd") > sc_core::SC_ZERO_TIME);
    CHECK(b.cpu->busy("khugepaged") > sc_core::SC_ZERO_TIME);
    CHECK(b.cpu->busy("kcompactd") > sc_core::SC_ZERO_TIME);
    CHECK(idle_seen);
    CHECK(b.daemons->stopped());
    CHECK(sc_core::sc_time_stamp() == ms(25));
    CHECK(faulted_at > sc_core::SC_ZERO_TIME);
}

TEST_CASE("vm daemons: compaction off by default, stop before any work", "[os][vm-daemons]") {
    Bench b({});
    b.program.body = [&] {
        wait(ms(1));
        b.daemons->stop();
    };
    sc_core::sc_start();
    CHECK(sc_core::sc_time_stamp() == ms(1));
    CHECK(b.counter("node0.vmd.kswapd_runs") == 0);
    CHECK(b.counter("node0.vmd.khugepaged_runs") == 0);
    CHECK(b.counter("node0.vmd.kcompactd_runs") == 0);
}

TEST_CASE("vm daemons: khugepaged opens the collapse window, then installs the block at its end", "[os][vm-daemons]") {
    Bench b({{"vm.thp", "madvise"},
             {"khugepaged.scan-sleep", "1ms"},
             {"vm.low-watermark", "1MiB"},   // 16 MiB of DRAM: kswapd stays asleep
             {"vm.high-watermark", "2MiB"},
             {"vm.kswapd-interval", "1000s"},
             {"vm.scan-pte", "10ns"},
             {"vm.pte-update", "20ns"},
             {"vm.copy-page", "2us"},
             {"vm.zero-fill-page", "1us"}});
    VmCollapse seen;
    bool hole_in_window = false, block_after = false, waited = false;
    sc_time fault_done;
    b.program.body = [&] {
        const int pid = b.vm->create_process("app");
        const auto h = b.vm->mmap(pid, 2 * MiB, Prot::ReadWrite, false, sc_core::SC_ZERO_TIME);
        const unsigned char x = 'h';
        b.vm->write_user(pid, h.value, &x, 1);
        b.vm->madvise(pid, h.value, 2 * MiB, Advice::HugePage, sc_core::SC_ZERO_TIME);
        // khugepaged wakes at 1 ms: 512 PTEs scanned (5.12 us), then the
        // window: 1 page copied, 511 cleared, 2 PTE updates = 513.04 us.
        wait(ms(1) + sc_time(100, sc_core::SC_US));
        seen = b.vm->collapsing();
        std::uint64_t pa = 0;
        hole_in_window = seen.open && !b.vm->translate(pid, h.value, pa);
        unsigned char back = 0;
        waited = b.vm->peek_user(pid, h.value, &back, 1) && back == 'h';   // the bytes, no change
        // A fault inside the window (a page never touched) waits for its end
        // and finds the block; the thread's phase 2 then has nothing to do.
        fault_done = b.vm->touch(pid, h.value + 4096, false, sc_core::sc_time_stamp()).done;
        wait(ms(1) + sc_time(600, sc_core::SC_US) - sc_core::sc_time_stamp());
        block_after = !b.vm->collapsing().open && b.vm->translate(pid, h.value + 4096, pa) && pa % (2 * MiB) == 4096;
        b.daemons->stop();
    };
    sc_core::sc_start();
    REQUIRE(seen.open);
    CHECK(seen.clear == ms(1) + sc_time(5120, sc_core::SC_NS));
    CHECK(seen.install == seen.clear + sc_time(513040, sc_core::SC_NS));
    CHECK(hole_in_window);
    CHECK(block_after);
    CHECK(waited);
    CHECK(fault_done == seen.install + sc_time(2100, sc_core::SC_NS));   // minor-fault + user-access after it
    CHECK(b.counter("node0.vm.collapses") == 1);
    CHECK(b.counter("node0.vmd.khugepaged_runs") == 1);
}

TEST_CASE("vm daemons: a swapped-in page is mapped by the I/O completion at its read's end, not before",
          "[os][vm-daemons][io]") {
    Bench b({{"vm.thp", "never"},
             {"vm.kswapd-interval", "1000s"},
             {"ssd.read-latency", "50us"},
             {"ssd.bandwidth", "4.096GB/s"},   // 4 KiB in 1 us
             {"vm.major-fault", "10us"},
             {"vm.pte-update", "20ns"}});
    bool before = true, at_end = false, mapped_after = false, stopped_with_read = false;
    sc_time done, next;
    std::uint64_t slots_in_window = 0, slots_after = 0, slots0 = 0;
    b.program.body = [&] {
        const int pid = b.vm->create_process("app");
        const auto m = b.vm->mmap(pid, 4096, Prot::ReadWrite, false, sc_core::SC_ZERO_TIME);
        const unsigned char x = 's';
        b.vm->write_user(pid, m.value, &x, 1);
        slots0 = b.ssd->free_slots();
        b.vm->reclaim(b.vm->free_bytes() + 4096, sc_core::SC_ZERO_TIME);
        wait(ms(1));
        done = b.vm->touch(pid, m.value, false, sc_core::sc_time_stamp()).done;   // the read: 1 ms to 1.051 ms
        next = b.vm->next_io();
        std::uint64_t pa = 0;
        wait(next - sc_time(1, sc_core::SC_NS) - sc_core::sc_time_stamp());
        before = b.vm->translate(pid, m.value, pa);   // 1 ns before the read's end: not mapped
        slots_in_window = b.ssd->free_slots();
        wait(sc_time(1, sc_core::SC_NS));
        wait(sc_core::SC_ZERO_TIME);   // after the completion thread's run at this time
        at_end = b.vm->translate(pid, m.value, pa);
        slots_after = b.ssd->free_slots();
        unsigned char back = 0;
        mapped_after = b.vm->peek_user(pid, m.value, &back, 1) && back == 's';
        // A read still in flight at stop() is completed all the same.
        b.vm->reclaim(b.vm->free_bytes() + 4096, sc_core::sc_time_stamp());
        b.vm->touch(pid, m.value, false, sc_core::sc_time_stamp());
        b.daemons->stop();
        stopped_with_read = b.vm->next_io() != sc_core::sc_max_time();
    };
    sc_core::sc_start();
    CHECK(next == ms(1) + sc_time(51, sc_core::SC_US));
    CHECK(done == next + sc_time(10020, sc_core::SC_NS));   // then major-fault + pte-update
    CHECK_FALSE(before);
    CHECK(slots_in_window == slots0 - 1);
    CHECK(at_end);
    CHECK(slots_after == slots0);
    CHECK(mapped_after);
    CHECK(stopped_with_read);
    CHECK(b.vm->next_io() == sc_core::sc_max_time());   // drained before the thread exited
    CHECK(b.counter("node0.vm.swap_ins") == 2);
}
