// The program's communicators as the simulation knows them
// (workloads/mpi/README.md "Communicators"): each is a context number (0 is
// MPI_COMM_WORLD) and its members, the world ranks in the order of their
// ranks in it. A communicator's messages carry its context in the top
// bits of their tags (coll::Communicator::p2p_tag, msg::kContextAnyTag), its collectives run on a
// coll::Communicator of that context, so two communicators never take each
// other's messages, as MPI's contexts promise.
//
// New communicators come from a split of a parent (MPI_Comm_split, and
// MPI_Comm_dup, MPI_Comm_create and MPI_Cart_create, which are splits with
// particular colours and keys): every member of the parent contributes its
// colour and key, the workload times the exchange that tells them to each
// other (as Open MPI does it), and then each member learns its new
// communicator. No SystemC here: the workload does the timing.
#pragma once

#include "workloads/mpi/protocol.hpp"

#include <cstdint>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

namespace vrdmasim {

class MpiCommunicators {
public:
    static constexpr std::int32_t kUndefined = -32766;   // MPI_UNDEFINED's colour: no new communicator
    static constexpr std::uint32_t kNone = 0xffffffffu;   // the context of "no communicator" (MPI_COMM_NULL)
    static constexpr std::uint32_t kMaxContexts = 1u << 15;   // coll::Communicator::kContexts

    explicit MpiCommunicators(unsigned world_ranks);
    // MPI_COMM_SELF of world rank `world`: a context of its own, at the top
    // (below kMaxContexts), so that the contexts splits make start at 1.
    static std::uint32_t self(unsigned world) { return mpiwire::self_context(world); }

    // The members of context `ctx`; std::runtime_error naming `rank` if
    // there is no such communicator or `rank` is not in it.
    const std::vector<unsigned>& members(unsigned rank, std::uint32_t ctx) const;
    // World rank `world`'s rank in `ctx` (it is a member).
    unsigned rank_in(std::uint32_t ctx, unsigned world) const;
    // The world rank of rank `peer` of `ctx` as world rank `rank` names it.
    unsigned world_of(unsigned rank, std::uint32_t ctx, std::int32_t peer) const;

    // A message tag of `ctx` (MPI tags are below 2^31), and the receive's
    // wildcard of `ctx`; back from a message's tag to the program's.
    static std::uint64_t tag(std::uint32_t ctx, std::int32_t mpi_tag);
    static std::uint64_t any_tag(std::uint32_t ctx);
    static std::int32_t mpi_tag(std::uint64_t tag);

    // World rank `rank` enters its next split of `parent` with `color`
    // (or kUndefined) and `key`; the split's number on `parent`.
    std::uint64_t contribute(unsigned rank, std::uint32_t parent, std::int32_t color, std::int32_t key);
    // Once every member of `parent` has contributed to split `split`: the
    // communicator `rank` is in (kNone for kUndefined), new or already
    // made by another member. The members of a colour are ordered by key,
    // then by their rank in the parent.
    std::uint32_t created(unsigned rank, std::uint32_t parent, std::uint64_t split);
    std::size_t count() const { return comms_.size(); }
    // Every communicator made so far: context -> members.
    const std::map<std::uint32_t, std::vector<unsigned>>& all() const { return comms_; }

private:
    std::map<std::uint32_t, std::vector<unsigned>> comms_;   // context -> members
    // Per (parent, split): each member's (colour, key), by its parent rank.
    std::map<std::pair<std::uint32_t, std::uint64_t>, std::map<unsigned, std::pair<std::int32_t, std::int32_t>>>
        splits_;
    std::map<std::pair<std::uint32_t, std::uint64_t>, unsigned> collected_;   // members that took their result
    std::map<std::tuple<std::uint32_t, std::uint64_t, std::int32_t>, std::uint32_t> made_;   // -> context
    std::map<std::pair<unsigned, std::uint32_t>, std::uint64_t> next_split_;   // (rank, parent) -> split number
    std::uint32_t next_context_ = 1;
    std::uint32_t first_self_;   // the lowest context of an MPI_COMM_SELF
};

}   // namespace vrdmasim
