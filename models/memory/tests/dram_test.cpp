// Dram, tested through its TLM socket as hardware would be: test initiators
// issue b_transport / transport_dbg calls and check data, responses, timing
// and statistics. Each TEST_CASE is its own elaboration (ctest runs each in
// its own process).
//
// Timing parameters used throughout: latency 50 ns, bandwidth 8 GB/s
// (125 ps per byte), burst 64 B, so one burst occupies the channel 8 ns and
// a single-burst access takes 8 + 50 = 58 ns.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_initiator_socket.h>

#include "model_env.hpp"
#include "models/memory/dram.hpp"

using namespace vrdmasim;
using namespace sc_core;

namespace {

using vrdmasim_test::Settings;

// Configuration, statistics and tracer of one test bench.
struct Env : vrdmasim_test::ModelEnv {
    explicit Env(const Settings& s = {})
        : ModelEnv({Dram::declare_params},
                   {{"dram.latency", "50ns"}, {"dram.bandwidth", "8GB/s"}, {"dram.burst", "64B"}}, s) {}
};

struct Result {
    tlm::tlm_response_status status = tlm::TLM_INCOMPLETE_RESPONSE;
    sc_time delay;   // as returned: relative to the time of the call
    sc_time issued;   // sc_time_stamp() at the call
    sc_time done() const { return issued + delay; }
};

// A bus master: runs `script` in an SC_THREAD; helpers issue one transaction
// each. Assertions are made after sc_start, from what the script recorded.
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
                  sc_time delay = SC_ZERO_TIME, unsigned char* be = nullptr, unsigned be_len = 0) {
        tlm::tlm_generic_payload gp;
        gp.set_command(cmd);
        gp.set_address(addr);
        gp.set_data_ptr(data);
        gp.set_data_length(len);
        gp.set_streaming_width(len);
        gp.set_byte_enable_ptr(be);
        gp.set_byte_enable_length(be_len);
        gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
        Result r;
        r.issued = sc_time_stamp();
        socket->b_transport(gp, delay);
        r.status = gp.get_response_status();
        r.delay = delay;
        return r;
    }
    Result write(std::uint64_t addr, std::vector<unsigned char>& data, sc_time delay = SC_ZERO_TIME) {
        return access(tlm::TLM_WRITE_COMMAND, addr, data.data(), static_cast<unsigned>(data.size()), delay);
    }
    Result read(std::uint64_t addr, std::vector<unsigned char>& data, sc_time delay = SC_ZERO_TIME) {
        return access(tlm::TLM_READ_COMMAND, addr, data.data(), static_cast<unsigned>(data.size()), delay);
    }
    // Debug transport: returns the byte count; `status` receives the response.
    unsigned dbg(tlm::tlm_command cmd, std::uint64_t addr, unsigned char* data, unsigned len,
                 tlm::tlm_response_status* status = nullptr) {
        tlm::tlm_generic_payload gp;
        gp.set_command(cmd);
        gp.set_address(addr);
        gp.set_data_ptr(data);
        gp.set_data_length(len);
        gp.set_streaming_width(len);
        gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
        const unsigned n = socket->transport_dbg(gp);
        if (status) *status = gp.get_response_status();
        return n;
    }

private:
    void run() { script(*this); }
};

// Several masters onto the Dram's single target socket, with no delay of its
// own (the smallest possible interconnect), so contention is the Dram's.
class FanIn : public sc_module {
public:
    tlm_utils::multi_passthrough_target_socket<FanIn> in;
    tlm_utils::simple_initiator_socket<FanIn> out;
    explicit FanIn(sc_module_name n) : sc_module(n), in("in"), out("out") {
        in.register_b_transport(this, &FanIn::b_transport);
    }

private:
    void b_transport(int, tlm::tlm_generic_payload& gp, sc_time& d) { out->b_transport(gp, d); }
};

std::vector<unsigned char> pattern(std::size_t n, unsigned seed) {
    std::vector<unsigned char> v(n);
    std::uint32_t x = seed * 2654435761u + 1;
    for (auto& b : v) {
        x = x * 1664525u + 1013904223u;
        b = static_cast<unsigned char>(x >> 24);
    }
    return v;
}

constexpr std::uint64_t kGiB = 1ull << 30;
constexpr std::uint64_t kPage = Dram::kPageSize;

sc_time ns(double v) { return sc_time(v, SC_NS); }

}   // namespace

// ---------------------------------------------------------------- data

