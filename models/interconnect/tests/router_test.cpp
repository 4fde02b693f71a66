// Router, tested through its sockets (PacketSources into `in`, PacketSinks or
// Links on `out`), alone and composed with Links: routing, pipeline latency,
// unroutable packets, and two flows sharing one output link. Each TEST_CASE is
// its own elaboration (ctest runs each in its own process).
#include <catch2/catch.hpp>

#include <algorithm>

#include "packet_bench.hpp"

#include <tlm_utils/tlm_quantumkeeper.h>

using namespace vrdmasim;
using namespace vrdmasim_test;
using sc_core::sc_start;

TEST_CASE("router: packets leave through the port their destination is routed to", "[router]") {
    NetEnv env;
    Router router("router", env.ctx);
    PacketSink s0("s0"), s1("s1"), s2("s2");
    router.out.bind(s0.in);
    router.out.bind(s1.in);
    router.out.bind(s2.in);
    router.set_route(0, 2);
    router.set_route(1, 0);
    router.set_route(5, 1);
    router.set_route(1, 1);   // a later route replaces the earlier one
    router.set_route(3, 0);
    CHECK(router.route(0) == 2);
    CHECK(router.route(1) == 1);
    CHECK(router.route(2) == -1);
    CHECK(router.route(3) == 0);
    CHECK(router.route(5) == 1);
    CHECK(router.route(6) == -1);
    CHECK(router.route(1000) == -1);

    // Two inputs (multi-passthrough), packets to 0, 1, 3, 5 from both.
    auto script = [](unsigned src) {
        return [src](PacketSource& s) {
            const unsigned dsts[] = {0, 1, 3, 5};
            for (unsigned k = 0; k < 4; ++k) {
                PacketSpec p;
                p.src = src;
                p.dst = dsts[k];
                p.seq = k;
                s.send(p);
                sc_core::wait(us(1));
            }
        };
    };
    PacketSource a("a", script(10)), b("b", script(11));
    a.out.bind(router.in);
    b.out.bind(router.in);
    sc_start();

    auto dsts_of = [](const PacketSink& s) {
        std::vector<unsigned> v;
        for (const auto& x : s.arrivals) v.push_back(x.dst);
        std::sort(v.begin(), v.end());
        return v;
    };
    CHECK(dsts_of(s0) == std::vector<unsigned>{3, 3});
    CHECK(dsts_of(s1) == std::vector<unsigned>{1, 1, 5, 5});
    CHECK(dsts_of(s2) == std::vector<unsigned>{0, 0});
    for (const auto* s : {&s0, &s1, &s2})
        for (const auto& x : s->arrivals) CHECK(x.data_ok);
    for (const auto& x : a.sent) CHECK(x.status == tlm::TLM_OK_RESPONSE);
    CHECK(env.counter("router.packets") == 8);
    CHECK(env.counter("router.unroutable") == 0);
}

TEST_CASE("router: the pipeline latency is added to head and tail", "[router][timing]") {
    NetEnv env;
    env.cfg.set("router.latency", "250ns", "test");
    Router router("router", env.ctx);
    PacketSink sink("sink");
    sink.free_at = [](const PacketSink::Arrival& a) { return a.tail + ns(30); };
    router.out.bind(sink.in);
    router.set_route(1, 0);
    PacketSource src("src", [](PacketSource& s) {
        PacketSpec p;
        p.head_delay = ns(10);
        p.tail_lag = ns(40);
        s.send(p);
        sc_core::wait(us(1));
        p.seq = 1;
        p.head_delay = sc_core::SC_ZERO_TIME;
        p.tail_lag = sc_core::SC_ZERO_TIME;
        s.send(p);
    });
    src.out.bind(router.in);
    sc_start();

    REQUIRE(sink.arrivals.size() == 2);
    CHECK(sink.arrivals[0].head == ns(10 + 250));
    CHECK(sink.arrivals[0].tail == ns(50 + 250));
    // The router's input space is free when the next hop says the tail has gone.
    CHECK(src.sent[0].credit == ns(50 + 250 + 30));
    CHECK(sink.arrivals[1].head == ns(1000 + 250));
    CHECK(sink.arrivals[1].tail == ns(1000 + 250));
    CHECK(src.sent[1].credit == ns(1000 + 250 + 30));
}

