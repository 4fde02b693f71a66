// Pldma through its sockets: registers over MMIO, memory through a Dram,
// packets to a peer engine through a tap that records what crosses the wire.
#include <catch2/catch.hpp>

#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <set>
#include <tuple>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "model_env.hpp"
#include "mmio_cpu.hpp"
#include "models/dma/pldma.hpp"
#include "models/memory/dram.hpp"

using namespace vrdmasim;
using namespace sc_core;
namespace reg = vrdmasim::pldma_reg;

namespace {

// Records every packet that crosses it, then passes it on unchanged.
struct Tap : sc_module {
    tlm_utils::simple_target_socket<Tap> in{"in"};
    tlm_utils::simple_initiator_socket<Tap> out{"out"};
    struct Seen {
        ExanetHeader header;
        ExanetFooter footer;
        std::vector<unsigned char> payload;
        sc_time head;
    };
    std::vector<Seen> seen;
    int duplicate = -1;   // deliver the packet with this index in `seen` twice
    // Out of order in time (an adaptive network): the extra delay of the
    // data packet with this index in `seen`; `head` records the arrival.
    std::function<sc_time(std::size_t)> retime;
    // Deliver control and response packets (not data) at their time from a
    // thread, as a network would, instead of within the sender's call: a
    // NACK then reaches its sender only when it arrives, so packets sent
    // meanwhile are on their way.
    bool defer_control = false;
    struct Deferred {
        ExanetPacket pkt;
        std::vector<unsigned char> payload;
        std::uint64_t address;
        sc_time at;
    };
    std::deque<Deferred> deferred;
    sc_event deferred_ev;
    explicit Tap(sc_module_name n) : sc_module(n) {
        in.register_b_transport(this, &Tap::b_transport);
        SC_HAS_PROCESS(Tap);
        SC_THREAD(deliver);
    }
    void deliver() {
        for (;;) {
            while (deferred.empty()) wait(deferred_ev);
            Deferred x = deferred.front();
            deferred.pop_front();
            if (x.at > sc_time_stamp()) wait(x.at - sc_time_stamp());
            tlm::tlm_generic_payload gp;
            gp.set_command(tlm::TLM_WRITE_COMMAND);
            gp.set_address(x.address);
            gp.set_data_ptr(x.payload.data());
            gp.set_data_length(static_cast<unsigned>(x.payload.size()));
            gp.set_streaming_width(static_cast<unsigned>(x.payload.size()));
            x.pkt.tail = sc_time_stamp();
            gp.set_extension(&x.pkt);
            sc_time d = SC_ZERO_TIME;
            out->b_transport(gp, d);
            gp.clear_extension(&x.pkt);
        }
    }
    void b_transport(tlm::tlm_generic_payload& gp, sc_time& d) {
        auto* p = gp.get_extension<ExanetPacket>();
        REQUIRE(p);
        // Retimed: the sender's credit comes back as the packet leaves it,
        // not when the (delayed) receiver is done with it, as over a network.
        const bool retimed = retime && p->header.type == PacketType::RdmaWrite;
        const sc_time sent = d;
        if (retimed) {
            const sc_time extra = retime(seen.size());
            d += extra;
            p->tail += extra;
        }
        seen.push_back({p->header, p->footer,
                        std::vector<unsigned char>(gp.get_data_ptr(), gp.get_data_ptr() + gp.get_data_length()),
                        sc_time_stamp() + d});
        const bool twice = static_cast<int>(seen.size()) - 1 == duplicate;
        if (defer_control && p->header.type != PacketType::RdmaWrite) {
            deferred.push_back({*p, seen.back().payload, gp.get_address(), max_time(p->tail, sc_time_stamp() + d)});
            deferred_ev.notify(SC_ZERO_TIME);
            gp.set_response_status(tlm::TLM_OK_RESPONSE);
            return;
        }
        out->b_transport(gp, d);
        if (retimed) d = sent;
        if (twice) {
            gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
            out->b_transport(gp, d);
        }
    }
};

// Stands in for the SMMU between an engine's `mem` and its DRAM: accesses
// touching a "faulting" 4 KiB page (per direction) are answered, terminate
// mode, with an error and a SmmuFaultExtension; `service` after the fault
// the "fault library" makes the page present (when `resolve`) and calls the
// engine's fault_resolved. Counts the writes to every byte.
struct FakeSmmu : sc_module {
    tlm_utils::simple_target_socket<FakeSmmu> in{"in"};
    tlm_utils::simple_initiator_socket<FakeSmmu> out{"out"};
    Pldma* engine = nullptr;
    bool resolve = true;
    sc_time service{5, SC_US};
    std::set<std::pair<std::uint64_t, bool>> faulting;   // (page, write), any stream
    std::set<std::tuple<std::uint32_t, std::uint64_t, bool>> faulting_sid;   // (stream, page, write)
    std::map<std::uint32_t, sc_time> service_of;   // per stream, instead of `service`
    std::vector<std::pair<std::uint32_t, bool>> sids;   // (stream ID, write) of every access
    struct Fault {
        std::uint64_t address;
        bool write;
        sc_time at;
        std::uint32_t sid = 0;
    };
    std::vector<Fault> faults;
    std::vector<sc_time> outcomes;
    std::vector<std::uint32_t> outcome_sids;
    std::map<std::uint64_t, unsigned> writes;   // byte address -> writes
    std::deque<Fault> pending;
    unsigned lose = 0;   // outcomes never reported (as for a fault FSR recorded only as MULTI)
    sc_event ev;
    explicit FakeSmmu(sc_module_name n) : sc_module(n) {
        in.register_b_transport(this, &FakeSmmu::b_transport);
        SC_HAS_PROCESS(FakeSmmu);
        SC_THREAD(library);
    }
    void b_transport(tlm::tlm_generic_payload& gp, sc_time& d) {
        const std::uint64_t a = gp.get_address(), len = gp.get_data_length();
        const bool w = gp.is_write();
        auto* sx = gp.get_extension<StreamIdExtension>();
        REQUIRE(sx);
        const std::uint32_t sid = sx->sid;
        sids.push_back({sid, w});
        for (std::uint64_t page = a >> 12; page <= (a + len - 1) >> 12; ++page) {
            if (!faulting.count({page, w}) && !faulting_sid.count({sid, page, w})) continue;
            auto* ext = gp.get_extension<SmmuFaultExtension>();
            REQUIRE(ext);
            ext->type = FaultType::Translation;
            ext->address = std::max(a, page << 12);
            ext->write = w;
            ext->cb = 0;
            d += sc_time(100, SC_NS);
            gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
            faults.push_back({ext->address, w, sc_time_stamp() + d, sid});
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
            // The earliest-due fault first (streams may have their own service time).
            auto due = [&](const Fault& f) {
                auto it = service_of.find(f.sid);
                return f.at + (it == service_of.end() ? service : it->second);
            };
            auto next = pending.begin();
            for (auto it = pending.begin(); it != pending.end(); ++it)
                if (due(*it) < due(*next)) next = it;
            const sc_time done = due(*next);
            if (done > sc_time_stamp()) {
                wait(done - sc_time_stamp(), ev);   // a fault due earlier may come meanwhile
                continue;
            }
            const Fault f = *next;
            pending.erase(next);
            if (resolve) {
                faulting.erase({f.address >> 12, f.write});
                faulting_sid.erase({f.sid, f.address >> 12, f.write});
            }
            if (lose > 0) {
                --lose;
                continue;
            }
            outcomes.push_back(sc_time_stamp());
            outcome_sids.push_back(f.sid);
            engine->fault_resolved(f.sid, f.address, f.write, resolve, sc_time_stamp());
        }
    }
    // Bytes of [a, a+len) not written exactly once.
    std::size_t not_once(std::uint64_t a, std::uint64_t len) const {
        std::size_t bad = 0;
        for (std::uint64_t i = 0; i < len; ++i) {
            auto it = writes.find(a + i);
            if (it == writes.end() || it->second != 1) ++bad;
        }
        return bad;
    }
};

// A CPU: runs a test program that pokes registers and reads memory.
struct Cpu : vrdmasim_test::MmioCpu<Cpu> {
    using MmioCpu::MmioCpu;
};
using vrdmasim_test::Desc;
using vrdmasim_test::Settings;

// Two engines (node 0 and node 1), each with its own DRAM, wired
// net_out -> tap -> peer net_in in both directions.
struct Bench : vrdmasim_test::ModelEnv {
    std::unique_ptr<Dram> mem0, mem1;
    std::unique_ptr<Pldma> dma0, dma1;
    std::unique_ptr<Tap> tap01, tap10;
    std::unique_ptr<Cpu> cpu0, cpu1;
    std::unique_ptr<FakeSmmu> smmu0, smmu1;   // with_smmu only

    explicit Bench(const Settings& settings = {}, bool with_smmu = false)
        : ModelEnv({Pldma::declare_params, Dram::declare_params}, {{"dram.size", "64MiB"}}, settings) {
        mem0 = std::make_unique<Dram>("mem0", ctx, "node0");
        mem1 = std::make_unique<Dram>("mem1", ctx, "node1");
        const auto coords = std::make_shared<const std::vector<std::uint32_t>>(std::vector<std::uint32_t>{0, 1});
        dma0 = std::make_unique<Pldma>("dma0", ctx, "node0", 0, coords);
        dma1 = std::make_unique<Pldma>("dma1", ctx, "node1", 1, coords);
        tap01 = std::make_unique<Tap>("tap01");
        tap10 = std::make_unique<Tap>("tap10");
        cpu0 = std::make_unique<Cpu>("cpu0");
        cpu1 = std::make_unique<Cpu>("cpu1");
        if (with_smmu) {
            smmu0 = std::make_unique<FakeSmmu>("smmu0");
            smmu1 = std::make_unique<FakeSmmu>("smmu1");
            smmu0->engine = dma0.get();
            smmu1->engine = dma1.get();
            dma0->mem.bind(smmu0->in);
            smmu0->out.bind(mem0->socket);
            dma1->mem.bind(smmu1->in);
            smmu1->out.bind(mem1->socket);
        } else {
            dma0->mem.bind(mem0->socket);
            dma1->mem.bind(mem1->socket);
        }
        dma0->net_out.bind(tap01->in);
        tap01->out.bind(dma1->net_in);
        dma1->net_out.bind(tap10->in);
        tap10->out.bind(dma0->net_in);
        cpu0->mmio.bind(dma0->mmio);
        cpu1->mmio.bind(dma1->mmio);
    }
    // Runs the simulation: node 0's CPU posts one transfer (`post`) and
    // waits until it completed.
    void run_one(const std::function<void(Cpu&)>& post) {
        cpu0->program = [post](Cpu& c) {
            post(c);
            c.wait_count(reg::kTxCompleted, 1);
        };
        sc_start();
    }
    static void poke(Dram& m, std::uint64_t addr, const std::vector<unsigned char>& bytes) {
        tlm::tlm_generic_payload gp;
        gp.set_command(tlm::TLM_WRITE_COMMAND);
        gp.set_address(addr);
        gp.set_data_ptr(const_cast<unsigned char*>(bytes.data()));
        gp.set_data_length(static_cast<unsigned>(bytes.size()));
        REQUIRE(m.socket.get_base_export()->transport_dbg(gp) == bytes.size());
    }
    static std::vector<unsigned char> peek(Dram& m, std::uint64_t addr, std::size_t len) {
        std::vector<unsigned char> out(len);
        tlm::tlm_generic_payload gp;
        gp.set_command(tlm::TLM_READ_COMMAND);
        gp.set_address(addr);
        gp.set_data_ptr(out.data());
        gp.set_data_length(static_cast<unsigned>(len));
        REQUIRE(m.socket.get_base_export()->transport_dbg(gp) == len);
        return out;
    }
    static CompletionRecord record(Dram& m, std::uint64_t addr) {
        const auto b = peek(m, addr, sizeof(CompletionRecord));
        CompletionRecord r;
        std::memcpy(&r, b.data(), sizeof r);
        return r;
    }
};

std::vector<unsigned char> pattern(std::size_t n, unsigned seed) {
    std::vector<unsigned char> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>((i * 131 + seed * 7 + (i >> 8)) & 0xff);
    return v;
}

}   // namespace

TEST_CASE("registers: staged descriptor reads back, bad accesses are refused", "[dma]") {
    Bench b;
    bool ran = false;
    b.cpu0->program = [&](Cpu& c) {
        c.w(reg::kDescSrc, 0x1234);
        c.w(reg::kDescDstNode, 1, 4);
        CHECK(c.r(reg::kDescSrc) == 0x1234);
        CHECK(c.r(reg::kDescDstNode, 4) == 1);
        std::uint64_t v = 0;
        CHECK(c.access(false, 0x80, v, 8) == tlm::TLM_ADDRESS_ERROR_RESPONSE);   // no register there
        // 0x800 is EVENT_COUNTER[0]; past the last counter (dma.event-counters = 64) nothing.
        CHECK(c.access(false, reg::kEventCounterBase, v, 8) == tlm::TLM_OK_RESPONSE);
        CHECK(c.access(false, reg::kEventCounterBase + 8 * 64, v, 8) == tlm::TLM_ADDRESS_ERROR_RESPONSE);
        CHECK(c.access(false, reg::kDescSrc, v, 2) == tlm::TLM_BURST_ERROR_RESPONSE);   // 16-bit access
        CHECK(c.access(false, reg::kDescSrc + 4, v, 8) == tlm::TLM_BURST_ERROR_RESPONSE);   // misaligned
        v = 5;
        CHECK(c.access(true, reg::kTxCompleted, v, 8) == tlm::TLM_COMMAND_ERROR_RESPONSE);   // read-only
        CHECK(c.r(reg::kTxCompleted) == 0);
        CHECK(c.r(reg::kStatus, 4) == 0);
        ran = true;
    };
    sc_start();
    CHECK(ran);
}

