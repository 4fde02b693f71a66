// Topology (coordinates, names, ports, dimension-order routing with the VC
// dateline) as arithmetic, then as a network of Routers and Links built from
// it: packets traced through the routers, the VC on a wrap-around link, and
// credit flow control that never overflows an input buffer under load. Each
// TEST_CASE is its own elaboration (ctest runs each in its own process).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <map>
#include <memory>

#include "models/interconnect/topology.hpp"
#include "packet_bench.hpp"

using namespace vrdmasim;
using namespace vrdmasim_test;
using sc_core::sc_start;

namespace {

unsigned along(const Coord& c, int d) { return d == Topology::X ? c.x : d == Topology::Y ? c.y : c.z; }

// Ring distance the shorter way round.
unsigned ring_distance(unsigned a, unsigned b, unsigned n) {
    const unsigned d = (b + n - a) % n;
    return std::min(d, n - d);
}

// What the route from src to dst must look like, from the coordinates alone.
unsigned expected_hops(const Topology& t, unsigned src, unsigned dst) {
    if (src == dst) return 0;
    const Coord a = t.coord(src), b = t.coord(dst);
    if (a.x == b.x && a.y == b.y && a.z == b.z) return 1;
    unsigned h = (a.f != 1) + (b.f != 1);
    for (int d : {Topology::X, Topology::Y, Topology::Z}) h += ring_distance(along(a, d), along(b, d), t.extent(d));
    return h;
}

// Checks one route against the rules: ends at dst, the expected hop count,
// ring hops only between F1s, in dimension order z, y, x, each dimension in
// one direction (the shorter, + on a tie), VC 0 except after a wrap link in
// the current dimension (then 1).
void check_route(const Topology& t, unsigned src, unsigned dst) {
    INFO("route " << t.name(src) << " -> " << t.name(dst));
    const auto steps = t.route(src, dst);
    REQUIRE(!steps.empty());
    CHECK(steps.front().node == src);
    CHECK(steps.back().node == dst);
    CHECK(steps.back().port == 0);
    CHECK(steps.size() - 1 == expected_hops(t, src, dst));
    CHECK(t.hops(src, dst) == steps.size() - 1);
    int last_dim = 3;
    bool wrapped = false;
    for (std::size_t i = 0; i + 1 < steps.size(); ++i) {
        const Topology::Port p = t.port(steps[i].node, static_cast<unsigned>(steps[i].port));
        CHECK(p.to == steps[i + 1].node);
        if (p.dim == Topology::kLocal) {
            CHECK(steps[i].vc == 0);
            continue;
        }
        CHECK(t.coord(steps[i].node).f == 1);
        CHECK(t.coord(p.to).f == 1);
        CHECK(p.dim <= last_dim);
        if (p.dim != last_dim) wrapped = false;
        last_dim = p.dim;
        const unsigned n = t.extent(p.dim);
        const unsigned a = along(t.coord(steps[i].node), p.dim), b = along(t.coord(dst), p.dim);
        const unsigned fwd = (b + n - a) % n;
        if (n > 2) CHECK(p.dir == (fwd <= n - fwd ? +1 : -1));
        wrapped = wrapped || p.wrap;
        CHECK(steps[i].vc == (wrapped ? 1u : 0u));
    }
}

}   // namespace

TEST_CASE("topology: coordinates pack x, y, z and the FPGA offset into 22 bits", "[topology]") {
    for (const Coord c : {Coord{0, 0, 0, 0}, Coord{63, 63, 63, 3}, Coord{1, 0, 2, 3}, Coord{5, 17, 40, 1}}) {
        const std::uint32_t w = exanet_coord::pack(c);
        CHECK(w < (1u << 22));
        CHECK(exanet_coord::unpack(w) == c);
    }
    CHECK(exanet_coord::pack(Coord{1, 0, 2, 3}) == (3u | 1u << 2 | 2u << 14));

    const Topology t = Topology::torus(9, 6, 6);
    CHECK(t.size() == 1296);
    CHECK(t.boards() == 324);
    for (unsigned i : {0u, 1u, 5u, 37u, 1295u}) {
        const Coord c = t.coord(i);
        CHECK(((c.z * 6 + c.y) * 9 + c.x) * 4 + c.f == i);
        CHECK(t.node_of(c) == i);
        CHECK(t.coord_word(i) == exanet_coord::pack(c));
    }
    CHECK(t.name(1295) == "x8y5z5f3");
    CHECK(t.name(((2 * 6 + 0) * 9 + 1) * 4 + 3) == "x1y0z2f3");
    CHECK(Topology::mezzanine().size() == 16);
    CHECK(Topology::mezzanine().name(9) == "x2y0z0f1");
    // One QFDB keeps its names, and a node's coordinate is its offset.
    const Topology q = Topology::qfdb(3);
    CHECK(q.size() == 3);
    CHECK(q.name(2) == "node2");
    CHECK(q.coord_word(2) == 2);
    CHECK(q.hops(0, 2) == 1);
}

