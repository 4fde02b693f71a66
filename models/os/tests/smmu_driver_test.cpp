// SmmuDriver and FaultLibrary through the SMMU's registers and a master
// behind a TBU: the whole fault path in stall and terminate mode, touch-one
// against touch-ahead, CPU contention, attach and invalidation. Memory is a
// contention-free model so every time is exact. One elaboration per case.
#include <catch2/catch.hpp>

#include "flat_memory.hpp"
#include "model_env.hpp"

#include <cstring>
#include <memory>
#include <set>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "models/bus/bus.hpp"
#include "models/memory/dram.hpp"
#include "models/os/cpu.hpp"
#include "models/os/smmu_driver.hpp"
#include "models/smmu/page_table_writer.hpp"
#include "models/smmu/smmu500.hpp"

using namespace vrdmasim;
using namespace sc_core;
namespace reg = vrdmasim::smmu_reg;

namespace {

sc_time ns(double v) { return sc_time(v, SC_NS); }
sc_time us(double v) { return sc_time(v, SC_US); }

// SMMU at 500 MHz: micro + macro lookups 12 ns before a walk; memory 100 ns
// per access; 20 ns per register access; 100 ns per invalidation command.
const sc_time kMiss = ns(12);
const sc_time kMem = ns(100);
const sc_time kReg = ns(20);
const sc_time kTlbi = ns(100);
// Driver and library costs set by the bench.
const sc_time kIrqEntry = us(1), kHandler = us(2), kNetlink = us(3), kWakeup = us(4), kPerCall = us(5);
// The fake resolver: 500 ns per call + 200 ns per page made present.
const sc_time kGupCall = ns(500), kGupPage = ns(200);

constexpr std::uint64_t kVa = 0x10'0000'0000ull;   // 64 GiB
constexpr std::uint64_t kPa = 0x0100'0000ull;   // 16 MiB: user pages
constexpr std::uint32_t kSid = 0x0C10;

using vrdmasim_test::FlatMemory;

struct Master : sc_module {
    tlm_utils::simple_initiator_socket<Master> socket{"socket"};
    struct Result {
        tlm::tlm_response_status status = tlm::TLM_INCOMPLETE_RESPONSE;
        sc_time start, done;
        bool has_fault = false;
        std::uint64_t fault_address = 0;
        std::vector<unsigned char> data;
    };
    explicit Master(sc_module_name n) : sc_module(n) {}
    Result read(std::uint64_t va, unsigned len = 64) {
        Result r;
        tlm::tlm_generic_payload gp;
        auto* sx = new StreamIdExtension;
        sx->sid = kSid;
        gp.set_extension(sx);
        r.data.assign(len, 0xAA);
        gp.set_command(tlm::TLM_READ_COMMAND);
        gp.set_address(va);
        gp.set_data_ptr(r.data.data());
        gp.set_data_length(len);
        gp.set_streaming_width(len);
        gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
        r.start = sc_time_stamp();
        sc_time d = SC_ZERO_TIME;
        socket->b_transport(gp, d);
        r.done = sc_time_stamp() + d;
        r.status = gp.get_response_status();
        if (auto* f = gp.get_extension<SmmuFaultExtension>()) {
            r.has_fault = f->type != FaultType::None;
            r.fault_address = f->address;
        }
        wait(d);
        return r;
    }
};

// Runs the test's program in an SC_THREAD.
struct Program : sc_module {
    std::function<void()> body;
    explicit Program(sc_module_name n) : sc_module(n) {
        SC_HAS_PROCESS(Program);
        SC_THREAD(run);
    }
    void run() {
        if (body) body();
    }
};

std::vector<unsigned char> pattern(std::size_t len, unsigned seed) {
    std::vector<unsigned char> v(len);
    for (std::size_t i = 0; i < len; ++i) v[i] = static_cast<unsigned char>(seed * 31 + i * 7 + 1);
    return v;
}

// Bytes [off, off + len) of user page `seed`.
std::vector<unsigned char> slice(unsigned seed, std::size_t off, std::size_t len = 64) {
    const auto p = pattern(4096, seed);
    return std::vector<unsigned char>(p.begin() + static_cast<long>(off), p.begin() + static_cast<long>(off + len));
}

using vrdmasim_test::Settings;

const Settings kBenchDefaults = {{"bus.latency", "0ps"},
                                 {"smmu.clock", "500MHz"},
                                 {"smmu.tlb-hit-cycles", "2"},
                                 {"smmu.macro-tlb-hit-cycles", "4"},
                                 {"smmu.register-latency", "20ns"},
                                 {"smmu.tlbi-time", "100ns"},
                                 {"smmu.walk-cache-entries", "0"},
                                 {"smmu-driver.irq-entry", "1us"},
                                 {"smmu-driver.handler", "2us"},
                                 {"smmu-driver.netlink", "3us"},
                                 {"smmu-driver.tlbi-page", "100ns"},
                                 {"fault-lib.wakeup", "4us"},
                                 {"fault-lib.per-call", "5us"},
                                 {"fault-lib.policy", "touch-one"}};

struct Bench : vrdmasim_test::ModelEnv {
    std::unique_ptr<FlatMemory> mem;
    std::unique_ptr<Bus> bus;
    std::unique_ptr<Smmu500> smmu;
    std::unique_ptr<CpuCores> cpu;
    std::unique_ptr<SmmuDriver> drv;
    std::unique_ptr<Master> master;
    std::unique_ptr<Program> program;
    std::uint64_t next_table = 0x100000;
    std::unique_ptr<PageTableWriter> pt;