TEST_CASE("a posted write lands byte for byte and completes with a record", "[dma]") {
    Bench b(Settings{{"dma.packet-size", "256B"}, {"dma.block-size", "1KiB"}});
    const std::size_t len = 5000;   // not a multiple of block or packet
    const auto src = pattern(len, 1);
    Bench::poke(*b.mem0, 0x10000, src);
    bool ran = false;
    b.cpu0->program = [&](Cpu& c) {
        c.post(0x10000, 1, 0x20000, len, 77, 0x100, false);
        c.wait_count(reg::kTxCompleted, 1);
        ran = true;
    };
    sc_start();
    REQUIRE(ran);
    CHECK(Bench::peek(*b.mem1, 0x20000, len) == src);
    // Nothing written beyond the destination.
    CHECK(Bench::peek(*b.mem1, 0x20000 + len, 64) == std::vector<unsigned char>(64, 0));
    const CompletionRecord r = Bench::record(*b.mem0, 0x100);
    CHECK(r.tag == 77);
    CHECK(r.status == kStatusOk);
    CHECK(r.bytes == len);
    CHECK(r.node == 1);
    CHECK(r.addr == 0x10000);
    CHECK(b.counter("dma0.transfers_completed") == 1);
    CHECK(b.counter("dma1.bytes_received") == len);
}

TEST_CASE("transfers are cut into blocks and packets with header and footer fields", "[dma]") {
    Bench b(Settings{{"dma.packet-size", "256B"}, {"dma.block-size", "1KiB"}});
    const std::size_t len = 2500;   // blocks 1024, 1024, 452; packets 4 + 4 + 2
    Bench::poke(*b.mem0, 0x10000, pattern(len, 2));
    b.cpu0->program = [&](Cpu& c) {
        c.post(0x10000, 1, 0x20000, len, 1, 0x100, true);
        c.wait_count(reg::kTxCompleted, 1);
    };
    b.cpu1->program = [&](Cpu& c) {
        c.w(reg::kRxRingBase, 0x3000);
        c.w(reg::kRxRingEntries, 4, 4);
    };
    sc_start();
    const auto& seen = b.tap01->seen;
    REQUIRE(seen.size() == 10);
    const std::vector<unsigned> sizes{256, 256, 256, 256, 256, 256, 256, 256, 256, 196};
    std::uint64_t off = 0;
    for (std::size_t i = 0; i < seen.size(); ++i) {
        INFO("packet " << i);
        CHECK(seen[i].header.type == PacketType::RdmaWrite);
        CHECK(seen[i].header.size == sizes[i]);
        CHECK(seen[i].header.dst_va == 0x20000 + off);
        CHECK(seen[i].header.dst_coord == 1);
        CHECK(seen[i].footer.src_coord == 0);
        CHECK(seen[i].footer.seq == i);
        CHECK(seen[i].footer.first == (i == 0));
        CHECK(seen[i].footer.last == (i == seen.size() - 1));
        CHECK(seen[i].footer.notify == (i == seen.size() - 1));
        if (i > 0) CHECK(seen[i].head >= seen[i - 1].head);
        off += sizes[i];
    }
    // The receiver acknowledged once, with a response packet.
    REQUIRE(b.tap10->seen.size() == 1);
    CHECK(b.tap10->seen[0].header.type == PacketType::Response);
    // And wrote its notification record.
    const CompletionRecord rx = Bench::record(*b.mem1, 0x3000);
    CHECK(rx.status == kStatusOk);
    CHECK(rx.bytes == len);
    CHECK(rx.node == 0);
    CHECK(rx.addr == 0x20000);
    CHECK(b.counter("dma0.packets_sent") == 10);
}

TEST_CASE("the receive ring wraps and counts notifications", "[dma]") {
    Bench b;
    Bench::poke(*b.mem0, 0x10000, pattern(64, 3));
    std::uint64_t produced = 0;
    b.cpu1->program = [&](Cpu& c) {
        c.w(reg::kRxRingBase, 0x3000);
        c.w(reg::kRxRingEntries, 2, 4);
    };
    b.cpu0->program = [&](Cpu& c) {
        wait(10, SC_NS);
        for (int i = 0; i < 3; ++i) c.post(0x10000, 1, 0x20000 + 64 * i, 64 - i, i, 0x100, true);
        c.wait_count(reg::kTxCompleted, 3);
        produced = b.dma1->rx_signal(0).count_at(sc_time_stamp());
    };
    sc_start();
    CHECK(produced == 3);
    // Entry 0 was overwritten by the third transfer (ring of 2).
    CHECK(Bench::record(*b.mem1, 0x3000).bytes == 62);
    CHECK(Bench::record(*b.mem1, 0x3020).bytes == 63);
}

TEST_CASE("a full queue refuses the doorbell and says so in STATUS", "[dma]") {
    Bench b(Settings{{"dma.queue-depth", "2"}});
    std::vector<std::uint64_t> status;
    b.cpu0->program = [&](Cpu& c) {
        for (int i = 0; i < 4; ++i) {
            c.post(0x10000, 1, 0x20000, 64 * 1024, i, 0x100 + 32 * i, false);
            status.push_back(c.r(reg::kStatus, 4));
        }
        c.wait_count(reg::kTxCompleted, 2);
    };
    sc_start();
    REQUIRE(status.size() == 4);
    // The engine takes the first descriptor at once, so two more fit.
    CHECK((status[0] & 0x80000000u) == 0);
    CHECK((status[1] & 0x80000000u) == 0);
    CHECK((status[2] & 0x80000000u) == 0);
    CHECK((status[3] & 0x80000000u) != 0);
    CHECK(b.counter("dma0.doorbells_refused") == 1);
    CHECK(b.counter("dma0.transfers_posted") == 3);
}

TEST_CASE("a doorbell for a node that does not exist is refused", "[dma]") {
    Bench b;
    std::uint64_t st = 0;
    b.cpu0->program = [&](Cpu& c) {
        c.post(0x10000, 9, 0x20000, 64, 1, 0x100, false);
        st = c.r(reg::kStatus, 4);
    };
    sc_start();
    CHECK((st & 0x80000000u) != 0);
    CHECK(b.counter("dma0.transfers_posted") == 0);
}

TEST_CASE("a doorbell with an unknown operation is refused, never run as a write", "[dma]") {
    Bench b;
    std::uint64_t st = 0, op = 0;
    b.cpu0->program = [&](Cpu& c) {
        c.w(reg::kDescOp, 99, 4);
        op = c.r(reg::kDescOp, 4);
        c.post(0x10000, 1, 0x20000, 64, 1, 0x100, false);
        st = c.r(reg::kStatus, 4);
    };
    sc_start();
    CHECK(op == 99);
    CHECK((st & 0x80000000u) != 0);
    CHECK(b.counter("dma0.transfers_posted") == 0);
    CHECK(b.counter("dma0.doorbells_refused") == 1);
}

TEST_CASE("a source that cannot be read completes with an error, not success", "[dma]") {
    Bench b;
    b.cpu0->program = [&](Cpu& c) {
        c.post(64ull << 20, 1, 0x20000, 4096, 5, 0x100, false);   // source beyond the 64 MiB DRAM
        c.wait_count(reg::kTxCompleted, 1);
    };
    sc_start();
    const CompletionRecord r = Bench::record(*b.mem0, 0x100);
    CHECK(r.tag == 5);
    CHECK(r.status == kStatusError);
    CHECK(r.bytes == 0);
    CHECK(b.counter("dma0.transfers_failed") == 1);
    CHECK(b.counter("dma0.transfers_completed") == 0);
    CHECK(b.tap01->seen.empty());
}

TEST_CASE("a destination that cannot be written makes the sender's completion an error", "[dma]") {
    Bench b;
    Bench::poke(*b.mem0, 0x10000, pattern(1024, 4));
    b.cpu0->program = [&](Cpu& c) {
        c.post(0x10000, 1, (64ull << 20) - 512, 1024, 6, 0x100, false);   // runs off the end of node 1's DRAM
        c.wait_count(reg::kTxCompleted, 1);
    };
    sc_start();
    const CompletionRecord r = Bench::record(*b.mem0, 0x100);
    CHECK(r.status == kStatusError);
    CHECK(r.bytes == 0);
    CHECK(b.counter("dma1.rx_errors") >= 1);
}

TEST_CASE("a zero-length transfer completes at once and sends nothing", "[dma]") {
    Bench b;
    b.run_one([&](Cpu& c) { c.post(0x10000, 1, 0x20000, 0, 8, 0x100, false); });
    const CompletionRecord r = Bench::record(*b.mem0, 0x100);
    CHECK(r.status == kStatusOk);
    CHECK(r.bytes == 0);
    CHECK(b.tap01->seen.empty());
}

TEST_CASE("completion waits for the data: the record comes after the last write", "[dma]") {
    Bench b(Settings{{"dram.latency", "200ns"}, {"dma.setup-time", "100ns"}});
    const std::size_t len = 4096;
    Bench::poke(*b.mem0, 0x10000, pattern(len, 5));
    sc_time posted, completed;
    b.cpu0->program = [&](Cpu& c) {
        posted = sc_time_stamp();
        c.post(0x10000, 1, 0x20000, len, 1, 0x100, false);
        c.wait_count(reg::kTxCompleted, 1);
        completed = sc_time_stamp();
    };
    sc_start();
    REQUIRE(!b.tap01->seen.empty());
    const sc_time last_head = b.tap01->seen.back().head;
    // Setup, at least one read latency, then the last write's latency and
    // the acknowledgement before the record.
    CHECK(last_head >= posted + sc_time(300, SC_NS));
    const Histogram* lat = b.stats.find_histogram("dma0.transfer_latency");
    REQUIRE(lat);
    REQUIRE(lat->count() == 1);
    // Record write at the sender adds another DRAM access: >= 3 latencies.
    CHECK(lat->max() >= 0.1 + 3 * 0.2);
    CHECK(completed >= last_head + sc_time(400, SC_NS));
}

// ---------------------------------------------------------------- fault-tolerant engine

namespace {
struct Reply {   // a response or control packet's payload
    std::uint64_t id = 0;
    std::uint32_t word = 0;   // status (response) or opcode (control)
    std::uint32_t index = 0;   // packet index (NACK, retransmit request)
};
Reply reply(const Tap::Seen& s) {
    Reply r;
    REQUIRE(s.payload.size() == 16);
    std::memcpy(&r.id, s.payload.data(), 8);
    std::memcpy(&r.word, s.payload.data() + 8, 4);
    std::memcpy(&r.index, s.payload.data() + 12, 4);
    return r;
}
const Settings kFt{{"dma.packet-size", "256B"}, {"dma.block-size", "1KiB"}, {"dma.fault-tolerant", "true"}};
const Settings kNotFt{{"dma.packet-size", "256B"}, {"dma.block-size", "1KiB"}, {"dma.fault-tolerant", "false"}};
}   // namespace

TEST_CASE("fault-tolerant: a source fault parks the transfer until resolved, then re-reads", "[dma][fault]") {
    Bench b(kFt, true);
    const std::size_t len = 5000;   // 5 blocks, 20 packets
    const auto src = pattern(len, 11);
    Bench::poke(*b.mem0, 0x10800, src);
    // The source's second page (0x11000: transfer offsets 2048..) is not present.
    b.smmu0->faulting.insert({0x11, false});
    sc_time completed;
    b.cpu0->program = [&](Cpu& c) {
        c.post(0x10800, 1, 0x20000, len, 9, 0x100, false);
        c.wait_count(reg::kTxCompleted, 1);
        completed = sc_time_stamp();
    };
    sc_start();
    REQUIRE(b.smmu0->faults.size() == 1);
    CHECK(b.smmu0->faults[0].address == 0x11000);
    CHECK_FALSE(b.smmu0->faults[0].write);
    REQUIRE(b.smmu0->outcomes.size() == 1);
    const CompletionRecord r = Bench::record(*b.mem0, 0x100);
    CHECK(r.tag == 9);
    CHECK(r.status == kStatusOk);
    CHECK(r.bytes == len);
    CHECK(Bench::peek(*b.mem1, 0x20000, len) == src);
    CHECK(b.smmu1->not_once(0x20000, len) == 0);
    CHECK(b.counter("dma0.parks") == 1);
    CHECK(b.counter("dma0.rereads") == 1);
    CHECK(b.counter("dma0.smmu_faults") == 1);
    CHECK(b.counter("dma0.transfers_completed") == 1);
    CHECK(b.counter("dma0.transfers_failed") == 0);
    CHECK(b.counter("dma0.packets_sent") == 20);   // nothing sent twice
    CHECK(b.counter("dma0.retransmitted_bytes") == 0);
    CHECK(b.counter("dma1.bytes_received") == len);
    CHECK(b.tap01->seen.size() == 20);
    for (std::size_t i = 0; i < b.tap01->seen.size(); ++i) CHECK(b.tap01->seen[i].footer.seq == i);
    const Histogram* park = b.stats.find_histogram("dma0.park_time");
    REQUIRE(park);
    CHECK(park->count() == 1);
    CHECK(park->min() >= 5.0);   // the fake library's service time
    // Packets of the faulting block leave only after the resolution.
    CHECK(b.tap01->seen[8].head >= b.smmu0->outcomes[0]);
    CHECK(b.tap01->seen[7].head < b.smmu0->faults[0].at + sc_time(1, SC_US));
    CHECK(completed > b.smmu0->outcomes[0]);
}

