// Bus, tested through its sockets: test initiators on `in`, recording test
// targets and a real Dram on `out`. Each TEST_CASE is its own elaboration
// (ctest runs each in its own process).
//
// The bench's address map mirrors a node's (src/sim/system.hpp):
//   ddr-low   [0, 2 GiB)                       -> out[0] (Dram), offset 0
//   ddr-high  [0x8_0000_0000, +14 GiB)         -> out[0] (Dram), offset 2 GiB
//   regs      [0xA000_0000, +4 KiB)            -> out[1], offset 0
//   regs-alt  [0xB000_0000, +256 B)            -> out[2], offset 0x40
#include <catch2/catch.hpp>

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "model_env.hpp"
#include "models/bus/bus.hpp"
#include "models/bus/bus_port.hpp"
#include "models/memory/dram.hpp"

using namespace vrdmasim;
using namespace sc_core;

namespace {

using vrdmasim_test::Settings;

struct Env : vrdmasim_test::ModelEnv {
    explicit Env(const Settings& s = {})
        : ModelEnv({Bus::declare_params, Dram::declare_params},
                   {{"bus.latency", "10ns"},
                    {"dram.latency", "50ns"},
                    {"dram.bandwidth", "8GB/s"},   // 64 B burst = 8 ns
                    {"dram.burst", "64B"},
                    {"dram.size", "16GiB"}},
                   s) {}
};

sc_time ns(double v) { return sc_time(v, SC_NS); }

struct Result {
    tlm::tlm_response_status status = tlm::TLM_INCOMPLETE_RESPONSE;
    sc_time delay;
    std::uint64_t address_after = 0;   // the payload's address when it came back
};

// A bus master running `script` in an SC_THREAD.
class Initiator : public sc_module {
public:
    tlm_utils::simple_initiator_socket<Initiator> socket;
    std::function<void(Initiator&)> script;
    Initiator(sc_module_name n, std::function<void(Initiator&)> s)
        : sc_module(n), socket("socket"), script(std::move(s)) {
        SC_HAS_PROCESS(Initiator);
        SC_THREAD(run);
    }
    Result access(tlm::tlm_command cmd, std::uint64_t addr, unsigned char* data, unsigned len,
                  sc_time delay = SC_ZERO_TIME) {
        tlm::tlm_generic_payload gp;
        gp.set_command(cmd);
        gp.set_address(addr);
        gp.set_data_ptr(data);
        gp.set_data_length(len);
        gp.set_streaming_width(len);
        gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
        socket->b_transport(gp, delay);
        return {gp.get_response_status(), delay, gp.get_address()};
    }
    Result write(std::uint64_t addr, std::vector<unsigned char> data, sc_time delay = SC_ZERO_TIME) {
        return access(tlm::TLM_WRITE_COMMAND, addr, data.data(), static_cast<unsigned>(data.size()), delay);
    }
    Result read(std::uint64_t addr, std::vector<unsigned char>& data, sc_time delay = SC_ZERO_TIME) {
        return access(tlm::TLM_READ_COMMAND, addr, data.data(), static_cast<unsigned>(data.size()), delay);
    }
    unsigned dbg(tlm::tlm_command cmd, std::uint64_t addr, unsigned char* data, unsigned len,
                 tlm::tlm_response_status* status = nullptr, std::uint64_t* address_after = nullptr) {
        tlm::tlm_generic_payload gp;
        gp.set_command(cmd);
        gp.set_address(addr);
        gp.set_data_ptr(data);
        gp.set_data_length(len);
        gp.set_streaming_width(len);
        gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
        const unsigned n = socket->transport_dbg(gp);
        if (status) *status = gp.get_response_status();
        if (address_after) *address_after = gp.get_address();
        return n;
    }

private:
    void run() { script(*this); }
};

// A target that records what it is asked (address as it sees it, the delay
// it is called with) and answers OK after its own `latency`.
class Recorder : public sc_module {
public:
    tlm_utils::simple_target_socket<Recorder> socket;
    struct Seen {
        tlm::tlm_command cmd;
        std::uint64_t addr;
        unsigned len;
        sc_time delay_in;
        bool debug;
    };
    std::vector<Seen> seen;
    sc_time latency;
    Recorder(sc_module_name n, sc_time lat) : sc_module(n), socket("socket"), latency(lat) {
        socket.register_b_transport(this, &Recorder::b_transport);
        socket.register_transport_dbg(this, &Recorder::transport_dbg);
    }

private:
    void b_transport(tlm::tlm_generic_payload& gp, sc_time& d) {
        seen.push_back({gp.get_command(), gp.get_address(), gp.get_data_length(), d, false});
        d += latency;
        gp.set_response_status(tlm::TLM_OK_RESPONSE);
    }
    unsigned transport_dbg(tlm::tlm_generic_payload& gp) {
        seen.push_back({gp.get_command(), gp.get_address(), gp.get_data_length(), SC_ZERO_TIME, true});
        gp.set_response_status(tlm::TLM_OK_RESPONSE);
        return gp.get_data_length();
    }
};

constexpr std::uint64_t kGiB = 1ull << 30;
constexpr std::uint64_t kDdrHigh = 0x800000000ull;
constexpr std::uint64_t kRegs = 0xA0000000ull;
constexpr std::uint64_t kRegsAlt = 0xB0000000ull;

// Bus + Dram + two recorders, mapped as in the header comment.
struct Bench {
    Bus bus;
    Dram dram;
    Recorder regs, alt;
    // direct: the DRAM windows name the Dram as their DebugAccess (as a node's do).
    explicit Bench(const Env& env, bool direct = false)
        : bus("bus", env.ctx), dram("dram", env.ctx, "node0"), regs("regs", ns(5)), alt("alt", ns(7)) {
        bus.out.bind(dram.socket);
        bus.out.bind(regs.socket);
        bus.out.bind(alt.socket);
        bus.map(0, 2 * kGiB, 0, 0, "ddr-low", direct ? &dram : nullptr);
        bus.map(kDdrHigh, 14 * kGiB, 0, 2 * kGiB, "ddr-high", direct ? &dram : nullptr);
        bus.map(kRegs, 0x1000, 1, 0, "regs");
        bus.map(kRegsAlt, 0x100, 2, 0x40, "regs-alt");
    }
};

}   // namespace

