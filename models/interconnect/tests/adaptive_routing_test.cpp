// Minimal adaptive routing with escape VCs (Topology::adaptive_hops), proven
// on whole tori rather than asserted: for every source and destination, every
// route the adaptive routing function allows is explored (every choice of
// adaptive port and VC or escape at every router) and
//   - every route is minimal: as many router-to-router hops as dimension order;
//   - from every state a packet can reach (router, input port, input VC) the
//     escape hops alone lead to the destination (connectedness);
//   - the extended channel dependency graph of the escape channels (Duato:
//     escape channel c1 -> escape channel c2 when a packet holding c1 may
//     request c2 next, directly or after adaptive channels only) is acyclic;
//   - a route that never takes an adaptive hop is dimension order, VC for VC.
// Pure arithmetic: no SystemC.
#include <catch2/catch.hpp>

#include <map>
#include <set>
#include <tuple>
#include <vector>

#include "models/interconnect/topology.hpp"

using namespace vrdmasim;

namespace {

using Channel = std::tuple<unsigned, int, unsigned>;   // (router, output port, VC)

struct Explorer {
    const Topology& t;
    unsigned vcs;
    std::set<std::pair<Channel, Channel>> edges;   // escape -> escape (extended)
    std::set<Channel> escape_channels;
    unsigned routes = 0, non_minimal = 0, not_connected = 0, dor_mismatch = 0, max_adaptive = 0;

    // Follow the escape hops alone from a state: must reach dst.
    bool escape_reaches(unsigned node, unsigned in_port, unsigned in_vc, std::uint32_t dst, std::uint32_t src,
                        unsigned dst_node) const {
        for (unsigned step = 0; step <= t.size(); ++step) {
            if (node == dst_node) return true;
            const Topology::Options o = t.adaptive_hops(node, in_port, dst, src, in_vc);
            if (o.escape.port < 0) return false;
            const unsigned next = t.port(node, static_cast<unsigned>(o.escape.port)).to;
            in_port = static_cast<unsigned>(t.port_to(next, node));
            in_vc = o.escape.vc;
            node = next;
        }
        return false;
    }

    // Depth-first over every choice. `held`: the last escape channel the
    // packet held (none: router -1), `hops` so far, `all_escape`: no adaptive
    // hop yet, `vcs_seen` the VCs of the route so far.
    void explore(unsigned src_node, unsigned dst_node, unsigned node, unsigned in_port, unsigned in_vc,
                 const Channel* held, unsigned hops, unsigned adaptive, std::vector<unsigned>& vcs_seen) {
        const std::uint32_t dst = t.coord_word(dst_node), src = t.coord_word(src_node);
        if (!escape_reaches(node, in_port, in_vc, dst, src, dst_node)) ++not_connected;
        if (node == dst_node) {
            ++routes;
            if (hops != t.hops(src_node, dst_node)) ++non_minimal;
            max_adaptive = std::max(max_adaptive, adaptive);
            if (adaptive == 0) {
                const auto dor = t.route(src_node, dst_node);
                for (std::size_t i = 0; i + 1 < dor.size(); ++i)
                    if (i >= vcs_seen.size() || dor[i].vc != vcs_seen[i]) ++dor_mismatch;
            }
            return;
        }
        const Topology::Options o = t.adaptive_hops(node, in_port, dst, src, in_vc);
        REQUIRE(o.escape.port > 0);
        std::vector<std::pair<int, unsigned>> choices{{o.escape.port, o.escape.vc}};
        for (unsigned i = 0; i < o.n_adaptive; ++i)
            for (unsigned v = o.adaptive[i].vc; v < vcs; ++v) choices.emplace_back(o.adaptive[i].port, v);
        for (std::size_t k = 0; k < choices.size(); ++k) {
            const auto [port, vc] = choices[k];
            const bool escape = k == 0;
            const Channel c{node, port, vc};
            const Channel* next_held = held;
            if (escape) {
                escape_channels.insert(c);
                if (held) edges.insert({*held, c});
                next_held = &*escape_channels.find(c);
            }
            const unsigned next = t.port(node, static_cast<unsigned>(port)).to;
            vcs_seen.push_back(vc);
            explore(src_node, dst_node, next, static_cast<unsigned>(t.port_to(next, node)), vc, next_held, hops + 1,
                    adaptive + (escape ? 0 : 1), vcs_seen);
            vcs_seen.pop_back();
        }
    }

    void run() {
        for (unsigned s = 0; s < t.size(); ++s)
            for (unsigned d = 0; d < t.size(); ++d) {
                if (s == d) continue;
                std::vector<unsigned> v;
                explore(s, d, s, 0, 0, nullptr, 0, 0, v);
            }
    }

