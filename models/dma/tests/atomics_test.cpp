// Network atomics through the engines' sockets: up to three engines, each
// with its DRAM behind a fake SMMU (terminate-mode faults with a fake fault
// library, or stalls), wired by a crossbar that delivers each packet to the
// engine of its destination node (its own one too: loopback) and records it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <set>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "mmio_cpu.hpp"
#include "model_env.hpp"
#include "models/dma/pldma.hpp"
#include "models/memory/dram.hpp"

using namespace vrdmasim;
using namespace sc_core;
namespace reg = vrdmasim::pldma_reg;

namespace {

// Delivers packets by destination node; remembers each (type, source, head).
struct Crossbar : sc_module {
    struct Seen {
        PacketType type;
        unsigned src, dst;
        std::uint16_t size;
        sc_time head;
    };
    std::vector<std::unique_ptr<tlm_utils::simple_target_socket_tagged<Crossbar>>> in;
    std::vector<std::unique_ptr<tlm_utils::simple_initiator_socket<Crossbar>>> out;
    std::vector<Seen> seen;
    Crossbar(sc_module_name n, unsigned nodes) : sc_module(n) {
        for (unsigned i = 0; i < nodes; ++i) {
            in.push_back(
                std::make_unique<tlm_utils::simple_target_socket_tagged<Crossbar>>(("in" + std::to_string(i)).c_str()));
            in.back()->register_b_transport(this, &Crossbar::b_transport, static_cast<int>(i));
            out.push_back(
                std::make_unique<tlm_utils::simple_initiator_socket<Crossbar>>(("out" + std::to_string(i)).c_str()));
        }
    }
    void b_transport(int, tlm::tlm_generic_payload& gp, sc_time& d) {
        auto* p = gp.get_extension<ExanetPacket>();
        REQUIRE(p);
        d += sc_time(200, SC_NS);   // a hop
        p->tail = max_time(p->tail + sc_time(200, SC_NS), sc_time_stamp() + d);
        seen.push_back({p->header.type, p->src_node, p->dst_node, p->header.size, sc_time_stamp() + d});
        (*out.at(p->dst_node))->b_transport(gp, d);
    }
    std::size_t count(PacketType t) const {
        return static_cast<std::size_t>(
            std::count_if(seen.begin(), seen.end(), [t](const Seen& s) { return s.type == t; }));
    }
};

// Between an engine and its DRAM: terminate-mode faults on (page, write)
// pairs, resolved `service` later by a fake fault library that calls the
// engine's fault_resolved; or a stall (stall_page) held until stall_until.
// Counts the writes to every byte.
struct FakeSmmu : sc_module {
    tlm_utils::simple_target_socket<FakeSmmu> in{"in"};
    tlm_utils::simple_initiator_socket<FakeSmmu> out{"out"};
    Pldma* engine = nullptr;
    bool resolve = true;
    sc_time service{5, SC_US};
    std::set<std::pair<std::uint64_t, bool>> faulting;
    std::uint64_t stall_page = ~0ull;
    sc_time stall_until;
    unsigned stalls = 0;
    struct Fault {
        std::uint64_t address;
        bool write;
        sc_time at;
        std::uint32_t sid;   // the faulting access's stream ID (outcomes match by stream and page)
    };
    std::vector<Fault> faults;
    std::vector<sc_time> outcomes;
    std::map<std::uint64_t, unsigned> writes;
    std::deque<Fault> pending;
    sc_event ev;
    explicit FakeSmmu(sc_module_name n) : sc_module(n) {
        in.register_b_transport(this, &FakeSmmu::b_transport);
        SC_HAS_PROCESS(FakeSmmu);
        SC_THREAD(library);
    }
    void b_transport(tlm::tlm_generic_payload& gp, sc_time& d) {
        const std::uint64_t a = gp.get_address(), len = gp.get_data_length();
        const bool w = gp.is_write();
        if ((a >> 12) == stall_page && sc_time_stamp() + d < stall_until) {
            ++stalls;   // the translation waits, then goes through
            wait(stall_until - sc_time_stamp());
            d = SC_ZERO_TIME;
        }
        if (faulting.count({a >> 12, w})) {
            auto* ext = gp.get_extension<SmmuFaultExtension>();
            REQUIRE(ext);
            ext->type = FaultType::Translation;
            ext->address = a;
            ext->write = w;
            d += sc_time(100, SC_NS);
            gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
            auto* sx = gp.get_extension<StreamIdExtension>();
            REQUIRE(sx);
            faults.push_back({a, w, sc_time_stamp() + d, sx->sid});
            pending.push_back(faults.back());
            ev.notify(SC_ZERO_TIME);
            return;
        }
        out->b_transport(gp, d);
        if (w && gp.is_response_ok())
            for (std::uint64_t i = 0; i < len; ++i) ++writes[a + i];
    }
    void library() {
        for (;;) {
            while (pending.empty()) wait(ev);
            const Fault f = pending.front();
            pending.pop_front();
            const sc_time done = f.at + service;
            if (done > sc_time_stamp()) wait(done - sc_time_stamp());
            if (resolve) faulting.erase({f.address >> 12, f.write});
            outcomes.push_back(sc_time_stamp());
            engine->fault_resolved(f.sid, f.address, f.write, resolve, sc_time_stamp());
        }
    }
    unsigned writes_at(std::uint64_t a) const {
        auto it = writes.find(a);
        return it == writes.end() ? 0 : it->second;
    }
};

// A CPU on channel 0 (mmio_cpu.hpp) that posts atomics.
struct Cpu : vrdmasim_test::MmioCpu<Cpu> {
    using MmioCpu::MmioCpu;
    // Post an atomic; true unless the doorbell was refused.
    bool atomic(DescOp op, unsigned node, std::uint64_t addr, std::uint64_t operand, std::uint64_t compare,
                std::uint64_t tag, std::uint64_t compl_addr, std::uint64_t len = 8) {
        vrdmasim_test::Desc d;
        d.op = op;
        d.src = operand, d.cmp = compare, d.dst = addr, d.len = len, d.node = node;
        d.compl_addr = compl_addr, d.tag = tag;
        stage(d);
        return doorbell_taken();
    }
    void wait_completed(std::uint64_t n) { wait_count(reg::kTxCompleted, n, 1000000); }
};

using vrdmasim_test::Settings;
const Settings kFt{{"dma.fault-tolerant", "true"}};
const Settings kNotFt{{"dma.fault-tolerant", "false"}};

struct Bench : vrdmasim_test::ModelEnv {
    std::vector<std::unique_ptr<Dram>> mem;
    std::vector<std::unique_ptr<FakeSmmu>> smmu;
    std::vector<std::unique_ptr<Pldma>> dma;
    std::vector<std::unique_ptr<Cpu>> cpu;
    std::unique_ptr<Crossbar> net;