TEST_CASE("fault-tolerant: a destination fault is NACKed and retransmitted from its sequence number", "[dma][fault]") {
    Bench b(kFt, true);
    const std::size_t len = 5000;
    const auto src = pattern(len, 12);
    Bench::poke(*b.mem0, 0x10000, src);
    // Destination 0x20900: page 0x21000 starts at transfer offset 0x700 =
    // 1792, packet 7, in the middle of block 1.
    b.smmu1->faulting.insert({0x21, true});
    b.cpu1->program = [&](Cpu& c) {
        c.w(reg::kRxRingBase, 0x3000);
        c.w(reg::kRxRingEntries, 4, 4);
    };
    b.cpu0->program = [&](Cpu& c) {
        wait(10, SC_NS);
        c.post(0x10000, 1, 0x20900, len, 4, 0x100, true);
        c.wait_count(reg::kTxCompleted, 1);
    };
    sc_start();
    REQUIRE(b.smmu1->faults.size() == 1);
    CHECK(b.smmu1->faults[0].address == 0x21000);
    CHECK(b.smmu1->faults[0].write);
    // Destination byte for byte, each byte written exactly once, nothing beyond.
    CHECK(Bench::peek(*b.mem1, 0x20900, len) == src);
    CHECK(b.smmu1->not_once(0x20900, len) == 0);
    CHECK(b.smmu1->writes.size() == len + sizeof(CompletionRecord));   // payload + notification record
    // On the wire: packets 0..7 (7 NACKed, the sender stops), then 7..19 again.
    const auto& out = b.tap01->seen;
    REQUIRE(out.size() == 8 + 13);
    for (std::size_t i = 0; i < 8; ++i) CHECK(out[i].footer.seq == i);
    for (std::size_t i = 0; i < 13; ++i) CHECK(out[8 + i].footer.seq == 7 + i);
    CHECK(out[8].header.dst_va == 0x20900 + 7 * 256);
    CHECK(out[8].payload == std::vector<unsigned char>(src.begin() + 7 * 256, src.begin() + 8 * 256));
    // Back: NACK (status fault, packet 7), retransmit request, ACK.
    const auto& back = b.tap10->seen;
    REQUIRE(back.size() == 3);
    CHECK(back[0].header.type == PacketType::Response);
    CHECK(reply(back[0]).word == kStatusFault);
    CHECK(reply(back[0]).index == 7);
    CHECK(back[0].footer.seq == 7);
    CHECK(back[1].header.type == PacketType::Control);
    CHECK(reply(back[1]).word == kControlRetransmit);
    CHECK(reply(back[1]).index == 7);
    CHECK(reply(back[1]).id == reply(back[0]).id);
    CHECK(back[1].head >= b.smmu1->outcomes.at(0));
    CHECK(back[2].header.type == PacketType::Response);
    CHECK(reply(back[2]).word == kStatusOk);
    CHECK(out[8].head >= back[1].head);
    const CompletionRecord r = Bench::record(*b.mem0, 0x100);
    CHECK(r.status == kStatusOk);
    CHECK(r.bytes == len);
    const CompletionRecord rx = Bench::record(*b.mem1, 0x3000);
    CHECK(rx.status == kStatusOk);
    CHECK(rx.bytes == len);
    CHECK(rx.addr == 0x20900);
    CHECK(b.counter("dma1.nacks_sent") == 1);
    CHECK(b.counter("dma1.retransmit_requests") == 1);
    CHECK(b.counter("dma0.nacks_received") == 1);
    CHECK(b.counter("dma0.retransmissions") == 1);
    CHECK(b.counter("dma0.retransmitted_bytes") == len - 7 * 256);
    CHECK(b.counter("dma0.packets_sent") == 21);
    CHECK(b.counter("dma1.packets_received") == 21);
    CHECK(b.counter("dma1.bytes_received") == len);
    CHECK(b.counter("dma1.duplicates_dropped") == 0);
    CHECK(b.counter("dma1.rx_errors") == 0);
    CHECK(b.counter("dma0.transfers_completed") == 1);
    CHECK(b.counter("dma0.transfers_failed") == 0);
    CHECK(b.counter("dma0.parks") == 0);
}

TEST_CASE("fault-tolerant: a packet delivered twice is recognised and dropped", "[dma][fault]") {
    Bench b(kFt, true);
    const std::size_t len = 2000;   // 8 packets
    const auto src = pattern(len, 13);
    Bench::poke(*b.mem0, 0x10000, src);
    b.tap01->duplicate = 3;
    b.run_one([&](Cpu& c) { c.post(0x10000, 1, 0x20000, len, 1, 0x100, false); });
    CHECK(Bench::peek(*b.mem1, 0x20000, len) == src);
    CHECK(b.smmu1->not_once(0x20000, len) == 0);
    CHECK(b.smmu1->writes.size() == len);
    CHECK(b.counter("dma1.duplicates_dropped") == 1);
    CHECK(b.counter("dma1.packets_received") == 9);
    CHECK(b.counter("dma1.bytes_received") == len);
    CHECK(b.counter("dma1.rx_errors") == 0);
    CHECK(Bench::record(*b.mem0, 0x100).status == kStatusOk);
}

TEST_CASE("fault-tolerant: an unresolved source fault completes with an error", "[dma][fault]") {
    Bench b(kFt, true);
    Bench::poke(*b.mem0, 0x10000, pattern(4096, 14));
    b.smmu0->faulting.insert({0x10, false});
    b.smmu0->resolve = false;
    b.run_one([&](Cpu& c) { c.post(0x10000, 1, 0x20000, 4096, 5, 0x100, false); });
    REQUIRE(b.smmu0->outcomes.size() == 1);
    const CompletionRecord r = Bench::record(*b.mem0, 0x100);
    CHECK(r.tag == 5);
    CHECK(r.status == kStatusError);
    CHECK(r.bytes == 0);
    CHECK(b.counter("dma0.parks") == 1);
    CHECK(b.counter("dma0.rereads") == 0);
    CHECK(b.counter("dma0.transfers_failed") == 1);
    CHECK(b.counter("dma0.transfers_completed") == 0);
    CHECK(b.tap01->seen.empty());
    CHECK(b.stats.find_histogram("dma0.park_time")->count() == 1);
}

TEST_CASE("fault-tolerant: an unresolved destination fault gives an error ACK and an error completion",
          "[dma][fault]") {
    Bench b(kFt, true);
    const std::size_t len = 5000;
    Bench::poke(*b.mem0, 0x10000, pattern(len, 15));
    b.smmu1->faulting.insert({0x21, true});
    b.smmu1->resolve = false;
    b.run_one([&](Cpu& c) { c.post(0x10000, 1, 0x20900, len, 6, 0x100, false); });
    const CompletionRecord r = Bench::record(*b.mem0, 0x100);
    CHECK(r.status == kStatusError);
    CHECK(r.bytes == 0);
    CHECK(b.tap01->seen.size() == 8);   // stopped after the NACKed packet 7
    const auto& back = b.tap10->seen;
    REQUIRE(back.size() == 2);
    CHECK(reply(back[0]).word == kStatusFault);
    CHECK(reply(back[0]).index == 7);
    CHECK(back[1].header.type == PacketType::Response);
    CHECK(reply(back[1]).word == kStatusError);
    CHECK(b.counter("dma1.nacks_sent") == 1);
    CHECK(b.counter("dma1.retransmit_requests") == 0);
    CHECK(b.counter("dma1.bytes_received") == 7 * 256);
    CHECK(b.counter("dma0.transfers_failed") == 1);
    CHECK(b.counter("dma0.transfers_completed") == 0);
    CHECK(b.counter("dma0.retransmitted_bytes") == 0);
}

TEST_CASE("not fault-tolerant: a source SMMU fault fails the transfer as before", "[dma][fault]") {
    {
        Bench b(kNotFt, true);
        Bench::poke(*b.mem0, 0x10000, pattern(4096, 16));
        b.smmu0->faulting.insert({0x10, false});
        b.run_one([&](Cpu& c) { c.post(0x10000, 1, 0x20000, 4096, 5, 0x100, false); });
        CHECK(Bench::record(*b.mem0, 0x100).status == kStatusError);
        CHECK(b.counter("dma0.transfers_failed") == 1);
        CHECK(b.counter("dma0.parks") == 0);
        CHECK(b.counter("dma0.fault_outcomes_unmatched") == 0);   // the outcome is ignored
        CHECK(b.tap01->seen.empty());
    }
}

TEST_CASE("not fault-tolerant: a destination SMMU fault fails the transfer as before", "[dma][fault]") {
    {
        Bench b(kNotFt, true);
        const std::size_t len = 5000;
        Bench::poke(*b.mem0, 0x10000, pattern(len, 17));
        b.smmu1->faulting.insert({0x21, true});
        b.run_one([&](Cpu& c) { c.post(0x10000, 1, 0x20900, len, 6, 0x100, false); });
        const CompletionRecord r = Bench::record(*b.mem0, 0x100);
        CHECK(r.status == kStatusError);
        CHECK(r.bytes == 0);
        CHECK(b.tap01->seen.size() == 20);   // everything sent; the receiver marks the transfer bad
        REQUIRE(b.tap10->seen.size() == 1);
        CHECK(reply(b.tap10->seen[0]).word == kStatusError);
        CHECK(b.counter("dma1.nacks_sent") == 0);
        CHECK(b.counter("dma0.retransmitted_bytes") == 0);
        CHECK(b.counter("dma0.transfers_failed") == 1);
    }
}

// ---------------------------------------------------------------- channels

namespace {
constexpr std::uint64_t page(unsigned c) { return c * reg::kChannelStride; }
constexpr std::uint64_t ctrl(unsigned c) { return reg::kKernelBase + 8 * c + reg::kChannelCtrl; }

// Channel 0 posts 4 KiB whose whole source page faults (outcome 50 us
// later), channel 1 another 4 KiB 1 us after; runs them and returns when
// each channel's transfer completed, both landed byte for byte.
struct ParkedRun {
    sc_time done0, done1;
};
ParkedRun run_channel_0_parked(Bench& b) {
    b.smmu0->service = sc_time(50, SC_US);
    const auto a = pattern(4096, 3), c2 = pattern(4096, 4);
    Bench::poke(*b.mem0, 0x10000, a);
    Bench::poke(*b.mem0, 0x20000, c2);
    b.smmu0->faulting.insert({0x10, false});   // channel 0's whole source page
    ParkedRun out;
    b.cpu0->program = [&](Cpu& c) {
        c.base = page(0);
        c.post(0x10000, 1, 0x30000, 4096, 1, 0x100, false);
        wait(1, SC_US);
        c.base = page(1);
        c.post(0x20000, 1, 0x40000, 4096, 2, 0x200, false);
        c.wait_count(reg::kTxCompleted, 1);
        out.done1 = sc_time_stamp();
        c.base = page(0);
        c.wait_count(reg::kTxCompleted, 1);
        out.done0 = sc_time_stamp();
    };
    sc_start();
    REQUIRE(b.smmu0->outcomes.size() == 1);
    CHECK(Bench::peek(*b.mem1, 0x30000, 4096) == a);
    CHECK(Bench::peek(*b.mem1, 0x40000, 4096) == c2);
    return out;
}
}   // namespace

TEST_CASE("channels: each has its own register page, the kernel's page holds domain and enable", "[dma][channel]") {
    Bench b(Settings{{"dma.channels", "4"}});
    b.cpu0->program = [&](Cpu& c) {
        c.w(page(1) + reg::kDescSrc, 0x1111);
        c.w(page(2) + reg::kDescSrc, 0x2222);
        CHECK(c.r(page(1) + reg::kDescSrc) == 0x1111);
        CHECK(c.r(page(2) + reg::kDescSrc) == 0x2222);
        CHECK(c.r(page(0) + reg::kDescSrc) == 0);
        // Reset: every channel enabled in domain 0.
        CHECK(c.r(ctrl(3), 4) == reg::kCtrlEnable);
        c.w(ctrl(3), reg::kCtrlEnable | 0x42, 4);
        CHECK(c.r(ctrl(3), 4) == (reg::kCtrlEnable | 0x42));
        // A channel beyond dma.channels, and its control word, do not exist.
        std::uint64_t v = 0;
        CHECK(c.access(false, page(4) + reg::kStatus, v, 4) == tlm::TLM_ADDRESS_ERROR_RESPONSE);
        CHECK(c.access(false, ctrl(4), v, 4) == tlm::TLM_ADDRESS_ERROR_RESPONSE);
        // A disabled channel refuses its doorbell.
        c.w(ctrl(2), 0, 4);
        c.base = page(2);
        c.post(0x1000, 1, 0x2000, 64, 1, 0, false);
        CHECK((c.r(page(2) + reg::kStatus, 4) & 0x80000000u) != 0);
        c.base = page(1);
        c.post(0x1000, 1, 0x2000, 64, 1, 0, false);
        CHECK((c.r(page(1) + reg::kStatus, 4) & 0x80000000u) == 0);
        c.wait_count(reg::kTxCompleted, 1);
        CHECK(c.r(page(0) + reg::kTxCompleted) == 0);   // counted on its own channel only
    };
    sc_start();
    CHECK(b.counter("dma0.doorbells_refused") == 1);
    CHECK(b.counter("dma0.transfers_completed") == 1);
}

TEST_CASE("channels: the scheduler shares the engine round robin, a turn of channel-blocks blocks", "[dma][channel]") {
    Bench b(Settings{{"dma.packet-size", "256B"}, {"dma.block-size", "1KiB"}, {"dma.channel-blocks", "1"}});
    const auto a = pattern(4096, 1), c2 = pattern(4096, 2);
    Bench::poke(*b.mem0, 0x10000, a);
    Bench::poke(*b.mem0, 0x20000, c2);
    b.cpu0->program = [&](Cpu& c) {
        c.base = page(0);
        c.post(0x10000, 1, 0x30000, 4096, 1, 0x100, false);
        c.base = page(1);
        c.post(0x20000, 1, 0x40000, 4096, 2, 0x200, false);
        c.wait_count(reg::kTxCompleted, 1);
        c.base = page(0);
        c.wait_count(reg::kTxCompleted, 1);
    };
    sc_start();
    CHECK(Bench::peek(*b.mem1, 0x30000, 4096) == a);
    CHECK(Bench::peek(*b.mem1, 0x40000, 4096) == c2);
    // Blocks of 4 packets alternate between the two transfers' destinations.
    const auto& seen = b.tap01->seen;
    REQUIRE(seen.size() == 32);
    int switches = 0;
    for (std::size_t i = 1; i < seen.size(); ++i)
        if ((seen[i].header.dst_va >> 16) != (seen[i - 1].header.dst_va >> 16)) ++switches;
    CHECK(switches == 7);
    for (std::size_t i = 0; i < seen.size(); ++i) CHECK(seen[i].header.vc == (i / 4) % 2);
}

