#include "src/sim/parallel/partition.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>

#include "src/core/params.hpp"

namespace vrdmasim {

namespace {

// Block of coordinate c when `extent` boards are cut into `blocks` blocks of
// contiguous boards, sizes differing by at most one (block i starts at
// i * extent / blocks).
unsigned block_of(unsigned c, unsigned extent, unsigned blocks) {
    unsigned b = 0;
    while (b + 1 < blocks && static_cast<std::uint64_t>(b + 1) * extent / blocks <= c) ++b;
    return b;
}

ConfigError refuse(const std::string& spec, const std::string& why) {
    return ConfigError("sim.partition = " + spec + ": " + why);
}

// Fills board ranks, boards per rank and cut links for blocks px x py x pz.
struct Layout {
    unsigned blocks[3];
    std::vector<unsigned> board_rank;
    unsigned cut = 0, most = 0;
};

Layout lay_out(const Topology& t, const unsigned (&b)[3]) {
    Layout l{{b[0], b[1], b[2]}, {}, 0, 0};
    const unsigned X = t.extent(0), Y = t.extent(1), Z = t.extent(2);
    l.board_rank.resize(t.boards());
    std::vector<unsigned> count(static_cast<std::size_t>(b[0]) * b[1] * b[2], 0);
    for (unsigned z = 0; z < Z; ++z)
        for (unsigned y = 0; y < Y; ++y)
            for (unsigned x = 0; x < X; ++x) {
                const unsigned r = (block_of(z, Z, b[2]) * b[1] + block_of(y, Y, b[1])) * b[0] + block_of(x, X, b[0]);
                l.board_rank[(z * Y + y) * X + x] = r;
                ++count[r];
            }
    l.most = *std::max_element(count.begin(), count.end());
    const unsigned per = t.fpgas_per_board();
    for (unsigned n = 0; n < t.size(); ++n)
        for (unsigned k = 1; k < t.port_count(n); ++k) {
            const Topology::Port p = t.port(n, k);
            if (p.dim != Topology::kLocal && l.board_rank[n / per] != l.board_rank[p.to / per]) ++l.cut;
        }
    return l;
}

// "PXxPYxPZ", each at least 1, into b; false if `spec` is not that.
bool parse_blocks(const std::string& spec, unsigned (&b)[3]) {
    char tail = 0;
    return std::sscanf(spec.c_str(), "%ux%ux%u%c", &b[0], &b[1], &b[2], &tail) == 3 && b[0] > 0 && b[1] > 0 && b[2] > 0;
}

const char* const kSyntax = "give auto, or the blocks per dimension as PXxPYxPZ (2x1x1)";

}   // namespace

void Partition::check_spec(const std::string& spec) {
    unsigned b[3] = {0, 0, 0};
    if (spec != "auto" && !parse_blocks(spec, b)) throw refuse(spec, kSyntax);
}

Partition Partition::choose(const Topology& t, unsigned ranks, unsigned rank, const std::string& spec) {
    Partition p;
    p.ranks_ = ranks;
    p.rank_ = rank;
    p.per_board_ = t.fpgas_per_board();
    if (ranks == 0 || rank >= ranks)
        throw std::logic_error("Partition: rank " + std::to_string(rank) + " of " + std::to_string(ranks));
    if (ranks > t.boards())
        throw refuse(spec, std::to_string(ranks) + " ranks for " + std::to_string(t.boards()) +
                               " QFDB board(s): a rank simulates whole boards (the cut runs only along board "
                               "links, whose latency is the ranks' lookahead), so run at most " +
                               std::to_string(t.boards()) + " rank(s)");
    Layout best;
    bool found = false;
    if (spec == "auto") {
        // Every factorisation of `ranks` that fits the dimensions: the most
        // even (fewest boards on the fullest rank), then the fewest cut
        // links; of equals, the one that cuts x most, then y.
        for (unsigned px = ranks; px >= 1; --px)
            for (unsigned py = ranks / px; py >= 1; --py) {
                if (ranks % (px * py) != 0) continue;
                const unsigned pz = ranks / (px * py);
                if (px > t.extent(0) || py > t.extent(1) || pz > t.extent(2)) continue;
                const unsigned b[3] = {px, py, pz};
                Layout l = lay_out(t, b);
                if (!found || l.most < best.most || (l.most == best.most && l.cut < best.cut)) {
                    best = std::move(l);
                    found = true;
                }
            }
        if (!found)
            throw refuse(spec, "no blocks of " + std::to_string(t.extent(0)) + " x " + std::to_string(t.extent(1)) +
                                   " x " + std::to_string(t.extent(2)) + " boards make " + std::to_string(ranks) +
                                   " ranks: give PXxPYxPZ blocks by hand, or another number of ranks");
    } else {
        unsigned b[3] = {0, 0, 0};
        if (!parse_blocks(spec, b)) throw refuse(spec, kSyntax);
        if (static_cast<std::uint64_t>(b[0]) * b[1] * b[2] != ranks)
            throw refuse(spec, std::to_string(b[0]) + " x " + std::to_string(b[1]) + " x " + std::to_string(b[2]) +
                                   " blocks for " + std::to_string(ranks) +
                                   " MPI rank(s): the product must be the "
                                   "number of ranks (mpirun -np)");
        for (int d = 0; d < 3; ++d)
            if (b[d] > t.extent(d))
                throw refuse(spec, std::string(1, "xyz"[d]) + " has " + std::to_string(t.extent(d)) +
                                       " board(s), fewer than its " + std::to_string(b[d]) + " blocks");
        best = lay_out(t, b);
    }
    std::copy(best.blocks, best.blocks + 3, p.blocks_);
    p.board_rank_ = std::move(best.board_rank);
    p.cut_links_ = best.cut;
    return p;
}

std::vector<unsigned> Partition::boards_per_rank() const {
    std::vector<unsigned> n(ranks_, 0);
    if (!split()) return n.empty() ? n : std::vector<unsigned>{0};
    for (unsigned r : board_rank_) ++n[r];
    return n;
}

std::string Partition::text() const {
    return std::to_string(blocks_[0]) + "x" + std::to_string(blocks_[1]) + "x" + std::to_string(blocks_[2]);
}

}   // namespace vrdmasim