TEST_CASE("topology: F1 holds the off-board links, one pair on a ring of two, none on a ring of one", "[topology]") {
    const Topology t = Topology::torus(3, 2, 1);
    // Non-F1: NI + the three others of its board.
    CHECK(t.port_count(0) == 4);
    // F1: + 2 ports along x (3 boards), 1 along y (2 boards), none along z.
    CHECK(t.port_count(1) == 7);
    std::map<int, int> per_dim;
    for (unsigned k = 4; k < 7; ++k) per_dim[t.port(1, k).dim]++;
    CHECK(per_dim[Topology::X] == 2);
    CHECK(per_dim[Topology::Y] == 1);
    CHECK(per_dim.count(Topology::Z) == 0);
    // From x0: +x to x1, -x to x2 over the wrap-around link; y to y1, no wrap.
    const auto name_to = [&](unsigned k) { return t.name(t.port(1, k).to); };
    CHECK(name_to(4) == "x1y0z0f1");
    CHECK_FALSE(t.port(1, 4).wrap);
    CHECK(name_to(5) == "x2y0z0f1");
    CHECK(t.port(1, 5).wrap);
    CHECK(name_to(6) == "x0y1z0f1");
    CHECK_FALSE(t.port(1, 6).wrap);
    // Intra-board ports by offset, skipping the node itself.
    CHECK(t.name(t.port(1, 1).to) == "x0y0z0f0");
    CHECK(t.name(t.port(1, 2).to) == "x0y0z0f2");
    CHECK(t.name(t.port(1, 3).to) == "x0y0z0f3");
    // Every link has a way back.
    for (unsigned i = 0; i < t.size(); ++i)
        for (unsigned k = 1; k < t.port_count(i); ++k) {
            CHECK(t.port_to(t.port(i, k).to, i) >= 1);
            CHECK(static_cast<int>(t.port_back(t.coord(i), k)) == t.port_to(t.port(i, k).to, i));
        }
}

TEST_CASE("topology: routes on a 3x2x1 torus match hand-made paths", "[topology][routing]") {
    const Topology t = Topology::torus(3, 2, 1);
    const auto node = [&](unsigned x, unsigned y, unsigned f) { return (y * 3 + x) * 4 + f; };
    const auto nodes_of = [&](unsigned s, unsigned d) {
        std::vector<std::string> v;
        for (const auto& st : t.route(s, d)) v.push_back(t.name(st.node) + "/vc" + std::to_string(st.vc));
        return v;
    };
    // f0 to its F1, y first (z has nothing to do), then x the short way:
    // 0 -> 2 is one hop backwards over the wrap-around link (VC 1), then the
    // destination board's F1 hands it to f3.
    CHECK(nodes_of(node(0, 0, 0), node(2, 1, 3)) ==
          std::vector<std::string>{"x0y0z0f0/vc0", "x0y0z0f1/vc0", "x0y1z0f1/vc1", "x2y1z0f1/vc0", "x2y1z0f3/vc0"});
    CHECK(t.hops(node(0, 0, 0), node(2, 1, 3)) == 4);
    // F1 to F1 one hop forward, no wrap.
    CHECK(nodes_of(node(1, 1, 1), node(2, 1, 1)) == std::vector<std::string>{"x1y1z0f1/vc0", "x2y1z0f1/vc0"});
    // Across one board: directly, never through F1.
    CHECK(nodes_of(node(2, 0, 3), node(2, 0, 0)) == std::vector<std::string>{"x2y0z0f3/vc0", "x2y0z0f0/vc0"});
    // x2 -> x0 forward over the wrap-around link.
    CHECK(nodes_of(node(2, 0, 1), node(0, 0, 2)) ==
          std::vector<std::string>{"x2y0z0f1/vc1", "x0y0z0f1/vc0", "x0y0z0f2/vc0"});
    for (unsigned s = 0; s < t.size(); ++s)
        for (unsigned d = 0; d < t.size(); ++d) check_route(t, s, d);
}