TEST_CASE("channels: a channel parked on a source fault does not hold the others back", "[dma][channel][fault]") {
    Bench b(kFt, true);
    const ParkedRun r = run_channel_0_parked(b);
    CHECK(r.done1 < b.smmu0->outcomes[0]);   // channel 1 finished while channel 0 waited
    CHECK(r.done0 > b.smmu0->outcomes[0]);
    CHECK(Bench::record(*b.mem0, 0x100).status == kStatusOk);
    CHECK(Bench::record(*b.mem0, 0x200).status == kStatusOk);
    CHECK(b.counter("dma0.parks") == 1);
}

TEST_CASE("channels: an outcome that never comes is retried after dma.fault-timeout", "[dma][channel][fault]") {
    Settings s = kFt;
    s.push_back({"dma.fault-timeout", "30us"});
    Bench b(s, true);
    b.smmu0->lose = 1;   // the source fault's outcome is lost, the page made present all the same
    b.smmu1->lose = 1;   // so is the destination's
    const auto a = pattern(2048, 5);
    Bench::poke(*b.mem0, 0x10000, a);
    b.smmu0->faulting.insert({0x10, false});
    b.smmu1->faulting.insert({0x30, true});
    b.run_one([&](Cpu& c) { c.post(0x10000, 1, 0x30000, 2048, 1, 0x100, false); });
    CHECK(b.smmu0->outcomes.empty());
    CHECK(b.smmu1->outcomes.empty());
    CHECK(Bench::record(*b.mem0, 0x100).status == kStatusOk);
    CHECK(Bench::peek(*b.mem1, 0x30000, 2048) == a);
    CHECK(b.smmu1->not_once(0x30000, 2048) == 0);
    CHECK(b.counter("dma0.fault_timeouts") == 1);
    CHECK(b.counter("dma1.fault_timeouts") == 1);
    CHECK(b.counter("dma1.retransmit_requests") == 1);
}

TEST_CASE("protection domains: a transfer to a node without a channel of its domain is refused there",
          "[dma][channel]") {
    Bench b;
    const auto a = pattern(1024, 6);
    Bench::poke(*b.mem0, 0x10000, a);
    Bench::poke(*b.mem1, 0x30000, std::vector<unsigned char>(1024, 0xee));
    b.cpu1->program = [&](Cpu& c) { c.w(ctrl(0), reg::kCtrlEnable | 7, 4); };   // the receiver's job: domain 7
    b.cpu0->program = [&](Cpu& c) {
        c.w(ctrl(0), reg::kCtrlEnable | 5, 4);   // the sender's: domain 5
        wait(10, SC_NS);
        c.post(0x10000, 1, 0x30000, 1024, 1, 0x100, false);
        c.wait_count(reg::kTxCompleted, 1);
    };
    sc_start();
    CHECK(Bench::record(*b.mem0, 0x100).status == kStatusError);
    CHECK(Bench::peek(*b.mem1, 0x30000, 1024) == std::vector<unsigned char>(1024, 0xee));   // nothing written
    CHECK(b.counter("dma1.pd_violations") == 1);
    CHECK(b.counter("dma1.bytes_received") == 0);
    for (const auto& p : b.tap01->seen) CHECK(p.header.pdid == 5);
}

TEST_CASE("notifications: footer notify, notification packet and the event counter", "[dma][channel]") {
    Bench b;
    Bench::poke(*b.mem0, 0x10000, pattern(512, 7));
    std::uint64_t events_after_first = 0;
    b.cpu1->program = [&](Cpu& c) {
        c.w(ctrl(1), reg::kCtrlEnable | 3, 4);   // channel 1 of the receiver belongs to domain 3
        c.w(page(1) + reg::kRxRingBase, 0x5000);
        c.w(page(1) + reg::kRxRingEntries, 4, 4);
    };
    b.cpu0->program = [&](Cpu& c) {
        c.w(ctrl(2), reg::kCtrlEnable | 3, 4);
        wait(10, SC_NS);
        c.base = page(2);
        // 1: notify in the last packet's footer.
        c.post(0x10000, 1, 0x30000, 512, 1, 0x100, true);
        c.wait_count(reg::kTxCompleted, 1);
        events_after_first = b.dma1->rx_signal(1).count_at(sc_time_stamp());
        // 2: a notification packet after the ACK.
        Desc d;
        d.src = 0x10000, d.dst = 0x31000, d.len = 512, d.tag = 2, d.compl_addr = 0x120, d.node = 1;
        d.flags = kFlagNotifyPacket;
        c.stage(d);
        c.wait_count(reg::kTxCompleted, 2);
    };
    sc_start();
    CHECK(events_after_first == 1);
    CHECK(b.dma1->rx_signal(1).count_at(sc_time_stamp()) == 2);
    CHECK(b.dma1->rx_signal(0).count_at(sc_time_stamp()) == 0);   // domain 3 lives on channel 1
    CHECK(b.counter("dma1.notifications") == 2);
    const CompletionRecord r1 = Bench::record(*b.mem1, 0x5000);
    const CompletionRecord r2 = Bench::record(*b.mem1, 0x5020);
    CHECK(r1.status == kStatusOk);
    CHECK(r1.addr == 0x30000);
    CHECK(r1.bytes == 512);
    CHECK(r2.status == kStatusOk);
    CHECK(r2.addr == 0x31000);
    CHECK(r2.bytes == 512);
    // The notification packet went out after the ACK, as a type-6 packet.
    const auto& out = b.tap01->seen;
    REQUIRE(!out.empty());
    CHECK(out.back().header.type == PacketType::Completion);
    CHECK(out.back().header.pdid == 3);
}

TEST_CASE("netvm: packets for a non-resident page wait in a bounded kernel buffer and are copied in once",
          "[dma][netvm]") {
    Settings s = kFt;
    s.push_back({"dma.netvm-buffer", "16KiB"});
    Bench b(s, true);
    b.smmu1->service = sc_time(30, SC_US);
    const std::size_t len = 40 * 1024;
    const auto a = pattern(len, 8);
    Bench::poke(*b.mem0, 0x10000, a);
    for (std::uint64_t p = 0x40; p < 0x4a; ++p) b.smmu1->faulting.insert({p, true});   // every destination page
    std::uint64_t copied = 0, peak_seen = 0;
    std::map<std::uint64_t, unsigned> copies;   // byte -> kernel copies
    b.dma1->enable_netvm([&](std::uint32_t, std::uint64_t va, const unsigned char* data, std::uint64_t n, sc_time at) {
        Bench::poke(*b.mem1, va, std::vector<unsigned char>(data, data + n));
        for (std::uint64_t i = 0; i < n; ++i) ++copies[va + i];
        copied += n;
        return at + sc_time(n, SC_NS);
    });
    b.run_one([&](Cpu& c) { c.post(0x10000, 1, 0x40000, len, 1, 0x100, false); });
    const Scalar* peak = b.stats.find_scalar("dma1.netvm_peak");
    REQUIRE(peak);
    peak_seen = static_cast<std::uint64_t>(peak->value());
    CHECK(peak_seen <= 16 * 1024);
    CHECK(peak_seen > 0);
    CHECK(b.counter("dma1.netvm_full") > 0);   // held back rather than overflowing
    CHECK(Bench::record(*b.mem0, 0x100).status == kStatusOk);
    CHECK(Bench::peek(*b.mem1, 0x40000, len) == a);
    // Every byte landed exactly once: by the engine or by the kernel's copy.
    std::size_t bad = 0;
    for (std::uint64_t i = 0; i < len; ++i) {
        const auto e = b.smmu1->writes.find(0x40000 + i);
        const auto k = copies.find(0x40000 + i);
        const unsigned n = (e == b.smmu1->writes.end() ? 0 : e->second) + (k == copies.end() ? 0 : k->second);
        if (n != 1) ++bad;
    }
    CHECK(bad == 0);
    CHECK(copied == b.counter("dma1.kernel_copy_bytes"));
    CHECK(copied > 0);
    CHECK(b.counter("dma1.bytes_received") == len);
    CHECK(b.counter("dma1.nacks_sent") == 0);
    CHECK(b.counter("dma0.retransmitted_bytes") == 0);
}

TEST_CASE("fault-tolerant: a completion record whose page faults is written once the page is back", "[dma][fault]") {
    Bench b(kFt, true);
    const auto a = pattern(1024, 9);
    Bench::poke(*b.mem0, 0x10000, a);
    b.smmu0->faulting.insert({0x5, true});   // the record's page (0x5000), for writes
    sc_time seen;
    b.cpu0->program = [&](Cpu& c) {
        c.post(0x10000, 1, 0x30000, 1024, 77, 0x5000, false);
        c.wait_count(reg::kTxCompleted, 1);
        seen = sc_time_stamp();
    };
    sc_start();
    REQUIRE(b.smmu0->outcomes.size() == 1);
    const CompletionRecord r = Bench::record(*b.mem0, 0x5000);
    CHECK(r.tag == 77);
    CHECK(r.status == kStatusOk);
    CHECK(r.bytes == 1024);
    CHECK(seen >= b.smmu0->outcomes[0]);   // the count moves only once the record is in memory
    CHECK(b.counter("dma0.record_retries") == 1);
    CHECK(b.counter("dma0.rx_errors") == 0);
}

// ---------------------------------------------------------------- RDMA read

namespace {
// Post an RDMA read on `c`'s channel: `len` bytes at `remote_src` of node
// `node` into `local_dst` here.
void post_read(Cpu& c, unsigned node, std::uint64_t remote_src, std::uint64_t local_dst, std::uint64_t len,
               std::uint64_t tag, std::uint64_t compl_addr, std::uint32_t flags = 0) {
    Desc d;
    d.src = remote_src, d.dst = local_dst, d.len = len, d.tag = tag, d.compl_addr = compl_addr, d.node = node;
    d.flags = flags;
    d.op = DescOp::Read;
    c.stage(d);
}
// The read request's payload: id, length, initiator's destination.
struct ReadRequestSeen {
    std::uint64_t id = 0, len = 0, dst = 0;
};
ReadRequestSeen request_of(const Tap::Seen& s) {
    ReadRequestSeen r;
    REQUIRE(s.payload.size() == ReadProtocol::kRequestBytes);
    std::memcpy(&r.id, s.payload.data(), 8);
    std::memcpy(&r.len, s.payload.data() + 8, 8);
    std::memcpy(&r.dst, s.payload.data() + 16, 8);
    return r;
}
}   // namespace

TEST_CASE("read: the remote region lands byte for byte at the initiator, which alone writes a record", "[dma][read]") {
    Bench b(Settings{{"dma.packet-size", "256B"}, {"dma.block-size", "1KiB"}});
    const std::size_t len = 5000;   // not a multiple of block or packet
    const auto src = pattern(len, 31);
    Bench::poke(*b.mem1, 0x40000, src);
    std::uint64_t tx1 = 99;
    b.cpu0->program = [&](Cpu& c) {
        post_read(c, 1, 0x40000, 0x50000, len, 42, 0x100);
        CHECK((c.r(reg::kStatus, 4) & 0x80000000u) == 0);
        c.wait_count(reg::kTxCompleted, 1);
    };
    b.cpu1->program = [&](Cpu& c) {
        wait(1, SC_MS);
        tx1 = c.r(reg::kTxCompleted);
    };
    sc_start();
    CHECK(Bench::peek(*b.mem0, 0x50000, len) == src);
    CHECK(Bench::peek(*b.mem0, 0x50000 + len, 64) == std::vector<unsigned char>(64, 0));   // nothing beyond
    const CompletionRecord r = Bench::record(*b.mem0, 0x100);
    CHECK(r.tag == 42);
    CHECK(r.status == kStatusOk);
    CHECK(r.bytes == len);
    CHECK(r.node == 1);
    CHECK(r.addr == 0x40000);
    CHECK(tx1 == 0);   // the responder's channel completes nothing
    // On the wire: the request (type 1, remote source in the header, id,
    // length and destination in its payload), later the reply's ACK.
    const auto& out = b.tap01->seen;
    REQUIRE(out.size() == 2);
    CHECK(out[0].header.type == PacketType::ReadRequest);
    CHECK(out[0].header.dst_va == 0x40000);
    CHECK(out[0].header.dst_coord == 1);
    CHECK(out[0].header.size == ReadProtocol::kRequestBytes);
    CHECK(out[0].footer.src_coord == 0);
    const ReadRequestSeen q = request_of(out[0]);
    CHECK(q.len == len);
    CHECK(q.dst == 0x50000);
    CHECK(out[1].header.type == PacketType::Response);
    CHECK(reply(out[1]).word == kStatusOk);
    CHECK(reply(out[1]).id == q.id);
    // The reply: 20 data packets carrying the initiator's transfer id and
    // destination, the footer's reply bit, in sequence.
    const auto& back = b.tap10->seen;
    REQUIRE(back.size() == 20);
    for (std::size_t i = 0; i < back.size(); ++i) {
        CHECK(back[i].header.type == PacketType::RdmaWrite);
        CHECK(back[i].footer.reply);
        CHECK(back[i].footer.seq == i);
        CHECK(back[i].head >= out[0].head);
    }
    CHECK(back[0].header.dst_va == 0x50000);
    CHECK(back.back().footer.last);
    CHECK(!back.back().footer.notify);
    CHECK(out[1].head >= back.back().head);
    CHECK(b.counter("dma0.reads_posted") == 1);
    CHECK(b.counter("dma0.transfers_posted") == 1);
    CHECK(b.counter("dma0.transfers_completed") == 1);
    CHECK(b.counter("dma0.read_bytes") == len);
    CHECK(b.counter("dma0.bytes_received") == len);
    CHECK(b.counter("dma0.notifications") == 0);
    CHECK(b.counter("dma1.read_requests") == 1);
    CHECK(b.counter("dma1.read_requests_served") == 1);
    CHECK(b.counter("dma1.read_replies_failed") == 0);
    CHECK(b.counter("dma1.transfers_completed") == 0);
    CHECK(b.counter("dma1.transfers_posted") == 0);
    CHECK(b.counter("dma1.bytes_sent") == len);
    CHECK(b.counter("dma1.rx_errors") == 0);
    CHECK(b.counter("dma0.rx_errors") == 0);
    CHECK(b.stats.find_histogram("dma0.read_latency")->count() == 1);
}

