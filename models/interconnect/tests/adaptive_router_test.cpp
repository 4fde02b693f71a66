// Adaptive routing in the Router (the choice rule, through its sockets and
// directly) and time-ordered wire reservation in the Link (a later call
// with an earlier head overtakes). Each TEST_CASE is its own elaboration.
#include <catch2/catch.hpp>

#include "packet_bench.hpp"

using namespace vrdmasim;
using namespace vrdmasim_test;
using sc_core::sc_start;

namespace {
LinkParams timed_link(unsigned buffer_flits, unsigned vcs) {
    LinkParams p = link_params(16e9, ns(100), buffer_flits);   // 8 ns a flit
    p.vcs = vcs;
    p.time_order = true;
    return p;
}
}   // namespace

TEST_CASE("link: in time order a later call with an earlier head takes the idle wire before the earlier call",
          "[link][adaptive]") {
    NetEnv env;
    Link link("l", env.ctx, timed_link(128, 1), "g", "t");
    PacketSink sink("sink");
    link.out.bind(sink.in);
    PacketSource src("src", [](PacketSource& s) {
        PacketSpec late;
        late.seq = 0;
        late.head_delay = ns(1000);   // 18 flits: busy 1000..1144 ns
        s.send(late);
        PacketSpec early;
        early.seq = 1;
        early.head_delay = ns(100);   // called second, here first: 100..244 ns
        s.send(early);
        PacketSpec clash;
        clash.seq = 2;
        clash.head_delay = ns(900);   // would overlap the first: waits for it
        s.send(clash);
    });
    src.out.bind(link.in);
    sc_start();
    REQUIRE(sink.arrivals.size() == 3);
    // Head at the far end: start + one flit + latency.
    CHECK(sink.arrivals[0].head == ns(1000 + 8 + 100));
    CHECK(sink.arrivals[1].head == ns(100 + 8 + 100));   // overtook
    CHECK(sink.arrivals[2].head == ns(1144 + 8 + 100));   // after the first's reservation
    // Reservations 100..244, 1000..1144, 1144..1288: a packet at 0 fits at 244.
    CHECK(link.earliest_start(0, 18, ns(0), ns(0)) == ns(244));
    CHECK(link.earliest_start(0, 18, ns(250), ns(250)) == ns(250));
    CHECK(link.earliest_start(0, 18, ns(1000), ns(1000)) == ns(1288));   // after 1144 + 144
}

TEST_CASE("link: in time order credits count every packet held from the start on", "[link][adaptive]") {
    NetEnv env;
    // 40 flits: two packets of 18; the far end frees each 5 us after its tail.
    Link link("l", env.ctx, timed_link(40, 1), "g", "t");
    PacketSink sink("sink");
    sink.capacity_flits = 40;
    sink.free_at = [](const PacketSink::Arrival& a) { return a.tail + us(5); };
    link.out.bind(sink.in);
    PacketSource src("src", [](PacketSource& s) {
        for (unsigned k = 0; k < 3; ++k) {
            PacketSpec p;
            p.seq = k;
            p.head_delay = ns(2000 - 500 * k);   // later calls, earlier heads
            s.send(p);
        }
    });
    src.out.bind(link.in);
    sc_start();
    REQUIRE(sink.arrivals.size() == 3);
    CHECK(sink.violations == 0);
    CHECK(link.buffer_hwm(0) <= 40);
    // The second (head 1500 ns) overtakes the first (2000 ns): both fit.
    // The third (head 1000 ns) would be held while both are: it waits
    // until the second is freed (1644 + 100 + 5000 ns), then starts at once.
    CHECK(sink.arrivals[1].head == ns(1500 + 8 + 100));
    CHECK(sink.arrivals[1].free == ns(6744));
    CHECK(sink.arrivals[2].head == ns(6744 + 8 + 100));
}

