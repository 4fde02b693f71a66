// Cut links (board-link.handoff = message; cut_link.hpp): two routers joined
// by a board link whose far end is reached by messages. The packet reaches
// the far router when the simulation reaches its head's arrival, whole; its
// credit comes back a latency after the far buffer frees it; a sender that
// outruns the far buffer waits and gets the start full knowledge of those
// credits gives; a method that would have to wait is refused; and the link
// with handoff = call is the original model. Each TEST_CASE is its own
// elaboration (ctest runs each in its own process).
//
// The link: 10 Gb/s (12.8 ns a flit), 357 ns, as board-link's defaults; a
// 256 B packet is 18 flits, 230.4 ns on the wire. Routers: 100 ns.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "packet_bench.hpp"

using namespace vrdmasim;
using namespace vrdmasim_test;
using sc_core::sc_start;

namespace {

const sc_time kFlit = ns(12.8);
const sc_time kLatency = ns(357);
const sc_time kPipeline = ns(100);
const sc_time kWire = ns(230.4);   // 18 flits

LinkParams board_link(bool message, unsigned buffer_flits, bool time_order = false) {
    LinkParams p = link_params(10e9, kLatency, buffer_flits);
    p.vcs = 2;
    p.handoff = message;
    p.number = 7;
    p.time_order = time_order;
    return p;
}

// source -> r0 -> board link -> r1 -> sink (node 1 behind r1's port 0).
struct CutBench {
    NetEnv env;
    Router r0, r1;
    Link link;
    PacketSink sink;
    PacketSource src;
    CutBench(const LinkParams& p, std::function<void(PacketSource&)> script)
        : r0("r0", env.ctx),
          r1("r1", env.ctx),
          link("x0y0z0f1_to_x1y0z0f1", env.ctx, p, "x0y0z0f1", "link->x1y0z0f1"),
          sink("sink"),
          src("src", std::move(script)) {
        src.out.bind(r0.in);
        r0.out.bind(link.in);
        r0.set_output_link(0, &link);
        r0.set_route(1, 0);
        link.connect(r1);
        r1.out.bind(sink.in);
        r1.set_route(1, 0);
    }
};

// `n` packets of 256 B to node 1, one after the other from time 0, each
// offered as soon as the previous send returned.
std::function<void(PacketSource&)> back_to_back(unsigned n) {
    return [n](PacketSource& s) {
        for (unsigned k = 0; k < n; ++k) {
            PacketSpec p;
            p.seq = k;
            s.send(p);
        }
    };
}

// A far end that keeps everything of each packet it is handed.
struct Probe : sc_core::sc_module, PacketTarget {
    tlm_utils::simple_target_socket<Probe> in;
    std::vector<ExanetPacket> packets;
    std::vector<std::vector<unsigned char>> data;
    std::vector<std::uint64_t> address;
    std::vector<sc_time> called, head;
    explicit Probe(sc_core::sc_module_name n) : sc_module(n), in("in") {
        in.register_b_transport(this, &Probe::b_transport);
    }
    void accept(tlm::tlm_generic_payload& gp, ExanetPacket& pkt, sc_time& delay) override {
        packets.push_back(pkt);
        data.emplace_back(gp.get_data_ptr(), gp.get_data_ptr() + gp.get_data_length());
        address.push_back(gp.get_address());
        called.push_back(sc_core::sc_time_stamp());
        head.push_back(sc_core::sc_time_stamp() + delay);
        delay = pkt.tail - sc_core::sc_time_stamp();   // freed as its tail arrives
        gp.set_response_status(tlm::TLM_OK_RESPONSE);
    }
    void b_transport(tlm::tlm_generic_payload& gp, sc_time& delay) {
        accept(gp, *gp.get_extension<ExanetPacket>(), delay);
    }
};

}   // namespace

