// Partition: which MPI rank simulates which QFDB boards in a partitioned
// run (docs/scaling.md "Where to cut"). The torus of X x Y x Z boards is
// cut into PX x PY x PZ blocks of contiguous boards, as evenly as each
// dimension allows; block (bx, by, bz) is rank (bz*PY + by)*PX + bx. A rank
// holds whole boards: the cut runs only along board links, whose latency
// is the lookahead of the ranks' windows.
//
// Chosen automatically (sim.partition = auto: the blocks that cut the
// fewest board links, then the most even) or by hand (sim.partition =
// PXxPYxPZ). Pure arithmetic on the topology, no SystemC, no MPI.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/interconnect/topology.hpp"

namespace vrdmasim {

class Partition {
public:
    // The whole system on one rank.
    Partition() = default;
    // `ranks` ranks over `t`'s boards, this process being `rank`, as
    // `spec` asks ("auto" or "PXxPYxPZ"). ConfigError (naming
    // sim.partition) if it cannot: more ranks than boards, blocks whose
    // product is not `ranks`, a dimension cut into more blocks than it has
    // boards.
    static Partition choose(const Topology& t, unsigned ranks, unsigned rank, const std::string& spec);
    // ConfigError unless `spec` is "auto" or PXxPYxPZ with each at least 1.
    static void check_spec(const std::string& spec);

    unsigned ranks() const { return ranks_; }
    unsigned rank() const { return rank_; }
    bool split() const { return ranks_ > 1; }
    // Blocks per dimension.
    unsigned blocks(int dim) const { return blocks_[dim]; }
    // The rank that simulates board b / node n.
    unsigned rank_of_board(unsigned b) const { return split() ? board_rank_[b] : 0; }
    unsigned rank_of_node(unsigned n) const { return rank_of_board(n / per_board_); }
    // Whether this rank simulates node n.
    bool present(unsigned n) const { return rank_of_node(n) == rank_; }
    // Boards per rank, and board links between two ranks (each direction
    // counted: a link is one direction of a cable).
    std::vector<unsigned> boards_per_rank() const;
    unsigned cut_links() const { return cut_links_; }
    // "PXxPYxPZ", as sim.partition takes it.
    std::string text() const;

private:
    unsigned ranks_ = 1, rank_ = 0;
    unsigned blocks_[3] = {1, 1, 1};
    unsigned per_board_ = 1;
    unsigned cut_links_ = 0;
    std::vector<unsigned> board_rank_;
};

}   // namespace vrdmasim
