// Which rank simulates which boards (src/sim/parallel/partition.hpp).
#include <catch2/catch.hpp>

#include "src/core/params.hpp"
#include "src/sim/parallel/partition.hpp"

#include <numeric>
#include <string>

using namespace vrdmasim;

TEST_CASE("auto partition: the most even blocks, then the fewest links cut", "[partition]") {
    const Topology t = Topology::torus(4, 2, 2);   // 16 boards
    const Partition p = Partition::choose(t, 2, 0, "auto");
    // Halving x cuts 2 rings of 4 boards per (y, z): 4 rings x 2 cables x
    // 2 directions = 16 links; halving y or z (rings of 2, one cable pair
    // each) cuts 8 x 2 = 16 too: the first of the equals, x, is taken.
    CHECK(p.text() == "2x1x1");
    CHECK(p.cut_links() == 16);
    CHECK(p.boards_per_rank() == std::vector<unsigned>{8, 8});
    // Every board on one rank, its four nodes with it.
    for (unsigned n = 0; n < t.size(); ++n) CHECK(p.rank_of_node(n) == p.rank_of_board(n / 4));
    CHECK(p.present(0));
    CHECK(p.rank_of_board(2) == 1);   // x = 2 of 4
    // Three ranks: x cannot be split in 3 evenly, the blocks differ by a board row at most.
    const Partition q = Partition::choose(Topology::torus(3, 2, 2), 3, 2, "auto");
    CHECK(q.text() == "3x1x1");
    CHECK(q.boards_per_rank() == std::vector<unsigned>{4, 4, 4});
    CHECK(q.rank() == 2);
}

TEST_CASE("partition by hand, and what cannot be split", "[partition]") {
    const Topology t = Topology::torus(4, 2, 2);
    const Partition p = Partition::choose(t, 4, 1, "1x2x2");
    CHECK(p.text() == "1x2x2");
    CHECK(p.boards_per_rank() == std::vector<unsigned>{4, 4, 4, 4});
    auto refuses = [&](const Topology& topo, unsigned ranks, const std::string& spec, const std::string& says) {
        try {
            Partition::choose(topo, ranks, 0, spec);
            FAIL("accepted sim.partition = " << spec << " for " << ranks << " ranks");
        } catch (const ConfigError& e) {
            CHECK_THAT(e.what(), Catch::Contains(says));
        }
    };
    refuses(t, 3, "1x2x2", "the product must be the number of ranks");
    refuses(t, 3, "1x1x3", "fewer than its 3 blocks");
    refuses(t, 2, "two", "PXxPYxPZ");
    refuses(Topology::qfdb(4), 2, "auto", "a rank simulates whole boards");
    refuses(Topology::torus(5, 1, 1), 7, "auto", "a rank simulates whole boards");
    refuses(Topology::torus(2, 2, 1), 3, "auto", "no blocks of 2 x 2 x 1 boards make 3 ranks");
    // Its form, checked in one process too (which ignores the blocks): once
    // banana, 0x1x1 and 2x1 were accepted and written to config.ini.
    for (const char* bad : {"banana", "0x1x1", "2x1", "2x1x1x", ""})
        CHECK_THROWS_WITH(Partition::check_spec(bad), Catch::Contains("PXxPYxPZ"));
    CHECK_NOTHROW(Partition::check_spec("auto"));
    CHECK_NOTHROW(Partition::check_spec("2x1x1"));
}