TEST_CASE("cut link: the far router gets the packet at its head's arrival, whole", "[cut-link]") {
    NetEnv env;
    Router r0("r0", env.ctx), r1("r1", env.ctx);
    Link link("x0y0z0f1_to_x1y0z0f1", env.ctx, board_link(true, 128), "x0y0z0f1", "link->x1y0z0f1");
    Probe probe("probe");
    PacketSource idle("idle", [](PacketSource&) {});   // r0's input must be bound
    idle.out.bind(r0.in);
    r0.set_route(1, 0);
    r0.out.bind(link.in);
    r0.set_output_link(0, &link);
    link.connect(r1);
    r1.set_route(1, 0);
    r1.out.bind(probe.in);
    // A packet with every field set, sent at 1 us from a buffer the sender
    // overwrites as soon as the call returns.
    ExanetPacket sent;
    std::vector<unsigned char> bytes(200);
    sc_time returned_at, credit;
    tlm::tlm_response_status status = tlm::TLM_INCOMPLETE_RESPONSE;
    struct Sender : sc_core::sc_module {
        std::function<void()> body;
        Sender(sc_core::sc_module_name n, std::function<void()> b) : sc_module(n), body(std::move(b)) {
            SC_HAS_PROCESS(Sender);
            SC_THREAD(run);
        }
        void run() { body(); }
    } sender("sender", [&] {
        sc_core::wait(us(1));
        for (unsigned k = 0; k < bytes.size(); ++k) bytes[k] = static_cast<unsigned char>(3 * k + 1);
        ExanetPacket& p = sent;
        p.header.vc = 1;
        p.header.pdid = 77;
        p.header.dst_coord = 1;
        p.header.type = PacketType::RdmaWrite;
        p.header.size = static_cast<std::uint16_t>(bytes.size());
        p.header.dst_va = 0xabc000;
        p.footer.seq = 4321;
        p.footer.first = false;
        p.footer.last = true;
        p.footer.notify = true;
        p.footer.reply = true;
        p.footer.src_coord = 0;
        p.transfer = 0x1234567890ull;
        p.counter = 5;
        p.nseq = 99;
        p.src_node = 0;
        p.dst_node = 1;
        p.hops = 2;
        p.story = Tracer::Cause{42, Tracer::Track{}, us(0.5), us(0.5), 0};
        p.tail = sc_core::sc_time_stamp();
        tlm::tlm_generic_payload gp;
        gp.set_command(tlm::TLM_WRITE_COMMAND);
        gp.set_address(0xabc000);
        gp.set_data_ptr(bytes.data());
        gp.set_data_length(static_cast<unsigned>(bytes.size()));
        gp.set_streaming_width(static_cast<unsigned>(bytes.size()));
        gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
        gp.set_extension(&p);
        sc_time d = sc_core::SC_ZERO_TIME;
        const sc_time t0 = sc_core::sc_time_stamp();
        r0.b_transport(0, gp, d);
        gp.clear_extension(&p);
        returned_at = sc_core::sc_time_stamp();
        credit = t0 + d;
        status = gp.get_response_status();
        std::fill(bytes.begin(), bytes.end(), 0);   // the sender reuses its buffer at once
    });
    sc_start();

    const unsigned flits = 2 + 200 / 16 + 1;   // 15
    const sc_time start = us(1) + kPipeline;
    const sc_time end = start + kFlit * static_cast<double>(flits);
    // The sender's call returned at once, with the link's answer (the tail
    // left r0's input when the link finished sending it).
    CHECK(returned_at == us(1));
    CHECK(status == tlm::TLM_OK_RESPONSE);
    CHECK(credit == end);
    REQUIRE(probe.packets.size() == 1);
    // r1 was called when the simulation reached the head's arrival at its
    // input (not before), and the probe behind it sees the head after r1's
    // pipeline, as the one-call model gives.
    const sc_time head = start + kFlit + kLatency;
    CHECK(probe.called[0] == head);
    CHECK(probe.head[0] == head + kPipeline);
    const ExanetPacket& got = probe.packets[0];
    CHECK(got.tail == end + kLatency + kPipeline);
    CHECK(got.header.vc == 1);
    CHECK(got.header.pdid == 77);
    CHECK(got.header.dst_coord == 1);
    CHECK(got.header.type == PacketType::RdmaWrite);
    CHECK(got.header.size == 200);
    CHECK(got.header.dst_va == 0xabc000);
    CHECK(got.footer.seq == 4321);
    CHECK(!got.footer.first);
    CHECK(got.footer.last);
    CHECK(got.footer.notify);
    CHECK(got.footer.reply);
    CHECK(got.transfer == 0x1234567890ull);
    CHECK(got.counter == 5);
    CHECK(got.nseq == 99);
    CHECK(got.src_node == 0);
    CHECK(got.dst_node == 1);
    CHECK(got.hops == 3);
    CHECK(got.story.id == 42);
    CHECK(got.story.at == us(0.5));
    CHECK(probe.address[0] == 0xabc000);
    REQUIRE(probe.data[0].size() == 200);
    bool same = true;
    for (unsigned k = 0; k < 200; ++k) same = same && probe.data[0][k] == static_cast<unsigned char>(3 * k + 1);
    CHECK(same);
    const std::string s = "x0y0z0f1_to_x1y0z0f1.handoff.";
    CHECK(env.counter(s + "packets_posted") == 1);
    CHECK(env.counter(s + "packets_delivered") == 1);
    CHECK(env.counter(s + "credits_posted") == 1);
    CHECK(env.counter(s + "credits_received") == 1);
    CHECK(env.counter(s + "late_deliveries") == 0);
    CHECK(env.counter(s + "refused") == 0);
    CHECK(env.counter(s + "waits") == 0);
    CHECK(link.cut_far()->queued() == 0);
    CHECK(link.credits_outstanding() == 0);
}