    // The fake VM: pages [kVa, kVa + valid_pages * 4 KiB) can be made present,
    // page i at kPa + i * 4 KiB, holding pattern(4096, i).
    std::uint64_t valid_pages = 64;
    std::set<std::uint64_t> present;
    unsigned resolve_calls = 0;
    std::vector<FaultOutcome> outcomes;
    sc_event outcome_ev;

    explicit Bench(const Settings& settings = {})
        : ModelEnv({CpuCores::declare_params, Smmu500::declare_params, Dram::declare_params, Bus::declare_params,
                    SmmuDriver::declare_params, FaultLibrary::declare_params},
                   kBenchDefaults, settings) {
        mem = std::make_unique<FlatMemory>("mem", kMem);
        bus = std::make_unique<Bus>("bus", ctx);
        smmu = std::make_unique<Smmu500>("smmu", ctx, "node0");
        cpu = std::make_unique<CpuCores>(ctx, "node0.cpu", "node0");
        drv = std::make_unique<SmmuDriver>("driver", ctx, "node0", *smmu, *cpu,
                                           [this](int pid, std::uint64_t va, std::uint64_t len, bool write,
                                                  sc_time at) { return resolve(pid, va, len, write, at); });
        drv->set_register_base(0);
        drv->on_outcome([this](const FaultOutcome& o) {
            CHECK(o.done == sc_time_stamp());   // told when it happens
            outcomes.push_back(o);
            outcome_ev.notify();
        });
        master = std::make_unique<Master>("master");
        program = std::make_unique<Program>("program");
        bus->out.bind(mem->socket);
        bus->map(0, 64ull << 20, 0, 0, "ddr");
        smmu->out.bind(bus->in);
        smmu->walk.bind(bus->in);
        drv->mmio.bind(smmu->regs);
        master->socket.bind(*smmu->tbu[0]);
        pt = std::make_unique<PageTableWriter>(PageTableWriter::over(
            *mem->socket.get_base_export().operator->(),
            [this] {
                next_table += 4096;
                return next_table - 4096;
            },
            16));
        for (std::uint64_t i = 0; i < 64; ++i) poke(kPa + i * 4096, pattern(4096, static_cast<unsigned>(i)));
        // A page in the same last-level table, so a fault walks all four levels.
        pt->map_page(kVa + (256ull << 12), 0x0300'0000);
    }

    VmResult resolve(int pid, std::uint64_t va, std::uint64_t len, bool, sc_time at) {
        CHECK(pid == 1);
        ++resolve_calls;
        VmResult r;
        for (std::uint64_t a = va; a < va + len; a += 4096) {
            if (a < kVa || a >= kVa + valid_pages * 4096) {
                r.error = VmError::Fault;
                break;
            }
            if (present.insert(a).second) {
                pt->map_page(a, kPa + (a - kVa));
                ++r.value;
            }
        }
        r.done = cpu->run("gup", at, kGupCall + kGupPage * static_cast<double>(r.value), "gup").end;
        return r;
    }

    void poke(std::uint64_t pa, const std::vector<unsigned char>& bytes) {
        tlm::tlm_generic_payload gp;
        gp.set_command(tlm::TLM_WRITE_COMMAND);
        gp.set_address(pa);
        gp.set_data_ptr(const_cast<unsigned char*>(bytes.data()));
        gp.set_data_length(static_cast<unsigned>(bytes.size()));
        REQUIRE(mem->transport_dbg(gp) == bytes.size());
    }
    std::uint64_t reg_dbg(std::uint64_t off, unsigned len = 4) {
        std::uint64_t v = 0;
        tlm::tlm_generic_payload gp;
        gp.set_command(tlm::TLM_READ_COMMAND);
        gp.set_address(off);
        gp.set_data_ptr(reinterpret_cast<unsigned char*>(&v));
        gp.set_data_length(len);
        gp.set_streaming_width(len);
        REQUIRE(drv->mmio->transport_dbg(gp) == len);
        return v;
    }
    // Attach process 1 (ASID 1) with the master's stream; waits until done.
    sc_time attach() {
        const sc_time t = drv->attach(1, 1, pt->root(), 16, {kSid}, sc_time_stamp());
        wait(t - sc_time_stamp());
        return t;
    }
    void wait_outcome(std::size_t n) {
        while (outcomes.size() < n) wait(outcome_ev);
    }
    void run() { sc_start(); }
};

// The driver's stages for one fault whose handler starts at `start`, with a
// library that resolves `pages` new pages in one call (6 register accesses:
// sGFSR, FSR, FAR, FSYNR0, CBFRSYNRA, FSR clear).
sc_time library_done(sc_time start, unsigned pages) {
    return start + kIrqEntry + kHandler + 6 * kReg + kNetlink + kWakeup + kPerCall + kGupCall +
           kGupPage * static_cast<double>(pages);
}

}   // namespace

// ---------------------------------------------------------------- attach

TEST_CASE("attach programs a bank and stream matching and runs out of banks and SMRs", "[smmu-driver]") {
    Bench b;
    PageTableWriter pt2 = PageTableWriter::over(*b.mem->socket.get_base_export().operator->(), [&b] {
        b.next_table += 4096;
        return b.next_table - 4096;
    });
    sc_time t1, t2;
    bool smr_full = false, bank_full = false;
    b.program->body = [&] {
        wait(ns(1000));
        t1 = b.drv->attach(1, 1, b.pt->root(), 16, {0x10, 0x11}, sc_time_stamp());
        t2 = b.drv->attach(2, 7, pt2.root(), 25, {0x20}, t1);
        std::vector<std::uint32_t> many(46, 0x100);
        try {
            b.drv->attach(3, 3, pt2.root(), 16, many, t2);
        } catch (const std::runtime_error&) {
            smr_full = true;
        }
        for (int pid = 3; pid <= 16; ++pid) b.drv->attach(pid, static_cast<std::uint16_t>(pid), pt2.root(), 16, {}, t2);
        try {
            b.drv->attach(17, 17, pt2.root(), 16, {}, t2);
        } catch (const std::runtime_error&) {
            bank_full = true;
        }
    };
    b.run();
    CHECK(t1 == ns(1000) + 11 * kReg);   // 2 x (S2CR, SMR) + CBAR, CBA2R, TCR, MAIR0, TTBR0, SCTLR, sCR0
    CHECK(t2 == t1 + 9 * kReg);
    CHECK(smr_full);
    CHECK(bank_full);
    CHECK(b.reg_dbg(reg::SMR(0)) == (reg::SMR_VALID | 0x10));
    CHECK(b.reg_dbg(reg::SMR(1)) == (reg::SMR_VALID | 0x11));
    CHECK(b.reg_dbg(reg::SMR(2)) == (reg::SMR_VALID | 0x20));
    CHECK(b.reg_dbg(reg::SMR(3)) == 0);
    CHECK(b.reg_dbg(reg::S2CR(0)) == 0);
    CHECK(b.reg_dbg(reg::S2CR(1)) == 0);
    CHECK(b.reg_dbg(reg::S2CR(2)) == 1);
    CHECK(b.reg_dbg(reg::CBAR(1)) == (1u << 16));
    CHECK(b.reg_dbg(reg::CBA2R(1)) == 1);
    CHECK((b.reg_dbg(reg::cb(0) + reg::TCR) & 0x3f) == 16);
    CHECK((b.reg_dbg(reg::cb(1) + reg::TCR) & 0x3f) == 25);
    CHECK(b.reg_dbg(reg::cb(1) + reg::MAIR0) == 0x0004ff44u);
    CHECK(b.reg_dbg(reg::cb(0) + reg::TTBR0, 8) == (b.pt->root() | (1ull << 48)));
    CHECK(b.reg_dbg(reg::cb(1) + reg::TTBR0, 8) == (pt2.root() | (7ull << 48)));
    CHECK(b.reg_dbg(reg::cb(0) + reg::SCTLR) ==
          (reg::SCTLR_M | reg::SCTLR_AFE | reg::SCTLR_CFRE | reg::SCTLR_CFIE));   // terminate by default
    CHECK(b.reg_dbg(reg::sCR0) == (reg::sCR0_GFRE | reg::sCR0_GFIE | reg::sCR0_USFCFG));   // CLIENTPD clear
    CHECK(b.drv->library(1) != nullptr);
    CHECK(b.drv->library(17) == nullptr);
    CHECK(!b.drv->stall_mode());
}

// ---------------------------------------------------------------- stall mode

TEST_CASE("stall: a read of a missing page stalls and is resolved and retried on an exact timeline", "[smmu-driver]") {
    Bench b(Settings{{"smmu-driver.fault-mode", "stall"}});
    Master::Result r;
    sc_time t0;
    b.program->body = [&] {
        t0 = b.attach();
        r = b.master->read(kVa + 3 * 4096 + 0x40);
    };
    b.run();
    const sc_time fault = t0 + kMiss + 4 * kMem;   // four-level walk, invalid PTE
    const sc_time lib = library_done(fault, 1);
    const sc_time resume = lib + kReg;
    REQUIRE(b.outcomes.size() == 1);
    const FaultOutcome& o = b.outcomes[0];
    CHECK(b.drv->stall_mode());
    CHECK(b.reg_dbg(reg::cb(0) + reg::SCTLR) ==
          (reg::SCTLR_M | reg::SCTLR_AFE | reg::SCTLR_CFRE | reg::SCTLR_CFIE | reg::SCTLR_CFCFG));
    CHECK(o.fault.pid == 1);
    CHECK(o.fault.cb == 0);
    CHECK(o.fault.stream_id == kSid);
    CHECK(o.fault.address == kVa + 3 * 4096 + 0x40);
    CHECK(!o.fault.write);
    CHECK(o.fault.fsr == (reg::FSR_TF | reg::FSR_SS));
    CHECK(o.fault.raised == fault);
    CHECK(o.resolved);
    CHECK(o.error == VmError::Ok);
    CHECK(o.pages == 1);
    CHECK(o.done == resume);
    CHECK(r.status == tlm::TLM_OK_RESPONSE);
    CHECK(r.data == slice(3, 0x40));
    CHECK(r.done == resume + kMiss + 4 * kMem + kMem);   // retried from the RESUME
    CHECK(b.counter("driver.interrupts") == 1);
    CHECK(b.counter("driver.faults") == 1);
    CHECK(b.counter("driver.resumes_retry") == 1);
    CHECK(b.counter("driver.resumes_terminate") == 0);
    CHECK(b.counter("smmu.cb0.resumes_retry") == 1);
    CHECK(b.counter("smmu.cb0.resumes_ignored") == 0);
    CHECK(b.counter("driver.pid1.pages") == 1);
    CHECK(b.reg_dbg(reg::cb(0) + reg::FSR) == 0);
    CHECK(!b.smmu->irq.high());
    const Histogram* h = b.stats.find_histogram("driver.service_time");
    REQUIRE(h);
    CHECK(h->count() == 1);
    CHECK(h->max() == Approx(to_us(resume - fault)));
    CHECK(b.cpu->busy("smmu-irq") == kIrqEntry + kHandler + 6 * kReg);
    CHECK(b.cpu->busy("netlink") == kNetlink);
    CHECK(b.cpu->busy("fault-library") == kWakeup + kPerCall + kReg);
}

TEST_CASE("stall: an unresolvable fault is resumed with terminate and the master gets an error", "[smmu-driver]") {
    Bench b(Settings{{"smmu-driver.fault-mode", "stall"}});
    b.valid_pages = 0;   // nothing can be made present
    Master::Result r;
    sc_time t0;
    b.program->body = [&] {
        t0 = b.attach();
        r = b.master->read(kVa + 0x40);
    };
    b.run();
    const sc_time fault = t0 + kMiss + 4 * kMem;
    const sc_time resume = library_done(fault, 0) + kReg;
    REQUIRE(b.outcomes.size() == 1);
    CHECK(!b.outcomes[0].resolved);
    CHECK(b.outcomes[0].error == VmError::Fault);
    CHECK(b.outcomes[0].pages == 0);
    CHECK(b.outcomes[0].done == resume);
    CHECK(r.status == tlm::TLM_GENERIC_ERROR_RESPONSE);
    CHECK(r.has_fault);
    CHECK(r.fault_address == kVa + 0x40);
    CHECK(r.done == resume);
    CHECK(b.counter("driver.resumes_terminate") == 1);
    CHECK(b.counter("driver.resumes_retry") == 0);
    CHECK(b.counter("driver.unresolved") == 1);
    CHECK(b.counter("smmu.cb0.resumes_terminate") == 1);
}

// ---------------------------------------------------------------- terminate mode

TEST_CASE("terminate: the master gets the error and the outcome says resolved and its retry succeeds",
          "[smmu-driver]") {
    Bench b;
    Master::Result first, retry;
    sc_time t0;
    b.program->body = [&] {
        t0 = b.attach();
        first = b.master->read(kVa + 5 * 4096);
        b.wait_outcome(1);
        retry = b.master->read(kVa + 5 * 4096);
    };
    b.run();
    const sc_time fault = t0 + kMiss + 4 * kMem;
    const sc_time lib = library_done(fault, 1);
    CHECK(first.status == tlm::TLM_GENERIC_ERROR_RESPONSE);
    CHECK(first.has_fault);
    CHECK(first.done == fault);
    REQUIRE(b.outcomes.size() == 1);
    CHECK(b.outcomes[0].resolved);
    CHECK(b.outcomes[0].pages == 1);
    CHECK(b.outcomes[0].fault.fsr == reg::FSR_TF);   // no SS in terminate mode
    CHECK(b.outcomes[0].done == lib);
    CHECK(retry.start == lib);
    CHECK(retry.status == tlm::TLM_OK_RESPONSE);
    CHECK(retry.data == slice(5, 0));
    CHECK(retry.done == lib + kMiss + 4 * kMem + kMem);
    CHECK(b.counter("driver.resumes_retry") == 0);
    CHECK(b.counter("driver.resumes_terminate") == 0);
    CHECK(b.counter("smmu.cb0.resumes_ignored") == 0);
}

TEST_CASE("terminate: an unresolvable fault is reported unresolved", "[smmu-driver]") {
    Bench b;
    b.valid_pages = 2;
    Master::Result r;
    sc_time t0;
    b.program->body = [&] {
        t0 = b.attach();
        r = b.master->read(kVa + 9 * 4096);
        b.wait_outcome(1);
    };
    b.run();
    const sc_time fault = t0 + kMiss + 4 * kMem;
    CHECK(r.status == tlm::TLM_GENERIC_ERROR_RESPONSE);
    REQUIRE(b.outcomes.size() == 1);
    CHECK(!b.outcomes[0].resolved);
    CHECK(b.outcomes[0].error == VmError::Fault);
    CHECK(b.outcomes[0].done == library_done(fault, 0));
    CHECK(b.counter("driver.unresolved") == 1);
    CHECK(b.counter("driver.pid1.unresolved") == 1);
    CHECK(b.counter("driver.resumes_terminate") == 0);
}

// ---------------------------------------------------------------- policies

namespace {
// The master reads the first 64 bytes of 64 consecutive pages (stall mode).
void sequential_stream(const Settings& s, std::uint64_t faults, unsigned calls) {
    Settings all = s;
    all.push_back({"smmu-driver.fault-mode", "stall"});
    Bench b(all);
    std::vector<Master::Result> rs;
    b.program->body = [&] {
        b.attach();
        for (unsigned i = 0; i < 64; ++i) rs.push_back(b.master->read(kVa + i * 4096ull));
    };
    b.run();
    REQUIRE(rs.size() == 64);
    for (unsigned i = 0; i < 64; ++i) {
        CHECK(rs[i].status == tlm::TLM_OK_RESPONSE);
        CHECK(rs[i].data == slice(i, 0));
    }
    CHECK(b.counter("driver.faults") == faults);
    CHECK(b.counter("driver.resumes_retry") == faults);
    CHECK(b.counter("driver.pid1.faults") == faults);
    CHECK(b.counter("driver.pid1.pages") == 64);
    CHECK(b.resolve_calls == calls);
    CHECK(b.outcomes.size() == faults);
}
}   // namespace

TEST_CASE("touch-one: a sequential stream of 64 pages faults 64 times", "[smmu-driver]") {
    sequential_stream({{"fault-lib.policy", "touch-one"}}, 64, 64);
}

TEST_CASE("touch-ahead 16: a sequential stream of 64 pages faults 4 times", "[smmu-driver]") {
    sequential_stream({{"fault-lib.policy", "touch-ahead"}, {"fault-lib.ahead-pages", "16"}}, 4, 4);
}

TEST_CASE("touch-ahead 24: a range running past the mapping still resolves the faulting page", "[smmu-driver]") {
    // Faults at pages 0, 24, 48; the last range [48, 72) fails at 64, so the
    // library checks page 48 alone (one more call).
    sequential_stream({{"fault-lib.policy", "touch-ahead"}, {"fault-lib.ahead-pages", "24"}}, 3, 4);
}

// ---------------------------------------------------------------- contention

TEST_CASE("the handler waits for a free core when every core is busy", "[smmu-driver]") {
    Bench b(Settings{{"smmu-driver.fault-mode", "stall"}});
    Master::Result r;
    sc_time t0;
    b.program->body = [&] {
        t0 = b.attach();
        for (unsigned i = 0; i < 4; ++i) b.cpu->run("busy", t0, us(50), "busy");
        r = b.master->read(kVa);
    };
    b.run();
    const sc_time fault = t0 + kMiss + 4 * kMem;
    const sc_time start = t0 + us(50);
    REQUIRE(b.outcomes.size() == 1);
    CHECK(b.outcomes[0].fault.raised == fault);
    CHECK(b.outcomes[0].done == library_done(start, 1) + kReg);
    CHECK(r.status == tlm::TLM_OK_RESPONSE);
    CHECK(r.done == library_done(start, 1) + kReg + kMiss + 5 * kMem);
    const Histogram* w = b.stats.find_histogram("driver.irq_wait");
    REQUIRE(w);
    CHECK(w->max() == Approx(to_us(start - fault)));
}

// ---------------------------------------------------------------- invalidation

namespace {
// Map kVa -> page A, read it, remap to page B, optionally invalidate, read again.
void remap(bool invalidate, std::uint64_t len, const Settings& s, std::uint64_t writes, sc_time cost) {
    Bench b(s);
    b.pt->map_page(kVa, kPa + 1 * 4096);
    Master::Result before, after;
    sc_time at, done;
    b.program->body = [&] {
        b.attach();
        before = b.master->read(kVa);
        b.pt->map_page(kVa, kPa + 2 * 4096);
        if (invalidate) {
            at = sc_time_stamp();
            done = b.drv->invalidate(1, 1, kVa, len, at);
            wait(done - at);
        }
        after = b.master->read(kVa);
    };
    b.run();
    const auto a = slice(1, 0);
    const auto bb = slice(2, 0);
    CHECK(before.data == a);
    CHECK(after.data == (invalidate ? bb : a));
    CHECK(b.counter("driver.invalidations") == (invalidate ? 1u : 0u));
    CHECK(b.counter("driver.tlbi_writes") == writes);
    if (invalidate) {
        CHECK(done - at == cost);
        CHECK(b.counter("smmu.cb0.invalidations") == writes);
    }
}
}   // namespace

TEST_CASE("invalidate makes a remapped page visible to the SMMU", "[smmu-driver]") {
    // tlbi-page + TLBIVA (register + invalidation) + TLBSYNC + TLBSTATUS
    remap(true, 4096, {}, 1, ns(100) + kReg + kTlbi + 2 * kReg);
}

TEST_CASE("without invalidation the SMMU keeps the old translation", "[smmu-driver]") {
    remap(false, 4096, {}, 0, SC_ZERO_TIME);
}

TEST_CASE("invalidate issues one TLBIVA per page up to the threshold", "[smmu-driver]") {
    remap(true, 4 * 4096, {{"smmu-driver.tlbi-asid-threshold", "4"}}, 4, 4 * (ns(100) + kReg + kTlbi) + 2 * kReg);
}

TEST_CASE("invalidate by ASID beyond the threshold", "[smmu-driver]") {
    remap(true, 5 * 4096, {{"smmu-driver.tlbi-asid-threshold", "4"}}, 1, ns(100) + kReg + kTlbi + 2 * kReg);
}
