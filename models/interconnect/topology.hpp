// Topology: which FPGAs (nodes) exist, their ExaNet coordinates and names,
// the ports of each node's router, and dimension-order routing computed from
// coordinates (no tables). Pure arithmetic, no SystemC: src/sim/system.cpp builds
// links and routers from it, and each Router asks it for the next hop.
//
// Clusters are QFDBs (four FPGAs, fully connected; F1 = offset 1 is the
// network FPGA that owns every link leaving the board) placed on a 3-D torus
// of X x Y x Z boards. Node index = ((z*Y + y)*X + x)*4 + f.
//
// ExaNet coordinate (22 bits, header dst_coord / footer src_coord):
//   bits  1..0  f  FPGA offset in the QFDB (0..3)
//   bits  7..2  x  (0..63)
//   bits 13..8  y  (0..63)
//   bits 19..14 z  (0..63)
//   bits 21..20 zero
// so up to 64 boards per dimension. One QFDB (kind qfdb) is x = y = z = 0
// with the node index as its offset: coordinate = node index.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace vrdmasim {

enum class TopologyKind { Qfdb, Mezzanine, Torus };

struct Coord {
    unsigned x = 0, y = 0, z = 0, f = 0;
    bool operator==(const Coord& o) const { return x == o.x && y == o.y && z == o.z && f == o.f; }
};

namespace exanet_coord {
constexpr unsigned kOffsetBits = 2;
constexpr unsigned kDimBits = 6;
constexpr unsigned kMaxDim = 1u << kDimBits;   // 64 boards per dimension
constexpr std::uint32_t pack(const Coord& c) {
    return (c.f & 3u) | (c.x & 63u) << 2 | (c.y & 63u) << 8 | (c.z & 63u) << 14;
}
constexpr Coord unpack(std::uint32_t w) { return Coord{(w >> 2) & 63u, (w >> 8) & 63u, (w >> 14) & 63u, w & 3u}; }
}   // namespace exanet_coord

class Topology {
public:
    static constexpr unsigned kNetworkFpga = 1;   // F1
    static constexpr int kLocal = -1;   // not a dimension: NI or intra-board link
    enum Dim { X = 0, Y = 1, Z = 2 };

    // One router port: port 0 is the local network interface; then the links
    // to the other FPGAs of the board (by increasing offset); then, on F1 of a
    // multi-board topology, the off-board links: for x, y, z in turn, the +
    // direction if the dimension has 2 or more boards, and the - direction if
    // it has 3 or more (a ring of 2 has one link pair, no duplicate wrap).
    // Input port k of a router comes from the router that output port k
    // leads to (the builder binds them so).
    struct Port {
        int dim = kLocal;   // X, Y, Z, or kLocal
        int dir = 0;   // +1 / -1 on a ring
        bool wrap = false;   // the ring's wrap-around link (k-1 -> 0 or 0 -> k-1), rings of 3 or more
        unsigned to = 0;   // neighbour node (the node itself for port 0)
    };
    struct Hop {
        int port = -1;   // -1: no route (coordinate outside the topology)
        unsigned vc = 0;   // VC class of the packet on the output link
    };
    struct Step {
        unsigned node;   // router the packet is in
        int port;   // output port it leaves by (0 at the destination)
        unsigned vc;   // VC on that output link
    };

    static Topology qfdb(unsigned nodes);   // 1 board, 2..4 FPGAs
    static Topology mezzanine();   // ring of 4 QFDBs
    static Topology torus(unsigned x, unsigned y, unsigned z);

    TopologyKind kind() const { return kind_; }
    unsigned size() const { return boards() * per_board_; }
    unsigned boards() const { return dims_[0] * dims_[1] * dims_[2]; }
    unsigned fpgas_per_board() const { return per_board_; }
    unsigned extent(int dim) const { return dims_[dim]; }
    bool multi_board() const { return boards() > 1; }

    Coord coord(unsigned node) const;
    bool contains(const Coord& c) const;
    unsigned node_of(const Coord& c) const;   // c must be contained
    std::uint32_t coord_word(unsigned node) const { return exanet_coord::pack(coord(node)); }
    std::vector<std::uint32_t> coord_words() const;   // for the PLDMAs' headers
    // "node3" on one QFDB, "x1y0z2f3" otherwise.
    std::string name(unsigned node) const;

