// Pldma through its sockets: registers over MMIO, memory through a Dram,
// packets to a peer engine through a tap that records what crosses the wire.
#include <catch2/catch.hpp>

#include <cstring>
#include <functional>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "models/dma/pldma.hpp"
#include "models/memory/dram.hpp"
#include "system.hpp"

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
    explicit Tap(sc_module_name n) : sc_module(n) { in.register_b_transport(this, &Tap::b_transport); }
    void b_transport(tlm::tlm_generic_payload& gp, sc_time& d) {
        auto* p = gp.get_extension<ExanetPacket>();
        REQUIRE(p);
        seen.push_back({p->header, p->footer,
                        std::vector<unsigned char>(gp.get_data_ptr(), gp.get_data_ptr() + gp.get_data_length()),
                        sc_time_stamp() + d});
        out->b_transport(gp, d);
    }
};

// A CPU: runs a test program that pokes registers and reads memory.
struct Cpu : sc_module {
    tlm_utils::simple_initiator_socket<Cpu> mmio{"mmio"};
    std::function<void(Cpu&)> program;
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
        wait(d);
        return gp.get_response_status();
    }
    void w(std::uint64_t off, std::uint64_t v, unsigned len = 8) {
        REQUIRE(access(true, off, v, len) == tlm::TLM_OK_RESPONSE);
    }
    std::uint64_t r(std::uint64_t off, unsigned len = 8) {
        std::uint64_t v = 0;
        REQUIRE(access(false, off, v, len) == tlm::TLM_OK_RESPONSE);
        return v;
    }
    void post(std::uint64_t src, unsigned node, std::uint64_t dst, std::uint64_t len, std::uint64_t tag,
              std::uint64_t compl_addr, bool notify) {
        w(reg::kDescSrc, src);
        w(reg::kDescDst, dst);
        w(reg::kDescLen, len);
        w(reg::kDescDstNode, node, 4);
        w(reg::kDescFlags, notify ? kFlagNotify : 0, 4);
        w(reg::kDescCompl, compl_addr);
        w(reg::kDescTag, tag);
        w(reg::kDoorbell, 1, 4);
    }
    void wait_count(std::uint64_t off, std::uint64_t n) {
        for (int i = 0; i < 100000 && r(off) < n; ++i) wait(100, SC_NS);
        REQUIRE(r(off) >= n);
    }
};

using Settings = std::vector<std::pair<std::string, std::string>>;

// Two engines (node 0 and node 1), each with its own DRAM, wired
// net_out -> tap -> peer net_in in both directions.
struct Bench {
    ParamRegistry reg;
    std::unique_ptr<Config> cfg;
    StatRegistry stats;
    Tracer tracer;
    std::unique_ptr<SimContext> ctx;
    std::unique_ptr<Dram> mem0, mem1;
    std::unique_ptr<Pldma> dma0, dma1;
    std::unique_ptr<Tap> tap01, tap10;
    std::unique_ptr<Cpu> cpu0, cpu1;

    explicit Bench(const Settings& settings = {}) {
        declare_all_params(reg);
        cfg = std::make_unique<Config>(reg);
        cfg->set("dram.size", "64MiB", "test");
        for (const auto& kv : settings) cfg->set(kv.first, kv.second, "test");
        ctx = std::make_unique<SimContext>(SimContext{*cfg, stats, tracer});
        mem0 = std::make_unique<Dram>("mem0", *ctx, "node0");
        mem1 = std::make_unique<Dram>("mem1", *ctx, "node1");
        dma0 = std::make_unique<Pldma>("dma0", *ctx, "node0", 0, std::vector<std::uint32_t>{0, 1});
        dma1 = std::make_unique<Pldma>("dma1", *ctx, "node1", 1, std::vector<std::uint32_t>{0, 1});
        tap01 = std::make_unique<Tap>("tap01");
        tap10 = std::make_unique<Tap>("tap10");
        cpu0 = std::make_unique<Cpu>("cpu0");
        cpu1 = std::make_unique<Cpu>("cpu1");
        dma0->mem.bind(mem0->socket);
        dma1->mem.bind(mem1->socket);
        dma0->net_out.bind(tap01->in);
        tap01->out.bind(dma1->net_in);
        dma1->net_out.bind(tap10->in);
        tap10->out.bind(dma0->net_in);
        cpu0->mmio.bind(dma0->mmio);
        cpu1->mmio.bind(dma1->mmio);
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
    std::uint64_t counter(const std::string& name) const {
        const Counter* c = stats.find_counter(name);
        REQUIRE(c);
        return c->value();
    }
};

std::vector<unsigned char> pattern(std::size_t n, unsigned seed) {
    std::vector<unsigned char> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>((i * 131 + seed * 7 + (i >> 8)) & 0xff);
    return v;
}

}  // namespace

TEST_CASE("registers: staged descriptor reads back, bad accesses are refused", "[dma]") {
    Bench b;
    bool ran = false;
    b.cpu0->program = [&](Cpu& c) {
        c.w(reg::kDescSrc, 0x1234);
        c.w(reg::kDescDstNode, 1, 4);
        CHECK(c.r(reg::kDescSrc) == 0x1234);
        CHECK(c.r(reg::kDescDstNode, 4) == 1);
        std::uint64_t v = 0;
        CHECK(c.access(false, 0x800, v, 8) == tlm::TLM_ADDRESS_ERROR_RESPONSE);   // no register there
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
        produced = b.dma1->rx_irq.count_at(sc_time_stamp());
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
    b.cpu0->program = [&](Cpu& c) {
        c.post(0x10000, 1, 0x20000, 0, 8, 0x100, false);
        c.wait_count(reg::kTxCompleted, 1);
    };
    sc_start();
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