namespace {

// A far buffer of one packet (18 flits): the second packet needs the first
// one's credit. The sink frees a packet 1 us after its tail.
void credit_a_latency_later(bool time_order) {
    {
        CutBench b(board_link(true, 18, time_order), back_to_back(2));
        b.sink.free_at = [](const PacketSink::Arrival& a) { return a.tail + us(1); };
        sc_start();
        REQUIRE(b.sink.arrivals.size() == 2);
        // Packet 1: head at r0's output at 100 ns, on the wire 100 to
        // 330.4 ns; at r1 at 469.8 ns (one flit and 357 ns later); its tail at
        // the sink at 330.4 + 357 + 100 = 787.4 ns, freed 1 us later: r1's
        // input frees it then (t_free = 1787.4 ns), and the credit is
        // delivered at 1787.4 + 357 = 2144.4 ns.
        const auto& a1 = b.sink.arrivals[0];
        CHECK(a1.called == ns(469.8));
        CHECK(a1.free == ns(1787.4));
        // Packet 2 starts then, not at t_free (the one-call model's).
        const auto& a2 = b.sink.arrivals[1];
        CHECK(a2.called == ns(2144.4) + kFlit + kLatency);
        CHECK(a2.head == ns(2144.4) + kFlit + kLatency + kPipeline);
        // The sender waited from 0 until the credit was delivered; its call
        // returned with the time the tail left r0, counted from its start.
        CHECK(b.src.sent[1].credit == ns(2144.4) + kWire);
        const std::string s = "x0y0z0f1_to_x1y0z0f1.";
        CHECK(b.env.counter(s + "handoff.waits") == 1);
        CHECK(b.env.scalar(s + "handoff.wait_time") == Approx(2.1444));
        CHECK(b.env.scalar(s + "credit_stall_time") == Approx((2144.4 - 330.4) / 1000));
        CHECK(b.env.counter(s + "handoff.credits_received") == 2);
        CHECK(b.link.credits_outstanding() == 0);
    }
}

// Far buffer: two packets (36 flits); four packets back to back; the
// sink frees each 1 us after its tail. By hand, with the credit of
// packet k delivered at stamp_k = t_free_k + 357 ns:
//   p1: wire 100 - 330.4, at r1 469.8, sink tail 787.4, freed 1787.4, stamp 2144.4
//   p2: wire 330.4 - 560.8 (fits beside p1), at r1 700.2, tail 1017.8, freed 2017.8, stamp 2374.8
//   p3: needs p1's credit: wire 2144.4 - 2374.8, at r1 2514.2
//   p4: needs p2's credit (2374.8) and the wire (2374.8): wire 2374.8 - 2605.2, at r1 2744.6
// (the one-call model would start p3 at p1's t_free, 1787.4, and p4 at
// 2017.8: its credits are a latency earlier).
void outrun(bool time_order) {
    const double at_r1[] = {469.8, 700.2, 2514.2, 2744.6};
    {
        CutBench b(board_link(true, 36, time_order), back_to_back(4));
        b.sink.free_at = [](const PacketSink::Arrival& a) { return a.tail + us(1); };
        b.sink.capacity_flits = 36;
        sc_start();
        REQUIRE(b.sink.arrivals.size() == 4);
        for (unsigned k = 0; k < 4; ++k) {
            CAPTURE(k);
            CHECK(b.sink.arrivals[k].called == ns(at_r1[k]));
            CHECK(b.sink.arrivals[k].data_ok);
            CHECK(b.sink.arrivals[k].seq == k);
        }
        CHECK(b.link.buffer_hwm(0) <= 36);
        CHECK(b.r1.overflows() == 0);
        CHECK(b.env.counter("x0y0z0f1_to_x1y0z0f1.handoff.packets_delivered") == 4);
        CHECK(b.env.counter("x0y0z0f1_to_x1y0z0f1.handoff.late_deliveries") == 0);
    }
}

}   // namespace