TEST_CASE("dram: a timed write is seen from the end of its data phase, not before", "[dram][visibility]") {
    // Masters run ahead of each other (temporal decoupling): a write called
    // first may lie later in simulated time than a read called after it.
    Env env;
    Dram dram("dram", env.ctx, "node0");
    std::vector<unsigned char> early(64), at_end(64), later(64), latest(64), after_dbg(64), order(64);
    std::vector<unsigned char> a = pattern(64, 1), b = pattern(64, 2), c = pattern(64, 3);
    Result w;
    Initiator cpu("cpu", [&](Initiator& i) {
        w = i.write(0x1000, a, ns(100));   // data phase [100, 108) ns
        i.read(0x1000, early, ns(20));   // [20, 28): before it
        i.read(0x1000, at_end, ns(108));   // starts as it ends: sees it
        i.dbg(tlm::TLM_READ_COMMAND, 0x1000, latest.data(), 64);   // debug: the latest state
        // Two writes called out of time order: the later in time wins.
        i.write(0x2000, b, ns(300));
        i.write(0x2000, c, ns(200));
        i.read(0x2000, order, ns(400));
        // A debug write lands after every pending write.
        std::vector<unsigned char> d = pattern(64, 4);
        i.write(0x3000, a, ns(500));
        i.dbg(tlm::TLM_WRITE_COMMAND, 0x3000, d.data(), 64);
        i.read(0x3000, after_dbg, ns(600));
        wait(ns(1000));
        i.read(0x1000, later);
    });
    cpu.socket.bind(dram.socket);
    sc_start();
    CHECK(w.done() == ns(158));
    CHECK(early == std::vector<unsigned char>(64, 0));
    CHECK(at_end == a);
    CHECK(latest == a);
    CHECK(order == b);
    CHECK(after_dbg == pattern(64, 4));
    CHECK(later == a);
    CHECK(dram.pending_writes() == 0);
}

TEST_CASE("dram: a held page counts timed accesses that start before its device write ends", "[dram][hold]") {
    // The OS holds a frame an SSD read is filling until the read ends
    // (Vm::set_io_guard): an access whose data phase starts earlier reads
    // bytes that have not arrived, counted as an error of the model.
    Env env;
    Dram dram("dram", env.ctx, "node0");
    std::vector<unsigned char> buf(64);
    Initiator cpu("cpu", [&](Initiator& i) {
        i.read(0x5000, buf, ns(10));   // before any hold: nothing counted
        dram.hold(0x5000, 4096, ns(1000));
        i.read(0x6000, buf, ns(100));   // another page: fine
        i.read(0x5fc0, buf, ns(100));   // the held page's last bytes, at 100 ns: early
        i.write(0x5000, buf, ns(500));   // a write before the read's end: early too
        i.read(0x4fe0, buf, ns(1000));   // straddling into it, starting as the read ends: fine
        wait(ns(2000));
        i.read(0x5000, buf);   // long after: fine (the hold is gone)
    });
    cpu.socket.bind(dram.socket);
    sc_start();
    CHECK(dram.early_accesses() == 2);
    CHECK(env.stats.find_counter("dram.early_accesses")->value() == 2);
}

TEST_CASE("dram: data written across page boundaries reads back byte for byte", "[dram]") {
    Env env;
    Dram dram("dram", env.ctx, "node0");
    // 10000 bytes starting 100 bytes before the end of page 2: pages 2..5.
    const std::uint64_t base = 3 * kPage - 100;
    const auto src = pattern(10000, 1);
    std::vector<unsigned char> whole(10000, 0xEE), middle(5000, 0xEE);
    Result w, r1, r2;
    Initiator cpu("cpu", [&](Initiator& i) {
        auto data = src;
        w = i.write(base, data);
        r1 = i.read(base, whole);
        // A read that starts and ends in the middle of pages.
        r2 = i.read(base + 1234, middle);
    });
    cpu.socket.bind(dram.socket);
    sc_start();

    CHECK(w.status == tlm::TLM_OK_RESPONSE);
    CHECK(r1.status == tlm::TLM_OK_RESPONSE);
    CHECK(r2.status == tlm::TLM_OK_RESPONSE);
    CHECK(whole == src);
    CHECK(std::equal(middle.begin(), middle.end(), src.begin() + 1234));
    CHECK(dram.touched_pages() == 4);
}

TEST_CASE("dram: unwritten memory reads as zeros, and reads allocate nothing", "[dram]") {
    Env env;
    Dram dram("dram", env.ctx, "node0");
    std::vector<unsigned char> far(3 * kPage, 0xAA), around(32, 0xAA);
    std::size_t pages_after_reads = 99, pages_after_write = 99;
    Initiator cpu("cpu", [&](Initiator& i) {
        i.read(5 * kGiB + 17, far);   // spans 4 untouched pages
        pages_after_reads = dram.touched_pages();
        std::vector<unsigned char> one{0x5A};
        i.write(7 * kGiB + 100, one);
        pages_after_write = dram.touched_pages();
        i.read(7 * kGiB + 100 - 16, around);   // the rest of that page is still zero
    });
    cpu.socket.bind(dram.socket);
    sc_start();

    CHECK(std::all_of(far.begin(), far.end(), [](unsigned char b) { return b == 0; }));
    CHECK(pages_after_reads == 0);
    CHECK(pages_after_write == 1);
    for (std::size_t k = 0; k < around.size(); ++k) CHECK(around[k] == (k == 16 ? 0x5A : 0));
    CHECK(dram.touched_pages() == 1);
}