    unsigned port_count(unsigned node) const;
    Port port(unsigned node, unsigned k) const;
    // The output port of `node` that leads to neighbour `to` (-1: none).
    int port_to(unsigned node, unsigned to) const;
    // The port of port(node, k).to back to the node whose coordinate is
    // `c` (port_to's answer, computed: every link has one way back).
    unsigned port_back(const Coord& c, unsigned k) const;

    // Dimension-order routing: z, then y, then x, the shorter way round (a tie
    // goes the + way), between F1s; a non-F1 source first crosses to its F1,
    // the destination board's F1 forwards to the destination FPGA. VC: 0 on
    // injection, on intra-board links and whenever the packet turns into a new
    // dimension; a packet crossing a wrap-around link moves to the next class
    // (dateline), kept while it stays in that dimension.
    Hop next_hop(unsigned node, unsigned in_port, std::uint32_t dst_coord, unsigned in_vc) const;
    // Minimal adaptive routing with escape VCs (router.routing = adaptive,
    // Duato's protocol; README.md "Adaptive routing"). On F1 of a torus, every
    // *productive* dimension (its coordinate still differs) offers its port in
    // that dimension's DOR direction (the shorter way round, a tie +, as
    // next_hop), on an adaptive VC (kEscapeVcs .. vcs-1: the router picks);
    // the escape hop is next_hop's dimension-order port on VC 0 or 1, the
    // dateline class computed from the source coordinate `src_coord` (VC 1
    // once the packet has crossed, or now crosses, that ring's wrap link), so
    // a packet may drop into the escape network from an adaptive VC anywhere.
    // Elsewhere (not F1, or on the destination board) only the escape hop,
    // which is next_hop's.
    static constexpr unsigned kEscapeVcs = 2;
    struct Options {
        Hop escape;   // port -1: no route
        std::array<Hop, 3> adaptive{};   // vc = kEscapeVcs: the first adaptive VC
        unsigned n_adaptive = 0;
    };
    Options adaptive_hops(unsigned node, unsigned in_port, std::uint32_t dst_coord, std::uint32_t src_coord,
                          unsigned in_vc) const;
    // Escape VC of a hop in `dim` in direction `dir` from coordinate `at`
    // for a packet from `src_coord`: 1 if it crossed or crosses the ring's
    // wrap link, else 0.
    unsigned escape_vc(int dim, int dir, unsigned at, std::uint32_t src_coord) const;
    // DOR direction (+1/-1) in `dim` from `a` to `b` (a != b).
    int dor_dir(int dim, unsigned a, unsigned b) const;
    // The port of F1 for dimension `dim`, direction `dir`.
    int ring_port(int dim, int dir) const { return static_cast<int>(per_board_) + ring_port_[dim][dir < 0 ? 1 : 0]; }

    // The whole route from src's router to dst's, one Step per router.
    std::vector<Step> route(unsigned src, unsigned dst) const;
    // Router-to-router hops (links between routers) of the route.
    unsigned hops(unsigned src, unsigned dst) const;

private:
    Topology(TopologyKind k, unsigned per_board, unsigned x, unsigned y, unsigned z);
    unsigned board_of(const Coord& c) const { return (c.z * dims_[1] + c.y) * dims_[0] + c.x; }
    unsigned ring_ports() const { return static_cast<unsigned>(ring_.size()); }
    // port() of `node`, whose coordinate is `c`.
    Port port_at(unsigned node, const Coord& c, unsigned k) const;
    template <class F>
    void walk(unsigned src, unsigned dst, F&& step) const;

    TopologyKind kind_;
    unsigned per_board_;
    std::array<unsigned, 3> dims_;
    // Off-board ports of F1 (same on every board): dimension and direction.
    std::vector<std::pair<int, int>> ring_;
    std::array<std::array<int, 2>, 3> ring_port_{};   // [dim][dir<0] -> offset into ring_, -1 none
};

}   // namespace vrdmasim