TEST_CASE("bus: each window reaches its target at the target's own offset", "[bus]") {
    Env env;
    Bench b(env);
    std::vector<Result> r;
    std::vector<unsigned char> low_back(4), high_back(4), high_at_zero(4, 0xEE);
    std::size_t pages_after_edges = 0;
    // Two masters on the multi-passthrough `in` socket.
    Initiator cpu("cpu", [&](Initiator& i) {
        r.push_back(i.write(kRegs, {1, 2, 3, 4}));   // regs + 0
        r.push_back(i.write(kRegs + 0xFFC, {5, 6, 7, 8}));   // last word of regs
        r.push_back(i.write(kRegsAlt, {9}));   // alt + 0x40
        r.push_back(i.write(kRegsAlt + 0xFF, {10}));   // alt + 0x13F
    });
    Initiator dma("dma", [&](Initiator& i) {
        wait(1, SC_US);
        // DDR low and high are one Dram: the last word below 2 GiB and the
        // first word of the high window are adjacent in the Dram (2 GiB - 4 and
        // 2 GiB), in two different 4 KiB pages.
        r.push_back(i.write(2 * kGiB - 4, {0xA1, 0xA2, 0xA3, 0xA4}));
        r.push_back(i.write(kDdrHigh, {0xB1, 0xB2, 0xB3, 0xB4}));
        pages_after_edges = b.dram.touched_pages();
        r.push_back(i.read(2 * kGiB - 4, low_back));
        r.push_back(i.read(kDdrHigh, high_back));
        // The high window is not an alias of address 0.
        r.push_back(i.read(0, high_at_zero));
        // The top of the high window is the top of the 16 GiB Dram.
        r.push_back(i.write(kDdrHigh + 14 * kGiB - 1, {0xCC}));
    });
    cpu.socket.bind(b.bus.in);
    dma.socket.bind(b.bus.in);
    sc_start();

    REQUIRE(r.size() == 10);
    for (const auto& x : r) CHECK(x.status == tlm::TLM_OK_RESPONSE);
    // The initiator gets its own address back, not the translated one.
    CHECK(r[1].address_after == kRegs + 0xFFC);
    CHECK(r[5].address_after == kDdrHigh);

    REQUIRE(b.regs.seen.size() == 2);
    CHECK(b.regs.seen[0].addr == 0x0);
    CHECK(b.regs.seen[1].addr == 0xFFC);
    CHECK(b.regs.seen[1].len == 4);
    REQUIRE(b.alt.seen.size() == 2);
    CHECK(b.alt.seen[0].addr == 0x40);
    CHECK(b.alt.seen[1].addr == 0x13F);

    CHECK(pages_after_edges == 2);
    CHECK(low_back == std::vector<unsigned char>{0xA1, 0xA2, 0xA3, 0xA4});
    CHECK(high_back == std::vector<unsigned char>{0xB1, 0xB2, 0xB3, 0xB4});
    CHECK(high_at_zero == std::vector<unsigned char>(4, 0));
    CHECK(b.dram.touched_pages() == 3);
    CHECK(env.counter("bus.transactions") == 10);
    CHECK(env.counter("bus.decode_errors") == 0);

    // decode() names the window.
    const Bus::Window* w = b.bus.decode(kDdrHigh + 5, 8);
    REQUIRE(w);
    CHECK(w->name == "ddr-high");
    CHECK(w->target_offset == 2 * kGiB);
    CHECK(b.bus.windows().size() == 4);
}