    explicit Bench(unsigned nodes, const Settings& settings = {})
        : ModelEnv({Pldma::declare_params, Dram::declare_params}, {{"dram.size", "64MiB"}}, settings) {
        auto coords = std::make_shared<std::vector<std::uint32_t>>();
        for (unsigned i = 0; i < nodes; ++i) coords->push_back(i);
        net = std::make_unique<Crossbar>("net", nodes);
        for (unsigned i = 0; i < nodes; ++i) {
            const std::string n = std::to_string(i);
            mem.push_back(std::make_unique<Dram>(("mem" + n).c_str(), ctx, "node" + n));
            smmu.push_back(std::make_unique<FakeSmmu>(("smmu" + n).c_str()));
            dma.push_back(std::make_unique<Pldma>(("dma" + n).c_str(), ctx, "node" + n, i, coords));
            cpu.push_back(std::make_unique<Cpu>(("cpu" + n).c_str()));
            smmu[i]->engine = dma[i].get();
            dma[i]->mem.bind(smmu[i]->in);
            smmu[i]->out.bind(mem[i]->socket);
            dma[i]->net_out.bind(*net->in[i]);
            net->out[i]->bind(dma[i]->net_in);
            cpu[i]->mmio.bind(dma[i]->mmio);
        }
    }
    static void poke64(Dram& m, std::uint64_t addr, std::uint64_t v) {
        tlm::tlm_generic_payload gp;
        gp.set_command(tlm::TLM_WRITE_COMMAND);
        gp.set_address(addr);
        gp.set_data_ptr(reinterpret_cast<unsigned char*>(&v));
        gp.set_data_length(8);
        REQUIRE(m.socket.get_base_export()->transport_dbg(gp) == 8);
    }
    static std::uint64_t peek64(Dram& m, std::uint64_t addr) {
        std::uint64_t v = 0;
        tlm::tlm_generic_payload gp;
        gp.set_command(tlm::TLM_READ_COMMAND);
        gp.set_address(addr);
        gp.set_data_ptr(reinterpret_cast<unsigned char*>(&v));
        gp.set_data_length(8);
        REQUIRE(m.socket.get_base_export()->transport_dbg(gp) == 8);
        return v;
    }
    static CompletionRecord record(Dram& m, std::uint64_t addr) {
        CompletionRecord r;
        tlm::tlm_generic_payload gp;
        gp.set_command(tlm::TLM_READ_COMMAND);
        gp.set_address(addr);
        gp.set_data_ptr(reinterpret_cast<unsigned char*>(&r));
        gp.set_data_length(sizeof r);
        REQUIRE(m.socket.get_base_export()->transport_dbg(gp) == sizeof r);
        return r;
    }
};

constexpr std::uint64_t kWord = 0x20008;   // the target word (page 0x20)

}   // namespace