TEST_CASE("router: adaptive choice takes the earliest adaptive link, escape only when strictly earlier",
          "[router][adaptive]") {
    NetEnv env;
    // Router of F1 on board x0y0 of a 3x3 torus; destination F1 of x1y1:
    // y+ (port 6) and x+ (port 4) are productive, escape is y+ on VC 0.
    const Topology t = Topology::torus(3, 3, 1);
    Router router("router", env.ctx);
    router.set_adaptive(t, 1, 3);
    std::vector<std::unique_ptr<PacketSink>> sinks;
    std::vector<std::unique_ptr<Link>> links;
    for (unsigned k = 0; k < t.port_count(1); ++k) {
        sinks.push_back(std::make_unique<PacketSink>(("s" + std::to_string(k)).c_str()));
        if (k == 4 || k == 6) {
            // Two packets per VC buffer, the far end never frees them.
            links.push_back(std::make_unique<Link>(("l" + std::to_string(k)).c_str(), env.ctx, timed_link(40, 3), "g",
                                                   "t" + std::to_string(k)));
            router.out.bind(links.back()->in);
            links.back()->out.bind(sinks.back()->in);
            router.set_output_link(k, links.back().get());
            sinks.back()->free_at = [](const PacketSink::Arrival&) { return us(1000); };
        } else {
            router.out.bind(sinks.back()->in);
        }
    }
    const unsigned dst = t.node_of(Coord{1, 1, 0, 1});
    std::vector<Router::Choice> chosen;
    std::vector<bool> was_adaptive;
    PacketSource src("src", [&](PacketSource& s) {
        for (unsigned k = 0; k < 6; ++k) {
            const Topology::Options o = t.adaptive_hops(1, 0, t.coord_word(dst), t.coord_word(1), 0);
            bool a = false;
            chosen.push_back(router.choose(o, flits_of(256), ns(100), ns(100), a));
            was_adaptive.push_back(a);
            PacketSpec p;
            p.src = 1;
            p.dst = dst;
            p.dst_coord = t.coord_word(dst);
            p.src_coord = t.coord_word(1);
            p.seq = k;
            s.send(p);
        }
    });
    src.out.bind(router.in);
    sc_start();
    REQUIRE(chosen.size() == 6);
    // 1: all idle, the tie goes to the first candidate (y, adaptive VC 2).
    CHECK(chosen[0].port == 6);
    CHECK(chosen[0].vc == 2);
    // 2: y+'s wire is busy, x+ idle.
    CHECK(chosen[1].port == 4);
    CHECK(chosen[1].vc == 2);
    // 3, 4: both busy alike: y+ first again, then x+.
    CHECK(chosen[2].port == 6);
    CHECK(chosen[3].port == 4);
    for (unsigned k = 0; k < 4; ++k) CHECK(was_adaptive[k]);
    // 5, 6: VC 2 of both links is full for good (two packets each, never
    // freed): the escape VC 0 of y+ starts earlier and is taken, twice
    // (its buffer holds two).
    CHECK(chosen[4].port == 6);
    CHECK(chosen[4].vc == 0);
    CHECK_FALSE(was_adaptive[4]);
    CHECK(chosen[5].vc == 0);
    CHECK(router.adaptive_hops() == 4);
    CHECK(router.escape_hops() == 2);
    CHECK(env.counter("router.adaptive_hops") == 4);
    CHECK(env.counter("router.escape_hops") == 2);
    CHECK(links[0]->buffer_hwm(2) == 36);
    CHECK(links[1]->buffer_hwm(2) == 36);
    CHECK(links[1]->buffer_hwm(0) == 36);
    for (const auto& x : sinks[4]->arrivals) CHECK(x.data_ok);
}

namespace {

// A time-ordered input link, a router and a time-ordered output link into
// a sink that frees slowly; the input link connected directly to the router
// (Link::connect: the router reads the link's lists) or through the
// router's socket (the router keeps its own).
struct TimedHop {
    TimedHop(NetEnv& env, const std::string& name, bool connected)
        : in((name + "_in").c_str(), env.ctx, timed_link(64, 1), "g", name + "_in"),
          router((name + "_router").c_str(), env.ctx),
          out((name + "_out").c_str(), env.ctx, timed_link(40, 1), "g", name + "_out"),
          sink((name + "_sink").c_str()),
          src((name + "_src").c_str(), [](PacketSource& s) {
              // Heads out of call order: later calls overtake earlier ones
              // on both links, and the buffers fill behind the slow sink.
              for (unsigned k = 0; k < 24; ++k) {
                  PacketSpec p;
                  p.seq = k;
                  p.head_delay = ns(k % 3 == 0 ? 3000 + 40.0 * k : 120.0 * k);
                  s.send(p);
              }
          }) {
        src.out.bind(in.in);
        if (connected) in.connect(router);
        else in.out.bind(router.in);
        router.out.bind(out.in);
        router.set_output_link(0, &out);
        router.set_route(1, 0);
        router.set_time_order();
        router.set_input_buffer(0, 64, 1);
        out.out.bind(sink.in);
        sink.free_at = [](const PacketSink::Arrival& a) { return a.tail + us(2); };
    }
    Link in;
    Router router;
    Link out;
    PacketSink sink;
    PacketSource src;
};

}   // namespace

TEST_CASE("router: in time order an input its link is connected to is measured on the link's lists, as on its own",
          "[router][link][time-order]") {
    NetEnv env;
    TimedHop connected(env, "a", true), socket(env, "b", false);
    sc_start();
    REQUIRE(connected.sink.arrivals.size() == 24);
    REQUIRE(socket.sink.arrivals.size() == 24);
    unsigned overtaken = 0;
    for (unsigned k = 0; k < 24; ++k) {
        CHECK(connected.sink.arrivals[k].head == socket.sink.arrivals[k].head);
        // (arrivals are in call order: a later call that arrives earlier overtook)
        overtaken += k > 0 && connected.sink.arrivals[k].head < connected.sink.arrivals[k - 1].head;
    }
    // Packets overtook, and the input held several at once.
    CHECK(overtaken > 0);
    CHECK(socket.router.occupancy_max(0) > 2 * flits_of(256));
    CHECK(connected.router.occupancy_max(0) == socket.router.occupancy_max(0));
    CHECK(connected.router.overflows() == socket.router.overflows());
    CHECK(connected.in.buffer_hwm(0) == socket.in.buffer_hwm(0));
}