TEST_CASE("bus: unmapped addresses get an address error and count as decode errors", "[bus]") {
    Env env;
    Bench b(env);
    std::vector<Result> r;
    Initiator cpu("cpu", [&](Initiator& i) {
        r.push_back(i.write(0x90000000ull, {1}, ns(3)));   // between ddr-low and regs
        r.push_back(i.write(kRegs + 0x1000, {1}));   // one past regs
        r.push_back(i.write(kRegs + 0xFFE, {1, 2, 3, 4}));   // straddles the end of regs
        r.push_back(i.write(2 * kGiB - 2, {1, 2, 3, 4}));   // straddles ddr-low / gap
        r.push_back(i.write(kDdrHigh + 14 * kGiB, {1}));   // past ddr-high
        r.push_back(i.write(kDdrHigh - 1, {1}));   // just below ddr-high
        r.push_back(i.write(kRegsAlt - 1, {1, 2}));   // straddles the start of regs-alt
        r.push_back(i.write(kRegs, {1}));   // mapped, for contrast
    });
    cpu.socket.bind(b.bus.in);
    sc_start();

    REQUIRE(r.size() == 8);
    for (std::size_t k = 0; k < 7; ++k) {
        INFO("access " << k);
        CHECK(r[k].status == tlm::TLM_ADDRESS_ERROR_RESPONSE);
    }
    CHECK(r[7].status == tlm::TLM_OK_RESPONSE);
    // Nothing reached a target but the last access.
    CHECK(b.regs.seen.size() == 1);
    CHECK(b.alt.seen.empty());
    CHECK(b.dram.touched_pages() == 0);
    CHECK(env.counter("bus.decode_errors") == 7);
    CHECK(env.counter("bus.transactions") == 8);
    CHECK(env.counter("dram.transactions") == 0);
    CHECK(b.bus.decode(0x90000000ull, 1) == nullptr);
}

TEST_CASE("bus: the bus latency is added to every request", "[bus][timing]") {
    Env env;
    Bench b(env);
    Result to_regs, to_alt, to_dram, to_dram_late;
    Initiator cpu("cpu", [&](Initiator& i) {
        to_regs = i.write(kRegs + 8, {1, 2, 3, 4}, ns(2));
        to_alt = i.write(kRegsAlt, {1});
        std::vector<unsigned char> line(64);
        to_dram = i.read(kDdrHigh + 4096, line);
        wait(1, SC_US);
        to_dram_late = i.read(0x1000, line, ns(100));
    });
    cpu.socket.bind(b.bus.in);
    sc_start();

    // The target sees the request after the bus: delay in + 10 ns.
    REQUIRE(b.regs.seen.size() == 1);
    CHECK(b.regs.seen[0].delay_in == ns(12));
    CHECK(to_regs.delay == ns(2 + 10 + 5));
    REQUIRE(b.alt.seen.size() == 1);
    CHECK(b.alt.seen[0].delay_in == ns(10));
    CHECK(to_alt.delay == ns(10 + 7));
    // Dram: bus 10 ns, then one 8 ns burst and 50 ns latency.
    CHECK(to_dram.delay == ns(10 + 8 + 50));
    CHECK(to_dram_late.delay == ns(100 + 10 + 8 + 50));
}

TEST_CASE("bus: a different bus.latency changes the added delay", "[bus][timing]") {
    Env env(Settings{{"bus.latency", "33ns"}});
    Bench b(env);
    Result r;
    Initiator cpu("cpu", [&](Initiator& i) { r = i.write(kRegs, {1}); });
    cpu.socket.bind(b.bus.in);
    sc_start();
    CHECK(r.delay == ns(33 + 5));
}