TEST_CASE("topology: routes on a 4x4x4 torus go z, y, x with ties the + way and the dateline on wrap links",
          "[topology][routing]") {
    const Topology t = Topology::torus(4, 4, 4);
    const auto node = [&](unsigned x, unsigned y, unsigned z, unsigned f) { return ((z * 4 + y) * 4 + x) * 4 + f; };
    const auto path = [&](unsigned s, unsigned d) {
        std::string p;
        for (const auto& st : t.route(s, d)) p += t.name(st.node) + "/" + std::to_string(st.vc) + " ";
        return p;
    };
    // (0,0,0) -> (3,2,2): z 0->2 is a tie (+), y likewise, x 0->3 one step
    // backwards over the wrap-around link.
    CHECK(path(node(0, 0, 0, 1), node(3, 2, 2, 1)) ==
          "x0y0z0f1/0 x0y0z1f1/0 x0y0z2f1/0 x0y1z2f1/0 x0y2z2f1/1 x3y2z2f1/0 ");
    // x3 -> x1: a tie, so +: over the wrap link to x0 (VC 1) and on in VC 1.
    CHECK(path(node(3, 0, 0, 1), node(1, 0, 0, 0)) == "x3y0z0f1/1 x0y0z0f1/1 x1y0z0f1/0 x1y0z0f0/0 ");
    // z wraps (VC 1), then turning into y resets to VC 0.
    CHECK(path(node(0, 0, 3, 1), node(0, 1, 0, 1)) == "x0y0z3f1/1 x0y0z0f1/0 x0y1z0f1/0 ");
    // Every pair, as the rules say (64 boards, 256 nodes, 65,536 routes).
    for (unsigned s = 0; s < t.size(); ++s)
        for (unsigned d = 0; d < t.size(); ++d) check_route(t, s, d);
}

TEST_CASE("topology: a mezzanine, a 2x1x1 pair, one QFDB and a 9x6x6 cluster route by the same rules",
          "[topology][routing]") {
    for (const Topology& t : {Topology::mezzanine(), Topology::torus(2, 1, 1), Topology::torus(1, 1, 5),
                              Topology::qfdb(4), Topology::qfdb(2)})
        for (unsigned s = 0; s < t.size(); ++s)
            for (unsigned d = 0; d < t.size(); ++d) check_route(t, s, d);
    // 1,296 MPSoCs: routes from a sample of sources to every node; the
    // longest route crosses half of each ring plus both boards.
    const Topology big = Topology::torus(9, 6, 6);
    for (unsigned s : {0u, 1u, 6u, 645u, 1295u})
        for (unsigned d = 0; d < big.size(); ++d) check_route(big, s, d);
    CHECK(big.hops(0, big.node_of(Coord{4, 3, 3, 0})) == 1 + 4 + 3 + 3 + 1);
    // Coordinates outside the topology have no route.
    CHECK(big.next_hop(1, 0, exanet_coord::pack(Coord{9, 0, 0, 0}), 0).port == -1);
    CHECK(Topology::qfdb(2).next_hop(0, 0, 3, 0).port == -1);
}

namespace {

// Routers and Links of a topology (no nodes): a PacketSource injects at
// every node through an `ni` link and a PacketSink takes packets out at every
// node, as src/sim/system.cpp wires them.
struct NetworkBench {
    const Topology topo;
    std::vector<std::unique_ptr<Router>> routers;
    std::vector<std::unique_ptr<Link>> links;
    std::vector<std::unique_ptr<PacketSource>> sources;
    std::vector<std::unique_ptr<PacketSink>> sinks;

