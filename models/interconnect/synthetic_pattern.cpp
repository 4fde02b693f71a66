#include "models/interconnect/synthetic_pattern.hpp"

#include <algorithm>
#include <stdexcept>

namespace vrdmasim::synthetic {

const std::vector<std::string>& pattern_names() {
    static const std::vector<std::string> names{"uniform", "transpose", "bit-complement",
                                                "tornado", "neighbour", "hotspot"};
    return names;
}

Pattern parse_pattern(const std::string& name) {
    const auto& names = pattern_names();
    const auto it = std::find(names.begin(), names.end(), name);
    if (it == names.end()) throw std::invalid_argument("synthetic: no pattern '" + name + "'");
    return static_cast<Pattern>(it - names.begin());
}

const std::string& name(Pattern p) { return pattern_names().at(static_cast<std::size_t>(p)); }

Digits digits(const Shape& s, unsigned node) {
    Digits d;
    d.f = node % s.f;
    unsigned b = node / s.f;
    d.x = b % s.x;
    b /= s.x;
    d.y = b % s.y;
    d.z = b / s.y;
    return d;
}

unsigned node_of(const Shape& s, const Digits& d) { return ((d.z * s.y + d.y) * s.x + d.x) * s.f + d.f; }

namespace {

// Tornado's step in a ring of k: ceil(k/2) - 1 (0 for k <= 2).
unsigned tornado_step(unsigned k) { return (k + 1) / 2 - 1; }

}   // namespace

std::string refusal(Pattern p, const Shape& s) {
    if (s.nodes() < 2) return "a synthetic pattern needs at least 2 nodes";
    switch (p) {
    case Pattern::Transpose:
        if (s.x != s.y || s.x < 2)
            return "transpose swaps the boards' x and y coordinates, so it needs a torus of as many boards along x "
                   "as along y, at least 2 (this system has " +
                   std::to_string(s.x) + " x " + std::to_string(s.y) + " x " + std::to_string(s.z) + " boards)";
        return "";
    case Pattern::Tornado:
        if (tornado_step(s.x) + tornado_step(s.y) + tornado_step(s.z) == 0)
            return "tornado moves each board coordinate by ceil(k/2) - 1 along its ring of k boards, which is 0 for "
                   "every dimension of this system (" +
                   std::to_string(s.x) + " x " + std::to_string(s.y) + " x " + std::to_string(s.z) +
                   " boards): every node would send to itself; it needs a dimension of 3 or more boards";
        return "";
    case Pattern::Neighbour:
        if (s.x < 2 && s.y < 2 && s.z < 2)
            return "neighbour moves each board coordinate by 1, so it needs more than one board (this system is one "
                   "QFDB)";
        return "";
    default: return "";
    }
}

unsigned destination(Pattern p, const Shape& s, unsigned src) {
    Digits d = digits(s, src);
    switch (p) {
    case Pattern::Transpose: std::swap(d.x, d.y); break;
    case Pattern::BitComplement: d = Digits{s.f - 1 - d.f, s.x - 1 - d.x, s.y - 1 - d.y, s.z - 1 - d.z}; break;
    case Pattern::Tornado:
        d.x = (d.x + tornado_step(s.x)) % s.x;
        d.y = (d.y + tornado_step(s.y)) % s.y;
        d.z = (d.z + tornado_step(s.z)) % s.z;
        break;
    case Pattern::Neighbour:
        d.x = (d.x + 1) % s.x;
        d.y = (d.y + 1) % s.y;
        d.z = (d.z + 1) % s.z;
        break;
    default: throw std::logic_error("synthetic: " + name(p) + " draws its destinations");
    }
    return node_of(s, d);
}

namespace {

// The node among the n - 1 others of `src` that a draw in [0, 1) picks.
unsigned other(unsigned n, unsigned src, double which) {
    auto k = static_cast<unsigned>(which * (n - 1));
    if (k >= n - 1) k = n - 2;   // (which < 1; rounding)
    return k < src ? k : k + 1;
}

}   // namespace

unsigned draw(Pattern p, const Shape& s, unsigned src, const Hotspot& h, double pick, double which) {
    const unsigned n = s.nodes();
    if (p == Pattern::Hotspot && src != h.node && pick < h.fraction) return h.node;
    if (!is_random(p)) throw std::logic_error("synthetic: " + name(p) + " is a permutation");
    return other(n, src, which);
}

std::vector<std::pair<unsigned, double>> row(Pattern p, const Shape& s, unsigned src, const Hotspot& h) {
    const unsigned n = s.nodes();
    std::vector<std::pair<unsigned, double>> r;
    if (!is_random(p)) {
        r.emplace_back(destination(p, s, src), 1.0);
        return r;
    }
    const bool hot = p == Pattern::Hotspot && src != h.node;
    const double spread = (hot ? 1.0 - h.fraction : 1.0) / (n - 1);
    for (unsigned d = 0; d < n; ++d)
        if (d != src) r.emplace_back(d, spread + (hot && d == h.node ? h.fraction : 0.0));
    return r;
}

std::vector<unsigned> sources(Pattern p, const Shape& s, unsigned dst, const Hotspot&) {
    const unsigned n = s.nodes();
    std::vector<unsigned> v;
    for (unsigned src = 0; src < n; ++src)
        if (is_random(p) ? src != dst : destination(p, s, src) == dst) v.push_back(src);
    return v;
}

Packets message_packets(std::uint64_t len, std::uint64_t packet, std::uint64_t block) {
    Packets r;
    for (std::uint64_t off = 0; off < len; off += block) {
        const std::uint64_t blen = std::min(block, len - off);
        for (std::uint64_t p = 0; p < blen; p += packet) {
            const std::uint64_t bytes = std::min(packet, blen - p);
            ++r.packets;
            r.flits += 2 + (bytes + 15) / 16;
        }
    }
    return r;
}

}   // namespace vrdmasim::synthetic
