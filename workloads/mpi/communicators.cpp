#include "workloads/mpi/communicators.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "library/collectives/communicator.hpp"
#include "library/messaging/matching.hpp"

namespace vrdmasim {

static_assert(MpiCommunicators::kMaxContexts == coll::Communicator::kContexts, "the collectives' contexts");
static_assert(mpiwire::kSelfTop == MpiCommunicators::kMaxContexts, "MPI_COMM_SELF's contexts");

MpiCommunicators::MpiCommunicators(unsigned world_ranks) : first_self_(kMaxContexts - world_ranks) {
    auto& world = comms_[0];
    for (unsigned r = 0; r < world_ranks; ++r) {
        world.push_back(r);
        comms_[self(r)] = {r};
    }
}

const std::vector<unsigned>& MpiCommunicators::members(unsigned rank, std::uint32_t ctx) const {
    const auto it = comms_.find(ctx);
    if (it == comms_.end() || std::find(it->second.begin(), it->second.end(), rank) == it->second.end())
        throw std::runtime_error("mpi: rank " + std::to_string(rank) + " names communicator " + std::to_string(ctx) +
                                 ", which it is not a member of");
    return it->second;
}

unsigned MpiCommunicators::rank_in(std::uint32_t ctx, unsigned world) const {
    const std::vector<unsigned>& m = members(world, ctx);
    return static_cast<unsigned>(std::find(m.begin(), m.end(), world) - m.begin());
}

unsigned MpiCommunicators::world_of(unsigned rank, std::uint32_t ctx, std::int32_t peer) const {
    const std::vector<unsigned>& m = members(rank, ctx);
    if (peer < 0 || static_cast<std::size_t>(peer) >= m.size())
        throw std::runtime_error("mpi: rank " + std::to_string(rank) + " names rank " + std::to_string(peer) +
                                 " of a communicator of " + std::to_string(m.size()));
    return m[static_cast<std::size_t>(peer)];
}

std::uint64_t MpiCommunicators::tag(std::uint32_t ctx, std::int32_t mpi_tag) {
    if (mpi_tag < 0) throw std::runtime_error("mpi: a negative message tag " + std::to_string(mpi_tag));
    return coll::Communicator::p2p_tag(ctx, static_cast<std::uint32_t>(mpi_tag));
}

std::uint64_t MpiCommunicators::any_tag(std::uint32_t ctx) {
    return coll::Communicator::p2p_tag(ctx, 0) | msg::kContextAnyTag;
}

std::int32_t MpiCommunicators::mpi_tag(std::uint64_t tag) { return static_cast<std::int32_t>(tag & 0x7fffffffu); }

std::uint64_t MpiCommunicators::contribute(unsigned rank, std::uint32_t parent, std::int32_t color, std::int32_t key) {
    const unsigned in_parent = rank_in(parent, rank);
    if (color < 0 && color != kUndefined)
        throw std::runtime_error("mpi: rank " + std::to_string(rank) + " splits with colour " + std::to_string(color) +
                                 " (MPI wants a colour of 0 or more, or MPI_UNDEFINED)");
    const std::uint64_t split = next_split_[{rank, parent}]++;
    splits_[{parent, split}][in_parent] = {color, key};
    return split;
}

std::uint32_t MpiCommunicators::created(unsigned rank, std::uint32_t parent, std::uint64_t split) {
    const std::vector<unsigned> parents = members(rank, parent);
    const auto at = splits_.find({parent, split});
    if (at == splits_.end() || at->second.size() != parents.size())
        throw std::logic_error("mpi: a communicator split read before every member contributed");
    const auto& chosen = at->second;
    const std::int32_t color = chosen.at(rank_in(parent, rank)).first;
    std::uint32_t ctx = kNone;
    if (color != kUndefined) {
        const auto key = std::make_tuple(parent, split, color);
        const auto made = made_.find(key);
        if (made != made_.end()) {
            ctx = made->second;
        } else {
            if (next_context_ >= first_self_)
                throw std::runtime_error("mpi: the program made more than " + std::to_string(first_self_ - 1) +
                                         " communicators");
            ctx = made_[key] = next_context_++;
            std::vector<std::pair<std::int32_t, unsigned>> order;   // (key, parent rank)
            for (const auto& [p, ck] : chosen)
                if (ck.first == color) order.emplace_back(ck.second, p);
            std::sort(order.begin(), order.end());
            auto& m = comms_[ctx];
            for (const auto& o : order) m.push_back(parents[o.second]);
        }
    }
    if (++collected_[{parent, split}] == parents.size()) {   // every member has its result: forget the split
        collected_.erase({parent, split});
        splits_.erase(at);
        for (auto it = made_.lower_bound(std::make_tuple(parent, split, INT32_MIN));
             it != made_.end() && std::get<0>(it->first) == parent && std::get<1>(it->first) == split;)
            it = made_.erase(it);
    }
    return ctx;
}

}   // namespace vrdmasim
