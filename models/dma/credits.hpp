// NetVM's end-to-end sender credits (ni.translation = shadow with
// rdma.strategy = netvm; docs/experiments.md "NetVM's network interface"): a data
// packet may have to go into the receiver's system buffer (NetvmBuffer),
// so a sender sends one only with credits for it. Each node holds
// ni.credits bytes of credit per destination node (itself included); a data
// packet (a write's or a read reply's) spends its payload's bytes. The
// receiver gives them back once it has placed the packet: written in place
// (at the write's end), copied in by the kernel from the system buffer, or
// dropped (duplicate, fault, error). It sums what it owes each sender and
// returns it in a credit packet (ExaNet type 2 Control, opcode 2, the bytes
// in its index field) whenever it owes at least half of ni.credits, so a
// sender never waits for credits the receiver keeps (a sender waits only
// while it holds less than one packet's worth, i.e. more than ni.credits -
// packet >= ni.credits / 2 is outstanding: placed packets are returned).
//
// Because the senders together hold at most nodes x ni.credits bytes of
// credit for one receiver, and System refuses a config where that exceeds
// dma.netvm-buffer, the system buffer can never be full when a packet
// comes: src/sim/invariants.cpp checks netvm_full == 0 and that every credit
// spent came back.
#pragma once

#include <cstdint>
#include <functional>
#include <unordered_map>
#include <vector>

#include <systemc>

#include "src/core/lazy_event.hpp"
#include "src/core/context.hpp"
#include "src/core/stats.hpp"

namespace vrdmasim {

class SenderCredits {
public:
    // `send_return(to_node, bytes, at)` sends a credit packet.
    using ReturnFn = std::function<void(unsigned to_node, std::uint64_t bytes, sc_core::sc_time at)>;

    SenderCredits() = default;
    SenderCredits(const SenderCredits&) = delete;
    SenderCredits& operator=(const SenderCredits&) = delete;

    // Start with `per_destination` bytes for each of `nodes` destinations;
    // registers the statistics (prefix "node0.dma.") only then, so that a
    // run without credits has none of them.
    void enable(StatRegistry& stats, const std::string& prefix, unsigned nodes, std::uint64_t per_destination,
                ReturnFn send_return);
    bool active() const { return per_dest_ != 0; }
    std::uint64_t per_destination() const { return per_dest_; }

    // Sender: spend `bytes` of credit for node `dst`, no earlier than `at`;
    // waits (the engine thread) while there are not enough. Returns the
    // time they were spent.
    sc_core::sc_time spend(unsigned dst, std::uint64_t bytes, sc_core::sc_time at);
    // Sender: a credit packet from `from` returned `bytes`, visible at `at`.
    void returned(unsigned from, std::uint64_t bytes, sc_core::sc_time at);

    // Receiver: a packet of `bytes` from `src` is placed (or dropped) at `at`.
    void placed(unsigned src, std::uint64_t bytes, sc_core::sc_time at);

    // Credits for node `dst`, those on their way back included (for the tests).
    std::uint64_t available(unsigned dst) const;

private:
    struct Pending {
        std::uint64_t bytes;
        sc_core::sc_time at;
    };
    // What this node keeps for one other node: as sender, the credits it
    // holds for it, when the latest of them arrived, and returns not yet
    // visible; as receiver, the bytes it owes it. Made when that node is
    // first sent to or heard from, in the state every node starts in (all
    // per_dest_ credits, nothing pending or owed): a node keeps state for the
    // nodes it talks to, not nodes x nodes over the system. Entries never
    // move (references stay valid while a sender waits).
    struct Peer {
        std::uint64_t avail;
        sc_core::sc_time ready;
        std::vector<Pending> incoming;
        std::uint64_t owed = 0;
    };
    Peer& peer(unsigned node);   // std::out_of_range beyond the nodes given to enable
    std::uint64_t per_dest_ = 0;
    unsigned nodes_ = 0;
    ReturnFn send_return_;
    std::unordered_map<unsigned, Peer> peers_;
    LazyEvent returned_ev_;   // made when first waited for or notified (with credits only)
    Counter *spent_ = nullptr, *returned_ = nullptr, *waits_ = nullptr, *packets_ = nullptr;
    Scalar *wait_us_ = nullptr, *owed_now_ = nullptr;
};

}   // namespace vrdmasim