TEST_CASE("read: zero bytes complete at once, flags and a read of the own node are refused", "[dma][read]") {
    Bench b;
    std::uint64_t st_flags = 0, st_self = 0;
    b.cpu0->program = [&](Cpu& c) {
        post_read(c, 1, 0x40000, 0x50000, 64, 1, 0x200, kFlagNotify);
        st_flags = c.r(reg::kStatus, 4);
        post_read(c, 0, 0x40000, 0x50000, 64, 2, 0x200);
        st_self = c.r(reg::kStatus, 4);
        post_read(c, 1, 0x40000, 0x50000, 0, 3, 0x100);
        c.wait_count(reg::kTxCompleted, 1);
    };
    sc_start();
    CHECK((st_flags & 0x80000000u) != 0);
    CHECK((st_self & 0x80000000u) != 0);
    CHECK(b.counter("dma0.doorbells_refused") == 2);
    const CompletionRecord r = Bench::record(*b.mem0, 0x100);
    CHECK(r.status == kStatusOk);
    CHECK(r.tag == 3);
    CHECK(r.bytes == 0);
    CHECK(b.tap01->seen.empty());
}

TEST_CASE("read: a responder without a channel of the domain answers with an error", "[dma][read]") {
    Bench b;
    Bench::poke(*b.mem1, 0x40000, pattern(1024, 32));
    Bench::poke(*b.mem0, 0x50000, std::vector<unsigned char>(1024, 0xee));
    b.cpu1->program = [&](Cpu& c) { c.w(ctrl(0), reg::kCtrlEnable | 7, 4); };   // the responder's job: domain 7
    b.cpu0->program = [&](Cpu& c) {
        c.w(ctrl(0), reg::kCtrlEnable | 5, 4);   // the initiator's: domain 5
        wait(10, SC_NS);
        post_read(c, 1, 0x40000, 0x50000, 1024, 9, 0x100);
        c.wait_count(reg::kTxCompleted, 1);
    };
    sc_start();
    const CompletionRecord r = Bench::record(*b.mem0, 0x100);
    CHECK(r.status == kStatusError);
    CHECK(r.bytes == 0);
    CHECK(Bench::peek(*b.mem0, 0x50000, 1024) == std::vector<unsigned char>(1024, 0xee));
    CHECK(b.counter("dma1.pd_violations") == 1);
    CHECK(b.counter("dma1.read_replies_failed") == 1);
    CHECK(b.counter("dma1.packets_sent") == 0);
    REQUIRE(b.tap10->seen.size() == 1);
    CHECK(b.tap10->seen[0].header.type == PacketType::Response);
    CHECK(reply(b.tap10->seen[0]).word == kStatusError);
    CHECK(b.counter("dma0.reads_failed") == 1);
    CHECK(b.counter("dma0.transfers_failed") == 1);
    CHECK(b.counter("dma0.rx_errors") == 0);
}

TEST_CASE("read: a remote source that cannot be read completes with an error at the initiator", "[dma][read]") {
    Bench b;
    b.cpu0->program = [&](Cpu& c) {
        post_read(c, 1, 64ull << 20, 0x50000, 4096, 5, 0x100);   // beyond node 1's 64 MiB DRAM
        c.wait_count(reg::kTxCompleted, 1);
    };
    sc_start();
    const CompletionRecord r = Bench::record(*b.mem0, 0x100);
    CHECK(r.status == kStatusError);
    CHECK(r.bytes == 0);
    CHECK(b.counter("dma1.read_replies_failed") == 1);
    CHECK(b.counter("dma0.reads_failed") == 1);
    CHECK(b.counter("dma0.rx_errors") == 0);
}

TEST_CASE("read: a local destination that cannot be written completes with an error", "[dma][read]") {
    Bench b;
    Bench::poke(*b.mem1, 0x40000, pattern(1024, 33));
    b.cpu0->program = [&](Cpu& c) {
        post_read(c, 1, 0x40000, (64ull << 20) - 512, 1024, 6, 0x100);   // runs off node 0's DRAM
        c.wait_count(reg::kTxCompleted, 1);
    };
    sc_start();
    const CompletionRecord r = Bench::record(*b.mem0, 0x100);
    CHECK(r.status == kStatusError);
    CHECK(r.bytes == 0);
    CHECK(b.counter("dma0.rx_errors") >= 1);
    CHECK(b.counter("dma1.read_replies_failed") == 1);
    CHECK(b.counter("dma1.read_requests_served") == 0);
}

TEST_CASE("read, fault-tolerant: a source fault at the responder parks its channel, then re-reads",
          "[dma][read][fault]") {
    Bench b(kFt, true);
    const std::size_t len = 5000;   // 5 blocks, 20 packets
    const auto src = pattern(len, 34);
    Bench::poke(*b.mem1, 0x40800, src);
    b.smmu1->faulting.insert({0x41, false});   // the source's second page (offsets 2048..)
    b.run_one([&](Cpu& c) { post_read(c, 1, 0x40800, 0x50000, len, 11, 0x100); });
    REQUIRE(b.smmu1->faults.size() == 1);
    CHECK(b.smmu1->faults[0].address == 0x41000);
    CHECK_FALSE(b.smmu1->faults[0].write);
    REQUIRE(b.smmu1->outcomes.size() == 1);
    const CompletionRecord r = Bench::record(*b.mem0, 0x100);
    CHECK(r.status == kStatusOk);
    CHECK(r.bytes == len);
    CHECK(Bench::peek(*b.mem0, 0x50000, len) == src);
    CHECK(b.smmu0->not_once(0x50000, len) == 0);
    CHECK(b.smmu0->writes.size() == len + sizeof(CompletionRecord));   // payload + the read's record
    CHECK(b.counter("dma1.parks") == 1);
    CHECK(b.counter("dma1.rereads") == 1);
    CHECK(b.counter("dma1.packets_sent") == 20);   // nothing sent twice
    CHECK(b.counter("dma1.read_requests_served") == 1);
    CHECK(b.counter("dma0.parks") == 0);
    CHECK(b.counter("dma0.read_bytes") == len);
    // Packets of the faulting block leave only after the resolution.
    REQUIRE(b.tap10->seen.size() == 20);
    CHECK(b.tap10->seen[8].head >= b.smmu1->outcomes[0]);
    CHECK(b.stats.find_histogram("dma1.park_time")->count() == 1);
}

TEST_CASE("read, fault-tolerant: a destination fault at the initiator is NACKed and the responder resends",
          "[dma][read][fault]") {
    Bench b(kFt, true);
    const std::size_t len = 5000;
    const auto src = pattern(len, 35);
    Bench::poke(*b.mem1, 0x40000, src);
    // Destination 0x50900: page 0x51000 starts at offset 0x700 = packet 7.
    b.smmu0->faulting.insert({0x51, true});
    b.run_one([&](Cpu& c) { post_read(c, 1, 0x40000, 0x50900, len, 12, 0x100); });
    REQUIRE(b.smmu0->faults.size() == 1);
    CHECK(b.smmu0->faults[0].address == 0x51000);
    CHECK(b.smmu0->faults[0].write);
    CHECK(Bench::peek(*b.mem0, 0x50900, len) == src);
    CHECK(b.smmu0->not_once(0x50900, len) == 0);
    CHECK(b.smmu0->writes.size() == len + sizeof(CompletionRecord));
    // The reply: packets 0..7 (7 NACKed), then 7..19 again.
    const auto& back = b.tap10->seen;
    REQUIRE(back.size() == 8 + 13);
    for (std::size_t i = 0; i < 8; ++i) CHECK(back[i].footer.seq == i);
    for (std::size_t i = 0; i < 13; ++i) CHECK(back[8 + i].footer.seq == 7 + i);
    for (const auto& p : back) CHECK(p.footer.reply);
    // From the initiator: request, NACK at 7, retransmit request from 7, ACK.
    const auto& out = b.tap01->seen;
    REQUIRE(out.size() == 4);
    CHECK(out[0].header.type == PacketType::ReadRequest);
    CHECK(out[1].header.type == PacketType::Response);
    CHECK(reply(out[1]).word == kStatusFault);
    CHECK(reply(out[1]).index == 7);
    CHECK(out[2].header.type == PacketType::Control);
    CHECK(reply(out[2]).word == kControlRetransmit);
    CHECK(reply(out[2]).index == 7);
    CHECK(out[2].head >= b.smmu0->outcomes.at(0));
    CHECK(reply(out[3]).word == kStatusOk);
    CHECK(back[8].head >= out[2].head);
    const CompletionRecord r = Bench::record(*b.mem0, 0x100);
    CHECK(r.status == kStatusOk);
    CHECK(r.bytes == len);
    CHECK(b.counter("dma0.nacks_sent") == 1);
    CHECK(b.counter("dma0.retransmit_requests") == 1);
    CHECK(b.counter("dma1.nacks_received") == 1);
    CHECK(b.counter("dma1.retransmissions") == 1);
    CHECK(b.counter("dma1.retransmitted_bytes") == len - 7 * 256);
    CHECK(b.counter("dma0.bytes_received") == len);
    CHECK(b.counter("dma0.read_bytes") == len);
    CHECK(b.counter("dma1.read_requests_served") == 1);
    CHECK(b.counter("dma0.rx_errors") == 0);
    CHECK(b.counter("dma1.rx_errors") == 0);
}

TEST_CASE("read, fault-tolerant: an unresolved source fault at the responder fails the read at the initiator",
          "[dma][read][fault]") {
    Bench b(kFt, true);
    Bench::poke(*b.mem1, 0x40000, pattern(4096, 36));
    Bench::poke(*b.mem0, 0x50000, std::vector<unsigned char>(4096, 0xee));
    b.smmu1->faulting.insert({0x40, false});
    b.smmu1->resolve = false;
    b.run_one([&](Cpu& c) { post_read(c, 1, 0x40000, 0x50000, 4096, 13, 0x100); });
    const CompletionRecord r = Bench::record(*b.mem0, 0x100);
    CHECK(r.tag == 13);
    CHECK(r.status == kStatusError);
    CHECK(r.bytes == 0);
    CHECK(Bench::peek(*b.mem0, 0x50000, 4096) == std::vector<unsigned char>(4096, 0xee));
    CHECK(b.counter("dma1.parks") == 1);
    CHECK(b.counter("dma1.read_replies_failed") == 1);
    CHECK(b.counter("dma1.packets_sent") == 0);
    REQUIRE(b.tap10->seen.size() == 1);
    CHECK(reply(b.tap10->seen[0]).word == kStatusError);
    CHECK(b.counter("dma0.reads_failed") == 1);
    CHECK(b.counter("dma0.transfers_completed") == 0);
    CHECK(b.counter("dma0.rx_errors") == 0);
}

TEST_CASE("read, fault-tolerant: an unresolved destination fault at the initiator fails the read",
          "[dma][read][fault]") {
    Bench b(kFt, true);
    const std::size_t len = 5000;
    Bench::poke(*b.mem1, 0x40000, pattern(len, 37));
    b.smmu0->faulting.insert({0x51, true});
    b.smmu0->resolve = false;
    b.run_one([&](Cpu& c) { post_read(c, 1, 0x40000, 0x50900, len, 14, 0x100); });
    const CompletionRecord r = Bench::record(*b.mem0, 0x100);
    CHECK(r.status == kStatusError);
    CHECK(r.bytes == 0);
    CHECK(b.tap10->seen.size() == 8);   // the responder stopped after the NACKed packet 7
    const auto& out = b.tap01->seen;
    REQUIRE(out.size() == 3);   // request, NACK, error ACK
    CHECK(reply(out[1]).word == kStatusFault);
    CHECK(reply(out[2]).word == kStatusError);
    CHECK(b.counter("dma0.reads_failed") == 1);
    CHECK(b.counter("dma0.transfers_completed") == 0);
    CHECK(b.counter("dma1.read_replies_failed") == 1);
    CHECK(b.counter("dma1.read_requests_served") == 0);
    CHECK(b.counter("dma1.retransmissions") == 0);
}

TEST_CASE("read, original engine: a source SMMU fault at the responder fails the read", "[dma][read][fault]") {
    Bench b(kNotFt, true);
    Bench::poke(*b.mem1, 0x40000, pattern(4096, 38));
    b.smmu1->faulting.insert({0x40, false});
    b.run_one([&](Cpu& c) { post_read(c, 1, 0x40000, 0x50000, 4096, 15, 0x100); });
    CHECK(Bench::record(*b.mem0, 0x100).status == kStatusError);
    CHECK(b.counter("dma1.parks") == 0);
    CHECK(b.counter("dma1.packets_sent") == 0);
    CHECK(b.counter("dma1.read_replies_failed") == 1);
    CHECK(b.counter("dma0.reads_failed") == 1);
    CHECK(b.counter("dma0.transfers_completed") == 0);
}

