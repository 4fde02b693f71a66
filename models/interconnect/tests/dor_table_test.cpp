// Router::set_dimension_order keeps its routes as small per-dimension tables
// (an entry per board coordinate in x, y and z, one per FPGA of its own
// board) instead of an entry per destination node. Its lookup must give
// exactly Topology::next_hop's port and VC for every router, input port,
// input VC and destination, on tori with rings of 1, 2, 3 and more boards
// (wrap-around links and their dateline VC), the largest ring (64), a
// mezzanine and single QFDBs; coordinates outside the topology have no route.
// Each TEST_CASE is its own elaboration (ctest runs each in its own process).
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "models/interconnect/router.hpp"
#include "models/interconnect/topology.hpp"
#include "packet_bench.hpp"

using namespace vrdmasim;
using namespace vrdmasim_test;

namespace {

struct Counts {
    std::uint64_t checked = 0, ring = 0, wrap = 0, dateline = 0;
};

// Every router of `t` (named "<prefix>r<node>") against next_hop.
Counts check_topology(const NetEnv& env, const Topology& t, const std::string& prefix) {
    Counts n;
    std::vector<std::unique_ptr<Router>> routers;
    std::vector<std::uint32_t> dsts;
    for (unsigned d = 0; d < t.size(); ++d) dsts.push_back(t.coord_word(d));
    // Outside the topology: one more board in each dimension, one more FPGA,
    // a bit above the 20 coordinate bits.
    dsts.push_back(exanet_coord::pack(Coord{t.extent(Topology::X), 0, 0, 0}));
    dsts.push_back(exanet_coord::pack(Coord{0, t.extent(Topology::Y), 0, 0}));
    dsts.push_back(exanet_coord::pack(Coord{0, 0, t.extent(Topology::Z), 0}));
    dsts.push_back(exanet_coord::pack(Coord{0, 0, 0, t.fpgas_per_board()}));
    dsts.push_back(std::uint32_t{1} << 20);
    for (unsigned node = 0; node < t.size(); ++node) {
        routers.push_back(std::make_unique<Router>((prefix + "r" + std::to_string(node)).c_str(), env.ctx));
        Router& r = *routers.back();
        CHECK(r.dimension_order_hop(0, t.coord_word(node), 0).port == -1);   // no tables yet
        r.set_dimension_order(t, node);
        const unsigned ports = t.port_count(node);
        for (unsigned in_port = 0; in_port <= ports; ++in_port)   // one beyond: no dimension
            for (unsigned in_vc = 0; in_vc < 3; ++in_vc)
                for (const std::uint32_t dst : dsts) {
                    const Topology::Hop want = t.next_hop(node, in_port, dst, in_vc);
                    const Router::Choice got = r.dimension_order_hop(in_port, dst, in_vc);
                    if (got.port != want.port || (want.port >= 0 && got.vc != static_cast<int>(want.vc))) {
                        FAIL_CHECK(t.name(node) << " in port " << in_port << " VC " << in_vc << " to coordinate " << dst
                                                << ": tables say port " << got.port << " VC " << got.vc
                                                << ", next_hop port " << want.port << " VC " << want.vc);
                        continue;
                    }
                    ++n.checked;
                    if (want.port > 0 && t.port(node, static_cast<unsigned>(want.port)).dim != Topology::kLocal) {
                        ++n.ring;
                        if (t.port(node, static_cast<unsigned>(want.port)).wrap) ++n.wrap;
                        if (want.vc > 0) ++n.dateline;
                    }
                }
    }
    return n;
}

}   // namespace

TEST_CASE("dimension-order tables: every hop as next_hop on tori with and without wrap links",
          "[router][topology][routing]") {
    NetEnv env;
    struct Shape {
        unsigned x, y, z;
    };
    const Shape shapes[] = {{1, 1, 1}, {2, 1, 1}, {3, 1, 1}, {2, 2, 2}, {3, 2, 1}, {4, 4, 4}, {5, 3, 2}, {1, 6, 3}};
    for (const Shape& s : shapes) {
        const Topology t = Topology::torus(s.x, s.y, s.z);
        const std::string name = std::to_string(s.x) + "x" + std::to_string(s.y) + "x" + std::to_string(s.z);
        INFO("torus " << name);
        const Counts n = check_topology(env, t, "t" + name + "_");
        CHECK(n.checked > 0);
        if (t.multi_board()) CHECK(n.ring > 0);
        // Rings of 3 or more boards have wrap links, whose hops move to the
        // next VC class (and keep the class the packet came with).
        if (s.x >= 3 || s.y >= 3 || s.z >= 3) {
            CHECK(n.wrap > 0);
            CHECK(n.dateline > 0);
        }
    }
}

TEST_CASE("dimension-order tables: the largest ring, a mezzanine and single QFDBs", "[router][topology][routing]") {
    NetEnv env;
    {
        INFO("torus 64x2x1");
        const Counts n = check_topology(env, Topology::torus(64, 2, 1), "big_");
        CHECK(n.wrap > 0);
    }
    {
        INFO("mezzanine");
        const Counts n = check_topology(env, Topology::mezzanine(), "mezz_");
        CHECK(n.wrap > 0);
    }
    for (unsigned nodes = 2; nodes <= 4; ++nodes) {
        INFO("QFDB of " << nodes);
        const Counts n = check_topology(env, Topology::qfdb(nodes), "qfdb" + std::to_string(nodes) + "_");
        CHECK(n.checked > 0);
        CHECK(n.ring == 0);
    }
}
