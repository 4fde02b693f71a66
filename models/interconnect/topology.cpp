#include "models/interconnect/topology.hpp"

#include <stdexcept>

namespace vrdmasim {

namespace {
unsigned get(const Coord& c, int dim) { return dim == Topology::X ? c.x : dim == Topology::Y ? c.y : c.z; }
void put(Coord& c, int dim, unsigned v) { (dim == Topology::X ? c.x : dim == Topology::Y ? c.y : c.z) = v; }
}   // namespace

Topology::Topology(TopologyKind k, unsigned per_board, unsigned x, unsigned y, unsigned z)
    : kind_(k), per_board_(per_board), dims_{x, y, z} {
    if (per_board < 1 || per_board > 4) throw std::invalid_argument("topology: 1..4 FPGAs per board");
    for (unsigned d : dims_)
        if (d < 1 || d > exanet_coord::kMaxDim) throw std::invalid_argument("topology: 1..64 boards per dimension");
    for (auto& r : ring_port_) r = {-1, -1};
    for (int d = X; d <= Z; ++d) {
        if (dims_[d] >= 2) {
            ring_port_[d][0] = static_cast<int>(ring_.size());
            ring_.emplace_back(d, +1);
        }
        if (dims_[d] >= 3) {
            ring_port_[d][1] = static_cast<int>(ring_.size());
            ring_.emplace_back(d, -1);
        }
    }
}

Topology Topology::qfdb(unsigned nodes) { return Topology(TopologyKind::Qfdb, nodes, 1, 1, 1); }
Topology Topology::mezzanine() { return Topology(TopologyKind::Mezzanine, 4, 4, 1, 1); }
Topology Topology::torus(unsigned x, unsigned y, unsigned z) { return Topology(TopologyKind::Torus, 4, x, y, z); }

Coord Topology::coord(unsigned node) const {
    if (node >= size())
        throw std::out_of_range("topology: node " + std::to_string(node) + " beyond " + std::to_string(size()) +
                                " nodes");
    Coord c;
    c.f = node % per_board_;
    unsigned b = node / per_board_;
    c.x = b % dims_[0];
    b /= dims_[0];
    c.y = b % dims_[1];
    c.z = b / dims_[1];
    return c;
}

bool Topology::contains(const Coord& c) const {
    return c.f < per_board_ && c.x < dims_[0] && c.y < dims_[1] && c.z < dims_[2];
}

unsigned Topology::node_of(const Coord& c) const { return board_of(c) * per_board_ + c.f; }

std::vector<std::uint32_t> Topology::coord_words() const {
    std::vector<std::uint32_t> v(size());
    for (unsigned i = 0; i < size(); ++i) v[i] = coord_word(i);
    return v;
}

std::string Topology::name(unsigned node) const {
    if (kind_ == TopologyKind::Qfdb) return "node" + std::to_string(node);
    const Coord c = coord(node);
    return "x" + std::to_string(c.x) + "y" + std::to_string(c.y) + "z" + std::to_string(c.z) + "f" +
           std::to_string(c.f);
}

unsigned Topology::port_count(unsigned node) const {
    const bool f1 = node % per_board_ == kNetworkFpga;
    return per_board_ + (multi_board() && f1 ? ring_ports() : 0);
}

Topology::Port Topology::port(unsigned node, unsigned k) const { return port_at(node, coord(node), k); }

Topology::Port Topology::port_at(unsigned node, const Coord& c, unsigned k) const {
    Port p;
    if (k == 0) {
        p.to = node;
        return p;
    }
    if (k < per_board_) {
        Coord o = c;
        o.f = (k - 1 < c.f) ? k - 1 : k;
        p.to = node_of(o);
        return p;
    }
    if (k >= port_count(node)) throw std::out_of_range("topology: port " + std::to_string(k) + " of " + name(node));
    const auto& r = ring_[k - per_board_];
    p.dim = r.first;
    p.dir = r.second;
    const unsigned n = dims_[p.dim], a = get(c, p.dim);
    p.wrap = n >= 3 && ((p.dir > 0 && a == n - 1) || (p.dir < 0 && a == 0));
    Coord o = c;
    put(o, p.dim, static_cast<unsigned>(static_cast<int>(a + n) + p.dir) % n);
    p.to = node_of(o);
    return p;
}

unsigned Topology::port_back(const Coord& c, unsigned k) const {
    if (k < per_board_) {   // an FPGA of the board: its port to this one (port(): by offset, skipping itself)
        const unsigned f = k - 1 < c.f ? k - 1 : k;
        return c.f < f ? c.f + 1 : c.f;
    }
    // The other way round the ring; a ring of 2 has the + port only.
    const auto& r = ring_.at(k - per_board_);
    return per_board_ + static_cast<unsigned>(ring_port_[r.first][dims_[r.first] >= 3 && r.second > 0 ? 1 : 0]);
}

int Topology::port_to(unsigned node, unsigned to) const {
    const unsigned n = port_count(node);
    const Coord c = coord(node);   // (once, not once a port)
    for (unsigned k = 1; k < n; ++k)
        if (port_at(node, c, k).to == to) return static_cast<int>(k);
    return -1;
}

Topology::Hop Topology::next_hop(unsigned node, unsigned in_port, std::uint32_t dst_coord, unsigned in_vc) const {
    Hop h;
    const Coord d = exanet_coord::unpack(dst_coord);
    if ((dst_coord >> 20) != 0 || !contains(d) || node >= size()) return h;
    const unsigned dn = node_of(d);
    if (dn == node) {
        h.port = 0;
        return h;
    }
    const Coord c = coord(node);
    if (board_of(c) == board_of(d)) {   // across the board, straight to the FPGA
        h.port = static_cast<int>(d.f < c.f ? d.f + 1 : d.f);
        return h;
    }
    if (c.f != kNetworkFpga) {   // to the board's network FPGA first
        h.port = static_cast<int>(kNetworkFpga < c.f ? kNetworkFpga + 1 : kNetworkFpga);
        return h;
    }
    const int in_dim = in_port < port_count(node) ? port(node, in_port).dim : kLocal;
    for (int dim : {Z, Y, X}) {
        const unsigned a = get(c, dim), b = get(d, dim), n = dims_[dim];
        if (a == b) continue;
        const unsigned delta = (b + n - a) % n;
        const int dir = (n == 2 || delta <= n - delta) ? +1 : -1;   // shorter way; a tie goes +
        h.port = static_cast<int>(per_board_) + ring_port_[dim][dir < 0 ? 1 : 0];
        const bool wrap = n >= 3 && ((dir > 0 && a == n - 1) || (dir < 0 && a == 0));
        h.vc = (in_dim == dim ? in_vc : 0) + (wrap ? 1 : 0);
        return h;
    }
    return Hop{};   // unreachable: different boards differ in some dimension
}

int Topology::dor_dir(int dim, unsigned a, unsigned b) const {
    const unsigned n = dims_[dim];
    const unsigned delta = (b + n - a) % n;
    return (n == 2 || delta <= n - delta) ? +1 : -1;   // shorter way; a tie goes +
}

unsigned Topology::escape_vc(int dim, int dir, unsigned at, std::uint32_t src_coord) const {
    const unsigned n = dims_[dim];
    if (n < 3) return 0;   // a ring of 2 has no wrap link
    const Coord s = exanet_coord::unpack(src_coord);
    const unsigned from = get(s, dim);
    // Coordinates in `dim` change only by hops in `dim`, all in direction
    // `dir` on a minimal route: the packet is past the wrap once it is on
    // the far side of where it started.
    const bool crossed = dir > 0 ? at < from : at > from;
    const bool crosses = dir > 0 ? at == n - 1 : at == 0;
    return crossed || crosses ? 1u : 0u;
}

Topology::Options Topology::adaptive_hops(unsigned node, unsigned in_port, std::uint32_t dst_coord,
                                          std::uint32_t src_coord, unsigned in_vc) const {
    Options o;
    const Coord d = exanet_coord::unpack(dst_coord);
    if ((dst_coord >> 20) != 0 || !contains(d) || node >= size()) return o;
    const Coord c = coord(node);
    if (c.f != kNetworkFpga || board_of(c) == board_of(d)) {
        o.escape = next_hop(node, in_port, dst_coord, in_vc);   // inside a board: as dimension order
        return o;
    }
    for (int dim : {Z, Y, X}) {
        const unsigned a = get(c, dim), b = get(d, dim);
        if (a == b) continue;
        const int dir = dor_dir(dim, a, b);
        Hop h;
        h.port = ring_port(dim, dir);
        if (o.escape.port < 0) {   // the first differing dimension: dimension order
            o.escape.port = h.port;
            o.escape.vc = escape_vc(dim, dir, a, src_coord);
        }
        h.vc = kEscapeVcs;
        o.adaptive[o.n_adaptive++] = h;
    }
    return o;
}

// The route from src's router to dst's, each Step handed to `step` in
// order, the last (port 0) at dst: route() and hops(), one walk.
template <class F>
void Topology::walk(unsigned src, unsigned dst, F&& step) const {
    const std::uint32_t to = coord_word(dst);
    unsigned node = src, in_port = 0, vc = 0;
    for (std::size_t steps = 1;; ++steps) {
        const Hop h = next_hop(node, in_port, to, vc);
        if (h.port < 0) throw std::logic_error("topology: no route from " + name(src) + " to " + name(dst));
        step(Step{node, h.port, h.vc});
        if (h.port == 0) return;
        if (steps > size()) throw std::logic_error("topology: routing loop from " + name(src));
        const Coord c = coord(node);
        const unsigned k = static_cast<unsigned>(h.port);
        const unsigned next = port_at(node, c, k).to;
        in_port = port_back(c, k);
        node = next;
        vc = h.vc;
    }
}

std::vector<Topology::Step> Topology::route(unsigned src, unsigned dst) const {
    std::vector<Step> steps;
    steps.reserve(8);   // (routes of up to 7 hops without growing it)
    walk(src, dst, [&steps](const Step& s) { steps.push_back(s); });
    return steps;
}

// Counted from the coordinates, as next_hop() routes (a workload asks once
// a transfer: walking the route took some 1,800 instructions a message of
// an alltoall). Across a board: one link. Between boards: to the source
// board's F1, along each ring that differs (the shorter way round, a tie
// +: one link a step, each ring in turn until its coordinate is reached),
// then from the destination board's F1 to its FPGA. The tests check it
// against the route's steps for every pair of several topologies.
unsigned Topology::hops(unsigned src, unsigned dst) const {
    const Coord c = coord(src), d = coord(dst);
    if (src == dst) return 0;
    if (board_of(c) == board_of(d)) return 1;
    unsigned n = (c.f != kNetworkFpga ? 1u : 0u) + (d.f != kNetworkFpga ? 1u : 0u);
    for (int dim : {X, Y, Z}) {
        const unsigned a = get(c, dim), b = get(d, dim), k = dims_[dim];
        if (a == b) continue;
        const unsigned delta = (b + k - a) % k;
        n += dor_dir(dim, a, b) > 0 ? delta : k - delta;
    }
    return n;
}

}   // namespace vrdmasim