TEST_CASE("read, original engine: a destination SMMU fault at the initiator fails the read", "[dma][read][fault]") {
    Bench b(kNotFt, true);
    const std::size_t len = 5000;
    Bench::poke(*b.mem1, 0x40000, pattern(len, 39));
    b.smmu0->faulting.insert({0x51, true});
    b.run_one([&](Cpu& c) { post_read(c, 1, 0x40000, 0x50900, len, 16, 0x100); });
    const CompletionRecord r = Bench::record(*b.mem0, 0x100);
    CHECK(r.status == kStatusError);
    CHECK(r.bytes == 0);
    CHECK(b.tap10->seen.size() == 20);   // all sent; the initiator's receiver marks the reply bad
    CHECK(b.counter("dma0.nacks_sent") == 0);
    CHECK(b.counter("dma0.reads_failed") == 1);
    CHECK(b.counter("dma1.read_replies_failed") == 1);
    CHECK(b.counter("dma1.retransmitted_bytes") == 0);
}

TEST_CASE("read, netvm: reply packets for a non-resident page wait in the initiator's kernel buffer",
          "[dma][read][netvm]") {
    Settings s = kFt;
    s.push_back({"dma.netvm-buffer", "16KiB"});
    Bench b(s, true);
    b.smmu0->service = sc_time(30, SC_US);
    const std::size_t len = 40 * 1024;
    const auto a = pattern(len, 40);
    Bench::poke(*b.mem1, 0x40000, a);
    for (std::uint64_t p = 0x50; p < 0x5a; ++p) b.smmu0->faulting.insert({p, true});   // every destination page
    std::map<std::uint64_t, unsigned> copies;   // byte -> kernel copies
    b.dma0->enable_netvm(
        [&](std::uint32_t sid, std::uint64_t va, const unsigned char* data, std::uint64_t n, sc_time at) {
            CHECK(sid == b.dma0->channel_stream_id(0));   // the reading channel's stream: its process's memory
            Bench::poke(*b.mem0, va, std::vector<unsigned char>(data, data + n));
            for (std::uint64_t i = 0; i < n; ++i) ++copies[va + i];
            return at + sc_time(n, SC_NS);
        });
    b.run_one([&](Cpu& c) { post_read(c, 1, 0x40000, 0x50000, len, 17, 0x100); });
    CHECK(Bench::record(*b.mem0, 0x100).status == kStatusOk);
    CHECK(Bench::peek(*b.mem0, 0x50000, len) == a);
    std::size_t bad = 0;   // every byte exactly once: by the engine or by the kernel's copy
    for (std::uint64_t i = 0; i < len; ++i) {
        const auto e = b.smmu0->writes.find(0x50000 + i);
        const auto k = copies.find(0x50000 + i);
        if ((e == b.smmu0->writes.end() ? 0 : e->second) + (k == copies.end() ? 0 : k->second) != 1) ++bad;
    }
    CHECK(bad == 0);
    CHECK(b.counter("dma0.kernel_copy_bytes") > 0);
    CHECK(b.counter("dma0.bytes_received") == len);
    CHECK(b.counter("dma0.read_bytes") == len);
    CHECK(b.counter("dma0.nacks_sent") == 0);
    CHECK(b.counter("dma1.read_requests_served") == 1);
    CHECK(b.stats.find_scalar("dma0.netvm_peak")->value() <= 16 * 1024);
}

// ---------------------------------------------------------------- stream IDs per channel (issue #12)

namespace {
constexpr std::uint32_t sid_of(std::uint32_t axi) { return (3u << 10) | axi; }   // dma.smmu-tbu = 3
constexpr std::uint64_t axi_field(std::uint32_t axi) { return std::uint64_t(axi) << reg::kCtrlAxiShift; }

// Two processes on both nodes: channel 0 is process 1's (domain 1, AXI ID
// 1), channel 1 process 2's (domain 2, AXI ID 2). Process 2 posts 4 KiB
// from `src2` to `dst2` first, process 1 4 KiB from 0x10000 to 0x40000 1 us
// later; `done1`, `done2`: when each saw its transfer complete.
void two_processes(Bench& b, std::uint64_t src2, std::uint64_t dst2, sc_time& done1, sc_time& done2) {
    auto domains = [](Cpu& c) {
        c.w(ctrl(0), reg::kCtrlEnable | axi_field(1) | 1, 4);
        c.w(ctrl(1), reg::kCtrlEnable | axi_field(2) | 2, 4);
    };
    b.cpu1->program = domains;
    b.cpu0->program = [=, &done1, &done2](Cpu& c) {
        domains(c);
        wait(1, SC_US);
        c.base = page(1);
        c.post(src2, 1, dst2, 4096, 2, 0x200, false);
        wait(1, SC_US);
        c.base = page(0);
        c.post(0x10000, 1, 0x40000, 4096, 1, 0x100, false);
        c.wait_count(reg::kTxCompleted, 1);
        done1 = sc_time_stamp();
        c.base = page(1);
        c.wait_count(reg::kTxCompleted, 1);
        done2 = sc_time_stamp();
    };
}
}   // namespace

TEST_CASE("channels: every memory access carries the stream ID of the channel it serves", "[dma][channel][procs]") {
    Bench b(kFt, true);
    const auto a = pattern(2048, 5);
    Bench::poke(*b.mem0, 0x10000, a);
    b.cpu1->program = [&](Cpu& c) {
        // Receiver: channel 1 is domain 7's, AXI ID 9; a ring for its notifications.
        c.w(ctrl(1), reg::kCtrlEnable | axi_field(9) | 7, 4);
        CHECK(c.r(ctrl(1), 4) == (reg::kCtrlEnable | axi_field(9) | 7));
        c.w(page(1) + reg::kRxRingBase, 0x8000);
        c.w(page(1) + reg::kRxRingEntries, 4, 4);
    };
    b.cpu0->program = [&](Cpu& c) {
        wait(1, SC_US);
        c.w(ctrl(2), reg::kCtrlEnable | axi_field(5) | 7, 4);
        c.base = page(2);
        c.post(0x10000, 1, 0x40000, 2048, 1, 0x100, true);
        c.wait_count(reg::kTxCompleted, 1);
    };
    sc_start();
    CHECK(Bench::peek(*b.mem1, 0x40000, 2048) == a);
    CHECK(Bench::record(*b.mem0, 0x100).status == kStatusOk);
    CHECK(Bench::record(*b.mem1, 0x8000).status == kStatusOk);
    CHECK(b.dma0->channel_stream_id(2) == sid_of(5));
    CHECK(b.dma0->channel_stream_id(0) == b.dma0->stream_id());   // reset: dma.axi-id
    // Sender: source reads and the completion record on channel 2's stream;
    // receiver: payload writes and the notification record on channel 1's.
    REQUIRE(!b.smmu0->sids.empty());
    for (const auto& s : b.smmu0->sids) CHECK(s.first == sid_of(5));
    REQUIRE(b.smmu1->sids.size() == 2048 / 256 + 1);
    for (const auto& s : b.smmu1->sids) CHECK(s == std::make_pair(sid_of(9), true));
}

TEST_CASE("two processes, same source VA: an outcome releases only the stream that faulted",
          "[dma][channel][fault][procs]") {
    Bench b(kFt, true);
    const auto a = pattern(4096, 6);
    Bench::poke(*b.mem0, 0x10000, a);
    // Both processes' buffers sit at VA 0x10000 (the fake SMMU maps both to
    // the same frame) and both fault there; process 2's fault takes 100 us.
    b.smmu0->faulting_sid.insert({sid_of(1), 0x10, false});
    b.smmu0->faulting_sid.insert({sid_of(2), 0x10, false});
    b.smmu0->service_of[sid_of(1)] = sc_time(5, SC_US);
    b.smmu0->service_of[sid_of(2)] = sc_time(100, SC_US);   // below dma.fault-timeout (200 us)
    sc_time done1, done2;
    two_processes(b, 0x10000, 0x50000, done1, done2);   // process 2 faults first
    sc_start();
    REQUIRE(b.smmu0->outcomes.size() == 2);
    REQUIRE(b.smmu0->outcome_sids == std::vector<std::uint32_t>{sid_of(1), sid_of(2)});
    CHECK(done1 < b.smmu0->outcomes[1]);   // process 1 ran while process 2 still waited on the same VA
    CHECK(done2 > b.smmu0->outcomes[1]);   // process 1's outcome did not release process 2
    CHECK(Bench::peek(*b.mem1, 0x40000, 4096) == a);
    CHECK(Bench::peek(*b.mem1, 0x50000, 4096) == a);
    CHECK(Bench::record(*b.mem0, 0x100).status == kStatusOk);
    CHECK(Bench::record(*b.mem0, 0x200).status == kStatusOk);
    CHECK(b.counter("dma0.parks") == 2);
    CHECK(b.counter("dma0.fault_outcomes_unmatched") == 0);
    CHECK(b.counter("dma0.fault_timeouts") == 0);
}

TEST_CASE("two processes, same destination VA: a write fault's outcome answers only its own stream",
          "[dma][channel][fault][procs]") {
    Bench b(kFt, true);
    const auto a = pattern(4096, 7);
    Bench::poke(*b.mem0, 0x10000, a);
    Bench::poke(*b.mem0, 0x20000, a);
    b.smmu1->faulting_sid.insert({sid_of(1), 0x40, true});
    b.smmu1->faulting_sid.insert({sid_of(2), 0x40, true});
    b.smmu1->service_of[sid_of(1)] = sc_time(5, SC_US);
    b.smmu1->service_of[sid_of(2)] = sc_time(150, SC_US);
    sc_time done1, done2;
    two_processes(b, 0x20000, 0x40000, done1, done2);
    sc_start();
    REQUIRE(b.smmu1->outcomes.size() == 2);
    CHECK(b.smmu1->outcome_sids == std::vector<std::uint32_t>{sid_of(1), sid_of(2)});
    CHECK(done1 < b.smmu1->outcomes[1]);
    CHECK(done2 > b.smmu1->outcomes[1]);
    CHECK(Bench::peek(*b.mem1, 0x40000, 4096) == a);
    CHECK(Bench::record(*b.mem0, 0x100).status == kStatusOk);
    CHECK(Bench::record(*b.mem0, 0x200).status == kStatusOk);
    CHECK(b.counter("dma1.nacks_sent") == 2);
    CHECK(b.counter("dma1.fault_outcomes_unmatched") == 0);
    CHECK(b.counter("dma1.fault_timeouts") == 0);
}

TEST_CASE("dma.park = engine: a source fault stops every channel until its outcome", "[dma][channel][fault][procs]") {
    Settings s = kFt;
    s.push_back({"dma.park", "engine"});
    Bench b(s, true);
    const ParkedRun r = run_channel_0_parked(b);
    CHECK(r.done1 > b.smmu0->outcomes[0]);   // channel 1 waited for channel 0's fault (contrast: dma.park = channel)
    CHECK(r.done0 > b.smmu0->outcomes[0]);
    CHECK(b.counter("dma0.parks") == 1);
}

// ---------------------------------------------------------------- event counters (README "Event counters")

namespace {
// Stage and post a write on c.base naming event counter `counter` (flags
// besides kFlagCounter: `flags`); returns whether the doorbell was taken.
bool post_counted(Cpu& c, std::uint64_t src, unsigned node, std::uint64_t dst, std::uint64_t len, std::uint64_t tag,
                  std::uint64_t compl_addr, std::uint32_t flags, std::uint32_t counter) {
    Desc d;
    d.src = src, d.dst = dst, d.len = len, d.tag = tag, d.compl_addr = compl_addr, d.node = node;
    d.flags = flags | kFlagCounter;
    d.counter = counter;
    c.stage(d);
    return c.doorbell_taken();
}
constexpr std::uint64_t counter_reg(unsigned i) { return reg::kEventCounterBase + 8ull * i; }
// The first time (polling every 5 ns) counter `i` of channel page `base` reads at least `n`.
sc_time first_seen(Cpu& c, std::uint64_t base, unsigned i, std::uint64_t n) {
    for (int k = 0; k < 400000; ++k) {
        if (c.r(base + counter_reg(i)) >= n) return sc_time_stamp();
        wait(5, SC_NS);
    }
    FAIL("event counter " << i << " never reached " << n);
    return SC_ZERO_TIME;
}
}   // namespace

TEST_CASE("event counters: a write increments the counter it names once it has landed, several counters, rw",
          "[dma][counter]") {
    Bench b;
    Bench::poke(*b.mem0, 0x10000, pattern(1024, 21));
    sc_time seen3, seen7, before;
    std::uint64_t after_reset = 99, early = 99;
    b.cpu0->program = [&](Cpu& c) {
        REQUIRE(post_counted(c, 0x10000, 1, 0x30000, 512, 1, 0x100, 0, 3));
        REQUIRE(post_counted(c, 0x10000, 1, 0x31000, 256, 2, 0x120, 0, 3));
        REQUIRE(post_counted(c, 0x10000, 1, 0x32000, 1024, 3, 0x140, kFlagNotify, 7));
        c.wait_count(reg::kTxCompleted, 3);
    };
    b.cpu1->program = [&](Cpu& c) {
        c.w(reg::kRxRingBase, 0x5000);
        c.w(reg::kRxRingEntries, 4, 4);
        early = c.r(counter_reg(3));
        seen3 = first_seen(c, 0, 3, 2);
        seen7 = first_seen(c, 0, 7, 1);
        wait(20, SC_US);
        before = sc_time_stamp();
        c.w(counter_reg(3), 0);   // software resets it
        after_reset = c.r(counter_reg(3));
    };
    sc_start();
    CHECK(early == 0);
    // Counter 3: two writes; counter 7: one (which also notified); nothing else.
    const auto src = pattern(1024, 21);
    CHECK(Bench::peek(*b.mem1, 0x30000, 512) == std::vector<unsigned char>(src.begin(), src.begin() + 512));
    CHECK(Bench::peek(*b.mem1, 0x32000, 1024) == src);
    CHECK(after_reset == 0);
    CHECK(b.counter("dma1.counter_increments") == 3);
    CHECK(b.counter("dma1.notifications") == 1);   // only the third asked for a record
    CHECK(b.dma1->rx_signal(0).count_at(sc_time_stamp()) == 1);
    CHECK(b.dma1->counter_signal(0).count_at(sc_time_stamp()) == 3);   // the counter line: one per increment
    // Causality: seen only after the last packet of each write reached the
    // receiver, and before the sender heard the ACK (which follows the landing).
    const auto& out = b.tap01->seen;
    REQUIRE(out.size() == 2 + 1 + 4);
    CHECK(seen3 >= out[2].head);
    CHECK(seen7 >= out[6].head);
    sc_time acked;
    REQUIRE(b.dma0->record_done_at(b.dma0->channel_stream_id(0), 0x120, acked));
    CHECK(seen3 <= acked + sc_time(5, SC_NS));
    // The write naming counter 7 wrote its ring record before the counter moved.
    const CompletionRecord rx = Bench::record(*b.mem1, 0x5000);
    CHECK(rx.status == kStatusOk);
    CHECK(rx.addr == 0x32000);
    CHECK(b.counter("dma0.doorbells_refused") == 0);
}

