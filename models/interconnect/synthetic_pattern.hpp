// Synthetic traffic patterns (workload.kind = synthetic; here, beside the
// topology, since they are its arithmetic): where each message
// of a source goes, on the nodes of one QFDB, a mezzanine or a torus of
// QFDBs. Pure arithmetic, shared by the workload (its destinations) and the
// channel-load bound (src/sim/channel_load.hpp, its traffic matrix), so that
// both see the same pattern.
//
// A node is four digits: f, its FPGA on the board (0 .. F-1), and x, y, z,
// its board's coordinates on the torus (0 .. X-1, ...), numbered as
// models/interconnect/topology.hpp numbers them:
//
//   node = ((z * Y + y) * X + x) * F + f
//
// (one QFDB: F = topology.nodes, X = Y = Z = 1; a mezzanine: F = 4, X = 4).
// The patterns are BookSim 2's and Dally & Towles's (Principles and
// Practices of Interconnection Networks, 2004, section 3.2), with the
// board's FPGAs as one more digit:
//
//   uniform         each message to one of the N - 1 other nodes, uniformly
//   transpose       (f, x, y, z) -> (f, y, x, z): needs X = Y >= 2
//   bit-complement  every digit complemented: (F-1-f, X-1-x, Y-1-y, Z-1-z)
//   tornado         every board coordinate + (ceil(k/2) - 1) mod k, f kept
//   neighbour       every board coordinate + 1 mod k (k >= 2), f kept
//   hotspot         a message of a node other than the hot one goes to the
//                   hot node with probability `fraction`, else uniformly to
//                   one of the N - 1 others; the hot node sends uniformly
//
// A deterministic pattern may map a node to itself (transpose's diagonal,
// bit-complement's middle of an odd extent): that node sends to itself
// through its own NI and router, as BookSim's sources do.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace vrdmasim::synthetic {

enum class Pattern { Uniform, Transpose, BitComplement, Tornado, Neighbour, Hotspot };

// The names of workload's synthetic.pattern choices, in Pattern's order.
const std::vector<std::string>& pattern_names();
Pattern parse_pattern(const std::string& name);   // std::invalid_argument for another name
const std::string& name(Pattern p);
// Uniform and hotspot draw each destination; the others are permutations.
inline bool is_random(Pattern p) { return p == Pattern::Uniform || p == Pattern::Hotspot; }

struct Shape {
    unsigned f = 4, x = 1, y = 1, z = 1;
    unsigned nodes() const { return f * x * y * z; }
};
struct Digits {
    unsigned f = 0, x = 0, y = 0, z = 0;
};
Digits digits(const Shape& s, unsigned node);
unsigned node_of(const Shape& s, const Digits& d);

// "" when pattern `p` is defined on `s`, else why not (for the error that
// names synthetic.pattern): transpose on X != Y, tornado or neighbour where
// no board coordinate moves, a system of fewer than 2 nodes.
std::string refusal(Pattern p, const Shape& s);

// A deterministic pattern's destination of `src` (p not random).
unsigned destination(Pattern p, const Shape& s, unsigned src);

// What the random patterns need beyond the shape.
struct Hotspot {
    unsigned node = 0;
    double fraction = 0;
};

// A random pattern's destination of one message of `src`, from two
// uniform draws in [0, 1): `pick` (hotspot: the hot node if below the
// fraction) and `which` (the node among the N - 1 others).
unsigned draw(Pattern p, const Shape& s, unsigned src, const Hotspot& h, double pick, double which);

// The pattern's row of the traffic matrix: each destination of `src` with
// the fraction of src's messages it gets (the fractions sum to 1).
std::vector<std::pair<unsigned, double>> row(Pattern p, const Shape& s, unsigned src, const Hotspot& h);

// The distinct nodes that send to `dst` under the pattern (increasing).
std::vector<unsigned> sources(Pattern p, const Shape& s, unsigned dst, const Hotspot& h);

// The data packets of one message of `len` bytes (len >= 1) as the engine
// cuts it: read in blocks of `block` bytes, each block cut into packets of
// at most `packet` bytes (models/dma/README.md), each packet 2 + ceil(bytes
// / 16) flits of 16 B (header, payload, footer).
struct Packets {
    std::uint64_t packets = 0, flits = 0;
};
Packets message_packets(std::uint64_t len, std::uint64_t packet, std::uint64_t block);

}   // namespace vrdmasim::synthetic
