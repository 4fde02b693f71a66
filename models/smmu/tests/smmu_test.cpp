// Smmu500 through its sockets and registers, as the hardware is tested: a CPU
// programs the register file over MMIO, masters send transactions with a
// stream ID into TBUs, page tables live in memory (a Dram behind a Bus, or a
// contention-free memory where exact concurrent timing matters), and a tap
// on the walk port counts descriptor reads.
#include <catch2/catch.hpp>

#include "flat_memory.hpp"
#include "model_env.hpp"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <unistd.h>
#include <unordered_map>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "models/bus/bus.hpp"
#include "models/memory/dram.hpp"
#include "models/smmu/page_table_writer.hpp"
#include "models/smmu/smmu500.hpp"

using namespace vrdmasim;
using namespace sc_core;
namespace reg = vrdmasim::smmu_reg;

namespace {

sc_time ns(double v) { return sc_time(v, SC_NS); }

// Timing of the standard bench: SMMU at 500 MHz (2 ns), micro-TLB hit 2
// cycles, macro-TLB 4 more; Dram 100 ns + 1 ns per 64-byte burst; no bus
// latency; 20 ns per register access; 100 ns per invalidation.
const sc_time kHit = ns(4);
const sc_time kMiss = ns(12);   // micro + macro lookups before a walk starts
const sc_time kDram = ns(101);   // one uncontended access of <= 64 bytes
const sc_time kFlat = ns(100);   // one access to the contention-free memory
const sc_time kReg = ns(20);
const sc_time kTlbi = ns(100);

constexpr std::uint32_t kTerm = reg::SCTLR_M | reg::SCTLR_AFE | reg::SCTLR_CFRE | reg::SCTLR_CFIE;
constexpr std::uint32_t kStall = kTerm | reg::SCTLR_CFCFG;

using vrdmasim_test::FlatMemory;

// Counts the transactions that pass (the SMMU's walk port).
struct Tap : sc_module {
    tlm_utils::simple_target_socket<Tap> in{"in"};
    tlm_utils::simple_initiator_socket<Tap> out{"out"};
    unsigned count = 0;
    explicit Tap(sc_module_name n) : sc_module(n) {
        in.register_b_transport(this, &Tap::b_transport);
        in.register_transport_dbg(this, &Tap::transport_dbg);
    }
    void b_transport(tlm::tlm_generic_payload& gp, sc_time& d) {
        ++count;
        out->b_transport(gp, d);
    }
    unsigned transport_dbg(tlm::tlm_generic_payload& gp) { return out->transport_dbg(gp); }
};

// A master behind one TBU. access() may be called from any SC_THREAD.
struct Master : sc_module {
    tlm_utils::simple_initiator_socket<Master> socket{"socket"};
    std::function<void(Master&)> program;
    struct Result {
        tlm::tlm_response_status status = tlm::TLM_INCOMPLETE_RESPONSE;
        sc_time start, done;
        bool has_fault = false;
        SmmuFaultExtension fault;
        std::vector<unsigned char> data;
        sc_time latency() const { return done - start; }
    };
    explicit Master(sc_module_name n) : sc_module(n) {
        SC_HAS_PROCESS(Master);
        SC_THREAD(run);
    }
    void run() {
        if (program) program(*this);
    }
    // One transaction issued now; waits until it is done unless `sync` is false
    // (then the caller's next transaction is issued at the same time).
    Result access(std::uint32_t sid, bool write, std::uint64_t va, unsigned len, const unsigned char* wdata = nullptr,
                  bool sync = true) {
        Result r;
        tlm::tlm_generic_payload gp;
        auto* sx = new StreamIdExtension;   // owned by the payload
        sx->sid = sid;
        gp.set_extension(sx);
        r.data.assign(len, 0xAA);
        if (write && wdata) std::memcpy(r.data.data(), wdata, len);
        gp.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
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
        CHECK(gp.get_address() == va);   // the master sees its own address
        if (auto* f = gp.get_extension<SmmuFaultExtension>()) {
            r.has_fault = f->type != FaultType::None;
            r.fault = *f;
        }
        if (sync) wait(d);
        return r;
    }
    Result read(std::uint32_t sid, std::uint64_t va, unsigned len = 64, bool sync = true) {
        return access(sid, false, va, len, nullptr, sync);
    }
    Result write(std::uint32_t sid, std::uint64_t va, const std::vector<unsigned char>& d, bool sync = true) {
        return access(sid, true, va, static_cast<unsigned>(d.size()), d.data(), sync);
    }
};

// A CPU programming the SMMU over MMIO.
struct Cpu : sc_module {
    tlm_utils::simple_initiator_socket<Cpu> mmio{"mmio"};
    std::function<void(Cpu&)> program;
    sc_time last_delay;
    explicit Cpu(sc_module_name n) : sc_module(n) {
        SC_HAS_PROCESS(Cpu);
        SC_THREAD(run);
    }
    void run() {
        if (program) program(*this);
    }
    tlm::tlm_response_status access(bool write, std::uint64_t off, std::uint64_t& v, unsigned len) {
        tlm::tlm_generic_payload gp;
        gp.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
        gp.set_address(off);
        gp.set_data_ptr(reinterpret_cast<unsigned char*>(&v));
        gp.set_data_length(len);
        gp.set_streaming_width(len);
        sc_time d = SC_ZERO_TIME;
        mmio->b_transport(gp, d);
        last_delay = d;
        wait(d);
        return gp.get_response_status();
    }
    void w32(std::uint64_t off, std::uint64_t v) { REQUIRE(access(true, off, v, 4) == tlm::TLM_OK_RESPONSE); }
    void w64(std::uint64_t off, std::uint64_t v) { REQUIRE(access(true, off, v, 8) == tlm::TLM_OK_RESPONSE); }
    std::uint64_t r32(std::uint64_t off) {
        std::uint64_t v = 0;
        REQUIRE(access(false, off, v, 4) == tlm::TLM_OK_RESPONSE);
        return v;
    }
    std::uint64_t r64(std::uint64_t off) {
        std::uint64_t v = 0;
        REQUIRE(access(false, off, v, 8) == tlm::TLM_OK_RESPONSE);
        return v;
    }
    // SMR `idx` matches (id, mask) and its S2CR routes to `cb` (or `type`).
    void stream(unsigned idx, std::uint32_t id, std::uint32_t mask, unsigned cb, std::uint32_t type = 0) {
        w32(reg::S2CR(idx), (type << 16) | cb);
        w32(reg::SMR(idx), reg::SMR_VALID | (mask << 16) | id);
    }
    void context(unsigned cb, std::uint64_t root, std::uint16_t asid, unsigned t0sz, std::uint32_t sctlr) {
        w32(reg::CBAR(cb), 1u << 16);   // stage 1, stage 2 bypass
        w32(reg::CBA2R(cb), 1);   // AArch64
        w32(reg::cb(cb) + reg::TCR, t0sz);
        w64(reg::cb(cb) + reg::TTBR0, root | (static_cast<std::uint64_t>(asid) << 48));
        w32(reg::cb(cb) + reg::SCTLR, sctlr);
    }
    void enable(std::uint32_t extra = 0) { w32(reg::sCR0, reg::sCR0_GFRE | reg::sCR0_GFIE | extra); }
    std::uint32_t fsr(unsigned cb) { return static_cast<std::uint32_t>(r32(reg::cb(cb) + reg::FSR)); }
    void clear_fsr(unsigned cb) { w32(reg::cb(cb) + reg::FSR, 0xffffffffu); }
};

using vrdmasim_test::Settings;

const Settings kBenchDefaults = {{"dram.size", "64MiB"},
                                 {"dram.latency", "100ns"},
                                 {"dram.bandwidth", "64GB/s"},
                                 {"bus.latency", "0ps"},
                                 {"smmu.clock", "500MHz"},
                                 {"smmu.tlb-hit-cycles", "2"},
                                 {"smmu.macro-tlb-hit-cycles", "4"},
                                 {"smmu.register-latency", "20ns"},
                                 {"smmu.tlbi-time", "100ns"}};

struct Bench : vrdmasim_test::ModelEnv {
    std::unique_ptr<Dram> dram;
    std::unique_ptr<FlatMemory> flat;
    std::unique_ptr<Bus> bus;
    std::unique_ptr<Smmu500> smmu;
    std::unique_ptr<Tap> walk_tap;
    std::unique_ptr<Cpu> cpu;
    std::vector<std::unique_ptr<Master>> masters;
    tlm::tlm_fw_transport_if<>* mem = nullptr;
    std::uint64_t next_table = 0x100000;   // tables from 1 MiB on

    explicit Bench(const Settings& settings = {}, bool flat_memory = false, unsigned nmasters = 1)
        : ModelEnv({Smmu500::declare_params, Dram::declare_params, Bus::declare_params}, kBenchDefaults, settings) {
        bus = std::make_unique<Bus>("bus", ctx);
        smmu = std::make_unique<Smmu500>("smmu", ctx, "node0");
        walk_tap = std::make_unique<Tap>("walk_tap");
        cpu = std::make_unique<Cpu>("cpu");
        if (flat_memory) {
            flat = std::make_unique<FlatMemory>("flat", kFlat);
            bus->out.bind(flat->socket);
            mem = flat->socket.get_base_export().operator->();
        } else {
            dram = std::make_unique<Dram>("dram", ctx, "node0");
            bus->out.bind(dram->socket);
            mem = dram->socket.get_base_export().operator->();
        }
        bus->map(0, 64ull << 20, 0, 0, "ddr");
        smmu->out.bind(bus->in);
        smmu->walk.bind(walk_tap->in);
        walk_tap->out.bind(bus->in);
        cpu->mmio.bind(smmu->regs);
        for (unsigned i = 0; i < nmasters; ++i) {
            masters.push_back(std::make_unique<Master>(("master" + std::to_string(i)).c_str()));
            masters.back()->socket.bind(*smmu->tbu[i]);
        }
    }
    Master& master(unsigned i = 0) { return *masters.at(i); }
    PageTableWriter tables(unsigned t0sz = 16) {
        return PageTableWriter::over(
            *mem,
            [this] {
                next_table += 4096;
                return next_table - 4096;
            },
            t0sz);
    }
    void poke(std::uint64_t pa, const std::vector<unsigned char>& bytes) {
        tlm::tlm_generic_payload gp;
        gp.set_command(tlm::TLM_WRITE_COMMAND);
        gp.set_address(pa);
        gp.set_data_ptr(const_cast<unsigned char*>(bytes.data()));
        gp.set_data_length(static_cast<unsigned>(bytes.size()));
        REQUIRE(mem->transport_dbg(gp) == bytes.size());
    }
    std::vector<unsigned char> peek(std::uint64_t pa, std::size_t len) {
        std::vector<unsigned char> out(len);
        tlm::tlm_generic_payload gp;
        gp.set_command(tlm::TLM_READ_COMMAND);
        gp.set_address(pa);
        gp.set_data_ptr(out.data());
        gp.set_data_length(static_cast<unsigned>(len));
        REQUIRE(mem->transport_dbg(gp) == len);
        return out;
    }
    std::uint64_t smmu_counter(const std::string& name) const { return counter("smmu." + name); }
    void run() { sc_start(); }
};

std::vector<unsigned char> pattern(std::size_t len, unsigned seed) {
    std::vector<unsigned char> v(len);
    for (std::size_t i = 0; i < len; ++i) v[i] = static_cast<unsigned char>(seed * 31 + i * 7 + 1);
    return v;
}

constexpr std::uint64_t kVa = 0x10'0000'0000ull;   // 64 GiB: L0 index 0, L1 index 64
constexpr std::uint64_t kPa = 0x0100'0000ull;   // 16 MiB
constexpr std::uint32_t kSid = 0x0C10;   // TBU3, master 0, AXI ID 0x10

}   // namespace