TEST_CASE("event counters: a counter beyond dma.event-counters, on a read or a zero-length write is refused",
          "[dma][counter]") {
    Bench b(Settings{{"dma.event-counters", "4"}});
    bool beyond = true, last_ok = false, read_ok = true, empty_ok = true;
    tlm::tlm_response_status no_such = tlm::TLM_OK_RESPONSE;
    b.cpu0->program = [&](Cpu& c) {
        beyond = post_counted(c, 0x10000, 1, 0x30000, 64, 1, 0x100, 0, 4);
        last_ok = post_counted(c, 0x10000, 1, 0x30000, 64, 2, 0x120, 0, 3);
        empty_ok = post_counted(c, 0x10000, 1, 0x30000, 0, 3, 0x140, 0, 0);
        c.w(reg::kDescOp, static_cast<std::uint32_t>(DescOp::Read), 4);
        read_ok = post_counted(c, 0x10000, 1, 0x30000, 64, 4, 0x160, 0, 0);
        c.w(reg::kDescOp, 0, 4);
        std::uint64_t v = 0;
        no_such = c.access(false, counter_reg(4), v, 8);
        c.wait_count(reg::kTxCompleted, 1);
    };
    sc_start();
    CHECK_FALSE(beyond);
    CHECK(last_ok);
    CHECK_FALSE(empty_ok);
    CHECK_FALSE(read_ok);
    CHECK(no_such == tlm::TLM_ADDRESS_ERROR_RESPONSE);
    CHECK(b.counter("dma0.doorbells_refused") == 3);
    CHECK(b.counter("dma1.counter_increments") == 1);
}

TEST_CASE("event counters: with a notification packet the counter moves when that packet arrives", "[dma][counter]") {
    Bench b;
    Bench::poke(*b.mem0, 0x10000, pattern(512, 22));
    sc_time seen;
    b.cpu0->program = [&](Cpu& c) {
        REQUIRE(post_counted(c, 0x10000, 1, 0x30000, 512, 1, 0x100, kFlagNotifyPacket, 2));
        c.wait_count(reg::kTxCompleted, 1);
    };
    b.cpu1->program = [&](Cpu& c) { seen = first_seen(c, 0, 2, 1); };
    sc_start();
    const auto& out = b.tap01->seen;
    REQUIRE(out.size() == 3);
    CHECK(out[1].header.type == PacketType::RdmaWrite);
    CHECK(out[2].header.type == PacketType::Completion);
    std::uint32_t index = 0;
    REQUIRE(out[2].payload.size() == 24);
    std::memcpy(&index, out[2].payload.data() + 12, 4);
    CHECK(index == 3);   // the counter, plus one
    CHECK(seen >= out[2].head);
    CHECK(b.counter("dma1.counter_increments") == 1);
}

TEST_CASE("event counters: a retransmitted write increments once, after the resent packets landed",
          "[dma][counter][fault]") {
    Bench b(kFt, true);
    const std::size_t len = 5000;
    const auto src = pattern(len, 23);
    Bench::poke(*b.mem0, 0x10000, src);
    b.smmu1->faulting.insert({0x21, true});
    sc_time seen;
    std::uint64_t later = 0;
    b.cpu0->program = [&](Cpu& c) {
        wait(10, SC_NS);
        REQUIRE(post_counted(c, 0x10000, 1, 0x20900, len, 4, 0x100, 0, 5));
        c.wait_count(reg::kTxCompleted, 1);
    };
    b.cpu1->program = [&](Cpu& c) {
        seen = first_seen(c, 0, 5, 1);
        wait(50, SC_US);
        later = c.r(counter_reg(5));
    };
    sc_start();
    CHECK(Bench::peek(*b.mem1, 0x20900, len) == src);
    CHECK(b.counter("dma0.retransmissions") == 1);
    const auto& out = b.tap01->seen;
    REQUIRE(out.size() == 8 + 13);
    CHECK(seen >= out.back().head);   // after the resent last packet, not the first attempt
    CHECK(later == 1);
    CHECK(b.counter("dma1.counter_increments") == 1);
}

TEST_CASE("event counters: NetVM, the counter moves once the kernel copied the buffered packets in",
          "[dma][counter][netvm]") {
    Bench b(kFt, true);
    b.smmu1->service = sc_time(30, SC_US);
    const std::size_t len = 8 * 1024;
    const auto a = pattern(len, 24);
    Bench::poke(*b.mem0, 0x10000, a);
    for (std::uint64_t p = 0x40; p < 0x42; ++p) b.smmu1->faulting.insert({p, true});
    sc_time last_copy;
    b.dma1->enable_netvm([&](std::uint32_t, std::uint64_t va, const unsigned char* data, std::uint64_t n, sc_time at) {
        Bench::poke(*b.mem1, va, std::vector<unsigned char>(data, data + n));
        last_copy = std::max(last_copy, at + sc_time(n, SC_NS));
        return at + sc_time(n, SC_NS);
    });
    sc_time seen;
    b.cpu0->program = [&](Cpu& c) {
        REQUIRE(post_counted(c, 0x10000, 1, 0x40000, len, 1, 0x100, 0, 9));
        c.wait_count(reg::kTxCompleted, 1);
    };
    b.cpu1->program = [&](Cpu& c) { seen = first_seen(c, 0, 9, 1); };
    sc_start();
    CHECK(Bench::peek(*b.mem1, 0x40000, len) == a);
    CHECK(b.counter("dma1.kernel_copy_bytes") > 0);
    CHECK(last_copy > sc_time(30, SC_US));
    CHECK(seen >= last_copy);
    CHECK(b.counter("dma1.counter_increments") == 1);
}

TEST_CASE("event counters: a failed write increments nothing", "[dma][counter]") {
    Bench b;
    Bench::poke(*b.mem0, 0x10000, pattern(1024, 25));
    b.cpu0->program = [&](Cpu& c) {
        REQUIRE(post_counted(c, 0x10000, 1, (64ull << 20) - 512, 1024, 6, 0x100, 0, 1));
        c.wait_count(reg::kTxCompleted, 1);
    };
    sc_start();
    CHECK(Bench::record(*b.mem0, 0x100).status == kStatusError);
    CHECK(b.counter("dma1.counter_increments") == 0);
    CHECK(b.counter("dma1.counter_failed") == 1);
    CHECK(b.dma1->counter_signal(0).count_at(sc_time_stamp()) == 0);
}

// ---------------------------------------------------------------- out-of-order arrival

namespace {
// Packets of the first pass (before the sender resent from `seq` 0 again).
std::size_t first_pass(const std::vector<Tap::Seen>& seen) {
    for (std::size_t i = 1; i < seen.size(); ++i)
        if (seen[i].footer.seq == 0) return i;
    return seen.size();
}
}   // namespace

TEST_CASE("out of order: packets arriving with non-monotonic times land once each and complete at the latest",
          "[dma][order]") {
    Bench b(kNotFt, true);
    const std::size_t len = 5000;   // 20 packets
    const auto src = pattern(len, 41);
    Bench::poke(*b.mem0, 0x10000, src);
    // Every even packet takes a path 50 us longer (the engine sends one about
    // every 1.6 us): the next odd one overtakes it.
    b.tap01->retime = [](std::size_t i) { return i % 2 == 0 ? sc_time(50, SC_US) : SC_ZERO_TIME; };
    b.cpu1->program = [&](Cpu& c) {
        c.w(reg::kRxRingBase, 0x3000);
        c.w(reg::kRxRingEntries, 4, 4);
    };
    b.cpu0->program = [&](Cpu& c) {
        wait(10, SC_NS);
        c.post(0x10000, 1, 0x20000, len, 4, 0x100, true);
        c.wait_count(reg::kTxCompleted, 1);
    };
    sc_start();
    const auto& out = b.tap01->seen;
    REQUIRE(out.size() == 20);
    // Called in send order, arriving out of order.
    unsigned late = 0;
    sc_time newest, latest;
    for (const auto& s : out) {
        if (s.head < newest) ++late;
        else newest = s.head;
        latest = std::max(latest, s.head);
    }
    CHECK(late == 10);
    CHECK(b.counter("dma1.rx_out_of_order") == late);
    const Histogram* early = b.stats.find_histogram("dma1.rx_out_of_order_early");
    REQUIRE(early);
    CHECK(early->count() == late);
    CHECK(early->max() <= 50000.0);
    CHECK(early->min() > 0.0);
    // Every byte once, in place.
    CHECK(Bench::peek(*b.mem1, 0x20000, len) == src);
    CHECK(b.smmu1->not_once(0x20000, len) == 0);
    CHECK(b.counter("dma1.bytes_received") == len);
    CHECK(b.counter("dma1.rx_errors") == 0);
    CHECK(b.counter("dma1.rx_double_landings") == 0);
    CHECK(b.counter("dma1.rx_early_writes") == 0);
    // Complete when the latest packet in time has landed, not the last called
    // (packet 19 arrives before packet 18): the ACK leaves after the latest arrival.
    CHECK(out[19].head < out[18].head);
    const auto& back = b.tap10->seen;
    REQUIRE(back.size() == 1);
    CHECK(reply(back[0]).word == kStatusOk);
    CHECK(back[0].head >= latest);
    const CompletionRecord rx = Bench::record(*b.mem1, 0x3000);
    CHECK(rx.status == kStatusOk);
    CHECK(rx.bytes == len);
    CHECK(Bench::record(*b.mem0, 0x100).status == kStatusOk);
}

TEST_CASE("out of order, in order in time: nothing counted, completion at the last packet", "[dma][order]") {
    Bench b(kNotFt, true);
    const std::size_t len = 5000;
    const auto src = pattern(len, 42);
    Bench::poke(*b.mem0, 0x10000, src);
    // A constant extra delay keeps the order.
    b.tap01->retime = [](std::size_t) { return sc_time(3, SC_US); };
    b.run_one([&](Cpu& c) { c.post(0x10000, 1, 0x20000, len, 4, 0x100, false); });
    CHECK(b.counter("dma1.rx_out_of_order") == 0);
    CHECK(Bench::peek(*b.mem1, 0x20000, len) == src);
    CHECK(b.tap10->seen.at(0).head >= b.tap01->seen.back().head);
}

TEST_CASE(
    "out of order, fault-tolerant: a fault in the middle in time: earlier arrivals written, later dropped, "
    "every byte once",
    "[dma][order][fault]") {
    Bench b(kFt, true);
    const std::size_t len = 5000;
    const auto src = pattern(len, 43);
    Bench::poke(*b.mem0, 0x10000, src);
    // Destination 0x20F00: packet 0 alone is on page 0x20, which faults;
    // packet 0 takes a path 400 ns longer, so packets sent after it arrive
    // before its fault (written) until the sender has caught up (dropped).
    b.smmu1->faulting.insert({0x20, true});
    b.tap01->retime = [](std::size_t i) { return i == 0 ? sc_time(400, SC_NS) : SC_ZERO_TIME; };
    b.tap10->defer_control = true;   // the NACK reaches the sender at its time
    b.run_one([&](Cpu& c) { c.post(0x10000, 1, 0x20F00, len, 4, 0x100, false); });
    const auto& out = b.tap01->seen;
    const std::size_t pass = first_pass(out);
    REQUIRE(pass < out.size());   // resent from packet 0
    const sc_time fault_arrival = out[0].head;
    std::size_t before = 0, after = 0;
    for (std::size_t i = 1; i < pass; ++i) (out[i].head < fault_arrival ? before : after)++;
    REQUIRE(before > 0);
    REQUIRE(after > 0);
    CHECK(b.smmu1->faults.size() == 1);
    CHECK(b.counter("dma1.nacks_sent") == 1);
    // The NACK and the retransmit request name packet 0, the first not landed.
    const auto& back = b.tap10->seen;
    REQUIRE(back.size() == 3);
    CHECK(reply(back[0]).word == kStatusFault);
    CHECK(reply(back[0]).index == 0);
    CHECK(reply(back[1]).word == kControlRetransmit);
    CHECK(reply(back[1]).index == 0);
    CHECK(reply(back[2]).word == kStatusOk);
    // The resend: packets that landed before the fault are duplicates now.
    CHECK(out.size() - pass == 20);
    CHECK(b.counter("dma1.duplicates_dropped") == before);
    CHECK(b.counter("dma1.fault_dropped") == after);
    CHECK(b.counter("dma1.rx_out_of_order") >= before);
    // Every byte exactly once, in place.
    CHECK(Bench::peek(*b.mem1, 0x20F00, len) == src);
    CHECK(b.smmu1->not_once(0x20F00, len) == 0);
    CHECK(b.counter("dma1.bytes_received") == len);
    CHECK(b.counter("dma1.rx_double_landings") == 0);
    CHECK(b.counter("dma1.rx_early_writes") == 0);
    CHECK(b.counter("dma1.rx_errors") == 0);
    CHECK(Bench::record(*b.mem0, 0x100).status == kStatusOk);
    CHECK(back[2].head >= out.back().head);
}

