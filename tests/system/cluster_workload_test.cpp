// Cluster workloads (alltoall, halo, incast, permutation) on four nodes of a
// QFDB: every node sends and receives, every byte is checked; and the pure
// functions behind them (grid factorisation, halo neighbours, derangement).
#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <set>

#include "src/sim/system.hpp"
#include "system_sim.hpp"
#include "workloads/cluster.hpp"

using namespace vrdmasim;
using namespace sc_core;

namespace {

struct Sim : SystemSim {
    // One QFDB of four nodes unless a test says otherwise.
    explicit Sim(const Settings& s) : SystemSim(Defaults{{{"topology.nodes", "4"}}}, s) {}
    ClusterWorkload& cluster() { return dynamic_cast<ClusterWorkload&>(sys->workload()); }
    // Every transfer delivered and verified, nothing lost or wrong.
    void check_all_verified(std::uint64_t transfers, std::uint64_t bytes) {
        SystemSim::check_all_verified(transfers, bytes);
        // Every sample is in the histogram of its hop count; on a QFDB every
        // pair is one hop: all of them in latency_hops1.
        std::uint64_t sampled = 0;
        for (unsigned h = 0; h < 64; ++h)
            if (const Histogram* hh = stats.find_histogram("workload.latency_hops" + std::to_string(h)))
                sampled += hh->count();
        CHECK(sampled == transfers);
        if (cfg->string("topology.kind") == "qfdb") {
            const Histogram* h1 = stats.find_histogram("workload.latency_hops1");
            REQUIRE(h1 != nullptr);
            CHECK(h1->count() == transfers);
            CHECK(log().latency_by_hops().size() == 1);
        }
        // Each node received: one notification per write addressed to it.
        std::uint64_t notified = 0;
        for (std::size_t i = 0; i < sys->size(); ++i)
            if (const Counter* c = stats.find_counter(sys->node(i).group + ".dma.notifications"))
                notified += c->value();
        CHECK(notified == transfers);
    }
    // The inter-router link with the most busy time.
    const Link& busiest() {
        const Link* best = nullptr;
        for (const auto& l : sys->links())
            if (!best || l->busy_us() > best->busy_us()) best = l.get();
        REQUIRE(best != nullptr);
        return *best;
    }
};

}   // namespace

// ------------------------------------------------------------ pure functions

TEST_CASE("cluster: grid factorisation gives near-equal factors - largest first", "[cluster][grid]") {
    using cluster::Grid;
    CHECK(cluster::factor_grid(2) == Grid{2, 1, 1});
    CHECK(cluster::factor_grid(4) == Grid{2, 2, 1});
    CHECK(cluster::factor_grid(8) == Grid{2, 2, 2});
    CHECK(cluster::factor_grid(12) == Grid{3, 2, 2});
    CHECK(cluster::factor_grid(27) == Grid{3, 3, 3});
    CHECK(cluster::factor_grid(7) == Grid{7, 1, 1});
    CHECK(cluster::factor_grid(1296) == Grid{12, 12, 9});
    for (unsigned n = 1; n <= 2000; ++n) {
        const Grid g = cluster::factor_grid(n);
        INFO(n);
        CHECK(g[0] * g[1] * g[2] == n);
        CHECK(g[0] >= g[1]);
        CHECK(g[1] >= g[2]);
    }
}

TEST_CASE("cluster: workload.grid is auto or AxBxC matching the node count", "[cluster][grid]") {
    using cluster::Grid;
    Grid g{};
    CHECK(cluster::parse_grid("auto", 1296, g).empty());
    CHECK(g == Grid{12, 12, 9});
    CHECK(cluster::parse_grid("9x12x12", 1296, g).empty());
    CHECK(g == Grid{9, 12, 12});
    CHECK(cluster::parse_grid("4X1x1", 4, g).empty());
    CHECK(g == Grid{4, 1, 1});
    CHECK(cluster::parse_grid("3x3x3", 4, g).find("27") != std::string::npos);
    CHECK(!cluster::parse_grid("2x2", 4, g).empty());
    CHECK(!cluster::parse_grid("2x2x1x1", 4, g).empty());
    CHECK(!cluster::parse_grid("0x2x2", 4, g).empty());
    CHECK(!cluster::parse_grid("axbxc", 4, g).empty());
    CHECK(!cluster::parse_grid("", 4, g).empty());
}