TEST_CASE("atomics: fetch-add, compare-and-swap and swap, value for value", "[dma][atomic]") {
    Bench b(2);
    Bench::poke64(*b.mem[1], kWord, 100);
    std::vector<std::uint64_t> after;   // the target word after each atomic (read once it completed)
    b.cpu[0]->program = [&](Cpu& c) {
        const struct {
            DescOp op;
            std::uint64_t operand, compare;
        } ops[] = {
            {DescOp::FetchAdd, 5, 0},   // 100 -> 105, old 100
            {DescOp::CompareSwap, 7, 105},   // equal: 105 -> 7, old 105
            {DescOp::CompareSwap, 9, 1},   // not equal: stays 7, old 7
            {DescOp::Swap, 42, 0},   // 7 -> 42, old 7
            {DescOp::FetchAdd, ~0ull, 0},   // + (2^64 - 1): 42 -> 41, old 42
        };
        for (std::size_t i = 0; i < 5; ++i) {
            REQUIRE(c.atomic(ops[i].op, 1, kWord, ops[i].operand, ops[i].compare, 10 + i, 0x100 + 32 * i));
            c.wait_completed(i + 1);
            after.push_back(Bench::peek64(*b.mem[1], kWord));
        }
    };
    sc_start();
    const std::uint64_t olds[] = {100, 105, 7, 7, 42};
    const std::uint64_t news[] = {105, 7, 7, 42, 41};
    REQUIRE(after.size() == 5);
    for (std::size_t i = 0; i < 5; ++i) {
        const CompletionRecord r = Bench::record(*b.mem[0], 0x100 + 32 * i);
        INFO("atomic " << i);
        CHECK(r.status == kStatusOk);
        CHECK(r.tag == 10 + i);
        CHECK(r.node == 1);
        CHECK(r.bytes == 8);
        CHECK(r.addr == olds[i]);
        CHECK(after[i] == news[i]);
    }
    // The failed compare wrote nothing: four writes of the word's bytes.
    CHECK(b.smmu[1]->writes_at(kWord) == 4);
    CHECK(b.counter("dma0.atomics_posted") == 5);
    CHECK(b.counter("dma0.atomics_completed") == 5);
    CHECK(b.counter("dma1.atomics_executed") == 5);
    CHECK(b.counter("dma0.transfers_posted") == 0);
    CHECK(b.histogram("dma0.atomic_latency").count() == 5);
    CHECK(b.histogram("dma0.transfer_latency").count() == 0);
    // One request (32 B) and one reply (24 B) per atomic.
    CHECK(b.net->count(PacketType::AtomicRequest) == 5);
    CHECK(b.net->count(PacketType::AtomicReply) == 5);
    CHECK(b.net->seen.size() == 10);
    CHECK(b.net->seen[0].size == 32);
    CHECK(b.net->seen[1].size == 24);
}