TEST_CASE("router: a packet with no route is refused with an address error and counted", "[router]") {
    NetEnv env;
    Router router("router", env.ctx);
    PacketSink sink("sink");
    router.out.bind(sink.in);
    router.set_route(1, 0);
    router.set_route(4, 0);
    std::vector<Sent> r;
    PacketSource src("src", [&](PacketSource& s) {
        PacketSpec p;
        p.dst = 9;   // beyond the table
        r.push_back(s.send(p));
        p.dst = 2;   // inside the table, no route
        r.push_back(s.send(p));
        p.dst = 1;
        r.push_back(s.send(p));
        p.with_extension = false;   // not a packet at all
        r.push_back(s.send(p));
    });
    src.out.bind(router.in);
    sc_start();

    REQUIRE(r.size() == 4);
    CHECK(r[0].status == tlm::TLM_ADDRESS_ERROR_RESPONSE);
    CHECK(r[1].status == tlm::TLM_ADDRESS_ERROR_RESPONSE);
    CHECK(r[2].status == tlm::TLM_OK_RESPONSE);
    CHECK(r[3].status == tlm::TLM_ADDRESS_ERROR_RESPONSE);
    REQUIRE(sink.arrivals.size() == 1);
    CHECK(sink.arrivals[0].dst == 1);
    CHECK(env.counter("router.unroutable") == 3);
    CHECK(env.counter("router.packets") == 1);
}

namespace {

// The two packets of the one-hop benches below: in-link 20 Gb/s and 20 ns,
// router 100 ns, out-link 16 Gb/s and 150 ns, the second packet right
// behind the first.
void check_one_hop(const PacketSource& src, const PacketSink& sink) {
    REQUIRE(sink.arrivals.size() == 2);
    // p0: in-link 0..115.2; at the router head 26.4, tail 135.2; after the
    // pipeline head 126.4, tail 235.2; out-link 126.4..270.4 (its own
    // serialisation dominates).
    CHECK(src.sent[0].credit == ns(115.2));
    CHECK(sink.arrivals[0].head == ns(126.4 + 8 + 150));
    CHECK(sink.arrivals[0].tail == ns(270.4 + 150));
    CHECK(sink.arrivals[0].hops == 2);
    // p1: in-link 115.2..230.4; at the out-link head 241.6, which is busy
    // until 270.4; then 270.4..414.4.
    CHECK(src.sent[1].credit == ns(230.4));
    CHECK(sink.arrivals[1].head == ns(270.4 + 8 + 150));
    CHECK(sink.arrivals[1].tail == ns(414.4 + 150));
}

// The one-hop benches' source: two default packets, the second right
// behind the first (its head when the first's credit returns).
void send_back_to_back(PacketSource& s) {
    PacketSpec p;
    const Sent first = s.send(p);
    p.seq = 1;
    p.head_delay = first.credit - sc_core::sc_time_stamp();
    s.send(p);
}

// The one-hop bench's parts, as check_one_hop times them (router 100 ns;
// in: 20 Gb/s, 20 ns; out: 16 Gb/s, 150 ns), each test wiring them its way.
struct OneHop {
    explicit OneHop(const char* out_track) : out("out", env.ctx, link_params(16e9, ns(150), 64), "node0", out_track) {}
    NetEnv env;
    Link in{"in", env.ctx, link_params(20e9, ns(20), 64), "node0", "ni->router"};
    Router router{"router", env.ctx};
    Link out;
    PacketSink sink{"sink"};
    PacketSource src{"src", send_back_to_back};
};

}   // namespace

TEST_CASE("router: one hop through link, router and link adds up exactly", "[router][link][timing]") {
    // In: 20 Gb/s (6.4 ns per flit, 256 B = 115.2 ns), 20 ns. Out: 16 Gb/s
    // (8 ns per flit, 144 ns), 150 ns.
    OneHop b("link->node1");
    b.src.out.bind(b.in.in);
    b.in.out.bind(b.router.in);
    b.router.out.bind(b.out.in);
    b.out.out.bind(b.sink.in);
    b.router.set_route(1, 0);
    sc_start();

    check_one_hop(b.src, b.sink);
    CHECK(b.env.histogram("out.queue_delay").sum() == Approx(270.4 - 241.6));
}

TEST_CASE("router: links connected directly reach the input they were bound to and time as through sockets",
          "[router][link][timing]") {
    // As the test above, but the input link is the router's second input,
    // both inputs are connected with Link::connect and the output link is
    // the router's set_output_link (direct calls both ways).
    NetEnv env;
    Link first("first", env.ctx, link_params(20e9, ns(20), 64), "node0", "a->router");
    Link in("in", env.ctx, link_params(20e9, ns(20), 64), "node0", "ni->router");
    Router router("router", env.ctx);
    Link out("out", env.ctx, link_params(16e9, ns(150), 64), "node0", "link->node1");
    PacketSink sink("sink");
    PacketSource idle("idle", [](PacketSource&) {});
    PacketSource src("src", send_back_to_back);
    idle.out.bind(first.in);
    src.out.bind(in.in);
    first.connect(router);   // input 0
    in.connect(router);   // input 1
    router.out.bind(out.in);
    router.set_output_link(0, &out);
    out.out.bind(sink.in);
    router.set_route(1, 0);
    // Input 1's buffer is declared smaller than a packet: each packet that
    // reaches it counts as an overflow; input 0's never would.
    router.set_input_buffer(0, 64, 1);
    router.set_input_buffer(1, 4, 1);
    sc_start();

    check_one_hop(src, sink);
    CHECK(sink.direct_calls == 0);   // through out's socket
    CHECK(router.overflows() == 2);
    CHECK(env.counter("router.packets") == 2);
    CHECK(env.counter("out.packets") == 2);
}

