// The SMMU fault path on a file mapping: a master behind the SMMU reads a
// process's mmap of a file; the translation fault goes through the driver
// and the fault library to Vm::fault_in, which reads the page from the SSD
// into the page cache (a major file fault) and maps it; the stalled read is
// resumed and returns the file's bytes. Cold cache, memory pressure (the
// page reclaimed under the engine, its translation invalidated through the
// driver, faulted in again from the SSD), terminate mode, and THP (file
// mappings stay 4 KiB while anonymous memory is huge). One elaboration per
// case.
#include <catch2/catch.hpp>

#include <memory>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>

#include "flat_memory.hpp"
#include "model_env.hpp"
#include "models/bus/bus.hpp"
#include "models/memory/dram.hpp"
#include "models/os/cpu.hpp"
#include "models/os/filesystem.hpp"
#include "models/os/smmu_driver.hpp"
#include "models/os/ssd.hpp"
#include "models/os/vm.hpp"
#include "models/smmu/smmu500.hpp"

using namespace vrdmasim;
using namespace sc_core;

namespace {

constexpr std::uint32_t kSid = 0x0C10;
constexpr std::uint64_t P = 4096, MiB = 1ull << 20;

struct Master : sc_module {
    tlm_utils::simple_initiator_socket<Master> socket{"socket"};
    explicit Master(sc_module_name n) : sc_module(n) {}
    // A 64-byte read at va; the bytes and whether it completed OK.
    bool read(std::uint64_t va, std::vector<unsigned char>& data) {
        tlm::tlm_generic_payload gp;
        auto* sx = new StreamIdExtension;
        sx->sid = kSid;
        gp.set_extension(sx);
        data.assign(64, 0xAA);
        gp.set_command(tlm::TLM_READ_COMMAND);
        gp.set_address(va);
        gp.set_data_ptr(data.data());
        gp.set_data_length(64);
        gp.set_streaming_width(64);
        gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
        sc_time d = SC_ZERO_TIME;
        socket->b_transport(gp, d);
        wait(d);
        return gp.get_response_status() == tlm::TLM_OK_RESPONSE;
    }
};

struct Program : sc_module {
    std::function<void()> body;
    explicit Program(sc_module_name n) : sc_module(n) {
        SC_HAS_PROCESS(Program);
        SC_THREAD(run);
    }
    void run() { body(); }
};

// The bio completions of VmDaemons, alone: each read in flight maps its
// page at its completion time (models/os/inflight.hpp), so the SMMU's
// retried walk after RESUME finds it mapped, as in a full system.
struct IoCompletion : sc_module {
    Vm* vm = nullptr;
    sc_event wake;
    explicit IoCompletion(sc_module_name n) : sc_module(n) {
        SC_HAS_PROCESS(IoCompletion);
        SC_THREAD(run);
    }
    void run() {
        for (;;) {
            const sc_time next = vm->next_io(), now = sc_time_stamp();
            if (next == sc_max_time()) wait(wake);   // nothing in flight: the run may end
            else if (next > now) wait(next - now, wake);
            else vm->complete_io(now);
        }
    }
};

using vrdmasim_test::Settings;

const Settings kDefaults = {{"bus.latency", "0ps"},
                            {"smmu-driver.fault-mode", "stall"},
                            {"fault-lib.policy", "touch-one"},
                            {"ssd.swap-size", "8MiB"},
                            {"fs.files", "1"},
                            {"fs.file-size", "1MiB"},
                            {"vm.thp", "never"}};

struct Bench : vrdmasim_test::ModelEnv {
    std::unique_ptr<vrdmasim_test::FlatMemory> mem;
    std::unique_ptr<Bus> bus;
    std::unique_ptr<Smmu500> smmu;
    std::unique_ptr<CpuCores> cpu;
    std::unique_ptr<FrameAllocator> frames;
    std::unique_ptr<Vm> vm;
    std::unique_ptr<Ssd> ssd;
    std::unique_ptr<FileSystem> fs;
    std::unique_ptr<SmmuDriver> drv;
    std::unique_ptr<Master> master;
    std::unique_ptr<Program> program;
    std::unique_ptr<IoCompletion> io;
    std::vector<FaultOutcome> outcomes;
    int pid = 0;

