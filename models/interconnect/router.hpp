// Router: an ExaNet switch. Input links bind to `in`, output links to `out`;
// a route function (dimension-order routing computed from the header's
// destination coordinate, see topology.hpp) or, without one, a routing table
// maps each destination to an output port and VC. A packet
// leaves after the router's pipeline latency; its input-buffer space is freed
// when its tail has left through the output (returned to the upstream link as
// its credit time, see link.hpp).
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_initiator_socket.h>
#include <tlm_utils/multi_passthrough_target_socket.h>

#include "src/core/ring_list.hpp"
#include "src/core/context.hpp"
#include "src/core/force_inline.hpp"
#include "models/interconnect/exanet_packet.hpp"
#include "models/interconnect/held_space.hpp"
#include "models/interconnect/topology.hpp"

namespace vrdmasim {

// The parameters of section [router], declared in router.cpp; read
// through params_of<RouterParams>().
struct RouterParams {
    RouterParams();
    ParamSet set;
    TimeParam latency;
    IntParam vcs;
    EnumParam routing;
    EnumParam link_order;
};

class ExanetPacket;
class Link;
struct HopPacket;

class Router : public sc_core::sc_module {
public:
    struct Choice {
        int port = -1;   // -1: no route
        int vc = -1;   // VC on the output link; -1 keeps the header's
    };
    // (input port, packet) -> output port and VC.
    using RouteFunction = std::function<Choice(unsigned in_port, const ExanetPacket&)>;

    tlm_utils::multi_passthrough_target_socket<Router> in;
    tlm_utils::multi_passthrough_initiator_socket<Router> out;

    static void declare_params(ParamRegistry& reg);
    // Summary columns: adaptive and escape hops (router.routing = adaptive).
    static void declare_metrics(MetricRegistry& reg);
    // What a run must say about its contention model (empty in time order):
    // with router.link-order = call-approximate a warning, every run, that
    // its contention figures are approximate and not for publication, with
    // the packet-hops its links served behind later ones (the statistics'
    // `order_inversions` and `order_wait`).
    static std::string contention_warning(const Config& c, const StatRegistry& stats);
    Router(sc_core::sc_module_name name, const SimContext& ctx);

    // Packets for node `dst` leave through out[port].
    void set_route(unsigned dst, unsigned port);
    int route(unsigned dst) const { return dst < routes_.size() ? routes_[dst] : -1; }
    // Routes by `f` instead of the table.
    void set_route_function(RouteFunction f) {
        route_fn_ = std::move(f);
        forget_routed();
    }
    // Routes as Topology::next_hop for router `node` of `topology`, from
    // tables of its hops built here, one per dimension (an entry per board
    // coordinate in x, y and z) and one for its own board (an entry per
    // FPGA): a packet costs a few compares and a lookup, not next_hop's
    // coordinate arithmetic at every hop, and a router's tables stay under
    // a kilobyte whatever the number of nodes. Replaces the route function.
    void set_dimension_order(const Topology& topology, unsigned node);
    // The hop of set_dimension_order's tables for a packet to `dst_coord`
    // that came in on `in_port` on VC `in_vc` (what next_hop gives).
    Choice dimension_order_hop(unsigned in_port, std::uint32_t dst_coord, unsigned in_vc) const;
    // Minimal adaptive routing with escape VCs (router.routing = adaptive;
    // README.md "Adaptive routing"): router `node` of `topology` routes by
    // Topology::adaptive_hops, choosing among the candidates by the state of
    // its output links (set_output_link for every port it may choose):
    // the adaptive (port, VC) on which the packet could start earliest
    // (Link::earliest_start: wire and that VC's credits), ties to the first
    // in dimension order (z, y, x) and the lowest VC; the escape hop only if
    // it could start strictly earlier than every adaptive one. `vcs` >= 3:
    // VCs 0 and 1 escape, 2.. adaptive. Replaces the route function.
    void set_adaptive(const Topology& topology, unsigned node, unsigned vcs);
    // The link bound to out[port]: adaptive routing reads its state, and a
    // packet for that port calls it directly (checked at the end of
    // elaboration: out[port] must lead to its input).
    void set_output_link(unsigned port, Link* link);
    // Its input links reserve in time order (router.link-order): heads may
    // reach an input out of call order; occupancy is measured accordingly.
    void set_time_order() { timed_ = true; }
    // The choice rule alone: which of `o`'s candidates a packet of `flits`
    // whose head reaches the outputs at `head` (tail at `tail`) takes.
    Choice choose(const Topology::Options& o, unsigned flits, sc_core::sc_time head, sc_core::sc_time tail,
                  bool& adaptive) const;
    std::uint64_t adaptive_hops() const { return adaptive_hops_ ? adaptive_hops_->value() : 0; }
    std::uint64_t escape_hops() const { return escape_hops_ ? escape_hops_->value() : 0; }
    // Input buffer of input port `port`: `vcs` buffers of `flits` each
    // (vcs = 1: one buffer whatever the VC). Its occupancy is measured on
    // every packet (head arrival to the time its space is freed), per VC,
    // independently of the upstream link's credit count.
    void set_input_buffer(unsigned port, unsigned flits, unsigned vcs);
    // Input port `port` is fed by `link` (Link::connect). A time-ordered
    // link keeps the space its far buffer holds over time, the same
    // packets this input holds, each from its head's arrival: a router
    // with time-ordered inputs measures their occupancy from the link's
    // lists (Link::held_space) instead of keeping its own.
    void set_input_link(unsigned port, Link& link);
    // Most flits measured in any of its inputs' buffers of VC `vc`.
    unsigned occupancy_max(unsigned vc) const { return vc < occ_max_.size() ? occ_max_[vc] : 0; }
    std::uint64_t overflows() const { return overflows_.value(); }