TEST_CASE("dram: debug writes of zeros into untouched memory allocate nothing, over written bytes they overwrite",
          "[dram]") {
    // The software's writes at boot (a kernel clearing its first page-table
    // page) are debug transactions: zeros into an untouched page leave it
    // untouched, as it reads zeros already.
    Env env;
    Dram dram("dram", env.ctx, "node0");
    std::size_t pages_after_zeros = 99, pages_after_mixed = 99, pages_after_clear = 99;
    std::vector<unsigned char> back(2 * kPage, 0xAA), cleared(16, 0xAA);
    unsigned written = 0;
    Initiator cpu("cpu", [&](Initiator& i) {
        std::vector<unsigned char> zeros(3 * kPage + 5, 0);   // three untouched pages and a bit
        written += i.dbg(tlm::TLM_WRITE_COMMAND, 3 * kGiB + 100, zeros.data(), static_cast<unsigned>(zeros.size()));
        pages_after_zeros = dram.touched_pages();
        // Zeros on the first page, one nonzero byte on the second: only the
        // second is allocated.
        std::vector<unsigned char> mixed(2 * kPage, 0);
        mixed[kPage + 7] = 0x42;
        written += i.dbg(tlm::TLM_WRITE_COMMAND, 4 * kGiB, mixed.data(), static_cast<unsigned>(mixed.size()));
        pages_after_mixed = dram.touched_pages();
        i.dbg(tlm::TLM_READ_COMMAND, 4 * kGiB, back.data(), static_cast<unsigned>(back.size()));
        // Zeros over bytes already written are a write like any other.
        std::vector<unsigned char> ones(16, 0x11), sixteen_zeros(16, 0);
        i.dbg(tlm::TLM_WRITE_COMMAND, 5 * kGiB, ones.data(), 16);
        i.dbg(tlm::TLM_WRITE_COMMAND, 5 * kGiB, sixteen_zeros.data(), 16);
        pages_after_clear = dram.touched_pages();
        i.dbg(tlm::TLM_READ_COMMAND, 5 * kGiB, cleared.data(), 16);
    });
    cpu.socket.bind(dram.socket);
    sc_start();

    CHECK(written == 3 * kPage + 5 + 2 * kPage);   // every byte written, allocated or not
    CHECK(pages_after_zeros == 0);
    CHECK(pages_after_mixed == 1);
    for (std::size_t k = 0; k < back.size(); ++k) CHECK(back[k] == (k == kPage + 7 ? 0x42 : 0));
    CHECK(pages_after_clear == 2);
    CHECK(std::all_of(cleared.begin(), cleared.end(), [](unsigned char b) { return b == 0; }));
}

TEST_CASE("dram: a 16 GiB DRAM holds only the pages touched", "[dram]") {
    Env env(Settings{{"dram.size", "16GiB"}});
    Dram dram("dram", env.ctx, "node0");
    REQUIRE(dram.size() == 16 * kGiB);
    // Scattered single bytes: addr -> value. 0 and 4095 share a page; the
    // 2-byte write at 2 GiB + 4095 straddles two pages.
    const std::vector<std::uint64_t> addrs = {0, 4095, 1 * kGiB, 8 * kGiB + 1, 16 * kGiB - 1, 3 * kGiB + 12345};
    bool all_ok = true;
    std::vector<unsigned char> back;
    Initiator cpu("cpu", [&](Initiator& i) {
        for (std::size_t k = 0; k < addrs.size(); ++k) {
            std::vector<unsigned char> b{static_cast<unsigned char>(k + 1)};
            all_ok &= i.write(addrs[k], b).status == tlm::TLM_OK_RESPONSE;
        }
        std::vector<unsigned char> two{0xC1, 0xC2};
        all_ok &= i.write(2 * kGiB + 4095, two).status == tlm::TLM_OK_RESPONSE;
        for (std::uint64_t a : addrs) {
            std::vector<unsigned char> b{0xFF};
            i.read(a, b);
            back.push_back(b[0]);
        }
    });
    cpu.socket.bind(dram.socket);
    sc_start();

    CHECK(all_ok);
    // pages 0, 1 GiB, 8 GiB, 16 GiB - 4 KiB, 3 GiB + 12 KiB, and the two at 2 GiB
    CHECK(dram.touched_pages() == 7);
    for (std::size_t k = 0; k < addrs.size(); ++k) CHECK(back[k] == k + 1);
}

TEST_CASE("dram: accesses beyond the end get an address error and change nothing", "[dram]") {
    Env env(Settings{{"dram.size", "8MiB"}});
    Dram dram("dram", env.ctx, "node0");
    const std::uint64_t size = 8ull << 20;
    Result straddle, at_end, far_beyond, last_ok, huge_len;
    Initiator cpu("cpu", [&](Initiator& i) {
        std::vector<unsigned char> eight(8, 0x11);
        straddle = i.write(size - 4, eight, ns(10));
        at_end = i.read(size, eight, ns(10));
        far_beyond = i.write(1ull << 62, eight);
        huge_len = i.access(tlm::TLM_READ_COMMAND, 16, eight.data(), 0xFFFFFFF0u);   // length overflows
        last_ok = i.write(size - 8, eight);
    });
    cpu.socket.bind(dram.socket);
    sc_start();

    CHECK(straddle.status == tlm::TLM_ADDRESS_ERROR_RESPONSE);
    CHECK(at_end.status == tlm::TLM_ADDRESS_ERROR_RESPONSE);
    CHECK(far_beyond.status == tlm::TLM_ADDRESS_ERROR_RESPONSE);
    CHECK(huge_len.status == tlm::TLM_ADDRESS_ERROR_RESPONSE);
    CHECK(last_ok.status == tlm::TLM_OK_RESPONSE);
    // An error takes no channel time: the annotated delay comes back unchanged.
    CHECK(straddle.delay == ns(10));
    CHECK(at_end.delay == ns(10));
    // Only the last, in-range write touched memory.
    CHECK(dram.touched_pages() == 1);
    CHECK(env.counter("dram.errors") == 4);
    CHECK(env.counter("dram.transactions") == 5);
    CHECK(env.counter("dram.writes") == 1);
    CHECK(env.counter("dram.reads") == 0);
}

