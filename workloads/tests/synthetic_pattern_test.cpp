// The synthetic traffic patterns (models/interconnect/synthetic_pattern.hpp): the
// nodes' digits as the topology numbers them, each pattern's destinations,
// the refusals, the traffic matrix, the engine's packets of a message; and
// the channel-load bound and zero-load sums (src/sim/channel_load.hpp)
// against figures worked out by hand.
#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>
#include <set>

#include "src/core/params.hpp"
#include "src/sim/channel_load.hpp"
#include "src/sim/system.hpp"
#include "models/interconnect/synthetic_pattern.hpp"

using namespace vrdmasim;
using namespace vrdmasim::synthetic;

namespace {

const std::vector<std::pair<Shape, Topology>> kShapes{
    {Shape{4, 3, 2, 2}, Topology::torus(3, 2, 2)}, {Shape{4, 3, 3, 1}, Topology::torus(3, 3, 1)},
    {Shape{4, 4, 4, 4}, Topology::torus(4, 4, 4)}, {Shape{4, 4, 1, 1}, Topology::mezzanine()},
    {Shape{3, 1, 1, 1}, Topology::qfdb(3)},        {Shape{4, 5, 1, 2}, Topology::torus(5, 1, 2)}};

unsigned node(const Shape& s, unsigned f, unsigned x, unsigned y, unsigned z) { return node_of(s, Digits{f, x, y, z}); }

std::unique_ptr<Config> config(ParamRegistry& reg, const std::vector<std::pair<std::string, std::string>>& kv) {
    declare_all_params(reg);
    auto c = std::make_unique<Config>(reg);
    for (const auto& [k, v] : kv) c->set(k, v, "test");
    return c;
}

}   // namespace

TEST_CASE("a node's digits are the topology's coordinates") {
    for (const auto& [s, t] : kShapes) {
        REQUIRE(s.nodes() == t.size());
        for (unsigned n = 0; n < t.size(); ++n) {
            const Digits d = digits(s, n);
            const Coord c = t.coord(n);
            INFO("node " << n);
            CHECK(d.f == c.f);
            CHECK(d.x == c.x);
            CHECK(d.y == c.y);
            CHECK(d.z == c.z);
            CHECK(node_of(s, d) == n);
        }
    }
}

TEST_CASE("each deterministic pattern maps the nodes as defined") {
    const Shape t322{4, 3, 2, 2}, t331{4, 3, 3, 1}, t512{4, 5, 1, 2};
    // transpose: (f, x, y, z) -> (f, y, x, z); the diagonal to itself.
    CHECK(destination(Pattern::Transpose, t331, node(t331, 2, 0, 1, 0)) == node(t331, 2, 1, 0, 0));
    CHECK(destination(Pattern::Transpose, t331, node(t331, 3, 2, 1, 0)) == node(t331, 3, 1, 2, 0));
    CHECK(destination(Pattern::Transpose, t331, node(t331, 1, 2, 2, 0)) == node(t331, 1, 2, 2, 0));
    // bit-complement: every digit complemented (x0y0z0f0 -> x2y1z1f3 = 47).
    CHECK(destination(Pattern::BitComplement, t322, 0) == 47);
    CHECK(destination(Pattern::BitComplement, t322, node(t322, 1, 1, 0, 1)) == node(t322, 2, 1, 1, 0));
    // tornado: + ceil(k/2) - 1 on every ring (k = 5: 2; k = 3: 1; k = 2: 0).
    CHECK(destination(Pattern::Tornado, t512, node(t512, 0, 4, 0, 1)) == node(t512, 0, 1, 0, 1));
    CHECK(destination(Pattern::Tornado, t322, node(t322, 3, 2, 1, 0)) == node(t322, 3, 0, 1, 0));
    // neighbour: + 1 on every ring of 2 or more.
    CHECK(destination(Pattern::Neighbour, t322, node(t322, 2, 2, 1, 0)) == node(t322, 2, 0, 0, 1));
    CHECK(destination(Pattern::Neighbour, t512, node(t512, 1, 0, 0, 1)) == node(t512, 1, 1, 0, 0));
    // Each is a permutation on every shape it is defined on.
    for (const auto& [s, t] : kShapes)
        for (Pattern p : {Pattern::Transpose, Pattern::BitComplement, Pattern::Tornado, Pattern::Neighbour}) {
            if (!refusal(p, s).empty()) continue;
            std::set<unsigned> image;
            for (unsigned n = 0; n < s.nodes(); ++n) image.insert(destination(p, s, n));
            INFO(name(p) << " on " << s.nodes() << " nodes");
            CHECK(image.size() == s.nodes());
        }
}

TEST_CASE("a pattern a topology cannot take is refused, saying why") {
    CHECK_THAT(refusal(Pattern::Transpose, Shape{4, 3, 2, 2}), Catch::Contains("as many boards along x as along y"));
    CHECK(refusal(Pattern::Transpose, Shape{4, 3, 3, 1}).empty());
    CHECK_THAT(refusal(Pattern::Tornado, Shape{4, 2, 2, 2}), Catch::Contains("every node would send to itself"));
    CHECK_THAT(refusal(Pattern::Neighbour, Shape{4, 1, 1, 1}), Catch::Contains("more than one board"));
    CHECK(refusal(Pattern::BitComplement, Shape{2, 1, 1, 1}).empty());
    CHECK(refusal(Pattern::Uniform, Shape{2, 1, 1, 1}).empty());
    CHECK_THROWS_AS(parse_pattern("random"), std::invalid_argument);
    CHECK(parse_pattern("bit-complement") == Pattern::BitComplement);
}

