// The interconnect's own bounds for synthetic traffic (workload.kind =
// synthetic, workloads/README.md "Synthetic traffic"), computed from the
// simulator's routing function and link parameters, not typed in:
//
// - the load every channel carries under a pattern: for each source and
//   destination of the pattern's traffic matrix, the dimension-order route
//   Topology::route gives (the source's NI link, the links between routers,
//   the destination's NI link), each data flit of the message on the route
//   there and each flit of its response (the ACK, one per message) on the
//   route back; in the read form (workload.operation = read, BookSim's
//   request-reply traffic) the data on the route back, from the
//   destination to the node that reads it, and the read request and the
//   data's ACK on the route there. The saturation throughput cannot exceed the offered load at
//   which the most loaded channel is full (Dally & Towles, Principles and
//   Practices of Interconnection Networks, section 3.3.1: Theta = b /
//   gamma_max), here per channel with its own rate;
// - the zero-load latency of a message: the sum over its route's links of a
//   flit time and the link's latency, the routers' latency, and the rest of
//   the message serialised on the slowest link, (flits - 1) x its flit time
//   (models/interconnect/README.md "Timing": virtual cut-through, the head
//   going on one flit time after it started). Exact for a message of one
//   packet; a bound below for several. A read's: its request's route and
//   its data's route back (the responder's turnaround, the engine's, is
//   not the network's: the workload measures it).
//
// `vrdmasim bounds` prints them (src/cli/bounds.cpp), the synthetic
// workload holds every measured message to its zero-load sum (a message
// faster than it is a self-check's violation).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <systemc>

#include "src/core/params.hpp"
#include "models/interconnect/topology.hpp"
#include "models/interconnect/synthetic_pattern.hpp"

namespace vrdmasim {

class ChannelModel {
public:
    // The topology, links and routers `c` builds (System::topology_from;
    // the link sections' rates, lanes and latencies; router.latency).
    explicit ChannelModel(const Config& c);

    const Topology& topology() const { return topo_; }

    // One channel: a link, by its index in channels().
    struct Channel {
        std::string name;   // as the run names the link: "x0y0z0f0.inject", "x0y0z0f1_to_x1y0z0f1"
        double rate_bps = 0;   // rate x lanes
        sc_core::sc_time flit;   // 128 bits at that rate (1 ps resolution)
        sc_core::sc_time latency;   // head in to head out
    };
    const std::vector<Channel>& channels() const { return channels_; }
    // The channels a message from src to dst crosses, in order: src's NI
    // link, the links between routers, dst's NI link.
    std::vector<std::size_t> path(unsigned src, unsigned dst) const;
    // Routers on that path (one more than its links between routers).
    unsigned routers(unsigned src, unsigned dst) const { return static_cast<unsigned>(path(src, dst).size()) - 1; }
    // The zero-load network latency of a message of `flits` flits from src
    // to dst: first head onto src's NI link to last tail off dst's.
    sc_core::sc_time zero_load(unsigned src, unsigned dst, std::uint64_t flits) const;
    // The injection link's (and the ejection link's) flit time: the NI's.
    sc_core::sc_time ni_flit() const { return channels_.at(inject_[0]).flit; }
    double ni_rate_bps() const { return channels_.at(inject_[0]).rate_bps; }

    // A pattern's channel loads and the bound they give.
    struct Load {
        std::size_t channel;
        double flits;   // per message each node sends: data and responses
        double per_capacity;   // flits x (NI rate / channel rate): 1 flit of the NI's time = 1
    };
    struct Bound {
        synthetic::Pattern pattern;
        // Per message: its data's flits, and the flits that go the other
        // way (a write's ACK; a read's request and its data's ACK).
        std::uint64_t data_flits = 0, response_flits = 0;
        bool reads = false;   // the data goes from the pattern's destination back to its source
        std::vector<Load> loads;   // every channel that carries anything, the most loaded first
        // The offered load (fraction of the injection link's rate, in data
        // flits) at which the most loaded channel is full: data_flits /
        // loads[0].per_capacity.
        double theta = 0;
        // Zero-load latency over the pattern's traffic matrix: mean (each
        // source's messages weighted by the matrix), least and most, in us.
        double zero_load_mean_us = 0, zero_load_min_us = 0, zero_load_max_us = 0;
    };
    // `request_flits` > 0: the read form, each message a read request of
    // that many flits out and the data back (its ACK out again).
    Bound bound(synthetic::Pattern p, const synthetic::Shape& shape, const synthetic::Hotspot& h,
                std::uint64_t data_flits, std::uint64_t response_flits, std::uint64_t request_flits = 0) const;

    // The shape the synthetic patterns see: the board's FPGAs and the boards'
    // extents (models/interconnect/synthetic_pattern.hpp).
    synthetic::Shape shape() const;

private:
    Topology topo_;
    sc_core::sc_time router_latency_;
    std::vector<Channel> channels_;
    std::vector<std::size_t> inject_, eject_;   // by node
    std::vector<std::vector<std::size_t>> out_;   // by node, output port (0: eject)
};

// The bounds of the synthetic traffic configuration `c` asks for (its
// message size and hot spot, section [synthetic]) on `m`'s network, for each
// of `patterns`: the bound, or why the pattern is not defined there (a
// transpose on x != y, ...). For `vrdmasim bounds`.
struct PatternBound {
    synthetic::Pattern pattern;
    std::string refusal;   // "" when the bound is there
    ChannelModel::Bound bound;
};
std::vector<PatternBound> synthetic_bounds(const ChannelModel& m, const Config& c,
                                           const std::vector<synthetic::Pattern>& patterns);
// The traffic configuration `c`'s workload offers to these bounds, as the
// kind that sends the patterns declares it (WorkloadKind::pattern_traffic):
// its pattern and a message's bytes, and the parameters that set them, by
// name, for messages and help (`vrdmasim bounds` names no workload parameter).
struct OfferedTraffic {
    synthetic::Pattern pattern;
    std::uint64_t bytes = 0;
    bool reads = false;
    std::string pattern_param, message_size_param;
};
OfferedTraffic offered_traffic(const Config& c);

}   // namespace vrdmasim