TEST_CASE("atomics: a misaligned atomic or one not of 8 bytes is refused at the doorbell", "[dma][atomic]") {
    Bench b(2);
    bool misaligned = true, short_len = true, good = false;
    b.cpu[0]->program = [&](Cpu& c) {
        misaligned = c.atomic(DescOp::FetchAdd, 1, kWord + 4, 1, 0, 1, 0x100);
        short_len = c.atomic(DescOp::Swap, 1, kWord, 1, 0, 2, 0x120, 4);
        good = c.atomic(DescOp::Swap, 1, kWord, 1, 0, 3, 0x140);
        c.wait_completed(1);
    };
    sc_start();
    CHECK_FALSE(misaligned);
    CHECK_FALSE(short_len);
    CHECK(good);
    CHECK(b.counter("dma0.doorbells_refused") == 2);
    CHECK(b.counter("dma0.atomics_posted") == 1);
    CHECK(b.counter("dma1.atomics_executed") == 1);
}

TEST_CASE("atomics: K fetch-adds from several initiators return every old value 0..K-1 once", "[dma][atomic]") {
    Bench b(3);
    constexpr unsigned kPer = 40;   // each of nodes 0, 1 (loopback) and 2, without waiting in between
    std::vector<std::uint64_t> olds;
    for (unsigned n : {0u, 1u, 2u})
        b.cpu[n]->program = [&, n](Cpu& c) {
            for (unsigned i = 0; i < kPer; ++i) REQUIRE(c.atomic(DescOp::FetchAdd, 1, kWord, 1, 0, i, 0x1000 + 32 * i));
            c.wait_completed(kPer);
            for (unsigned i = 0; i < kPer; ++i) {
                const CompletionRecord r = Bench::record(*b.mem[n], 0x1000 + 32 * i);
                REQUIRE(r.status == kStatusOk);
                olds.push_back(r.addr);
            }
        };
    sc_start();
    std::sort(olds.begin(), olds.end());
    REQUIRE(olds.size() == 3 * kPer);
    for (std::uint64_t k = 0; k < 3 * kPer; ++k) CHECK(olds[k] == k);
    CHECK(Bench::peek64(*b.mem[1], kWord) == 3 * kPer);
    CHECK(b.counter("dma1.atomics_executed") == 3 * kPer);
    CHECK(b.smmu[1]->writes_at(kWord) == 3 * kPer);
}

TEST_CASE("atomics: loopback, the engine executes an atomic on its own node's memory", "[dma][atomic]") {
    Bench b(1);
    Bench::poke64(*b.mem[0], kWord, 0);
    CompletionRecord r1, r2;
    b.cpu[0]->program = [&](Cpu& c) {
        REQUIRE(c.atomic(DescOp::CompareSwap, 0, kWord, 1, 0, 1, 0x100));   // acquire: 0 -> 1
        REQUIRE(c.atomic(DescOp::CompareSwap, 0, kWord, 1, 0, 2, 0x120));   // held: fails
        c.wait_completed(2);
        r1 = Bench::record(*b.mem[0], 0x100);
        r2 = Bench::record(*b.mem[0], 0x120);
    };
    sc_start();
    CHECK(r1.status == kStatusOk);
    CHECK(r1.addr == 0);
    CHECK(r2.status == kStatusOk);
    CHECK(r2.addr == 1);
    CHECK(Bench::peek64(*b.mem[0], kWord) == 1);
    CHECK(b.net->count(PacketType::AtomicRequest) == 2);
    CHECK(b.counter("dma0.atomics_executed") == 2);
}