TEST_CASE("cluster: halo neighbours on periodic grids - duplicates collapsed", "[cluster][grid]") {
    using V = std::vector<unsigned>;
    // 2x2x1: +x and -x are the same node, +y and -y too, z is the node itself.
    CHECK(cluster::halo_neighbours(0, {2, 2, 1}) == V{1, 2});
    CHECK(cluster::halo_neighbours(1, {2, 2, 1}) == V{0, 3});
    CHECK(cluster::halo_neighbours(3, {2, 2, 1}) == V{1, 2});
    CHECK(cluster::halo_neighbours(0, {4, 1, 1}) == V{1, 3});
    CHECK(cluster::halo_neighbours(0, {2, 1, 1}) == V{1});
    // 3x3x3: the centre (1,1,1) = 13 and the corner 0, which wraps around.
    CHECK(cluster::halo_neighbours(13, {3, 3, 3}) == V{4, 10, 12, 14, 16, 22});
    CHECK(cluster::halo_neighbours(0, {3, 3, 3}) == V{1, 2, 3, 6, 9, 18});
    // 1296 = 12x12x9: six distinct neighbours everywhere, and the relation is symmetric.
    const cluster::Grid g = cluster::factor_grid(1296);
    for (unsigned r = 0; r < 1296; ++r) {
        const V n = cluster::halo_neighbours(r, g);
        REQUIRE(n.size() == 6);
        for (unsigned m : n) {
            const V back = cluster::halo_neighbours(m, g);
            CHECK(std::find(back.begin(), back.end(), r) != back.end());
        }
    }
}

TEST_CASE("cluster: the permutation has no fixed point and is reproducible per seed", "[cluster][permutation]") {
    for (unsigned n : {2u, 3u, 4u, 5u, 16u, 1296u}) {
        for (std::uint64_t seed : {1ull, 2ull, 42ull, 123456789ull}) {
            const auto p = cluster::derangement(n, seed);
            INFO("n = " << n << ", seed = " << seed);
            REQUIRE(p.size() == n);
            std::set<unsigned> images(p.begin(), p.end());
            CHECK(images.size() == n);
            CHECK(*images.rbegin() == n - 1);
            for (unsigned i = 0; i < n; ++i) CHECK(p[i] != i);
            CHECK(cluster::derangement(n, seed) == p);
        }
    }
    // Different seeds give different permutations (of enough elements).
    std::set<std::vector<unsigned>> seen;
    for (std::uint64_t seed = 1; seed <= 20; ++seed) seen.insert(cluster::derangement(16, seed));
    CHECK(seen.size() == 20);
    CHECK(cluster::derangement(2, 7) == std::vector<unsigned>{1, 0});
}

// ---------------------------------------------------------- whole systems

TEST_CASE("alltoall: N times N-1 transfers per iteration - every byte verified", "[cluster][alltoall]") {
    Sim s({{"workload.kind", "alltoall"},
           {"workload.message-size", "16KiB"},
           {"workload.iterations", "3"},
           {"workload.window", "2"}});
    CHECK(s.cluster().expected_transfers() == 4 * 3 * 3);
    // One receive slot per source: (N-1) x message-size.
    CHECK(s.cluster().receive_bytes(0) == 3 * 16 * 1024);
    s.run();
    s.check_all_verified(4 * 3 * 3, 4 * 3 * 3 * 16 * 1024);
    // Every node sends to every other: all twelve links carried the same.
    CHECK(s.sys->links().size() == 12);
    for (const auto& l : s.sys->links()) CHECK(l->busy_us() == Approx(s.busiest().busy_us()).epsilon(0.05));
}

// The read form: every node pulls what is addressed to it with RDMA reads;
// the same plan, the same transfers and keys, every byte verified at the
// reader; no notification (the reader's own record says the data is in),
// and the data crosses the same links as the write form's.
TEST_CASE("alltoall read: every node pulls its messages with RDMA reads - every byte verified", "[cluster][read]") {
    Sim s({{"workload.kind", "alltoall"},
           {"workload.message-size", "16KiB"},
           {"workload.iterations", "3"},
           {"workload.window", "2"},
           {"workload.operation", "read"},
           {"workload.populate", "false"},
           {"dma.fault-tolerant", "true"}});
    s.run();
    SystemSim& base = s;
    base.check_all_verified(4 * 3 * 3, 4 * 3 * 3 * 16 * 1024);
    CHECK(s.stats.sum_counters("dma.reads_posted") == 4 * 3 * 3);
    CHECK(s.stats.sum_counters("dma.notifications") == 0);
    const Histogram* h1 = s.stats.find_histogram("workload.latency_hops1");
    REQUIRE(h1 != nullptr);
    CHECK(h1->count() == 4 * 3 * 3);
    CHECK(s.sys->links().size() == 12);
    for (const auto& l : s.sys->links()) CHECK(l->busy_us() > 0);
}