TEST_CASE("router: a link connected to a network interface calls it directly and times as through its socket",
          "[router][link][timing]") {
    // The one-hop bench again, the output link connected to the sink as
    // the node's ejection link is to its PLDMA (Link::connect(socket,
    // target)): every packet comes by PacketTarget::accept, at the same times.
    OneHop b("router->ni");
    b.src.out.bind(b.in.in);
    b.in.connect(b.router);
    b.router.out.bind(b.out.in);
    b.router.set_output_link(0, &b.out);
    b.out.connect(b.sink.in, b.sink);
    b.router.set_route(1, 0);
    sc_start();

    check_one_hop(b.src, b.sink);
    CHECK(b.sink.direct_calls == 2);
    for (const auto& a : b.sink.arrivals) CHECK(a.data_ok);
}

namespace {

// A Link's PacketTarget side, counted: what a network interface's PacketOut
// calls when told to send directly.
struct CountedLink : PacketTarget {
    explicit CountedLink(Link& l) : link(l) {}
    void accept(tlm::tlm_generic_payload& gp, ExanetPacket& pkt, sc_time& delay) override {
        ++calls;
        link.accept(gp, pkt, delay);
    }
    Link& link;
    unsigned calls = 0;
};

}   // namespace

TEST_CASE("router: a network interface sending to its link directly times as through the socket",
          "[router][link][timing]") {
    // The one-hop bench, the source's packets given to the input link by
    // PacketOut as a PLDMA's are to its injection link (Pldma::connect).
    OneHop b("link->node1");
    CountedLink direct(b.in);
    b.src.out.bind(b.in.in);
    b.src.path.direct(&direct);
    b.in.connect(b.router);
    b.router.out.bind(b.out.in);
    b.out.out.bind(b.sink.in);
    b.router.set_route(1, 0);
    sc_start();

    check_one_hop(b.src, b.sink);
    CHECK(direct.calls == 2);
    CHECK(b.env.counter("in.packets") == 2);
}

namespace {

// A source that keeps its link saturated with 256 B packets from `from` to
// `until`, decoupled in time by a quantum keeper, as a DMA engine would.
std::function<void(PacketSource&)> saturating(unsigned src, sc_time from, sc_time until) {
    return [=](PacketSource& s) {
        sc_core::wait(from);
        tlm_utils::tlm_quantumkeeper qk;
        qk.reset();
        for (unsigned k = 0; qk.get_current_time() < until; ++k) {
            PacketSpec p;
            p.src = src;
            p.dst = 7;
            p.seq = k & 0x3fff;
            p.head_delay = qk.get_local_time();
            const Sent r = s.send(p);
            qk.set(r.credit - sc_core::sc_time_stamp());
            if (qk.need_sync()) qk.sync();
        }
    };
}

// Packets of `src` whose tail reached the sink in [from, to).
unsigned delivered(const PacketSink& sink, unsigned src, sc_time from, sc_time to) {
    unsigned n = 0;
    for (const auto& a : sink.arrivals)
        if (a.src == src && a.tail >= from && a.tail < to) ++n;
    return n;
}

}   // namespace