// ---------------------------------------------------------------- translation

TEST_CASE("a 4 KiB page is walked through four levels and then hits in the micro-TLB", "[smmu]") {
    Bench b;
    auto pt = b.tables();
    pt.map_page(kVa, kPa);
    b.poke(kPa + 0x40, pattern(64, 1));
    Master::Result miss, hit, wr;
    unsigned reads_after_miss = 0;
    b.cpu->program = [&](Cpu& c) {
        c.context(0, pt.root(), 1, 16, kTerm);
        c.stream(0, kSid, 0, 0);
        c.enable();
        miss = b.master().read(kSid, kVa + 0x40);
        reads_after_miss = b.walk_tap->count;
        hit = b.master().read(kSid, kVa + 0x40);
        wr = b.master().write(kSid, kVa + 0x100, pattern(64, 2));
    };
    b.run();
    CHECK(miss.status == tlm::TLM_OK_RESPONSE);
    CHECK(miss.data == pattern(64, 1));
    CHECK(miss.latency() == kMiss + 4 * kDram + kDram);   // walk of 4 reads, then the data
    CHECK(reads_after_miss == 4);
    CHECK(hit.status == tlm::TLM_OK_RESPONSE);
    CHECK(hit.data == pattern(64, 1));
    CHECK(hit.latency() == kHit + kDram);
    CHECK(wr.status == tlm::TLM_OK_RESPONSE);
    CHECK(wr.latency() == kHit + kDram);
    CHECK(b.peek(kPa + 0x100, 64) == pattern(64, 2));
    CHECK(b.walk_tap->count == 4);   // hits read no descriptors
    CHECK(b.smmu_counter("tbu0.accesses") == 3);
    CHECK(b.smmu_counter("tbu0.micro_tlb_hits") == 2);
    CHECK(b.smmu_counter("tbu0.micro_tlb_misses") == 1);
    CHECK(b.smmu_counter("tcu.macro_tlb_misses") == 1);
    CHECK(b.smmu_counter("tcu.walks") == 1);
    CHECK(b.smmu_counter("tcu.walk_reads") == 4);
    CHECK(b.smmu_counter("cb0.translated") == 3);
    const Histogram* wl = b.stats.find_histogram("smmu.tcu.walk_latency");
    REQUIRE(wl);
    CHECK(wl->count() == 1);
    CHECK(wl->max() == Approx(404.0));
    // 3 TBU transactions + the register accesses of the set-up (5 + 2 + 1).
    CHECK(b.smmu_counter("transactions") == 3 + 8);
    CHECK(b.smmu_counter("register_accesses") == 8);
}

TEST_CASE("a TLB hit costs no memory access", "[smmu]") {
    Bench b;
    auto pt = b.tables();
    pt.map_page(kVa, kPa);
    b.cpu->program = [&](Cpu& c) {
        c.context(0, pt.root(), 1, 16, kTerm);
        c.stream(0, kSid, 0, 0);
        c.enable();
        for (int i = 0; i < 100; ++i) b.master().read(kSid, kVa + 64u * static_cast<unsigned>(i % 64));
    };
    b.run();
    CHECK(b.walk_tap->count == 4);
    CHECK(b.smmu_counter("tbu0.micro_tlb_hits") == 99);
    CHECK(b.smmu_counter("tcu.walks") == 1);
    CHECK(b.counter("dram.reads") == 4 + 100);
}

TEST_CASE("a 2 MiB block is walked in three levels and one entry covers its 512 pages", "[smmu]") {
    Bench b;
    auto pt = b.tables();
    constexpr std::uint64_t va = kVa + (6ull << 21), pa = 0x0200'0000;   // 32 MiB
    pt.map_block(va, pa);
    b.poke(pa + 0x1000, pattern(64, 3));
    b.poke(pa + 0x1ff000, pattern(64, 4));
    Master::Result first, last;
    b.cpu->program = [&](Cpu& c) {
        c.context(0, pt.root(), 1, 16, kTerm);
        c.stream(0, kSid, 0, 0);
        c.enable();
        first = b.master().read(kSid, va + 0x1000);
        last = b.master().read(kSid, va + 0x1ff000);
    };
    b.run();
    CHECK(first.data == pattern(64, 3));
    CHECK(first.latency() == kMiss + 3 * kDram + kDram);
    CHECK(last.data == pattern(64, 4));
    CHECK(last.latency() == kHit + kDram);
    CHECK(b.walk_tap->count == 3);
    CHECK(b.smmu_counter("tbu0.micro_tlb_hits") == 1);
}