    bool acyclic() const {
        std::map<Channel, std::vector<Channel>> out;
        std::map<Channel, unsigned> indeg;
        for (const Channel& c : escape_channels) indeg[c] = 0;
        for (const auto& e : edges) {
            out[e.first].push_back(e.second);
            ++indeg[e.second];
        }
        std::vector<Channel> ready;
        for (const auto& kv : indeg)
            if (kv.second == 0) ready.push_back(kv.first);
        std::size_t done = 0;
        while (!ready.empty()) {
            const Channel c = ready.back();
            ready.pop_back();
            ++done;
            for (const Channel& n : out[c])
                if (--indeg[n] == 0) ready.push_back(n);
        }
        return done == indeg.size();
    }
};

void prove(const Topology& t, unsigned vcs) {
    Explorer e{t, vcs, {}, {}};
    e.run();
    INFO("torus " << t.extent(0) << "x" << t.extent(1) << "x" << t.extent(2) << ", " << vcs << " VCs");
    CHECK(e.routes > t.size() * (t.size() - 1));   // more routes than pairs: adaptivity exists
    CHECK(e.max_adaptive >= 1);
    CHECK(e.non_minimal == 0);
    CHECK(e.not_connected == 0);
    CHECK(e.dor_mismatch == 0);
    CHECK(!e.edges.empty());
    CHECK(e.acyclic());
    // Escape channels use VCs 0 and 1 only.
    for (const Channel& c : e.escape_channels) CHECK(std::get<2>(c) < Topology::kEscapeVcs);
}

}   // namespace

TEST_CASE("adaptive routing: deadlock-free, minimal and connected on a 3x3x3 torus", "[topology][adaptive]") {
    prove(Topology::torus(3, 3, 3), 3);
}

TEST_CASE("adaptive routing: deadlock-free, minimal and connected on a 4x2x1 torus", "[topology][adaptive]") {
    prove(Topology::torus(4, 2, 1), 3);
}

TEST_CASE("adaptive routing: deadlock-free with two adaptive VCs on a 5x3x1 torus", "[topology][adaptive]") {
    prove(Topology::torus(5, 3, 1), 4);
}

TEST_CASE("adaptive routing: the explorer finds a cycle in a dependency graph that has one", "[topology][adaptive]") {
    // The check itself can fail: escape channels numbered without the
    // dateline (every ring hop on VC 0) close a cycle around a ring of 3.
    Topology t = Topology::torus(3, 1, 1);
    Explorer e{t, 3, {}, {}};
    const Channel a{1, 4, 0}, b{5, 4, 0}, c{9, 4, 0};   // F1s of x0, x1, x2, port x+, VC 0
    e.escape_channels = {a, b, c};
    e.edges = {{a, b}, {b, c}, {c, a}};
    CHECK_FALSE(e.acyclic());
    e.edges.erase({c, a});
    CHECK(e.acyclic());
}

TEST_CASE("adaptive routing: candidates at an F1 are the productive dimensions in DOR direction",
          "[topology][adaptive]") {
    const Topology t = Topology::torus(4, 3, 1);
    // Board x0y0 F1 (node 1) to board x2y2 F1: y differs by 2 of 3 (shorter
    // way -), x by 2 of 4 (a tie: +). Ports: 4 x+, 5 x-, 6 y+, 7 y-.
    const unsigned src = 1;
    const unsigned dst = t.node_of(Coord{2, 2, 0, 1});
    const Topology::Options o = t.adaptive_hops(src, 0, t.coord_word(dst), t.coord_word(src), 0);
    REQUIRE(o.n_adaptive == 2);
    CHECK(o.adaptive[0].port == t.ring_port(Topology::Y, -1));
    CHECK(o.adaptive[1].port == t.ring_port(Topology::X, +1));
    CHECK(o.adaptive[0].vc == Topology::kEscapeVcs);
    // Escape: dimension order (y first), going - from y0 crosses the wrap: VC 1.
    CHECK(o.escape.port == t.ring_port(Topology::Y, -1));
    CHECK(o.escape.vc == 1);
    CHECK(o.escape.port == t.next_hop(src, 0, t.coord_word(dst), 0).port);
    CHECK(o.escape.vc == t.next_hop(src, 0, t.coord_word(dst), 0).vc);
    // A non-F1 router: only the escape hop (to its F1).
    const Topology::Options f0 = t.adaptive_hops(0, 0, t.coord_word(dst), t.coord_word(0), 0);
    CHECK(f0.n_adaptive == 0);
    CHECK(f0.escape.port == t.next_hop(0, 0, t.coord_word(dst), 0).port);
    // A packet that crossed x's wrap adaptively (from x3 to x0) and drops
    // into the escape network at x0 going + takes VC 1.
    CHECK(t.escape_vc(Topology::X, +1, 0, t.coord_word(t.node_of(Coord{3, 0, 0, 1}))) == 1);
    CHECK(t.escape_vc(Topology::X, +1, 1, t.coord_word(t.node_of(Coord{1, 0, 0, 1}))) == 0);
    CHECK(t.escape_vc(Topology::X, +1, 3, t.coord_word(t.node_of(Coord{1, 0, 0, 1}))) == 1);   // crosses now
}