TEST_CASE("bus: overlapping or empty windows are refused with logic_error", "[bus]") {
    Env env;
    Bus bus("bus", env.ctx);
    bus.map(0x1000, 0x1000, 0, 0, "a");
    bus.map(0x3000, 0x1000, 0, 0, "b");
    CHECK_THROWS_AS(bus.map(0x1000, 0x1000, 1, 0, "same"), std::logic_error);
    CHECK_THROWS_AS(bus.map(0x0800, 0x1000, 1, 0, "over-start"), std::logic_error);
    CHECK_THROWS_AS(bus.map(0x1FFF, 0x10, 1, 0, "over-end"), std::logic_error);
    CHECK_THROWS_AS(bus.map(0x0000, 0x10000, 1, 0, "contains"), std::logic_error);
    CHECK_THROWS_AS(bus.map(0x1800, 0x10, 1, 0, "inside"), std::logic_error);
    CHECK_THROWS_AS(bus.map(0x2FFF, 0x2, 1, 0, "into-b"), std::logic_error);
    CHECK_THROWS_AS(bus.map(0x5000, 0, 1, 0, "empty"), std::logic_error);
    CHECK_THROWS_AS(bus.map(~0ull - 0xF, 0x20, 1, 0, "wraps"), std::logic_error);
    // Windows that only touch are fine, and the map stays sorted.
    CHECK_NOTHROW(bus.map(0x2000, 0x1000, 1, 0, "between"));
    CHECK_NOTHROW(bus.map(0x0, 0x1000, 1, 0, "below"));
    REQUIRE(bus.windows().size() == 4);
    CHECK(bus.windows()[0].name == "below");
    CHECK(bus.windows()[1].name == "a");
    CHECK(bus.windows()[2].name == "between");
    CHECK(bus.windows()[3].name == "b");
    CHECK(bus.decode(0x2FFF, 1)->name == "between");
    CHECK(bus.decode(0x2FFF, 2) == nullptr);   // would straddle two windows
    CHECK(bus.decode(0x4000, 1) == nullptr);
}

TEST_CASE("bus: debug transport is forwarded with the same decode, without time", "[bus]") {
    Env env;
    Bench b(env);
    unsigned n_write = 0, n_read = 0, n_regs = 0, n_bad = 1;
    tlm::tlm_response_status bad_status = tlm::TLM_OK_RESPONSE;
    std::uint64_t addr_after = 0;
    std::vector<unsigned char> back(16), timed_back(16);
    Result timed;
    sc_time t_after;
    Initiator cpu("cpu", [&](Initiator& i) {
        std::vector<unsigned char> src(16);
        for (unsigned k = 0; k < 16; ++k) src[k] = static_cast<unsigned char>(0x30 + k);
        n_write = i.dbg(tlm::TLM_WRITE_COMMAND, kDdrHigh + 0x10, src.data(), 16, nullptr, &addr_after);
        n_read = i.dbg(tlm::TLM_READ_COMMAND, kDdrHigh + 0x10, back.data(), 16);
        unsigned char w[4] = {0};
        n_regs = i.dbg(tlm::TLM_READ_COMMAND, kRegsAlt + 0x20, w, 4);
        n_bad = i.dbg(tlm::TLM_READ_COMMAND, 0x90000000ull, w, 4, &bad_status);
        t_after = sc_time_stamp();
        timed = i.read(kDdrHigh + 0x10, timed_back);
    });
    cpu.socket.bind(b.bus.in);
    sc_start();

    CHECK(n_write == 16);
    CHECK(n_read == 16);
    CHECK(addr_after == kDdrHigh + 0x10);
    for (unsigned k = 0; k < 16; ++k) CHECK(back[k] == 0x30 + k);
    CHECK(timed_back == back);   // the debug write landed where timed accesses see it
    CHECK(timed.delay == ns(10 + 8 + 50));
    CHECK(n_regs == 4);
    REQUIRE(b.alt.seen.size() == 1);
    CHECK(b.alt.seen[0].debug);
    CHECK(b.alt.seen[0].addr == 0x60);
    CHECK(n_bad == 0);
    CHECK(bad_status == tlm::TLM_ADDRESS_ERROR_RESPONSE);
    CHECK(t_after == SC_ZERO_TIME);
    // Debug accesses are not transactions.
    CHECK(env.counter("bus.transactions") == 1);
    CHECK(env.counter("bus.decode_errors") == 0);
    CHECK(env.counter("dram.transactions") == 1);
}