    // Exact time order (router.link-order = exact; Link::use_hops). The
    // pipeline latency, head in to head out.
    sc_core::sc_time pipeline() const { return pipeline_; }
    // Exact time order: what one VC buffer of an input holds, the packets
    // whose head has come in and whose space is not freed yet. It is kept
    // by what feeds the input (the Link's hops, beside its credits for the
    // same buffer; a cut link's far end), not here: a hop then reads one
    // place for the link and the buffer, where it read the link, then this
    // router's inputs, the input's VCs and their lists (on a torus of
    // 16,384 MPSoCs, four misses of the caches in a row at each arrival).
    struct ExactHeld {
        // (space freed at, flits) of the packets still held, from `first`
        // on, sorted by the time (ties in the order they were freed): space
        // is usually freed in arrival order, so a packet appends at the end
        // and the freed ones leave at the front.
        RingList<std::pair<sc_core::sc_time, unsigned>> held;
        unsigned held_flits = 0;   // arrivals not freed (the frees listed are subtracted as due)
        // The most it has held: the router's occupancy_max of its VC is the
        // most of its inputs', read there only when this one rises.
        unsigned most = 0;
        // A packet of `flits` whose head came in at `head`: what was freed
        // by then is gone; the flits held with it.
        unsigned take(sc_core::sc_time head, unsigned flits) {
            while (!held.empty() && held.front().first <= head) {
                held_flits -= held.front().second;
                held.pop_front();
            }
            held_flits += flits;
            return held_flits;
        }
        // `flits` of it freed from `at`.
        void freed(sc_core::sc_time at, unsigned flits) {
            if (held.empty() || held.back().first <= at) {
                held.push_back({at, flits});
                return;
            }
            std::size_t i = held.size() - 1;
            while (i > 0 && held[i - 1].first > at) --i;
            held.insert(held.begin() + static_cast<std::ptrdiff_t>(i), {at, flits});
        }
    };
    // Input `port`'s buffer as set_input_buffer declared it (0 flits: not
    // declared, not measured), for what feeds it.
    struct ExactInput {
        unsigned flits = 0, vcs = 1;
        // The VC buffer a packet on the feeding link's VC `vc` is counted
        // in as it arrives (-1: none) and as it is freed.
        int arriving(unsigned vc) const { return flits == 0 || vc >= vcs ? -1 : vcs == 1 ? 0 : int(vc); }
        int freeing(unsigned vc) const {
            if (flits == 0) return -1;
            if (vcs == 1) return 0;
            return vc >= vcs ? -1 : int(vc);
        }
    };
    ExactInput exact_input(unsigned port) const {
        if (port >= inputs_.size()) return ExactInput{};
        return ExactInput{inputs_[port].flits, inputs_[port].vcs};
    }
    // Whether a packet that comes in on `in_port` has a route here (its
    // injection link asks before it takes the packet). The last yes is
    // kept: a block's packets ask alike, and the answer depends on the
    // input, the packet's coordinates, VC and node and the tables alone
    // (any setter below forgets it; a route function's answer is not kept).
    bool routes(unsigned in_port, const ExanetPacket& pkt) const {
        if (routed_.in_port == in_port && routed_.key == routed_key(pkt) && routed_.node == pkt.dst_node) return true;
        return routes_asked(in_port, pkt);
    }
    void count_unroutable() { unroutable_.inc(); }
    // The packet's head reached input `port` at `head` (now is a pipeline
    // later): measured in `held`, its VC buffer `vc` of that input (of
    // `in_flits`; nullptr: not measured), routed and queued at its output
    // link.
    void exact_arrive(int port, HopPacket& hp, sc_core::sc_time head, ExactHeld* held, unsigned in_flits, unsigned vc);
    // The same, inline where a link's packets arrive (hop_link.cpp; the
    // one above is its out-of-line copy).
    void exact_arrive_inline(int port, HopPacket& hp, sc_core::sc_time head, ExactHeld* held, unsigned in_flits,
                             unsigned vc);
    // Whether a packet's arrival here may be made ahead, at its start on
    // the link that feeds it (exact_ahead_inline): dimension order or the
    // routing table, whose route depends on the packet and its input alone
    // (adaptive routing reads the output links' state at the arrival's
    // time; a test's route function is not known to be a function of the
    // packet alone).
    bool exact_ahead_ok() const { return !topology_ && !route_fn_; }
    // A packet whose head reaches input `port` at `head`, routed at its
    // start on the link that feeds the input: its VC, tail and ready time
    // set for its output link, which it returns, and counted as routed (at
    // once, or with `held_counts`, where a region of interest will read
    // the counts, at its arrival's time: StatRegistry::count_at). Its
    // input's occupancy at `head` is left to exact_hold_inline, once
    // nothing can still change it (Link::settle_ahead).
    Link& exact_ahead_inline(int port, HopPacket& hp, sc_core::sc_time head, bool held_counts);
    // The input's VC buffer `held` (null: not measured) takes `flits` at
    // `head` (what was freed by then is gone).
    void exact_hold_inline(ExactHeld* held, unsigned in_flits, unsigned vc, sc_core::sc_time head, unsigned flits);
    void count_overflow(sc_core::sc_time at);   // an arrival's at `at` (exact_hold_inline)
    void count_routed(sc_core::sc_time at);   // a packet routed at `at`, held for a region (exact_ahead_inline)