    explicit Bench(const Settings& settings = {}, std::uint64_t frames_bytes = 32 * MiB)
        : ModelEnv({CpuCores::declare_params, Smmu500::declare_params, Dram::declare_params, Bus::declare_params,
                    SmmuDriver::declare_params, FaultLibrary::declare_params, Vm::declare_params, Ssd::declare_params,
                    FileSystem::declare_params},
                   kDefaults, settings) {
        mem = std::make_unique<vrdmasim_test::FlatMemory>("mem", sc_time(100, SC_NS));
        bus = std::make_unique<Bus>("bus", ctx);
        smmu = std::make_unique<Smmu500>("smmu", ctx, "node0");
        cpu = std::make_unique<CpuCores>(ctx, "node0.cpu", "node0");
        frames = std::make_unique<FrameAllocator>(16 * MiB, frames_bytes);
        vm = std::make_unique<Vm>(ctx, "node0.vm", "node0", *mem->socket.get_base_export().operator->(), *frames, *cpu);
        ssd = std::make_unique<Ssd>(ctx, "node0.ssd", "node0");
        fs = std::make_unique<FileSystem>(ctx, *ssd);
        vm->set_swap(*ssd);
        vm->set_file_system(*fs);
        drv = std::make_unique<SmmuDriver>("driver", ctx, "node0", *smmu, *cpu,
                                           [this](int p, std::uint64_t va, std::uint64_t len, bool write, sc_time at) {
                                               return vm->fault_in(p, va, len, write, at);
                                           });
        drv->set_register_base(0);
        drv->on_outcome([this](const FaultOutcome& o) { outcomes.push_back(o); });
        vm->set_invalidate([this](int p, std::uint16_t asid, std::uint64_t va, std::uint64_t len, sc_time at) {
            return drv->invalidate(p, asid, va, len, at);
        });
        master = std::make_unique<Master>("master");
        program = std::make_unique<Program>("program");
        io = std::make_unique<IoCompletion>("io");
        io->vm = vm.get();
        vm->set_io_wake([this](sc_time) { io->wake.notify(SC_ZERO_TIME); });
        bus->out.bind(mem->socket);
        bus->map(0, 64ull << 20, 0, 0, "ddr");
        smmu->out.bind(bus->in);
        smmu->walk.bind(bus->in);
        drv->mmio.bind(smmu->regs);
        master->socket.bind(*smmu->tbu[0]);
        pid = vm->create_process("server");
    }
    void wait_until(sc_time t) {
        if (t > sc_time_stamp()) wait(t - sc_time_stamp());
    }
    // Open the file, map it, attach the process; the mapping's address.
    std::uint64_t map_file(std::uint64_t len = 1 * MiB) {
        const auto fd = vm->open(pid, 0, sc_time_stamp());
        REQUIRE(fd.ok());
        const auto m = vm->mmap_file(pid, static_cast<int>(fd.value), 0, len, Prot::Read, false, fd.done);
        REQUIRE(m.ok());
        wait_until(m.done);
        wait_until(drv->attach(pid, vm->asid(pid), vm->root(pid), vm->t0sz(), {kSid}, sc_time_stamp()));
        return m.value;
    }
    // The master's 64 bytes at file offset `off` through the mapping are the file's.
    bool reads_file(std::uint64_t va, std::uint64_t off) {
        std::vector<unsigned char> got, want(64);
        if (!master->read(va + off, got)) return false;
        FileSystem::content(0, off, want.data(), 64);
        return got == want;
    }
    std::uint64_t pc(const std::string& n) const { return counter("node0.pagecache." + n); }
};

}   // namespace