TEST_CASE("cut link: the credit comes back a latency after the far buffer frees the space", "[cut-link][credits]") {
    credit_a_latency_later(false);
}

TEST_CASE("cut link in time order: the credit comes back a latency after the far buffer frees the space",
          "[cut-link][credits][time-order]") {
    credit_a_latency_later(true);
}

TEST_CASE("cut link: a sender that outruns the far buffer waits and gets the start full knowledge gives",
          "[cut-link][credits]") {
    outrun(false);
}

TEST_CASE(
    "cut link in time order: a sender that outruns the far buffer waits and gets the start full knowledge "
    "gives",
    "[cut-link][credits][time-order]") {
    outrun(true);
}

namespace {

// Two senders on one cut link (far buffer: one packet per VC): `a` sends
// two packets at 0, the second waiting for the first's credit; `b` sends
// one at 10 ns on VC `b_vc`, while `a` waits. The sink frees a packet as
// its tail arrives.
struct TwoSenders {
    NetEnv env;
    Router r0, r1;
    Link link;
    PacketSink sink;
    PacketSource a, b;
    explicit TwoSenders(unsigned b_vc)
        : r0("r0", env.ctx),
          r1("r1", env.ctx),
          link("x0y0z0f1_to_x1y0z0f1", env.ctx, board_link(true, 18), "x0y0z0f1", "link->x1y0z0f1"),
          sink("sink"),
          a("a", back_to_back(2)),
          b("b", [b_vc](PacketSource& s) {
              sc_core::wait(ns(10));
              PacketSpec p;
              p.src = 2;
              p.seq = 7;
              p.vc = b_vc;
              s.send(p);
          }) {
        a.out.bind(r0.in);
        b.out.bind(r0.in);
        r0.out.bind(link.in);
        r0.set_output_link(0, &link);
        r0.set_route(1, 0);
        link.connect(r1);
        r1.out.bind(sink.in);
        r1.set_route(1, 0);
    }
};

}   // namespace

TEST_CASE("cut link: a packet that comes while another of its VC waits for a credit goes after it, in line",
          "[cut-link][line]") {
    // a's p1: wire 100 - 330.4 ns, at r1 469.8, its tail at the sink (freed)
    // 787.4, credit 1144.4. a's p2 waits for it: wire 1144.4 - 1374.8, at r1
    // 1514.2, freed 1831.8, credit 2188.8. b's packet (ready at 110 ns) waits
    // behind p2 in the line, then for p2's credit: wire from 2188.8, at r1
    // 2558.6 (as full knowledge of the credits gives).
    TwoSenders t(0);
    sc_start();
    REQUIRE(t.sink.arrivals.size() == 3);
    CHECK(t.sink.arrivals[0].called == ns(469.8));
    CHECK(t.sink.arrivals[1].called == ns(1514.2));
    CHECK(t.sink.arrivals[1].src == 0);
    CHECK(t.sink.arrivals[2].called == ns(2558.6));
    CHECK(t.sink.arrivals[2].src == 2);
    CHECK(t.b.sent[0].credit == ns(2188.8) + kWire);
    CHECK(t.env.counter("x0y0z0f1_to_x1y0z0f1.handoff.waits") == 2);
    CHECK(t.env.counter("x0y0z0f1_to_x1y0z0f1.handoff.moved_heads") == 0);
}