    NetworkBench(NetEnv& env, Topology t, const LinkParams& lp, const LinkParams& ni,
                 std::function<void(unsigned, PacketSource&)> script)
        : topo(std::move(t)) {
        const unsigned n = topo.size();
        std::vector<std::vector<Link*>> out(n);
        for (unsigned i = 0; i < n; ++i) {
            const std::string name = topo.name(i);
            routers.push_back(std::make_unique<Router>((name + "_router").c_str(), env.ctx));
            Router& r = *routers.back();
            r.set_route_function([this, i](unsigned in, const ExanetPacket& p) {
                const Topology::Hop h = topo.next_hop(i, in, p.header.dst_coord, p.header.vc);
                return Router::Choice{h.port, static_cast<int>(h.vc)};
            });
            links.push_back(std::make_unique<Link>((name + "_inject").c_str(), env.ctx, ni, name, "ni->router"));
            Link& inject = *links.back();
            sources.push_back(std::make_unique<PacketSource>((name + "_src").c_str(),
                                                             [script, i](PacketSource& s) { script(i, s); }));
            sources.back()->out.bind(inject.in);
            inject.out.bind(r.in);
            r.set_input_buffer(0, ni.buffer_flits, ni.vcs);
            links.push_back(std::make_unique<Link>((name + "_eject").c_str(), env.ctx, ni, name, "router->ni"));
            Link& eject = *links.back();
            sinks.push_back(std::make_unique<PacketSink>((name + "_sink").c_str()));
            sinks.back()->capacity_flits = ni.buffer_flits;
            r.out.bind(eject.in);
            eject.out.bind(sinks.back()->in);
            out[i].assign(topo.port_count(i), nullptr);
            for (unsigned k = 1; k < topo.port_count(i); ++k) {
                const std::string lname = name + "_to_" + topo.name(topo.port(i, k).to);
                links.push_back(std::make_unique<Link>(lname.c_str(), env.ctx, lp, name, "link"));
                out[i][k] = links.back().get();
                r.out.bind(out[i][k]->in);
            }
        }
        for (unsigned j = 0; j < n; ++j)
            for (unsigned k = 1; k < topo.port_count(j); ++k) {
                const unsigned i = topo.port(j, k).to;
                out[i][static_cast<unsigned>(topo.port_to(i, j))]->out.bind(routers[j]->in);
                routers[j]->set_input_buffer(k, lp.buffer_flits, lp.vcs);
            }
    }
    PacketSpec packet(unsigned src, unsigned dst, unsigned seq) const {
        PacketSpec p;
        p.src = src;
        p.dst = dst;
        p.seq = seq;
        p.dst_coord = topo.coord_word(dst);
        p.src_coord = topo.coord_word(src);
        return p;
    }
};

LinkParams with_vcs(LinkParams p, unsigned vcs) {
    p.vcs = vcs;
    return p;
}

}   // namespace

TEST_CASE("topology network: every pair's packet passes exactly the routers of its route and arrives intact",
          "[topology][routing][network]") {
    NetEnv env;
    const Topology t = Topology::torus(3, 2, 1);
    const unsigned n = t.size();
    // One packet at a time from node 0's source... every source sends to every
    // other node, 2 us apart, each in its own time slot so that the routers'
    // packet counters can be read between packets.
    std::vector<std::vector<std::uint64_t>> seen;   // per packet, routers' counters after it
    std::vector<std::pair<unsigned, unsigned>> order;
    std::unique_ptr<NetworkBench> bench;
    auto script = [&](unsigned i, PacketSource& s) {
        if (i != 0) return;
        for (unsigned a = 0; a < n; ++a)
            for (unsigned b = 0; b < n; ++b) {
                if (a == b) continue;
                // Node 0's thread sends on behalf of a: through a's source.
                order.emplace_back(a, b);
                bench->sources[a]->send(bench->packet(a, b, static_cast<unsigned>(order.size())));
                sc_core::wait(us(2));
                std::vector<std::uint64_t> c;
                for (unsigned r = 0; r < n; ++r) c.push_back(env.counter(t.name(r) + "_router.packets"));
                seen.push_back(c);
            }
    };
    bench = std::make_unique<NetworkBench>(env, t, with_vcs(link_params(16e9, ns(150), 64), 2),
                                           link_params(20e9, ns(20), 64), script);
    sc_start();

    REQUIRE(seen.size() == n * (n - 1));
    std::vector<std::uint64_t> before(n, 0);
    for (std::size_t p = 0; p < seen.size(); ++p) {
        const auto [a, b] = order[p];
        INFO(t.name(a) << " -> " << t.name(b));
        std::vector<std::uint64_t> expect = before;
        for (const auto& st : t.route(a, b)) expect[st.node]++;
        CHECK(seen[p] == expect);
        before = seen[p];
    }
    for (unsigned b = 0; b < n; ++b) {
        CHECK(bench->sinks[b]->arrivals.size() == n - 1);
        for (const auto& x : bench->sinks[b]->arrivals) {
            CHECK(x.data_ok);
            CHECK(x.dst == b);
            // inject + router-to-router links + eject
            CHECK(x.hops == t.hops(x.src, b) + 2);
        }
    }
    for (unsigned r = 0; r < n; ++r) CHECK(env.counter(t.name(r) + "_router.unroutable") == 0);
}