TEST_CASE("dram: byte enables are refused with a byte-enable error", "[dram]") {
    Env env;
    Dram dram("dram", env.ctx, "node0");
    Result r;
    std::vector<unsigned char> after(4, 0xEE);
    Initiator cpu("cpu", [&](Initiator& i) {
        std::vector<unsigned char> data{1, 2, 3, 4};
        unsigned char be[4] = {0xFF, 0x00, 0xFF, 0x00};
        r = i.access(tlm::TLM_WRITE_COMMAND, 0x1000, data.data(), 4, SC_ZERO_TIME, be, 4);
        i.read(0x1000, after);
    });
    cpu.socket.bind(dram.socket);
    sc_start();

    CHECK(r.status == tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
    CHECK(after == std::vector<unsigned char>(4, 0));
    CHECK(dram.touched_pages() == 0);
    CHECK(env.counter("dram.errors") == 1);
}

TEST_CASE("dram: debug transport moves real bytes without time or statistics", "[dram]") {
    Env env;
    Dram dram("dram", env.ctx, "node0");
    const auto src = pattern(6000, 2);
    unsigned wrote = 0, read_back = 0, beyond = 1;
    tlm::tlm_response_status beyond_status = tlm::TLM_OK_RESPONSE;
    std::vector<unsigned char> via_dbg(6000), via_timed(6000);
    Result timed;
    sc_time time_after_dbg;
    Initiator cpu("cpu", [&](Initiator& i) {
        auto data = src;
        wrote = i.dbg(tlm::TLM_WRITE_COMMAND, 2 * kPage - 7, data.data(), 6000);
        read_back = i.dbg(tlm::TLM_READ_COMMAND, 2 * kPage - 7, via_dbg.data(), 6000);
        unsigned char x[4];
        beyond = i.dbg(tlm::TLM_READ_COMMAND, 16 * kGiB - 2, x, 4, &beyond_status);
        time_after_dbg = sc_time_stamp();
        // The first timed access still finds the channel idle.
        timed = i.access(tlm::TLM_READ_COMMAND, 2 * kPage - 7, via_timed.data(), 6000);
    });
    cpu.socket.bind(dram.socket);
    sc_start();

    CHECK(wrote == 6000);
    CHECK(read_back == 6000);
    CHECK(via_dbg == src);
    CHECK(via_timed == src);
    CHECK(beyond == 0);
    CHECK(beyond_status == tlm::TLM_ADDRESS_ERROR_RESPONSE);
    CHECK(dram.touched_pages() == 3);
    CHECK(time_after_dbg == SC_ZERO_TIME);
    // 6000 B = 94 bursts of 64 B at 125 ps/B: 752 ns, plus 50 ns.
    CHECK(timed.delay == ns(752 + 50));
    CHECK(env.counter("dram.transactions") == 1);
    CHECK(env.counter("dram.reads") == 1);
    CHECK(env.counter("dram.writes") == 0);
    CHECK(env.counter("dram.errors") == 0);
}

// ---------------------------------------------------------------- timing

TEST_CASE("dram: one access takes latency + bursts x burst / bandwidth", "[dram][timing]") {
    Env env;
    Dram dram("dram", env.ctx, "node0");
    std::vector<Result> r;
    Initiator cpu("cpu", [&](Initiator& i) {
        std::vector<unsigned char> b64(64), b256(256), b4k(4096);
        r.push_back(i.read(0, b64));   // 8 ns + 50 ns
        wait(1, SC_US);
        r.push_back(i.write(0, b256, ns(10)));   // arrives at +10 ns: 10 + 32 + 50
        wait(1, SC_US);
        r.push_back(i.read(0, b4k));   // 512 ns + 50 ns
        wait(1, SC_US);
        // Arrival annotated beyond the point where the channel frees: no queueing.
        r.push_back(i.read(0, b64, ns(700)));   // 700 + 8 + 50
    });
    cpu.socket.bind(dram.socket);
    sc_start();

    REQUIRE(r.size() == 4);
    for (const auto& x : r) CHECK(x.status == tlm::TLM_OK_RESPONSE);
    CHECK(r[0].delay == ns(58));
    CHECK(r[1].delay == ns(92));
    CHECK(r[2].delay == ns(562));
    CHECK(r[3].delay == ns(758));
    CHECK(env.histogram("dram.queue_delay").max() == 0);
    CHECK(env.scalar("dram.busy_time") == Approx((8 + 32 + 512 + 8) * 1e-3).epsilon(1e-12));
}

TEST_CASE("dram: small accesses are rounded up to whole bursts", "[dram][timing]") {
    Env env(Settings{{"dram.burst", "32B"}});
    Dram dram("dram", env.ctx, "node0");
    // 32 B bursts at 125 ps/B: 4 ns each.
    const std::vector<unsigned> lens = {1, 31, 32, 33, 64, 65, 100};
    const std::vector<double> expect_ns = {4, 4, 4, 8, 8, 12, 16};
    std::vector<sc_time> got;
    Initiator cpu("cpu", [&](Initiator& i) {
        for (unsigned len : lens) {
            std::vector<unsigned char> b(len);
            got.push_back(i.read(0x40000, b).delay);
            wait(1, SC_US);
        }
    });
    cpu.socket.bind(dram.socket);
    sc_start();

    REQUIRE(got.size() == lens.size());
    for (std::size_t k = 0; k < lens.size(); ++k) {
        INFO("length " << lens[k]);
        CHECK(got[k] == ns(expect_ns[k] + 50));
    }
    // Occupancy is counted in whole bursts, bytes as requested.
    CHECK(env.scalar("dram.busy_time") == Approx(56e-3).epsilon(1e-12));
    CHECK(env.counter("dram.read_bytes") == 1 + 31 + 32 + 33 + 64 + 65 + 100);
}

TEST_CASE("dram: accesses from two masters serialise on the one channel", "[dram][timing]") {
    Env env;
    Dram dram("dram", env.ctx, "node0");
    FanIn fan("fan");
    // Each master posts 8 writes of 256 B (32 ns of channel each), all ready
    // at time 0, without waiting for completions.
    std::vector<sc_time> done;
    auto master = [&](Initiator& i) {
        for (int k = 0; k < 8; ++k) {
            std::vector<unsigned char> b(256, static_cast<unsigned char>(k));
            Result r = i.write(static_cast<std::uint64_t>(k) * 256, b);
            if (r.status == tlm::TLM_OK_RESPONSE) done.push_back(r.done());
        }
    };
    Initiator a("a", master), b("b", master);
    a.socket.bind(fan.in);
    b.socket.bind(fan.in);
    fan.out.bind(dram.socket);
    sc_start();

    REQUIRE(done.size() == 16);
    std::sort(done.begin(), done.end());
    // The channel serves one 32 ns data phase after the other: the k-th
    // access completes at 32 k + 50 ns, whoever issued it.
    for (int k = 0; k < 16; ++k) CHECK(done[static_cast<std::size_t>(k)] == ns(32.0 * (k + 1) + 50));
    const Histogram& q = env.histogram("dram.queue_delay");
    CHECK(q.count() == 16);
    CHECK(q.min() == 0);
    CHECK(q.max() == Approx(15 * 32.0));
    CHECK(q.sum() == Approx(32.0 * 120));   // 32 ns x (0 + 1 + ... + 15)
    CHECK(env.scalar("dram.busy_time") == Approx(16 * 32e-3));
}

TEST_CASE("dram: a master that waits for each access interleaves with another", "[dram][timing]") {
    Env env;
    Dram dram("dram", env.ctx, "node0");
    FanIn fan("fan");
    // Two masters, each reading 64 B and waiting for the data before the next
    // read: with a 58 ns round trip and an 8 ns data phase, the second master's
    // read queues 8 ns behind the first at time 0, and never again afterwards
    // (the channel is free long before either comes back).
    std::vector<Result> ra, rb;
    auto master = [&](std::vector<Result>& out) {
        return [&out](Initiator& i) {
            for (int k = 0; k < 4; ++k) {
                std::vector<unsigned char> buf(64);
                out.push_back(i.read(0x100, buf));
                wait(out.back().delay);
            }
        };
    };
    Initiator a("a", master(ra)), b("b", master(rb));
    a.socket.bind(fan.in);
    b.socket.bind(fan.in);
    fan.out.bind(dram.socket);
    sc_start();

    REQUIRE(ra.size() == 4);
    REQUIRE(rb.size() == 4);
    // Whichever master the kernel ran first at time 0 got 58 ns, the other 66 ns.
    const sc_time first = std::min(ra[0].delay, rb[0].delay);
    const sc_time second = std::max(ra[0].delay, rb[0].delay);
    CHECK(first == ns(58));
    CHECK(second == ns(66));
    for (int k = 1; k < 4; ++k) {
        CHECK(ra[static_cast<std::size_t>(k)].delay == ns(58));
        CHECK(rb[static_cast<std::size_t>(k)].delay == ns(58));
    }
    CHECK(env.histogram("dram.queue_delay").sum() == Approx(8.0));
}

TEST_CASE("dram: statistics count transactions, bytes, errors and busy time", "[dram][stats]") {
    Env env;
    Dram dram("dram", env.ctx, "node0");
    Initiator cpu("cpu", [&](Initiator& i) {
        std::vector<unsigned char> b100(100), b10(10), b4(4);
        i.write(0, b100);   // 2 bursts
        i.write(8192, b10);   // 1 burst
        i.read(0, b100);   // 2 bursts
        i.read(1, b4);   // 1 burst
        i.read(1, b4);   // 1 burst
        i.read(16 * kGiB, b4);   // address error
        unsigned char be = 0xFF;
        i.access(tlm::TLM_WRITE_COMMAND, 0, b4.data(), 4, SC_ZERO_TIME, &be, 1);   // byte-enable error
    });
    cpu.socket.bind(dram.socket);
    sc_start();

    CHECK(env.counter("dram.writes") == 2);
    CHECK(env.counter("dram.write_bytes") == 110);
    CHECK(env.counter("dram.reads") == 3);
    CHECK(env.counter("dram.read_bytes") == 108);
    CHECK(env.counter("dram.errors") == 2);
    CHECK(env.counter("dram.transactions") == 7);
    CHECK(env.scalar("dram.busy_time") == Approx(7 * 8e-3));   // 7 bursts x 8 ns, in us
    CHECK(env.histogram("dram.queue_delay").count() == 5);
}

TEST_CASE("dram: an access that arrives before one booked ahead takes the gap before it", "[dram][timing]") {
    // Temporal decoupling: one master books a data phase 1 us ahead (its
    // local time); another's access at 100 ns, which fits before it, must not
    // queue behind it; one that does not fit in the gap has its bursts
    // interleaved: the gap's worth before it, the rest after it.
    Env env;
    Dram dram("dram", env.ctx, "node0");
    FanIn fan("fan");
    std::vector<sc_time> ahead, early, overlapping;
    Initiator a("a", [&](Initiator& i) {
        std::vector<unsigned char> b(256, 1);
        ahead.push_back(i.write(0, b, ns(1000)).done());   // data phase [1000, 1032) ns
    });
    Initiator b("b", [&](Initiator& i) {
        wait(ns(1));
        std::vector<unsigned char> small(64, 2), big(256, 3);
        early.push_back(i.write(4096, small, ns(99)).done());   // [100, 108) ns: before it
        overlapping.push_back(i.write(8192, big, ns(989)).done());   // [990, 1022) overlaps: after it
    });
    a.socket.bind(fan.in);
    b.socket.bind(fan.in);
    fan.out.bind(dram.socket);
    sc_start();
    REQUIRE(ahead.size() == 1);
    REQUIRE(early.size() == 1);
    REQUIRE(overlapping.size() == 1);
    CHECK(ahead[0] == ns(1032 + 50));
    CHECK(early[0] == ns(108 + 50));
    // [990, 1000) before the booked phase, the other 22 ns from 1032 on.
    CHECK(overlapping[0] == ns(1032 + 22 + 50));
    const Histogram& q = env.histogram("dram.queue_delay");
    CHECK(q.count() == 3);
    CHECK(q.max() == Approx(32.0));   // only the overlapping one waited: the 32 ns phase it went around
}

// ---------------------------------------------------------------- the store

TEST_CASE("dram: the data pattern is kept as stretches and reads back byte for byte", "[dram][store]") {
    // Random writes (stretches of the pattern at any place, other bytes,
    // zeros) and reads over six pages, against a plain array of the bytes.
    Env env;
    Dram dram("dram", env.ctx, "node0");
    constexpr std::uint64_t kBase = 0x10000, kSpan = 6 * kPage;
    std::vector<unsigned char> want(kSpan, 0), buf;
    std::uint32_t x = 12345;
    auto next = [&x](std::uint32_t n) {
        x = x * 1664525u + 1013904223u;
        return (x >> 8) % n;
    };
    for (int op = 0; op < 4000; ++op) {
        const std::uint64_t at = next(kSpan);
        const std::uint64_t len = std::min<std::uint64_t>(kSpan - at, 1 + next(op % 3 ? 600 : 9000));
        buf.resize(len);
        const std::uint32_t what = next(10);
        if (what < 6) {   // the pattern, from anywhere in a few keys' streams
            fill_pattern(buf.data(), len, next(4));
        } else if (what < 7) {
            std::fill(buf.begin(), buf.end(), 0);
        } else if (what < 8) {
            buf = pattern(len, op);
        } else {
            REQUIRE(dram.debug_access(false, kBase + at, buf.data(), len));
            INFO("op " << op << " read " << len << " B at +" << at);
            REQUIRE(std::equal(buf.begin(), buf.end(), want.begin() + static_cast<std::ptrdiff_t>(at)));
            continue;
        }
        REQUIRE(dram.debug_access(true, kBase + at, buf.data(), len));
        std::copy(buf.begin(), buf.end(), want.begin() + static_cast<std::ptrdiff_t>(at));
    }
    buf.resize(kSpan);
    REQUIRE(dram.debug_access(false, kBase, buf.data(), kSpan));
    CHECK(buf == want);
    // Whole pages of the pattern written again: stretches, not bytes, even
    // over pages the other bytes turned into bytes.
    CHECK(dram.byte_pages() > 0);
    std::vector<unsigned char> source(kSpan);
    fill_pattern(source.data(), kSpan, 99);
    REQUIRE(dram.debug_access(true, kBase, source.data(), kSpan));
    CHECK(dram.byte_pages() == 0);
    REQUIRE(dram.debug_access(false, kBase, buf.data(), kSpan));
    CHECK(buf == source);
}

TEST_CASE("dram: the data pattern written and checked by its places, as with its bytes", "[dram][store]") {
    // Two DRAMs, the same random writes: the pattern's bytes into one
    // (debug_access), its places into the other (debug_pattern), other
    // bytes and zeros into both. Every check by places answers as the
    // bytes do; the contents and the pages kept as bytes stay the same.
    Env env;
    Dram bytes("bytes", env.ctx, "node0"), places("places", env.ctx, "node1");
    constexpr std::uint64_t kBase = 0x10000, kSpan = 6 * kPage;
    std::vector<unsigned char> buf;
    std::uint32_t x = 777;
    auto next = [&x](std::uint32_t n) {
        x = x * 1664525u + 1013904223u;
        return (x >> 8) % n;
    };
    auto place = [&]() { return pattern_advance(pattern_place(next(3)), next(3 * kSpan)); };
    struct Written {
        std::uint64_t at, len;
        PatternPlace place;
    };
    std::vector<Written> written;   // checks within them match, unless written over since
    std::uint64_t matched = 0, differed = 0;
    for (int op = 0; op < 3000; ++op) {
        std::uint64_t at = next(kSpan);
        std::uint64_t len = std::min<std::uint64_t>(kSpan - at, 1 + next(op % 3 ? 40 : 9000));
        const std::uint32_t what = next(10);
        INFO("op " << op << ": " << what << ", " << len << " B at +" << at);
        if (what < 4) {
            buf.resize(len);
            const PatternPlace p = place();
            pattern_bytes(buf.data(), len, p);
            REQUIRE(bytes.debug_access(true, kBase + at, buf.data(), len));
            std::uint64_t unused = 0;
            REQUIRE(places.debug_pattern(PatternOp::Write, kBase + at, len, p, unused));
            written.push_back(Written{at, len, p});
        } else if (what < 6) {
            buf.resize(len);
            if (what == 4) std::fill(buf.begin(), buf.end(), 0);
            else buf = pattern(len, static_cast<unsigned>(op));
            REQUIRE(bytes.debug_access(true, kBase + at, buf.data(), len));
            REQUIRE(places.debug_access(true, kBase + at, buf.data(), len));
        } else {
            // Within a range written lately with the pattern (often still
            // there), or anywhere against any place.
            PatternPlace p = place();
            if (!written.empty() && what < 9) {
                const auto recent = static_cast<std::uint32_t>(std::min<std::size_t>(written.size(), 3));
                const Written& w = written[written.size() - 1 - next(recent)];
                const std::uint64_t skip = next(static_cast<std::uint32_t>(w.len));
                at = w.at + skip;
                len = 1 + next(static_cast<std::uint32_t>(w.len - skip));
                p = pattern_advance(w.place, skip);
            }
            buf.resize(len);
            REQUIRE(bytes.debug_access(false, kBase + at, buf.data(), len));
            const std::uint64_t want = pattern_bytes_mismatch(buf.data(), len, p);
            std::uint64_t first = 12345678;
            REQUIRE(places.debug_pattern(PatternOp::Check, kBase + at, len, p, first));
            REQUIRE(first == want);
            (want == len ? matched : differed) += 1;
        }
        REQUIRE(places.byte_pages() == bytes.byte_pages());
        REQUIRE(places.touched_pages() == bytes.touched_pages());
    }
    CHECK(matched > 100);
    CHECK(differed > 100);
    std::vector<unsigned char> a(kSpan), b(kSpan);
    REQUIRE(bytes.debug_access(false, kBase, a.data(), kSpan));
    REQUIRE(places.debug_access(false, kBase, b.data(), kSpan));
    CHECK(a == b);
    // Outside the DRAM: false, as debug_access.
    std::uint64_t first = 0;
    CHECK_FALSE(places.debug_pattern(PatternOp::Check, 16 * kGiB - 8, 16, pattern_place(1), first));
}

TEST_CASE("dram: the pattern by its places over a pending write lands after it, as bytes do",
          "[dram][store][visibility]") {
    // A timed write waits for its data phase: the pattern written by its
    // places over part of it lands after it, and a check sees it, as debug
    // accesses with the bytes do.
    Env env;
    Dram dram("dram", env.ctx, "node0");
    std::vector<unsigned char> src = pattern(3000, 3), after(3000);
    const PatternPlace p = pattern_advance(pattern_place(8), 5);
    std::vector<unsigned char> mine(1000);
    pattern_bytes(mine.data(), mine.size(), p);
    std::vector<unsigned char> want = src;
    std::copy(mine.begin(), mine.end(), want.begin() + 1200);
    std::uint64_t seen = 0, mine_first = 0;
    Initiator cpu("cpu", [&](Initiator& i) {
        i.write(0x5F00, src, ns(500));   // its data phase well ahead
        REQUIRE(dram.pending_writes() == 1);
        REQUIRE(dram.debug_pattern(PatternOp::Check, 0x5F00 + 1200, 1000, p, seen));   // the pending bytes
        std::uint64_t unused = 0;
        REQUIRE(dram.debug_pattern(PatternOp::Write, 0x5F00 + 1200, 1000, p, unused));
        REQUIRE(dram.debug_pattern(PatternOp::Check, 0x5F00 + 1200, 1000, p, mine_first));
        wait(ns(2000));
        i.read(0x5F00, after);
    });
    cpu.socket.bind(dram.socket);
    sc_start();
    CHECK(seen == pattern_bytes_mismatch(src.data() + 1200, 1000, p));
    CHECK(seen < 1000);
    CHECK(mine_first == 1000);
    CHECK(after == want);
}

TEST_CASE("dram: packets of a transfer build a page's stretch as they land, over the last transfer's",
          "[dram][store]") {
    // A destination page written by timed 256-byte writes (an engine's
    // packets) of one transfer in order, then of the next transfer out of
    // order: its bytes are right at every step; in order, it is never kept
    // as bytes.
    Env env;
    Dram dram("dram", env.ctx, "node0");
    std::vector<unsigned char> first(kPage), second(kPage), got(kPage), mid(kPage);
    fill_pattern(first.data(), kPage, 5);
    fill_pattern(second.data(), kPage, 6);
    std::size_t byte_pages_seen = 0;
    bool mid_ok = false;
    Initiator dma("dma", [&](Initiator& i) {
        for (std::uint64_t off = 0; off < kPage; off += 256) {
            std::vector<unsigned char> pkt(first.begin() + static_cast<std::ptrdiff_t>(off),
                                           first.begin() + static_cast<std::ptrdiff_t>(off + 256));
            i.write(0x4000 + off, pkt);
            wait(ns(100));
            byte_pages_seen = std::max(byte_pages_seen, dram.byte_pages());
        }
        // The next transfer's packets, every other one first.
        for (std::uint64_t start : {0ull, 256ull}) {
            for (std::uint64_t off = start; off < kPage; off += 512) {
                std::vector<unsigned char> pkt(second.begin() + static_cast<std::ptrdiff_t>(off),
                                               second.begin() + static_cast<std::ptrdiff_t>(off + 256));
                i.write(0x4000 + off, pkt);
                wait(ns(100));
            }
            if (start == 0) {
                i.read(0x4000, mid);
                mid_ok = true;
                for (std::uint64_t b = 0; b < kPage; ++b)
                    mid_ok = mid_ok && mid[b] == ((b / 256) % 2 == 0 ? second[b] : first[b]);
            }
        }
        wait(ns(100));
        i.read(0x4000, got);
    });
    dma.socket.bind(dram.socket);
    sc_start();
    CHECK(mid_ok);
    CHECK(got == second);
    CHECK(byte_pages_seen == 0);
    // Interleaved, the two transfers needed more stretches than a page
    // keeps: it went to bytes, and stays so until all of it is written
    // with the pattern at once (a source filled again).
    CHECK(dram.touched_pages() == 1);
    CHECK(dram.byte_pages() == 1);
    REQUIRE(dram.debug_access(true, 0x4000, first.data(), kPage));
    CHECK(dram.byte_pages() == 0);
    REQUIRE(dram.debug_access(false, 0x4000, got.data(), kPage));
    CHECK(got == first);
}

TEST_CASE("dram: a pending write of the pattern is seen, and patched, as its bytes", "[dram][store][visibility]") {
    // A write of the pattern waits for its data phase as its place in the
    // pattern: reads in between see it (debug) or not (timed, earlier), and
    // a debug write into it lands after it, as for any write.
    Env env;
    Dram dram("dram", env.ctx, "node0");
    std::vector<unsigned char> src(3000), early(3000), latest(3000), after(3000);
    fill_pattern(src.data(), src.size(), 42);
    std::vector<unsigned char> want = src;
    const std::vector<unsigned char> patch = pattern(8, 9);
    std::copy(patch.begin(), patch.end(), want.begin() + 1500);
    std::size_t pending = 0;
    Initiator cpu("cpu", [&](Initiator& i) {
        i.write(0x5F00, src, ns(500));   // across two pages, its data phase well ahead
        pending = dram.pending_writes();
        i.read(0x5F00, early, ns(10));
        i.dbg(tlm::TLM_READ_COMMAND, 0x5F00, latest.data(), 3000);
        std::vector<unsigned char> p = patch;
        i.dbg(tlm::TLM_WRITE_COMMAND, 0x5F00 + 1500, p.data(), 8);
        wait(ns(2000));
        i.read(0x5F00, after);
    });
    cpu.socket.bind(dram.socket);
    sc_start();
    CHECK(pending == 1);
    CHECK(early == std::vector<unsigned char>(3000, 0));
    CHECK(latest == src);
    CHECK(after == want);
    CHECK(dram.byte_pages() == 1);   // the page the 8 bytes went into
}