TEST_CASE("cluster read: arrival detection and the two-sided variant have nothing to do and are refused",
          "[cluster][read]") {
    CHECK_THROWS_AS(Sim({{"workload.kind", "halo"}, {"workload.operation", "read"}, {"workload.arrivals", "counter"}}),
                    ConfigError);
    CHECK_THROWS_AS(Sim({{"workload.kind", "halo"}, {"workload.operation", "read"}, {"workload.two-sided", "true"}}),
                    ConfigError);
}

TEST_CASE("alltoall: cold buffers fault in a fault-tolerant engine and still deliver every byte",
          "[cluster][alltoall][faults]") {
    Sim s({{"workload.kind", "alltoall"},
           {"workload.message-size", "32KiB"},
           {"workload.iterations", "2"},
           {"workload.populate", "false"},
           {"dma.fault-tolerant", "true"},
           {"rdma.completion", "interrupt"}});
    s.run();
    s.check_all_verified(24, 24 * 32 * 1024);
    CHECK(s.stats.sum_counters("dma.nacks_sent") + s.stats.sum_counters("dma.parks") > 0);
}

TEST_CASE("alltoall: the pipeline strategy's chunked messages are matched by their last notification",
          "[cluster][alltoall][strategy]") {
    Sim s({{"workload.kind", "alltoall"},
           {"workload.message-size", "96KiB"},
           {"workload.iterations", "2"},
           {"rdma.strategy", "pipeline"},
           {"rdma.pipeline-chunk", "32KiB"}});
    s.run();
    s.check_all_verified(24, 24 * 96 * 1024);
    CHECK(s.stats.sum_counters("pages_pinned") > 0);
}

TEST_CASE("halo: 2x2x1 grid - two distinct neighbours each - every byte verified", "[cluster][halo]") {
    Sim s({{"workload.kind", "halo"}, {"workload.message-size", "8KiB"}, {"workload.iterations", "5"}});
    using V = std::vector<unsigned>;
    const auto& out = s.cluster().destinations();
    CHECK(out == std::vector<V>{{1, 2}, {0, 3}, {0, 3}, {1, 2}});
    CHECK(s.cluster().receive_bytes(0) == 2 * 8 * 1024);
    s.run();
    s.check_all_verified(4 * 2 * 5, 4 * 2 * 5 * 8 * 1024);
    // Nodes 0 and 3 never exchange, nor 1 and 2: their links carry nothing.
    for (const auto& l : s.sys->links()) {
        const std::string name = l->name();
        const bool idle = name == "node0_to_node3" || name == "node3_to_node0" || name == "node1_to_node2" ||
                          name == "node2_to_node1";
        INFO(name);
        if (idle) CHECK(l->busy_us() == 0);
        else CHECK(l->busy_us() > 0);
    }
}

TEST_CASE("halo: a 4x1x1 ring with the pin strategy", "[cluster][halo][strategy]") {
    Sim s({{"workload.kind", "halo"},
           {"workload.grid", "4x1x1"},
           {"workload.message-size", "4KiB"},
           {"workload.iterations", "4"},
           {"rdma.strategy", "pin"}});
    using V = std::vector<unsigned>;
    CHECK(s.cluster().destinations() == std::vector<V>{{1, 3}, {0, 2}, {1, 3}, {0, 2}});
    s.run();
    s.check_all_verified(4 * 2 * 4, 4 * 2 * 4 * 4096);
}

TEST_CASE("halo: a grid that does not match the node count is a config error", "[cluster][halo]") {
    CHECK_THROWS_AS(Sim({{"workload.kind", "halo"}, {"workload.grid", "3x3x3"}}), ConfigError);
    CHECK_THROWS_WITH(Sim({{"workload.kind", "halo"}, {"workload.grid", "2x2"}}),
                      Catch::Contains("workload.grid") && Catch::Contains("AxBxC"));
}

