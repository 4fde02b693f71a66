// CutMail: the cut links between ranks (docs/scaling.md "What crosses a
// cut"). A link whose two ends are on different ranks has its near end
// (the Link, on the sender's rank) posting packets into CutMail's outbox
// for the far rank, and its far end (a CutLinkFar on the receiver's rank)
// posting credits into the outbox for the near rank. At the end of each
// window the outboxes are exchanged (windows.hpp) and deliver() posts what
// came in to the local ends, by link number, in the order each rank sent
// them (a link's messages come from one rank, so in their own order).
//
// Every message is stamped at least a board link's latency after its
// sender's local time, so it belongs to a later window than the one that
// made it: delivered at the window's end, it is in time.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "models/interconnect/cut_link.hpp"
#include "src/sim/parallel/comm.hpp"

namespace vrdmasim {

class CutMail {
public:
    // Rank `rank`'s of `ranks`.
    explicit CutMail(unsigned ranks, unsigned rank = 0);
    ~CutMail();
    CutMail(const CutMail&) = delete;
    CutMail& operator=(const CutMail&) = delete;

    // A port for link `link`'s packets to its far end on rank `to`.
    PacketPort& packets_to(unsigned to, std::uint32_t link);
    // A port for link `link`'s credits to its near end on rank `to`.
    CreditPort& credits_to(unsigned to, std::uint32_t link);
    // The local ends messages for link `link` are delivered to (a
    // CutLinkFar and a CutLinkNear; in exact time order a HopCutFar and a
    // HopCutNear).
    void far_end(std::uint32_t link, PacketPort& far) { far_[link] = &far; }
    void near_end(std::uint32_t link, CreditPort& near) { near_[link] = &near; }

    // The outboxes, by rank, emptied.
    std::vector<Bytes> take();
    // Posts every message of `in` (by sending rank) to its local end.
    void deliver(const std::vector<Bytes>& in);

    // Since the start: messages and bytes sent to other ranks.
    std::uint64_t packets_sent() const { return packets_; }
    std::uint64_t credits_sent() const { return credits_; }
    std::uint64_t bytes_sent() const { return bytes_; }

private:
    class PacketOut;
    class CreditOut;
    std::vector<Bytes> out_;
    std::vector<std::unique_ptr<PacketOut>> packet_ports_;
    std::vector<std::unique_ptr<CreditOut>> credit_ports_;
    std::unordered_map<std::uint32_t, PacketPort*> far_;
    std::unordered_map<std::uint32_t, CreditPort*> near_;
    PacketMessage in_;   // reused for every delivery
    std::uint64_t packets_ = 0, credits_ = 0, bytes_ = 0;
    unsigned rank_ = 0;
};

}   // namespace vrdmasim