TEST_CASE("uniform and hotspot draw their destinations as their rows say") {
    const Shape s{4, 3, 2, 2};
    const unsigned n = s.nodes();
    const Hotspot hot{5, 0.25};
    for (unsigned src : {0u, 5u, 47u}) {
        std::vector<unsigned> hits(n, 0);
        const unsigned draws = 47 * 40;
        for (unsigned k = 0; k < draws; ++k) hits[draw(Pattern::Uniform, s, src, hot, 0.5, (k + 0.5) / draws)]++;
        CHECK(hits[src] == 0);   // never itself
        for (unsigned d = 0; d < n; ++d)
            if (d != src) CHECK(hits[d] == 40);   // every other node alike
        // hotspot: below the fraction, the hot node (the hot node itself draws uniformly)
        CHECK(draw(Pattern::Hotspot, s, src, hot, 0.2, 0.0) == (src == hot.node ? 0u : hot.node));
        CHECK(draw(Pattern::Hotspot, s, src, hot, 0.3, 0.0) == (src == 0 ? 1u : 0u));
        for (Pattern p : {Pattern::Uniform, Pattern::Hotspot}) {
            const auto r = row(p, s, src, hot);
            double sum = 0;
            for (const auto& [d, w] : r) {
                CHECK(d != src);
                sum += w;
            }
            CHECK(sum == Approx(1.0));
            if (p == Pattern::Hotspot && src != hot.node)
                for (const auto& [d, w] : r)
                    if (d == hot.node) CHECK(w == Approx(0.25 + 0.75 / 47));
        }
    }
    CHECK(sources(Pattern::Uniform, s, 3, hot).size() == 47);
    CHECK(sources(Pattern::BitComplement, s, 47, hot) == std::vector<unsigned>{0});
}

TEST_CASE("a message's packets are the engine's cut") {
    CHECK(message_packets(256, 256, 4096).flits == 18);
    CHECK(message_packets(256, 256, 4096).packets == 1);
    CHECK(message_packets(1024, 256, 4096).flits == 72);
    CHECK(message_packets(300, 256, 4096).flits == 18 + 5);   // 256 B and 44 B
    // 5000 B: a block of 4096 (16 packets) and one of 904 (3 of 256, 1 of 136)
    CHECK(message_packets(5000, 256, 4096).packets == 20);
    CHECK(message_packets(5000, 256, 4096).flits == 19 * 18 + 11);
    CHECK(message_packets(64, 256, 4096).flits == 6);
    CHECK(message_packets(600, 1024, 512).flits == (2 + 32) + (2 + 6));   // blocks cut the packets
}

TEST_CASE("the channel-load bound and the zero-load sums, by hand") {
    ParamRegistry reg;
    auto c = config(reg, {{"topology.kind", "torus"},
                          {"topology.x", "3"},
                          {"topology.y", "2"},
                          {"topology.z", "2"},
                          {"workload.kind", "synthetic"}});
    const ChannelModel m(*c);
    REQUIRE(m.channels().size() == 48 * 2 + 12 * (4 * 3 + 4));   // NI links; a board: 3 links an FPGA, 4 off F1
    const Shape s = m.shape();
    CHECK(s.nodes() == 48);
    // Uniform: the z link of a board carries the data of its 4 nodes to
    // the 24 nodes of the other z plane (24/47 of their messages) and the
    // responses of those 24 nodes' messages to the board's 4, at 10 Gb/s,
    // half the NI's 20: theta = 18 / (2 x (4 x 24/47 x 18 + 4 x 24/47 x 3)).
    const auto uni = synthetic_bounds(m, *c, {Pattern::Uniform}).at(0);
    REQUIRE(uni.refusal.empty());
    const double z = 4.0 * 24 / 47 * 18 + 4.0 * 24 / 47 * 3;
    CHECK(uni.bound.loads.at(0).flits == Approx(z));
    CHECK(uni.bound.theta == Approx(18.0 / (2 * z)));
    // Tornado (x + 1): each x link carries its board's 4 nodes' data, 72
    // flits a message; their responses go back the other way.
    const auto tor = synthetic_bounds(m, *c, {Pattern::Tornado}).at(0);
    CHECK(tor.bound.loads.at(0).flits == Approx(72));
    CHECK(tor.bound.theta == Approx(0.125));
    CHECK_THAT(synthetic_bounds(m, *c, {Pattern::Transpose}).at(0).refusal, Catch::Contains("x as along y"));
    // Zero load, x0y0z0f0 to x2y1z1f3 (node 47): its NI link (6.4 ns a flit +
    // 20 ns), f0 -> f1 (8 + 227), the z, y and x board links (12.8 + 357
    // each), f1 -> f3 (8 + 227), the NI link out (6.4 + 20), 6 routers of
    // 100 ns, and 17 more flits on the slowest link (12.8 ns).
    const double ns = 26.4 + 235 + 3 * 369.8 + 235 + 26.4 + 600 + 17 * 12.8;
    CHECK(m.zero_load(0, 47, 18) == sc_core::sc_time(ns, sc_core::SC_NS));
    CHECK(m.routers(0, 47) == 6);
    // To itself: its NI link in and out through its own router.
    CHECK(m.zero_load(5, 5, 18) == sc_core::sc_time(26.4 + 100 + 26.4 + 17 * 6.4, sc_core::SC_NS));
}
