// Cluster workloads: every node's RdmaProcess both sends and receives.
//
//   alltoall     every node sends message-size to every other node, `iterations` rounds
//   halo         3-D periodic nearest-neighbour exchange on a workload.grid, `iterations` rounds
//   incast       workload.senders nodes (0: all but dst-node) send total-bytes to dst-node
//   permutation  each node sends total-bytes to its image under a seeded derangement
//
// All four run the same program (ClusterWorkload) on a plan: for each node
// the nodes it sends to, how many rounds, and the bytes per destination per
// round (cut into message-size writes). A sender keeps `window` writes
// outstanding, verifies each destination when its completion comes (the
// sender-side record, as stream does), and at the end of a round drains its
// own writes and waits, by notifications (kFlagNotify: EVENT_COUNT and the
// receive ring), until every write of the round addressed to it has landed.
// See workloads/README.md.
#pragma once

#include <array>
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "src/core/metrics.hpp"
#include "library/messaging/endpoint.hpp"
#include "workloads/workload.hpp"

namespace vrdmasim {

namespace cluster {

using Grid = std::array<unsigned, 3>;   // X, Y, Z (X fastest: rank = x + X * (y + Y * z))

// Three factors of n, as near equal as can be (the smallest largest/smallest
// ratio, then the smallest sum), in non-increasing order: 4 -> 2x2x1,
// 27 -> 3x3x3, 1296 -> 12x12x9.
Grid factor_grid(unsigned n);
// "auto" (factor_grid) or "AxBxC"; empty string on success, else why not
// (malformed, a zero factor, or a product other than n).
std::string parse_grid(const std::string& text, unsigned n, Grid& out);
std::string to_string(const Grid& g);
// The distinct nodes next to `rank` in the six directions (+-x, +-y, +-z)
// of the periodic grid, without `rank` itself, in increasing order: a
// dimension of 2 has the same node on both sides, one of 1 none.
std::vector<unsigned> halo_neighbours(unsigned rank, const Grid& g);
// A permutation of 0..n-1 without fixed points (n >= 2), uniform over such
// permutations, the same for the same seed: Fisher-Yates with a
// splitmix64 generator, redrawn until it has no fixed point.
std::vector<unsigned> derangement(unsigned n, std::uint64_t seed);

}   // namespace cluster

class ClusterWorkload : public Workload {
public:
    // out[i]: the distinct nodes node i sends to (each round);
    // bytes: per destination per round, in writes of workload.message-size.
    ClusterWorkload(const SimContext& ctx, const std::vector<RdmaProcess*>& apps, std::string kind,
                    std::vector<std::vector<unsigned>> out, std::uint64_t rounds, std::uint64_t bytes,
                    unsigned job = 0);
    // Builds workload.kind = alltoall, halo, incast or permutation; throws
    // ConfigError for settings that do not fit the system.
    static std::unique_ptr<Workload> create(const SimContext& ctx, const std::vector<RdmaProcess*>& apps,
                                            unsigned job = 0);
    // Summary columns of the arrival detection (workload.arrivals).
    static void declare_metrics(MetricRegistry& reg);

    std::string kind() const override { return kind_; }
    bool finished() const override { return ended_ == apps_.size(); }
    // Every node runs a program (present or not: apps nullptr for the nodes
    // of another rank in a partitioned run).
    std::uint64_t programs() const override { return apps_.size(); }
    const std::vector<std::vector<unsigned>>& destinations() const { return out_; }
    // Writes the whole run makes: rounds x writes per destination x sum of |out[i]|.
    std::uint64_t expected_transfers() const;
    // Receive-area bytes node i maps: one slot of message-size per source
    // and per outstanding write from it (min(window, writes per round)).
    std::uint64_t receive_bytes(unsigned node) const;
    // Entries of node's notification ring: two rounds of arrivals (a
    // neighbour can be one round ahead), 16 to 4096.
    std::uint32_t ring_entries(unsigned node) const;
    // How a node learns that a round's arrivals are in (workload.arrivals).
    enum class Arrivals { Ring, Counter, Flags };
    Arrivals arrivals() const { return arrivals_; }
    // Bytes node i keeps for that: the ring's records, the event counter
    // register (8 B), or one 8 B flag per source.
    std::uint64_t arrival_state_bytes(unsigned node) const;

    // The progress line's total (the self-check planned-transfers holds
    // it to it): every message of every round to every out-neighbour, one
    // transfer each whether written, read or sent two-sided.
    std::string partition_refusal() const override;