    // The target of input `id` (in's binding order).
    void b_transport(int id, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    // b_transport for a payload whose ExanetPacket (or nullptr: none) the
    // caller has already found: an input Link's direct call (Link::connect).
    void forward(int id, tlm::tlm_generic_payload& gp, ExanetPacket* pkt, sc_core::sc_time& delay);

private:
    // Every route leads to a bound port; the output links called directly.
    void end_of_elaboration() override;

    struct InputVc {
        // (space freed at, flits) of the packets still held, from `first`
        // on, sorted by the time (ties in arrival order), and their flits:
        // space is usually freed in arrival order, so a packet appends at
        // the end and the freed ones leave at the front, without a scan
        // of every packet held (a saturated input holds dozens).
        std::vector<std::pair<sc_core::sc_time, unsigned>> held;
        std::size_t first = 0;
        unsigned held_flits = 0;
    };
    struct Input {
        unsigned flits = 0, vcs = 1;   // 0 flits: not declared, not checked
        std::vector<InputVc> vc;
        std::vector<HeldSpace> timed;   // time order: (head, freed, flits)
        Link* link = nullptr;   // set_input_link
        // Time order: the link's lists read instead of `timed` (set at the
        // end of elaboration), each packet from `shift` after its start;
        // the link's buffer, which its credits keep it within.
        bool shared = false;
        sc_core::sc_time shift;
        unsigned link_flits = 0;
    };
    // `now`: the time forward() began at (nothing can arrive before it).
    void occupy(unsigned port, unsigned vc, unsigned flits, sc_core::sc_time head, sc_core::sc_time freed,
                sc_core::sc_time now);
    // Adaptive: heads may reach an input out of order (links reserve in
    // time order): the most flits held at any time while this packet is.
    void occupy_timed(Input& in, unsigned vc, unsigned flits, sc_core::sc_time head, sc_core::sc_time freed,
                      sc_core::sc_time now);
    // Time order, an input read from its link's lists (Input::shared).
    void occupy_shared(Input& in, unsigned vc, unsigned flits, sc_core::sc_time head, sc_core::sc_time freed);

    const SimContext& ctx_;
    std::vector<int> routes_;
    RouteFunction route_fn_;
    // set_dimension_order: the output port (-1: none) and, for a ring port,
    // its dimension and whether it is the wrap link, of a destination that
    // first differs from this router in dimension d (z, then y, then x) at
    // coordinate b: dor_hops_[dor_base_[d] + b]; of one on this board, FPGA
    // f: dor_hops_[dor_base_[3] + f]. Next_hop's route depends on nothing
    // else. Per input port, the dimension it comes from (Topology::kLocal: none).
    struct DorHop {
        std::int16_t port = -1;
        std::int8_t dim = Topology::kLocal;
        std::uint8_t wrap = 0;
    };
    Choice dimension_order(unsigned in_port, const ExanetPacket& pkt) const;
    // dimension_order_hop, inlined into forward() through dimension_order
    // (the others call dimension_order_hop).
    Choice dor_hop(unsigned in_port, std::uint32_t dst_coord, unsigned in_vc) const;
    // The route of forward() (adaptive: its choice among the candidates).
    Choice route_packet(unsigned in_port, const ExanetPacket& pkt, sc_core::sc_time head, sc_core::sc_time tail,
                        bool& adaptive, bool& chose) const;
    // routes() beyond its last yes; that yes (routed_key: the coordinates
    // and the VC in one word).
    bool routes_asked(unsigned in_port, const ExanetPacket& pkt) const;
    static std::uint64_t routed_key(const ExanetPacket& pkt) {
        return std::uint64_t(pkt.header.dst_coord) | (std::uint64_t(pkt.footer.src_coord) << 24) |
               (std::uint64_t(pkt.header.vc) << 48);
    }
    struct Routed {
        unsigned in_port = ~0u;
        unsigned node = 0;
        std::uint64_t key = 0;
    };
    mutable Routed routed_;
    void forget_routed() { routed_ = Routed{}; }
    // What every packet's hop reads, together (a Router is some 1.6 KB of
    // SystemC module; on a large torus each line of it a hop touches is a
    // miss of the caches): the pipeline, the routing, the output links and
    // the statistics of every packet. In two lines: the pipeline, dimension
    // order's extents, coordinates and bases, and the counter of packets
    // routed; then the tables a hop reads (each vector's begin and end
    // within the line).
    alignas(64) sc_core::sc_time pipeline_;
    bool dor_ = false;
    std::array<unsigned, 4> dor_extent_{};   // boards in x, y, z; FPGAs per board
    std::array<unsigned, 3> dor_at_{};   // this router's board coordinate in x, y, z
    std::array<unsigned, 4> dor_base_{};   // first entry of each table in dor_hops_
    Counter& packets_;
    std::vector<DorHop> dor_hops_;
    // Per output port: its Link when out[port] is that link's input, called
    // without the socket's indirections (an output bound to anything else,
    // a test's tap, goes through the socket).
    std::vector<Link*> direct_out_;
    std::vector<int> in_dim_;
    const Topology* topology_ = nullptr;   // adaptive routing
    std::vector<unsigned> occ_max_;
    std::vector<Scalar*> occ_stats_;
    Counter& unroutable_;
    Counter& overflows_;
    bool timed_ = false;
    unsigned node_ = 0, vcs_ = 0;
    std::vector<Link*> out_links_;
    Counter* adaptive_hops_ = nullptr;
    Counter* escape_hops_ = nullptr;
    std::vector<Input> inputs_;
};

// Dimension order's route (the default's every hop), inline here so that
// a router's arrival in exact time order (hop_link.cpp) and forward()
// inline it.
VRDMASIM_FORCE_INLINE Router::Choice Router::dor_hop(unsigned in_port, std::uint32_t w, unsigned in_vc) const {
    if (!dor_) return Choice{-1, 0};
    // Topology::contains, on the extents kept here.
    const Coord d = exanet_coord::unpack(w);
    if ((w >> 20) != 0 || d.f >= dor_extent_[3] || d.x >= dor_extent_[0] || d.y >= dor_extent_[1] ||
        d.z >= dor_extent_[2])
        return Choice{-1, 0};
    // The first dimension, z, y, x, in which the destination's board differs
    // from this one; none: this board.
    const DorHop* e;
    if (d.z != dor_at_[Topology::Z]) e = &dor_hops_[dor_base_[Topology::Z] + d.z];
    else if (d.y != dor_at_[Topology::Y]) e = &dor_hops_[dor_base_[Topology::Y] + d.y];
    else if (d.x != dor_at_[Topology::X]) e = &dor_hops_[dor_base_[Topology::X] + d.x];
    else e = &dor_hops_[dor_base_[3] + d.f];
    if (e->dim == Topology::kLocal) return Choice{e->port, 0};
    const int in_dim = in_port < in_dim_.size() ? in_dim_[in_port] : Topology::kLocal;
    return Choice{e->port, static_cast<int>((in_dim == e->dim ? in_vc : 0u) + e->wrap)};
}

VRDMASIM_FORCE_INLINE Router::Choice Router::dimension_order(unsigned in_port, const ExanetPacket& pkt) const {
    return dor_hop(in_port, pkt.header.dst_coord, pkt.header.vc);
}

}   // namespace vrdmasim