TEST_CASE("incast: three senders into one node - the links into it the busiest", "[cluster][incast]") {
    Sim s({{"workload.kind", "incast"},
           {"workload.dst-node", "2"},
           {"workload.total-bytes", "512KiB"},
           {"workload.message-size", "64KiB"}});
    using V = std::vector<unsigned>;
    CHECK(s.cluster().destinations() == std::vector<V>{{2}, {2}, {}, {2}});
    s.run();
    s.check_all_verified(3 * 8, 3 * 512 * 1024);
    const std::string busiest = s.busiest().name();
    CHECK(busiest.size() > 9);
    CHECK(busiest.substr(busiest.size() - 9) == "_to_node2");
    // The receiver's NI (eject) is the bottleneck: 20 Gb/s shared by three
    // 16 Gb/s links, so each link into node 2 is busy about a third of the time.
    const double span_us = (s.log().last_done - s.log().first_post).to_seconds() * 1e6;
    const double util = s.busiest().busy_us() / span_us;
    CHECK(util > 0.2);
    CHECK(util < 0.7);
    // Links not into node 2 carry only acknowledgements.
    for (const auto& l : s.sys->links()) {
        const std::string name = l->name();
        if (name.substr(name.size() - 9) != "_to_node2") CHECK(l->busy_us() < 0.05 * s.busiest().busy_us());
    }
}

TEST_CASE("incast: workload.senders limits the senders", "[cluster][incast]") {
    Sim s({{"workload.kind", "incast"},
           {"workload.dst-node", "0"},
           {"workload.senders", "2"},
           {"workload.total-bytes", "128KiB"},
           {"workload.message-size", "32KiB"}});
    using V = std::vector<unsigned>;
    CHECK(s.cluster().destinations() == std::vector<V>{{}, {0}, {0}, {}});
    s.run();
    s.check_all_verified(2 * 4, 2 * 128 * 1024);
}

TEST_CASE("incast: more senders than nodes - or a receiver that does not exist - is a config error",
          "[cluster][incast]") {
    CHECK_THROWS_WITH(Sim({{"workload.kind", "incast"}, {"workload.senders", "4"}}),
                      Catch::Contains("workload.senders") && Catch::Contains("at most 3"));
    CHECK_THROWS_WITH(Sim({{"workload.kind", "incast"}, {"workload.dst-node", "4"}}),
                      Catch::Contains("workload.dst-node") && Catch::Contains("4 nodes"));
}

TEST_CASE("permutation: each node sends to its image - which is never itself", "[cluster][permutation]") {
    Sim s({{"workload.kind", "permutation"},
           {"sim.seed", "5"},
           {"workload.total-bytes", "256KiB"},
           {"workload.message-size", "64KiB"}});
    const auto p = cluster::derangement(4, 5);
    const auto& out = s.cluster().destinations();
    for (unsigned i = 0; i < 4; ++i) {
        REQUIRE(out[i].size() == 1);
        CHECK(out[i][0] == p[i]);
        CHECK(out[i][0] != i);
    }
    s.run();
    s.check_all_verified(4 * 4, 4 * 256 * 1024);
}

TEST_CASE("alltoall on a 3x2x1 torus: no deadlock, no buffer overflow, the dateline VC in use",
          "[cluster][alltoall][topology]") {
    // 24 MPSoCs; the x ring of three boards has a wrap-around link, so some
    // routes cross the dateline and change VC. Every pair exchanges at once.
    Sim s({{"topology.nodes", "2"},   // the default: only a QFDB takes a node count
           {"topology.kind", "torus"},
           {"topology.x", "3"},
           {"topology.y", "2"},
           {"workload.kind", "alltoall"},
           {"workload.message-size", "8KiB"},
           {"workload.iterations", "2"},
           {"workload.window", "4"}});
    s.run();
    const std::uint64_t n = 24;
    s.check_all_verified(n * (n - 1) * 2, n * (n - 1) * 2 * 8192);
    CHECK(sc_time_stamp() < s.sys->time_limit());
    // Credit flow control: no router input buffer ever held more than it has.
    CHECK(s.stats.sum_counters("buffer_overflows") == 0);
    CHECK(s.stats.sum_counters("vc_errors") == 0);
    // Some packet went through VC 1 (crossed a wrap-around link).
    double vc1 = 0;
    for (const auto& link : s.sys->links()) vc1 = std::max<double>(vc1, link->buffer_hwm(1));
    CHECK(vc1 > 0);
    // Hops from 1 (same board or neighbours) to the torus's diameter.
    CHECK(s.sys->hops(0, 23) >= 3);
}