TEST_CASE("file fault path: a DMA read of a cold file mapping faults in the SMMU and reads the SSD (stall)",
          "[smmu-driver][pagecache]") {
    Bench b;
    bool ok = false, again = false;
    sc_time t0, t1;
    b.program->body = [&] {
        const std::uint64_t va = b.map_file();
        t0 = sc_time_stamp();
        ok = b.reads_file(va, 40 * P + 128);
        t1 = sc_time_stamp();
        again = b.reads_file(va, 41 * P);   // read around: cached, a minor fault
    };
    sc_start();
    CHECK(ok);
    CHECK(again);
    CHECK(b.pc("faults_major") == 1);
    CHECK(b.pc("faults_minor") == 1);
    CHECK(b.counter("node0.ssd.file_reads") == 1);
    CHECK(b.counter("driver.resumes_retry") == 2);
    REQUIRE(b.outcomes.size() == 2);
    CHECK(b.outcomes[0].resolved);
    CHECK(t1 - t0 > sc_time(50, SC_US));   // the SSD's latency is inside the fault's service
}

TEST_CASE("file fault path: under memory pressure a reclaimed file page is invalidated and read again",
          "[smmu-driver][pagecache]") {
    Bench b(Settings{}, 4 * MiB);
    bool first = false, second = false, still_mapped = true;
    std::uint64_t tlbi_before = 0, tlbi_after = 0;
    b.program->body = [&] {
        const std::uint64_t va = b.map_file();
        first = b.reads_file(va, 7 * P);
        // Pressure: an anonymous hog and reclaim of everything reclaimable.
        const auto hog = b.vm->mmap(b.pid, 2 * MiB, Prot::ReadWrite, true, sc_time_stamp());
        REQUIRE(hog.ok());
        tlbi_before = b.counter("driver.tlbi_writes");
        b.wait_until(b.vm->reclaim(b.vm->free_bytes() + 900 * P, sc_time_stamp()).done);
        tlbi_after = b.counter("driver.tlbi_writes");
        still_mapped = b.vm->present(b.pid, va + 7 * P);
        second = b.reads_file(va, 7 * P + 512);
    };
    sc_start();
    CHECK(first);
    CHECK_FALSE(still_mapped);
    CHECK(tlbi_after > tlbi_before);   // the SMMU forgot the translation before the frame went
    CHECK(second);
    CHECK(b.pc("evictions") > 0);
    CHECK(b.pc("faults_major") == 2);
    CHECK(b.counter("node0.ssd.file_reads") == 2);
}

TEST_CASE("file fault path: terminate mode reports the fault, the retried read finds the file page",
          "[smmu-driver][pagecache]") {
    Bench b(Settings{{"smmu-driver.fault-mode", "terminate"}});
    bool first = true, retried = false;
    b.program->body = [&] {
        const std::uint64_t va = b.map_file();
        std::vector<unsigned char> got;
        first = b.master->read(va + 3 * P, got);   // aborted: the engine must retry
        while (b.outcomes.empty()) wait(sc_time(1, SC_US));
        retried = b.reads_file(va, 3 * P);
    };
    sc_start();
    CHECK_FALSE(first);
    CHECK(retried);
    REQUIRE(b.outcomes.size() == 1);
    CHECK(b.outcomes[0].resolved);
    CHECK(b.pc("faults_major") == 1);
}

TEST_CASE("file fault path: with THP always the file mapping stays 4 KiB pages beside huge anonymous memory",
          "[smmu-driver][pagecache]") {
    Bench b(Settings{{"vm.thp", "always"}, {"fault-lib.policy", "touch-ahead"}});
    bool ok = true;
    VmLeaf file_leaf, anon_leaf;
    b.program->body = [&] {
        const std::uint64_t va = b.map_file(2 * MiB);   // 2 MiB-aligned, half of it past the file's end
        const auto anon = b.vm->mmap(b.pid, 2 * MiB, Prot::ReadWrite, true, sc_time_stamp());
        REQUIRE(anon.ok());
        for (std::uint64_t off = 0; off < 1 * MiB; off += 64 * 1024) ok = ok && b.reads_file(va, off + 256);
        b.vm->present_leaf(b.pid, va, file_leaf);
        b.vm->present_leaf(b.pid, anon.value, anon_leaf);
        b.wait_until(b.vm->khugepaged_scan(sc_time_stamp()).done);
    };
    sc_start();
    CHECK(ok);
    CHECK(file_leaf.size == P);
    CHECK(anon_leaf.size == 2 * MiB);
    CHECK(b.counter("node0.vm.collapses") == 0);
    CHECK(b.pc("faults_major") > 0);
}