TEST_CASE("atomics: a target read fault (terminate, fault-tolerant) waits for the outcome, then executes once",
          "[dma][atomic][fault]") {
    Bench b(3, kFt);
    Bench::poke64(*b.mem[1], kWord, 1000);
    b.smmu[1]->faulting.insert({kWord >> 12, false});
    CompletionRecord r0, r2;
    b.cpu[0]->program = [&](Cpu& c) {
        REQUIRE(c.atomic(DescOp::FetchAdd, 1, kWord, 3, 0, 1, 0x100));
        c.wait_completed(1);
        r0 = Bench::record(*b.mem[0], 0x100);
    };
    b.cpu[2]->program = [&](Cpu& c) {   // behind it in the unit
        wait(100, SC_NS);
        REQUIRE(c.atomic(DescOp::FetchAdd, 1, kWord, 10, 0, 2, 0x100));
        c.wait_completed(1);
        r2 = Bench::record(*b.mem[2], 0x100);
    };
    sc_start();
    REQUIRE(b.smmu[1]->faults.size() == 1);
    CHECK_FALSE(b.smmu[1]->faults[0].write);
    CHECK(r0.status == kStatusOk);
    CHECK(r0.addr == 1000);
    CHECK(r2.status == kStatusOk);
    CHECK(r2.addr == 1003);
    CHECK(Bench::peek64(*b.mem[1], kWord) == 1013);
    CHECK(b.smmu[1]->writes_at(kWord) == 2);
    CHECK(b.counter("dma1.atomic_faults") == 1);
    CHECK(b.counter("dma1.atomics_executed") == 2);
    CHECK(b.counter("dma1.fault_outcomes_unmatched") == 0);
    // The replies leave only after the outcome.
    for (const auto& s : b.net->seen)
        if (s.type == PacketType::AtomicReply) CHECK(s.head >= b.smmu[1]->outcomes.at(0));
}

TEST_CASE("atomics: a write fault after the read succeeded neither loses nor doubles the update",
          "[dma][atomic][fault]") {
    Bench b(2, kFt);
    Bench::poke64(*b.mem[1], kWord, 50);
    b.smmu[1]->faulting.insert({kWord >> 12, true});   // readable, not writable (until resolved)
    CompletionRecord r;
    b.cpu[0]->program = [&](Cpu& c) {
        REQUIRE(c.atomic(DescOp::FetchAdd, 1, kWord, 7, 0, 1, 0x100));
        c.wait_completed(1);
        r = Bench::record(*b.mem[0], 0x100);
    };
    sc_start();
    REQUIRE(b.smmu[1]->faults.size() == 1);
    CHECK(b.smmu[1]->faults[0].write);
    CHECK(r.status == kStatusOk);
    CHECK(r.addr == 50);
    CHECK(Bench::peek64(*b.mem[1], kWord) == 57);
    CHECK(b.smmu[1]->writes_at(kWord) == 1);
    CHECK(b.counter("dma1.atomic_faults") == 1);
    CHECK(b.counter("dma1.atomics_executed") == 1);
}