TEST_CASE("router: two flows sharing one output link get half of it each, one alone all of it",
          "[router][link][contention]") {
    NetEnv env;
    tlm_utils::tlm_quantumkeeper::set_global_quantum(us(1));
    // Each source has its own 20 Gb/s input link into the router; both flows
    // leave through one 16 Gb/s link (256 B packets: 144 ns each).
    Link in_a("in_a", env.ctx, link_params(20e9, ns(20), 64), "node0", "a->router");
    Link in_b("in_b", env.ctx, link_params(20e9, ns(20), 64), "node0", "b->router");
    Router router("router", env.ctx);
    Link out("out", env.ctx, link_params(16e9, ns(150), 128), "node0", "link->node7");
    PacketSink sink("sink");
    sink.capacity_flits = 128;
    // A alone from 0 to 100 us; A and B together from 100 to 200 us.
    PacketSource a("a", saturating(1, sc_core::SC_ZERO_TIME, us(200)));
    PacketSource b("b", saturating(2, us(100), us(200)));
    a.out.bind(in_a.in);
    b.out.bind(in_b.in);
    in_a.out.bind(router.in);
    in_b.out.bind(router.in);
    router.out.bind(out.in);
    out.out.bind(sink.in);
    router.set_route(7, 0);
    sc_start();

    // 80 us windows away from the edges: the link carries 80 us / 144 ns.
    const double capacity = 80e3 / 144;
    const unsigned alone_a = delivered(sink, 1, us(10), us(90));
    const unsigned alone_b = delivered(sink, 2, us(10), us(90));
    const unsigned shared_a = delivered(sink, 1, us(110), us(190));
    const unsigned shared_b = delivered(sink, 2, us(110), us(190));
    INFO("alone: a " << alone_a << ", shared: a " << shared_a << " b " << shared_b << " of " << capacity);
    CHECK(alone_b == 0);
    CHECK(alone_a == Approx(capacity).epsilon(0.01));
    CHECK(shared_a == Approx(capacity / 2).epsilon(0.03));
    CHECK(shared_b == Approx(capacity / 2).epsilon(0.03));
    CHECK(shared_a + shared_b == Approx(capacity).epsilon(0.01));
    CHECK(sink.violations == 0);
    CHECK(std::all_of(sink.arrivals.begin(), sink.arrivals.end(),
                      [](const PacketSink::Arrival& x) { return x.data_ok; }));
    // The input links are held back by credits from the router while sharing.
    CHECK(env.scalar("in_a.credit_stall_time") > 0);
}

TEST_CASE("router: a route to an unbound port is found at the end of elaboration", "[router]") {
    ModelEnv env(kNetParams);
    const vrdmasim::SimContext& ctx = env.ctx;
    struct Master : sc_core::sc_module {
        tlm_utils::simple_initiator_socket<Master> s{"s"};
        explicit Master(sc_core::sc_module_name n) : sc_core::sc_module(n) {}
    };
    struct Sink : sc_core::sc_module {
        tlm_utils::simple_target_socket<Sink> s{"s"};
        explicit Sink(sc_core::sc_module_name n) : sc_core::sc_module(n) {
            s.register_b_transport(this, &Sink::b_transport);
        }
        void b_transport(tlm::tlm_generic_payload&, sc_core::sc_time&) {}
    };
    Master m("m");
    Sink sink("sink");
    vrdmasim::Router r("r", ctx);
    m.s.bind(r.in);
    r.out.bind(sink.s);
    r.set_route(0, 3);   // only port 0 is bound
    try {
        sc_core::sc_start(sc_core::SC_ZERO_TIME);
        FAIL("elaboration should have failed");
    } catch (const std::exception& e) {
        CHECK(std::string(e.what()).find("port 3") != std::string::npos);
    }
}

TEST_CASE("router: whether a packet has a route follows the routes as they are set, its last yes kept only for them",
          "[router]") {
    // An injection link asks Router::routes for every packet it takes; the
    // router keeps its last yes for the packets after. A yes kept must not
    // outlive the route it came from, nor answer for another packet, and a
    // route function's answer is asked each time.
    NetEnv env;
    Link in("in", env.ctx, link_params(20e9, ns(20), 64), "node0", "ni->router");
    Router router("router", env.ctx);
    Link out("out", env.ctx, link_params(16e9, ns(150), 64), "node0", "link->node1");
    PacketSink sink("sink");
    PacketSource idle("idle", [](PacketSource&) {});
    idle.out.bind(in.in);
    in.connect(router);
    router.out.bind(out.in);
    router.set_output_link(0, &out);
    out.out.bind(sink.in);
    router.set_route(1, 0);
    sc_start(sc_core::SC_ZERO_TIME);   // (the direct outputs are known from the end of elaboration)

    ExanetPacket p;
    p.dst_node = 1;
    CHECK(router.routes(0, p));
    CHECK(router.routes(0, p));   // the kept yes
    router.set_route(1, 3);   // a port with no link
    CHECK_FALSE(router.routes(0, p));
    router.set_route(1, 0);
    CHECK(router.routes(0, p));
    p.dst_node = 2;   // another packet: no route
    CHECK_FALSE(router.routes(0, p));
    p.dst_node = 1;
    CHECK(router.routes(0, p));
    bool yes = true;
    router.set_route_function([&yes](unsigned, const ExanetPacket&) {
        Router::Choice c;
        c.port = yes ? 0 : 5;
        return c;
    });
    CHECK(router.routes(0, p));
    yes = false;   // the same packet, another answer: asked again
    CHECK_FALSE(router.routes(0, p));
    yes = true;
    CHECK(router.routes(0, p));
}