TEST_CASE("topology network: a packet over a wrap-around link moves to VC 1 and back to VC 0 on turning",
          "[topology][vc][network]") {
    NetEnv env;
    const Topology t = Topology::torus(4, 3, 1);
    const unsigned src = t.node_of(Coord{3, 2, 0, 1}), dst = t.node_of(Coord{1, 0, 0, 2});
    std::unique_ptr<NetworkBench> bench;
    bench = std::make_unique<NetworkBench>(env, t, with_vcs(link_params(16e9, ns(150), 64), 2),
                                           link_params(20e9, ns(20), 64), [&](unsigned i, PacketSource& s) {
                                               if (i == src) s.send(bench->packet(src, dst, 0));
                                           });
    sc_start();
    REQUIRE(bench->sinks[dst]->arrivals.size() == 1);
    CHECK(bench->sinks[dst]->arrivals[0].data_ok);
    // y first: 2 -> 0 is forward over the wrap link (VC 1); x: 3 -> 1 is a
    // tie, forward, over the wrap link again (VC reset on turning, then 1),
    // then x0 -> x1 still VC 1 in x; the last hop inside the board VC 0.
    const auto vc_used = [&](const std::string& link, unsigned vc) {
        return env.scalar(link + ".vc" + std::to_string(vc) + ".buffer_hwm") > 0;
    };
    CHECK(vc_used("x3y2z0f1_to_x3y0z0f1", 1));
    CHECK_FALSE(vc_used("x3y2z0f1_to_x3y0z0f1", 0));
    CHECK(vc_used("x3y0z0f1_to_x0y0z0f1", 1));
    CHECK_FALSE(vc_used("x3y0z0f1_to_x0y0z0f1", 0));
    CHECK(vc_used("x0y0z0f1_to_x1y0z0f1", 1));
    CHECK(vc_used("x1y0z0f1_to_x1y0z0f2", 0));
    CHECK_FALSE(vc_used("x1y0z0f1_to_x1y0z0f2", 1));
    CHECK(t.hops(src, dst) == 4);
}

TEST_CASE("topology network: many streams into one node never overflow a buffer (credit flow control)",
          "[topology][credits][network]") {
    NetEnv env;
    const Topology t = Topology::torus(3, 3, 1);
    const unsigned n = t.size(), hot = t.node_of(Coord{1, 1, 0, 2});
    const unsigned buffer = 40;   // two 256 B packets (18 flits each) per VC
    constexpr unsigned kPackets = 40;
    std::unique_ptr<NetworkBench> bench;
    bench = std::make_unique<NetworkBench>(env, t, with_vcs(link_params(16e9, ns(150), buffer), 2),
                                           link_params(20e9, ns(20), buffer), [&](unsigned i, PacketSource& s) {
                                               if (i == hot) return;
                                               // Back to back: each packet's head is ready when the previous one
                                               // has left the source.
                                               sc_time at = sc_core::SC_ZERO_TIME;
                                               for (unsigned k = 0; k < kPackets; ++k) {
                                                   PacketSpec p = bench->packet(i, hot, k);
                                                   p.head_delay = at;
                                                   at = s.send(p).credit - sc_core::sc_time_stamp();
                                               }
                                           });
    // The destination drains slowly: each packet leaves its buffer 100 ns
    // after its tail arrived.
    bench->sinks[hot]->free_at = [](const PacketSink::Arrival& a) { return a.tail + ns(100); };
    sc_start();

    const PacketSink& sink = *bench->sinks[hot];
    CHECK(sink.arrivals.size() == (n - 1) * kPackets);
    for (const auto& a : sink.arrivals) CHECK(a.data_ok);
    CHECK(sink.violations == 0);
    CHECK(sink.max_occupancy <= buffer);
    unsigned fullest = 0;
    double stalls = 0;
    for (unsigned r = 0; r < n; ++r) {
        const Router& router = *bench->routers[r];
        INFO(t.name(r));
        CHECK(router.overflows() == 0);
        for (unsigned vc = 0; vc < 2; ++vc) {
            CHECK(router.occupancy_max(vc) <= buffer);
            fullest = std::max(fullest, router.occupancy_max(vc));
        }
    }
    for (const auto& l : bench->links) {
        for (unsigned vc = 0; vc < l->params().vcs; ++vc) CHECK(l->buffer_hwm(vc) <= buffer);
        stalls += env.scalar(std::string(l->name()) + ".credit_stall_time");
    }
    // The load was real: buffers filled to the last packet that fits, and
    // links waited for credits.
    CHECK(fullest == 36);
    CHECK(stalls > 0);
}