    std::uint64_t planned_transfers() const override {
        std::uint64_t edges = 0;
        for (const auto& o : out_) edges += o.size();
        return rounds_ * writes_ * edges;
    }
    // Each round, the bytes per destination to each out-neighbour (the last
    // message of each the rest of them).
    std::int64_t planned_bytes() const override {
        std::uint64_t edges = 0;
        for (const auto& o : out_) edges += o.size();
        return static_cast<std::int64_t>(rounds_ * bytes_ * edges);
    }

private:
    struct Peer {
        std::vector<unsigned> in;   // sources, increasing
        // Source `src`'s index in `in` (its slot in the receive area);
        // in.size() if it is not a source.
        std::size_t find_slot(unsigned src) const {
            const auto it = std::lower_bound(in.begin(), in.end(), src);
            return it != in.end() && *it == src ? static_cast<std::size_t>(it - in.begin()) : in.size();
        }
        std::size_t slot(unsigned src) const {   // a source's: logic_error for another node
            const std::size_t i = find_slot(src);
            if (i == in.size())
                throw std::logic_error("cluster workload: node " + std::to_string(src) + " is not a source");
            return i;
        }
        std::uint64_t rx_base = 0;   // receive area (slots of message-size per source)
        bool registered = true;
    };
    // The constructor's steps: the settings it reads, then each node's
    // program and its buffers checked (reads, two-sided messages or writes).
    void read_settings(const SimContext& ctx);
    void plan_reads();
    void plan_two_sided(const SimContext& ctx);
    void plan_writes();
    // Every round: post the writes to each out-neighbour in turn (window
    // outstanding), complete them and post the flags due, wait for the
    // round's arrivals.
    void program(RdmaProcess& app);
    struct Arrival;
    struct Sender;
    // Map (and register) the receive area, the source buffers and records,
    // and the ring or the flag array.
    void map_buffers(Sender& s);
    // Complete the oldest write in flight: check and report it, read the
    // ring; flags: a destination whose round is complete has its flag due.
    void retire(Sender& s);
    void make_room(Sender& s);   // retire until fewer than `window` are in flight
    void post_flags(Sender& s);   // flags: write the due destinations' flags
    void post_write(Sender& s, unsigned d, std::uint64_t k);   // write k of the round to d
    void finish_sends(Sender& s);   // complete every write and flag of the round
    // Wait until every write of round r addressed to this node has landed
    // (by workload.arrivals), and count the wait.
    void wait_arrivals(RdmaProcess& app, Arrival& a, std::uint64_t r);
    void take_ring(RdmaProcess& app, Arrival& a, std::uint64_t upto);   // read the ring's records up to `upto`
    void wait_ring(RdmaProcess& app, Arrival& a, std::uint64_t r);
    void wait_counter(RdmaProcess& app, Arrival& a, std::uint64_t r);
    void wait_flags(RdmaProcess& app, Arrival& a, std::uint64_t r);
    // workload.two-sided = true: the same plan through the two-sided
    // library (cluster_two_sided.cpp).
    void program_two_sided(RdmaProcess& app);
    struct TwoSided;
    // The tag of message k of round r from `from` to `to` (unique in the run).
    std::uint64_t two_sided_key(std::uint64_t r, unsigned from, unsigned to, std::uint64_t k) const;
    std::uint64_t message_len(std::uint64_t k) const;   // message k of a destination's round
    // Post the receive of the next message from source si into its slot
    // (the slot's buffer guarded first).
    void post_receive(TwoSided& ts, std::size_t si);
    // Wait for one request: a send frees its source slot; a receive is
    // checked, reported, and its slot posted again for the source's next.
    void complete_one(TwoSided& ts);
    std::vector<unsigned> msg_peers(unsigned node) const;
    // workload.operation = read: each node pulls the messages addressed to
    // it from its in-neighbours' source areas with RDMA reads (cluster_read.cpp).
    void program_read(RdmaProcess& app);
    std::uint64_t source_bytes_read(unsigned node) const { return out_[node].size() * slots_ * msg_; }

    std::vector<RdmaProcess*> apps_;
    std::string kind_;
    std::vector<std::vector<unsigned>> out_;
    std::vector<Peer> peers_;
    std::uint64_t rounds_, bytes_, msg_, window_;
    std::uint64_t writes_;   // per destination per round
    std::uint64_t slots_;   // receive slots per source
    std::size_t ended_ = 0;
    bool two_sided_ = false;
    bool read_ = false;   // workload.operation = read
    Arrivals arrivals_ = Arrivals::Ring;
    Histogram& arrival_wait_;   // per node and round: own writes done to arrivals known, us
    Counter& flag_writes_;
    Counter& flag_loads_;
    Histogram& flag_delay_;   // flags: last flag of a round landed to the node seeing them all, us
    Scalar& arrival_state_;   // bytes, the most any node keeps
    Counter& early_arrivals_;   // flags: a round seen complete before a write of it had completed (a bug)
    // flags: (source, destination, round) -> when the source saw its last
    // write of the round to the destination complete; checked and dropped
    // when the destination sees the round complete.
    std::map<std::tuple<unsigned, unsigned, std::uint64_t>, sc_core::sc_time> completed_;
    // What a program publishes before the start barrier (Workload::publish)
    // for the others to read after it: its receive area (rx_base), its flag
    // array (flags), its source area (read).
    enum Published : unsigned { kRxBase, kFlags, kReadSrc };
    std::vector<std::unique_ptr<msg::Endpoint>> eps_;   // two-sided: by node
    std::vector<msg::Endpoint*> ep_by_node_;
    std::map<std::uint64_t, sc_core::sc_time> posted_at_;   // two-sided: key -> when its isend was posted
};

}   // namespace vrdmasim