TEST_CASE("atomics: a fault that is not resolved gives an error record and leaves memory alone",
          "[dma][atomic][fault]") {
    Bench b(2, kFt);
    Bench::poke64(*b.mem[1], kWord, 5);
    b.smmu[1]->faulting.insert({kWord >> 12, false});
    b.smmu[1]->resolve = false;
    CompletionRecord r;
    b.cpu[0]->program = [&](Cpu& c) {
        REQUIRE(c.atomic(DescOp::Swap, 1, kWord, 9, 0, 1, 0x100));
        c.wait_completed(1);
        r = Bench::record(*b.mem[0], 0x100);
    };
    sc_start();
    CHECK(r.status == kStatusError);
    CHECK(r.bytes == 0);
    CHECK(Bench::peek64(*b.mem[1], kWord) == 5);
    CHECK(b.counter("dma0.atomics_failed") == 1);
    CHECK(b.counter("dma1.atomics_executed") == 0);
}

TEST_CASE("atomics: the original engine answers a target fault with an error", "[dma][atomic][fault]") {
    Bench b(2, kNotFt);
    Bench::poke64(*b.mem[1], kWord, 5);
    b.smmu[1]->faulting.insert({kWord >> 12, false});
    CompletionRecord r;
    b.cpu[0]->program = [&](Cpu& c) {
        REQUIRE(c.atomic(DescOp::FetchAdd, 1, kWord, 1, 0, 1, 0x100));
        c.wait_completed(1);
        r = Bench::record(*b.mem[0], 0x100);
    };
    sc_start();
    CHECK(r.status == kStatusError);
    CHECK(Bench::peek64(*b.mem[1], kWord) == 5);
    CHECK(b.smmu[1]->writes_at(kWord) == 0);
    CHECK(b.counter("dma1.atomic_faults") == 1);
    CHECK(b.counter("dma0.atomics_failed") == 1);
}

TEST_CASE("atomics: stall mode, the access waits in the SMMU and the atomic completes after it",
          "[dma][atomic][fault]") {
    Bench b(2, kFt);
    Bench::poke64(*b.mem[1], kWord, 8);
    b.smmu[1]->stall_page = kWord >> 12;
    b.smmu[1]->stall_until = sc_time(30, SC_US);
    CompletionRecord r;
    sc_time done;
    b.cpu[0]->program = [&](Cpu& c) {
        REQUIRE(c.atomic(DescOp::Swap, 1, kWord, 1, 0, 1, 0x100));
        c.wait_completed(1);
        done = sc_time_stamp();
        r = Bench::record(*b.mem[0], 0x100);
    };
    sc_start();
    CHECK(b.smmu[1]->stalls >= 1);
    CHECK(r.status == kStatusOk);
    CHECK(r.addr == 8);
    CHECK(Bench::peek64(*b.mem[1], kWord) == 1);
    CHECK(done >= sc_time(30, SC_US));
    CHECK(b.counter("dma1.atomic_faults") == 0);
    CHECK(b.smmu[1]->writes_at(kWord) == 1);
}

TEST_CASE("atomics: no channel of the request's domain at the target: error reply, pd_violations", "[dma][atomic]") {
    Bench b(2);
    Bench::poke64(*b.mem[1], kWord, 5);
    CompletionRecord r;
    b.cpu[1]->program = [&](Cpu& c) {   // node 1's kernel gives every channel domain 7
        for (unsigned ch = 0; ch < b.dma[1]->channels(); ++ch) c.w(reg::kKernelBase + 8 * ch, 7 | reg::kCtrlEnable, 4);
    };
    b.cpu[0]->program = [&](Cpu& c) {
        wait(1, SC_US);
        REQUIRE(c.atomic(DescOp::Swap, 1, kWord, 9, 0, 1, 0x100));
        c.wait_completed(1);
        r = Bench::record(*b.mem[0], 0x100);
    };
    sc_start();
    CHECK(r.status == kStatusError);
    CHECK(Bench::peek64(*b.mem[1], kWord) == 5);
    CHECK(b.counter("dma1.pd_violations") == 1);
    CHECK(b.counter("dma1.atomics_executed") == 0);
}