TEST_CASE("T0SZ sets the first level walked and the input range", "[smmu]") {
    Bench b;
    // Three banks: 48-bit (start at level 0), 39-bit (level 1), 30-bit (level 2).
    auto pt48 = b.tables(16), pt39 = b.tables(25), pt30 = b.tables(34);
    constexpr std::uint64_t va = 0x3fff'f000;   // the last page of a 30-bit space
    pt48.map_page(va, kPa);
    pt39.map_page(va, kPa + 0x1000);
    pt30.map_page(va, kPa + 0x2000);
    for (unsigned i = 0; i < 3; ++i) b.poke(kPa + 0x1000 * i, pattern(64, 10 + i));
    Master::Result r[3], beyond30, beyond39;
    unsigned reads[3] = {};
    std::uint64_t fsynr30 = 0, fsynr39 = 0, far30 = 0;
    b.cpu->program = [&](Cpu& c) {
        c.context(0, pt48.root(), 1, 16, kTerm);
        c.context(1, pt39.root(), 1, 25, kTerm);
        c.context(2, pt30.root(), 1, 34, kTerm);
        for (unsigned i = 0; i < 3; ++i) c.stream(i, i + 1, 0, i);
        c.enable();
        for (unsigned i = 0; i < 3; ++i) {
            const unsigned before = b.walk_tap->count;
            r[i] = b.master().read(i + 1, va);
            reads[i] = b.walk_tap->count - before;
        }
        const unsigned before = b.walk_tap->count;
        beyond30 = b.master().read(3, 0x4000'0000);   // 2^30: outside a 30-bit space
        beyond39 = b.master().read(2, 0x80'0000'0000ull);   // 2^39
        CHECK(b.walk_tap->count == before);   // no descriptor read
        fsynr30 = c.r32(reg::cb(2) + reg::FSYNR0);
        far30 = c.r64(reg::cb(2) + reg::FAR);
        fsynr39 = c.r32(reg::cb(1) + reg::FSYNR0);
    };
    b.run();
    for (unsigned i = 0; i < 3; ++i) {
        CHECK(r[i].status == tlm::TLM_OK_RESPONSE);
        CHECK(r[i].data == pattern(64, 10 + i));
        CHECK(reads[i] == 4 - i);
        CHECK(r[i].latency() == kMiss + static_cast<double>(4 - i) * kDram + kDram);
    }
    CHECK(beyond30.status == tlm::TLM_GENERIC_ERROR_RESPONSE);
    CHECK(beyond30.fault.type == FaultType::Translation);
    CHECK(beyond30.fault.level == 2);
    CHECK(beyond30.latency() == kMiss);
    CHECK(fsynr30 == 2);
    CHECK(far30 == 0x4000'0000);
    CHECK(beyond39.fault.level == 1);
    CHECK(fsynr39 == 1);
}

TEST_CASE("translation faults at level 0 and level 3", "[smmu]") {
    Bench b;
    auto pt = b.tables();
    pt.map_page(kVa, kPa);
    Master::Result l0, l3;
    std::uint32_t fsr0 = 0, fsr3 = 0;
    std::uint64_t syn0 = 9, syn3 = 0, far3 = 0;
    unsigned reads0 = 0, reads3 = 0;
    b.cpu->program = [&](Cpu& c) {
        c.context(0, pt.root(), 1, 16, kTerm);
        c.stream(0, kSid, 0, 0);
        c.enable();
        l0 = b.master().read(kSid, 0x8000'0000'0000ull - 0x1000);   // L0 index 255: empty
        reads0 = b.walk_tap->count;
        fsr0 = c.fsr(0);
        syn0 = c.r32(reg::cb(0) + reg::FSYNR0);
        c.clear_fsr(0);
        l3 = b.master().write(kSid, kVa + 0x5000, pattern(8, 0));   // same L3 table, no page
        reads3 = b.walk_tap->count - reads0;
        fsr3 = c.fsr(0);
        syn3 = c.r32(reg::cb(0) + reg::FSYNR0);
        far3 = c.r64(reg::cb(0) + reg::FAR);
    };
    b.run();
    CHECK(l0.status == tlm::TLM_GENERIC_ERROR_RESPONSE);
    CHECK(l0.fault.level == 0);
    CHECK(reads0 == 1);
    CHECK(fsr0 == reg::FSR_TF);
    CHECK(syn0 == 0);
    CHECK(l3.status == tlm::TLM_GENERIC_ERROR_RESPONSE);
    CHECK(l3.fault.level == 3);
    CHECK(l3.fault.write);
    CHECK(reads3 == 4);
    CHECK(l3.latency() == kMiss + 4 * kDram);
    CHECK(fsr3 == reg::FSR_TF);
    CHECK(syn3 == (reg::FSYNR0_WNR | 3));
    CHECK(far3 == kVa + 0x5000);
    CHECK(b.smmu_counter("cb0.faults_translation") == 2);
    CHECK(b.smmu_counter("cb0.faults_read") == 1);
    CHECK(b.smmu_counter("cb0.faults_write") == 1);
    CHECK(b.smmu_counter("tbu0.faults") == 2);
}

TEST_CASE("a level-1 (1 GiB) block is used in 2 MiB slices", "[smmu]") {
    Bench b;
    auto pt = b.tables();
    pt.map_page(kVa, kPa);   // creates the L1 table that kVa's L0 entry points to
    constexpr std::uint64_t gva = kVa + (1ull << 30);   // the next 1 GiB of that L1 table
    std::uint64_t l0 = 0;
    {
        const auto bytes = b.peek(pt.root() + 8 * aarch64::index_of(gva, 0), 8);
        std::memcpy(&l0, bytes.data(), 8);
    }
    const std::uint64_t l1_table = l0 & aarch64::kAddrMask;
    const std::uint64_t desc = 0 /* PA 0 */ | PageTableWriter::leaf_bits({}) | aarch64::kValid;
    std::vector<unsigned char> d(8);
    std::memcpy(d.data(), &desc, 8);
    b.poke(l1_table + 8 * aarch64::index_of(gva, 1), d);
    b.poke(0x0123'4040, pattern(64, 5));
    b.poke(0x0120'0000, pattern(64, 6));
    b.poke(0x0000'1000, pattern(64, 7));
    Master::Result a, same_slice, other_slice;
    b.cpu->program = [&](Cpu& c) {
        c.context(0, pt.root(), 1, 16, kTerm);
        c.stream(0, kSid, 0, 0);
        c.enable();
        a = b.master().read(kSid, gva + 0x0123'4040);
        same_slice = b.master().read(kSid, gva + 0x0120'0000);
        other_slice = b.master().read(kSid, gva + 0x0000'1000);
    };
    b.run();
    CHECK(a.data == pattern(64, 5));
    CHECK(a.latency() == kMiss + 2 * kDram + kDram);
    CHECK(same_slice.data == pattern(64, 6));
    CHECK(same_slice.latency() == kHit + kDram);
    CHECK(other_slice.data == pattern(64, 7));
    CHECK(b.smmu_counter("tcu.walks") == 2);
}

TEST_CASE("a transaction across a page boundary is split and translated page by page", "[smmu]") {
    Bench b;
    auto pt = b.tables();
    pt.map_page(kVa, kPa + 0x5000);
    pt.map_page(kVa + 0x1000, kPa);   // not contiguous, lower PA
    b.poke(kPa + 0x5000 + 0xf80, pattern(128, 8));
    b.poke(kPa, pattern(128, 9));
    Master::Result rd, wr, bad;
    b.cpu->program = [&](Cpu& c) {
        c.context(0, pt.root(), 1, 16, kTerm);
        c.stream(0, kSid, 0, 0);
        c.enable();
        rd = b.master().read(kSid, kVa + 0xf80, 256);
        wr = b.master().write(kSid, kVa + 0xfc0, pattern(128, 10));
        bad = b.master().read(kSid, kVa + 0x1f80, 256);   // second half unmapped
    };
    b.run();
    auto expect = pattern(128, 8);
    const auto tail = pattern(128, 9);
    expect.insert(expect.end(), tail.begin(), tail.end());
    CHECK(rd.status == tlm::TLM_OK_RESPONSE);
    CHECK(rd.data == expect);
    CHECK(wr.status == tlm::TLM_OK_RESPONSE);
    const auto w = pattern(128, 10);
    CHECK(b.peek(kPa + 0x5000 + 0xfc0, 64) == std::vector<unsigned char>(w.begin(), w.begin() + 64));
    CHECK(b.peek(kPa, 64) == std::vector<unsigned char>(w.begin() + 64, w.end()));
    CHECK(bad.status == tlm::TLM_GENERIC_ERROR_RESPONSE);
    CHECK(bad.fault.address == kVa + 0x2000);
    CHECK(b.smmu_counter("tbu0.split_transactions") == 3);
}

// ---------------------------------------------------------------- faults, terminate

TEST_CASE("access flag fault: error response with the fault extension and the fault registers", "[smmu]") {
    Bench b;
    auto pt = b.tables();
    PageTableWriter::Attrs no_af;
    no_af.af = false;
    pt.map_page(kVa, kPa, no_af);
    b.poke(kPa, pattern(64, 11));
    Master::Result r, ok;
    std::uint32_t fsr = 0, syn = 0, frsynra = 0;
    std::uint64_t far = 0;
    b.cpu->program = [&](Cpu& c) {
        c.context(5, pt.root(), 1, 16, kTerm);
        c.stream(0, kSid, 0, 5);
        c.enable();
        r = b.master().read(kSid, kVa + 0x18, 8);
        fsr = c.fsr(5);
        syn = static_cast<std::uint32_t>(c.r32(reg::cb(5) + reg::FSYNR0));
        far = c.r64(reg::cb(5) + reg::FAR);
        frsynra = static_cast<std::uint32_t>(c.r32(reg::CBFRSYNRA(5)));
        c.clear_fsr(5);
        c.w32(reg::cb(5) + reg::SCTLR, kTerm & ~reg::SCTLR_AFE);   // AF no longer checked
        ok = b.master().read(kSid, kVa, 64);
    };
    b.run();
    CHECK(r.status == tlm::TLM_GENERIC_ERROR_RESPONSE);
    REQUIRE(r.has_fault);
    CHECK(r.fault.cb == 5);
    CHECK(r.fault.address == kVa + 0x18);
    CHECK_FALSE(r.fault.write);
    CHECK(r.fault.type == FaultType::AccessFlag);
    CHECK(r.fault.level == 3);
    CHECK(r.data == std::vector<unsigned char>(8, 0xAA));   // nothing read
    CHECK(r.latency() == kMiss + 4 * kDram);
    CHECK(fsr == reg::FSR_AFF);
    CHECK(syn == 3);
    CHECK(far == kVa + 0x18);
    CHECK(frsynra == kSid);
    CHECK(ok.status == tlm::TLM_OK_RESPONSE);
    CHECK(ok.data == pattern(64, 11));
    CHECK(b.smmu_counter("cb5.faults_access_flag") == 1);
}

TEST_CASE("permission fault on a write to a read-only page from a walk and from a TLB hit", "[smmu]") {
    Bench b;
    auto pt = b.tables();
    PageTableWriter::Attrs ro;
    ro.write = false;
    pt.map_page(kVa, kPa, ro);
    constexpr std::uint64_t blk = kVa + (4ull << 21), blk_pa = 0x0200'0000;
    pt.map_block(blk, blk_pa, ro);
    b.poke(kPa, pattern(64, 12));
    Master::Result w1, rd, w2, wb;
    std::uint32_t fsr = 0, syn1 = 0, syn2 = 0, synb = 0;
    unsigned reads_before_hit = 0, reads_after_hit = 0;
    b.cpu->program = [&](Cpu& c) {
        c.context(0, pt.root(), 1, 16, kTerm);
        c.stream(0, kSid, 0, 0);
        c.enable();
        w1 = b.master().write(kSid, kVa, pattern(64, 13));   // walk finds AP[2] set
        fsr = c.fsr(0);
        syn1 = static_cast<std::uint32_t>(c.r32(reg::cb(0) + reg::FSYNR0));
        c.clear_fsr(0);
        rd = b.master().read(kSid, kVa);   // fills the TLBs (read-only entry)
        reads_before_hit = b.walk_tap->count;
        w2 = b.master().write(kSid, kVa + 0x40, pattern(64, 13));   // TLB hit, not writable
        reads_after_hit = b.walk_tap->count;
        syn2 = static_cast<std::uint32_t>(c.r32(reg::cb(0) + reg::FSYNR0));
        c.clear_fsr(0);
        wb = b.master().write(kSid, blk + 0x3000, pattern(64, 13));
        synb = static_cast<std::uint32_t>(c.r32(reg::cb(0) + reg::FSYNR0));
    };
    b.run();
    CHECK(w1.status == tlm::TLM_GENERIC_ERROR_RESPONSE);
    CHECK(w1.fault.type == FaultType::Permission);
    CHECK(w1.fault.write);
    CHECK(w1.fault.level == 3);
    CHECK(fsr == reg::FSR_PF);
    CHECK(syn1 == (reg::FSYNR0_WNR | 3));
    CHECK(rd.status == tlm::TLM_OK_RESPONSE);
    CHECK(w2.status == tlm::TLM_GENERIC_ERROR_RESPONSE);
    CHECK(w2.fault.type == FaultType::Permission);
    CHECK(w2.latency() == kHit);   // found at the micro-TLB
    CHECK(reads_after_hit == reads_before_hit);
    CHECK(syn2 == (reg::FSYNR0_WNR | 3));
    CHECK(wb.fault.type == FaultType::Permission);
    CHECK(wb.fault.level == 2);
    CHECK(synb == (reg::FSYNR0_WNR | 2));
    CHECK(b.peek(kPa, 64) == pattern(64, 12));   // nothing written
    CHECK(b.peek(kPa + 0x40, 64) == std::vector<unsigned char>(64, 0));
    CHECK(b.smmu_counter("cb0.faults_permission") == 3);
    CHECK(b.smmu_counter("cb0.faults_write") == 3);
}

TEST_CASE("external fault when a descriptor read fails", "[smmu]") {
    Bench b;
    Master::Result r;
    std::uint32_t fsr = 0, syn = 0;
    b.cpu->program = [&](Cpu& c) {
        c.context(0, 0x1'0000'0000ull, 1, 16, kTerm);   // tables beyond the 64 MiB of memory
        c.stream(0, kSid, 0, 0);
        c.enable();
        r = b.master().read(kSid, kVa);
        fsr = c.fsr(0);
        syn = static_cast<std::uint32_t>(c.r32(reg::cb(0) + reg::FSYNR0));
    };
    b.run();
    CHECK(r.status == tlm::TLM_GENERIC_ERROR_RESPONSE);
    CHECK(r.fault.type == FaultType::External);
    CHECK(r.fault.level == 0);
    CHECK(fsr == reg::FSR_EF);
    CHECK(syn == (1u << 10));   // PTWF, level 0
    CHECK(b.smmu_counter("cb0.faults_external") == 1);
    CHECK(b.walk_tap->count == 1);
}

TEST_CASE("a reused payload's fault extension is written only on a fault, in place", "[smmu]") {
    Bench b;
    auto pt = b.tables();
    pt.map_page(kVa, kPa);
    SmmuFaultExtension* first = nullptr;
    SmmuFaultExtension* third = nullptr;
    std::uint64_t addr_after_ok = 0, addr_after_second_fault = 0;
    FaultType type_after_ok = FaultType::None;
    tlm::tlm_response_status st1 = tlm::TLM_INCOMPLETE_RESPONSE, st2 = st1, st3 = st1;
    b.cpu->program = [&](Cpu& c) {
        c.context(2, pt.root(), 1, 16, kTerm);
        c.stream(0, kSid, 0, 2);
        c.enable();
        tlm::tlm_generic_payload gp;   // one payload for all, as a DMA engine keeps one
        auto* sx = new StreamIdExtension;
        sx->sid = kSid;
        gp.set_extension(sx);
        unsigned char buf[64];
        gp.set_command(tlm::TLM_READ_COMMAND);
        gp.set_data_ptr(buf);
        gp.set_data_length(64);
        gp.set_streaming_width(64);
        auto issue = [&](std::uint64_t va) {
            gp.set_address(va);
            gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
            sc_time d = SC_ZERO_TIME;
            b.master().socket->b_transport(gp, d);
            wait(d);
            return gp.get_response_status();
        };
        st1 = issue(kVa + 0x3000);   // unmapped: a fault attaches the extension
        first = gp.get_extension<SmmuFaultExtension>();
        c.clear_fsr(2);
        st2 = issue(kVa);   // a hit: the extension is not touched
        if (auto* e = gp.get_extension<SmmuFaultExtension>()) {
            addr_after_ok = e->address;
            type_after_ok = e->type;
        }
        c.clear_fsr(2);
        st3 = issue(kVa + 0x5000);   // another fault: the same extension, overwritten
        third = gp.get_extension<SmmuFaultExtension>();
        if (third) addr_after_second_fault = third->address;
    };   // the payload frees the extension it holds
    b.run();
    CHECK(st1 == tlm::TLM_GENERIC_ERROR_RESPONSE);
    REQUIRE(first != nullptr);
    CHECK(st2 == tlm::TLM_OK_RESPONSE);
    // Untouched on success: the master reads it only after an error (or
    // resets it before each transaction, as the PLDMA does).
    CHECK(type_after_ok == FaultType::Translation);
    CHECK(addr_after_ok == kVa + 0x3000);
    CHECK(st3 == tlm::TLM_GENERIC_ERROR_RESPONSE);
    CHECK(third == first);
    CHECK(addr_after_second_fault == kVa + 0x5000);
}

TEST_CASE("MULTI: a second fault before FSR is cleared keeps the first syndrome", "[smmu]") {
    Bench b;
    auto pt = b.tables();
    pt.map_page(kVa, kPa);
    std::uint32_t fsr = 0, syn = 0, frsynra = 0, fsr_cleared = 1;
    std::uint64_t far = 0;
    b.cpu->program = [&](Cpu& c) {
        c.context(0, pt.root(), 1, 16, kTerm);
        c.stream(0, 0x20, 0x1, 0);   // streams 0x20 and 0x21
        c.enable();
        b.master().read(0x20, kVa + 0x1000);
        b.master().write(0x21, kVa + 0x2000, pattern(8, 1));
        fsr = c.fsr(0);
        syn = static_cast<std::uint32_t>(c.r32(reg::cb(0) + reg::FSYNR0));
        far = c.r64(reg::cb(0) + reg::FAR);
        frsynra = static_cast<std::uint32_t>(c.r32(reg::CBFRSYNRA(0)));
        c.clear_fsr(0);
        fsr_cleared = c.fsr(0);
    };
    b.run();
    CHECK(fsr == (reg::FSR_TF | reg::FSR_MULTI));
    CHECK(syn == 3);   // the first fault: a read at level 3
    CHECK(far == kVa + 0x1000);
    CHECK(frsynra == 0x20);
    CHECK(fsr_cleared == 0);
    CHECK(b.smmu_counter("cb0.faults_multi") == 1);
    CHECK(b.smmu_counter("cb0.faults_translation") == 2);
}

TEST_CASE("fault registers follow simulated time: a fault recorded early for a later time is not seen before it",
          "[smmu][causality]") {
    // Master 0 runs ahead (loosely timed): at 1 us it issues a faulting read
    // annotated 5 us later, so its fault is recorded first, for 6 us. Master
    // 1's fault comes at 2 us, recorded second. The handler reading at 3 us
    // must see master 1's fault alone; master 0's reaches the registers at
    // 6 us. (Once, FAR showed master 0's fault at 3 us, with FSR.MULTI: a
    // fault seen 3 us before it happened.)
    Bench b({}, false, 2);
    auto pt = b.tables();
    pt.map_page(kVa, kPa);
    std::uint32_t fsr_early = 0, fsr_late = 0, fsr_cleared = 1;
    std::uint64_t far_early = 0, far_late = 0;
    b.cpu->program = [&](Cpu& c) {
        c.context(0, pt.root(), 1, 16, kTerm);
        c.stream(0, 0x20, 0x1, 0);   // streams 0x20 and 0x21
        c.enable();
        wait(sc_time(3, SC_US) - sc_time_stamp());
        fsr_early = c.fsr(0);
        far_early = c.r64(reg::cb(0) + reg::FAR);
        c.clear_fsr(0);
        fsr_cleared = c.fsr(0);
        wait(sc_time(8, SC_US) - sc_time_stamp());
        fsr_late = c.fsr(0);
        far_late = c.r64(reg::cb(0) + reg::FAR);
    };
    b.master(0).program = [&](Master& m) {
        wait(sc_time(1, SC_US));
        tlm::tlm_generic_payload gp;
        auto* sx = new StreamIdExtension;
        sx->sid = 0x20;
        gp.set_extension(sx);
        unsigned char data[64] = {};
        gp.set_command(tlm::TLM_READ_COMMAND);
        gp.set_address(kVa + 0x5000);
        gp.set_data_ptr(data);
        gp.set_data_length(64);
        gp.set_streaming_width(64);
        sc_time d(5, SC_US);   // this master's local time is 5 us ahead
        m.socket->b_transport(gp, d);
        CHECK(gp.get_response_status() == tlm::TLM_GENERIC_ERROR_RESPONSE);
    };
    b.master(1).program = [&](Master& m) {
        wait(sc_time(2, SC_US));
        m.read(0x21, kVa + 0x1000);
    };
    b.run();
    CHECK(fsr_early == reg::FSR_TF);   // one fault, no MULTI
    CHECK(far_early == kVa + 0x1000);   // master 1's
    CHECK(fsr_cleared == 0);
    CHECK(fsr_late == reg::FSR_TF);   // master 0's, at its own time
    CHECK(far_late == kVa + 0x5000);
    CHECK(b.smmu_counter("cb0.faults_multi") == 0);
}

TEST_CASE("CFRE=0: a terminated fault answers OKAY and reads as zero and drops writes", "[smmu]") {
    Bench b;
    auto pt = b.tables();
    pt.map_page(kVa, kPa);
    Master::Result rd, wr;
    std::uint32_t fsr1 = 0, fsr2 = 0;
    b.cpu->program = [&](Cpu& c) {
        c.context(0, pt.root(), 1, 16, kTerm & ~reg::SCTLR_CFRE);
        c.stream(0, kSid, 0, 0);
        c.enable();
        rd = b.master().read(kSid, kVa + 0x1000);
        fsr1 = c.fsr(0);
        c.clear_fsr(0);
        wr = b.master().write(kSid, kVa + 0x1000, pattern(64, 3));
        fsr2 = c.fsr(0);
    };
    b.run();
    CHECK(rd.status == tlm::TLM_OK_RESPONSE);
    CHECK(rd.data == std::vector<unsigned char>(64, 0));
    CHECK_FALSE(rd.has_fault);
    CHECK(wr.status == tlm::TLM_OK_RESPONSE);
    CHECK_FALSE(wr.has_fault);
    CHECK(fsr1 == reg::FSR_TF);
    CHECK(fsr2 == reg::FSR_TF);
    CHECK(b.counter("dram.writes") == 0);   // the write reached no memory
    CHECK(b.smmu_counter("cb0.faults_translation") == 2);
}

TEST_CASE("a context bank is made, with its statistics, when it is first used", "[smmu]") {
    Bench b;
    // Nothing made at construction; the sums over banks read 0, not a
    // missing statistic.
    CHECK(b.stats.find_counter("smmu.cb0.translated") == nullptr);
    CHECK(b.stats.require_sum_counters("faults_translation") == 0);
    CHECK(b.stats.require_merge_histograms("stall_time").count() == 0);
    CHECK_THROWS_AS(b.stats.require_sum_counters("no_such_statistic"), std::logic_error);
    auto pt = b.tables();
    pt.map_page(kVa, kPa);
    bool after_reads = true, after_tlbi = true, cb0_made = false;
    b.cpu->program = [&](Cpu& c) {
        // Reads of a bank never used give its reset values and make nothing.
        CHECK(c.r32(reg::cb(3) + reg::SCTLR) == 0);
        CHECK(c.r32(reg::cb(3) + reg::FSR) == 0);
        CHECK(c.r64(reg::cb(3) + reg::TTBR0) == 0);
        CHECK(c.r32(reg::CBAR(3)) == 0);
        after_reads = b.stats.find_counter("smmu.cb3.translated") != nullptr;
        c.context(0, pt.root(), 1, 16, kTerm);
        c.stream(0, kSid, 0, 0);
        c.enable();
        cb0_made = b.stats.find_counter("smmu.cb0.translated") != nullptr;
        c.w32(reg::TLBIALLNSNH, 0);   // every bank made so far, no other
        after_tlbi = b.stats.find_counter("smmu.cb1.invalidations") != nullptr;
        c.w32(reg::cb(5) + reg::MAIR0, 0x44);   // any register write makes a bank
        CHECK(b.master().read(kSid, kVa).status == tlm::TLM_OK_RESPONSE);
    };
    b.run();
    CHECK_FALSE(after_reads);
    CHECK(cb0_made);
    CHECK_FALSE(after_tlbi);
    CHECK(b.smmu_counter("global_invalidations") == 1);
    CHECK(b.smmu_counter("cb0.invalidations") == 1);
    CHECK(b.smmu_counter("cb0.translated") == 1);
    CHECK(b.smmu_counter("cb5.translated") == 0);   // made by its MAIR0 write
    CHECK(b.stats.find_counter("smmu.cb3.translated") == nullptr);
    CHECK(b.stats.require_sum_counters("translated") == 1);
}

TEST_CASE("the shared interrupt follows FSR and CFIE of every bank", "[smmu]") {
    Bench b;
    auto pt = b.tables();
    pt.map_page(kVa, kPa);
    bool high_after_f0 = false, cb0_irq = false, still_high = false, low_after_all = true, cb2_irq_off = true,
         high_on_cfie = false, cb2_irq_on = false, low_end = true;
    sc_time since_f0, f0_done, since_cfie, cfie_write;
    b.cpu->program = [&](Cpu& c) {
        for (unsigned cb = 0; cb < 3; ++cb) {
            c.context(cb, pt.root(), 1, 16, cb == 2 ? kTerm & ~reg::SCTLR_CFIE : kTerm);
            c.stream(cb, kSid + cb, 0, cb);
        }
        c.enable();
        CHECK_FALSE(b.smmu->irq.high());
        f0_done = b.master().read(kSid, kVa + 0x1000).done;
        high_after_f0 = b.smmu->irq.high();
        since_f0 = b.smmu->irq.since();
        cb0_irq = b.smmu->context_irq(0, sc_core::sc_max_time());
        b.master().read(kSid + 2, kVa + 0x1000);   // cb2: CFIE off
        cb2_irq_off = b.smmu->context_irq(2, sc_core::sc_max_time());
        b.master().read(kSid + 1, kVa + 0x1000);   // cb1
        c.clear_fsr(0);
        still_high = b.smmu->irq.high();
        c.clear_fsr(1);
        low_after_all = b.smmu->irq.high();
        cfie_write = sc_time_stamp() + kReg;
        c.w32(reg::cb(2) + reg::SCTLR, kTerm);   // CFIE on with TF pending
        high_on_cfie = b.smmu->irq.high();
        since_cfie = b.smmu->irq.since();
        cb2_irq_on = b.smmu->context_irq(2, sc_core::sc_max_time());
        c.clear_fsr(2);
        low_end = b.smmu->irq.high();
    };
    b.run();
    CHECK(high_after_f0);
    CHECK(since_f0 == f0_done);   // raised at the fault time (the error response's time)
    CHECK(cb0_irq);
    CHECK_FALSE(cb2_irq_off);
    CHECK(still_high);
    CHECK_FALSE(low_after_all);
    CHECK(high_on_cfie);
    CHECK(since_cfie == cfie_write);
    CHECK(cb2_irq_on);
    CHECK_FALSE(low_end);
    CHECK(b.smmu->irq.raises() == 2);
}

// ---------------------------------------------------------------- stall

namespace {
// One master faults on `va` in stall mode; the CPU takes the interrupt, runs
// `fix`, clears FSR and writes RESUME with `resume` at a recorded time.
struct StallRun {
    Master::Result r;
    std::uint32_t fsr_seen = 0, fsr_after = 1;
    std::uint64_t far_seen = 0;
    sc_time irq_at, resume_at;
};
}   // namespace

TEST_CASE("stall: RESUME retry re-walks and completes the transaction", "[smmu]") {
    Bench b;
    auto pt = b.tables();
    pt.map_page(kVa + 0x1000, kPa + 0x1000);   // tables exist; kVa itself is not mapped
    b.poke(kPa, pattern(64, 20));
    StallRun s;
    const sc_time t0 = sc_time(10, SC_US);
    b.master().program = [&](Master& m) {
        wait(t0);
        s.r = m.read(kSid, kVa);
    };
    b.cpu->program = [&](Cpu& c) {
        c.context(0, pt.root(), 1, 16, kStall);
        c.stream(0, kSid, 0, 0);
        c.enable();
        wait(b.smmu->irq.event());
        s.irq_at = sc_time_stamp();
        s.fsr_seen = c.fsr(0);
        s.far_seen = c.r64(reg::cb(0) + reg::FAR);
        pt.map_page(kVa, kPa);   // the fault handler makes the page present
        c.w32(reg::cb(0) + reg::FSR, s.fsr_seen);
        s.resume_at = sc_time_stamp() + kReg;
        c.w32(reg::cb(0) + reg::RESUME, 0);
        s.fsr_after = c.fsr(0);
    };
    b.run();
    CHECK(s.irq_at == t0 + kMiss + 4 * kDram);
    CHECK(s.fsr_seen == (reg::FSR_TF | reg::FSR_SS));
    CHECK(s.far_seen == kVa);
    CHECK(s.fsr_after == 0);
    CHECK(s.r.status == tlm::TLM_OK_RESPONSE);
    CHECK(s.r.data == pattern(64, 20));
    // Retry: the walk cache holds levels 0-2, so one descriptor read, then the data.
    CHECK(s.r.done == s.resume_at + kMiss + kDram + kDram);
    CHECK(s.resume_at == s.irq_at + 4 * kReg);
    CHECK(b.smmu_counter("cb0.stalled_transactions") == 1);
    CHECK(b.smmu_counter("cb0.resumes_retry") == 1);
    CHECK(b.smmu_counter("tcu.walk_cache_hits") == 1);
    const Histogram* h = b.stats.find_histogram("smmu.cb0.stall_time");
    REQUIRE(h);
    CHECK(h->count() == 1);
    CHECK(h->max() == Approx(0.08));   // us
}

TEST_CASE("stall: RESUME terminate ends the transaction with an abort", "[smmu]") {
    Bench b;
    auto pt = b.tables();
    pt.map_page(kVa + 0x1000, kPa);
    StallRun s;
    b.master().program = [&](Master& m) {
        wait(10, SC_US);
        s.r = m.write(kSid, kVa, pattern(64, 1));
    };
    b.cpu->program = [&](Cpu& c) {
        c.context(1, pt.root(), 1, 16, kStall);
        c.stream(0, kSid, 0, 1);
        c.enable();
        wait(b.smmu->irq.event());
        s.fsr_seen = c.fsr(1);
        c.clear_fsr(1);
        s.resume_at = sc_time_stamp() + kReg;
        c.w32(reg::cb(1) + reg::RESUME, reg::RESUME_TERMINATE);
        s.fsr_after = c.fsr(1);
    };
    b.run();
    CHECK(s.fsr_seen == (reg::FSR_TF | reg::FSR_SS));
    CHECK(s.fsr_after == 0);
    CHECK(s.r.status == tlm::TLM_GENERIC_ERROR_RESPONSE);
    REQUIRE(s.r.has_fault);
    CHECK(s.r.fault.cb == 1);
    CHECK(s.r.fault.write);
    CHECK(s.r.fault.type == FaultType::Translation);
    CHECK(s.r.fault.address == kVa);
    CHECK(s.r.done == s.resume_at);
    CHECK(b.smmu_counter("cb1.resumes_terminate") == 1);
    CHECK(b.counter("dram.writes") == 0);
}

TEST_CASE("stall: RESUME is ignored until FSR's fault bits are cleared", "[smmu]") {
    Bench b;
    auto pt = b.tables();
    pt.map_page(kVa + 0x1000, kPa + 0x1000);
    b.poke(kPa, pattern(64, 21));
    StallRun s;
    bool done_early = true;
    b.master().program = [&](Master& m) {
        wait(10, SC_US);
        s.r = m.read(kSid, kVa);
    };
    b.cpu->program = [&](Cpu& c) {
        c.context(0, pt.root(), 1, 16, kStall);
        c.stream(0, kSid, 0, 0);
        c.enable();
        c.w32(reg::cb(0) + reg::RESUME, 0);   // nothing stalled: ignored
        wait(b.smmu->irq.event());
        pt.map_page(kVa, kPa);
        c.w32(reg::cb(0) + reg::RESUME, 0);   // FSR.TF still set: ignored
        wait(1, SC_US);
        done_early = s.r.status != tlm::TLM_INCOMPLETE_RESPONSE;
        s.fsr_seen = c.fsr(0);
        c.clear_fsr(0);
        s.resume_at = sc_time_stamp() + kReg;
        c.w32(reg::cb(0) + reg::RESUME, 0);
    };
    b.run();
    CHECK_FALSE(done_early);
    CHECK(s.fsr_seen == (reg::FSR_TF | reg::FSR_SS));
    CHECK(s.r.status == tlm::TLM_OK_RESPONSE);
    CHECK(s.r.data == pattern(64, 21));
    CHECK(s.r.done == s.resume_at + kMiss + kDram + kDram);
    CHECK(b.smmu_counter("cb0.resumes_ignored") == 2);
    CHECK(b.smmu_counter("cb0.resumes_retry") == 1);
}

TEST_CASE("stall: every fault type stalls and completes after the handler fixes it", "[smmu]") {
    Bench b;
    auto pt = b.tables();
    PageTableWriter::Attrs no_af, ro;
    no_af.af = false;
    ro.write = false;
    pt.map_page(kVa, kPa, no_af);   // access flag fault
    pt.map_page(kVa + 0x1000, kPa + 0x1000, ro);   // permission fault on write
    pt.map_page(kVa + 0x3000, kPa + 0x3000);   // external fault: TTBR0 is wrong at first
    // translation fault: kVa + 0x2000 unmapped
    for (unsigned i = 0; i < 4; ++i) b.poke(kPa + 0x1000 * i, pattern(64, 30 + i));
    Master::Result r[4];
    std::uint32_t fsr[4] = {};
    const std::uint64_t good_ttbr = pt.root() | (1ull << 48);
    b.master().program = [&](Master& m) {
        wait(10, SC_US);
        r[0] = m.read(kSid, kVa + 0x3000);   // external (bad tables)
        r[1] = m.read(kSid, kVa);   // access flag
        r[2] = m.write(kSid, kVa + 0x1000, pattern(64, 40));   // permission
        r[3] = m.read(kSid, kVa + 0x2000);   // translation
    };
    b.cpu->program = [&](Cpu& c) {
        c.context(0, 0x1'0000'0000ull, 1, 16, kStall);
        c.stream(0, kSid, 0, 0);
        c.enable();
        for (int i = 0; i < 4; ++i) {
            wait(b.smmu->irq.event());
            fsr[i] = c.fsr(0);
            switch (i) {
            case 0: c.w64(reg::cb(0) + reg::TTBR0, good_ttbr); break;
            case 1: pt.map_page(kVa, kPa); break;
            case 2: pt.map_page(kVa + 0x1000, kPa + 0x1000); break;
            case 3: pt.map_page(kVa + 0x2000, kPa + 0x2000); break;
            }
            c.clear_fsr(0);
            c.w32(reg::cb(0) + reg::RESUME, 0);
        }
    };
    b.run();
    CHECK(fsr[0] == (reg::FSR_EF | reg::FSR_SS));
    CHECK(fsr[1] == (reg::FSR_AFF | reg::FSR_SS));
    CHECK(fsr[2] == (reg::FSR_PF | reg::FSR_SS));
    CHECK(fsr[3] == (reg::FSR_TF | reg::FSR_SS));
    for (int i = 0; i < 4; ++i) CHECK(r[i].status == tlm::TLM_OK_RESPONSE);
    CHECK(r[0].data == pattern(64, 33));
    CHECK(r[1].data == pattern(64, 30));
    CHECK(b.peek(kPa + 0x1000, 64) == pattern(64, 40));
    CHECK(r[3].data == pattern(64, 32));
    CHECK(b.smmu_counter("cb0.stalled_transactions") == 4);
    CHECK(b.smmu_counter("cb0.resumes_retry") == 4);
}

TEST_CASE("HUPCF=0: a TLB hit waits behind a stalled transaction of its bank", "[smmu]") {
    Bench b({}, true, 2);
    auto pt = b.tables();
    pt.map_page(kVa, kPa);   // A: warmed into master1's TLB
    b.poke(kPa, pattern(64, 50));
    b.poke(kPa + 0x1000, pattern(64, 51));
    const sc_time t0 = sc_time(10, SC_US);
    Master::Result stalled, held;
    sc_time resume_at;
    b.master(0).program = [&](Master& m) {
        wait(t0);
        stalled = m.read(kSid, kVa + 0x1000);   // B: not mapped -> stalls at t0 + 12 + 100
    };
    b.master(1).program = [&](Master& m) {
        wait(1, SC_US);
        m.read(kSid, kVa);   // warm-up: fills TBU1's micro-TLB
        wait(t0 + ns(500) - sc_time_stamp());
        held = m.read(kSid, kVa);   // a hit, but HUPCF=0
    };
    b.cpu->program = [&](Cpu& c) {
        c.context(0, pt.root(), 1, 16, kStall);
        c.stream(0, kSid, 0, 0);
        c.enable();
        wait(b.smmu->irq.event());
        wait(t0 + sc_time(2, SC_US) - sc_time_stamp());
        pt.map_page(kVa + 0x1000, kPa + 0x1000);
        c.clear_fsr(0);
        resume_at = sc_time_stamp() + kReg;
        c.w32(reg::cb(0) + reg::RESUME, 0);
    };
    b.run();
    CHECK(stalled.status == tlm::TLM_OK_RESPONSE);
    CHECK(stalled.data == pattern(64, 51));
    CHECK(stalled.done == resume_at + kMiss + kFlat + kFlat);
    CHECK(held.status == tlm::TLM_OK_RESPONSE);
    CHECK(held.data == pattern(64, 50));
    CHECK(held.start == t0 + ns(500));
    CHECK(held.done == resume_at + kHit + kFlat);
    CHECK(b.smmu_counter("cb0.held_behind_stall") == 1);
    CHECK(b.smmu_counter("tbu1.micro_tlb_hits") == 1);
}

TEST_CASE("HUPCF=1: TLB hits pass a stalled transaction and misses wait", "[smmu]") {
    Bench b({}, true, 2);
    auto pt = b.tables();
    pt.map_page(kVa, kPa);   // A
    pt.map_page(kVa + 0x2000, kPa + 0x2000);   // C: mapped but not in any TLB
    b.poke(kPa, pattern(64, 52));
    b.poke(kPa + 0x2000, pattern(64, 53));
    const sc_time t0 = sc_time(10, SC_US);
    Master::Result stalled, hit, miss;
    sc_time resume_at;
    b.master(0).program = [&](Master& m) {
        wait(t0);
        stalled = m.read(kSid, kVa + 0x1000);
    };
    b.master(1).program = [&](Master& m) {
        wait(1, SC_US);
        m.read(kSid, kVa);
        wait(t0 + ns(500) - sc_time_stamp());
        hit = m.read(kSid, kVa);
        wait(t0 + ns(1000) - sc_time_stamp());
        miss = m.read(kSid, kVa + 0x2000);
    };
    b.cpu->program = [&](Cpu& c) {
        c.context(0, pt.root(), 1, 16, kStall | reg::SCTLR_HUPCF);
        c.stream(0, kSid, 0, 0);
        c.enable();
        wait(b.smmu->irq.event());
        wait(t0 + sc_time(2, SC_US) - sc_time_stamp());
        c.clear_fsr(0);
        resume_at = sc_time_stamp() + kReg;
        c.w32(reg::cb(0) + reg::RESUME, reg::RESUME_TERMINATE);
    };
    b.run();
    CHECK(stalled.status == tlm::TLM_GENERIC_ERROR_RESPONSE);
    CHECK(stalled.done == resume_at);
    CHECK(hit.status == tlm::TLM_OK_RESPONSE);
    CHECK(hit.done == t0 + ns(500) + kHit + kFlat);   // long before the resume
    CHECK(miss.status == tlm::TLM_OK_RESPONSE);
    CHECK(miss.data == pattern(64, 53));
    CHECK(miss.done == resume_at + kMiss + kFlat + kFlat);   // waited, then walked (1 read: walk cache)
    CHECK(b.smmu_counter("cb0.held_behind_stall") == 1);
}

// ---------------------------------------------------------------- stream matching, bypass

TEST_CASE("stream matching with masks and unmatched streams bypassing or faulting per sCR0.USFCFG", "[smmu]") {
    Bench b;
    auto pt1 = b.tables(), pt2 = b.tables();
    constexpr std::uint64_t va = 0x0300'0000;   // also a physical address (for bypass)
    pt1.map_page(va, kPa + 0x1000);
    pt2.map_page(va, kPa + 0x2000);
    b.poke(va, pattern(64, 60));
    b.poke(kPa + 0x1000, pattern(64, 61));
    b.poke(kPa + 0x2000, pattern(64, 62));
    Master::Result masked, exact, unmatched, invalid_smr, faulted, rerouted;
    std::uint32_t gfsr = 0, gfsynr1 = 0, gfsr_after = 1;
    std::uint64_t gfar = 0;
    bool irq_high = false, irq_after = true;
    b.cpu->program = [&](Cpu& c) {
        c.context(1, pt1.root(), 1, 16, kTerm);
        c.context(2, pt2.root(), 1, 16, kTerm);
        c.stream(0, 0x0C00, 0x003F, 1);   // 0x0C00..0x0C3F -> cb1
        c.stream(1, 0x1000, 0, 2);   // exactly 0x1000 -> cb2
        c.w32(reg::S2CR(2), 2);
        c.w32(reg::SMR(2), 0x2000);   // not VALID: never matches
        c.enable();   // USFCFG = 0: unmatched streams bypass
        masked = b.master().read(0x0C2A, va);
        exact = b.master().read(0x1000, va);
        unmatched = b.master().read(0x0C40, va);
        invalid_smr = b.master().read(0x2000, va);
        c.enable(reg::sCR0_USFCFG);
        faulted = b.master().read(0x1001, va);
        gfsr = static_cast<std::uint32_t>(c.r32(reg::sGFSR));
        gfsynr1 = static_cast<std::uint32_t>(c.r32(0x54));
        gfar = c.r64(reg::sGFAR);
        irq_high = b.smmu->irq.high();
        c.w32(reg::sGFSR, gfsr);
        gfsr_after = static_cast<std::uint32_t>(c.r32(reg::sGFSR));
        irq_after = b.smmu->irq.high();
        c.stream(1, 0x1001, 0, 2);   // reprogram: now 0x1001 -> cb2
        rerouted = b.master().read(0x1001, va);
    };
    b.run();
    CHECK(masked.data == pattern(64, 61));
    CHECK(exact.data == pattern(64, 62));
    CHECK(unmatched.status == tlm::TLM_OK_RESPONSE);
    CHECK(unmatched.data == pattern(64, 60));   // bypass: physical address = input address
    CHECK(unmatched.latency() == kHit + kDram);
    CHECK(invalid_smr.data == pattern(64, 60));
    CHECK(faulted.status == tlm::TLM_GENERIC_ERROR_RESPONSE);
    REQUIRE(faulted.has_fault);
    CHECK(faulted.fault.cb == -1);
    CHECK(gfsr == reg::sGFSR_USF);
    CHECK(gfsynr1 == 0x1001);
    CHECK(gfar == va);
    CHECK(irq_high);
    CHECK(gfsr_after == 0);
    CHECK_FALSE(irq_after);
    CHECK(rerouted.data == pattern(64, 62));
    CHECK(b.smmu_counter("cb1.translated") == 1);
    CHECK(b.smmu_counter("cb2.translated") == 2);
    CHECK(b.smmu_counter("unmatched_streams") == 3);
    CHECK(b.smmu_counter("global_faults") == 1);
}

TEST_CASE("bypass by sCR0.CLIENTPD at reset and S2CR bypass and SCTLR.M=0 and faults by S2CR fault and a bad CBNDX",
          "[smmu]") {
    Bench b;
    auto pt = b.tables();
    constexpr std::uint64_t va = 0x0300'0000;
    pt.map_page(va, kPa);
    b.poke(va, pattern(64, 70));
    b.poke(kPa, pattern(64, 71));
    Master::Result reset, s2cr_bypass, m_off, s2cr_fault, bad_cb, translated;
    std::uint32_t scr0 = 0, gfsr_fault = 0, gfsr_bad = 0;
    b.cpu->program = [&](Cpu& c) {
        scr0 = static_cast<std::uint32_t>(c.r32(reg::sCR0));
        reset = b.master().read(kSid, va);   // CLIENTPD = 1 after reset
        c.context(0, pt.root(), 1, 16, kTerm & ~reg::SCTLR_M);
        c.stream(0, kSid, 0, 0, 1);   // S2CR type bypass
        c.enable();
        s2cr_bypass = b.master().read(kSid, va);
        c.stream(0, kSid, 0, 0, 0);   // translate, but SCTLR.M = 0
        m_off = b.master().read(kSid, va);
        c.stream(0, kSid, 0, 0, 2);   // S2CR type fault
        s2cr_fault = b.master().read(kSid, va);
        gfsr_fault = static_cast<std::uint32_t>(c.r32(reg::sGFSR));
        c.w32(reg::sGFSR, 0xffffffff);
        c.stream(0, kSid, 0, 20, 0);   // CBNDX beyond the 16 banks
        bad_cb = b.master().read(kSid, va);
        gfsr_bad = static_cast<std::uint32_t>(c.r32(reg::sGFSR));
        c.w32(reg::sGFSR, 0xffffffff);
        c.stream(0, kSid, 0, 0, 0);
        c.w32(reg::cb(0) + reg::SCTLR, kTerm);
        translated = b.master().read(kSid, va);
    };
    b.run();
    CHECK(scr0 == reg::sCR0_CLIENTPD);
    CHECK(reset.data == pattern(64, 70));
    CHECK(reset.latency() == kHit + kDram);
    CHECK(s2cr_bypass.data == pattern(64, 70));
    CHECK(m_off.data == pattern(64, 70));
    CHECK(s2cr_fault.status == tlm::TLM_GENERIC_ERROR_RESPONSE);
    CHECK(gfsr_fault == reg::sGFSR_USF);
    CHECK(bad_cb.status == tlm::TLM_GENERIC_ERROR_RESPONSE);
    CHECK(gfsr_bad == 1u);   // ICF
    CHECK(translated.data == pattern(64, 71));
    CHECK(b.smmu_counter("cb0.bypassed") == 1);
    CHECK(b.smmu_counter("tbu0.bypassed") == 3);
    CHECK(b.walk_tap->count == 4);
}

TEST_CASE("a transaction without a stream ID is an error", "[smmu]") {
    Bench b;
    tlm::tlm_response_status st = tlm::TLM_INCOMPLETE_RESPONSE;
    b.cpu->program = [&](Cpu&) {
        tlm::tlm_generic_payload gp;
        unsigned char buf[8];
        gp.set_command(tlm::TLM_READ_COMMAND);
        gp.set_address(0x1000);
        gp.set_data_ptr(buf);
        gp.set_data_length(8);
        gp.set_streaming_width(8);
        sc_time d = SC_ZERO_TIME;
        b.master().socket->b_transport(gp, d);
        st = gp.get_response_status();
    };
    b.run();
    CHECK(st == tlm::TLM_GENERIC_ERROR_RESPONSE);
    CHECK(b.smmu_counter("missing_stream_id") == 1);
    CHECK(b.counter("dram.reads") == 0);
}

// ---------------------------------------------------------------- invalidation

namespace {
enum class Kind { Va, Vaa, Asid, All, AllNsnh };

// Map kVa -> A, read (fills the TLBs), remap kVa -> B: reads still see A
// until the invalidation, then B.
void invalidation_test(Kind kind) {
    Bench b;
    auto pt = b.tables();
    pt.map_page(kVa, kPa);
    b.poke(kPa, pattern(64, 80));
    b.poke(kPa + 0x8000, pattern(64, 81));
    Master::Result before, stale, wrong_scope, after;
    sc_time tlbi_delay;
    b.cpu->program = [&](Cpu& c) {
        c.context(3, pt.root(), 7, 16, kTerm);
        c.context(4, pt.root(), 7, 16, kTerm);   // another bank, same ASID and tables
        c.stream(0, kSid, 0, 3);
        c.enable();
        before = b.master().read(kSid, kVa);
        pt.map_page(kVa, kPa + 0x8000);
        stale = b.master().read(kSid, kVa);
        // An invalidation of the wrong scope leaves the stale entry.
        switch (kind) {
        case Kind::Va: c.w64(reg::cb(3) + reg::TLBIVA, ((kVa + 0x1000) >> 12) | (7ull << 48)); break;
        case Kind::Vaa: c.w64(reg::cb(4) + reg::TLBIVAA, kVa >> 12); break;
        case Kind::Asid: c.w32(reg::cb(3) + reg::TLBIASID, 8); break;
        case Kind::All: c.w32(reg::cb(4) + reg::TLBIALL, 0); break;
        case Kind::AllNsnh: c.w32(reg::cb(3) + reg::TLBSYNC, 0); break;   // a sync alone removes nothing
        }
        wrong_scope = b.master().read(kSid, kVa);
        switch (kind) {
        case Kind::Va: c.w64(reg::cb(3) + reg::TLBIVA, (kVa >> 12) | (7ull << 48)); break;
        case Kind::Vaa: c.w64(reg::cb(3) + reg::TLBIVAA, kVa >> 12); break;
        case Kind::Asid: c.w32(reg::cb(3) + reg::TLBIASID, 7); break;
        case Kind::All: c.w32(reg::cb(3) + reg::TLBIALL, 0); break;
        case Kind::AllNsnh: c.w32(reg::TLBIALLNSNH, 0); break;
        }
        tlbi_delay = c.last_delay;
        if (kind == Kind::AllNsnh) {
            c.w32(reg::sTLBGSYNC, 0);
            CHECK(c.r32(reg::sTLBGSTATUS) == 0);
        } else {
            c.w32(reg::cb(3) + reg::TLBSYNC, 0);
            CHECK(c.r32(reg::cb(3) + reg::TLBSTATUS) == 0);
        }
        after = b.master().read(kSid, kVa);
    };
    b.run();
    CHECK(before.data == pattern(64, 80));
    CHECK(stale.data == pattern(64, 80));
    CHECK(wrong_scope.data == pattern(64, 80));
    CHECK(after.data == pattern(64, 81));
    CHECK(after.latency() > kHit + kDram);   // walked again
    CHECK(tlbi_delay == kReg + kTlbi);
    CHECK(b.smmu_counter("tcu.walks") == 2);
}
}   // namespace

TEST_CASE("TLBIVA makes a remapped page visible", "[smmu]") { invalidation_test(Kind::Va); }
TEST_CASE("TLBIVAA makes a remapped page visible", "[smmu]") { invalidation_test(Kind::Vaa); }
TEST_CASE("TLBIASID makes a remapped page visible", "[smmu]") { invalidation_test(Kind::Asid); }
TEST_CASE("TLBIALL makes a remapped page visible", "[smmu]") { invalidation_test(Kind::All); }
TEST_CASE("TLBIALLNSNH makes a remapped page visible", "[smmu]") { invalidation_test(Kind::AllNsnh); }

TEST_CASE("TLBIVAA removes the VA under every ASID and TLBIASID keeps global entries", "[smmu]") {
    Bench b;
    auto pt = b.tables();
    PageTableWriter::Attrs global;
    global.global = true;
    pt.map_page(kVa, kPa);
    pt.map_page(kVa + 0x1000, kPa + 0x1000, global);
    b.poke(kPa, pattern(64, 90));
    b.poke(kPa + 0x9000, pattern(64, 91));
    b.poke(kPa + 0x1000, pattern(64, 92));
    b.poke(kPa + 0xa000, pattern(64, 93));
    Master::Result asid6_after, asid5_after, global_after_asid, global_after_all;
    b.cpu->program = [&](Cpu& c) {
        const std::uint64_t ttbr = reg::cb(0) + reg::TTBR0;
        c.context(0, pt.root(), 5, 16, kTerm);
        c.stream(0, kSid, 0, 0);
        c.enable();
        b.master().read(kSid, kVa);   // ASID 5 entry
        c.w64(ttbr, pt.root() | (6ull << 48));
        b.master().read(kSid, kVa);   // ASID 6 entry
        b.master().read(kSid, kVa + 0x1000);   // global entry
        pt.map_page(kVa, kPa + 0x9000);
        pt.map_page(kVa + 0x1000, kPa + 0xa000, global);
        c.w64(reg::cb(0) + reg::TLBIVAA, kVa >> 12);
        asid6_after = b.master().read(kSid, kVa);
        c.w64(ttbr, pt.root() | (5ull << 48));
        asid5_after = b.master().read(kSid, kVa);
        c.w32(reg::cb(0) + reg::TLBIASID, 5);
        global_after_asid = b.master().read(kSid, kVa + 0x1000);
        c.w32(reg::cb(0) + reg::TLBIALL, 0);
        global_after_all = b.master().read(kSid, kVa + 0x1000);
    };
    b.run();
    CHECK(asid6_after.data == pattern(64, 91));
    CHECK(asid5_after.data == pattern(64, 91));
    CHECK(global_after_asid.data == pattern(64, 92));   // global: TLBIASID leaves it
    CHECK(global_after_all.data == pattern(64, 93));
    CHECK(b.smmu_counter("cb0.invalidations") == 3);
}

TEST_CASE("TLB entries are tagged with the ASID: a context switch needs no invalidation", "[smmu]") {
    Bench b;
    auto pa_tables = b.tables(), pb_tables = b.tables();
    pa_tables.map_page(kVa, kPa);
    pb_tables.map_page(kVa, kPa + 0x4000);
    b.poke(kPa, pattern(64, 100));
    b.poke(kPa + 0x4000, pattern(64, 101));
    Master::Result a1, b1, a2, b2;
    b.cpu->program = [&](Cpu& c) {
        const std::uint64_t ttbr = reg::cb(0) + reg::TTBR0;
        c.context(0, pa_tables.root(), 1, 16, kTerm);
        c.stream(0, kSid, 0, 0);
        c.enable();
        a1 = b.master().read(kSid, kVa);
        c.w64(ttbr, pb_tables.root() | (2ull << 48));   // process B
        b1 = b.master().read(kSid, kVa);
        c.w64(ttbr, pa_tables.root() | (1ull << 48));   // back to A: its entry is still there
        a2 = b.master().read(kSid, kVa);
        c.w64(ttbr, pb_tables.root() | (2ull << 48));
        b2 = b.master().read(kSid, kVa);
    };
    b.run();
    CHECK(a1.data == pattern(64, 100));
    CHECK(b1.data == pattern(64, 101));
    CHECK(a2.data == pattern(64, 100));
    CHECK(a2.latency() == kHit + kDram);
    CHECK(b2.data == pattern(64, 101));
    CHECK(b2.latency() == kHit + kDram);
    CHECK(b.smmu_counter("tcu.walks") == 2);
}

TEST_CASE("TLBIVA also drops walk-cache entries on the VA's path", "[smmu]") {
    Bench b;
    auto pt = b.tables();
    constexpr std::uint64_t blk = kVa + (8ull << 21), blk_pa = 0x0200'0000;
    pt.map_page(blk, kPa);   // an L3 table under the block's L2 slot
    b.poke(blk_pa + 0x5000, pattern(64, 94));
    Master::Result before, after;
    unsigned reads_after = 0;
    b.cpu->program = [&](Cpu& c) {
        c.context(0, pt.root(), 1, 16, kTerm);
        c.stream(0, kSid, 0, 0);
        c.enable();
        b.master().read(kSid, blk);   // walk cache: L0-L2 tables of blk
        pt.map_block(blk, blk_pa);   // the L2 slot now holds a block
        before = b.master().read(kSid, blk + 0x5000);   // cached L2 -> old L3 table: no page there
        c.clear_fsr(0);
        c.w64(reg::cb(0) + reg::TLBIVA, (blk >> 12) | (1ull << 48));
        const unsigned r0 = b.walk_tap->count;
        after = b.master().read(kSid, blk + 0x5000);
        reads_after = b.walk_tap->count - r0;
    };
    b.run();
    CHECK(before.status == tlm::TLM_GENERIC_ERROR_RESPONSE);
    CHECK(after.status == tlm::TLM_OK_RESPONSE);
    CHECK(after.data == pattern(64, 94));
    CHECK(reads_after == 3);   // the whole path was dropped: L0, L1, then L2 holds the block
}

// ---------------------------------------------------------------- TCU concurrency

TEST_CASE("walk slots: 20 simultaneous misses with 8 walks per TBU start in three waves", "[smmu]") {
    Bench b({{"smmu.walks-per-tbu", "8"}, {"smmu.walk-cache-entries", "0"}}, true, 2);
    auto pt = b.tables();
    for (unsigned i = 0; i < 28; ++i) pt.map_page(kVa + 0x1000ull * i, kPa + 0x1000ull * i);
    std::vector<Master::Result> r, other(8);
    sc_time t0, t1;
    b.master(0).program = [&](Master& m) {
        wait(1, SC_US);
        t0 = sc_time_stamp();
        for (unsigned i = 0; i < 20; ++i) r.push_back(m.read(kSid, kVa + 0x1000ull * i, 64, false));
    };
    b.master(1).program = [&](Master& m) {
        wait(5, SC_US);
        t1 = sc_time_stamp();
        for (unsigned i = 0; i < 8; ++i) other[i] = m.read(kSid, kVa + 0x1000ull * (20 + i), 64, false);
    };
    b.cpu->program = [&](Cpu& c) {
        c.context(0, pt.root(), 1, 16, kTerm);
        c.stream(0, kSid, 0, 0);
        c.enable();
    };
    b.run();
    REQUIRE(r.size() == 20);
    const sc_time walk = 4 * kFlat;
    for (unsigned i = 0; i < 20; ++i) {
        const unsigned wave = i / 8;   // 0: slots free; 1, 2: wait for a slot
        CHECK(r[i].status == tlm::TLM_OK_RESPONSE);
        CHECK(r[i].done == t0 + kMiss + static_cast<double>(wave + 1) * walk + kFlat);
    }
    for (unsigned i = 0; i < 8; ++i) CHECK(other[i].done == t1 + kMiss + walk + kFlat);   // TBU1's own slots
    CHECK(b.smmu_counter("tcu.walks_waited_for_slot") == 12);
    const Histogram* h = b.stats.find_histogram("smmu.tcu.slot_wait");
    REQUIRE(h);
    CHECK(h->count() == 12);
    CHECK(h->min() == Approx(400.0));
    CHECK(h->max() == Approx(800.0));
    CHECK(b.smmu_counter("tcu.walks") == 28);
}

TEST_CASE("misses to a page whose walk is in flight wait for it instead of walking", "[smmu]") {
    Bench b({}, true, 2);
    auto pt = b.tables();
    pt.map_page(kVa, kPa);
    b.poke(kPa + 0x40, pattern(64, 95));
    Master::Result a, same_tbu, other_tbu, later;
    sc_time t0;
    b.master(0).program = [&](Master& m) {
        wait(1, SC_US);
        t0 = sc_time_stamp();
        a = m.read(kSid, kVa, 64, false);
        same_tbu = m.read(kSid, kVa + 0x40, 64, false);
    };
    b.master(1).program = [&](Master& m) {
        wait(sc_time(1, SC_US) + ns(50));
        other_tbu = m.read(kSid, kVa + 0x80);
        wait(sc_time(2, SC_US) - sc_time_stamp());
        later = m.read(kSid, kVa + 0x80);
    };
    b.cpu->program = [&](Cpu& c) {
        c.context(0, pt.root(), 1, 16, kTerm);
        c.stream(0, kSid, 0, 0);
        c.enable();
    };
    b.run();
    const sc_time walk_done = t0 + kMiss + 4 * kFlat;
    CHECK(a.done == walk_done + kFlat);
    CHECK(same_tbu.done == walk_done + kFlat);
    CHECK(same_tbu.data == pattern(64, 95));
    CHECK(other_tbu.done == walk_done + kFlat);
    CHECK(later.latency() == kHit + kFlat);   // TBU1's micro-TLB was filled from the in-flight entry
    CHECK(b.smmu_counter("tcu.walks") == 1);
    CHECK(b.smmu_counter("tcu.walks_merged") == 2);
    CHECK(b.walk_tap->count == 4);
}

namespace {
struct ReplacementCounts {
    std::uint64_t micro_hits, micro_misses, macro_hits, walks;
};

// Pages p0..p8 are consecutive 4 KiB pages of kVa (p0, p4, p8 share a
// macro-TLB set when it has 4 sets).
ReplacementCounts replacement_run(const std::string& policy, const std::string& micro, const std::string& macro,
                                  const std::string& ways, const std::vector<unsigned>& sequence) {
    Bench b({{"smmu.tlb-replacement", policy},
             {"smmu.micro-tlb-entries", micro},
             {"smmu.macro-tlb-entries", macro},
             {"smmu.macro-tlb-ways", ways}},
            true);
    auto pt = b.tables();
    for (unsigned i = 0; i < 9; ++i) pt.map_page(kVa + 0x1000ull * i, kPa + 0x1000ull * i);
    b.cpu->program = [&](Cpu& c) {
        c.context(0, pt.root(), 1, 16, kTerm);
        c.stream(0, kSid, 0, 0);
        c.enable();
        for (unsigned p : sequence) REQUIRE(b.master().read(kSid, kVa + 0x1000ull * p).status == tlm::TLM_OK_RESPONSE);
    };
    b.run();
    return {b.smmu_counter("tbu0.micro_tlb_hits"), b.smmu_counter("tbu0.micro_tlb_misses"),
            b.smmu_counter("tcu.macro_tlb_hits"), b.smmu_counter("tcu.walks")};
}
}   // namespace

TEST_CASE("micro-TLB replacement: LRU evicts the least recently used entry", "[smmu]") {
    // p0..p3 fill the 4 entries, p0 is used again, p4 evicts p1 (LRU), p0 still hits.
    const auto c = replacement_run("lru", "4", "512", "4", {0, 1, 2, 3, 0, 4, 0, 1});
    CHECK(c.micro_hits == 2);
    CHECK(c.micro_misses == 6);
    CHECK(c.macro_hits == 1);   // p1 from the macro-TLB
    CHECK(c.walks == 5);
}

TEST_CASE("micro-TLB replacement: round-robin evicts in way order", "[smmu]") {
    // p4 evicts way 0 (p0) although p0 was just used; p0 then evicts p1.
    const auto c = replacement_run("round-robin", "4", "512", "4", {0, 1, 2, 3, 0, 4, 0, 1});
    CHECK(c.micro_hits == 1);
    CHECK(c.micro_misses == 7);
    CHECK(c.macro_hits == 2);
    CHECK(c.walks == 5);
}

TEST_CASE("macro-TLB replacement within a set: LRU", "[smmu]") {
    // 8 entries, 2 ways: p0, p4, p8 share a set. A 1-entry micro-TLB hides nothing.
    const std::vector<unsigned> seq = {0, 4, 0, 8, 0, 4};
    const auto lru = replacement_run("lru", "1", "8", "2", seq);
    CHECK(lru.walks == 4);   // p8 evicts p4 (LRU); p0 stays
    CHECK(lru.macro_hits == 2);
}

TEST_CASE("macro-TLB replacement within a set: round-robin", "[smmu]") {
    const std::vector<unsigned> seq = {0, 4, 0, 8, 0, 4};
    const auto rr = replacement_run("round-robin", "1", "8", "2", seq);
    CHECK(rr.walks == 5);   // p8 evicts way 0 (p0), p0 then evicts p4
    CHECK(rr.macro_hits == 1);
}

// ---------------------------------------------------------------- registers

TEST_CASE("register file: ID registers and reset values and widths and RAZ/WI and debug access", "[smmu]") {
    Bench b;
    std::uint64_t idr0 = 0, idr1 = 0, idr2 = 0, unknown = 1, ttbr = 0, ttbr_lo = 0, ttbr_hi = 0, s2cr = 0, smr = 1;
    std::uint64_t both = 0, tcr = 0;
    sc_time write_delay, tlbi_delay;
    tlm::tlm_response_status bad_size = tlm::TLM_OK_RESPONSE, outside = tlm::TLM_OK_RESPONSE;
    b.cpu->program = [&](Cpu& c) {
        idr0 = c.r32(reg::sIDR0);
        idr1 = c.r32(reg::sIDR1);
        idr2 = c.r32(reg::sIDR2);
        s2cr = c.r32(reg::S2CR(47));
        smr = c.r32(reg::SMR(47));
        c.w32(0x2000, 0x1234);   // a reserved global page
        unknown = c.r32(0x2000);
        c.w64(reg::cb(15) + reg::TTBR0, 0x0042'0000'1234'5000ull);
        write_delay = c.last_delay;
        ttbr = c.r64(reg::cb(15) + reg::TTBR0);
        ttbr_lo = c.r32(reg::cb(15) + reg::TTBR0);
        ttbr_hi = c.r32(reg::cb(15) + reg::TTBR0 + 4);
        c.w32(reg::cb(15) + reg::TTBR0 + 4, 0x0043'0000);   // high half only
        c.w32(reg::cb(15) + reg::TCR, 25);
        c.w32(reg::cb(15) + reg::MAIR0, 0xff);
        both = c.r64(reg::cb(15) + reg::TCR);   // TCR and CONTEXTIDR as one 64-bit read
        c.w32(reg::cb(15) + reg::TLBIALL, 0);
        tlbi_delay = c.last_delay;
        std::uint64_t v = 0;
        bad_size = c.access(false, reg::sCR0, v, 2);
        outside = c.access(false, reg::kSize, v, 4);
        tcr = c.r32(reg::cb(15) + reg::TCR);
    };
    b.run();
    CHECK((idr0 & 0xff) == 48);
    CHECK(((idr0 >> 9) & 0xf) == 15);
    CHECK((idr0 & (1u << 30)) != 0);   // S1TS
    CHECK((idr0 & (1u << 27)) != 0);   // SMS
    CHECK((idr1 & 0xff) == 16);
    CHECK(((idr1 >> 28) & 7) == 3);   // 16 global pages: context banks at 64 KiB
    CHECK((idr1 & (1u << 31)) == 0);   // 4 KiB register pages
    CHECK((idr2 & 0xf) == 5);   // IAS 48
    CHECK(((idr2 >> 4) & 0xf) == 5);   // OAS 48
    CHECK((idr2 & (1u << 12)) != 0);   // 4 KiB granule
    CHECK(s2cr == (2u << 16));
    CHECK(smr == 0);
    CHECK(unknown == 0);
    CHECK(b.smmu_counter("unknown_register_accesses") == 2);
    CHECK(ttbr == 0x0042'0000'1234'5000ull);
    CHECK(ttbr_lo == 0x1234'5000ull);
    CHECK(ttbr_hi == 0x0042'0000ull);
    CHECK(both == 25);
    CHECK(tcr == 25);
    CHECK(write_delay == kReg);
    CHECK(tlbi_delay == kReg + kTlbi);
    CHECK(bad_size == tlm::TLM_BURST_ERROR_RESPONSE);
    CHECK(outside == tlm::TLM_ADDRESS_ERROR_RESPONSE);
    // Debug access sees the same registers and takes no time.
    tlm::tlm_generic_payload gp;
    std::uint64_t v = 0;
    gp.set_command(tlm::TLM_READ_COMMAND);
    gp.set_address(reg::cb(15) + reg::TTBR0);
    gp.set_data_ptr(reinterpret_cast<unsigned char*>(&v));
    gp.set_data_length(8);
    gp.set_streaming_width(8);
    CHECK(b.smmu->regs.get_base_export()->transport_dbg(gp) == 8);
    CHECK(v == 0x0043'0000'1234'5000ull);
}

TEST_CASE("debug transport through a TBU translates with the current tables", "[smmu]") {
    Bench b;
    auto pt = b.tables();
    pt.map_page(kVa, kPa);
    pt.map_page(kVa + 0x1000, kPa + 0x7000);
    b.poke(kPa + 0xfc0, pattern(64, 96));
    b.poke(kPa + 0x7000, pattern(64, 97));
    unsigned n = 0, n_fault = 1;
    std::vector<unsigned char> got(128);
    b.cpu->program = [&](Cpu& c) {
        c.context(0, pt.root(), 1, 16, kTerm);
        c.stream(0, kSid, 0, 0);
        c.enable();
        tlm::tlm_generic_payload gp;
        auto* sx = new StreamIdExtension;
        sx->sid = kSid;
        gp.set_extension(sx);
        gp.set_command(tlm::TLM_READ_COMMAND);
        gp.set_address(kVa + 0xfc0);
        gp.set_data_ptr(got.data());
        gp.set_data_length(128);
        gp.set_streaming_width(128);
        n = b.master().socket->transport_dbg(gp);
        gp.set_address(kVa + 0x5000);
        gp.set_data_length(8);
        n_fault = b.master().socket->transport_dbg(gp);
    };
    b.run();
    auto expect = pattern(64, 96);
    const auto tail = pattern(64, 97);
    expect.insert(expect.end(), tail.begin(), tail.end());
    CHECK(n == 128);
    CHECK(got == expect);
    CHECK(n_fault == 0);
    CHECK(b.walk_tap->count == 0);   // untimed: no timed descriptor reads
    CHECK(b.smmu_counter("tcu.walks") == 0);
}

TEST_CASE("walks and faults appear on the SMMU's trace tracks", "[smmu]") {
    const std::string json = "/tmp/smmu_test_trace_" + std::to_string(getpid()) + ".json";
    const std::string log = "/tmp/smmu_test_trace_" + std::to_string(getpid()) + ".log";
    {
        Bench b;
        b.tracer.open(json, log);
        auto pt = b.tables();
        pt.map_page(kVa, kPa);
        b.cpu->program = [&](Cpu& c) {
            c.context(0, pt.root(), 1, 16, kTerm);
            c.stream(0, kSid, 0, 0);
            c.enable();
            b.master().read(kSid, kVa);
            b.master().read(kSid, kVa + 0x1000);
        };
        b.run();
        b.tracer.close();
    }
    std::ifstream j(json), l(log);
    std::stringstream js, ls;
    js << j.rdbuf();
    ls << l.rdbuf();
    const std::string t = js.str(), n = ls.str();
    CHECK(t.find("\"smmu tcu\"") != std::string::npos);
    CHECK(t.find("\"smmu faults\"") != std::string::npos);
    CHECK(t.find("\"walk\"") != std::string::npos);
    CHECK(t.find("\"walk (fault)\"") != std::string::npos);
    CHECK(t.find("\"fault\"") != std::string::npos);
    CHECK(n.find("translation fault in cb0") != std::string::npos);
    std::remove(json.c_str());
    std::remove(log.c_str());
}

// rdma.buffer-guard (models/smmu/README.md "Privileged transactions"): a
// leaf whose AP[1] is clear (EL1 only) faults for the engine's own,
// unprivileged, accesses, and serves them once S2CR.PRIVCFG makes the
// stream privileged; AP[2] still denies a privileged write; a TLB entry
// filled by a privileged access does not serve an unprivileged one.
TEST_CASE("S2CR.PRIVCFG: privileged transactions reach EL1-only pages and unprivileged ones fault", "[smmu]") {
    Bench b;
    auto pt = b.tables();
    PageTableWriter::Attrs kernel_rw;
    kernel_rw.user = false;   // AP[2:1] = 00: EL1 read/write, EL0 none
    PageTableWriter::Attrs ro_both;
    ro_both.write = false;   // AP[2:1] = 11: read-only for both
    pt.map_page(kVa, kPa, kernel_rw);
    pt.map_page(kVa + 0x1000, kPa + 0x1000, ro_both);
    b.poke(kPa, pattern(64, 21));
    Master::Result unpriv, priv_rd, priv_wr, priv_ro_wr, priv_ro_rd, back;
    b.cpu->program = [&](Cpu& c) {
        c.context(0, pt.root(), 1, 16, kTerm);
        c.stream(0, kSid, 0, 0);   // PRIVCFG 0: the master's own attribute
        c.enable();
        unpriv = b.master().read(kSid, kVa);   // walk: AP[1] clear, unprivileged
        c.clear_fsr(0);
        c.w32(reg::S2CR(0), reg::S2CR_PRIVCFG_PRIV | 0);   // privileged, bank 0
        priv_rd = b.master().read(kSid, kVa);
        priv_wr = b.master().write(kSid, kVa + 0x40, pattern(64, 22));
        priv_ro_rd = b.master().read(kSid, kVa + 0x1000);
        priv_ro_wr = b.master().write(kSid, kVa + 0x1000, pattern(64, 23));
        c.clear_fsr(0);
        c.w32(reg::S2CR(0), reg::S2CR_PRIVCFG_UNPRIV | 0);   // unprivileged again: the TLB entry must not serve it
        back = b.master().read(kSid, kVa);
        c.clear_fsr(0);
    };
    b.run();
    CHECK(unpriv.status == tlm::TLM_GENERIC_ERROR_RESPONSE);
    CHECK(unpriv.fault.type == FaultType::Permission);
    CHECK(priv_rd.status == tlm::TLM_OK_RESPONSE);
    CHECK(priv_rd.data == pattern(64, 21));
    CHECK(priv_wr.status == tlm::TLM_OK_RESPONSE);
    CHECK(b.peek(kPa + 0x40, 64) == pattern(64, 22));
    CHECK(priv_ro_rd.status == tlm::TLM_OK_RESPONSE);
    CHECK(priv_ro_wr.status == tlm::TLM_GENERIC_ERROR_RESPONSE);
    CHECK(priv_ro_wr.fault.type == FaultType::Permission);
    CHECK(back.status == tlm::TLM_GENERIC_ERROR_RESPONSE);
    CHECK(back.fault.type == FaultType::Permission);
    CHECK(b.smmu_counter("cb0.faults_permission") == 3);
}