namespace {

// What the debug paths saw in debug_script.
struct DebugSeen {
    std::vector<unsigned char> dbg_read, bus_read, port_read, timed_after;
    bool ok_bus = false, ok_port = false, unmapped = true, past_end = true, port_unmapped = true;
    tlm::tlm_response_status byte_enable_status = tlm::TLM_OK_RESPONSE;
    unsigned byte_enable_n = 1;
};

// Debug accesses by every path (a payload through the bus, Bus::debug_access,
// a connected BusPort) around a timed write still pending, on a bench whose
// DRAM windows name the Dram as their DebugAccess (direct) or not.
DebugSeen debug_script(bool direct) {
    Env env;
    Bench b(env, direct);
    BusPort port("kernel_port");
    port.connect(b.bus);
    DebugSeen seen;
    Initiator cpu("cpu", [&](Initiator& i) {
        std::vector<unsigned char> src(32);
        for (unsigned k = 0; k < 32; ++k) src[k] = static_cast<unsigned char>(0x40 + k);
        // A timed write whose data phase ends in the future: still pending.
        i.write(kDdrHigh + 0x100, src);
        seen.dbg_read.assign(32, 0);
        i.dbg(tlm::TLM_READ_COMMAND, kDdrHigh + 0x100, seen.dbg_read.data(), 32);
        seen.bus_read.assign(32, 0);
        seen.ok_bus = b.bus.debug_access(false, kDdrHigh + 0x100, seen.bus_read.data(), 32);
        // A debug write over part of it lands after the pending write.
        unsigned char patch[4] = {1, 2, 3, 4};
        seen.ok_port = port.debug_access(true, kDdrHigh + 0x108, patch, 4);
        seen.port_read.assign(32, 0);
        port.debug_access(false, kDdrHigh + 0x100, seen.port_read.data(), 32);
        unsigned char w[8] = {0};
        seen.unmapped = b.bus.debug_access(false, 0x90000000ull, w, 8);
        seen.past_end = b.bus.debug_access(false, 2 * kGiB - 4, w, 8);
        seen.port_unmapped = port.debug_access(false, 0x90000000ull, w, 8);
        // Byte enables are the target's own business: refused as before.
        tlm::tlm_generic_payload gp;
        unsigned char be[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
        gp.set_command(tlm::TLM_READ_COMMAND);
        gp.set_address(kDdrHigh + 0x100);
        gp.set_data_ptr(w);
        gp.set_data_length(8);
        gp.set_streaming_width(8);
        gp.set_byte_enable_ptr(be);
        gp.set_byte_enable_length(8);
        seen.byte_enable_n = i.socket->transport_dbg(gp);
        seen.byte_enable_status = gp.get_response_status();
        wait(sc_time(1, SC_US));
        seen.timed_after.assign(32, 0);
        i.read(kDdrHigh + 0x100, seen.timed_after);
    });
    cpu.socket.bind(b.bus.in);
    sc_start();
    return seen;
}

void check_debug_script(const DebugSeen& seen) {
    std::vector<unsigned char> src(32), patched;
    for (unsigned k = 0; k < 32; ++k) src[k] = static_cast<unsigned char>(0x40 + k);
    patched = src;
    for (unsigned k = 0; k < 4; ++k) patched[8 + k] = static_cast<unsigned char>(1 + k);
    CHECK(seen.dbg_read == src);   // debug reads see the pending write
    CHECK(seen.ok_bus);
    CHECK(seen.bus_read == src);
    CHECK(seen.ok_port);
    CHECK(seen.port_read == patched);
    CHECK(seen.timed_after == patched);   // the debug write landed after the timed one
    CHECK_FALSE(seen.unmapped);
    CHECK_FALSE(seen.past_end);
    CHECK_FALSE(seen.port_unmapped);
    CHECK(seen.byte_enable_n == 0);
    CHECK(seen.byte_enable_status == tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
}

}   // namespace

TEST_CASE("bus: debug accesses by every path on windows without a DebugAccess", "[bus]") {
    check_debug_script(debug_script(false));
}

TEST_CASE("bus: debug accesses by every path on windows naming the Dram as DebugAccess", "[bus]") {
    // The same bytes and answers as without: the direct call is only faster.
    check_debug_script(debug_script(true));
}

TEST_CASE("bus: a window leading to an unbound port is found at the end of elaboration", "[bus]") {
    struct Master : sc_module {
        tlm_utils::simple_initiator_socket<Master> s{"s"};
        explicit Master(sc_module_name n) : sc_module(n) {}
    };
    Env env;
    Master m("m");
    Bus bus("bus", env.ctx);
    Dram dram("dram", env.ctx, "node0");
    m.s.bind(bus.in);
    bus.out.bind(dram.socket);
    bus.map(0x0, 0x1000, 0, 0, "ddr");
    bus.map(0xA0000000, 0x1000, 1, 0, "nothing-there");   // port 1 is never bound
    try {
        sc_start(SC_ZERO_TIME);
        FAIL("elaboration should have failed");
    } catch (const std::exception& e) {
        INFO(e.what());
        CHECK(std::string(e.what()).find("nothing-there") != std::string::npos);
    }
}