TEST_CASE("cut link: a packet of another VC does not wait behind one waiting for a credit", "[cut-link][line][vc]") {
    // b's packet is on VC 1, whose far buffer is empty: it takes the wire
    // when a's p1 leaves it (330.4 - 560.8 ns, at r1 700.2) while a's p2
    // still waits for VC 0's credit (wire from 1144.4, at r1 1514.2).
    TwoSenders t(1);
    sc_start();
    REQUIRE(t.sink.arrivals.size() == 3);
    CHECK(t.sink.arrivals[0].called == ns(469.8));
    CHECK(t.sink.arrivals[1].called == ns(700.2));
    CHECK(t.sink.arrivals[1].src == 2);
    CHECK(t.sink.arrivals[2].called == ns(1514.2));
    CHECK(t.b.sent[0].credit == ns(560.8));
    CHECK(t.env.counter("x0y0z0f1_to_x1y0z0f1.handoff.waits") == 1);
}

TEST_CASE("cut link: handoff = call is the one-call model (credits at t_free, no handoff statistics)",
          "[cut-link][credits]") {
    const double at_r1[] = {469.8, 700.2, 1787.4 + 12.8 + 357, 2017.8 + 12.8 + 357};
    CutBench b(board_link(false, 36), back_to_back(4));
    b.sink.free_at = [](const PacketSink::Arrival& a) { return a.tail + us(1); };
    sc_start();
    REQUIRE(b.sink.arrivals.size() == 4);
    for (unsigned k = 0; k < 4; ++k) {
        CAPTURE(k);
        // Called inside the sender's call, at the sender's time (0), with
        // the head's arrival as the delay.
        CHECK(b.sink.arrivals[k].called == sc_time());
        CHECK(b.sink.arrivals[k].head == ns(at_r1[k]) + kPipeline);
    }
    CHECK(b.link.cut_near() == nullptr);
    CHECK(b.link.cut_far() == nullptr);
    CHECK(b.env.stats.find_counter("x0y0z0f1_to_x1y0z0f1.handoff.packets_posted") == nullptr);
}

TEST_CASE("cut link: an SC_METHOD whose packet needs a credit not delivered yet is refused, naming it and the link",
          "[cut-link][method]") {
    NetEnv env;
    Router r0("r0", env.ctx), r1("r1", env.ctx);
    Link link("x0y0z0f1_to_x1y0z0f1", env.ctx, board_link(true, 18), "x0y0z0f1", "link->x1y0z0f1");
    PacketSink sink("sink");
    PacketSource idle("idle", [](PacketSource&) {});
    idle.out.bind(r0.in);
    r0.set_route(1, 0);
    r0.out.bind(link.in);
    r0.set_output_link(0, &link);
    link.connect(r1);
    r1.set_route(1, 0);
    r1.out.bind(sink.in);
    // Two packets of a full buffer's size from a method, in its first run.
    struct Sender : sc_core::sc_module {
        Router& r;
        unsigned sent = 0;
        std::vector<unsigned char> data = std::vector<unsigned char>(256);
        Sender(sc_core::sc_module_name n, Router& router) : sc_module(n), r(router) {
            SC_HAS_PROCESS(Sender);
            SC_METHOD(send);
        }
        void send() {
            for (unsigned k = 0; k < 2; ++k) {
                tlm::tlm_generic_payload gp;
                auto& p = *new ExanetPacket;   // freed with gp, whichever way the call ends
                p.header.size = 256;
                p.header.dst_coord = 1;
                p.dst_node = 1;
                p.tail = sc_core::sc_time_stamp();
                gp.set_command(tlm::TLM_WRITE_COMMAND);
                gp.set_data_ptr(data.data());
                gp.set_data_length(256);
                gp.set_streaming_width(256);
                gp.set_extension(&p);
                sc_time d = sc_core::SC_ZERO_TIME;
                r.b_transport(0, gp, d);
                ++sent;
            }
        }
    } sender("sender", r0);
    std::string what;
    try {
        sc_start();
    } catch (const std::exception& e) {
        what = e.what();
    }
    INFO(what);
    CHECK(sender.sent == 1);   // the first fitted; the second would have had to wait
    CHECK(what.find("SC_METHOD sender.send") != std::string::npos);
    CHECK(what.find("x0y0z0f1_to_x1y0z0f1") != std::string::npos);
    CHECK(what.find("only a thread can wait") != std::string::npos);
}