TEST_CASE("out of order, fault-tolerant: a resend after every other packet landed completes once, the rest dropped",
          "[dma][order][fault]") {
    Bench b(kFt, true);
    const std::size_t len = 5000;
    const auto src = pattern(len, 45);
    Bench::poke(*b.mem0, 0x10000, src);
    // Packet 0 (alone on faulting page 0x20) arrives 10 us late: all the
    // others have landed by then. The resend's packet 0 completes the
    // transfer; the resent packets behind it belong to a finished transfer.
    b.smmu1->faulting.insert({0x20, true});
    b.tap01->retime = [](std::size_t i) { return i == 0 ? sc_time(10, SC_US) : SC_ZERO_TIME; };
    b.tap10->defer_control = true;
    b.run_one([&](Cpu& c) { c.post(0x10000, 1, 0x20F00, len, 4, 0x100, false); });
    const auto& out = b.tap01->seen;
    const std::size_t pass = first_pass(out);
    REQUIRE(pass == 20);
    REQUIRE(out.size() > pass);
    for (std::size_t i = 1; i < pass; ++i) CHECK(out[i].head < out[0].head);
    CHECK(b.counter("dma1.duplicates_dropped") == out.size() - pass - 1);
    CHECK(Bench::peek(*b.mem1, 0x20F00, len) == src);
    CHECK(b.smmu1->not_once(0x20F00, len) == 0);
    CHECK(b.counter("dma1.bytes_received") == len);
    CHECK(b.counter("dma1.rx_double_landings") == 0);
    const auto& back = b.tap10->seen;
    REQUIRE(back.size() == 3);
    CHECK(reply(back[2]).word == kStatusOk);
    CHECK(back[2].head >= out[pass].head);   // the resent packet 0 completed it
    CHECK(Bench::record(*b.mem0, 0x100).status == kStatusOk);
}

TEST_CASE(
    "out of order: an RDMA read's reply packets arriving out of order land once, the read completes at the "
    "latest",
    "[dma][order][read]") {
    Bench b(Settings{{"dma.packet-size", "256B"}, {"dma.block-size", "1KiB"}}, true);
    const std::size_t len = 5000;
    const auto src = pattern(len, 44);
    Bench::poke(*b.mem1, 0x40000, src);
    b.tap10->retime = [](std::size_t i) { return i % 3 == 0 ? sc_time(50, SC_US) : SC_ZERO_TIME; };
    sc_time completed;
    b.cpu0->program = [&](Cpu& c) {
        post_read(c, 1, 0x40000, 0x50000, len, 42, 0x100);
        c.wait_count(reg::kTxCompleted, 1);
        completed = sc_time_stamp();
    };
    sc_start();
    CHECK(Bench::peek(*b.mem0, 0x50000, len) == src);
    CHECK(b.smmu0->not_once(0x50000, len) == 0);
    CHECK(b.counter("dma0.rx_out_of_order") > 0);
    CHECK(b.counter("dma0.rx_double_landings") == 0);
    sc_time latest;
    for (const auto& s : b.tap10->seen) latest = std::max(latest, s.head);
    CHECK(completed >= latest);
    CHECK(Bench::record(*b.mem0, 0x100).status == kStatusOk);
}

// ---------------------------------------------------------------- ordered notifications (sequence_window.*)

namespace {
Settings ordered(const Settings& base, const char* window) {
    Settings s = base;
    s.push_back({"dma.notify-window", window});
    return s;
}
// The ring records of node 1's channel 0 at 0x3000, in ring order.
std::vector<CompletionRecord> ring(Bench& b, unsigned n) {
    std::vector<CompletionRecord> out;
    for (unsigned i = 0; i < n; ++i) out.push_back(Bench::record(*b.mem1, 0x3000 + i * sizeof(CompletionRecord)));
    return out;
}
}   // namespace

namespace {
// Two notifying writes, the first's packet 50 us late: with a window the
// second's notification is held until the first's is delivered.
void early_landing(const char* window) {
    {
        {
            Bench b(ordered(kNotFt, window), true);
            const auto a = pattern(256, 1), c = pattern(256, 2);
            Bench::poke(*b.mem0, 0x10000, a);
            Bench::poke(*b.mem0, 0x11000, c);
            // The first write's one packet takes a path 50 us longer: the
            // second lands first.
            b.tap01->retime = [](std::size_t i) { return i == 0 ? sc_time(50, SC_US) : SC_ZERO_TIME; };
            b.cpu1->program = [&](Cpu& k) {
                k.w(reg::kRxRingBase, 0x3000);
                k.w(reg::kRxRingEntries, 4, 4);
            };
            b.cpu0->program = [&](Cpu& k) {
                wait(10, SC_NS);
                k.post(0x10000, 1, 0x20000, 256, 1, 0x100, true);
                k.post(0x11000, 1, 0x21000, 256, 2, 0x120, true);
                k.wait_count(reg::kTxCompleted, 2);
            };
            sc_start();
            CHECK(Bench::peek(*b.mem1, 0x20000, 256) == a);
            CHECK(Bench::peek(*b.mem1, 0x21000, 256) == c);
            const auto r = ring(b, 2);
            REQUIRE(r[0].status == kStatusOk);
            REQUIRE(r[1].status == kStatusOk);
            const bool in_order = std::string(window) != "0";
            // The engine fills ring slots in the order it handles the
            // writes (the first first); in time the second write's record
            // comes first without a window, after the first's with one.
            CHECK(r[0].tag < r[1].tag);
            CHECK(r[0].addr == 0x20000);
            sc_time first, second;
            REQUIRE(b.dma1->record_done_at(b.dma1->channel_stream_id(0), 0x3000, first));
            REQUIRE(b.dma1->record_done_at(b.dma1->channel_stream_id(0), 0x3000 + sizeof(CompletionRecord), second));
            CHECK((second >= first) == in_order);
            CHECK(b.counter("dma1.notify_reordered") == (in_order ? 0u : 1u));
            CHECK(b.counter("dma1.notify_held") == (in_order ? 1u : 0u));
            const Histogram* hold = b.stats.find_histogram("dma1.notify_hold");
            REQUIRE(hold);
            CHECK(hold->count() == (in_order ? 1u : 0u));
            if (in_order) {
                // Held from its landing until the first write landed, 50 us later (less
                // the second write's head start of one packet).
                CHECK(hold->max() > 45.0);
                CHECK(hold->max() < 51.0);
            }
            CHECK(b.counter("dma1.notify_seq_errors") == 0);
            CHECK(b.dma1->notifications_held() == 0);
            CHECK(b.dma0->window_unanswered() == 0);
            // Both ACKs still leave when each write landed (the data is in).
            CHECK(b.tap10->seen.size() == 2);
        }
    }
}
}   // namespace

TEST_CASE("ordered notifications: a write that lands early is held until the earlier one is delivered",
          "[dma][window]") {
    early_landing("4");
}

TEST_CASE("ordered notifications: without a window the later write is notified first and counted as reordered",
          "[dma][window]") {
    early_landing("0");
}

TEST_CASE("ordered notifications: a full window holds the next notifying write until an answer comes",
          "[dma][window]") {
    Bench b(ordered(kNotFt, "1"), true);
    Bench::poke(*b.mem0, 0x10000, pattern(3 * 256, 3));
    // A long path: each write's ACK comes 20 us after it left.
    b.tap01->retime = [](std::size_t) { return sc_time(20, SC_US); };
    b.cpu1->program = [&](Cpu& k) {
        k.w(reg::kRxRingBase, 0x3000);
        k.w(reg::kRxRingEntries, 4, 4);
    };
    b.cpu0->program = [&](Cpu& k) {
        wait(10, SC_NS);
        for (unsigned i = 0; i < 3; ++i) k.post(0x10000 + i * 256, 1, 0x20000 + i * 256, 256, i, 0x100 + 32 * i, true);
        // A write that notifies nobody, on another channel, is not numbered:
        // it goes while the second notifying write waits.
        k.base = 0x1000;
        k.post(0x10000, 1, 0x22000, 256, 9, 0x200, false);
        k.wait_count(reg::kTxCompleted, 1);
        k.base = 0;
        k.wait_count(reg::kTxCompleted, 3);
    };
    sc_start();
    const auto& out = b.tap01->seen;
    const auto& back = b.tap10->seen;
    REQUIRE(out.size() == 4);
    REQUIRE(back.size() == 4);
    // Window 1: each notifying write leaves after the ACK of the one before.
    std::vector<sc_time> ack;
    for (const auto& s : back) ack.push_back(s.head);
    unsigned after = 0;
    for (std::size_t i = 1; i < out.size(); ++i)
        if (out[i].footer.notify && out[i].head >= ack[0]) ++after;
    CHECK(after == 2);
    INFO("out heads " << out[0].head << " " << out[1].head << " " << out[2].head << " " << out[3].head << " acks "
                      << ack[0] << " " << ack[1] << " " << ack[2] << " " << ack[3]);
    CHECK(b.counter("dma0.window_stalls") == 2);
    const Histogram* wait_us = b.stats.find_histogram("dma0.window_wait");
    REQUIRE(wait_us);
    CHECK(wait_us->count() == 2);
    CHECK(wait_us->min() > 15.0);
    // The unnumbered write did not wait: it left second, before the second notifying one.
    CHECK(out[1].header.dst_va == 0x22000);
    const auto r = ring(b, 3);
    for (unsigned i = 0; i < 3; ++i) CHECK(r[i].addr == 0x20000 + i * 256);
    CHECK(b.counter("dma1.notify_reordered") == 0);
    CHECK(b.dma0->window_unanswered() == 0);
}

TEST_CASE("ordered notifications: a numbered write that fails at its sender is skipped and the next delivered",
          "[dma][window][fault]") {
    Bench b(ordered(kFt, "2"), true);
    b.smmu0->resolve = false;
    b.smmu0->faulting.insert({0x10000 >> 12, false});   // the first write's source: never readable
    Bench::poke(*b.mem0, 0x11000, pattern(256, 4));
    b.tap01->defer_control = true;
    b.tap10->defer_control = true;
    b.cpu1->program = [&](Cpu& k) {
        k.w(reg::kRxRingBase, 0x3000);
        k.w(reg::kRxRingEntries, 4, 4);
    };
    b.cpu0->program = [&](Cpu& k) {
        wait(10, SC_NS);
        k.post(0x10000, 1, 0x20000, 256, 1, 0x100, true);
        k.post(0x11000, 1, 0x21000, 256, 2, 0x120, true);
        k.post(0x11000, 1, 0x22000, 256, 3, 0x140, true);   // needs the first number answered (window 2)
        k.wait_count(reg::kTxCompleted, 3);
    };
    sc_start();
    CHECK(Bench::record(*b.mem0, 0x100).status == kStatusError);
    CHECK(Bench::record(*b.mem0, 0x120).status == kStatusOk);
    CHECK(Bench::record(*b.mem0, 0x140).status == kStatusOk);
    CHECK(b.counter("dma0.notify_skips") == 1);
    CHECK(b.counter("dma1.notify_skipped") == 1);
    // The second and third writes' notifications, in order; the first has none.
    const auto r = ring(b, 2);
    CHECK(r[0].addr == 0x21000);
    CHECK(r[1].addr == 0x22000);
    CHECK(b.dma1->notifications_held() == 0);
    CHECK(b.dma0->window_unanswered() == 0);
    CHECK(b.counter("dma0.rx_errors") == 0);
    CHECK(b.counter("dma1.notify_seq_errors") == 0);
}

TEST_CASE("ordered notifications: a write whose destination fault is never resolved releases its number",
          "[dma][window][fault]") {
    Bench b(ordered(kFt, "2"), true);
    b.smmu1->resolve = false;
    b.smmu1->faulting.insert({0x20000 >> 12, true});   // the first write's destination
    Bench::poke(*b.mem0, 0x10000, pattern(512, 5));
    b.tap01->defer_control = true;
    b.tap10->defer_control = true;
    b.cpu1->program = [&](Cpu& k) {
        k.w(reg::kRxRingBase, 0x3000);
        k.w(reg::kRxRingEntries, 4, 4);
    };
    b.cpu0->program = [&](Cpu& k) {
        wait(10, SC_NS);
        k.post(0x10000, 1, 0x20000, 256, 1, 0x100, true);
        k.post(0x10100, 1, 0x21000, 256, 2, 0x120, true);
        k.post(0x10100, 1, 0x22000, 256, 3, 0x140, true);
        k.wait_count(reg::kTxCompleted, 3);
    };
    sc_start();
    CHECK(Bench::record(*b.mem0, 0x100).status == kStatusError);
    CHECK(Bench::record(*b.mem0, 0x120).status == kStatusOk);
    CHECK(Bench::record(*b.mem0, 0x140).status == kStatusOk);
    CHECK(b.counter("dma1.notify_skipped") == 1);
    CHECK(b.counter("dma0.notify_skips") == 0);   // the receiver knew: no skip needed
    const auto r = ring(b, 2);
    CHECK(r[0].addr == 0x21000);
    CHECK(r[1].addr == 0x22000);
    CHECK(b.dma1->notifications_held() == 0);
    CHECK(b.dma0->window_unanswered() == 0);
}

TEST_CASE("ordered notifications: a notification packet (DESC_FLAGS bit 1) is refused with a window", "[dma][window]") {
    Bench b(ordered(kNotFt, "4"));
    b.cpu0->program = [&](Cpu& k) {
        k.w(reg::kDescSrc, 0x10000);
        k.w(reg::kDescDst, 0x20000);
        k.w(reg::kDescLen, 64);
        k.w(reg::kDescDstNode, 1, 4);
        k.w(reg::kDescFlags, kFlagNotifyPacket, 4);
        k.w(reg::kDoorbell, 1, 4);
        CHECK((k.r(reg::kStatus, 4) & 0x80000000u) != 0);
    };
    sc_start();
    CHECK(b.counter("dma0.doorbells_refused") == 1);
    CHECK(b.tap01->seen.empty());
}
